package pdf

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lodge-mail/lodge/internal/pagetext"
)

// statementRun writes n letter pages as a statement run printer would:
// an address block in the window, a heading, 40 lines of body text in
// two fonts, a rule.
func statementRun(tb testing.TB, n int) []byte {
	var src bytes.Buffer
	w := NewWriter(&src)
	var c Content
	for i := range n {
		c.Reset()
		c.Text(Helvetica, 10, 62, 700, fmt.Sprintf("Customer %d", i))
		c.Text(Helvetica, 10, 62, 688, fmt.Sprintf("%d Example Street", i%500+1))
		c.Text(Helvetica, 10, 62, 676, "NORTH SYDNEY NSW 2060")
		c.Text(HelveticaBold, 14, 72, 600, fmt.Sprintf("Statement %d", i))
		for l := range 40 {
			c.Text(Helvetica, 9, 72, 560-float64(l)*12, fmt.Sprintf("%02d/05  Purchase at shop number %d       %8.2f", l+1, i*40+l, float64(l)*3.7))
		}
		c.Line(72, 60, 520, 60, 0.5)
		w.AddPage(595.28, 841.89, &c)
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return src.Bytes()
}

// windowZone is a DL envelope's window on an A4 page, in points from the
// top-left: about 20 to 110 mm across, 40 to 80 mm down.
var windowZone = pagetext.Rect{X0: 56, Y0: 113, X1: 312, Y1: 227}

// BenchmarkPageText reads every page of a 1,000-page statement run (41
// lines of text a page): in the window zone, as the auto processor does
// for every page, and whole.
func BenchmarkPageText(b *testing.B) {
	data := statementRun(b, 1000)
	for _, bc := range []struct {
		name string
		zone *pagetext.Rect
	}{{"zone", &windowZone}, {"whole", nil}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			var p pagetext.Page
			pages := 0
			for range b.N {
				r, err := Open(bytes.NewReader(data), int64(len(data)), Limits{})
				if err != nil {
					b.Fatal(err)
				}
				for i := range r.NumPages() {
					if err := r.PageText(i, bc.zone, &p); err != nil {
						b.Fatal(err)
					}
					pages++
				}
			}
			b.ReportMetric(float64(pages)/b.Elapsed().Seconds(), "pages/s")
		})
	}
	// the real producers' pages (fonts loaded once, as in a long
	// document): Chromium's CID fonts, Ghostscript's Type 1C
	for _, name := range []string{"chromium.pdf", "gs.pdf"} {
		data, err := os.ReadFile(filepath.Join("testdata", "text", name))
		if err != nil {
			b.Fatal(err)
		}
		r, err := Open(bytes.NewReader(data), int64(len(data)), Limits{})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(strings.TrimSuffix(name, ".pdf")+"-zone", func(b *testing.B) {
			b.ReportAllocs()
			var p pagetext.Page
			for k := range b.N {
				if err := r.PageText(k%r.NumPages(), &windowZone, &p); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pages/s")
		})
	}
}
