package pdf

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/lodge-mail/lodge/internal/pagetext"
	"github.com/lodge-mail/lodge/internal/testdoc"
)

// tobj is an object of a test PDF: a dictionary, or a stream.
type tobj struct {
	body, data string
	stream     bool
}

func dictObj(body string) tobj         { return tobj{body: body} }
func streamObj(dict, data string) tobj { return tobj{body: dict, data: data, stream: true} }

// textDoc is a one-page PDF: the page's dictionary holds page (its box,
// resources ...), its content is content, and objs are objects 5, 6 ...
func textDoc(page, content string, objs ...tobj) []byte {
	b := testdoc.NewPDF()
	b.Obj(1, "<< /Type /Catalog /Pages 2 0 R >>")
	b.Obj(2, "<< /Type /Pages /Kids [3 0 R] /Count 1 >>")
	b.Obj(3, "<< /Type /Page /Parent 2 0 R /Contents 4 0 R "+page+" >>")
	b.Stream(4, "", []byte(content))
	for i, o := range objs {
		if o.stream {
			b.Stream(5+i, o.body, []byte(o.data))
		} else {
			b.Obj(5+i, o.body)
		}
	}
	return b.Xref("/Root 1 0 R")
}

const (
	letterPage = "/MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >>"
	helvetica  = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
)

// ch is a character of the expected text: upright, 10 pt, visible
// unless changed.
func ch(text string, x0, y0, x1, y1 float64) pagetext.Char {
	return pagetext.Char{Text: text, X0: x0, Y0: y0, X1: x1, Y1: y1, Size: 10}
}

func sized(c pagetext.Char, size float64, dir int) pagetext.Char {
	c.Size, c.Dir = size, dir
	return c
}

func hidden(c pagetext.Char) pagetext.Char {
	c.Invisible = true
	return c
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-3 }

func sameChar(a, b pagetext.Char) bool {
	return a.Text == b.Text && near(a.X0, b.X0) && near(a.Y0, b.Y0) && near(a.X1, b.X1) && near(a.Y1, b.Y1) &&
		near(a.Size, b.Size) && a.Dir == b.Dir && a.Invisible == b.Invisible
}

func fmtChars(cs []pagetext.Char) string {
	var b strings.Builder
	for _, c := range cs {
		fmt.Fprintf(&b, "\n\t%q [%.3f %.3f %.3f %.3f] size %.3f dir %d inv %v", c.Text, c.X0, c.Y0, c.X1, c.Y1, c.Size, c.Dir, c.Invisible)
	}
	return b.String()
}

// readText reads page 0 of data.
func readText(t *testing.T, data []byte, zone *pagetext.Rect) *pagetext.Page {
	t.Helper()
	r := open(t, data, Limits{})
	var p pagetext.Page
	if err := r.pageText(0, zone, &p); err != nil {
		t.Fatalf("PageText: %v", err)
	}
	return &p
}

// TestPageTextOperators: the text and graphics state operators place
// every character where a viewer draws it (Helvetica's widths and
// Adobe's ascent 718, descent 207; the page is 792 high, so a baseline at
// y = 700 is 92 from the top).
func TestPageTextOperators(t *testing.T) {
	f := func(name, content string, want ...pagetext.Char) {
		t.Helper()
		p := readText(t, textDoc(letterPage, content, dictObj(helvetica)), nil)
		if len(p.Chars) != len(want) {
			t.Errorf("%s: %d characters, want %d:%s", name, len(p.Chars), len(want), fmtChars(p.Chars))
			return
		}
		for i := range want {
			if !sameChar(p.Chars[i], want[i]) {
				t.Errorf("%s: character %d is%s\nwant%s", name, i, fmtChars(p.Chars[i:i+1]), fmtChars(want[i:i+1]))
			}
		}
	}
	f("Tj", "BT /F1 12 Tf 100 692 Td (Hi) Tj ET",
		sized(ch("H", 100, 91.384, 108.664, 102.484), 12, 0), sized(ch("i", 108.664, 91.384, 111.328, 102.484), 12, 0))
	f("TJ moves back by thousandths of the size", "BT /F1 10 Tf 100 700 Td [(A) -500 (B)] TJ ET",
		ch("A", 100, 84.82, 106.67, 94.07), ch("B", 111.67, 84.82, 118.34, 94.07))
	f("Tc, Tw on the space only, Tz", "BT /F1 10 Tf 2 Tc 5 Tw 50 Tz 100 700 Td (A B) Tj ET",
		ch("A", 100, 84.82, 103.335, 94.07), ch(" ", 104.335, 84.82, 105.725, 94.07), ch("B", 109.225, 84.82, 112.56, 94.07))
	f("Ts raises", "BT /F1 10 Tf 5 Ts 100 700 Td (A) Tj ET", ch("A", 100, 79.82, 106.67, 89.07))
	f("TL, T*, ' and \"", "BT /F1 10 Tf 14 TL 100 700 Td (A) Tj T* (B) Tj (C) ' 1 2 (D) \" (E) Tj ET",
		ch("A", 100, 84.82, 106.67, 94.07), ch("B", 100, 98.82, 106.67, 108.07), ch("C", 100, 112.82, 107.22, 122.07),
		ch("D", 100, 126.82, 107.22, 136.07), ch("E", 109.22, 126.82, 115.89, 136.07))
	f("TD sets the leading", "BT /F1 10 Tf 100 700 Td (A) Tj 0 -20 TD (B) Tj T* (C) Tj ET",
		ch("A", 100, 84.82, 106.67, 94.07), ch("B", 100, 104.82, 106.67, 114.07), ch("C", 100, 124.82, 107.22, 134.07))
	f("Tm scales", "BT /F1 1 Tf 10 0 0 20 100 700 Tm (A) Tj ET", sized(ch("A", 100, 77.64, 106.67, 96.14), 20, 0))
	f("cm, q and Q", "q 2 0 0 2 0 0 cm BT /F1 10 Tf 50 350 Td (A) Tj ET Q BT /F1 10 Tf 100 700 Td (A) Tj ET",
		sized(ch("A", 100, 77.64, 113.34, 96.14), 20, 0), ch("A", 100, 84.82, 106.67, 94.07))
	f("text state is saved by q", "BT /F1 10 Tf 100 700 Td q 30 Tc /F1 20 Tf Q (AA) Tj ET",
		ch("A", 100, 84.82, 106.67, 94.07), ch("A", 106.67, 84.82, 113.34, 94.07))
	f("BT resets the text matrix", "BT /F1 10 Tf 100 700 Td ET BT 0 -100 Td (A) Tj ET", ch("A", 0, 884.82, 6.67, 894.07))
	f("bottom to top", "BT /F1 10 Tf 0 1 -1 0 100 100 Tm (A) Tj ET", sized(ch("A", 92.82, 685.33, 102.07, 692), 10, 3))
	f("top to bottom", "BT /F1 10 Tf 0 -1 1 0 100 100 Tm (A) Tj ET", sized(ch("A", 97.93, 692, 107.18, 698.67), 10, 1))
	f("upside down", "BT /F1 10 Tf -1 0 0 -1 300 300 Tm (A) Tj ET", sized(ch("A", 293.33, 489.93, 300, 499.18), 10, 2))
	f("marked content is ignored", "/Span <</ActualText (X) /Nested <</A [1 2 (x)]>> >> BDC BT /F1 10 Tf 100 700 Td (A) Tj ET EMC /P <</MCID 0>> BDC EMC /Tag MP",
		ch("A", 100, 84.82, 106.67, 94.07))
	f("a missing font: standard encoding, 500/1000 wide", "BT /F9 10 Tf 100 700 Td (AB) Tj ET",
		ch("A", 100, 82.5, 105, 95.5), ch("B", 105, 82.5, 110, 95.5))
	f("operands of unknown operators are dropped", "BT /F1 10 Tf 1 2 3 foo 100 700 Td (A) Tj ET", ch("A", 100, 84.82, 106.67, 94.07))
	f("escapes in strings", `BT /F1 10 Tf 100 700 Td (\101\(\)\\\n) Tj ET`,
		ch("A", 100, 84.82, 106.67, 94.07), ch("(", 106.67, 84.82, 110, 94.07), ch(")", 110, 84.82, 113.33, 94.07),
		ch("\\", 113.33, 84.82, 116.11, 94.07), ch("\uFFFD", 116.11, 84.82, 116.11, 94.07))
	f("hex strings", "BT /F1 10 Tf 100 700 Td <41 4>Tj ET", ch("A", 100, 84.82, 106.67, 94.07), ch("@", 106.67, 84.82, 116.82, 94.07))
}

// TestPageTextVisibility: text render modes 3 and 7, white paint (grey,
// RGB, CMYK, through cs/sc and an ICC space) and alpha 0 are Invisible.
func TestPageTextVisibility(t *testing.T) {
	page := "/MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> /ColorSpace << /CS1 [/ICCBased 6 0 R] /CS2 /DeviceGray >> " +
		"/ExtGState << /Clear << /ca 0 >> /Opaque << /ca 1 /CA 1 >> /NoStroke 7 0 R >> >>"
	content := "BT /F1 10 Tf 100 700 Td (a) Tj 3 Tr (b) Tj 0 Tr 1 g (c) Tj 0.5 g (d) Tj 1 1 1 rg (e) Tj 0 0 0 0 k (f) Tj " +
		"0 0 0 1 k (g) Tj /DeviceGray cs 1 sc (h) Tj /DeviceRGB cs 1 1 1 scn (i) Tj 0 g 7 Tr (j) Tj 1 Tr 1 G (k) Tj 0 G (l) Tj " +
		"0 Tr /CS1 cs 1 1 1 sc (m) Tj /CS2 cs 1 sc (n) Tj /Pattern cs /P1 scn (o) Tj q 1 g (p) Tj Q (q) Tj 2 Tr 1 g (r) Tj 1 G (s) Tj " +
		"0 g 0 G 0 Tr /Clear gs (t) Tj /Opaque gs (u) Tj 1 Tr /NoStroke gs (v) Tj ET"
	p := readText(t, textDoc(page, content, dictObj(helvetica), streamObj("/N 3", "icc"), dictObj("<< /CA 0 >>")), nil)
	var got, want string
	for _, c := range p.Chars {
		if c.Invisible {
			got += strings.ToUpper(c.Text)
		} else {
			got += c.Text
		}
	}
	want = "aBCdEFgHIJKlMNoPqrSTuV"
	if got != want {
		t.Errorf("visibility (capital: invisible) %s, want %s", got, want)
	}
}

// TestPageTextGeometry: /Rotate, box origins, crop boxes and /UserUnit
// map text to the page as displayed.
func TestPageTextGeometry(t *testing.T) {
	f := func(name, box string, w, h float64, content string, want pagetext.Char) {
		t.Helper()
		p := readText(t, textDoc(box+" /Resources << /Font << /F1 5 0 R >> >>", content, dictObj(helvetica)), nil)
		if p.Width != w || p.Height != h {
			t.Errorf("%s: page %v x %v, want %v x %v", name, p.Width, p.Height, w, h)
		}
		if len(p.Chars) != 1 || !sameChar(p.Chars[0], want) {
			t.Errorf("%s:%s\nwant%s", name, fmtChars(p.Chars), fmtChars([]pagetext.Char{want}))
		}
	}
	const text = "BT /F1 10 Tf 100 700 Td (A) Tj ET"
	f("upright", "/MediaBox [0 0 612 792]", 612, 792, text, ch("A", 100, 84.82, 106.67, 94.07))
	f("Rotate 90", "/MediaBox [0 0 612 792] /Rotate 90", 792, 612, text, sized(ch("A", 697.93, 100, 707.18, 106.67), 10, 1))
	f("Rotate 180", "/MediaBox [0 0 612 792] /Rotate 180", 612, 792, text, sized(ch("A", 505.33, 697.93, 512, 707.18), 10, 2))
	f("Rotate 270", "/MediaBox [0 0 612 792] /Rotate -90", 792, 612, text, sized(ch("A", 84.82, 505.33, 94.07, 512), 10, 3))
	f("media box origin", "/MediaBox [100 200 712 992]", 612, 792, "BT /F1 10 Tf 200 900 Td (A) Tj ET", ch("A", 100, 84.82, 106.67, 94.07))
	f("crop box", "/MediaBox [0 0 612 792] /CropBox [50 100 562 692]", 512, 592, "BT /F1 10 Tf 100 600 Td (A) Tj ET", ch("A", 50, 84.82, 56.67, 94.07))
	f("user unit", "/MediaBox [0 0 306 396] /UserUnit 2", 612, 792, "BT /F1 5 Tf 50 350 Td (A) Tj ET", ch("A", 100, 84.82, 106.67, 94.07))
	f("rotated text on a rotated page reads upright", "/MediaBox [0 0 612 792] /Rotate 90", 792, 612,
		"BT /F1 10 Tf 0 1 -1 0 100 100 Tm (A) Tj ET", ch("A", 100, 92.82, 106.67, 102.07))
}

// TestPageTextXObjects: form XObjects draw in their matrix with their
// resources (or the page's), inside each other, a form drawing itself is
// drawn once; images and inline images give their boxes, and the text
// after an inline image is read whatever its data holds.
func TestPageTextXObjects(t *testing.T) {
	page := "/MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> /XObject << /Fm1 6 0 R /Fm2 7 0 R /Fm3 8 0 R /Im1 9 0 R /Fm4 10 0 R >> >>"
	objs := []tobj{
		dictObj(helvetica),
		streamObj("/Type /XObject /Subtype /Form /BBox [0 0 100 100] /Matrix [1 0 0 1 10 20] /Resources << /Font << /F2 5 0 R >> >>", "BT /F2 10 Tf 0 0 Td (A) Tj ET"),
		streamObj("/Type /XObject /Subtype /Form /BBox [0 0 100 100] /Resources << /Font << /F1 5 0 R >> /XObject << /Fm2 7 0 R >> >>", "BT /F1 10 Tf 300 300 Td (S) Tj ET /Fm2 Do"),
		streamObj("/Type /XObject /Subtype /Form /BBox [0 0 100 100] /Matrix [2 0 0 2 0 0] /Resources << /XObject << /X 6 0 R >> >>", "/X Do"),
		streamObj("/Type /XObject /Subtype /Image /Width 1 /Height 1 /ColorSpace /DeviceGray /BitsPerComponent 8", "\xff"),
		streamObj("/Type /XObject /Subtype /Form /BBox [0 0 100 100]", "BT /F1 10 Tf 400 400 Td (I) Tj ET"),
	}
	f := func(name, content string, wantText string, want []pagetext.Char, images ...pagetext.Rect) {
		t.Helper()
		p := readText(t, textDoc(page, content, objs...), nil)
		var got string
		for _, c := range p.Chars {
			got += c.Text
		}
		if got != wantText {
			t.Errorf("%s: text %q, want %q", name, got, wantText)
		}
		for i := range want {
			if i >= len(p.Chars) || !sameChar(p.Chars[i], want[i]) {
				t.Errorf("%s: characters%s\nwant%s", name, fmtChars(p.Chars), fmtChars(want))
				break
			}
		}
		if fmt.Sprint(p.Images) != fmt.Sprint(images) {
			t.Errorf("%s: images %v, want %v", name, p.Images, images)
		}
	}
	f("form in its matrix and the CTM", "q 1 0 0 1 100 600 cm /Fm1 Do Q /Fm1 Do", "AA",
		[]pagetext.Char{ch("A", 110, 164.82, 116.67, 174.07), ch("A", 10, 764.82, 16.67, 774.07)})
	f("a form drawing itself is drawn once", "/Fm2 Do", "S", nil)
	f("forms inside forms", "/Fm3 Do", "A", []pagetext.Char{sized(ch("A", 20, 737.64, 33.34, 756.14), 20, 0)})
	f("a form without resources uses the page's", "/Fm4 Do", "I", nil)
	f("a form does not leak its state", "BT /F1 10 Tf 100 700 Td (A) Tj ET q 1 0 0 1 5 5 cm /Fm1 Do BT /F1 10 Tf 100 700 Td (A) Tj ET Q BT /F1 10 Tf 100 700 Td (A) Tj ET",
		"AAAA", []pagetext.Char{ch("A", 100, 84.82, 106.67, 94.07), ch("A", 15, 759.82, 21.67, 769.07), ch("A", 105, 79.82, 111.67, 89.07), ch("A", 100, 84.82, 106.67, 94.07)})
	f("an image is its unit square", "q 100 0 0 50 10 20 cm /Im1 Do Q", "", nil, pagetext.Rect{X0: 10, Y0: 722, X1: 110, Y1: 772})
	f("an inline image of known size holding EI", "q 20 0 0 10 30 40 cm BI /W 5 /H 2 /BPC 8 /CS /G ID x EI (Z)Tj\n EI Q BT /F1 10 Tf 100 700 Td (A) Tj ET",
		"A", []pagetext.Char{ch("A", 100, 84.82, 106.67, 94.07)}, pagetext.Rect{X0: 30, Y0: 742, X1: 50, Y1: 752})
	f("a filtered inline image", "BI /W 2 /H 2 /BPC 8 /CS /G /F /AHx ID 00FF00FF> EI BT /F1 10 Tf 100 700 Td (A) Tj ET",
		"A", nil, pagetext.Rect{X0: 0, Y0: 791, X1: 1, Y1: 792})
	f("an inline image with its length", "BI /W 100 /H 100 /BPC 8 /CS /RGB /F [/Fl] /L 10 ID 1 EI (Z)Tj EI BT /F1 10 Tf 100 700 Td (A) Tj ET",
		"A", nil, pagetext.Rect{X0: 0, Y0: 791, X1: 1, Y1: 792})
	f("an image mask", "BI /IM true /W 16 /H 1 ID \xffEI EI BT /F1 10 Tf 100 700 Td (A) Tj ET",
		"A", nil, pagetext.Rect{X0: 0, Y0: 791, X1: 1, Y1: 792})
	f("an inline image without EI takes the rest", "BT /F1 10 Tf 100 700 Td (A) Tj ET BI /W 1 /H 1 ID (B) Tj",
		"A", nil, pagetext.Rect{X0: 0, Y0: 791, X1: 1, Y1: 792})
}

// TestPageTextZone: with a zone, only the characters whose centre is in
// it, and the images that overlap it, are kept.
func TestPageTextZone(t *testing.T) {
	page := "/MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> /XObject << /Im1 6 0 R >> >>"
	content := "BT /F1 10 Tf 100 700 Td (AB) Tj 0 -100 Td (C) Tj ET q 10 0 0 10 0 700 cm /Im1 Do Q q 10 0 0 10 103 600 cm /Im1 Do Q"
	data := textDoc(page, content, dictObj(helvetica), streamObj("/Subtype /Image /Width 1 /Height 1 /BitsPerComponent 8 /ColorSpace /DeviceGray", "\x00"))
	f := func(zone pagetext.Rect, text string, images int) {
		t.Helper()
		p := readText(t, data, &zone)
		var got string
		for _, c := range p.Chars {
			got += c.Text
		}
		if got != text || len(p.Images) != images {
			t.Errorf("zone %v: %q and %d images, want %q and %d", zone, got, len(p.Images), text, images)
		}
	}
	f(pagetext.Rect{X0: 0, Y0: 80, X1: 612, Y1: 100}, "AB", 1)
	f(pagetext.Rect{X0: 0, Y0: 80, X1: 104, Y1: 100}, "A", 1)      // A's centre is at x 103.3
	f(pagetext.Rect{X0: 104, Y0: 80, X1: 612, Y1: 100}, "B", 0)    // B's at 110
	f(pagetext.Rect{X0: 0, Y0: 170, X1: 200, Y1: 200}, "C", 1)     // the image at 103, 182 to 192
	f(pagetext.Rect{X0: 300, Y0: 0, X1: 612, Y1: 792}, "", 0)      // nothing
	f(pagetext.Rect{X0: 0, Y0: 0, X1: 612, Y1: 792}, "ABC", 2)     // all
	f(pagetext.Rect{X0: 0, Y0: 93, X1: 612, Y1: 150}, "", 0)       // the line's edge is not its centre
	f(pagetext.Rect{X0: 109.9, Y0: 89, X1: 110.1, Y1: 90}, "B", 0) // a point around a centre
}
