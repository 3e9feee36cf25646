// Package bulk cleanses address files: it reads addresses one per row from
// CSV or JSON lines, judges each with an engine.Engine on every core, and
// writes each input row with its verdict appended. It is what "lodge check"
// runs.
//
// # Input
//
// The format is CSV or JSON lines (Config.Format). Left empty, it is
// detected: a first non-blank byte '{' or '[' means JSON lines, anything
// else CSV. A UTF-8 byte order mark at the start is dropped.
//
// CSV is read with encoding/csv, strictly: a bare quote in an unquoted field
// or a stray quote after a quoted one is an error row (see Errors), not a
// guess. Records may have any number of fields. The first record is the
// header unless Config.NoHeader. Config.Columns picks the fields that form
// the address, in order: a header name (exact, else the first that matches
// ignoring case and surrounding spaces) or a 1-based index. Without a header
// only indexes are allowed. Without Columns every field is an address line.
// A field named by an index beyond a short row's end is an empty line.
//
// JSON lines holds one JSON value per line; blank lines are skipped and are
// not rows. An object's address is, with Columns, the named top-level fields
// in order (exact names; a string, a number's literal text, or an array of
// strings; missing or null fields are empty lines; an object with none of
// them is an error row); without Columns, its field "address" (a string or an
// array of strings) or, when it has none, every top-level string field in
// order but those the output replaces (below). A line that is an array of strings or a string is the address
// itself, as in addr_check.
//
// An address made of one field or string is split as addr_check splits a
// string address: on newlines when it has any, else on commas
// (engine.SplitLines). With several fields, each is one line, split only at
// newlines inside it.
//
// # Output
//
// CSV: the header (unless Config.NoHeader) is the input header followed by
// the verdict columns
//
//	status,nation,message
//
// and, with Config.Detail, the components of engine.Detail flattened as
//
//	detail_granularity,detail_reference_id,detail_suggestion,detail_faults,
//	detail_recipients,detail_care_of,detail_building,detail_flat_type,
//	detail_flat_number,detail_level_type,detail_level_number,detail_lot,
//	detail_number_first,detail_number_last,detail_street_name,
//	detail_street_type,detail_street_suffix,detail_postal_type,
//	detail_postal_number,detail_locality,detail_state,detail_postcode,
//	detail_country
//
// (the "detail_" prefix keeps them apart from input columns such as "state").
// Lists are joined: suggestion and recipients with ", " (so a suggestion can
// be checked again as a string), faults with ";". Each row is the input
// record unchanged, padded with empty fields to the header's width (without
// a header: the width of the first row read), then its verdict. A row wider
// than that keeps every field, so its verdict starts further right. The
// separator is the input's (Config.Comma).
//
// JSON lines: an input object is written byte for byte with "status",
// "nation", "message" (only when not empty) and, with Config.Detail,
// "detail" added before its closing brace; top-level fields of the input with
// those names, ignoring case ("Status", "MESSAGE"; Unicode simple case
// folding), are dropped so that no key appears twice, not even to decoders
// that match keys without regard to case (Go's encoding/json, PowerShell). Any other value (an
// array, a string) is written as {"address":<the value as given>,...}. An
// error row has no "detail".
//
// status is "matched", "unmatched", "invalid", "international" (see
// shared/docs/address-check.md) or "error".
//
// # Errors
//
// A row that cannot be read as an address does not stop the run: it is
// written with status "error" and a message naming its line, and counted in
// Summary.Errors. Such rows are: a CSV record encoding/csv rejects (written
// with the fields read before the fault), a line that is not valid JSON
// (written as {"input":"<the line as a string>",...}), JSON nested deeper
// than 64 levels, a field of the wrong type, and an over-long row (see
// Limits).
//
// Configuration problems fail the run before any row is read: an unknown
// format, an invalid separator, a column name not in the header (the message
// lists the header's columns), an index beyond the header or below 1, names
// without a header. So does an unreadable CSV header. A read error from the
// input or a write error on the output stops the run; Run returns it with
// the rows before it written.
//
// # Limits
//
// A row may be at most MaxRowBytes (1 MiB): a CSV record counted with its
// line ends (quoted newlines and blank lines before it included), a JSON
// line without its line end. A longer JSON line is
// an error row and reading resumes at the next line. A longer CSV record is
// an error row too and reading resumes after the physical line on which the
// limit was reached; when the cause is a quote never closed, every line up
// to that point belongs to the one error row.
//
// # Promises
//
//   - Output rows are in input order, one per input row, whatever the
//     number of workers.
//   - Memory is bounded whatever the input's size: rows travel in chunks of
//     at most 512 rows or 256 KiB (one row may exceed that up to the row
//     limit), and at most 2×workers+2 chunks are in flight at once.
//   - When the input pauses (a pipe), the rows read so far are judged and
//     written without waiting for a full chunk.
//   - On cancellation Run returns ctx.Err() promptly, having written, in
//     order, every row judged before the cancellation and no row after a gap.
//     It does not wait for a Read of the input that blocks; the goroutine
//     doing it exits when that Read returns, reading no further.
//   - Summary counts exactly the rows written: Rows = sum of ByStatus +
//     Errors.
//   - Progress is a progress.Bar labelled "check" counting addresses
//     written, finished before Run returns.
package bulk
