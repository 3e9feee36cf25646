package data

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// csvTable reads a CSV file with a header and gives access to columns by
// name, so a reordered or extended source still reads correctly.
type csvTable struct {
	name string
	r    *csv.Reader
	cols map[string]int
	rec  []string
}

func newCSVTable(r io.Reader, name string, required ...string) (*csvTable, error) {
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	cr.FieldsPerRecord = -1
	hdr, err := cr.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: empty file, want a header line", name)
		}
		return nil, fmt.Errorf("%s: header: %w", name, err)
	}
	t := &csvTable{name: name, r: cr, cols: make(map[string]int, len(hdr))}
	for i, h := range hdr {
		h = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))
		t.cols[h] = i
	}
	for _, c := range required {
		if _, ok := t.cols[c]; !ok {
			return nil, fmt.Errorf("%s: header lacks column %q", name, c)
		}
	}
	return t, nil
}

// next reads the next record; it returns io.EOF at the end.
func (t *csvTable) next() error {
	rec, err := t.r.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return io.EOF
		}
		return fmt.Errorf("%s: %w", t.name, err)
	}
	t.rec = rec
	return nil
}

func (t *csvTable) line() int { l, _ := t.r.FieldPos(0); return l }

// get returns the named column of the current record, trimmed; "" when the
// record is short or the column unknown.
func (t *csvTable) get(col string) string {
	i, ok := t.cols[col]
	if !ok || i >= len(t.rec) {
		return ""
	}
	return strings.TrimSpace(t.rec[i])
}

func (t *csvTable) int(col string) (int, error) {
	s := t.get(col)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%s:%d: %s: %w", t.name, t.line(), col, err)
	}
	return n, nil
}

func (t *csvTable) float(col string) (float64, error) {
	s := t.get(col)
	if s == "" {
		return 0, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("%s:%d: %s: %w", t.name, t.line(), col, err)
	}
	return f, nil
}

// GNAFLocality is one row of the G-NAF locality list.
type GNAFLocality struct {
	Locality string // title case, "Melbourne"
	State    string // "VIC"; "OT" for other territories
	Postcode string
	Count    int // G-NAF addresses in the locality
	Lat, Lon float64
}

// ReadGNAFLocalities calls fn for every row of localities-au.csv
// (locality,state,postcode,count,latitude,longitude).
func ReadGNAFLocalities(r io.Reader, name string, fn func(*GNAFLocality) error) error {
	t, err := newCSVTable(r, name, "locality", "state", "postcode")
	if err != nil {
		return err
	}
	var row GNAFLocality
	for {
		if err := t.next(); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
		row = GNAFLocality{Locality: t.get("locality"), State: strings.ToUpper(t.get("state")), Postcode: t.get("postcode")}
		if row.Locality == "" || row.State == "" {
			return fmt.Errorf("%s:%d: locality and state must not be empty", name, t.line())
		}
		if row.Count, err = t.int("count"); err != nil {
			return err
		}
		if row.Lat, err = t.float("latitude"); err != nil {
			return err
		}
		if row.Lon, err = t.float("longitude"); err != nil {
			return err
		}
		if err := fn(&row); err != nil {
			return err
		}
	}
}

// GNAFPostcode is one row of the G-NAF postcode list.
type GNAFPostcode struct {
	State    string
	Postcode string
	Count    int
	Lat, Lon float64
}

// ReadGNAFPostcodes calls fn for every row of postcodes-au.csv
// (state,postcode,count,latitude,longitude).
func ReadGNAFPostcodes(r io.Reader, name string, fn func(*GNAFPostcode) error) error {
	t, err := newCSVTable(r, name, "state", "postcode")
	if err != nil {
		return err
	}
	var row GNAFPostcode
	for {
		if err := t.next(); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
		row = GNAFPostcode{State: strings.ToUpper(t.get("state")), Postcode: t.get("postcode")}
		if row.Count, err = t.int("count"); err != nil {
			return err
		}
		if row.Lat, err = t.float("latitude"); err != nil {
			return err
		}
		if row.Lon, err = t.float("longitude"); err != nil {
			return err
		}
		if err := fn(&row); err != nil {
			return err
		}
	}
}

// Code is one row of the G-NAF authority code lists.
type Code struct {
	Table string // "Street", "Flat", "StreetSuffix", "Locality", ...
	Code  string
	Label string
	URI   string
}

// ReadCodes calls fn for every row of gnaf_codes.csv (table,code,label,uri).
func ReadCodes(r io.Reader, name string, fn func(*Code) error) error {
	t, err := newCSVTable(r, name, "table", "code", "label")
	if err != nil {
		return err
	}
	var row Code
	for {
		if err := t.next(); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
		row = Code{Table: t.get("table"), Code: t.get("code"), Label: t.get("label"), URI: t.get("uri")}
		if err := fn(&row); err != nil {
			return err
		}
	}
}
