package xps

import (
	"errors"
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"

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
	return newFont(data, sf)
}

func newFont(data []byte, sf *sfnt.Font) (*Font, error) {
	if sf.UnitsPerEm() <= 0 || sf.NumGlyphs() <= 0 {
		return nil, errors.New("font has no glyphs or no em size")
	}
	f := &Font{data: data, sf: sf, glyphs: map[rune]glyph{}, advances: map[sfnt.GlyphIndex]float64{}}
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
	x, err := f.glyphIndex(r)
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
	adv, err := f.glyphAdvance(x)
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

// font returns the font a Glyphs element's FontUri names, relative to the
// page part, loading it once per Doc: an obfuscated font (.odttf) is
// restored with the GUID of its name; a "#n" fragment picks a font of a
// collection. A missing or broken font is an error for the runs that
// need it (for advances or glyph indices), said each time.
func (d *Doc) font(base, uri string) (*Font, error) {
	if uri == "" {
		return nil, malformed("no FontUri")
	}
	name, frag, err := resolve(base, uri)
	if err != nil {
		return nil, malformed("FontUri: %v", err)
	}
	key := partKey(name) + "#" + frag
	if e, ok := d.fonts[key]; ok {
		return e.font, e.err
	}
	f, size, err := d.loadFont(name, frag)
	if err != nil {
		err = prefixed("font "+name+": ", err)
	}
	if d.fontBytes+size > fontCacheBytes {
		clear(d.fonts)
		d.fontBytes = 0
	}
	d.fonts[key] = &fontEntry{font: f, err: err}
	d.fontBytes += size
	return f, err
}

func (d *Doc) loadFont(name, frag string) (*Font, int64, error) {
	if !d.pkg.has(name) {
		return nil, 0, malformed("the part is not in the package")
	}
	data, err := d.pkg.read(name, d.lim.MaxFontBytes, nil)
	if err != nil {
		return nil, 0, err
	}
	size := int64(len(data))
	obfuscated := strings.HasSuffix(strings.ToLower(name), ".odttf")
	if obfuscated {
		key := guidKey(path.Base(name))
		if key == nil {
			return nil, size, malformed("an obfuscated font's name holds no GUID")
		}
		if len(data) < 32 {
			return nil, size, malformed("an obfuscated font of %d bytes", len(data))
		}
		obfuscate(data, key)
	}
	index := -1
	if frag != "" {
		n, err := strconv.Atoi(frag)
		if err != nil || n < 0 || n > 1<<16 {
			return nil, size, malformed("FontUri fragment %q is not a font number", frag)
		}
		index = n
	}
	f, err := parseFontAt(data, index)
	if err != nil && !obfuscated && len(data) >= 32 {
		// Obfuscated, and named otherwise (its content type says
		// so, which this reader does not read): libgxps tries this too.
		if key := guidKey(path.Base(name)); key != nil {
			obfuscate(data, key)
			if g, err2 := parseFontAt(data, index); err2 == nil {
				f, err = g, nil
			}
		}
	}
	if err != nil {
		return nil, size, malformed("%v", err)
	}
	return f, size, nil
}

// parseFontAt parses a font, or font index of a collection (index >= 0).
func parseFontAt(data []byte, index int) (f *Font, err error) {
	if index < 0 {
		return ParseFont(data)
	}
	defer func() {
		if r := recover(); r != nil {
			f, err = nil, fmt.Errorf("font cannot be parsed: %v", r)
		}
	}()
	c, err := sfnt.ParseCollection(data)
	if err != nil {
		return nil, err
	}
	if index >= c.NumFonts() {
		return nil, fmt.Errorf("the collection has %d fonts, not %d", c.NumFonts(), index+1)
	}
	sf, err := c.Font(index)
	if err != nil {
		return nil, err
	}
	return newFont(data, sf)
}

// glyphIndex and glyphAdvance call sfnt, taking a panic for a broken
// font: sfnt checks its input, but a customer's font is the most complex
// thing an XPS holds.
func (f *Font) glyphIndex(r rune) (x sfnt.GlyphIndex, err error) {
	defer func() {
		if p := recover(); p != nil {
			x, err = 0, fmt.Errorf("font: %v", p)
		}
	}()
	return f.sf.GlyphIndex(&f.buf, r)
}

func (f *Font) glyphAdvance(x sfnt.GlyphIndex) (a fixed.Int26_6, err error) {
	defer func() {
		if p := recover(); p != nil {
			a, err = 0, fmt.Errorf("font: %v", p)
		}
	}()
	return f.sf.GlyphAdvance(&f.buf, x, measurePPEM, font.HintingNone)
}
