package data

import (
	"archive/zip"
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
)

// GeoNamesRow is one row of a GeoNames postal code file.
type GeoNamesRow struct {
	Country   string // ISO alpha-2, "AU"
	Postcode  string
	Place     string // title case, "Australian National University"
	StateName string // admin1 name, "Australian Capital Territory"
	StateCode string // admin1 code, "ACT"
	Admin2    string // admin2 name, "CANBERRA" (often empty)
	Lat, Lon  float64
	Accuracy  int // 1 estimated .. 6 centroid; 0 when absent
}

// ReadGeoNames calls fn for every row of a GeoNames postal code file (tab
// separated, no header). Blank lines are skipped; a row with fewer than
// eleven columns or unparsable coordinates is an error naming its line.
func ReadGeoNames(r io.Reader, name string, fn func(*GeoNamesRow) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), MaxLine)
	var row GeoNamesRow
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimRight(sc.Bytes(), "\r")
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		f := strings.Split(string(b), "\t")
		if len(f) < 11 {
			return fmt.Errorf("%s:%d: %d columns, want 12", name, line, len(f))
		}
		var err error
		row = GeoNamesRow{
			Country: strings.TrimSpace(f[0]), Postcode: strings.TrimSpace(f[1]), Place: strings.TrimSpace(f[2]),
			StateName: strings.TrimSpace(f[3]), StateCode: strings.TrimSpace(f[4]), Admin2: strings.TrimSpace(f[5]),
		}
		if row.Lat, err = strconv.ParseFloat(strings.TrimSpace(f[9]), 64); err != nil {
			return fmt.Errorf("%s:%d: latitude: %w", name, line, err)
		}
		if row.Lon, err = strconv.ParseFloat(strings.TrimSpace(f[10]), 64); err != nil {
			return fmt.Errorf("%s:%d: longitude: %w", name, line, err)
		}
		if len(f) > 11 && strings.TrimSpace(f[11]) != "" {
			if row.Accuracy, err = strconv.Atoi(strings.TrimSpace(f[11])); err != nil {
				return fmt.Errorf("%s:%d: accuracy: %w", name, line, err)
			}
		}
		if row.Country == "" || row.Postcode == "" || row.Place == "" {
			return fmt.Errorf("%s:%d: country, postcode and place must not be empty", name, line)
		}
		if err := fn(&row); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s:%d: %w", name, line+1, err)
	}
	return nil
}

// ErrNoGeoNamesFile means a ZIP archive holds no <CC>.txt member.
var ErrNoGeoNamesFile = errors.New("archive holds no GeoNames postal code file")

// ReadGeoNamesZip reads the <CC>.txt member of a GeoNames archive such as
// AU.zip (which also holds a readme.txt).
func ReadGeoNamesZip(ra io.ReaderAt, size int64, name string, fn func(*GeoNamesRow) error) error {
	zr, err := zip.NewReader(ra, size)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	for _, f := range zr.File {
		base := path.Base(f.Name)
		if len(base) == 6 && strings.HasSuffix(base, ".txt") && strings.ToUpper(base[:2]) == base[:2] {
			rc, err := f.Open()
			if err != nil {
				return fmt.Errorf("%s: %s: %w", name, f.Name, err)
			}
			err = ReadGeoNames(rc, name+":"+f.Name, fn)
			rc.Close()
			return err
		}
	}
	return fmt.Errorf("%s: %w", name, ErrNoGeoNamesFile)
}
