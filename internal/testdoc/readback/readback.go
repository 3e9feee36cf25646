// Package readback reads PDFs back with other programs than lodge's own
// reader, for tests that must not trust it: qpdf checks the structure,
// poppler's pdfinfo, pdftotext and pdftoppm tell sizes, text and pixels,
// and libdmtx's dmtxread decodes Data Matrix codes. A missing program
// skips the test, or fails it under scripts/test (testenv.Tool). Pages
// are numbered from 1, as the programs number them; coordinates are in
// points from the page's top-left corner, as poppler's are.
package readback

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/lodge-mail/lodge/internal/testenv"
)

func run(t testing.TB, tool string, args ...string) []byte {
	t.Helper()
	out, err := exec.Command(testenv.Tool(t, tool), args...).Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("%s %q: %v\n%s", tool, args, err, msg)
	}
	return out
}

// Check fails the test unless qpdf finds the file free of syntax and
// stream encoding errors.
func Check(t testing.TB, path string) {
	t.Helper()
	out, err := exec.Command(testenv.Tool(t, "qpdf"), "--check", path).CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("No syntax or stream encoding errors")) {
		t.Fatalf("qpdf --check %s: %v\n%s", filepath.Base(path), err, out)
	}
}

// Text returns the text pdftotext reads on a page.
func Text(t testing.TB, path string, page int) string {
	t.Helper()
	p := strconv.Itoa(page)
	return string(run(t, "pdftotext", "-q", "-enc", "UTF-8", "-f", p, "-l", p, path, "-"))
}

// TextIn returns the text pdftotext reads inside an area of a page.
func TextIn(t testing.TB, path string, page int, x, y, w, h float64) string {
	t.Helper()
	p := strconv.Itoa(page)
	return string(run(t, "pdftotext", "-q", "-enc", "UTF-8", "-r", "72", "-f", p, "-l", p,
		"-x", strconv.Itoa(int(x)), "-y", strconv.Itoa(int(y)), "-W", strconv.Itoa(int(w+0.999)), "-H", strconv.Itoa(int(h+0.999)), path, "-"))
}

// Sizes returns the width and height in points of every page, as pdfinfo
// reads them (rotation applied).
func Sizes(t testing.TB, path string) [][2]float64 {
	t.Helper()
	out := string(run(t, "pdfinfo", "-f", "1", "-l", "1000000", path))
	var sizes [][2]float64
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		// Page    1 size:  595.276 x 841.89 pts (A4)
		if len(f) >= 6 && f[0] == "Page" && f[2] == "size:" && f[4] == "x" {
			w, err1 := strconv.ParseFloat(f[3], 64)
			h, err2 := strconv.ParseFloat(f[5], 64)
			if err1 != nil || err2 != nil {
				t.Fatalf("pdfinfo: %q", line)
			}
			sizes = append(sizes, [2]float64{w, h})
		}
	}
	return sizes
}

// Render returns a page as pixels at dpi (its crop box).
func Render(t testing.TB, path string, page, dpi int) image.Image {
	t.Helper()
	p := strconv.Itoa(page)
	return decode(t, run(t, "pdftoppm", "-f", p, "-l", p, "-r", strconv.Itoa(dpi), "-cropbox", "-png", "-singlefile", path))
}

// RenderArea returns an area of a page as pixels at dpi.
func RenderArea(t testing.TB, path string, page, dpi int, x, y, w, h float64) image.Image {
	t.Helper()
	px := func(v float64) string { return strconv.Itoa(int(v * float64(dpi) / 72)) }
	p := strconv.Itoa(page)
	return decode(t, run(t, "pdftoppm", "-f", p, "-l", p, "-r", strconv.Itoa(dpi), "-cropbox",
		"-x", px(x), "-y", px(y), "-W", px(w), "-H", px(h), "-png", "-singlefile", path))
}

func decode(t testing.TB, data []byte) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// Pixel returns the 8-bit colour of a pixel.
func Pixel(img image.Image, x, y int) (r, g, b uint8) {
	b0 := img.Bounds().Min
	cr, cg, cb, _ := img.At(b0.X+x, b0.Y+y).RGBA()
	return uint8(cr >> 8), uint8(cg >> 8), uint8(cb >> 8)
}

// At returns the 8-bit colour at a point of a page rendered at dpi (x, y
// in points from the top-left corner).
func At(img image.Image, dpi int, x, y float64) [3]uint8 {
	r, g, b := Pixel(img, int(x*float64(dpi)/72), int(y*float64(dpi)/72))
	return [3]uint8{r, g, b}
}

// DataMatrix returns the texts of the Data Matrix codes dmtxread finds in
// an image, one a line.
func DataMatrix(t testing.TB, img image.Image) string {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "code-*.png")
	if err != nil {
		t.Fatal(err)
	}
	if err := png.Encode(f, img); err != nil {
		t.Fatal(err)
	}
	f.Close()
	out, err := exec.Command(testenv.Tool(t, "dmtxread"), "-n", "-m", "5000", f.Name()).Output()
	if err != nil {
		return "" // dmtxread exits 1 when it finds nothing
	}
	return strings.TrimSpace(string(out))
}

// Differ returns how many pixels of a and b differ by more than a quarter
// of the range in a channel, or an error when their sizes differ.
func Differ(a, b image.Image) (int, error) {
	if a.Bounds().Size() != b.Bounds().Size() {
		return 0, fmt.Errorf("sizes %v and %v", a.Bounds().Size(), b.Bounds().Size())
	}
	far := func(a, b uint32) bool { return a > b+0x4000 || b > a+0x4000 }
	n := 0
	ab, bb := a.Bounds(), b.Bounds()
	for y := 0; y < ab.Dy(); y++ {
		for x := 0; x < ab.Dx(); x++ {
			r1, g1, b1, _ := a.At(ab.Min.X+x, ab.Min.Y+y).RGBA()
			r2, g2, b2, _ := b.At(bb.Min.X+x, bb.Min.Y+y).RGBA()
			if far(r1, r2) || far(g1, g2) || far(b1, b2) {
				n++
			}
		}
	}
	return n, nil
}
