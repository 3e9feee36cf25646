// Package gnaf reads a G-NAF release (Australia's Geocoded National Address
// File, see ../shared/docs/gnaf-format.md) as published: the ZIP, read in
// place, or the folder it unpacks to.
//
// It promises:
//   - Streaming with bounded memory: a table is read file by file, line by
//     line, through one 256 KiB buffer per iterator call, whatever the size
//     of the release; nothing is unzipped to disk or read whole.
//   - No allocation per row: an iterator fills one record and hands it to
//     the callback; its strings point into the read buffer and are valid
//     until the callback returns (copy what you keep).
//   - Columns are found by header name, so reordered or added columns read
//     the same. Fields are separated by '|', with no quoting; an empty field
//     is null (Null for numbers, NaN for coordinates). Lines end in \n or
//     \r\n; empty lines are skipped; a UTF-8 byte order mark before the
//     header is ignored.
//   - Retired rows (DATE_RETIRED set) are skipped and counted in Stats.
//   - Bad input is an error or a counted rejection, never a panic:
//     a missing, empty or unreadable file, an empty header, a header naming
//     a column twice or lacking a column the table needs, or a line longer
//     than MaxLine ends the read with an error naming the file and line;
//     a row with the wrong number of fields, a control character (other
//     than tab), invalid UTF-8, a non-number in a numeric field or an empty
//     identifier is skipped and counted as rejected in Stats, the first
//     MaxReasons reasons kept with file and line, until more than
//     Options.MaxRejects (default DefaultMaxRejects) rows of one call are
//     bad, which ends the call with an error.
//   - A ZIP is read with archive/zip: an entry with an unsafe name (.., an
//     absolute path) makes Open fail; an entry declaring more than
//     MaxFileBytes is refused, and one inflating to more than it declares
//     fails when read, so a bomb costs at most its declared size in time
//     and one buffer in memory.
//
// Typical use:
//
//	rel, err := gnaf.OpenWith("g-naf_nov24_allstates_gda2020_psv_1017.zip", gnaf.Options{
//		Progress: func(table string, n int) { if table == gnaf.TableAddressDetail { bar.Add(int64(n)) } },
//	})
//	...
//	defer rel.Close()
//	types, _, err := rel.Authority("STREET_TYPE_AUT")
//	st, err := rel.AddressDetails(func(a *gnaf.Address) error { ...; return nil })
package gnaf
