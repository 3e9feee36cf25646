package xps

import (
	"bytes"
	"fmt"
	"html"
	"image"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/lodge-mail/lodge/internal/pagetext"
	"github.com/lodge-mail/lodge/internal/testenv"
)

// TestSecondReader: what the Writer writes opens in libgxps (xpstopdf),
// and poppler's pdftotext finds on the PDF the same words at the same
// places as PageText (within 1 pt): upright, rotated a quarter, half and
// three quarters, scaled, sized from the font's hmtx (no advances in
// Indices, and no Indices at all), white, in OpenXPS, in three fonts;
// and an image where PageText says it is.
func TestSecondReader(t *testing.T) {
	xpstopdf := testenv.Tool(t, "xpstopdf")
	pdftotext := testenv.Tool(t, "pdftotext")
	sans, serif, mono := dejaVu(t, "DejaVuSans.ttf"), dejaVu(t, "DejaVuSerif.ttf"), dejaVu(t, "DejaVuSansMono-Bold.ttf")
	pages := func(w *Writer) {
		p := w.Page(595.28, 841.89)
		p.Text(72, 100, 12, sans, "Mr Alan Smith", TextOptions{})
		p.Text(72, 114, 12, serif, "3/72 Charles Street", TextOptions{})
		p.Text(72, 128, 12, mono, "PARRAMATTA NSW 2150", TextOptions{})
		p.Text(72, 150, 9, sans, "ref:INV-10042", TextOptions{Colour: "#FFFFFFFF"})
		p.Text(72, 200, 10, sans, "hmtx advances only", TextOptions{NoAdvances: true})
		p.Text(72, 220, 10, serif, "no Indices at all", TextOptions{NoIndices: true})
		p.Text(100, 300, 10, sans, "scaled twice", TextOptions{Transform: &Matrix{A: 2, D: 2, E: -100, F: -300}})
		c := p.Canvas(Matrix{A: 0, B: 1, C: -1, D: 0, E: 500, F: 400})
		c.Text(0, 0, 11, sans, "down the page", TextOptions{})
		c = p.Canvas(Matrix{A: -1, D: -1, E: 500, F: 700})
		c.Text(0, 0, 11, sans, "upside down", TextOptions{})
		c = p.Canvas(Matrix{A: 0, B: -1, C: 1, D: 0, E: 60, F: 800})
		c.Canvas(Matrix{A: 1, D: 1, E: 10}).Text(0, 0, 11, serif, "up the margin", TextOptions{})
		p = w.Page(841.89, 595.28)
		p.Text(50, 60, 14, serif, "Landscape page two", TextOptions{})
		p.Image(logo, redPNG(t))
	}
	for _, openXPS := range []bool{false, true} {
		t.Run(fmt.Sprintf("OpenXPS=%v", openXPS), func(t *testing.T) {
			data := build(t, openXPS, pages)
			dir := t.TempDir()
			in, out := filepath.Join(dir, "a.xps"), filepath.Join(dir, "a.pdf")
			if err := os.WriteFile(in, data, 0o644); err != nil {
				t.Fatal(err)
			}
			if b, err := exec.Command(xpstopdf, in, out).CombinedOutput(); err != nil {
				t.Fatalf("xpstopdf: %v\n%s", err, b)
			}
			for i := 0; i < 2; i++ {
				b, err := exec.Command(pdftotext, "-f", strconv.Itoa(i+1), "-l", strconv.Itoa(i+1), "-bbox-layout", out, "-").Output()
				if err != nil {
					t.Fatalf("pdftotext: %v", err)
				}
				theirs := popplerWords(b)
				ours := words(readPage(t, data, i, nil))
				if len(theirs) != len(ours) {
					t.Fatalf("page %d: poppler has %d words %v, PageText %d %v", i+1, len(theirs), theirs, len(ours), ours)
				}
				if i == 1 {
					checkImage(t, data, out)
				}
				for _, pw := range theirs {
					found := false
					for _, w := range ours {
						if w.text == pw.text && near(w, pw, 1) {
							found = true
						}
					}
					if !found {
						t.Errorf("page %d: poppler's %+v is not among PageText's %+v", i+1, pw, ours)
					}
				}
			}
		})
	}
}

func near(a, b word, tol float64) bool {
	return math.Abs(a.x0-b.x0) <= tol && math.Abs(a.x1-b.x1) <= tol && math.Abs(a.y0-b.y0) <= tol && math.Abs(a.y1-b.y1) <= tol
}

var popplerWord = regexp.MustCompile(`<word xMin="([-0-9.]+)" yMin="([-0-9.]+)" xMax="([-0-9.]+)" yMax="([-0-9.]+)">([^<]*)</word>`)

func popplerWords(b []byte) []word {
	var out []word
	for _, m := range popplerWord.FindAllSubmatch(b, -1) {
		f := func(i int) float64 { v, _ := strconv.ParseFloat(string(m[i]), 64); return v }
		out = append(out, word{text: html.UnescapeString(string(bytes.TrimSpace(m[5]))), x0: f(1), y0: f(2), x1: f(3), y1: f(4)})
	}
	return out
}

// logo is where page two of TestSecondReader draws a red image.
var logo = pagetext.Rect{X0: 400, Y0: 300, X1: 600, Y1: 400}

func redPNG(t *testing.T) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 8, 4))
	for i := range img.Pix {
		img.Pix[i] = []byte{255, 0, 0, 255}[i%4]
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// checkImage: PageText reports the image's box, and poppler paints red
// inside it and nothing outside (page two rendered at 72 dpi: a pixel a
// point).
func checkImage(t *testing.T, data []byte, pdf string) {
	t.Helper()
	p := readPage(t, data, 1, nil)
	if len(p.Images) != 1 || math.Abs(p.Images[0].X0-logo.X0) > 0.01 || math.Abs(p.Images[0].Y0-logo.Y0) > 0.01 ||
		math.Abs(p.Images[0].X1-logo.X1) > 0.01 || math.Abs(p.Images[0].Y1-logo.Y1) > 0.01 {
		t.Errorf("page 2 images %v, want [%v]", p.Images, logo)
	}
	dir := t.TempDir()
	if b, err := exec.Command(testenv.Tool(t, "pdftoppm"), "-r", "72", "-f", "2", "-l", "2", "-png", pdf, filepath.Join(dir, "p")).CombinedOutput(); err != nil {
		t.Fatalf("pdftoppm: %v\n%s", err, b)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "p*.png"))
	if len(files) != 1 {
		t.Fatalf("pdftoppm wrote %v", files)
	}
	f, err := os.Open(files[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	red := func(x, y float64) bool {
		r, g, b, _ := img.At(int(x), int(y)).RGBA()
		return r > 0xE000 && g < 0x2000 && b < 0x2000
	}
	for _, c := range []struct {
		x, y float64
		want bool
	}{
		{logo.X0 + 3, logo.Y0 + 3, true}, {logo.X1 - 3, logo.Y1 - 3, true}, {(logo.X0 + logo.X1) / 2, (logo.Y0 + logo.Y1) / 2, true},
		{logo.X0 - 3, logo.Y0 + 50, false}, {logo.X1 + 3, logo.Y0 + 50, false}, {logo.X0 + 50, logo.Y0 - 3, false}, {logo.X0 + 50, logo.Y1 + 3, false},
	} {
		if red(c.x, c.y) != c.want {
			t.Errorf("pixel (%v, %v) of page 2: red %v, want %v", c.x, c.y, !c.want, c.want)
		}
	}
}
