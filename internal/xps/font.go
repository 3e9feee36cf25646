package xps

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/image/font"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
)

// Font is a TrueType or OpenType font, as the Writer embeds it and the
// reader measures glyphs with it. A Font is used by one goroutine at a
// time (it keeps a parsing buffer and a cache).
type Font struct {
	data []byte
	sf   *sfnt.Font
	buf  sfnt.Buffer
	// ascent and descent in em (descent positive, below the baseline),
	// from the hhea table; zero when the font gives none.
	ascent, descent float64
	glyphs          map[rune]glyph // cmap and hmtx lookups already made
	advances        map[sfnt.GlyphIndex]float64
}

// glyph is a rune's glyph index and advance in em.
type glyph struct {
	index sfnt.GlyphIndex
	adv   float64
}

// measurePPEM is the pixels per em sfnt measures at, in 26.6 fixed point:
// 256 px, the largest power of two for which advance (at most 65,535
// font units) × ppem cannot overflow sfnt's int32 arithmetic; its
// precision is 1/16,384 em.
const measurePPEM = fixed.Int26_6(1 << 14)

// LoadFont reads a TrueType or OpenType font file.
func LoadFont(path string) (*Font, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f, err := ParseFont(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// ParseFont parses a TrueType or OpenType font held in data (kept, not
// copied).
func ParseFont(data []byte) (f *Font, err error) {
	// sfnt is careful with hostile input, but a font is the most complex
	// thing a customer's XPS holds: a panic in it is a broken font.
	defer func() {
		if r := recover(); r != nil {
			f, err = nil, fmt.Errorf("font cannot be parsed: %v", r)
		}
	}()
	sf, err := sfnt.Parse(data)
	if err != nil {
		return nil, err
	}
	if sf.UnitsPerEm() <= 0 || sf.NumGlyphs() <= 0 {
		return nil, errors.New("font has no glyphs or no em size")
	}
	f = &Font{data: data, sf: sf, glyphs: map[rune]glyph{}, advances: map[sfnt.GlyphIndex]float64{}}
	if m, err := sf.Metrics(&f.buf, measurePPEM, font.HintingNone); err == nil {
		f.ascent = float64(m.Ascent) / float64(measurePPEM)
		f.descent = float64(m.Descent) / float64(measurePPEM)
	}
	if f.ascent <= 0 || f.ascent > 4 || f.descent < 0 || f.descent > 4 {
		f.ascent, f.descent = 0, 0 // nonsense metrics: the caller's defaults
	}
	return f, nil
}

// NumGlyphs is the number of glyphs in the font.
func (f *Font) NumGlyphs() int { return f.sf.NumGlyphs() }

// glyphFor returns the glyph of r (index 0, .notdef, when the font has
// none) and its advance in em.
func (f *Font) glyphFor(r rune) glyph {
	if g, ok := f.glyphs[r]; ok {
		return g
	}
	x, err := f.sf.GlyphIndex(&f.buf, r)
	if err != nil {
		x = 0
	}
	g := glyph{index: x, adv: f.advance(x)}
	if len(f.glyphs) < maxCachedGlyphs {
		f.glyphs[r] = g
	}
	return g
}

// advance returns the advance width of glyph x in em (0 when the font
// has no such glyph).
func (f *Font) advance(x sfnt.GlyphIndex) float64 {
	if a, ok := f.advances[x]; ok {
		return a
	}
	adv, err := f.sf.GlyphAdvance(&f.buf, x, measurePPEM, font.HintingNone)
	a := float64(adv) / float64(measurePPEM)
	if err != nil || a < 0 || a > 16 {
		a = 0
	}
	if len(f.advances) < maxCachedGlyphs {
		f.advances[x] = a
	}
	return a
}

// maxCachedGlyphs bounds each of a font's caches: a hostile page cannot
// grow them past the glyphs a font has (65,535) anyway, but a cap keeps
// memory predictable.
const maxCachedGlyphs = 1 << 16
