// Package pagetext is text with positions on a page, as the document
// readers give it to the auto processor (internal/pdf for PDF, and
// PostScript through Ghostscript; internal/xps for XPS), and the grouping
// of those characters into lines inside an area.
//
// Coordinates are PDF points (1/72 inch) from the top-left corner of the
// page as it is displayed: after a PDF page's /Rotate, x to the right and y
// down. A reader reports every character it draws, visible or not (white
// text, text render mode 3, text under an image, clipped text): the auto
// processor reads hidden reference lines on purpose.
//
// Nothing here does I/O; the readers bound their own work.
package pagetext

// Char is one character drawn on a page: the Unicode text of one glyph
// (usually one rune; a ligature glyph gives "fi", "ffl"; a glyph with no
// known text gives U+FFFD), and its box. X0 is where the glyph starts
// along the baseline and X1 where its advance ends (X0 < X1 for text
// written left to right in the page's upright orientation; text drawn
// rotated has its box rotated into page space, its Dir telling how).
// Y0 is the top of the em box (ascent) and Y1 the baseline's bottom
// (descent): Y0 < Y1. For rotated text the box is the page-space
// rectangle around the glyph's, so X0 <= X1 and Y0 <= Y1 always.
type Char struct {
	Text           string
	X0, Y0, X1, Y1 float64
	// Size is the glyph's em size on the page, in points: the font size
	// scaled by the text and current transformation matrices.
	Size float64
	// Dir is the writing direction on the displayed page, in quarter
	// turns clockwise: 0 upright (left to right), 1 top to bottom, 2
	// upside down, 3 bottom to top. Text at other angles takes the
	// nearest quarter.
	Dir int
	// Invisible: drawn with text render mode 3 (neither fill nor stroke)
	// or 7 (clip only), in white, or fully transparent. Such text still
	// counts (see the package doc).
	Invisible bool
}

// Rect is an area of a page in points from its top-left corner.
type Rect struct{ X0, Y0, X1, Y1 float64 }

// Contains reports whether the point lies inside r.
func (r Rect) Contains(x, y float64) bool { return x >= r.X0 && x <= r.X1 && y >= r.Y0 && y <= r.Y1 }

// Intersects reports whether r and o overlap.
func (r Rect) Intersects(o Rect) bool {
	return r.X0 < o.X1 && o.X0 < r.X1 && r.Y0 < o.Y1 && o.Y0 < r.Y1
}

// Page is what a reader found on one page.
type Page struct {
	// Width and Height of the page as displayed, in points.
	Width, Height float64
	Chars         []Char
	// Images are the boxes of the raster images drawn on the page (image
	// XObjects, inline images; in XPS, ImageBrush fills), in page space:
	// a window that shows an image and no text is a scan.
	Images []Rect
}

// Reset empties p for reuse, keeping its slices' memory.
func (p *Page) Reset() {
	p.Width, p.Height = 0, 0
	p.Chars = p.Chars[:0]
	p.Images = p.Images[:0]
}
