package extraction

import (
	"fmt"
)

// PageRead is what the reader found on one page of a document: the lines
// in the window zone, whether an image lies in the zone, whether the
// profile's marker text is on the page, or why the page could not be
// read.
type PageRead struct {
	Lines  []Line `json:"lines,omitempty"`
	Image  bool   `json:"image,omitempty"`
	Marker bool   `json:"marker,omitempty"`
	Err    string `json:"err,omitempty"`
}

// Rule says where letters start in a document. The zero value is the
// default: a new letter starts on a page whose window holds an address
// other than the previous letter's.
type Rule struct {
	// PagesPerLetter > 0: every letter has this many pages.
	PagesPerLetter int
	// Marker != "": a letter starts on every page that shows this text.
	Marker string
}

// Found is a letter found in a document: its pages (0-based, inclusive),
// the window of its first page, and, when it cannot be sent as read, why
// (Hold, for people: it names the page).
type Found struct {
	First, Last int
	Window      Window
	Hold        string
}

// split cuts a document's pages into letters by rule. Every page belongs
// to exactly one letter; pages that come before the first letter's start
// make a letter of their own, held with the reason.
func split(doc string, pages []PageRead, rule Rule) []Found {
	var out []Found
	starts := func(i int, w *Window) bool {
		switch {
		case rule.PagesPerLetter > 0:
			return i%rule.PagesPerLetter == 0
		case rule.Marker != "":
			return pages[i].Marker
		}
		if !w.HasAddress() {
			return false
		}
		return len(out) == 0 || !w.Same(&out[len(out)-1].Window)
	}
	for i := range pages {
		pg := &pages[i]
		w := readWindow(pg.Lines)
		if pg.Err != "" {
			// Whether a letter starts here cannot be known: the page
			// joins the letter before it, which is held.
			if len(out) == 0 || rule.PagesPerLetter > 0 && i%rule.PagesPerLetter == 0 {
				out = append(out, Found{First: i, Last: i, Hold: fmt.Sprintf("page %d of %s could not be read: %s", i+1, doc, pg.Err)})
				continue
			}
			f := &out[len(out)-1]
			f.Last = i
			if f.Hold == "" {
				f.Hold = fmt.Sprintf("page %d of %s could not be read (%s): the letter may hold the start of another", i+1, doc, pg.Err)
			}
			continue
		}
		if starts(i, &w) {
			f := Found{First: i, Last: i, Window: w}
			switch {
			case w.Problem != "":
				f.Hold = fmt.Sprintf("the envelope window of page %d of %s: %s", i+1, doc, w.Problem)
			case !w.HasAddress() && len(w.Postal) == 0 && pg.Image:
				f.Hold = fmt.Sprintf("the envelope window of page %d of %s shows only an image (a scanned page?): lodge reads text, not pictures", i+1, doc)
			case !w.HasAddress():
				f.Hold = fmt.Sprintf("no address in the envelope window of page %d of %s", i+1, doc)
			}
			out = append(out, f)
			continue
		}
		if len(out) == 0 {
			f := Found{First: i, Last: i, Window: w}
			switch {
			case rule.Marker != "":
				f.Hold = fmt.Sprintf("page %d of %s comes before the first page that shows the marker %q", i+1, doc, rule.Marker)
			case len(w.Postal) == 0 && pg.Image:
				f.Hold = fmt.Sprintf("the envelope window of page %d of %s shows only an image (a scanned page?): lodge reads text, not pictures", i+1, doc)
			default:
				f.Hold = fmt.Sprintf("page %d of %s comes before the first address: no envelope window on it shows one", i+1, doc)
			}
			out = append(out, f)
			continue
		}
		out[len(out)-1].Last = i
	}
	if n := rule.PagesPerLetter; n > 0 && len(pages)%n != 0 && len(out) > 0 {
		f := &out[len(out)-1]
		if f.Hold == "" {
			f.Hold = fmt.Sprintf("%s has %d pages, not a whole number of letters of %d pages: the last letter has %d", doc, len(pages), n, len(pages)%n)
		}
	}
	for i := range out {
		if f := &out[i]; f.Hold != "" && f.First != f.Last && out[i].Window.Problem == "" && !out[i].Window.HasAddress() {
			f.Hold = fmt.Sprintf("%s (pages %d-%d)", f.Hold, f.First+1, f.Last+1)
		}
	}
	return out
}
