package pdf

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lodge-mail/lodge/internal/testdoc"
	"github.com/lodge-mail/lodge/internal/testdoc/readback"
	"github.com/lodge-mail/lodge/internal/testenv"
)

// ourPDF is a source written by Writer: text in the three fonts, a colour
// area and a Data Matrix, on two A4 pages.
func ourPDF(t testing.TB) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf)
	var c Content
	c.Text(Helvetica, 12, 72, 760, "Jo Citizen, 3/72 Charles St (rear)")
	c.Text(Courier, 10, 72, 740, `ST KILDA VIC 3182 \ Müller`)
	c.RGB(0.9, 0.2, 0.1)
	c.Rect(72, 500, 300, 120)
	c.Fill()
	if _, _, err := c.DataMatrix("E1/7/1/2", 20, 20, 2); err != nil {
		t.Fatal(err)
	}
	w.AddPage(595.28, 841.89, &c)
	c.Reset()
	c.Text(HelveticaBold, 14, 72, 700, "Second page")
	w.AddPage(595.28, 841.89, &c)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// featuresPDF is a source built object by object with what producers do
// and Writer does not: crop boxes inside media boxes, each rotation,
// attributes inherited from the page tree, a content array split inside a
// text object, a form XObject, an RGB image and an indexed image whose
// palette is a string, a transparency group, and a font that is missing.
func featuresPDF() []byte {
	text := func(s string) string {
		return "0.1 0.5 0.2 rg 40 60 200 80 re f BT /F1 18 Tf 40 200 Td (" + s + ") Tj ET"
	}
	b := testdoc.NewPDF().
		Obj(1, "<< /Type /Catalog /Pages 2 0 R >>").
		Obj(2, "<< /Type /Pages /Kids [3 0 R 4 0 R 5 0 R 6 0 R 7 0 R 8 0 R] /Count 6 /Resources 20 0 R /MediaBox [0 0 400 300] >>").
		Obj(3, "<< /Type /Page /Parent 2 0 R /CropBox [20 30 380 280] /Rotate 90 /Contents 10 0 R >>").
		Obj(4, "<< /Type /Page /Parent 2 0 R /CropBox [20 30 380 280] /Rotate 270 /Contents 11 0 R >>").
		Obj(5, "<< /Type /Page /Parent 2 0 R /Rotate -180 /Contents 12 0 R >>").
		Obj(6, "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents [13 0 R 14 0 R] /Resources 21 0 R /Group << /S /Transparency /CS /DeviceRGB >> >>").
		Obj(7, "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 15 0 R /Resources << /Font << /F1 99 0 R /F2 22 0 R >> >> >>").
		Obj(8, "<< /Type /Page /Parent 2 0 R /MediaBox [-100 -100 300 400] /Contents 16 0 R >>").
		Stream(10, "", []byte(text("Rotated 90"))).
		Stream(11, "/Filter /FlateDecode", testdoc.Deflate([]byte(text("Rotated 270")))).
		Stream(12, "/Filter /ASCIIHexDecode", []byte(fmt.Sprintf("%x>", text("Upside down")))).
		Stream(13, "/Filter /FlateDecode", testdoc.Deflate([]byte("q 1 0 0 rg 50 50 100 100 re f Q BT /F1 16 Tf 72 760 Td (Content in "))).
		Stream(14, "", []byte("two streams) Tj ET q 200 0 0 150 72 500 cm /Im1 Do Q q 40 0 0 40 300 300 cm /Im2 Do Q /Fm1 Do")).
		Stream(15, "", []byte("BT /F2 12 Tf 72 700 Td (Font F1 is missing; this one is not) Tj ET")).
		Stream(16, "", []byte("0 0 1 rg -100 -100 100 100 re f BT /F1 12 Tf -50 300 Td (Negative origin) Tj ET")).
		Obj(20, "<< /Font << /F1 22 0 R >> >>").
		Obj(21, "<< /Font << /F1 22 0 R >> /XObject << /Im1 23 0 R /Im2 24 0 R /Fm1 25 0 R >> /ExtGState << /G1 << /CA 1 >> >> >>").
		Obj(22, "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>").
		Stream(23, "/Type /XObject /Subtype /Image /Width 2 /Height 2 /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /FlateDecode",
			testdoc.Deflate([]byte("\xff\x00\x00\x00\xff\x00\x00\x00\xff\xff\xff\x00"))).
		Stream(24, "/Type /XObject /Subtype /Image /Width 2 /Height 1 /BitsPerComponent 8 /ColorSpace [/Indexed /DeviceRGB 1 (\\377\\000\\377\\000\\(\\))]",
			[]byte{0, 1}).
		Stream(25, "/Type /XObject /Subtype /Form /BBox [0 0 595 842] /Matrix [1 0 0 1 0 0] /Resources << /Font << /F9 22 0 R >> >>",
			[]byte("BT /F9 10 Tf 72 200 Td (Inside a form XObject) Tj ET 0 0.6 0 rg 300 100 80 40 re f"))
	return b.Xref("/Root 1 0 R")
}

// imported places pages of src, each on a page of its form's size at the
// origin, and returns the new PDF.
func imported(t testing.TB, src []byte, pages ...int) []byte {
	t.Helper()
	r := open(t, src, Limits{})
	var out bytes.Buffer
	w := NewWriter(&out)
	im := w.Importer(r)
	var c Content
	for _, i := range pages {
		f, err := im.Page(i)
		if err != nil {
			t.Fatalf("page %d: %v", i, err)
		}
		c.Reset()
		c.Form(f.Ref)
		w.AddPage(f.W, f.H, &c)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// writeTemp writes data to a file of the test's temporary folder.
func writeTemp(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestImport imports every page of PDFs made by several producers and
// compares each with its source through other readers: qpdf checks the
// structure, pdftotext must read the same text, and pdftoppm must render
// the same pixels (a few may differ where anti-aliasing falls otherwise).
func TestImport(t *testing.T) {
	gs := testenv.Tool(t, "gs")
	qpdf := testenv.Tool(t, "qpdf")
	dir := t.TempDir()
	ps := filepath.Join(dir, "rich.ps")
	if err := os.WriteFile(ps, testdoc.RichPostScript(), 0o644); err != nil {
		t.Fatal(err)
	}
	gsPDF := filepath.Join(dir, "gs.pdf")
	if out, err := exec.Command(gs, "-q", "-dSAFER", "-dBATCH", "-dNOPAUSE", "-sDEVICE=pdfwrite", "-dAutoRotatePages=/None",
		"-sOutputFile="+gsPDF, ps).CombinedOutput(); err != nil {
		t.Fatalf("gs: %v\n%s", err, out)
	}
	qpdfOut := func(name, src string, args ...string) string {
		out := filepath.Join(dir, name)
		cmd := append(append([]string{"--allow-weak-crypto"}, args...), "--", src, out)
		if b, err := exec.Command(qpdf, cmd...).CombinedOutput(); err != nil {
			t.Fatalf("qpdf %q: %v\n%s", cmd, err, b)
		}
		return out
	}
	ours := writeTemp(t, "ours.pdf", ourPDF(t))
	features := writeTemp(t, "features.pdf", featuresPDF())
	sources := []string{
		ours, gsPDF, features,
		qpdfOut("objstm.pdf", gsPDF, "--object-streams=generate"),
		qpdfOut("features-objstm.pdf", features, "--object-streams=generate"),
		qpdfOut("rotated.pdf", ours, "--rotate=+90:1", "--rotate=+180:2"),
		qpdfOut("rc4.pdf", gsPDF, "--encrypt", "", "owner", "128", "--use-aes=n"),
		qpdfOut("aes128.pdf", features, "--object-streams=generate", "--encrypt", "", "owner", "128", "--use-aes=y"),
		qpdfOut("aes256.pdf", gsPDF, "--encrypt", "", "owner", "256"),
		qpdfOut("ours-aes256.pdf", ours, "--object-streams=generate", "--encrypt", "", "owner", "256"),
	}
	for _, src := range sources {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		r := open(t, data, Limits{})
		pages := make([]int, r.NumPages())
		for i := range pages {
			pages[i] = i
		}
		out := writeTemp(t, "imported-"+filepath.Base(src), imported(t, data, pages...))
		readback.Check(t, out)
		for i := 1; i <= len(pages); i++ {
			want, got := readback.Text(t, src, i), readback.Text(t, out, i)
			if got != want || strings.TrimSpace(want) == "" {
				t.Errorf("%s page %d: text %q, source has %q", filepath.Base(src), i, got, want)
			}
			if n, err := readback.Differ(readback.Render(t, src, i, 36), readback.Render(t, out, i, 36)); err != nil || n > 20 {
				t.Errorf("%s page %d: %d pixels differ from the source's rendering, %v", filepath.Base(src), i, n, err)
			}
		}
	}
}

// TestImportShared: an object used by several pages is copied once, and
// a page asked for twice is placed once.
func TestImportShared(t *testing.T) {
	src := featuresPDF()
	r := open(t, src, Limits{})
	var out bytes.Buffer
	w := NewWriter(&out)
	im := w.Importer(r)
	var c Content
	first := map[int]Ref{}
	for range 3 {
		for i := range r.NumPages() {
			f, err := im.Page(i)
			if err != nil {
				t.Fatal(err)
			}
			if ref, ok := first[i]; ok && ref != f.Ref {
				t.Fatalf("page %d placed again as %d (was %d)", i, f.Ref, ref)
			}
			first[i] = f.Ref
			c.Reset()
			c.Form(f.Ref)
			w.AddPage(f.W, f.H, &c)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(out.Bytes(), []byte("/BaseFont /Helvetica")); n != 1 {
		t.Errorf("the shared font is written %d times", n)
	}
	if n := bytes.Count(out.Bytes(), []byte("/Subtype /Image")); n != 2 {
		t.Errorf("%d images written, want 2", n)
	}
	back := open(t, out.Bytes(), Limits{})
	if back.NumPages() != 3*r.NumPages() {
		t.Errorf("%d pages read back", back.NumPages())
	}
}

// TestImportHostile: pages built to break the copy are placed or refused
// with an error, and either way the writer stays whole: a page placed
// afterwards makes a valid file.
func TestImportHostile(t *testing.T) {
	good := testdoc.OnePagePDF()
	f := func(name string, page string, objs map[int]string, wantErr string) {
		t.Helper()
		b := testdoc.NewPDF().
			Obj(1, "<< /Type /Catalog /Pages 2 0 R >>").
			Obj(2, "<< /Type /Pages /Kids [3 0 R] /Count 1 /MediaBox [0 0 200 200] >>").
			Obj(3, page)
		for n := 4; n < 4+len(objs); n++ {
			b.Obj(n, objs[n])
		}
		data := b.Xref("/Root 1 0 R")
		r := open(t, data, Limits{})
		var out bytes.Buffer
		w := NewWriter(&out)
		_, err := w.Importer(r).page(0)
		if wantErr == "" && err != nil || wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)) {
			t.Errorf("%s: %v; want error %q", name, err, wantErr)
		}
		gf, err := w.Importer(open(t, good, Limits{})).page(0)
		if err != nil {
			t.Fatal(err)
		}
		var c Content
		c.Form(gf.Ref)
		w.AddPage(gf.W, gf.H, &c)
		if err := w.Close(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if _, err := Open(bytes.NewReader(out.Bytes()), int64(out.Len()), Limits{}); err != nil {
			t.Errorf("%s: the output does not read back: %v", name, err)
		}
	}
	f("no contents", "<< /Type /Page >>", nil, "")
	f("contents missing", "<< /Type /Page /Contents 9 0 R >>", nil, "")
	f("contents not a stream", "<< /Type /Page /Contents 4 0 R >>", map[int]string{4: "(text)"}, "")
	f("resources in a cycle", "<< /Type /Page /Resources 4 0 R >>", map[int]string{4: "<< /XObject << /X 5 0 R >> >>", 5: "<< /Next 4 0 R /Self 5 0 R >>"}, "")
	f("resources reaching the page tree", "<< /Type /Page /Resources << /X 1 0 R /P 3 0 R /Q 2 0 R >> >>", nil, "")
	f("resources that are a stream", "<< /Type /Page /Resources 4 0 R >>", map[int]string{4: "<< /Length 3 >> stream\nabc\nendstream"}, "")
	f("resources with a missing object", "<< /Type /Page /Resources << /Font << /F1 77 0 R >> >> >>", nil, "")
	f("content array with an unsupported filter", "<< /Type /Page /Contents [4 0 R 4 0 R] >>",
		map[int]string{4: "<< /Filter /LZWDecode /Length 3 >> stream\nabc\nendstream"}, "filter /LZWDecode is not supported")
	f("content array with corrupt Flate data", "<< /Type /Page /Contents [4 0 R 4 0 R] >>",
		map[int]string{4: "<< /Filter /FlateDecode /Length 4 >> stream\n\x78\x9c\xff\xff\nendstream"}, "corrupt FlateDecode")
	f("content stream with a lying length", "<< /Type /Page /Contents 4 0 R >>",
		map[int]string{4: "<< /Length 99999999 >> stream\nBT ET\nendstream"}, "")
	f("names and reals to escape", "<< /Type /Page /Resources << /A#20B 99999999999999999999999 /C [-.5 0.0000001 5.] /D#2F#28 (\\)) >> >>", nil, "")
}

// TestImportDeadline: a page that runs out of time is refused, the
// objects it had numbered are written as null and forgotten, and the same
// page placed with time enough is whole.
func TestImportDeadline(t *testing.T) {
	b := testdoc.NewPDF().
		Obj(1, "<< /Type /Catalog /Pages 2 0 R >>").
		Obj(2, "<< /Type /Pages /Kids [3 0 R] /Count 1 /MediaBox [0 0 200 200] >>")
	var res strings.Builder
	for n := 10; n < 1010; n++ {
		fmt.Fprintf(&res, "/R%d %d 0 R ", n, n)
		b.Obj(n, fmt.Sprintf("<< /N %d >>", n))
	}
	b.Obj(3, "<< /Type /Page /Resources << "+res.String()+">> >>")
	data := b.Xref("/Root 1 0 R")
	r := open(t, data, Limits{})
	var out bytes.Buffer
	w := NewWriter(&out)
	im := w.Importer(r)
	r.lim.Timeout = 1 // a nanosecond: past before the first check
	if _, err := im.page(0); !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "took longer") {
		t.Fatalf("out of time: %v", err)
	}
	r.lim.Timeout = DefaultTimeout
	f, err := im.page(0)
	if err != nil {
		t.Fatal(err)
	}
	var c Content
	c.Form(f.Ref)
	w.AddPage(f.W, f.H, &c)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(out.Bytes(), []byte("<< /N ")); n != 1000 {
		t.Errorf("%d resources written whole, want 1000", n)
	}
}

// FuzzImport: any bytes as a PDF; every page of one that opens is placed
// without panicking, and what is written reads back with its pages.
func FuzzImport(f *testing.F) {
	for _, seed := range [][]byte{testdoc.OnePagePDF(), testdoc.ThreePagePDF(), testdoc.XrefStreamPDF(), testdoc.IncrementalPDF(), featuresPDF(), ourPDF(f)} {
		f.Add(seed)
	}
	for _, name := range []string{"o40", "o128aes", "o256"} {
		b, err := os.ReadFile(filepath.Join("testdata", "encrypted", name+".pdf"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	lim := Limits{MaxPages: 50, MaxObjects: 10000, MaxDepth: 32}
	testenv.LimitMinimization(f, "2000x")
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Open(bytes.NewReader(data), int64(len(data)), lim)
		if err != nil {
			return
		}
		var out bytes.Buffer
		w := NewWriter(&out)
		im := w.Importer(r)
		var c Content
		placed := 0
		for i := range r.NumPages() {
			f, err := im.page(i)
			if err != nil {
				continue
			}
			if !(f.W > 0 && f.H > 0) {
				t.Fatalf("page %d: form of %v x %v", i, f.W, f.H)
			}
			c.Reset()
			c.Form(f.Ref)
			w.AddPage(f.W, f.H, &c)
			placed++
		}
		if placed == 0 {
			return
		}
		if err := w.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		back, err := Open(bytes.NewReader(out.Bytes()), int64(out.Len()), Limits{})
		if err != nil || back.NumPages() != placed {
			t.Fatalf("the copy of %d pages reads back as %v, %v", placed, back, err)
		}
	})
}

// BenchmarkImport places every page of a 1,000-page statement run written
// by Writer (text, a rule, shared fonts) on a new page.
func BenchmarkImport(b *testing.B) {
	var src bytes.Buffer
	w := NewWriter(&src)
	var c Content
	for i := range 1000 {
		c.Reset()
		c.Text(HelveticaBold, 14, 72, 780, fmt.Sprintf("Statement %d", i))
		for l := range 40 {
			c.Text(Helvetica, 9, 72, 700-float64(l)*14, fmt.Sprintf("%02d/05  Purchase at shop number %d       %8.2f", l+1, i*40+l, float64(l)*3.7))
		}
		c.Line(72, 100, 520, 100, 0.5)
		w.AddPage(595.28, 841.89, &c)
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	data := src.Bytes()
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for range b.N {
		r, err := Open(bytes.NewReader(data), int64(len(data)), Limits{})
		if err != nil {
			b.Fatal(err)
		}
		w := NewWriter(io.Discard)
		im := w.Importer(r)
		for i := range r.NumPages() {
			f, err := im.Page(i)
			if err != nil {
				b.Fatal(err)
			}
			c.Reset()
			c.Form(f.Ref)
			w.AddPage(595.28, 841.89, &c)
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "pages/s")
}
