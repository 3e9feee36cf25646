package gnaf

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	"github.com/lodge-mail/lodge/internal/testenv"
)

func runGo(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	return cmd.CombinedOutput()
}

// adHeader is the ADDRESS_DETAIL header in G-NAF's column order.
var adHeader = strings.Split("ADDRESS_DETAIL_PID|DATE_CREATED|DATE_LAST_MODIFIED|DATE_RETIRED|BUILDING_NAME|"+
	"LOT_NUMBER_PREFIX|LOT_NUMBER|LOT_NUMBER_SUFFIX|FLAT_TYPE_CODE|FLAT_NUMBER_PREFIX|FLAT_NUMBER|FLAT_NUMBER_SUFFIX|"+
	"LEVEL_TYPE_CODE|LEVEL_NUMBER_PREFIX|LEVEL_NUMBER|LEVEL_NUMBER_SUFFIX|NUMBER_FIRST_PREFIX|NUMBER_FIRST|"+
	"NUMBER_FIRST_SUFFIX|NUMBER_LAST_PREFIX|NUMBER_LAST|NUMBER_LAST_SUFFIX|STREET_LOCALITY_PID|LOCATION_DESCRIPTION|"+
	"LOCALITY_PID|ALIAS_PRINCIPAL|POSTCODE|PRIVATE_STREET|LEGAL_PARCEL_ID|CONFIDENCE|ADDRESS_SITE_PID|"+
	"LEVEL_GEOCODED_CODE|PROPERTY_PID|GNAF_PROPERTY_PID|PRIMARY_SECONDARY", "|")

// adRow returns an ADDRESS_DETAIL row, a valid one changed by col=value
// pairs.
func adRow(kv ...string) string {
	v := map[string]string{"ADDRESS_DETAIL_PID": "GANSW1", "DATE_CREATED": "2020-01-01", "NUMBER_FIRST": "12",
		"STREET_LOCALITY_PID": "NSW1", "LOCALITY_PID": "loc1", "ALIAS_PRINCIPAL": "P", "POSTCODE": "2000",
		"CONFIDENCE": "2", "ADDRESS_SITE_PID": "7"}
	for _, s := range kv {
		k, x, _ := strings.Cut(s, "=")
		v[k] = x
	}
	out := make([]string, len(adHeader))
	for i, h := range adHeader {
		out[i] = v[h]
	}
	return strings.Join(out, "|")
}

var hdr = strings.Join(adHeader, "|")

func readAddresses(r io.Reader, maxRejects int, fn func(*Address) error) (Stats, error) {
	rd := &reader{maxRejects: maxRejects}
	var st Stats
	var a Address
	err := readTable(rd, r, "T.psv", "NSW", &addressSpec, &a, &st, fn)
	return st, err
}

// TestHostile feeds malformed ADDRESS_DETAIL files to the reader.
func TestHostile(t *testing.T) {
	f := func(in string, rows, retired, rejected int64, wantErr string) {
		t.Helper()
		st, err := readAddresses(strings.NewReader(in), DefaultMaxRejects, func(a *Address) error {
			if a.PID == "" || !utf8.ValidString(a.PID+a.BuildingName+a.Postcode) {
				t.Errorf("bad record %+v", a)
			}
			return nil
		})
		if (err == nil) != (wantErr == "") || (err != nil && !strings.Contains(err.Error(), wantErr)) {
			t.Errorf("%.80q: error %v, want %q", in, err, wantErr)
		}
		if st.Rows != rows || st.Retired != retired || st.Rejected != rejected {
			t.Errorf("%.80q: %d rows %d retired %d rejected %v, want %d %d %d", in, st.Rows, st.Retired, st.Rejected, st.Reasons, rows, retired, rejected)
		}
		if int64(len(st.Reasons)) != min(st.Rejected, MaxReasons) {
			t.Errorf("%.80q: %d reasons for %d rejected", in, len(st.Reasons), st.Rejected)
		}
	}
	ok := adRow()
	// Files that read.
	f(hdr+"\n"+ok+"\n", 1, 0, 0, "")
	f(hdr+"\r\n"+ok+"\r\n"+ok+"\r\n", 2, 0, 0, "")
	f(hdr+"\n"+ok, 1, 0, 0, "")                        // no line end at the end
	f(hdr, 0, 0, 0, "")                                // header only
	f(hdr+"\n\n"+ok+"\n\r\n\n"+ok+"\n\n", 2, 0, 0, "") // empty lines
	f("\ufeff"+hdr+"\n"+ok+"\n", 1, 0, 0, "")          // byte order mark
	f(strings.ToLower(hdr)+"\n"+ok+"\n", 1, 0, 0, "")
	f(hdr+"|EXTRA_COLUMN\n"+ok+"|x\n", 1, 0, 0, "") // unknown columns are fine
	f(hdr+"\n"+adRow("DATE_RETIRED=2021-01-01")+"\n"+ok+"\n", 1, 1, 0, "")
	f(hdr+"\n"+adRow("BUILDING_NAME=CAFÉ\tMÜLLER")+"\n", 1, 0, 0, "")
	f(hdr+"\n"+adRow("CONFIDENCE=-1", "NUMBER_FIRST=0", "FLAT_NUMBER=999999999", "PRIMARY_SECONDARY=S")+"\n", 1, 0, 0, "")
	f(hdr+"\n"+adRow("NUMBER_FIRST=", "LOT_NUMBER=CP12")+"\n", 1, 0, 0, "")

	// Bad rows: skipped and counted.
	f(hdr+"\n"+ok+"|extra\n"+ok+"\n", 1, 0, 1, "")
	f(hdr+"\n"+"GANSW1|2020\n", 0, 0, 1, "")
	f(hdr+"\n"+adRow("BUILDING_NAME=A\x00B")+"\n", 0, 0, 1, "")
	f(hdr+"\n"+adRow("BUILDING_NAME=A\rB")+"\n", 0, 0, 1, "")
	f(hdr+"\n"+adRow("BUILDING_NAME=\xff\xfe")+"\n", 0, 0, 1, "")
	f(hdr+"\n"+adRow("DATE_RETIRED=2020", "BUILDING_NAME=\x00")+"\n", 0, 0, 1, "") // control character before the retired test
	f(hdr+"\n"+adRow("NUMBER_FIRST=12A")+"\n", 0, 0, 1, "")
	f(hdr+"\n"+adRow("NUMBER_FIRST=-12")+"\n", 0, 0, 1, "")
	f(hdr+"\n"+adRow("NUMBER_LAST=1234567890")+"\n", 0, 0, 1, "")
	f(hdr+"\n"+adRow("FLAT_NUMBER= 1")+"\n", 0, 0, 1, "")
	f(hdr+"\n"+adRow("LEVEL_NUMBER=x")+"\n", 0, 0, 1, "")
	f(hdr+"\n"+adRow("CONFIDENCE=-")+"\n", 0, 0, 1, "")
	f(hdr+"\n"+adRow("CONFIDENCE=high")+"\n", 0, 0, 1, "")
	f(hdr+"\n"+adRow("ALIAS_PRINCIPAL=X")+"\n", 0, 0, 1, "")
	f(hdr+"\n"+adRow("ALIAS_PRINCIPAL=")+"\n", 0, 0, 1, "")
	f(hdr+"\n"+adRow("PRIMARY_SECONDARY=PS")+"\n", 0, 0, 1, "")
	f(hdr+"\n"+adRow("ADDRESS_DETAIL_PID=")+"\n", 0, 0, 1, "")
	f(hdr+"\n"+adRow("LOCALITY_PID=")+"\n", 0, 0, 1, "")
	f(hdr+"\n"+strings.Repeat("|", 200)+"\n", 0, 0, 1, "")
	f(hdr+"\n"+strings.Repeat(ok+"|x\n", 20), 0, 0, 20, "")

	// Files that do not read.
	f("", 0, 0, 0, "T.psv: empty file")
	f("\n", 0, 0, 0, "T.psv:1: header: empty line")
	f("\r\n"+hdr+"\n", 0, 0, 0, "T.psv:1: header: empty line")
	f("A|B|C\n"+ok+"\n", 0, 0, 0, "header lacks column DATE_RETIRED, ADDRESS_DETAIL_PID")
	f(strings.Replace(hdr, "|NUMBER_FIRST|", "|NUMBER_1ST|", 1)+"\n"+ok+"\n", 0, 0, 0, "T.psv:1: header lacks column NUMBER_FIRST")
	f(hdr+"|POSTCODE\n", 0, 0, 0, "column POSTCODE appears twice")
	f(hdr+"||X\n", 0, 0, 0, "column 36 has no name")
	f(hdr+"\x00\n", 0, 0, 0, "T.psv:1: header: control character")
	f(strings.Repeat("x", 10<<20)+"\n"+ok+"\n", 0, 0, 0, "T.psv:1: header: line longer than 65536 bytes")
	f(hdr+"\n"+ok+"\n"+strings.Repeat("x", 10<<20)+"\n"+ok+"\n", 1, 0, 0, "T.psv:3: line longer than 65536 bytes")
	f(hdr+"\n"+ok+"\n"+strings.Repeat("x", 10<<20), 1, 0, 0, "T.psv:3: line longer than 65536 bytes")
	f(hdr+"\n"+adRow("BUILDING_NAME="+strings.Repeat("B", MaxLine))+"\n", 0, 0, 0, "T.psv:2: line longer")
	f(hdr+"\n"+adRow("BUILDING_NAME="+strings.Repeat("B", MaxLine-len(ok)))+"\r\n", 1, 0, 0, "") // exactly MaxLine
	f(hdr+"\n"+strings.Repeat(ok+"|x\n", DefaultMaxRejects+1), 0, 0, DefaultMaxRejects+1, "more than 1000 bad rows")
}

// TestReaders reads through readers that misbehave.
func TestReaders(t *testing.T) {
	in := hdr + "\n" + strings.Repeat(adRow()+"\r\n", 1000)
	for name, r := range map[string]io.Reader{
		"one byte": iotest.OneByteReader(strings.NewReader(in)),
		"half":     iotest.HalfReader(strings.NewReader(in)),
		"data+EOF": iotest.DataErrReader(strings.NewReader(in)),
	} {
		st, err := readAddresses(r, 0, func(*Address) error { return nil })
		if err != nil || st.Rows != 1000 {
			t.Errorf("%s: %+v %v", name, st, err)
		}
	}
	boom := errors.New("disk on fire")
	_, err := readAddresses(io.MultiReader(strings.NewReader(hdr+"\n"+adRow()+"\n"), iotest.ErrReader(boom)), 0, func(*Address) error { return nil })
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "T.psv:3") {
		t.Errorf("read error: %v", err)
	}
	// A read error mid-line: the partial line is not a row.
	st, err := readAddresses(io.MultiReader(strings.NewReader(hdr+"\n"+adRow()+"\n"+adRow()), iotest.ErrReader(boom)), 0, func(*Address) error { return nil })
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "T.psv:3") || st.Rows != 1 || st.Rejected != 0 {
		t.Errorf("read error mid-line: %+v %v", st, err)
	}
	_, err = readAddresses(zeroReader{}, 0, func(*Address) error { return nil })
	if !errors.Is(err, io.ErrNoProgress) {
		t.Errorf("reader making no progress: %v", err)
	}
}

type zeroReader struct{}

func (zeroReader) Read([]byte) (int, error) { return 0, nil }

// endless is an endless line: the reader must give up after MaxLine.
type endless struct{ n int64 }

func (e *endless) Read(b []byte) (int, error) {
	for i := range b {
		b[i] = 'x'
	}
	e.n += int64(len(b))
	return len(b), nil
}

// TestBounded reads an endless line and many rows: memory stays bounded.
func TestBounded(t *testing.T) {
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	e := &endless{}
	_, err := readAddresses(io.MultiReader(strings.NewReader(hdr+"\n"), e), 0, func(*Address) error { return nil })
	runtime.ReadMemStats(&ms1)
	if err == nil || !strings.Contains(err.Error(), "line longer") {
		t.Errorf("endless line: %v", err)
	}
	if e.n > 2*bufSize || ms1.TotalAlloc-ms0.TotalAlloc > 4*bufSize {
		t.Errorf("endless line: read %d bytes, allocated %d", e.n, ms1.TotalAlloc-ms0.TotalAlloc)
	}
}

// TestAllocs: reading allocates per file (the header), never per row.
func TestAllocs(t *testing.T) {
	if testenv.RaceEnabled {
		t.Skip("the race detector allocates")
	}
	rd := &reader{maxRejects: -1}
	allocs := func(rows int) float64 {
		data := []byte(hdr + "\n" + strings.Repeat(adRow("BUILDING_NAME=TOWER", "FLAT_TYPE_CODE=UNIT", "FLAT_NUMBER=3")+"\n", rows))
		var a Address
		return testing.AllocsPerRun(3, func() {
			var st Stats
			err := readTable(rd, bytes.NewReader(data), "T.psv", "NSW", &addressSpec, &a, &st, func(*Address) error { return nil })
			if err != nil || st.Rows != int64(rows) {
				t.Fatal(st, err)
			}
		})
	}
	few, many := allocs(10), allocs(20000)
	t.Logf("%.0f allocations for 10 rows, %.0f for 20000", few, many)
	if many > few || many > 10 {
		t.Errorf("%.0f allocations for 10 rows, %.0f for 20000", few, many)
	}
}

// TestMaxRejects: the limit is the Options', and a negative one none.
func TestMaxRejects(t *testing.T) {
	in := hdr + "\n" + strings.Repeat(adRow()+"|x\n", 5)
	if _, err := readAddresses(strings.NewReader(in), 4, func(*Address) error { return nil }); err == nil || !strings.Contains(err.Error(), "more than 4 bad rows") {
		t.Errorf("limit 4: %v", err)
	}
	if st, err := readAddresses(strings.NewReader(in), -1, func(*Address) error { return nil }); err != nil || st.Rejected != 5 || len(st.Reasons) != 5 {
		t.Errorf("no limit: %+v %v", st, err)
	} else if st.Reasons[0] != "T.psv:2: 36 fields, want 35" {
		t.Errorf("reason %q", st.Reasons[0])
	}
}

type zipEntry struct {
	name string
	data string
	// raw, when set, is written as the entry's compressed data, declaring
	// size bytes uncompressed.
	raw  []byte
	size uint64
}

func writeZip(t testing.TB, entries ...zipEntry) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "t.zip")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for _, e := range entries {
		var w io.Writer
		if e.raw != nil {
			w, err = zw.CreateRaw(&zip.FileHeader{Name: e.name, Method: zip.Deflate,
				CompressedSize64: uint64(len(e.raw)), UncompressedSize64: e.size})
			if err == nil {
				_, err = w.Write(e.raw)
			}
		} else {
			w, err = zw.Create(e.name)
			if err == nil {
				_, err = io.WriteString(w, e.data)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

func deflate(t testing.TB, data []byte) []byte {
	var b bytes.Buffer
	w, _ := flate.NewWriter(&b, flate.BestCompression)
	w.Write(data)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestHostileZip opens malformed and malicious ZIPs.
func TestHostileZip(t *testing.T) {
	f := func(wantOpenErr, wantReadErr string, entries ...zipEntry) {
		t.Helper()
		r, err := Open(writeZip(t, entries...))
		if (err == nil) != (wantOpenErr == "") || (err != nil && !strings.Contains(err.Error(), wantOpenErr)) {
			t.Errorf("%s: Open: %v, want %q", entries[0].name, err, wantOpenErr)
		}
		if err != nil {
			return
		}
		defer r.Close()
		_, err = r.AddressDetails(func(*Address) error { return nil })
		if (err == nil) != (wantReadErr == "") || (err != nil && !strings.Contains(err.Error(), wantReadErr)) {
			t.Errorf("%s: AddressDetails: %v, want %q", entries[0].name, err, wantReadErr)
		}
	}
	good := hdr + "\n" + adRow() + "\n"
	std := "G-NAF/G-NAF MAY 2025/Standard/"
	f("", "", zipEntry{name: std + "NSW_ADDRESS_DETAIL_psv.psv", data: good})
	f("", "", zipEntry{name: `G-NAF\G-NAF MAY 2025\Standard\NSW_ADDRESS_DETAIL_psv.psv`, data: good})
	f("", "", zipEntry{name: "Standard/NSW_ADDRESS_DETAIL_psv.psv", data: good})
	f("unsafe entry name", "", zipEntry{name: "../G-NAF/Standard/NSW_ADDRESS_DETAIL_psv.psv", data: good})
	f("unsafe entry name", "", zipEntry{name: std + "NSW_ADDRESS_DETAIL_psv.psv", data: good}, zipEntry{name: "G-NAF/../../etc/passwd", data: "x"})
	f("unsafe entry name", "", zipEntry{name: "/G-NAF/Standard/NSW_ADDRESS_DETAIL_psv.psv", data: good})
	f("unsafe entry name", "", zipEntry{name: `..\Standard\NSW_ADDRESS_DETAIL_psv.psv`, data: good})
	f("unsafe entry name", "", zipEntry{name: "", data: good})
	f("2 releases", "", zipEntry{name: "A/Standard/NSW_ADDRESS_DETAIL_psv.psv", data: good}, zipEntry{name: "B/Standard/NSW_ADDRESS_DETAIL_psv.psv", data: good})
	f("are the same table", "", zipEntry{name: std + "NSW_ADDRESS_DETAIL_psv.psv", data: good}, zipEntry{name: std + "nsw_address_detail_psv.psv", data: good})
	f("no Standard folder", "", zipEntry{name: "G-NAF/README.txt", data: "hello"})
	f("no ADDRESS_DETAIL files", "", zipEntry{name: std + "NSW_LOCALITY_psv.psv", data: good})
	f("", "empty file", zipEntry{name: std + "NSW_ADDRESS_DETAIL_psv.psv", data: ""})
	f("", "header lacks column", zipEntry{name: std + "NSW_ADDRESS_DETAIL_psv.psv", data: "CODE|NAME\n"})

	// Bombs. Declaring more than MaxFileBytes is refused at Open.
	f("beyond the", "", zipEntry{name: std + "NSW_ADDRESS_DETAIL_psv.psv", raw: deflate(t, []byte(good)), size: MaxFileBytes + 1})
	// Inflating to more than declared fails when read, after the declared bytes.
	many := []byte(hdr + "\n" + strings.Repeat(adRow()+"\n", 200000))
	f("", "NSW_ADDRESS_DETAIL_psv.psv", zipEntry{name: std + "NSW_ADDRESS_DETAIL_psv.psv", raw: deflate(t, many), size: 1 << 20})
	// A 1 GiB line of zeros, honestly declared: the line limit stops it early.
	zeros := deflate(t, make([]byte, 64<<20))
	f("", "line longer than", zipEntry{name: std + "NSW_ADDRESS_DETAIL_psv.psv", raw: zeros, size: 64 << 20})

	// Not a ZIP at all.
	p := filepath.Join(t.TempDir(), "x.zip")
	os.WriteFile(p, []byte("PK\x03\x04 but not really"), 0o644)
	if _, err := Open(p); err == nil || !strings.Contains(err.Error(), "x.zip") {
		t.Errorf("not a zip: %v", err)
	}
}

// FuzzReadTable reads arbitrary bytes as an ADDRESS_DETAIL file, in small
// pieces, and checks each record against a plain reading of the same
// bytes: split at \n, a trailing \r cut, split at |.
func FuzzReadTable(f *testing.F) {
	f.Add([]byte(hdr+"\n"+adRow()+"\n"), uint8(7))
	f.Add([]byte(hdr+"\r\n"+adRow("DATE_RETIRED=2020")+"\r\n"+adRow("NUMBER_LAST=12", "CONFIDENCE=-1")), uint8(1))
	f.Add([]byte("\ufeff"+hdr+"|X\n"+adRow()+"|\xff\n\n"+adRow("FLAT_NUMBER=1x")+"\n"+adRow()+"|1|2"), uint8(3))
	f.Add([]byte("ADDRESS_DETAIL_PID|A|A\n"), uint8(0))
	if root, err := testenv.RepoRoot(); err == nil {
		for _, st := range []string{"NSW", "QLD", "VIC"} {
			if b, err := os.ReadFile(filepath.Join(root, "testdata", "gnaf", "G-NAF", "G-NAF NOVEMBER 2024", "Standard", st+"_ADDRESS_DETAIL_psv.psv")); err == nil {
				f.Add(b, uint8(5))
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, chunk uint8) {
		lines := strings.Split(string(data), "\n")
		var header []string
		pid := -1
		rd := &reader{maxRejects: -1}
		var st Stats
		var a Address
		err := readTable(rd, &chunker{data: data, n: int(chunk) + 1}, "F.psv", "NSW", &addressSpec, &a, &st, func(a *Address) error {
			if header == nil {
				h := strings.TrimPrefix(strings.TrimSuffix(lines[0], "\r"), "\ufeff")
				header = strings.Split(h, "|")
				for i, c := range header {
					if asciiUpper(strings.TrimSpace(c)) == "ADDRESS_DETAIL_PID" {
						pid = i
					}
				}
			}
			n := rd.p.lr.line
			if n < 2 || n > len(lines) {
				t.Fatalf("line %d of %d", n, len(lines))
			}
			fields := strings.Split(strings.TrimSuffix(lines[n-1], "\r"), "|")
			if len(fields) != len(header) || pid < 0 || fields[pid] != a.PID {
				t.Fatalf("line %d: PID %q, fields %q", n, a.PID, fields)
			}
			if a.PID == "" || a.LocalityPID == "" || (a.AliasPrincipal != 'P' && a.AliasPrincipal != 'A') {
				t.Fatalf("line %d: %+v", n, a)
			}
			for _, s := range []string{a.PID, a.BuildingName, a.LotNumber, a.FlatTypeCode, a.Postcode, a.AddressSitePID} {
				if !utf8.ValidString(s) || strings.ContainsAny(s, "|\n\r\x00") {
					t.Fatalf("line %d: field %q", n, s)
				}
			}
			return nil
		})
		if err != nil && !strings.HasPrefix(err.Error(), "gnaf: F.psv:") {
			t.Fatalf("error does not name file and line: %v", err)
		}
		if st.Rows+st.Retired+st.Rejected > int64(len(lines)) {
			t.Fatalf("%+v for %d lines", st, len(lines))
		}
		if int64(len(st.Reasons)) != min(st.Rejected, MaxReasons) {
			t.Fatalf("%d reasons for %d rejected", len(st.Reasons), st.Rejected)
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
