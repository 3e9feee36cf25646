// Package points reads the address lists users give lodge: OpenAddresses
// CSV files (header LON,LAT,NUMBER,STREET,UNIT,CITY,DISTRICT,REGION,
// POSTCODE,ID,HASH) and plain CSV files of address points whose columns the
// caller names or leaves to be found by their usual names.
//
// It promises:
//   - Standard CSV (RFC 4180, as encoding/csv reads it): comma separated,
//     fields optionally in double quotes, "" for a quote and line ends
//     allowed inside quotes; \n or \r\n line ends; empty lines skipped; a
//     UTF-8 byte order mark before the header ignored. Columns are found by
//     header name, case-insensitively, in any order.
//   - Streaming with bounded memory and no allocation per record: one
//     256 KiB buffer, one Point refilled for every row. The Point's strings
//     point into the buffer and are valid only until the callback returns:
//     copy (strings.Clone) what you keep. Values are trimmed of spaces.
//   - Bad input is an error or a counted rejection, never a panic: an empty
//     file, a header lacking the needed columns or naming a used column
//     twice, a record longer than MaxRecord or an unreadable input ends the
//     read with an error naming the file and line; a row with another
//     number of fields than the header, a stray quote, a NUL byte, invalid
//     UTF-8 or a latitude or longitude that is not a number in range is
//     skipped and counted in Stats, the first MaxReasons reasons kept with
//     their line, until more than MaxRejects rows are bad, which ends the
//     read with an error.
package points

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Point is one address of a list. Lon and Lat are kept as written.
type Point struct {
	Number   string // house number, with any range or letter: "18-20", "455A"
	Street   string // street name and type: "CAPTAIN COOK DR"
	Unit     string // unit, flat or shop: "UNIT 3", "3"
	Locality string // suburb or town
	State    string
	Postcode string
	Lon, Lat string // decimal degrees, or empty
	ID       string
	// StreetType is the street type when the file keeps it in a column of
	// its own (Brisbane's street_name, street_type); "" when Street has it.
	StreetType string
	Building   string // the building's name, when the file has a column for it
}

// Columns names, for each field of Point, the header of the file's column
// holding it. An empty name means: find the column by its usual names (see
// ReadCSV); "-" means the file has no such column.
type Columns struct {
	Number, Street, Unit, Locality, State, Postcode, Lon, Lat, ID string
	StreetType, Building                                          string
}

// OpenAddresses are the columns of an OpenAddresses file: CITY is the
// locality and REGION the state.
var OpenAddresses = Columns{Number: "NUMBER", Street: "STREET", Unit: "UNIT", Locality: "CITY", State: "REGION",
	Postcode: "POSTCODE", Lon: "LON", Lat: "LAT", ID: "ID", StreetType: "-", Building: "-"}

// Stats counts what a reader read.
type Stats struct {
	Rows     int64    // rows passed to the callback
	Rejected int64    // malformed rows skipped
	Reasons  []string // the first MaxReasons rejections: "file:line: why"
}

// MaxReasons is how many rejections Stats keeps the reasons of.
const MaxReasons = 10

// MaxRejects is how many malformed rows a read skips before it gives up
// with an error: so many means the file is not what the caller thinks.
const MaxRejects = 1000

// Fields of Point, in Columns order.
const (
	fNumber = iota
	fStreet
	fUnit
	fLocality
	fState
	fPostcode
	fLon
	fLat
	fID
	fStreetType
	fBuilding
	nFields
)

var fieldNames = [nFields]string{"number", "street", "unit", "locality", "state", "postcode", "lon", "lat", "id", "street_type", "building"}

// usual are the header names ReadCSV looks for, in order of preference,
// compared case-insensitively with spaces and hyphens read as underscores.
var usual = [nFields][]string{
	fNumber:     {"number", "house_number", "housenumber", "street_number", "streetnumber", "house_no", "number_first", "no"},
	fStreet:     {"street", "street_name", "streetname", "road", "street_address", "address_line_1", "address1"},
	fUnit:       {"unit", "unit_number", "flat", "flat_number", "apartment", "apt", "suite", "subaddress"},
	fLocality:   {"locality", "suburb", "locality_name", "city", "town", "place", "suburb_town"},
	fState:      {"state", "region", "state_abbreviation", "state_code", "province"},
	fPostcode:   {"postcode", "post_code", "postal_code", "postalcode", "zip", "zipcode", "zip_code"},
	fLon:        {"lon", "lng", "long", "longitude", "x"},
	fLat:        {"lat", "latitude", "y"},
	fID:         {"id", "identifier", "ref", "reference", "address_id", "address_detail_pid", "pid"},
	fStreetType: {"street_type", "streettype", "street_type_code", "road_type"},
	fBuilding:   {"building", "building_name", "buildingname", "property_name", "complex_name"},
}

func (c *Columns) names() [nFields]string {
	return [nFields]string{c.Number, c.Street, c.Unit, c.Locality, c.State, c.Postcode, c.Lon, c.Lat, c.ID, c.StreetType, c.Building}
}

// norm is how header names compare: trimmed, lower case, spaces and
// hyphens read as underscores.
func norm(s string) string {
	b := []byte(strings.ToLower(strings.TrimSpace(s)))
	for i, c := range b {
		if c == ' ' || c == '-' {
			b[i] = '_'
		}
	}
	return string(b)
}

// ReadOpenAddresses reads an OpenAddresses CSV file, calling fn for each
// good row. The header must have LON, LAT, NUMBER and STREET; UNIT, CITY,
// REGION, POSTCODE and ID are read when present; when a row's ID is empty
// its HASH is the ID. DISTRICT is not read.
func ReadOpenAddresses(r io.Reader, name string, fn func(*Point) error) (Stats, error) {
	return read(r, name, OpenAddresses, true, fn)
}

// ReadCSV reads a CSV file of address points, calling fn for each good
// row. cols names the file's columns; those left empty are found by their
// usual names, compared case-insensitively with spaces and hyphens read as
// underscores:
//
//	Number    number, house_number, street_number, no …
//	Street    street, street_name, road, address_line_1 …
//	Unit      unit, unit_number, flat, apartment, apt, suite …
//	Locality  locality, suburb, city, town, place …
//	State     state, region, province …
//	Postcode  postcode, post_code, postal_code, zip …
//	Lon, Lat  lon, lng, long, longitude, x; lat, latitude, y
//	ID        id, identifier, ref, reference, pid …
//
// The file must have a street column and a locality or postcode column.
func ReadCSV(r io.Reader, name string, cols Columns, fn func(*Point) error) (Stats, error) {
	return read(r, name, cols, false, fn)
}

func read(r io.Reader, name string, cols Columns, oa bool, fn func(*Point) error) (Stats, error) {
	var st Stats
	c := newCSVReader(r)
	reason, err := c.next()
	if err == io.EOF {
		return st, fmt.Errorf("%s: empty file, want a header line", name)
	}
	if err != nil {
		return st, fmt.Errorf("%s:%d: header: %w", name, c.line, err)
	}
	if reason != "" {
		return st, fmt.Errorf("%s:%d: header: %s", name, c.line, reason)
	}
	ncol := len(c.fields)
	pos := map[string][]int{}
	for i, h := range c.fields {
		if i == 0 {
			h = strings.TrimPrefix(h, "\ufeff")
		}
		if h = norm(h); h != "" {
			pos[h] = append(pos[h], i)
		}
	}
	var ix [nFields]int
	names := cols.names()
	for f := range nFields {
		ix[f] = -1
		want := norm(names[f])
		switch {
		case strings.TrimSpace(names[f]) == "-":
			continue
		case want != "":
			ps, ok := pos[want]
			if !ok && (!oa || f == fNumber || f == fStreet || f == fLon || f == fLat) {
				return st, fmt.Errorf("%s:%d: header lacks column %s (for %s)", name, c.line, names[f], fieldNames[f])
			}
			if len(ps) > 1 {
				return st, fmt.Errorf("%s:%d: header names column %s %d times", name, c.line, names[f], len(ps))
			}
			if ok {
				ix[f] = ps[0]
			}
		default:
			for _, u := range usual[f] {
				if ps, ok := pos[u]; ok {
					if len(ps) > 1 {
						return st, fmt.Errorf("%s:%d: header names column %s %d times", name, c.line, u, len(ps))
					}
					ix[f] = ps[0]
					break
				}
			}
		}
	}
	hash := -1
	if oa {
		if ps := pos["hash"]; len(ps) == 1 {
			hash = ps[0]
		}
	} else if ix[fStreet] < 0 || (ix[fLocality] < 0 && ix[fPostcode] < 0) {
		return st, fmt.Errorf("%s:%d: header lacks a street column and a locality or postcode column (have %s)", name, c.line, strings.Join(c.fields, ","))
	}

	var p Point
	for {
		reason, err := c.next()
		if err != nil {
			if err == io.EOF {
				return st, nil
			}
			return st, fmt.Errorf("%s:%d: %w", name, c.line, err)
		}
		if reason == "" && len(c.fields) != ncol {
			reason = fmt.Sprintf("%d fields, want %d", len(c.fields), ncol)
		}
		if reason == "" {
			reason = fill(&p, c.fields, &ix, hash)
		}
		if reason != "" {
			st.Rejected++
			if len(st.Reasons) < MaxReasons {
				st.Reasons = append(st.Reasons, fmt.Sprintf("%s:%d: %s", name, c.line, reason))
			}
			if st.Rejected > MaxRejects {
				return st, fmt.Errorf("%s: more than %d bad rows, giving up (first: %s)", name, MaxRejects, st.Reasons[0])
			}
			continue
		}
		st.Rows++
		if err := fn(&p); err != nil {
			return st, err
		}
	}
}

func fill(p *Point, f []string, ix *[nFields]int, hash int) string {
	get := func(i int) string {
		if i < 0 {
			return ""
		}
		return strings.TrimSpace(f[i])
	}
	*p = Point{Number: get(ix[fNumber]), Street: get(ix[fStreet]), Unit: get(ix[fUnit]), Locality: get(ix[fLocality]),
		State: get(ix[fState]), Postcode: get(ix[fPostcode]), Lon: get(ix[fLon]), Lat: get(ix[fLat]), ID: get(ix[fID]),
		StreetType: get(ix[fStreetType]), Building: get(ix[fBuilding])}
	if p.ID == "" {
		p.ID = get(hash)
	}
	if !degrees(p.Lon, 180) {
		return fmt.Sprintf("longitude %q is not a number from -180 to 180", p.Lon)
	}
	if !degrees(p.Lat, 90) {
		return fmt.Sprintf("latitude %q is not a number from -90 to 90", p.Lat)
	}
	return ""
}

func degrees(s string, limit float64) bool {
	if s == "" {
		return true
	}
	v, err := strconv.ParseFloat(s, 64)
	return err == nil && v >= -limit && v <= limit
}
