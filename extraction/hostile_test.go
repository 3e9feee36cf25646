package extraction

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lodge-mail/lodge/internal/pdf"
	"github.com/lodge-mail/lodge/internal/testdoc"
	"github.com/lodge-mail/lodge/internal/testdoc/mailpdf"
	"github.com/lodge-mail/lodge/pipeline"
)

// extractFile runs x over one document file.
func extractFile(t *testing.T, x *Extractor, path, kind string, pages int, prod pipeline.Production) []pipeline.Letter {
	t.Helper()
	m := &pipeline.Mailing{EPID: "H1", Account: "DEM00001", Auto: true, Production: prod,
		Files: []pipeline.File{{Name: filepath.Base(path), Kind: kind, Path: path, Pages: pages}}}
	ls, err := x.Extract(context.Background(), m)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return ls
}

func writeFile(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func summary(ls []pipeline.Letter) string {
	var out []string
	for _, l := range ls {
		d := l.Documents[0]
		s := fmt.Sprintf("%d-%d %s", d.PageStart+1, d.PageEnd+1, strings.Join(l.Postal, "/"))
		if l.Status == pipeline.Held {
			s += " HELD " + l.HoldReason
		}
		out = append(out, s)
	}
	return strings.Join(out, "; ")
}

// TestHostileDocuments: documents that attack the reader end in a clear
// answer for their letters, within the reader child's bounds.
func TestHostileDocuments(t *testing.T) {
	x := New(Config{}, nil)

	// A 5,000-page statement run: 1,000 letters of 5 pages, read within
	// the child's 512 MiB address-space bound (it fails to allocate past
	// it, which would hold the document).
	var b bytes.Buffer
	if err := mailpdf.Statement(&b, 1000, 5); err != nil {
		t.Fatal(err)
	}
	ls := extractFile(t, x, writeFile(t, "run.pdf", b.Bytes()), "pdf", 5000, pipeline.Production{})
	if len(ls) != 1000 {
		t.Fatalf("5,000-page run: %d letters", len(ls))
	}
	for i, l := range ls {
		if d := l.Documents[0]; d.PageStart != 5*i || d.PageEnd != 5*i+4 || l.Status == pipeline.Held || strings.Join(l.Postal, "/") != strings.Join(mailpdf.Address(i), "/") {
			t.Fatalf("letter %d: %+v", i, l)
		}
	}
	t.Logf("5,000 pages: the reader's peak resident memory %d MiB", x.PeakRSS()>>20)

	// Every page has an address (another one): every page is a letter.
	b.Reset()
	mailpdf.Statement(&b, 300, 1)
	if ls := extractFile(t, x, writeFile(t, "every.pdf", b.Bytes()), "pdf", 300, pipeline.Production{}); len(ls) != 300 {
		t.Errorf("every page addressed: %d letters", len(ls))
	}

	// A page of 100,000 text objects after an addressed page: read in
	// its bounds (the page is a continuation).
	var c pdf.Content
	b.Reset()
	w := pdf.NewWriter(&b)
	c.Text(pdf.Helvetica, 10, 71, 842-156, "MR A CITIZEN")
	c.Text(pdf.Helvetica, 10, 71, 842-168, "KINGSTON ACT 2604")
	w.AddPage(595, 842, &c)
	c.Reset()
	for i := range 100000 {
		c.Text(pdf.Helvetica, 6, 300+float64(i%40), 400+float64(i%300), "x")
	}
	w.AddPage(595, 842, &c)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := summary(extractFile(t, x, writeFile(t, "many.pdf", b.Bytes()), "pdf", 2, pipeline.Production{})); got != "1-1 MR A CITIZEN/KINGSTON ACT 2604; 2-2 xxx/xxx/xxx xx/xxx xxx/xxx xxx/xxx xxx/xx xxx/xxx/xxx/xxx xxx/xxx xxx/xxx xxx/xxx xxx/x xxx/xxx/xxx x/xxx xxx/xxx xxx/xxx xxx/xxx xxx/xxx/xxx/xxx xx/xxx xxx/xxx xxx/xxx xxx/xx xxx/xxx/xxx/xxx xxx/xxx xxx/xxx xxx/xxx xxx/x xxx/xxx/xxx x/xxx xxx/xxx xxx/xxx xxx/xxx xxx/xxx/xxx/xxx xx/xxx xxx/xxx xxx/xx xx HELD the envelope window of page 2 of many.pdf: the window holds 46 lines below the channel lines: more than an address (8 at most) (correct_letter gives the letter its address; or cancel it)" {
		t.Errorf("100,000 text objects: %s", got)
	}

	f := func(name string, x *Extractor, data []byte, kind string, pages int, want string) {
		t.Helper()
		got := summary(extractFile(t, x, writeFile(t, name, data), kind, pages, pipeline.Production{}))
		if !strings.Contains(got, want) {
			t.Errorf("%s:\n got %.500s\nwant %s", name, got, want)
		}
	}
	// A font whose ToUnicode map is garbage: the encoding reads.
	font := func(toUnicode string) []byte {
		return testdoc.PDFWith(
			"<< /Type /Catalog /Pages 2 0 R >>",
			"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
			"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
			"<< /Length 95 >>\nstream\nBT /F1 10 Tf 71 686 Td (MR A CITIZEN) Tj 0 -12 Td (KINGSTON ACT 2604) Tj ET\nendstream",
			"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding /ToUnicode 6 0 R >>",
			fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(toUnicode), toUnicode),
		)
	}
	f("tounicode-garbage.pdf", x, font("begincmap 1 beginbfrange <00> <FFFFFFFF> [<0041> endcmap"), "pdf", 1, "1-1 MR A CITIZEN/KINGSTON ACT 2604")
	f("tounicode-truncated.pdf", x, font("/CIDInit /ProcSet findresource begin 12 dict begin begincmap 2 beginbfchar <4D> <"), "pdf", 1, "1-1 MR A CITIZEN/KINGSTON ACT 2604")
	// Not a PDF at all, and a truncated one: one held letter.
	f("junk.pdf", x, []byte("%PDF-1.7\nthis is not a PDF"), "pdf", 1, "HELD junk.pdf could not be read for letters:")
	f("junk.xps", x, []byte("PK\x03\x04 not a zip"), "xps", 1, "HELD junk.xps could not be read for letters:")
	// The reader's time bound holds the document with the reason, and
	// the next document reads again. (The address-space bound is
	// internal/isolate's, tested with upload/inspect's child.)
	b.Reset()
	mailpdf.Statement(&b, 200, 5)
	run := b.Bytes()
	f("time.pdf", New(Config{Timeout: 1}, nil), run, "pdf", -1, "HELD time.pdf could not be read for letters: reading its text took longer than")
	f("after.pdf", x, run, "pdf", 1000, "996-1000 Customer 199")
}
