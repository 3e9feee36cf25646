// Package mailpdf writes the PDFs customers mail, with internal/pdf's
// Writer, for the tests and benchmarks of production: letters whose first
// page carries an address in the envelope window, statement runs of any
// length (streamed: a 20,000-page run costs no memory), letterheads, and
// pages in colour, landscape or other paper sizes. (internal/testdoc
// writes small documents without internal/pdf, whose own tests use it.)
package mailpdf

import (
	"fmt"
	"io"

	"github.com/lodge-mail/lodge/internal/pdf"
)

// Page sizes in points.
const (
	mm       = 72 / 25.4
	A4W, A4H = 210 * mm, 297 * mm
	LetterW  = 612.0 // US Letter
	LetterH  = 792.0
)

// Where an address is set: inside the default DL and C4 windows of
// package production (20 mm from the left, 50 mm from the top, 95 mm
// wide), 5 mm in.
const (
	AddressX   = 25 * mm
	AddressTop = 55 * mm
)

// Page is one page of a document.
type Page struct {
	// Address is set in the envelope window (nothing there when empty).
	Address []string
	// Text is a line of body text, below the window.
	Text string
	// W and H are the page's size in points (0: A4).
	W, H float64
	// Colour paints a red band along the page's top edge and a blue
	// square in its middle.
	Colour bool
	// Black paints a black square at the page's top right, 15 mm in
	// (where Letterhead has its band: the page's ink over the
	// letterhead's).
	Black bool
}

// Write writes a document of n pages, page(i) giving each.
func Write(w io.Writer, n int, page func(i int) Page) error {
	pw := pdf.NewWriter(w)
	var c pdf.Content
	for i := range n {
		p := page(i)
		if p.W == 0 {
			p.W, p.H = A4W, A4H
		}
		c.Reset()
		if p.Colour {
			c.RGB(0.85, 0.1, 0.1)
			c.Rect(0, p.H-20*mm, p.W, 20*mm)
			c.Fill()
			c.RGB(0.1, 0.2, 0.85)
			c.Rect(p.W/2-20*mm, p.H/2-20*mm, 40*mm, 40*mm)
			c.Fill()
			c.Gray(0)
		}
		if p.Black {
			c.Gray(0)
			c.Rect(p.W-40*mm, p.H-30*mm, 25*mm, 15*mm)
			c.Fill()
		}
		y := p.H - AddressTop
		for _, line := range p.Address {
			c.Text(pdf.Helvetica, 10, AddressX, y, line)
			y -= 12.5
		}
		if p.Text != "" {
			c.Text(pdf.Helvetica, 10, AddressX, p.H/2-30*mm, p.Text)
		}
		pw.AddPage(p.W, p.H, &c)
	}
	return pw.Close()
}

// Pages writes a document of the pages given.
func Pages(w io.Writer, pages ...Page) error {
	return Write(w, len(pages), func(i int) Page { return pages[i] })
}

// Statement writes a statement run: letters letters of pagesPer pages,
// each letter's first page addressed (Address(i)), every page saying
// which letter and page it is ("Letter 7 page 2 of 2").
func Statement(w io.Writer, letters, pagesPer int) error {
	return Write(w, letters*pagesPer, func(i int) Page {
		l, p := i/pagesPer, i%pagesPer
		pg := Page{Text: fmt.Sprintf("Letter %d page %d of %d", l, p+1, pagesPer)}
		if p == 0 {
			pg.Address = Address(l)
		}
		return pg
	})
}

// Address returns a made-up Australian address for letter i.
func Address(i int) []string {
	states := []struct{ suburb, state, postcode string }{
		{"SYDNEY", "NSW", "2000"}, {"ST KILDA", "VIC", "3182"}, {"HOBART", "TAS", "7000"},
		{"DARWIN", "NT", "0800"}, {"PERTH", "WA", "6000"}, {"ADELAIDE", "SA", "5000"},
	}
	s := states[i%len(states)]
	return []string{fmt.Sprintf("Customer %d", i), fmt.Sprintf("%d Example St", 1+i%250), s.suburb + " " + s.state + " " + s.postcode}
}

// Letterhead colours and areas: a band across the top (its colour
// LetterheadRGB, 8-bit) and a footer line of text.
var LetterheadRGB = [3]uint8{0x1a, 0x66, 0x33}

// Letterhead writes a one-page A4 letterhead: a green band 30 mm high
// across the top and the sender's name in it, a footer line.
func Letterhead(w io.Writer) error {
	pw := pdf.NewWriter(w)
	var c pdf.Content
	c.RGB(float64(LetterheadRGB[0])/255, float64(LetterheadRGB[1])/255, float64(LetterheadRGB[2])/255)
	c.Rect(0, A4H-30*mm, A4W, 30*mm)
	c.Fill()
	c.Gray(1)
	c.Text(pdf.HelveticaBold, 16, 20*mm, A4H-18*mm, "Example Utilities Pty Ltd")
	c.Gray(0)
	c.Text(pdf.Helvetica, 8, 20*mm, 12*mm, "Example Utilities Pty Ltd - ABN 00 000 000 000 - 1 Sample Rd, SYDNEY NSW 2000")
	pw.AddPage(A4W, A4H, &c)
	return pw.Close()
}
