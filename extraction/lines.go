package extraction

import (
	"math"
	"slices"
	"strings"
	"unicode"

	"github.com/lodge-mail/lodge/internal/pagetext"
	"golang.org/x/text/unicode/norm"
)

// Line is a line of text read in the window zone of a page: its text
// (normalised: NFKC, so ligatures and compatibility forms read as
// letters; runs of space as one), its box in points from the page's
// top-left corner, and whether all of it was invisible (white, or text
// render mode 3).
type Line struct {
	Text      string        `json:"text"`
	Box       pagetext.Rect `json:"box"`
	Invisible bool          `json:"invisible,omitempty"`
	// Cut: the line goes on past the zone's left or right edge (the
	// window would show part of it).
	Cut bool `json:"cut,omitempty"`
}

// Band is how far beyond the zone's left and right edges characters are
// read, to tell a line that runs past an edge (cut by the window) from
// one that ends inside it: 10 mm.
const Band = 10 * 72 / 25.4

// band is the area the reader is asked for: the zone widened by Band.
func band(zone pagetext.Rect) pagetext.Rect {
	return pagetext.Rect{X0: zone.X0 - Band, Y0: zone.Y0, X1: zone.X1 + Band, Y1: zone.Y1}
}

// Grouping thresholds, in ems of the characters concerned.
const (
	// A gap wider than this between one character's advance and the
	// next one's start is a word space: producers that position words
	// instead of writing spaces (TeX, Chromium) leave a quarter em or
	// more; kerning and justification inside a word stay well below.
	wordGap = 0.15
	// A character drawn again within this part of its own advance from
	// where the same character starts is the same glyph drawn twice (the
	// poor man's bold of some producers), not a doubled letter (which
	// starts a whole advance on).
	overstrike = 0.3
	// Characters belong to one line when their baselines are this close.
	baselineTol = 0.3
)

// lines groups the upright characters of a page whose centres lie in
// zone into lines, top to bottom, each left to right. Characters at other
// angles never make an address line and are left out. Characters in the
// band beside the zone only tell whether a line is cut: one that
// continues a zone line across the edge (a gap under an em) marks it
// Cut. buf is scratch space the caller may reuse.
func lines(chars []pagetext.Char, zone pagetext.Rect, buf []pagetext.Char) ([]Line, []pagetext.Char) {
	buf = buf[:0]
	for _, c := range chars {
		if c.Dir != 0 || !(c.X1 > c.X0) || !(c.Y1 > c.Y0) || !(c.Size > 0) {
			continue
		}
		if band(zone).Contains((c.X0+c.X1)/2, (c.Y0+c.Y1)/2) {
			buf = append(buf, c)
		}
	}
	if len(buf) == 0 {
		return nil, buf
	}
	// By baseline; each line then along it. Stable, so that characters
	// at the same place keep the order they were drawn in.
	slices.SortStableFunc(buf, func(a, b pagetext.Char) int { return cmpF(a.Y1, b.Y1) })
	var out []Line
	start, sum, size := 0, buf[0].Y1, buf[0].Size
	for i := 1; i <= len(buf); i++ {
		if i < len(buf) {
			c := buf[i]
			base := sum / float64(i-start)
			if math.Abs(c.Y1-base) <= baselineTol*max(size, c.Size) {
				sum, size = sum+c.Y1, max(size, c.Size)
				continue
			}
		}
		run := buf[start:i]
		slices.SortStableFunc(run, func(a, b pagetext.Char) int { return cmpF(a.X0, b.X0) })
		if l, ok := joinLine(inZone(run, zone)); ok {
			l.Cut = cut(run, zone)
			out = append(out, l)
		}
		if i < len(buf) {
			start, sum, size = i, buf[i].Y1, buf[i].Size
		}
	}
	return out, buf
}

// inZone moves the characters of a line whose centres lie in zone to its
// front, in order, and returns them.
func inZone(run []pagetext.Char, zone pagetext.Rect) []pagetext.Char {
	n := 0
	for i := range run {
		if zone.Contains((run[i].X0+run[i].X1)/2, (run[i].Y0+run[i].Y1)/2) {
			run[n], run[i] = run[i], run[n]
			n++
		}
	}
	in := run[:n]
	slices.SortStableFunc(in, func(a, b pagetext.Char) int { return cmpF(a.X0, b.X0) })
	return in
}

// cut reports whether a line's characters outside the zone continue it:
// one within an em of the zone's edge beside the line's first or last
// character inside (run: the characters inside first, as inZone leaves
// them).
func cut(run []pagetext.Char, zone pagetext.Rect) bool {
	var first, last *pagetext.Char
	var out []pagetext.Char
	for i := range run {
		c := &run[i]
		if zone.Contains((c.X0+c.X1)/2, (c.Y0+c.Y1)/2) {
			if first == nil || c.X0 < first.X0 {
				first = c
			}
			if last == nil || c.X1 > last.X1 {
				last = c
			}
		} else {
			out = append(out, *c)
		}
	}
	if first == nil {
		return false
	}
	for _, c := range out {
		if strings.TrimSpace(c.Text) == "" {
			continue
		}
		if c.X1 <= first.X0+0.01 && first.X0-c.X1 < first.Size || c.X0 >= last.X1-0.01 && c.X0-last.X1 < last.Size {
			return true
		}
	}
	return false
}

// joinLine makes one line of characters sorted along the baseline:
// spaces where the gap says so, overstruck duplicates dropped, text
// normalised. ok is false when nothing but space is left.
func joinLine(run []pagetext.Char) (Line, bool) {
	var b strings.Builder
	l := Line{Box: pagetext.Rect{X0: math.Inf(1), Y0: math.Inf(1), X1: math.Inf(-1), Y1: math.Inf(-1)}, Invisible: true}
	var prev *pagetext.Char
	for i := range run {
		c := &run[i]
		if prev != nil {
			if c.Text == prev.Text && math.Abs(c.X0-prev.X0) < overstrike*(prev.X1-prev.X0) {
				continue
			}
			if gap := c.X0 - prev.X1; gap > wordGap*max(c.Size, prev.Size) {
				b.WriteByte(' ')
			}
		}
		b.WriteString(c.Text)
		if strings.TrimSpace(c.Text) != "" {
			l.Box.X0, l.Box.Y0 = min(l.Box.X0, c.X0), min(l.Box.Y0, c.Y0)
			l.Box.X1, l.Box.Y1 = max(l.Box.X1, c.X1), max(l.Box.Y1, c.Y1)
			l.Invisible = l.Invisible && c.Invisible
		}
		prev = c
	}
	l.Text = clean(b.String())
	return l, l.Text != ""
}

// clean normalises a line's text: NFKC (ligatures, full-width and other
// compatibility forms), the Unicode hyphens and minus sign as "-" (fonts
// re-encoded as ISO Latin-1 draw a typed hyphen as the glyph "minus"),
// every kind of space and control as one space, trimmed.
func clean(s string) string {
	s = norm.NFKC.String(s)
	var b strings.Builder
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) || r == '\u00a0' {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		switch r {
		case '\u2010', '\u2011', '\u2212', '\u2012': // hyphens and the minus sign some encodings give for "-"
			r = '-'
		}
		b.WriteRune(r)
	}
	return b.String()
}

func cmpF(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
