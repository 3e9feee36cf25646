package points

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	"github.com/lodge-mail/lodge/internal/testenv"
)

func testdata(t testing.TB, name string) []byte {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "data", "points", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// collect reads all points, copied.
func collect(t testing.TB, read func(fn func(*Point) error) (Stats, error)) ([]Point, Stats, error) {
	var ps []Point
	st, err := read(func(p *Point) error {
		c := *p
		for _, s := range []*string{&c.Number, &c.Street, &c.Unit, &c.Locality, &c.State, &c.Postcode, &c.Lon, &c.Lat, &c.ID} {
			*s = strings.Clone(*s)
		}
		ps = append(ps, c)
		return nil
	})
	return ps, st, err
}

func TestOpenAddresses(t *testing.T) {
	data := testdata(t, "openaddresses.csv")
	crlf := bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n"))
	var first []Point
	for _, in := range [][]byte{data, crlf, append([]byte("\ufeff"), data...)} {
		ps, st, err := collect(t, func(fn func(*Point) error) (Stats, error) {
			return ReadOpenAddresses(bytes.NewReader(in), "oa.csv", fn)
		})
		if err != nil || st.Rows != 7 || st.Rejected != 0 || len(ps) != 7 {
			t.Fatalf("%+v %v", st, err)
		}
		if first == nil {
			first = ps
		} else if !reflect.DeepEqual(ps, first) {
			t.Errorf("CRLF or BOM reads differently:\n%+v\n%+v", ps, first)
		}
	}
	f := func(i int, want Point) {
		t.Helper()
		if first[i] != want {
			t.Errorf("row %d:\n got %+v\nwant %+v", i, first[i], want)
		}
	}
	f(0, Point{Number: "18-20", Street: "COURALLIE AVENUE", Locality: "HOMEBUSH WEST", State: "NSW", Postcode: "2140",
		Lon: "151.0653217", Lat: "-33.8622904", ID: "GANSW717138653"})
	f(2, Point{Number: "120", Street: "COLLINS STREET", Unit: "SHOP 4", Locality: "MELBOURNE", State: "VIC", Postcode: "3000",
		Lon: "144.9676462", Lat: "-37.8155498", ID: "9988776655443322"}) // ID empty: the HASH
	f(5, Point{Number: "19", Street: "MURRAY ROAD", Unit: "UNIT 1, REAR", Locality: "CHRISTMAS ISLAND", State: "OT",
		Postcode: "6798", Lon: "105.6773", Lat: "-10.4262", ID: "GAOT_718543102"})
	f(6, Point{Number: "1", Street: `THE "OLD" MILL ROAD`, Locality: "ST MARYS", State: "NSW", Postcode: "2760", ID: "X1"})

	// OpenAddresses needs LON, LAT, NUMBER and STREET; the rest may be missing.
	g := func(in string, rows int64, wantErr string) {
		t.Helper()
		st, err := ReadOpenAddresses(strings.NewReader(in), "oa.csv", func(*Point) error { return nil })
		if (err == nil) != (wantErr == "") || (err != nil && !strings.Contains(err.Error(), wantErr)) {
			t.Errorf("%q: error %v, want %q", in, err, wantErr)
		}
		if st.Rows != rows {
			t.Errorf("%q: %d rows, want %d", in, st.Rows, rows)
		}
	}
	g("lon,lat,number,street\n1,2,3,X ST\n", 1, "")
	g("LON,LAT,NUMBER,STREET,HASH\n1,2,3,X ST,abc\n", 1, "")
	g("LON,LAT,STREET\n1,2,X ST\n", 0, "oa.csv:1: header lacks column NUMBER (for number)")
	g("LON,LAT,NUMBER,STREET,CITY,CITY\n1,2,3,X ST,A,B\n", 0, "header names column CITY 2 times")
}

func TestCSV(t *testing.T) {
	ps, st, err := collect(t, func(fn func(*Point) error) (Stats, error) {
		return ReadCSV(bytes.NewReader(testdata(t, "points.csv")), "points.csv", Columns{}, fn)
	})
	if err != nil || st.Rows != 5 || st.Rejected != 0 {
		t.Fatalf("%+v %v", st, err)
	}
	want := Point{Number: "5", Street: "QUEEN ST N", Locality: "ST MARYS", State: "NSW", Postcode: "2760", Lon: "150.7743", Lat: "-33.7664", ID: "P4"}
	if ps[3] != want {
		t.Errorf("auto-detected:\n got %+v\nwant %+v", ps[3], want)
	}
	if ps[2].Locality != "NEWCASTLE" || ps[1].Unit != "UNIT 12" {
		t.Errorf("%+v %+v", ps[1], ps[2])
	}

	f := func(in string, cols Columns, want Point, rows, rejected int64, wantErr string) {
		t.Helper()
		ps, st, err := collect(t, func(fn func(*Point) error) (Stats, error) { return ReadCSV(strings.NewReader(in), "t.csv", cols, fn) })
		if (err == nil) != (wantErr == "") || (err != nil && !strings.Contains(err.Error(), wantErr)) {
			t.Errorf("%.60q: error %v, want %q", in, err, wantErr)
		}
		if st.Rows != rows || st.Rejected != rejected {
			t.Errorf("%.60q: %d rows %d rejected %v, want %d %d", in, st.Rows, st.Rejected, st.Reasons, rows, rejected)
		}
		if len(ps) > 0 && ps[0] != want {
			t.Errorf("%.60q:\n got %+v\nwant %+v", in, ps[0], want)
		}
	}
	p := Point{Number: "1", Street: "A ST", Locality: "X", Postcode: "2000"}
	// Names found, in any order and case, with spaces and hyphens.
	f("STREET,number,Suburb,Post-Code\nA ST,1,X,2000\n", Columns{}, p, 1, 0, "")
	f("street,locality\nA ST,X\n", Columns{}, Point{Street: "A ST", Locality: "X"}, 1, 0, "")
	f("street,postcode\nA ST,2000\n", Columns{}, Point{Street: "A ST", Postcode: "2000"}, 1, 0, "")
	f("Building Name,street,number,postcode\nRIVERSIDE TOWER,A ST,1,2000\n", Columns{}, Point{Number: "1", Street: "A ST", Postcode: "2000", Building: "RIVERSIDE TOWER"}, 1, 0, "")
	f("complex,street,postcode\nTHE GABLES,A ST,2000\n", Columns{Building: "complex"}, Point{Street: "A ST", Postcode: "2000", Building: "THE GABLES"}, 1, 0, "")
	// Named by the caller; "-" for none.
	f("addr,no,town,pc,city\nA ST,1,X,2000,Y\n", Columns{Street: "ADDR", Number: "No", Locality: "town", Postcode: "pc"}, p, 1, 0, "")
	f("street,number,city,postcode,id\nA ST,1,X,2000,7\n", Columns{ID: "-"}, p, 1, 0, "")
	f("street,number,city,postcode\nA ST,1,X,2000\n", Columns{Unit: "flat"}, Point{}, 0, 0, "t.csv:1: header lacks column flat (for unit)")
	f("street,number\nA ST,1\n", Columns{}, Point{}, 0, 0, "lacks a street column and a locality or postcode column")
	f("road,town\nA ST,X\n", Columns{Street: "-"}, Point{}, 0, 0, "lacks a street column")
	f("street,street,town\nA ST,B ST,X\n", Columns{}, Point{}, 0, 0, "header names column street 2 times")
	f("street,town,notes,notes\nA ST,X,a,b\n", Columns{}, Point{Street: "A ST", Locality: "X"}, 1, 0, "") // unused duplicates are fine
	f("street,town,,\nA ST,X,,\n", Columns{}, Point{Street: "A ST", Locality: "X"}, 1, 0, "")
	// Coordinates.
	f("street,town,lat,lon\nA ST,X,-33.5,151\nA ST,X,-91,151\nA ST,X,-33,181\nA ST,X,north,151\nA ST,X,NaN,1\n", Columns{},
		Point{Street: "A ST", Locality: "X", Lat: "-33.5", Lon: "151"}, 1, 4, "")
}

// TestHostile feeds malformed files to ReadCSV.
func TestHostile(t *testing.T) {
	f := func(in string, rows, rejected int64, wantErr string) {
		t.Helper()
		st, err := ReadCSV(strings.NewReader(in), "h.csv", Columns{}, func(p *Point) error {
			if !utf8.ValidString(p.Street + p.Locality) {
				t.Errorf("invalid UTF-8 passed: %+v", p)
			}
			return nil
		})
		if (err == nil) != (wantErr == "") || (err != nil && !strings.Contains(err.Error(), wantErr)) {
			t.Errorf("%.60q: error %v, want %q", in, err, wantErr)
		}
		if st.Rows != rows || st.Rejected != rejected {
			t.Errorf("%.60q: %d rows %d rejected %v, want %d %d", in, st.Rows, st.Rejected, st.Reasons, rows, rejected)
		}
	}
	h := "street,town\n"
	f(h+"A ST,X\n", 1, 0, "")
	f(h+"A ST,X", 1, 0, "")
	f(h+"A ST,X\r", 1, 0, "")
	f(h+"\n\r\n\nA ST,X\n\n", 1, 0, "")
	f(h+"A ST,X,extra\nA ST\nA ST,X\n", 1, 2, "")
	f(h+"A \"ST\",X\nA ST,X\n", 1, 1, "")         // bare quote
	f(h+"\"A ST\"x,X\nA ST,X\n", 1, 1, "")        // text after the closing quote
	f(h+"\"A ST,X\nA ST,X\n", 0, 1, "")           // never closed: the rest is one field
	f(h+"A\x00ST,X\nA ST,X\n", 1, 1, "")          // NUL
	f(h+"A \xff ST,X\nA ST,X\n", 1, 1, "")        // invalid UTF-8
	f(h+"\"A\nST\",X\nB ST,X\n", 2, 0, "")        // a line end in a quoted field
	f(h+strings.Repeat("A,B,C\n", 30), 0, 30, "") // wrong field counts
	f(h+strings.Repeat("A,B,C\n", MaxRejects+1), 0, MaxRejects+1, "more than 1000 bad rows")

	f("", 0, 0, "h.csv: empty file")
	f("\n\n", 0, 0, "h.csv: empty file")
	f("\"street,town\n", 0, 0, "h.csv:1: header: quoted field is not closed")
	f("str\x00eet,town\n", 0, 0, "h.csv:1: header: NUL byte")
	f(strings.Repeat("x", 10<<20)+"\n", 0, 0, "h.csv:1: header: record longer than 65536 bytes")
	f(h+"A ST,X\n"+strings.Repeat("y", 10<<20)+"\nA ST,X\n", 1, 0, "h.csv:3: record longer than 65536 bytes")
	f(h+"A ST,X\n\""+strings.Repeat("y\n", 5<<20)+"\",X\n", 1, 0, "h.csv:3: record longer than 65536 bytes") // many lines in quotes
	f(h+"\""+strings.Repeat("y", MaxRecord-5)+"\",X\n", 1, 0, "")                                            // exactly MaxRecord
	f(h+"\""+strings.Repeat("y", MaxRecord-4)+"\",X\n", 0, 0, "h.csv:2: record longer than 65536 bytes")

	boom := errors.New("disk on fire")
	_, err := ReadCSV(io.MultiReader(strings.NewReader(h+"A ST,X\nB ST"), iotest.ErrReader(boom)), "h.csv", Columns{}, func(*Point) error { return nil })
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "h.csv:3") {
		t.Errorf("read error: %v", err)
	}
	stop := errors.New("stop")
	if _, err := ReadCSV(strings.NewReader(h+"A ST,X\nB ST,X\n"), "h.csv", Columns{}, func(*Point) error { return stop }); err != stop {
		t.Errorf("callback error: %v", err)
	}
}

// TestReaders reads through readers that give a little at a time.
func TestReaders(t *testing.T) {
	in := string(testdata(t, "points.csv"))
	for name, r := range map[string]io.Reader{
		"one byte": iotest.OneByteReader(strings.NewReader(in)),
		"half":     iotest.HalfReader(strings.NewReader(in)),
		"data+EOF": iotest.DataErrReader(strings.NewReader(in)),
	} {
		st, err := ReadCSV(r, "p.csv", Columns{}, func(*Point) error { return nil })
		if err != nil || st.Rows != 5 {
			t.Errorf("%s: %+v %v", name, st, err)
		}
	}
}

// records parses data with the CSV reader alone, copying every record.
func records(data []byte, r io.Reader) (recs [][]string, rejected int, err error) {
	c := newCSVReader(r)
	for {
		reason, err := c.next()
		if err == io.EOF {
			return recs, rejected, nil
		}
		if err != nil {
			return recs, rejected, err
		}
		if reason != "" {
			rejected++
			continue
		}
		rec := make([]string, len(c.fields))
		for i, f := range c.fields {
			rec[i] = strings.Clone(f)
		}
		recs = append(recs, rec)
	}
}

// sameAsEncodingCSV checks that where encoding/csv reads data without
// error, and data is text, the reader reads the same records.
func sameAsEncodingCSV(t *testing.T, data []byte, r io.Reader) {
	t.Helper()
	cr := csv.NewReader(bytes.NewReader(data))
	cr.FieldsPerRecord = -1
	want, werr := cr.ReadAll()
	got, rejected, err := records(data, r)
	if werr != nil || bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data) {
		if err == nil && rejected == 0 && werr != nil && bytes.IndexByte(data, 0) < 0 && utf8.Valid(data) {
			t.Fatalf("%q: encoding/csv: %v; read without complaint: %q", data, werr, got)
		}
		return
	}
	if err != nil && errors.Is(err, errTooLong) {
		return
	}
	if err != nil || rejected != 0 || !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
		t.Fatalf("%q:\n got %q (%d rejected, %v)\nwant %q", data, got, rejected, err, want)
	}
}

func TestSameAsEncodingCSV(t *testing.T) {
	for _, in := range []string{
		"", "\n", "\r\n", "\r", "a", "a\r", "a\n", "a\r\n", "a,b\r\nc,d", "a,,b,\n,\n", `"a"`, `"a"` + "\r", `"a","b"` + "\n",
		`"a""b",c`, `""""`, `"",""`, "\"a\r\nb\"\r\n", "\"a\rb\"\n", "\"a\n\nb\"", "a\rb,c\n", "a\r\r\n", " a , b ",
		"\ufeffa,b\n", "é,ü\n", "a\tb,c\n", "\n\na\n\n\nb\n",
		// errors in both
		`a"b`, `"a"b`, `"a`, "a\n\"b\nc",
	} {
		sameAsEncodingCSV(t, []byte(in), bytes.NewReader([]byte(in)))
		sameAsEncodingCSV(t, []byte(in), iotest.OneByteReader(bytes.NewReader([]byte(in))))
	}
}

// FuzzCSV checks the CSV reader against encoding/csv, and ReadCSV for
// panics and its promises.
func FuzzCSV(f *testing.F) {
	f.Add([]byte("street,town\nA ST,X\n"), uint8(3))
	f.Add([]byte("a,\"b\"\"c\",\"d\r\ne\"\r\n\"\",x\r"), uint8(1))
	f.Add([]byte("a\"b,\"c\"d,\"e\n"), uint8(0))
	f.Add(testdata(f, "openaddresses.csv"), uint8(7))
	f.Add(testdata(f, "points.csv"), uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, chunk uint8) {
		sameAsEncodingCSV(t, data, &chunker{data: data, n: int(chunk) + 1})
		for _, read := range []func(io.Reader, string, func(*Point) error) (Stats, error){
			ReadOpenAddresses,
			func(r io.Reader, name string, fn func(*Point) error) (Stats, error) {
				return ReadCSV(r, name, Columns{}, fn)
			},
		} {
			st, err := read(bytes.NewReader(data), "f.csv", func(p *Point) error {
				for _, s := range []string{p.Number, p.Street, p.Unit, p.Locality, p.State, p.Postcode, p.Lon, p.Lat, p.ID} {
					if !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 || s != strings.TrimSpace(s) {
						t.Fatalf("field %q", s)
					}
				}
				return nil
			})
			if err != nil && !strings.HasPrefix(err.Error(), "f.csv") {
				t.Fatalf("error does not name the file: %v", err)
			}
			if int64(len(st.Reasons)) != min(st.Rejected, MaxReasons) {
				t.Fatalf("%d reasons for %d rejected", len(st.Reasons), st.Rejected)
			}
		}
	})
}

// chunker reads data n bytes at a time.
type chunker struct {
	data []byte
	n    int
}

func (c *chunker) Read(b []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	k := copy(b[:min(len(b), c.n)], c.data)
	c.data = c.data[k:]
	return k, nil
}

// endless is an endless record.
type endless struct{ n int64 }

func (e *endless) Read(b []byte) (int, error) {
	for i := range b {
		b[i] = 'x'
	}
	e.n += int64(len(b))
	return len(b), nil
}

func TestBounded(t *testing.T) {
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	e := &endless{}
	_, err := ReadCSV(io.MultiReader(strings.NewReader("street,town\n"), e), "e.csv", Columns{}, func(*Point) error { return nil })
	runtime.ReadMemStats(&ms1)
	if err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("endless record: %v", err)
	}
	if e.n > 2*bufSize || ms1.TotalAlloc-ms0.TotalAlloc > 4*bufSize {
		t.Errorf("endless record: read %d bytes, allocated %d", e.n, ms1.TotalAlloc-ms0.TotalAlloc)
	}
}

// TestAllocs: reading allocates for the header, never per row.
func TestAllocs(t *testing.T) {
	if testenv.RaceEnabled {
		t.Skip("the race detector allocates")
	}
	allocs := func(rows int) float64 {
		data := []byte("LON,LAT,NUMBER,STREET,UNIT,CITY,DISTRICT,REGION,POSTCODE,ID,HASH\n" +
			strings.Repeat(`151.06,-33.86,18,"COURALLIE ""A"" AVENUE",,HOMEBUSH WEST,,NSW,2140,GANSW717138653,a1b2`+"\n", rows))
		return testing.AllocsPerRun(3, func() {
			st, err := ReadOpenAddresses(bytes.NewReader(data), "a.csv", func(*Point) error { return nil })
			if err != nil || st.Rows != int64(rows) {
				t.Fatal(st, err)
			}
		})
	}
	few, many := allocs(10), allocs(20000)
	t.Logf("%.0f allocations for 10 rows, %.0f for 20000", few, many)
	if many > few+2 {
		t.Errorf("%.0f allocations for 10 rows, %.0f for 20000", few, many)
	}
}

func BenchmarkOpenAddresses(b *testing.B) {
	row := `151.0653217,-33.8622904,18,"COURALLIE AVENUE",,HOMEBUSH WEST,,NSW,2140,GANSW717138653,a1b2c3d4e5f60718` + "\n"
	data := []byte("LON,LAT,NUMBER,STREET,UNIT,CITY,DISTRICT,REGION,POSTCODE,ID,HASH\n" + strings.Repeat(row, 100000))
	b.SetBytes(int64(len(data)))
	for range b.N {
		if _, err := ReadOpenAddresses(bytes.NewReader(data), "b.csv", func(*Point) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(100000*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
