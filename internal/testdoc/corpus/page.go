package corpus

// A page as the layouts describe it and the producers draw it: the same
// description drawn by two producers gives two copies of one document.

// font is a logical font; each producer maps it to one it has.
type font int

const (
	sans        font = iota // Helvetica; Liberation Sans where fonts are embedded
	sansBold                // Helvetica-Bold; Liberation Sans Bold
	serif                   // Times-Roman; Liberation Serif
	mono                    // Courier; Liberation Mono
	dejavu                  // DejaVu Sans (TrueType producers only)
	dejavuSerif             // DejaVu Serif (TrueType producers only)
	cipher                  // a Type 3 font whose glyphs map to no text (PDFBuilder only)
	fontCount
)

var fontNames = [fontCount]string{"Helvetica", "Helvetica-Bold", "Times-Roman", "Courier", "DejaVu Sans", "DejaVu Serif", "Type3 cipher"}

// ink is how text is painted.
type ink int

const (
	black     ink = iota
	white         // white fill: hidden on white paper
	invisible     // neither filled nor stroked: PDF text render mode 3; transparent in XPS
	grey
)

// text is one line of text: its baseline origin in points from the
// displayed page's top-left corner.
type text struct {
	X, Y float64
	Font font
	Size float64
	S    string
	Ink  ink
	// Form: 0 page content; 1 inside a form XObject (in XPS a Canvas
	// with a translation); 2 inside a form nested in a form whose matrix
	// scales by two, the text set at half the size and coordinates in it
	// (in XPS nested Canvas elements), so that it lands where 0 would.
	Form int
}

// image names the images the layouts draw.
type image int

const (
	noImage image = iota
	logoImage
	scanImage
)

// box is a filled rectangle or an image, in points from the displayed
// page's top-left corner.
type box struct {
	X, Y, W, H float64
	Image      image
	Grey       float64 // fill grey level of a rectangle (0 black, 1 white)
}

// page is one displayed page.
type page struct {
	W, H float64 // displayed size in points
	// Rotate: the PDF page is stored turned by this many degrees
	// (/Rotate) and drawn so that it displays upright (PDFBuilder only).
	Rotate int
	Boxes  []box
	Texts  []text
}

// Page sizes in points.
const (
	a4W = 210 * MM
	a4H = 297 * MM
)
