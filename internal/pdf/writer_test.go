package pdf

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lodge-mail/lodge/internal/testdoc/readback"
)

const mm = 72 / 25.4

func TestAppendNum(t *testing.T) {
	f := func(v float64, want string) {
		t.Helper()
		if got := string(appendNum(nil, v)); got != want {
			t.Fatalf("appendNum(%v) = %q, want %q", v, got, want)
		}
	}
	f(0, "0")
	f(595.28, "595.28")
	f(-12, "-12")
	f(1.0/3, "0.3333")
	f(-0.00001, "0")
	f(2.50000, "2.5")
	f(1e20, "100000000000000000000")
}

func TestPDFString(t *testing.T) {
	f := func(s, want string) {
		t.Helper()
		if got := string(appendPDFString(nil, s)); got != want {
			t.Fatalf("appendPDFString(%q) = %q, want %q", s, got, want)
		}
	}
	f("Smith St", "(Smith St)")
	f(`(a)\b`, `(\(a\)\\b)`)
	f("Café €5", `(Caf\351 \2005)`)
	f("tab\there", "(tab?here)")
	f("漢字", "(??)")
	if !Encodable("Müller & Söhne – “quoted”") || Encodable("Nguyễn") {
		t.Fatal("Encodable")
	}
}

func TestFontWidth(t *testing.T) {
	// Adobe's published metrics: Helvetica A = 667, space = 278; Courier 600
	if w := Helvetica.Width("A A", 1000); w != 667+278+667 {
		t.Fatalf("Helvetica width %v", w)
	}
	if w := Courier.Width("abc", 10); w != 18 {
		t.Fatalf("Courier width %v", w)
	}
}

// writeSample writes a two-page PDF: text in the three fonts, a Data
// Matrix over a dark area on page 1 and a red rectangle greyed by the saturation blend on
// page 2.
func writeSample(t *testing.T) string {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf)
	var c Content
	c.Text(Helvetica, 11, 25*mm, 250*mm, "Jo Citizen")
	c.Text(HelveticaBold, 11, 25*mm, 245*mm, "3/72 Charles St (rear) – St Kilda")
	c.Text(Courier, 9, 25*mm, 240*mm, `ST KILDA VIC 3182 \ Müller`)
	c.Gray(0) // a black area under the code: its quiet zone is white
	c.Rect(0, 0, 60*mm, 60*mm)
	c.Fill()
	if _, _, err := c.DataMatrix("2JWM49JYMXWV2PGYX8TRBGJ847JK/000007/1/2", 10*mm, 10*mm, 0.5*mm); err != nil {
		t.Fatal(err)
	}
	w.AddPage(210*mm, 297*mm, &c)
	c.Reset()
	c.RGB(1, 0, 0)
	c.Rect(0, 0, 210*mm, 297*mm)
	c.Fill()
	c.Save()
	c.Blend(Saturation)
	c.Gray(0.5)
	c.Rect(0, 0, 210*mm, 297*mm)
	c.Fill()
	c.Restore()
	w.AddPage(210*mm, 297*mm, &c)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "sample.pdf")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestWriterReadBack reads a written PDF with three other readers: qpdf
// checks its structure, pdftotext its text, pdftoppm renders it so that
// dmtxread decodes the code and a pixel shows the blend.
func TestWriterReadBack(t *testing.T) {
	path := writeSample(t)
	readback.Check(t, path)
	out := readback.Text(t, path, 1)
	for _, want := range []string{"Jo Citizen", "3/72 Charles St (rear) – St Kilda", `ST KILDA VIC 3182 \ Müller`} {
		if !strings.Contains(out, want) {
			t.Fatalf("pdftotext lacks %q:\n%s", want, out)
		}
	}
	if got := readback.DataMatrix(t, readback.Render(t, path, 1, 150)); got != "2JWM49JYMXWV2PGYX8TRBGJ847JK/000007/1/2" {
		t.Fatalf("decoded %q", got)
	}
	r, g, b := readback.Pixel(readback.Render(t, path, 2, 150), 100, 100)
	if r != g || g != b || r < 40 || r > 120 {
		t.Fatalf("page 2 pixel %d,%d,%d: want the red's luminosity as grey", r, g, b)
	}
}

// TestWriterErrors: misuse is an error from Close, never a broken file.
func TestWriterErrors(t *testing.T) {
	f := func(name string, use func(w *Writer)) {
		t.Helper()
		w := NewWriter(&bytes.Buffer{})
		use(w)
		if err := w.Close(); err == nil {
			t.Fatalf("%s: no error", name)
		}
	}
	f("no pages", func(w *Writer) {})
	f("allocated never written", func(w *Writer) {
		w.AddPage(100, 100, &Content{})
		w.Alloc()
	})
	f("written twice", func(w *Writer) {
		w.AddPage(100, 100, &Content{})
		r := w.Alloc()
		w.Object(r, []byte("1"))
		w.Object(r, []byte("2"))
	})
	f("not allocated", func(w *Writer) {
		w.AddPage(100, 100, &Content{})
		w.Object(99, []byte("1"))
	})
}
