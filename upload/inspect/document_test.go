package inspect

import (
	"github.com/lodge-mail/lodge/internal/testdoc"

	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/lodge-mail/lodge/internal/testenv"
)

// TestPageSizes: which pages are not A4 (within 2 mm, either way round),
// as each format tells a page's size.
func TestPageSizes(t *testing.T) {
	f := func(name string, kind Kind, data []byte, pages int, want []PageRun, notA4 int) {
		t.Helper()
		d, err := Inspect(kind, bytes.NewReader(data), int64(len(data)), Limits{})
		if err != nil || d.Pages != pages || !slices.Equal(d.NotA4, want) || d.NotA4Pages != notA4 {
			t.Errorf("%s: %+v, %v; want %d pages, not A4 %v (%d)", name, d, err, pages, want, notA4)
		}
	}
	cat := "<< /Type /Catalog /Pages 2 0 R >>"
	pdf := func(pagesNode string, pages ...string) []byte {
		objs := []string{cat, pagesNode}
		return testdoc.PDFWith(append(objs, pages...)...)
	}
	kids := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, " %d 0 R", 3+i)
		}
		return b.String()
	}
	f("A4, portrait and landscape, in points and rounded", PDF, pdf("<< /Type /Pages /Kids ["+kids(3)+"] >>",
		"<< /Type /Page /MediaBox [0 0 595 842] >>", "<< /Type /Page /MediaBox [0 0 841.89 595.28] >>", "<< /Type /Page /MediaBox [10 10 603 848] >>"), 3, nil, 0)
	f("US Letter inherited from the page tree", PDF, pdf("<< /Type /Pages /MediaBox [0 0 612 792] /Kids ["+kids(2)+"] >>",
		"<< /Type /Page >>", "<< /Type /Page >>"), 2, []PageRun{{0, 1, 216, 279}}, 2)
	f("a crop box makes Legal A4", PDF, pdf("<< /Type /Pages /MediaBox [0 0 612 1008] /Kids ["+kids(2)+"] >>",
		"<< /Type /Page /CropBox [0 0 595 842] >>", "<< /Type /Page >>"), 2, []PageRun{{1, 1, 216, 356}}, 1)
	f("a crop box outside the media box", PDF, pdf("<< /Type /Pages /Kids ["+kids(1)+"] >>",
		"<< /Type /Page /MediaBox [0 0 595 842] /CropBox [1000 1000 2000 2000] >>"), 1, nil, 0)
	f("user unit", PDF, pdf("<< /Type /Pages /Kids ["+kids(1)+"] >>",
		"<< /Type /Page /MediaBox [0 0 297.5 421] /UserUnit 2 >>"), 1, nil, 0)
	f("A3 then A5, runs", PDF, pdf("<< /Type /Pages /Kids ["+kids(4)+"] >>",
		"<< /Type /Page /MediaBox [0 0 842 1191] >>", "<< /Type /Page /MediaBox [0 0 1191 842] >>",
		"<< /Type /Page /MediaBox [0 0 420 595] >>", "<< /Type /Page /MediaBox [0 0 420 595] >>"), 4,
		[]PageRun{{0, 0, 297, 420}, {1, 1, 420, 297}, {2, 3, 148, 210}}, 4)
	f("no or broken media boxes: unknown", PDF, pdf("<< /Type /Pages /Kids ["+kids(4)+"] >>",
		"<< /Type /Page >>", "<< /Type /Page /MediaBox [0 0 612] >>", "<< /Type /Page /MediaBox [0 0 (a) 792] >>",
		"<< /Type /Page /MediaBox [5 5 5 5] >>"), 4, nil, 0)
	f("media box by reference, reversed corners", PDF, testdoc.PDFWith(cat, "<< /Type /Pages /Kids [3 0 R] >>",
		"<< /Type /Page /MediaBox 4 0 R >>", "[612 792 0 0]"), 1, []PageRun{{0, 0, 216, 279}}, 1)
	var many []string
	for i := range 80 {
		box := "[0 0 612 792]"
		if i%2 == 1 {
			box = "[0 0 595 842]"
		}
		many = append(many, "<< /Type /Page /Parent 2 0 R /MediaBox "+box+" >>")
	}
	doc := pdf("<< /Type /Pages /Kids ["+kids(80)+"] >>", many...)
	got, err := Inspect(PDF, bytes.NewReader(doc), int64(len(doc)), Limits{})
	if err != nil || got.Pages != 80 || len(got.NotA4) != MaxSizeRuns || got.NotA4Pages != 40 || got.NotA4[MaxSizeRuns-1].First != 2*(MaxSizeRuns-1) {
		t.Errorf("alternating sizes: %+v, %v", got, err)
	}

	parts := xpsParts()
	parts[9] = strings.Replace(xpsPage, `Width="793.76" Height="1122.56"`, `Width="816" Height="1056"`, 1)
	f("XPS: a US Letter page", XPS, zipOf(t, parts...), 2, []PageRun{{0, 0, 216, 279}}, 1)
	parts = xpsParts()
	parts[9] = "<FixedPage/>"
	f("XPS: a page without size", XPS, zipOf(t, parts...), 2, nil, 0)

	if testenv.Tool(t, "gs") != "" {
		f("PostScript: A4 by default, then Letter", PostScript, []byte("%!PS\nshowpage << /PageSize [612 792] >> setpagedevice showpage showpage\n"),
			3, []PageRun{{1, 2, 216, 279}}, 2)
	}
}

// TestSizeName: the common paper sizes, either way round.
func TestSizeName(t *testing.T) {
	f := func(w, h int, want string) {
		t.Helper()
		if got := (PageRun{Width: w, Height: h}).SizeName(); got != want {
			t.Errorf("%d x %d: %q, want %q", w, h, got, want)
		}
	}
	f(216, 279, "US Letter")
	f(279, 216, "US Letter")
	f(216, 356, "US Legal")
	f(297, 420, "A3")
	f(148, 210, "A5")
	f(210, 297, "A4")
	f(212, 299, "A4")
	f(213, 297, "")
	f(100, 100, "")
}
