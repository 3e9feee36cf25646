package inspect

import "math"

// Document is what inspecting a document tells: its pages and, where the
// format says, which of them are not A4 (spec section 1: letters are
// printed on A4; other sizes are scaled to it).
type Document struct {
	Pages int `json:"pages"`
	// NotA4 lists the runs of consecutive pages of one size that is not
	// A4, the first MaxSizeRuns of them; NotA4Pages counts every such
	// page, listed or not. A page whose size the document does not tell
	// (a PDF page without /MediaBox) is not counted.
	NotA4      []PageRun `json:"not_a4,omitempty"`
	NotA4Pages int       `json:"not_a4_pages,omitempty"`
}

// PageRun is a run of pages of one size: First to Last, numbered from 0
// (as metadata numbers them), Width × Height in whole millimetres as the
// document gives them (portrait or landscape).
type PageRun struct {
	First  int `json:"first"`
	Last   int `json:"last"`
	Width  int `json:"w"`
	Height int `json:"h"`
}

// MaxSizeRuns bounds Document.NotA4.
const MaxSizeRuns = 32

// sizeTolerance: a page within this many millimetres of A4 in both
// dimensions is A4 (rounding of points and pixels, drivers' margins).
const sizeTolerance = 2.0

var namedSizes = []struct {
	name string
	w, h float64
}{
	{"A4", 210, 297}, {"US Letter", 215.9, 279.4}, {"US Legal", 215.9, 355.6}, {"A3", 297, 420}, {"A5", 148, 210},
	{"B4", 250, 353}, {"B5", 176, 250}, {"Executive", 184.2, 266.7}, {"Tabloid", 279.4, 431.8},
}

// sizeName names a paper size given in millimetres, either way round
// ("" for none of the common ones).
func sizeName(w, h float64) string {
	for _, s := range namedSizes {
		if math.Abs(w-s.w) <= sizeTolerance && math.Abs(h-s.h) <= sizeTolerance ||
			math.Abs(w-s.h) <= sizeTolerance && math.Abs(h-s.w) <= sizeTolerance {
			return s.name
		}
	}
	return ""
}

// SizeName names the run's paper size ("US Letter", "A3" ...), or ""
// when it is none of the common ones.
func (r PageRun) SizeName() string { return sizeName(float64(r.Width), float64(r.Height)) }

// addPage records the size of page i (numbered from 0; pages come in
// order) given in points; sizes that are not finite and positive are
// unknown and ignored.
func (d *Document) addPage(i int, wPt, hPt float64) {
	w, h := math.Abs(wPt)*25.4/72, math.Abs(hPt)*25.4/72
	if !(w > 0 && h > 0 && w < 1e6 && h < 1e6) { // also NaN
		return
	}
	if sizeName(w, h) == "A4" {
		return
	}
	d.NotA4Pages++
	wm, hm := int(math.Round(w)), int(math.Round(h))
	if n := len(d.NotA4); n > 0 {
		last := &d.NotA4[n-1]
		if last.Last == i-1 && last.Width == wm && last.Height == hm {
			last.Last = i
			return
		}
	}
	if len(d.NotA4) < MaxSizeRuns {
		d.NotA4 = append(d.NotA4, PageRun{First: i, Last: i, Width: wm, Height: hm})
	}
}
