package xps

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/lodge-mail/lodge/internal/pagetext"
	"golang.org/x/image/font/sfnt"
)

// Em box defaults for a font that gives no ascent and descent.
const (
	defaultAscent  = 0.8
	defaultDescent = 0.2
)

// span is one rune of a UnicodeString: its byte range and UTF-16 length.
type span struct {
	start, end int32
	units      int8
	r          rune
}

// glyphSpec is one entry of Indices: a cluster map when it starts a
// cluster, then the glyph index, advance and offsets (each may be
// absent).
type glyphSpec struct {
	codeUnits, glyphs int // the cluster map (c:g); 0 when there is none
	index             int
	hasIndex, hasAdv  bool
	adv, u, v         float64
}

// drawGlyphs lays out the Glyphs element just closed and adds its
// characters to the page.
func (s *pageState) drawGlyphs(parent *frame) error {
	r := &s.run
	if r.em == 0 {
		return nil // nothing is drawn at size 0
	}
	m := r.rt.then(parent.m)
	if !finite(m.A) || !finite(m.B) || !finite(m.C) || !finite(m.D) || !finite(m.E) || !finite(m.F) {
		return s.glyphErr("its transform puts the text at infinity")
	}
	// The zone fast path: text whose baseline runs along an axis far from
	// the zone is not laid out at all. A character's centre is at most 2 em
	// from the baseline (ascent and descent are capped at 4 em); only
	// glyphs with a v offset (four numbers in an Indices entry) could
	// move further, and a run with any is laid out.
	if s.zone != nil && !r.sideways {
		x, y := m.apply(r.originX, r.originY)
		far := false
		switch {
		case m.B == 0 && m.C == 0: // upright or upside down: the baseline is horizontal
			reach := 2 * r.em * math.Abs(m.D)
			far = y+reach < s.zone.Y0 || y-reach > s.zone.Y1
		case m.A == 0 && m.D == 0: // a quarter turn: the baseline is vertical
			reach := 2 * r.em * math.Abs(m.C)
			far = x+reach < s.zone.X0 || x-reach > s.zone.X1
		}
		if far && !hasVOffset(r.indices) && !hasVOffset(r.liftedIx) {
			return nil
		}
	}
	if r.liftedIx != nil {
		r.indices = string(r.liftedIx)
	}
	if r.liftedUS != nil {
		r.unicode = string(r.liftedUS)
	}
	us := strings.TrimPrefix(r.unicode, "{}")
	s.spans = s.spans[:0]
	for i, c := range us {
		n := int8(1)
		if c >= 0x10000 {
			n = 2
		}
		s.spans = append(s.spans, span{start: int32(i), end: int32(i + utf8.RuneLen(c)), units: n, r: c})
	}
	font, fontErr := s.d.font(s.part, r.fontURI)
	asc, desc := defaultAscent, defaultDescent
	if font != nil && font.ascent > 0 {
		asc, desc = font.ascent, font.descent
	}
	if r.sideways {
		asc, desc = 0.5, 0.5 // a turned glyph straddles the baseline
	}
	invisible := r.fill.invisible() || r.opacity == 0
	size := r.em * math.Sqrt(math.Abs(m.A*m.D-m.B*m.C))
	dir := m.dir()
	em := r.em
	pen := 0.0 // along the baseline from the origin, in units
	next := 0  // the next span
	ix := r.indices

	// emit adds a character whose glyphs advance adv units after a u, v
	// offset, with the text of spans [from, to).
	emit := func(from, to int, adv, u, v float64) error {
		x0 := pen + u
		x1 := x0 + adv
		if r.rtl {
			x0, x1 = pen-u-adv, pen-u
		}
		bx := box{}
		bx.add(r.originX+x0, r.originY-v-asc*em)
		bx.add(r.originX+x1, r.originY-v+desc*em)
		b := bx.through(m)
		if !finite(b.x0) || !finite(b.y0) || !finite(b.x1) || !finite(b.y1) {
			return s.glyphErr("its transform puts the text at infinity")
		}
		if s.zone != nil {
			cx, cy := (b.x0+b.x1)/2, (b.y0+b.y1)/2
			if !s.zone.Contains(cx, cy) {
				return nil
			}
		}
		s.chars++
		if s.chars > s.d.lim.MaxChars {
			return limitErr("%s draws more than %d characters", s.part, s.d.lim.MaxChars)
		}
		text := "\uFFFD"
		if from < to {
			if to-from == 1 && s.spans[from].r < 128 {
				text = ascii[s.spans[from].r]
			} else {
				text = us[s.spans[from].start:s.spans[to-1].end]
			}
		}
		s.p.Chars = append(s.p.Chars, pagetext.Char{Text: text, X0: b.x0, Y0: b.y0, X1: b.x1, Y1: b.y1, Size: size, Dir: dir, Invisible: invisible})
		return nil
	}
	// advanceOf is a glyph's advance in units: the Indices' when given,
	// else the font's.
	advanceOf := func(g *glyphSpec) (float64, error) {
		if g.hasAdv {
			return g.adv * em / 100, nil
		}
		if font == nil {
			return 0, fontErr
		}
		return font.advance(sfnt.GlyphIndex(g.index)) * em, nil
	}
	// glyphOf fills in a glyph index from the font's cmap.
	glyphOf := func(g *glyphSpec, c rune) error {
		if g.hasIndex {
			return nil
		}
		if font == nil {
			if g.hasAdv {
				return nil // the advance is all layout needs
			}
			return fontErr
		}
		g.index, g.hasIndex = int(font.glyphFor(c).index), true
		return nil
	}
	var g glyphSpec
	for ix != "" || next < len(s.spans) {
		if err := s.d.dl.Check(); err != nil {
			return err
		}
		if ix == "" {
			// Indices ended (or there are none): one glyph a rune.
			g = glyphSpec{}
			if err := glyphOf(&g, s.spans[next].r); err != nil {
				return s.locate(err)
			}
			adv, err := advanceOf(&g)
			if err != nil {
				return s.locate(err)
			}
			if err := emit(next, next+1, adv, 0, 0); err != nil {
				return err
			}
			pen += signed(adv, r.rtl)
			next++
			continue
		}
		var err error
		if ix, err = parseSpec(ix, &g); err != nil {
			return s.glyphErr("Indices: %v", err)
		}
		if g.empty() && next >= len(s.spans) {
			continue // an empty entry past the text draws nothing
		}
		// A cluster: c UTF-16 code units of text drawn by n glyphs, the
		// first with this entry's offsets. Without a map, one rune and
		// one glyph.
		from, to := next, next
		nGlyphs := 1
		if g.codeUnits > 0 {
			for units := 0; units < g.codeUnits && to < len(s.spans); to++ {
				units += int(s.spans[to].units)
			}
			nGlyphs = g.glyphs
		} else if next < len(s.spans) {
			to = next + 1
		}
		var c rune = -1
		if from < to {
			c = s.spans[from].r
		}
		if err := glyphOf(&g, c); err != nil {
			return s.locate(err)
		}
		adv, err := advanceOf(&g)
		if err != nil {
			return s.locate(err)
		}
		u, v := g.u*em/100, g.v*em/100
		total := adv
		for k := 1; k < nGlyphs; k++ {
			if ix == "" {
				return s.glyphErr("Indices: a cluster of %d glyphs has only %d", nGlyphs, k)
			}
			var h glyphSpec
			if ix, err = parseSpec(ix, &h); err != nil {
				return s.glyphErr("Indices: %v", err)
			}
			if h.codeUnits > 0 {
				return s.glyphErr("Indices: a cluster starts inside a cluster")
			}
			if !h.hasIndex && !h.hasAdv {
				h.hasIndex = true // glyph index 0
			}
			a, err := advanceOf(&h)
			if err != nil {
				return s.locate(err)
			}
			total += a
		}
		if err := emit(from, to, total, u, v); err != nil {
			return err
		}
		pen += signed(total, r.rtl)
		next = to
	}
	return nil
}

func signed(v float64, neg bool) float64 {
	if neg {
		return -v
	}
	return v
}

// locate prefixes err with the Glyphs element's place, keeping its
// categories.
func (s *pageState) locate(err error) error {
	return prefixed(fmt.Sprintf("%s line %d: Glyphs: ", s.part, s.run.line), err)
}

func (s *pageState) glyphErr(format string, args ...any) error {
	return malformed("%s line %d: Glyphs: %s", s.part, s.run.line, fmt.Sprintf(format, args...))
}

// hasVOffset reports whether an Indices entry has four numbers (a v
// offset).
func hasVOffset[T string | []byte](ix T) bool {
	commas := 0
	for i := 0; i < len(ix); i++ {
		switch ix[i] {
		case ',':
			commas++
			if commas == 3 {
				return true
			}
		case ';':
			commas = 0
		}
	}
	return false
}

// parseSpec parses the first entry of an Indices string into g and
// returns the rest: [(c[:g])][index][,[advance][,[u][,[v]]]].
func parseSpec(ix string, g *glyphSpec) (string, error) {
	*g = glyphSpec{}
	entry, rest, _ := strings.Cut(ix, ";")
	entry = strings.TrimSpace(entry)
	if strings.HasPrefix(entry, "(") {
		j := strings.IndexByte(entry, ')')
		if j < 0 {
			return "", fmt.Errorf("cluster map %q has no ')'", entry)
		}
		c, n, hasN := strings.Cut(entry[1:j], ":")
		cu, err := strconv.Atoi(strings.TrimSpace(c))
		if err != nil || cu < 1 || cu > 1<<16 {
			return "", fmt.Errorf("cluster map %q", entry[:j+1])
		}
		g.codeUnits, g.glyphs = cu, 1
		if hasN {
			gl, err := strconv.Atoi(strings.TrimSpace(n))
			if err != nil || gl < 1 || gl > 1<<16 {
				return "", fmt.Errorf("cluster map %q", entry[:j+1])
			}
			g.glyphs = gl
		}
		entry = entry[j+1:]
	}
	for f := 0; entry != ""; f++ {
		field, more, _ := strings.Cut(entry, ",")
		entry = more
		field = strings.TrimSpace(field)
		if field == "" {
			continue
		}
		switch f {
		case 0:
			v, err := strconv.Atoi(field)
			if err != nil || v < 0 || v > 0xFFFF {
				return "", fmt.Errorf("glyph index %q", field)
			}
			g.index, g.hasIndex = v, true
		case 1, 2, 3:
			v, err := parseNum(field)
			if err != nil {
				return "", err
			}
			switch f {
			case 1:
				if v < 0 {
					return "", fmt.Errorf("advance %q is negative", field)
				}
				g.adv, g.hasAdv = v, true
			case 2:
				g.u = v
			case 3:
				g.v = v
			}
		default:
			return "", fmt.Errorf("an entry has more than four numbers")
		}
	}
	return rest, nil
}

// empty reports whether an Indices entry says nothing.
func (g *glyphSpec) empty() bool {
	return g.codeUnits == 0 && !g.hasIndex && !g.hasAdv && g.u == 0 && g.v == 0
}

// ascii holds the one-character strings of ASCII, so that most
// characters cost no allocation.
var ascii = func() (t [128]string) {
	for i := range t {
		t[i] = string(rune(i))
	}
	return t
}()
