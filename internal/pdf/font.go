package pdf

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
)

// Fonts as the text reader needs them: for each code, its advance width
// and its text; the font's ascent and descent for the boxes; for
// composite fonts, how codes split and map to CIDs. A font is loaded once
// per document (Reader.text caches it by object number) into tables, so
// that drawing a glyph costs a lookup.

const (
	// fallbackWidth is the advance (1/1000 em) of glyphs of a font that
	// tells none: no /Widths, not a standard font, no /MissingWidth; and
	// of a font resource that is missing.
	fallbackWidth = 500
	// maxFontFileBytes bounds the font program read for a Type 1 font's
	// own encoding.
	maxFontFileBytes = 4 << 20
	// maxFontCacheBytes bounds the fonts kept per document (by an
	// estimate of their size); past it the cache starts afresh.
	maxFontCacheBytes = 64 << 20
	defaultAscent     = 0.95 // of the em, when a font tells none (as poppler)
	defaultDescent    = -0.35
)

type font struct {
	name      string // /BaseFont, for messages
	err       error  // the font cannot be used (a bound): pages drawing with it fail
	composite bool
	vertical  bool
	// simple fonts, by code
	widths [256]float64 // advance in text space per unit of font size
	text   [256]string  // "" : no text (a glyph mapped to nothing)
	// composite fonts
	enc      *cmap // nil: Identity (two-byte codes that are their CIDs)
	ucs2     bool  // a predefined Unicode CMap: codes are UTF-16 when there is no ToUnicode
	w        []cidMetric
	dw       float64
	w2       []cidMetric // vertical: w is w1y, vx, vy
	dw2y     float64     // w1y
	dw2v     float64     // vy
	toUni    *cmap
	texts    map[uint32]string // text by code, as found
	ascent   float64
	descent  float64
	weight   int // an estimate of its memory, for the cache bound
	hasToUni bool
}

// cidMetric gives CIDs lo to hi a width w (or, vertical, w1y and the
// position vector vx, vy), or, from a list, each its own (ws[cid-lo]).
type cidMetric struct {
	lo, hi       uint32
	w, vx, vy    float64
	ws, vxs, vys []float64
}

// missingFont is drawn with when a page names a font it does not have:
// standard encoding, fallbackWidth.
var missingFont = func() *font {
	f := &font{name: "(missing)", ascent: defaultAscent, descent: defaultDescent}
	for c := range 256 {
		f.widths[c] = fallbackWidth / 1000.0
		f.text[c] = textOrReplacement(glyphText(standardEncoding[c]))
	}
	return f
}()

func textOrReplacement(s string) string {
	if s == "" {
		return "\uFFFD"
	}
	return s
}

// fontFor returns the font of a /Font resource entry, loaded once per
// document when it is an indirect object.
func (d *Reader) fontFor(o object) *font {
	tc := d.textCache()
	r, isRef := o.(ref)
	if isRef {
		if f, ok := tc.fonts[r.num]; ok {
			return f
		}
	}
	f := d.loadFont(o)
	if isRef {
		if tc.fontBytes+f.weight > maxFontCacheBytes {
			clear(tc.fonts)
			tc.fontBytes = 0
		}
		tc.fonts[r.num] = f
		tc.fontBytes += f.weight
	}
	return f
}

func (d *Reader) loadFont(o object) *font {
	d.textCache().fontLoads++
	fd, ok := d.resolve(o).(dict)
	if !ok {
		return missingFont
	}
	name, _ := d.resolve(fd["BaseFont"]).(pdfName)
	f := &font{name: string(name), weight: 8 << 10}
	if r, ok := o.(ref); ok && name == "" {
		f.name = fmt.Sprintf("object %d", r.num)
	}
	sub, _ := d.resolve(fd["Subtype"]).(pdfName)
	var err error
	if sub == "Type0" {
		err = d.loadComposite(f, fd)
	} else {
		err = d.loadSimple(f, fd, sub)
	}
	if err != nil {
		f.err = prefixed(fmt.Sprintf("font %s: ", f.name), err)
	}
	return f
}

// toUnicode reads a font's /ToUnicode map; nil when it has none or it
// cannot be read (the font falls back to its encoding). Only a bound is
// an error.
func (d *Reader) toUnicode(fd dict) (*cmap, error) {
	s, ok := d.resolve(fd["ToUnicode"]).(*stream)
	if !ok {
		return nil, nil
	}
	data, err := d.streamData(s, maxCMapBytes)
	if err != nil {
		if isLimit(err) {
			return nil, prefixed("ToUnicode: ", err)
		}
		return nil, nil
	}
	cm := &cmap{}
	if err := parseCMap(data, d.dl, cm); err != nil {
		return nil, prefixed("ToUnicode: ", err)
	}
	if len(cm.bf) == 0 {
		return nil, nil
	}
	return cm, nil
}

func isLimit(err error) bool { return errors.Is(err, ErrLimit) }

// descriptor reads the ascent and descent of a font descriptor, as
// fractions of the em (scaled by scale: 1/1000, or a Type 3 font's
// matrix), with poppler's repairs: a negative ascent or positive descent
// is turned, zero or absurd values are ignored.
func (d *Reader) descriptor(f *font, fdesc dict, scale float64) {
	f.ascent, f.descent = defaultAscent, defaultDescent
	if fdesc == nil {
		return
	}
	if v, ok := number(d.resolve(fdesc["Ascent"])); ok {
		t := math.Abs(v * scale)
		if t != 0 && t < 3 {
			f.ascent = t
		}
	}
	if v, ok := number(d.resolve(fdesc["Descent"])); ok {
		t := -math.Abs(v * scale)
		if t != 0 && t > -3 {
			f.descent = t
		}
	}
}

func (d *Reader) loadSimple(f *font, fd dict, sub pdfName) error {
	fdesc, _ := d.resolve(fd["FontDescriptor"]).(dict)
	std := std14ByName(f.name)
	embedded := fdesc != nil && (fdesc["FontFile"] != nil || fdesc["FontFile2"] != nil || fdesc["FontFile3"] != nil)
	scale := 0.001
	if sub == "Type3" {
		if m, ok := d.resolve(fd["FontMatrix"]).(array); ok && len(m) == 6 {
			if a, ok := number(d.resolve(m[0])); ok && a != 0 && math.Abs(a) < 1e6 {
				scale = a
			}
		}
		std = nil
	}
	d.descriptor(f, fdesc, scale)
	if sub == "Type3" {
		// the glyphs' box, in glyph space, gives the height
		if bb, ok := d.rect(fd["FontBBox"]); ok && fdesc == nil {
			if m, ok := d.resolve(fd["FontMatrix"]).(array); ok && len(m) == 6 {
				if dy, ok := number(d.resolve(m[3])); ok && dy != 0 {
					a, de := math.Abs(bb[3]*dy), -math.Abs(bb[1]*dy)
					if a > 0 && a < 3 && de > -3 {
						f.ascent, f.descent = a, de
					}
				}
			}
		}
	} else if std != nil && !embedded {
		// a standard font drawn from the reader's own metrics: its
		// descriptor's figures (often made up) do not count
		f.ascent, f.descent = float64(std.ascent)/1000, float64(std.descent)/1000
	}

	// the encoding: glyph names by code
	var names [256]string
	base := &standardEncoding
	switch {
	case std == &std14[12]:
		base = &symbolEncoding
	case std == &std14[13]:
		base = &dingbatsEncoding
	case sub == "TrueType":
		base = &winAnsiEncoding
	}
	if fdesc != nil && (sub == "Type1" || sub == "MMType1" || sub == "") {
		if s, ok := d.resolve(fdesc["FontFile"]).(*stream); ok {
			if own := d.type1Encoding(s); own != nil {
				base = own
			}
		}
	}
	var diffs array
	switch e := d.resolve(fd["Encoding"]).(type) {
	case pdfName:
		if b := namedEncoding(e); b != nil {
			base = b
		}
	case dict:
		if n, ok := d.resolve(e["BaseEncoding"]).(pdfName); ok {
			if b := namedEncoding(n); b != nil {
				base = b
			}
		}
		diffs, _ = d.resolve(e["Differences"]).(array)
	}
	names = *base
	code := -1
	for _, x := range diffs {
		switch v := d.resolve(x).(type) {
		case int64:
			code = int(v)
		case float64:
			code = int(v)
		case pdfName:
			if code >= 0 && code < 256 {
				names[code] = string(v)
			}
			code++
		}
	}

	// text: ToUnicode first, then the glyph name
	tu, err := d.toUnicode(fd)
	if err != nil {
		return err
	}
	for c := range 256 {
		if tu != nil {
			if t, ok := tu.text(uint32(c)); ok {
				f.text[c] = t
				continue
			}
		}
		f.text[c] = textOrReplacement(glyphText(names[c]))
	}

	// widths
	missing := 0.0
	if fdesc != nil {
		if v, ok := number(d.resolve(fdesc["MissingWidth"])); ok {
			missing = v * scale
		}
	}
	ws, hasWidths := d.resolve(fd["Widths"]).(array)
	switch {
	case hasWidths:
		first, _ := number(d.resolve(fd["FirstChar"]))
		for c := range 256 {
			f.widths[c] = missing
		}
		for i, x := range ws {
			c := int(first) + i
			if c < 0 || c > 255 {
				continue
			}
			if v, ok := number(d.resolve(x)); ok {
				f.widths[c] = v * scale
			}
		}
	case std != nil:
		for c := range 256 {
			w, ok := std.width(names[c])
			switch {
			case names[c] == "" || names[c] == ".notdef":
				w = 0 // no glyph
			case ok:
			case missing > 0:
				w = int(missing / scale)
			default:
				w = fallbackWidth // a glyph the standard font lacks
			}
			f.widths[c] = float64(w) / 1000
		}
	default:
		w := fallbackWidth * scale
		if missing > 0 {
			w = missing
		}
		for c := range 256 {
			f.widths[c] = w
		}
	}
	return nil
}

// namedEncoding is the encoding of an /Encoding or /BaseEncoding name;
// nil for names not known (MacExpertEncoding).
func namedEncoding(n pdfName) *[256]string {
	switch n {
	case "StandardEncoding":
		return &standardEncoding
	case "WinAnsiEncoding":
		return &winAnsiEncoding
	case "MacRomanEncoding":
		return &macRomanEncoding
	case "PDFDocEncoding":
		return &pdfDocEncoding
	case "SymbolEncoding":
		return &symbolEncoding
	case "ZapfDingbatsEncoding":
		return &dingbatsEncoding
	}
	return nil
}

// type1Encoding reads the encoding of an embedded Type 1 font program
// from its clear-text part ("/Encoding StandardEncoding def", or "dup 65
// /A put" entries); nil when it says none.
func (d *Reader) type1Encoding(s *stream) *[256]string {
	data, err := d.streamData(s, maxFontFileBytes)
	if err != nil {
		return nil
	}
	if n, ok := d.resolve(s.dict["Length1"]).(int64); ok && n > 0 && n < int64(len(data)) {
		data = data[:n]
	}
	if i := bytes.Index(data, []byte("eexec")); i >= 0 {
		data = data[:i]
	}
	i := bytes.Index(data, []byte("/Encoding"))
	if i < 0 {
		return nil
	}
	var lx clexer
	lx.reset(data[i+len("/Encoding"):])
	var enc [256]string
	found, dup := false, false
	code := -1
	for {
		t := lx.token()
		switch t {
		case ctEOF:
			if found {
				return &enc
			}
			return nil
		case ctOp:
			switch string(lx.kw) {
			case "StandardEncoding":
				return &standardEncoding
			case "def", "readonly":
				if found {
					return &enc
				}
			}
			dup = string(lx.kw) == "dup"
			code = -1
		case ctNum:
			code = -1
			if dup && lx.num >= 0 && lx.num < 256 {
				code = int(lx.num)
			}
			dup = false
		case ctName:
			if code >= 0 {
				enc[code] = string(lx.str())
				found = true
			}
			code, dup = -1, false
		default:
			code, dup = -1, false
		}
		lx.sbuf = lx.sbuf[:0]
	}
}

func (d *Reader) loadComposite(f *font, fd dict) error {
	f.composite = true
	f.dw, f.dw2y, f.dw2v = 1, -1, 0.88
	switch e := d.resolve(fd["Encoding"]).(type) {
	case pdfName:
		f.predefined(string(e))
	case *stream:
		cm, err := d.encodingCMap(e, 0)
		if err != nil {
			return err
		}
		f.enc = cm
		f.vertical = cm.wmode == 1
		if cm.usecmap != "" && len(cm.space) == 0 {
			f.predefined(cm.usecmap)
			f.enc = nil
		}
	default:
		f.predefined("Identity-H")
	}
	var cid dict
	if ds, ok := d.resolve(fd["DescendantFonts"]).(array); ok && len(ds) > 0 {
		cid, _ = d.resolve(ds[0]).(dict)
	}
	fdesc, _ := d.resolve(cid["FontDescriptor"]).(dict)
	d.descriptor(f, fdesc, 0.001)
	if v, ok := number(d.resolve(cid["DW"])); ok {
		f.dw = v / 1000
	}
	if a, ok := d.resolve(cid["DW2"]).(array); ok && len(a) == 2 {
		v, ok1 := number(d.resolve(a[0]))
		w, ok2 := number(d.resolve(a[1]))
		if ok1 && ok2 {
			f.dw2v, f.dw2y = v/1000, w/1000
		}
	}
	f.w = d.cidWidths(cid["W"], 1)
	if f.vertical {
		f.w2 = d.cidWidths(cid["W2"], 3)
	}
	tu, err := d.toUnicode(fd)
	if err != nil {
		return err
	}
	f.toUni = tu
	f.texts = map[uint32]string{}
	if tu != nil {
		f.weight += 64 * (len(tu.bf) + len(tu.dst))
	}
	if f.enc != nil {
		f.weight += 32 * (len(f.enc.cids) + len(f.enc.space))
	}
	for _, ms := range [][]cidMetric{f.w, f.w2} {
		for _, m := range ms {
			f.weight += 64 + 24*len(m.ws)
		}
	}
	return nil
}

// predefined sets up a composite font whose encoding is a predefined
// CMap by name: Identity-H and -V; the Unicode ones (Uni...-UCS2-,
// -UTF16-) give text when there is no ToUnicode. Others (legacy CJK
// encodings) are read as two-byte codes with no text but the ToUnicode
// map's.
func (f *font) predefined(name string) {
	f.enc = nil
	f.vertical = len(name) > 2 && name[len(name)-2:] == "-V"
	f.ucs2 = bytes.Contains([]byte(name), []byte("UCS2")) || bytes.Contains([]byte(name), []byte("UTF16"))
}

// encodingCMap reads an embedded encoding CMap, with the one it names by
// /UseCMap when that is a stream too (depth-bounded).
func (d *Reader) encodingCMap(s *stream, depth int) (*cmap, error) {
	cm := &cmap{}
	if depth < 4 {
		switch u := d.resolve(s.dict["UseCMap"]).(type) {
		case *stream:
			parent, err := d.encodingCMap(u, depth+1)
			if err != nil {
				return nil, err
			}
			*cm = *parent
			cm.usecmap = ""
		case pdfName:
			cm.usecmap = string(u)
		}
	}
	if v, ok := d.resolve(s.dict["WMode"]).(int64); ok {
		cm.wmode = int(v & 1)
	}
	data, err := d.streamData(s, maxCMapBytes)
	if err != nil {
		if isLimit(err) {
			return nil, prefixed("encoding CMap: ", err)
		}
		// unreadable: two-byte Identity
		return &cmap{usecmap: "Identity-H"}, nil
	}
	if err := parseCMap(data, d.dl, cm); err != nil {
		return nil, prefixed("encoding CMap: ", err)
	}
	if len(cm.space) == 0 && cm.usecmap == "" {
		cm.usecmap = "Identity-H"
	}
	if len(cm.space) == 0 && len(cm.cids) > 0 {
		// mappings without a codespace: two-byte codes
		cm.space = append(cm.space, codespace{n: 2, hi: [4]byte{0xFF, 0xFF}})
		cm.finish()
	}
	return cm, nil
}

// cidWidths reads a /W array (per 1: "c [w ...]" or "c1 c2 w") or a /W2
// array (per 3: "c [w1y vx vy ...]" or "c1 c2 w1y vx vy"), in 1/1000 em.
func (d *Reader) cidWidths(o object, per int) []cidMetric {
	a, ok := d.resolve(o).(array)
	if !ok {
		return nil
	}
	var out []cidMetric
	for i := 0; i < len(a); {
		c1, ok := number(d.resolve(a[i]))
		if !ok || c1 < 0 || c1 >= 1<<32 {
			break
		}
		if i+1 >= len(a) {
			break
		}
		if list, ok := d.resolve(a[i+1]).(array); ok {
			m := cidMetric{lo: uint32(c1)}
			for k := 0; k+per <= len(list); k += per {
				var v [3]float64
				for j := range per {
					v[j], _ = number(d.resolve(list[k+j]))
					v[j] /= 1000
				}
				m.ws = append(m.ws, v[0])
				if per == 3 {
					m.vxs = append(m.vxs, v[1])
					m.vys = append(m.vys, v[2])
				}
			}
			if len(m.ws) > 0 {
				m.hi = m.lo + uint32(len(m.ws)-1)
				if m.hi >= m.lo {
					out = append(out, m)
				}
			}
			i += 2
			continue
		}
		c2, ok := number(d.resolve(a[i+1]))
		if !ok || c2 < c1 || c2 >= 1<<32 || i+2+per > len(a) {
			break
		}
		m := cidMetric{lo: uint32(c1), hi: uint32(c2)}
		var v [3]float64
		for j := range per {
			v[j], _ = number(d.resolve(a[i+2+j]))
			v[j] /= 1000
		}
		m.w, m.vx, m.vy = v[0], v[1], v[2]
		out = append(out, m)
		i += 2 + per
	}
	slices.SortStableFunc(out, func(x, y cidMetric) int {
		switch {
		case x.lo < y.lo:
			return -1
		case x.lo > y.lo:
			return 1
		}
		return 0
	})
	return out
}

// metric finds the entry of ms holding cid: its first value (w or w1y),
// vx, vy; ok false when none does.
func metric(ms []cidMetric, cid uint32) (w, vx, vy float64, ok bool) {
	lo, hi := 0, len(ms)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if ms[m].lo <= cid {
			lo = m + 1
		} else {
			hi = m
		}
	}
	for i, k := lo-1, 0; i >= 0 && k < maxScanBack; i, k = i-1, k+1 {
		m := &ms[i]
		if m.hi < cid {
			continue
		}
		if m.ws != nil {
			j := cid - m.lo
			w = m.ws[j]
			if m.vxs != nil {
				vx, vy = m.vxs[j], m.vys[j]
			}
			return w, vx, vy, true
		}
		return m.w, m.vx, m.vy, true
	}
	return 0, 0, 0, false
}

// code reads the next code of a composite font's string: its value and
// length (at least 1).
func (f *font) code(s []byte) (uint32, int) {
	if f.enc == nil {
		if len(s) == 1 {
			return uint32(s[0]), 1
		}
		return uint32(s[0])<<8 | uint32(s[1]), 2
	}
	return f.enc.code(s)
}

func (f *font) cid(code uint32) uint32 {
	if f.enc == nil {
		return code
	}
	return f.enc.cid(code)
}

// width is a CID's advance (horizontal).
func (f *font) width(cid uint32) float64 {
	if w, _, _, ok := metric(f.w, cid); ok {
		return w
	}
	return f.dw
}

// vmetrics is a CID's vertical advance w1y and position vector (vx, vy).
func (f *font) vmetrics(cid uint32, w0 float64) (w1y, vx, vy float64) {
	if w, x, y, ok := metric(f.w2, cid); ok {
		return w, x, y
	}
	return f.dw2y, w0 / 2, f.dw2v
}

// maxTextsCached bounds the text by code a composite font keeps.
const maxTextsCached = 1 << 16

// textOf returns a composite font's text for a code: by its ToUnicode
// map, else the code itself for a Unicode CMap, else U+FFFD.
func (f *font) textOf(code uint32) string {
	if t, ok := f.texts[code]; ok {
		return t
	}
	t := "\uFFFD"
	found := false
	if f.toUni != nil {
		t, found = f.toUni.text(code)
	}
	if !found {
		t = "\uFFFD"
		if f.ucs2 && code < 0x10000 {
			t = runeText(rune(code))
		}
	}
	if len(f.texts) < maxTextsCached {
		f.texts[code] = t
	}
	return t
}
