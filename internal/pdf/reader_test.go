package pdf

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lodge-mail/lodge/internal/testdoc"
)

func open(t testing.TB, data []byte, lim Limits) *Reader {
	t.Helper()
	r, err := Open(bytes.NewReader(data), int64(len(data)), lim)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestXrefPath: the golden PDFs are read through their cross-reference
// data, not by the rebuild that would hide a broken reader.
func TestXrefPath(t *testing.T) {
	f := func(name string, data []byte, want int) {
		t.Helper()
		r := open(t, data, Limits{})
		if r.rebuilt || r.NumPages() != want {
			t.Errorf("%s: %d pages, rebuilt %v; want %d through the cross-reference data", name, r.NumPages(), r.rebuilt, want)
		}
	}
	f("1 page", testdoc.OnePagePDF(), 1)
	f("3 pages", testdoc.ThreePagePDF(), 3)
	f("xref stream", testdoc.XrefStreamPDF(), 4)
	f("incremental", testdoc.IncrementalPDF(), 2)
	r := open(t, bytes.Replace(testdoc.OnePagePDF(), []byte("startxref"), []byte("startxreg"), 1), Limits{})
	if !r.rebuilt || r.NumPages() != 1 {
		t.Errorf("no startxref: %d pages, rebuilt %v", r.NumPages(), r.rebuilt)
	}
}

// TestPageInfo: boxes (crop within media, inherited, by reference,
// reversed), rotation (inherited, negative, not a multiple of 90) and
// user units, as Page tells them.
func TestPageInfo(t *testing.T) {
	cat := "<< /Type /Catalog /Pages 2 0 R >>"
	data := testdoc.PDFWith(cat,
		"<< /Type /Pages /Kids [3 0 R 4 0 R 5 0 R 6 0 R 7 0 R 8 0 R] /MediaBox [0 0 612 792] /Rotate 90 >>",
		"<< /Type /Page >>",
		"<< /Type /Page /MediaBox [0 0 595 842] /CropBox [10 20 300 400] /Rotate -90 >>",
		"<< /Type /Page /MediaBox 9 0 R /Rotate 45 >>",
		"<< /Type /Page /MediaBox [0 0 100 100] /CropBox [50 50 500 500] /Rotate 540 /UserUnit 2 >>",
		"<< /Type /Page /MediaBox [0 0 (a) 5] /CropBox [1 2 3] >>",
		"<< /Type /Page /CropBox [0 0 200 300] /Rotate 0 >>",
		"[612 792 0 0]")
	r := open(t, data, Limits{})
	f := func(i int, box [4]float64, known bool, rot int, unit, w, h float64) {
		t.Helper()
		p := r.Page(i)
		gw, gh := p.Size()
		if p.Box != box || p.Known != known || p.Rotate != rot || p.UserUnit != unit || gw != w || gh != h {
			t.Errorf("page %d: %+v size %vx%v; want box %v known %v rotate %d unit %v size %vx%v", i, p, gw, gh, box, known, rot, unit, w, h)
		}
	}
	f(0, [4]float64{0, 0, 612, 792}, true, 90, 1, 792, 612)
	f(1, [4]float64{10, 20, 300, 400}, true, 270, 1, 380, 290)
	f(2, [4]float64{0, 0, 612, 792}, true, 0, 1, 612, 792) // 45 is not a rotation: none
	f(3, [4]float64{50, 50, 100, 100}, true, 180, 2, 100, 100)
	f(4, letter, false, 90, 1, 792, 612) // its own broken boxes hide the inherited one
	f(5, [4]float64{0, 0, 200, 300}, true, 0, 1, 200, 300)
	r = open(t, testdoc.PDFWith(cat, "<< /Type /Pages /Kids [3 0 R] >>", "<< /Type /Page >>"), Limits{})
	if p := r.Page(0); p.Known || p.Box != letter {
		t.Errorf("a page without boxes: %+v", p)
	}
}

// TestStringsAndReals: strings are kept whole by default and cut at
// MaxStringBytes when asked; reals are read as the nearest float64 (whose
// shortest form is the text written).
func TestStringsAndReals(t *testing.T) {
	long := strings.Repeat("x", 5000)
	data := testdoc.PDFWith("<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [3 0 R] >>",
		"<< /Type /Page /S ("+long+") /H <"+strings.Repeat("41", 3000)+"> /R [0.1 -.5 3. 1234567.125 0.000001] >>")
	for _, keep := range []int{0, 1024} {
		r := open(t, data, Limits{MaxStringBytes: keep})
		pg, err := r.load(r.pages[0].obj)
		if err != nil {
			t.Fatal(err)
		}
		d := pg.(dict)
		s, h := d["S"].(pdfString), d["H"].(pdfString)
		if keep == 0 && (string(s) != long || string(h) != strings.Repeat("A", 3000)) || keep > 0 && (len(s) != keep || len(h) != keep) {
			t.Errorf("MaxStringBytes %d: kept %d and %d bytes", keep, len(s), len(h))
		}
		want := []float64{0.1, -0.5, 3, 1234567.125, 0.000001}
		for i, v := range d["R"].(array) {
			if v != want[i] {
				t.Errorf("real %d read as %v, want %v", i, v, want[i])
			}
		}
	}
}

// TestOpenErrors: errors carry the reader's categories.
func TestOpenErrors(t *testing.T) {
	f := func(name string, data []byte, lim Limits, want error, msg string) {
		t.Helper()
		_, err := Open(bytes.NewReader(data), int64(len(data)), lim)
		if !errors.Is(err, want) || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v; want %v containing %q", name, err, want, msg)
		}
	}
	cat := "<< /Type /Catalog /Pages 2 0 R >>"
	f("not a PDF", []byte("hello"), Limits{}, ErrMalformed, "no objects")
	f("negative size", nil, Limits{}, ErrMalformed, "")
	f("cycle", testdoc.PDFWith(cat, "<< /Type /Pages /Kids [2 0 R] >>"), Limits{}, ErrMalformed, "page tree has a cycle")
	f("pages", testdoc.PDFWith(cat, "<< /Type /Pages /Kids [3 0 R 3 0 R] >>", "<< /Type /Page >>"), Limits{}, ErrMalformed, "twice")
	f("too many pages", testdoc.ThreePagePDF(), Limits{MaxPages: 2}, ErrLimit, "more than 2 pages")
	u, err := os.ReadFile(filepath.Join("testdata", "encrypted", "u128aes.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	f("user password", u, Limits{}, ErrEncrypted, "opening it needs a password")
}

// TestEncrypted: documents with an owner password only open and say they
// are encrypted (their content is read and compared in TestImport).
func TestEncrypted(t *testing.T) {
	for _, name := range []string{"plain", "o40", "o128rc4", "o128aes", "o256r5", "o256"} {
		data, err := os.ReadFile(filepath.Join("testdata", "encrypted", name+".pdf"))
		if err != nil {
			t.Fatal(err)
		}
		r := open(t, data, Limits{})
		if r.NumPages() != 3 || r.Encrypted() != (name != "plain") {
			t.Errorf("%s: %d pages, encrypted %v", name, r.NumPages(), r.Encrypted())
		}
	}
}
