package pdf

import (
	"bytes"
	"fmt"
	"math"

	"github.com/lodge-mail/lodge/internal/pagetext"
)

// Reading the text of a page with positions: a content stream
// interpreter that follows the graphics and text state far enough to
// place every glyph (no rendering, no clipping: hidden text counts, see
// package pagetext), with the fonts of font.go.

// Bounds of reading one page's text (see the package doc).
const (
	maxTextOps        = 4 << 20  // operators interpreted, form XObjects' included
	maxPageGlyphs     = 1 << 19  // glyphs drawn, in the zone or not
	maxPageImages     = 1 << 16  // images drawn
	maxFormDepth      = 16       // form XObjects drawn inside each other
	maxSaveDepth      = 1024     // q nesting
	maxFormCacheBytes = 16 << 20 // decoded form XObjects kept per document
	maxXObjectsCached = 1 << 14
)

// matrix is a PDF transformation [a b c d e f]: (x, y) goes to
// (a x + c y + e, b x + d y + f).
type matrix [6]float64

var identity = matrix{1, 0, 0, 1, 0, 0}

// mul returns m then n: m × n.
func (m matrix) mul(n matrix) matrix {
	return matrix{
		m[0]*n[0] + m[1]*n[2], m[0]*n[1] + m[1]*n[3],
		m[2]*n[0] + m[3]*n[2], m[2]*n[1] + m[3]*n[3],
		m[4]*n[0] + m[5]*n[2] + n[4], m[4]*n[1] + m[5]*n[3] + n[5],
	}
}

// displayMatrix maps a page's user space to points from the top-left
// corner of the page as displayed: its box's origin to 0, turned by
// /Rotate, scaled by /UserUnit, y down.
func displayMatrix(info PageInfo) matrix {
	box, u := info.Box, info.UserUnit
	w, h := box[2]-box[0], box[3]-box[1]
	var m matrix
	switch info.Rotate {
	case 90:
		m = matrix{0, -1, 1, 0, -box[1], w + box[0]}
	case 180:
		m = matrix{-1, 0, 0, -1, w + box[0], h + box[1]}
	case 270:
		m = matrix{0, 1, -1, 0, h + box[1], -box[0]}
	default:
		m = matrix{1, 0, 0, 1, -box[0], -box[1]}
	}
	for k := range m {
		m[k] *= u
	}
	_, H := info.Size()
	return matrix{m[0], -m[1], m[2], -m[3], m[4], H - m[5]}
}

// textCache is what a Reader keeps for reading text: fonts and form
// XObjects by object number, and buffers reused from page to page.
type textCache struct {
	fonts     map[int64]*font
	fontBytes int
	fontLoads int // fonts read, for tests of the caches
	xobjs     map[int64]*xobject
	formBytes int
	parsers   []*contentParser // by form depth
	in        interp
	content   []byte // the page's content, decoded
	flate     flateReuse
}

func (d *Reader) textCache() *textCache {
	if d.text == nil {
		d.text = &textCache{fonts: map[int64]*font{}, xobjs: map[int64]*xobject{}}
	}
	return d.text
}

// xobject is an XObject as drawing it needs.
type xobject struct {
	num    int64
	image  bool
	form   bool
	matrix matrix
	res    object // a form's /Resources, unresolved; nil: the page's
	data   []byte // a form's content, decoded
	err    error  // why a form cannot be drawn
}

func (d *Reader) xobjectFor(o object) *xobject {
	tc := d.textCache()
	r, isRef := o.(ref)
	if isRef {
		if x, ok := tc.xobjs[r.num]; ok {
			return x
		}
	}
	x := &xobject{num: r.num}
	if s, ok := d.resolve(o).(*stream); ok {
		switch sub, _ := d.resolve(s.dict["Subtype"]).(pdfName); sub {
		case "Image":
			x.image = true
		case "Form":
			x.form = true
			x.matrix = identity
			if a, ok := d.resolve(s.dict["Matrix"]).(array); ok && len(a) == 6 {
				var m matrix
				good := true
				for i := range a {
					m[i], ok = number(d.resolve(a[i]))
					good = good && ok
				}
				if good {
					x.matrix = m
				}
			}
			x.res = s.dict["Resources"]
			data, err := d.streamData(s, maxStreamBytes)
			if err != nil {
				x.err = prefixed(fmt.Sprintf("form XObject %d: ", s.num), err)
			}
			x.data = data
		}
	}
	if isRef {
		if tc.formBytes+len(x.data) > maxFormCacheBytes || len(tc.xobjs) >= maxXObjectsCached {
			clear(tc.xobjs)
			tc.formBytes = 0
		}
		tc.xobjs[r.num] = x
		tc.formBytes += len(x.data)
	}
	return x
}

// resources are a content stream's resources, their subdictionaries
// resolved as they are first needed.
type resources struct {
	d                            dict
	fonts, xobjs, spaces, states dict
	got                          uint8
	direct                       map[string]*font // fonts that are direct objects, read once here
}

func (in *interp) sub(res *resources, key pdfName, bit uint8, out *dict) dict {
	if res.got&bit == 0 {
		res.got |= bit
		*out, _ = in.d.resolve(res.d[key]).(dict)
	}
	return *out
}

// gstate is the graphics state the text reader follows: the CTM (to
// display space), the text state, and whether the colours are white.
type gstate struct {
	ctm                      matrix
	font                     *font
	fontSize, tc, tw, th, tl float64
	rise                     float64
	tr                       int
	fillWhite, strokeWhite   bool
	fillClear, strokeClear   bool // alpha 0 (ExtGState /ca, /CA)
	fillN, strokeN           int8 // components of the colour space: 1, 3, 4; 0 other
}

// interp interprets the content of one page.
type interp struct {
	d       *Reader
	p       *pagetext.Page
	zone    pagetext.Rect
	hasZone bool
	ops     int
	glyphs  int
	gs      gstate
	stack   []gstate
	tm, tlm matrix
	trm     matrix // tm × ctm
	trmOK   bool
	forms   []int64 // form XObjects being drawn, for cycles
	err     error
}

// PageText reads the text of page i (0-based) into p, which it resets
// first: the page's size as displayed, every character drawn with its
// box, and the boxes of the raster images drawn. With a zone, only the
// characters whose box's centre lies in it, and the images that overlap
// it, are kept: the page is still interpreted whole, but the rest costs
// little. Coordinates are points from the top-left corner of the page
// as displayed (package pagetext).
//
// The page gets its own Limits.Timeout. A page over a bound (see the
// package doc), or whose content cannot be decoded, is an error that
// says so and where; p then holds what was read before. Unknown or
// misused operators are skipped, as readers do; a font that cannot be
// read draws with fallback widths and U+FFFD.
func (d *Reader) PageText(i int, zone *pagetext.Rect, p *pagetext.Page) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = malformed("page %d: its text could not be read (internal error: %v)", i+1, r)
		}
	}()
	return d.pageText(i, zone, p)
}

// pageText is PageText without the recover, for tests and fuzzing.
func (d *Reader) pageText(i int, zone *pagetext.Rect, p *pagetext.Page) error {
	p.Reset()
	if i < 0 || i >= len(d.pages) {
		return fmt.Errorf("pdf: page %d of a document of %d pages", i+1, len(d.pages))
	}
	d.beginPage()
	where := func(err error) error { return prefixed(fmt.Sprintf("page %d: ", i+1), err) }
	pg, err := d.page(i)
	if err != nil {
		return where(err)
	}
	p.Width, p.Height = pg.info.Size()
	tc := d.textCache()
	data, err := d.textContent(pg, tc)
	if err != nil {
		return where(err)
	}
	in := &tc.in
	*in = interp{d: d, p: p, stack: in.stack[:0], forms: in.forms[:0]}
	if zone != nil {
		in.zone, in.hasZone = *zone, true
	}
	in.gs = gstate{ctm: displayMatrix(pg.info), th: 1, fillN: 1, strokeN: 1}
	res := &resources{}
	res.d, _ = d.resolve(pg.res).(dict)
	if err := in.run(data, res, 0, "content"); err != nil {
		return where(err)
	}
	return nil
}

// maxKeptBuffer: a content buffer larger than this is not kept for the
// next page.
const maxKeptBuffer = 8 << 20

// textContent is contents into the cache's buffer, with its reused
// decompressor.
func (d *Reader) textContent(pg *page, tc *textCache) ([]byte, error) {
	buf := tc.content[:0]
	for _, s := range d.contentStreams(pg) {
		data, err := d.streamDataInto(buf, s, maxStreamBytes, &tc.flate)
		if err != nil {
			return nil, prefixed(fmt.Sprintf("PDF content stream %d: ", s.num), err)
		}
		if len(data) > maxStreamBytes {
			return nil, limitErr("a PDF page's content decodes to more than %d bytes", maxStreamBytes)
		}
		buf = append(data, '\n')
	}
	if cap(buf) <= maxKeptBuffer {
		tc.content = buf
	} else {
		tc.content = nil
	}
	return buf, nil
}

func (in *interp) parser(depth int) *contentParser {
	tc := in.d.text
	for len(tc.parsers) <= depth {
		tc.parsers = append(tc.parsers, &contentParser{})
	}
	return tc.parsers[depth]
}

// run interprets a content stream (the page's, or a form's at depth).
func (in *interp) run(data []byte, res *resources, depth int, what string) error {
	ps := in.parser(depth)
	ps.reset(data)
	base := len(in.stack)
	at := func() string { return fmt.Sprintf("%s at byte %d", what, ps.lx.pos) }
	var v [6]float64
	for {
		op, ok := ps.next()
		if !ok {
			return nil
		}
		in.ops++
		if in.ops > maxTextOps {
			return limitErr("%s: more than %d operators on the page", at(), maxTextOps)
		}
		if err := in.d.dl.Check(); err != nil {
			return err
		}
		if ps.tooLarge {
			return limitErr("%s: an array of more than %d elements", at(), maxArrayElems)
		}
		gs := &in.gs
		switch string(op) {
		case "q":
			if len(in.stack) >= maxSaveDepth {
				return limitErr("%s: graphics states saved (q) more than %d deep", at(), maxSaveDepth)
			}
			in.stack = append(in.stack, *gs)
		case "Q":
			if len(in.stack) > base {
				*gs = in.stack[len(in.stack)-1]
				in.stack = in.stack[:len(in.stack)-1]
				in.trmOK = false
			}
		case "cm":
			if ps.nums(v[:6]) {
				gs.ctm = matrix(v).mul(gs.ctm)
				in.trmOK = false
			}
		case "BT":
			in.tm, in.tlm, in.trmOK = identity, identity, false
		case "Tf":
			size, ok1 := ps.num(1)
			if len(ps.ops) >= 2 && ps.ops[len(ps.ops)-2].kind == ctName && ok1 {
				gs.font = in.fontNamed(res, ps.bytesOf(ps.ops[len(ps.ops)-2]))
				gs.fontSize = size
			}
		case "Td":
			if ps.nums(v[:2]) {
				in.td(v[0], v[1])
			}
		case "TD":
			if ps.nums(v[:2]) {
				gs.tl = -v[1]
				in.td(v[0], v[1])
			}
		case "Tm":
			if ps.nums(v[:6]) {
				in.tm, in.tlm, in.trmOK = matrix(v), matrix(v), false
			}
		case "T*":
			in.td(0, -gs.tl)
		case "TL":
			if x, ok := ps.num(1); ok {
				gs.tl = x
			}
		case "Tc":
			if x, ok := ps.num(1); ok {
				gs.tc = x
			}
		case "Tw":
			if x, ok := ps.num(1); ok {
				gs.tw = x
			}
		case "Tz":
			if x, ok := ps.num(1); ok {
				gs.th = x / 100
			}
		case "Ts":
			if x, ok := ps.num(1); ok {
				gs.rise = x
			}
		case "Tr":
			if x, ok := ps.num(1); ok {
				gs.tr = int(math.Max(0, math.Min(7, x)))
			}
		case "Tj":
			if o, ok := ps.last(ctStr); ok {
				in.show(ps.bytesOf(o))
			}
		case "'":
			in.td(0, -gs.tl)
			if o, ok := ps.last(ctStr); ok {
				in.show(ps.bytesOf(o))
			}
		case "\"":
			o, ok := ps.last(ctStr)
			aw, ok2 := ps.num(3)
			ac, ok3 := ps.num(2)
			if ok && ok2 && ok3 {
				gs.tw, gs.tc = aw, ac
				in.td(0, -gs.tl)
				in.show(ps.bytesOf(o))
			}
		case "TJ":
			if o, ok := ps.last(ctArr); ok {
				for _, e := range ps.arr[o.s0:o.s1] {
					switch e.kind {
					case ctStr:
						in.show(ps.bytesOf(e))
					case ctNum:
						in.adjust(e.num)
					}
					if in.err != nil {
						break
					}
				}
			}
		case "g", "G", "rg", "RG", "k", "K":
			in.deviceColour(op, ps)
		case "cs", "CS":
			if o, ok := ps.last(ctName); ok {
				n := in.colourSpace(res, ps.bytesOf(o))
				if op[0] == 'c' {
					gs.fillN, gs.fillWhite = n, false
				} else {
					gs.strokeN, gs.strokeWhite = n, false
				}
			}
		case "sc", "scn":
			gs.fillWhite = white(gs.fillN, ps)
		case "SC", "SCN":
			gs.strokeWhite = white(gs.strokeN, ps)
		case "gs":
			if o, ok := ps.last(ctName); ok {
				in.extGState(res, ps.bytesOf(o))
			}
		case "Do":
			if o, ok := ps.last(ctName); ok {
				if err := in.do(res, ps.bytesOf(o), depth); err != nil {
					return err
				}
			}
		case "BI":
			in.inlineImage(ps)
		}
		if in.err != nil {
			err := in.err
			in.err = nil
			return prefixed(at()+": ", err)
		}
	}
}

// td moves to the start of the next line, offset from the current
// line's start.
func (in *interp) td(tx, ty float64) {
	in.tlm = matrix{1, 0, 0, 1, tx, ty}.mul(in.tlm)
	in.tm, in.trmOK = in.tlm, false
}

func (in *interp) fontNamed(res *resources, name []byte) *font {
	fonts := in.sub(res, "Font", 1, &res.fonts)
	o, ok := fonts[pdfName(name)]
	if !ok {
		return missingFont
	}
	if _, isRef := o.(ref); isRef {
		return in.d.fontFor(o)
	}
	// a direct font dictionary: the document's cache cannot key it, so
	// it is kept for these resources (a page may select it often)
	if f, ok := res.direct[string(name)]; ok {
		return f
	}
	f := in.d.fontFor(o)
	if res.direct == nil {
		res.direct = map[string]*font{}
	}
	res.direct[string(name)] = f
	return f
}

// invisible tells whether text drawn now cannot be seen: render mode 3
// (nothing) or 7 (clip only), or painted only in white or with alpha 0.
func (in *interp) invisible() bool {
	gs := &in.gs
	fill, stroke := gs.fillWhite || gs.fillClear, gs.strokeWhite || gs.strokeClear
	switch gs.tr {
	case 3, 7:
		return true
	case 1, 5:
		return stroke
	case 2, 6:
		return fill && stroke
	}
	return fill
}

// extGState follows an ExtGState's fill and stroke alpha (/ca, /CA): 0
// paints nothing.
func (in *interp) extGState(res *resources, name []byte) {
	states := in.sub(res, "ExtGState", 8, &res.states)
	g, ok := in.d.resolve(states[pdfName(name)]).(dict)
	if !ok {
		return
	}
	if v, ok := number(in.d.resolve(g["ca"])); ok {
		in.gs.fillClear = v <= 1-whiteLevel
	}
	if v, ok := number(in.d.resolve(g["CA"])); ok {
		in.gs.strokeClear = v <= 1-whiteLevel
	}
}

// show draws a string in the current font.
func (in *interp) show(s []byte) {
	gs := &in.gs
	f := gs.font
	if f == nil {
		f = missingFont
	}
	if f.err != nil {
		in.err = f.err
		return
	}
	if !in.trmOK {
		in.trm, in.trmOK = in.tm.mul(gs.ctm), true
	}
	inv := in.invisible()
	if !f.composite {
		for _, c := range s {
			if !in.glyph(f, uint32(c), f.widths[c], c == ' ', inv) {
				return
			}
		}
		return
	}
	for len(s) > 0 {
		code, n := f.code(s)
		s = s[n:]
		if !in.glyph(f, code, f.width(f.cid(code)), n == 1 && code == ' ', inv) {
			return
		}
	}
}

// glyph draws one glyph of advance w (per unit of font size) at the
// current point, keeps it if it is in the zone, and moves on. It returns
// false past the glyph bound (in.err set).
func (in *interp) glyph(f *font, code uint32, w float64, space, inv bool) bool {
	in.glyphs++
	if in.glyphs > maxPageGlyphs {
		in.err = limitErr("more than %d glyphs on the page", maxPageGlyphs)
		return false
	}
	gs := &in.gs
	fs, m := gs.fontSize, &in.trm
	if f.vertical {
		in.vglyph(f, code, w, space, inv)
		return true
	}
	gw := w * fs * gs.th
	y0 := gs.rise + f.descent*fs
	y1 := gs.rise + f.ascent*fs
	cx, cy := gw/2, (y0+y1)/2
	x := cx*m[0] + cy*m[2] + m[4]
	y := cx*m[1] + cy*m[3] + m[5]
	if !in.hasZone || in.zone.Contains(x, y) {
		in.keep(f, code, gw*m[0], gw*m[1], (y1-y0)*m[2], (y1-y0)*m[3],
			y0*m[2]+m[4], y0*m[3]+m[5], fs*gs.th*m[0], fs*gs.th*m[1], inv)
	}
	tx := w*fs + gs.tc
	if space {
		tx += gs.tw
	}
	tx *= gs.th
	in.tm[4] += tx * in.tm[0]
	in.tm[5] += tx * in.tm[1]
	m[4] += tx * m[0]
	m[5] += tx * m[1]
	return true
}

// vglyph is glyph in vertical writing: the glyph hangs centred below the
// current point (its position vector), which moves down.
func (in *interp) vglyph(f *font, code uint32, w0 float64, space, inv bool) {
	gs := &in.gs
	fs, m := gs.fontSize, &in.trm
	w1y, vx, vy := f.vmetrics(f.cid(code), w0)
	x0, x1 := -vx*fs, (w0-vx)*fs
	y0, y1 := gs.rise+(f.descent-vy)*fs, gs.rise+(f.ascent-vy)*fs
	cx, cy := (x0+x1)/2, (y0+y1)/2
	x := cx*m[0] + cy*m[2] + m[4]
	y := cx*m[1] + cy*m[3] + m[5]
	if !in.hasZone || in.zone.Contains(x, y) {
		in.keep(f, code, (x1-x0)*m[0], (x1-x0)*m[1], (y1-y0)*m[2], (y1-y0)*m[3],
			x0*m[0]+y0*m[2]+m[4], x0*m[1]+y0*m[3]+m[5], -fs*m[2], -fs*m[3], inv)
	}
	ty := w1y*fs + gs.tc
	if space {
		ty += gs.tw
	}
	in.tm[4] += ty * in.tm[2]
	in.tm[5] += ty * in.tm[3]
	m[4] += ty * m[2]
	m[5] += ty * m[3]
}

// keep appends a glyph whose box is the parallelogram at (ox, oy) with
// sides (ax, ay) along the baseline and (ux, uy) up, writing towards
// (dx, dy).
func (in *interp) keep(f *font, code uint32, ax, ay, ux, uy, ox, oy, dx, dy float64, inv bool) {
	var t string
	if f.composite {
		t = f.textOf(code)
	} else {
		t = f.text[code]
	}
	if t == "" {
		return // mapped to no text
	}
	x0 := ox + min(0, ax) + min(0, ux)
	x1 := ox + max(0, ax) + max(0, ux)
	y0 := oy + min(0, ay) + min(0, uy)
	y1 := oy + max(0, ay) + max(0, uy)
	m := &in.trm
	size := math.Abs(in.gs.fontSize) * math.Hypot(m[2], m[3])
	if !finite(x0) || !finite(x1) || !finite(y0) || !finite(y1) || !finite(size) {
		return
	}
	dir := 0
	switch {
	case math.Abs(dx) >= math.Abs(dy):
		if dx < 0 {
			dir = 2
		}
	case dy > 0:
		dir = 1
	default:
		dir = 3
	}
	in.p.Chars = append(in.p.Chars, pagetext.Char{Text: t, X0: x0, Y0: y0, X1: x1, Y1: y1, Size: size, Dir: dir, Invisible: inv})
}

func finite(v float64) bool { return v-v == 0 }

// adjust moves the current point by a TJ number (thousandths of the
// font size, backwards).
func (in *interp) adjust(n float64) {
	gs := &in.gs
	if !in.trmOK {
		in.trm, in.trmOK = in.tm.mul(gs.ctm), true
	}
	f := gs.font
	if f != nil && f.vertical {
		ty := -n / 1000 * gs.fontSize
		in.tm[4] += ty * in.tm[2]
		in.tm[5] += ty * in.tm[3]
		in.trm[4] += ty * in.trm[2]
		in.trm[5] += ty * in.trm[3]
		return
	}
	tx := -n / 1000 * gs.fontSize * gs.th
	in.tm[4] += tx * in.tm[0]
	in.tm[5] += tx * in.tm[1]
	in.trm[4] += tx * in.trm[0]
	in.trm[5] += tx * in.trm[1]
}

// whiteLevel: a colour at least this light (or, in CMYK, this little
// ink) is white.
const whiteLevel = 0.999

func (in *interp) deviceColour(op []byte, ps *contentParser) {
	gs := &in.gs
	var n int8
	switch op[0] {
	case 'g', 'G':
		n = 1
	case 'r', 'R':
		n = 3
	default:
		n = 4
	}
	w := white(n, ps)
	if op[len(op)-1] >= 'a' {
		gs.fillN, gs.fillWhite = n, w
	} else {
		gs.strokeN, gs.strokeWhite = n, w
	}
}

// white tells whether the last operands are white in a colour space of n
// components (0: a space the reader does not follow, never white).
func white(n int8, ps *contentParser) bool {
	var v [4]float64
	if n <= 0 || !ps.nums(v[:n]) {
		return false
	}
	switch n {
	case 1:
		return v[0] >= whiteLevel
	case 3:
		return v[0] >= whiteLevel && v[1] >= whiteLevel && v[2] >= whiteLevel
	case 4:
		return v[0] <= 1-whiteLevel && v[1] <= 1-whiteLevel && v[2] <= 1-whiteLevel && v[3] <= 1-whiteLevel
	}
	return false
}

// colourSpace returns the number of components of a colour space named
// by cs: 1, 3 or 4 for the device spaces and those like them (ICCBased
// by its /N, CalGray, CalRGB), 0 for the rest.
func (in *interp) colourSpace(res *resources, name []byte) int8 {
	if n := deviceComponents(name); n != 0 {
		return n
	}
	spaces := in.sub(res, "ColorSpace", 4, &res.spaces)
	switch cs := in.d.resolve(spaces[pdfName(name)]).(type) {
	case pdfName:
		return deviceComponents([]byte(cs))
	case array:
		if len(cs) == 0 {
			return 0
		}
		switch k, _ := in.d.resolve(cs[0]).(pdfName); k {
		case "CalGray":
			return 1
		case "CalRGB":
			return 3
		case "ICCBased":
			if len(cs) > 1 {
				if s, ok := in.d.resolve(cs[1]).(*stream); ok {
					if n, ok := in.d.resolve(s.dict["N"]).(int64); ok && (n == 1 || n == 3 || n == 4) {
						return int8(n)
					}
				}
			}
		}
	}
	return 0
}

func deviceComponents(name []byte) int8 {
	switch string(name) {
	case "DeviceGray", "G":
		return 1
	case "DeviceRGB", "RGB":
		return 3
	case "DeviceCMYK", "CMYK":
		return 4
	}
	return 0
}

// do draws an XObject: a form's content in its matrix and resources (a
// form already being drawn is skipped: a cycle), an image's box.
func (in *interp) do(res *resources, name []byte, depth int) error {
	xobjs := in.sub(res, "XObject", 2, &res.xobjs)
	o, ok := xobjs[pdfName(name)]
	if !ok {
		return nil
	}
	x := in.d.xobjectFor(o)
	switch {
	case x.image:
		in.image()
		return nil
	case !x.form:
		return nil
	}
	if x.err != nil {
		return x.err
	}
	for _, n := range in.forms {
		if n == x.num && n != 0 {
			return nil
		}
	}
	if depth+1 > maxFormDepth {
		return limitErr("form XObject %d: forms drawn inside each other more than %d deep", x.num, maxFormDepth)
	}
	saved, savedTm, savedTlm, top := in.gs, in.tm, in.tlm, len(in.stack)
	in.gs.ctm = x.matrix.mul(in.gs.ctm)
	in.trmOK = false
	fres := res
	if x.res != nil {
		fres = &resources{}
		fres.d, _ = in.d.resolve(x.res).(dict)
	}
	in.forms = append(in.forms, x.num)
	err := in.run(x.data, fres, depth+1, fmt.Sprintf("form XObject %d", x.num))
	in.forms = in.forms[:len(in.forms)-1]
	in.gs, in.tm, in.tlm, in.stack = saved, savedTm, savedTlm, in.stack[:top]
	in.trmOK = false
	return err
}

// image keeps the box of an image drawn now: the unit square in the CTM.
func (in *interp) image() {
	if len(in.p.Images) >= maxPageImages {
		in.err = limitErr("more than %d images on the page", maxPageImages)
		return
	}
	m := &in.gs.ctm
	x0 := m[4] + min(0, m[0]) + min(0, m[2])
	x1 := m[4] + max(0, m[0]) + max(0, m[2])
	y0 := m[5] + min(0, m[1]) + min(0, m[3])
	y1 := m[5] + max(0, m[1]) + max(0, m[3])
	if !finite(x0) || !finite(x1) || !finite(y0) || !finite(y1) {
		return
	}
	r := pagetext.Rect{X0: x0, Y0: y0, X1: x1, Y1: y1}
	if in.hasZone && !in.zone.Intersects(r) {
		return
	}
	in.p.Images = append(in.p.Images, r)
}

// inlineImage reads an inline image after BI: its dictionary up to ID,
// then passes over its data to EI. The data's length is known when the
// dictionary gives it (/L, /Length), or when the image is not filtered
// and its size and colour space are known; otherwise EI is searched for
// (after white space, followed by white space and what looks like
// content). Without an EI the image takes the rest of the stream.
func (in *interp) inlineImage(ps *contentParser) {
	lx := &ps.lx
	var (
		w, h, bpc, comps float64
		length           = -1.0
		filtered, mask   bool
		key              string
	)
	set := func(k string, num float64, name string) {
		switch k {
		case "W", "Width":
			w = num
		case "H", "Height":
			h = num
		case "BPC", "BitsPerComponent":
			bpc = num
		case "L", "Length":
			length = num
		case "CS", "ColorSpace":
			switch name {
			case "G", "DeviceGray", "I", "Indexed":
				comps = 1
			case "RGB", "DeviceRGB":
				comps = 3
			case "CMYK", "DeviceCMYK":
				comps = 4
			}
		case "F", "Filter":
			filtered = filtered || name != ""
		case "IM", "ImageMask":
			mask = name == "true"
		}
	}
	for {
		if lx.pos >= len(lx.data) {
			in.image()
			return
		}
		mark := len(lx.sbuf)
		t := lx.token()
		switch t {
		case ctEOF:
			in.image()
			return
		case ctName:
			if key == "" {
				key = string(lx.str())
			} else {
				set(key, 0, string(lx.str()))
				key = ""
			}
		case ctNum:
			set(key, lx.num, "")
			key = ""
		case ctOp:
			switch string(lx.kw) {
			case "ID":
				in.skipImageData(lx, w, h, bpc, comps, length, filtered, mask)
				in.image()
				return
			case "true", "false":
				set(key, 0, string(lx.kw))
				key = ""
			default:
				if key == "" {
					// an operator where a key belongs: the image is
					// broken; the operator is read as one
					lx.pos -= len(lx.kw)
					return
				}
				key = ""
			}
		case ctArrOpen:
			// a filter array (filtered unless empty), a colour space
			// array ([/Indexed base hival lookup]: one component), or
			// another array: its first element, then the rest
			first := lx.token()
			switch {
			case first == ctArrClose:
			case key == "F" || key == "Filter":
				filtered = true
			case (key == "CS" || key == "ColorSpace") && first == ctName && (string(lx.str()) == "I" || string(lx.str()) == "Indexed"):
				comps = 1
			}
			if first == ctArrOpen || first == ctDictOpen {
				skipArray(lx)
			}
			if first != ctArrClose && first != ctEOF {
				skipArray(lx)
			}
			key = ""
		case ctDictOpen:
			skipArray(lx)
			key = ""
		default:
			key = ""
		}
		lx.sbuf = lx.sbuf[:mark]
	}
}

func (in *interp) skipImageData(lx *clexer, w, h, bpc, comps, length float64, filtered, mask bool) {
	data := lx.data
	start := lx.pos
	if start < len(data) && isSpace(data[start]) {
		start++
	}
	rest := float64(len(data) - start)
	if length >= 0 && length <= rest {
		if end, ok := eiAt(data, start+int(length)); ok {
			lx.pos = end
			return
		}
	}
	if mask {
		comps, bpc = 1, 1
	}
	if !filtered && w > 0 && h > 0 && bpc > 0 && comps > 0 {
		row := math.Ceil(w * comps * bpc / 8)
		if n := row * h; n <= rest {
			if end, ok := eiAt(data, start+int(n)); ok {
				lx.pos = end
				return
			}
		}
	}
	for i := start; ; {
		k := bytes.Index(data[i:], []byte("EI"))
		if k < 0 {
			lx.pos = len(data)
			return
		}
		at := i + k
		if at > start && isSpace(data[at-1]) && (at+2 == len(data) || !regular[data[at+2]]) && looksLikeContent(data[at+2:]) {
			lx.pos = at + 2
			return
		}
		i = at + 1
	}
}

// eiAt tells whether EI follows at i (after white space), and where it
// ends.
func eiAt(data []byte, i int) (int, bool) {
	for i < len(data) && isSpace(data[i]) {
		i++
	}
	if i+2 <= len(data) && data[i] == 'E' && data[i+1] == 'I' && (i+2 == len(data) || !regular[data[i+2]]) {
		return i + 2, true
	}
	return 0, false
}

// looksLikeContent tells whether the bytes after a candidate EI look like
// content (text), not more binary image data.
func looksLikeContent(b []byte) bool {
	for _, c := range b[:min(len(b), 32)] {
		if c > '~' || c < ' ' && !isSpace(c) {
			return false
		}
	}
	return true
}
