package pdf

import (
	"slices"
	"strconv"
)

// Font is one of the standard fonts every PDF reader has (no embedding),
// set in WinAnsiEncoding.
type Font uint8

const (
	Helvetica Font = iota
	HelveticaBold
	Courier
	fontCount
)

func (f Font) baseName() string {
	return [...]string{"Helvetica", "Helvetica-Bold", "Courier"}[f]
}

func (f Font) resName() string { return [...]string{"F1", "F2", "F3"}[f] }

func (f Font) widths() *[224]uint16 {
	return [...]*[224]uint16{&helveticaWidths, &helveticaBoldWidths, &courierWidths}[f]
}

// Width returns the width of s set in f at size points.
func (f Font) Width(s string, size float64) float64 {
	ws := f.widths()
	total := 0
	for _, r := range s {
		c := winAnsi(r)
		if c < 32 {
			c = '?'
		}
		total += int(ws[c-32])
	}
	return float64(total) * size / 1000
}

// BlendMode is a PDF blend mode, used through an ExtGState.
type BlendMode uint8

const (
	blendNormal BlendMode = iota
	// Saturation keeps the backdrop's hue and luminosity and takes the
	// source's saturation: a grey painted over a page with it turns the
	// page's colours into greys of the same luminosity.
	Saturation
	blendCount
)

func (m BlendMode) pdfName() string { return [...]string{"Normal", "Saturation"}[m] }
func (m BlendMode) resName() string { return [...]string{"GSN", "GSSat"}[m] }

// Content is a page's content stream and the resources it uses. The zero
// value is an empty page.
type Content struct {
	buf      []byte
	fonts    uint8 // bit f: font f used
	blends   uint8
	xobjects []Ref
}

// Reset empties c for the next page, keeping its memory.
func (c *Content) Reset() {
	c.buf, c.fonts, c.blends, c.xobjects = c.buf[:0], 0, 0, c.xobjects[:0]
}

// Bytes returns the content stream so far.
func (c *Content) Bytes() []byte { return c.buf }

func (c *Content) nums(vs ...float64) {
	for _, v := range vs {
		c.buf = appendNum(c.buf, v)
		c.buf = append(c.buf, ' ')
	}
}

func (c *Content) op(s string) { c.buf = append(append(c.buf, s...), '\n') }

// Save and Restore push and pop the graphics state (q, Q).
func (c *Content) Save()    { c.op("q") }
func (c *Content) Restore() { c.op("Q") }

// Transform concatenates the matrix [a b c d e f] to the current one.
func (c *Content) Transform(a, b, cc, d, e, f float64) {
	c.nums(a, b, cc, d, e, f)
	c.op("cm")
}

// Form draws the form XObject r (from Importer.Page or Writer.Form) in
// the current coordinate system.
func (c *Content) Form(r Ref) {
	if !slices.Contains(c.xobjects, r) {
		c.xobjects = append(c.xobjects, r)
	}
	c.buf = append(c.buf, "/X"...)
	c.buf = strconv.AppendInt(c.buf, int64(r), 10)
	c.op(" Do")
}

// Gray sets the fill colour to a grey level (0 black, 1 white); RGB to a
// colour.
func (c *Content) Gray(g float64) {
	c.nums(g)
	c.op("g")
}

func (c *Content) RGB(r, g, b float64) {
	c.nums(r, g, b)
	c.op("rg")
}

// Rect adds a rectangle to the path; Fill fills the path.
func (c *Content) Rect(x, y, w, h float64) {
	c.nums(x, y, w, h)
	c.op("re")
}

func (c *Content) Fill() { c.op("f") }

// StrokeRect strokes a rectangle with a line width.
func (c *Content) StrokeRect(x, y, w, h, lineWidth float64) {
	c.nums(lineWidth)
	c.op("w")
	c.nums(x, y, w, h)
	c.op("re S")
}

// Line strokes a line.
func (c *Content) Line(x1, y1, x2, y2, lineWidth float64) {
	c.nums(lineWidth)
	c.op("w")
	c.nums(x1, y1)
	c.op("m")
	c.nums(x2, y2)
	c.op("l S")
}

// Blend sets the blend mode of what is painted next (until Restore).
func (c *Content) Blend(m BlendMode) {
	c.blends |= 1 << m
	c.buf = append(c.buf, '/')
	c.buf = append(c.buf, m.resName()...)
	c.op(" gs")
}

// Text sets s in font f at size points with its baseline starting at
// (x, y). Characters outside WinAnsiEncoding are set as '?': callers that
// care check with Encodable first.
func (c *Content) Text(f Font, size, x, y float64, s string) {
	c.fonts |= 1 << f
	c.op("BT")
	c.buf = append(c.buf, '/')
	c.buf = append(c.buf, f.resName()...)
	c.buf = append(c.buf, ' ')
	c.nums(size)
	c.op("Tf")
	c.nums(x, y)
	c.op("Td")
	c.buf = appendPDFString(c.buf, s)
	c.op(" Tj")
	c.op("ET")
}

// appendPDFString writes s as a literal string in WinAnsiEncoding.
func appendPDFString(b []byte, s string) []byte {
	b = append(b, '(')
	for _, r := range s {
		ch := winAnsi(r)
		switch {
		case ch < 32:
			b = append(b, '?')
		case ch == '(' || ch == ')' || ch == '\\':
			b = append(b, '\\', ch)
		case ch >= 128:
			b = append(b, '\\', '0'+ch>>6, '0'+(ch>>3)&7, '0'+ch&7)
		default:
			b = append(b, ch)
		}
	}
	return append(b, ')')
}

// Encodable reports whether every character of s is in WinAnsiEncoding
// (so Text sets it as written).
func Encodable(s string) bool {
	for _, r := range s {
		if winAnsi(r) < 32 {
			return false
		}
	}
	return true
}

// winAnsi maps a character to its WinAnsiEncoding code, or 0 when it has
// none (controls included).
func winAnsi(r rune) byte {
	switch {
	case r >= 32 && r < 127, r >= 0xA0 && r <= 0xFF:
		return byte(r)
	}
	for i, u := range winAnsiHigh {
		if u == r && u != 0 {
			return byte(0x80 + i)
		}
	}
	return 0
}

// winAnsiHigh are the characters of codes 0x80 to 0x9F (0: none).
var winAnsiHigh = [32]rune{
	0x20AC, 0, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0, 0x017D, 0,
	0, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0, 0x017E, 0x0178,
}
