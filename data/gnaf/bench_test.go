package gnaf

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// BenchmarkParse parses an ADDRESS_DETAIL file held in memory: the cost of
// the reader alone, on one core.
//
//	go test -run X -bench Parse ./data/gnaf
func BenchmarkParse(b *testing.B) {
	// The NSW fixture rows repeated to 32 MiB.
	dir := filepath.Join(fixtures(b), "G-NAF", "G-NAF NOVEMBER 2024", "Standard")
	src, err := os.ReadFile(filepath.Join(dir, "NSW_ADDRESS_DETAIL_psv.psv"))
	if err != nil {
		b.Fatal(err)
	}
	i := bytes.IndexByte(src, '\n') + 1
	data := append([]byte(nil), src...)
	for len(data) < 32<<20 {
		data = append(data, src[i:]...)
	}
	rd := &reader{maxRejects: -1}
	var a Address
	var st Stats
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for range b.N {
		st = Stats{}
		if err := readTable(rd, bytes.NewReader(data), "T.psv", "NSW", &addressSpec, &a, &st, func(*Address) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(st.Rows+st.Retired)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkRelease reads the ADDRESS_DETAIL table of a release written by
// bench/gnafgen (GNAF_BENCH_ADDRESSES addresses, default 1,000,000), as a
// folder and as a ZIP.
//
//	go test -run X -bench Release -benchtime 3x ./data/gnaf
func BenchmarkRelease(b *testing.B) {
	n := 1000000
	if s := os.Getenv("GNAF_BENCH_ADDRESSES"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			b.Fatal(err)
		}
	}
	dir := generate(b, b.TempDir(), n)
	for _, form := range []string{"folder", "zip"} {
		p := filepath.Join(dir, "G-NAF")
		if form == "zip" {
			p = filepath.Join(dir, "g-naf_nov24_allstates_gda2020_psv_1017.zip")
		}
		b.Run(form, func(b *testing.B) {
			r, err := Open(p)
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			var st Stats
			b.SetBytes(r.TotalBytes())
			for range b.N {
				if st, err = r.AddressDetails(func(*Address) error { return nil }); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(st.Rows+st.Retired)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
