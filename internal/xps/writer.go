package xps

import (
	"archive/zip"
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"image/png"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/lodge-mail/lodge/internal/pagetext"
)

// Writer writes an XPS package: one FixedDocumentSequence, one
// FixedDocument and its FixedPages, the fonts used (obfuscated, as
// ECMA-388 §9.1.7.3 has it) and images. It exists for tests and test
// corpora: what it writes opens in libgxps (xpstopdf) and in Open.
//
// Pages are written in order: a page is finished when the next one starts
// or the Writer closes. Errors are kept and returned by Close.
type Writer struct {
	// OpenXPS, set before the first Page, writes the OpenXPS (ECMA-388)
	// namespaces and relationship types instead of Microsoft XPS 1.0's.
	OpenXPS bool

	zw      *zip.Writer
	started bool
	pages   int
	open    *Page
	fonts   map[*Font]string // part names of the fonts written
	images  int
	err     error
}

// Matrix is an affine transform x' = A·x + C·y + E, y' = B·x + D·y + F in
// points (its translation E, F in points; the Writer converts it to XPS
// units).
type Matrix struct{ A, B, C, D, E, F float64 }

// Identity is the transform that changes nothing.
var Identity = Matrix{A: 1, D: 1}

// TextOptions are the optional attributes of a Glyphs element.
type TextOptions struct {
	// Colour is the Fill as XPS writes it, "#AARRGGBB" or "#RRGGBB";
	// empty is black.
	Colour string
	// Transform, when not nil, is the Glyphs element's RenderTransform.
	Transform *Matrix
	// NoAdvances writes Indices with glyph indices only, so that a
	// reader takes advances from the font's hmtx table.
	NoAdvances bool
	// NoIndices writes no Indices attribute at all: only UnicodeString.
	NoIndices bool
	// BidiLevel is written when odd (right to left): the glyphs are laid
	// out from the origin leftwards, in the order of the text.
	BidiLevel int
}

const (
	nsXPS        = "http://schemas.microsoft.com/xps/2005/06"
	nsOpenXPS    = "http://schemas.openxps.org/oxps/v1.0"
	nsRels       = "http://schemas.openxmlformats.org/package/2006/relationships"
	nsCT         = "http://schemas.openxmlformats.org/package/2006/content-types"
	relFixedRep  = "/fixedrepresentation"
	relRequired  = "/required-resource"
	ctObfuscated = "application/vnd.ms-package.obfuscated-opentype"
)

// NewWriter returns a Writer that writes the package to out.
func NewWriter(out io.Writer) *Writer {
	return &Writer{zw: zip.NewWriter(out), fonts: map[*Font]string{}}
}

func (w *Writer) ns() string {
	if w.OpenXPS {
		return nsOpenXPS
	}
	return nsXPS
}

func (w *Writer) setErr(err error) {
	if w.err == nil && err != nil {
		w.err = err
	}
}

// create starts a part, writing [Content_Types].xml first.
func (w *Writer) create(name string, body []byte) {
	if w.err != nil {
		return
	}
	if !w.started {
		w.started = true
		w.put("[Content_Types].xml", []byte(`<?xml version="1.0" encoding="UTF-8"?>`+
			`<Types xmlns="`+nsCT+`">`+
			`<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>`+
			`<Default Extension="fdseq" ContentType="application/vnd.ms-package.xps-fixeddocumentsequence+xml"/>`+
			`<Default Extension="fdoc" ContentType="application/vnd.ms-package.xps-fixeddocument+xml"/>`+
			`<Default Extension="fpage" ContentType="application/vnd.ms-package.xps-fixedpage+xml"/>`+
			`<Default Extension="odttf" ContentType="`+ctObfuscated+`"/>`+
			`<Default Extension="png" ContentType="image/png"/>`+
			`</Types>`))
	}
	w.put(name, body)
}

func (w *Writer) put(name string, body []byte) {
	if w.err != nil {
		return
	}
	f, err := w.zw.Create(name)
	if err == nil {
		_, err = f.Write(body)
	}
	w.setErr(err)
}

// Page starts a new page of the given size in points, finishing the
// previous one.
func (w *Writer) Page(widthPt, heightPt float64) *Page {
	w.finishPage()
	w.pages++
	p := &Page{w: w, n: w.pages, width: widthPt, height: heightPt}
	p.root.page = p
	w.open = p
	return p
}

// Close finishes the last page and writes the document's structure.
func (w *Writer) Close() error {
	w.finishPage()
	if w.pages == 0 {
		w.setErr(errors.New("xps: a document needs at least one page"))
	}
	var fdoc strings.Builder
	fdoc.WriteString(`<FixedDocument xmlns="` + w.ns() + `">`)
	for i := 1; i <= w.pages; i++ {
		fmt.Fprintf(&fdoc, `<PageContent Source="Pages/%d.fpage"/>`, i)
	}
	fdoc.WriteString(`</FixedDocument>`)
	w.create("Documents/1/FixedDocument.fdoc", []byte(fdoc.String()))
	w.create("FixedDocumentSequence.fdseq", []byte(`<FixedDocumentSequence xmlns="`+w.ns()+`">`+
		`<DocumentReference Source="/Documents/1/FixedDocument.fdoc"/></FixedDocumentSequence>`))
	w.create("_rels/.rels", []byte(`<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="`+nsRels+`">`+
		`<Relationship Id="R0" Type="`+w.ns()+relFixedRep+`" Target="/FixedDocumentSequence.fdseq"/></Relationships>`))
	if err := w.zw.Close(); w.err == nil {
		w.err = err
	}
	return w.err
}

func (w *Writer) finishPage() {
	p := w.open
	if p == nil {
		return
	}
	w.open = nil
	var b bytes.Buffer
	fmt.Fprintf(&b, `<FixedPage xmlns="%s" xmlns:x="http://schemas.microsoft.com/xps/2005/06/resourcedictionary-key" Width="%s" Height="%s" xml:lang="en-AU">`,
		w.ns(), num(p.width/ptPerUnit), num(p.height/ptPerUnit))
	p.root.writeItems(&b)
	b.WriteString(`</FixedPage>`)
	w.create(fmt.Sprintf("Documents/1/Pages/%d.fpage", p.n), b.Bytes())
	if len(p.resources) > 0 {
		var r strings.Builder
		r.WriteString(`<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="` + nsRels + `">`)
		for i, res := range p.resources {
			fmt.Fprintf(&r, `<Relationship Id="R%d" Type="%s%s" Target="%s"/>`, i, w.ns(), relRequired, res)
		}
		r.WriteString(`</Relationships>`)
		w.create(fmt.Sprintf("Documents/1/Pages/_rels/%d.fpage.rels", p.n), []byte(r.String()))
	}
}

// fontPart returns the part name of f in the package, writing it the
// first time: obfuscated with a random GUID that names it.
func (w *Writer) fontPart(f *Font) string {
	if name, ok := w.fonts[f]; ok {
		return name
	}
	var g [16]byte
	rand.Read(g[:])
	guid := fmt.Sprintf("%X-%X-%X-%X-%X", g[0:4], g[4:6], g[6:8], g[8:10], g[10:16])
	name := "/Resources/Fonts/" + guid + ".odttf"
	data := bytes.Clone(f.data)
	obfuscate(data, guidKey(guid))
	w.create(name[1:], data)
	w.fonts[f] = name
	return name
}

// guidKey returns the 16 bytes of a GUID's hex digits in the order they
// are written ("" if there are not 32 of them).
func guidKey(s string) []byte {
	key := make([]byte, 0, 16)
	var hi byte
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		var v byte
		switch {
		case c >= '0' && c <= '9':
			v = c - '0'
		case c >= 'a' && c <= 'f':
			v = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			v = c - 'A' + 10
		default:
			continue
		}
		if n%2 == 0 {
			hi = v
		} else {
			key = append(key, hi<<4|v)
		}
		n++
		if n == 32 {
			return key
		}
	}
	return nil
}

// obfuscate XORs the first 32 bytes of font data with the GUID key read
// backwards, as ECMA-388 §9.1.7.3 has it (the GUID's binary form, bytes
// reversed, which is its written hex digits reversed pairwise; libgxps
// and MuPDF agree). It is its own inverse.
func obfuscate(data, key []byte) {
	for i := 0; i < 32 && i < len(data); i++ {
		data[i] ^= key[15-i%16]
	}
}

// Page is one FixedPage being written. Its methods are its root
// Canvas's.
type Page struct {
	root          Canvas
	w             *Writer
	n             int
	width, height float64
	resources     []string // parts the page requires (fonts, images)
}

// Canvas is a group of elements under one transform (the page, or a
// Canvas element). Its methods add elements in drawing order.
type Canvas struct {
	page      *Page
	transform *Matrix
	items     []item
}

type item struct {
	xml string
	sub *Canvas
}

func (p *Page) require(part string) {
	for _, r := range p.resources {
		if r == part {
			return
		}
	}
	p.resources = append(p.resources, part)
}

// Canvas adds a Canvas element to the page (see Canvas.Canvas).
func (p *Page) Canvas(m Matrix) *Canvas { return p.root.Canvas(m) }

// Text draws text on the page (see Canvas.Text).
func (p *Page) Text(x, y, size float64, f *Font, text string, opt TextOptions) {
	p.root.Text(x, y, size, f, text, opt)
}

// Image draws an image on the page (see Canvas.Image).
func (p *Page) Image(r pagetext.Rect, pngData []byte) { p.root.Image(r, pngData) }

// Rect fills a rectangle on the page (see Canvas.Rect).
func (p *Page) Rect(r pagetext.Rect, colour string) { p.root.Rect(r, colour) }

// Raw adds XML to the page as it is (see Canvas.Raw).
func (p *Page) Raw(xml string) { p.root.Raw(xml) }

// Canvas adds a Canvas element with a RenderTransform and returns it.
func (c *Canvas) Canvas(m Matrix) *Canvas {
	sub := &Canvas{page: c.page, transform: &m}
	c.items = append(c.items, item{sub: sub})
	return sub
}

// Raw adds XML as it is (for tests of what the Writer does not write).
func (c *Canvas) Raw(xml string) { c.items = append(c.items, item{xml: xml}) }

// Text draws text with its first glyph's baseline origin at (x, y) points
// from the page's top-left corner (in the Canvas's coordinates), size
// points to the em: one Glyphs element whose Indices give each rune's
// glyph and advance from font, so that readers need not measure.
func (c *Canvas) Text(x, y, size float64, f *Font, text string, opt TextOptions) {
	w := c.page.w
	if f == nil || text == "" || !utf8.ValidString(text) {
		w.setErr(fmt.Errorf("xps: Text %q: needs a font and valid UTF-8 text", text))
		return
	}
	part := w.fontPart(f)
	c.page.require(part)
	var b strings.Builder
	b.WriteString(`<Glyphs OriginX="` + num(x/ptPerUnit) + `" OriginY="` + num(y/ptPerUnit) +
		`" FontRenderingEmSize="` + num(size/ptPerUnit) + `" FontUri="` + part + `"`)
	us := text
	if strings.HasPrefix(us, "{") {
		us = "{}" + us
	}
	b.WriteString(` UnicodeString="`)
	xmlEscape(&b, us)
	b.WriteString(`"`)
	if !opt.NoIndices {
		b.WriteString(` Indices="`)
		i := 0
		for _, r := range text {
			g := f.glyphFor(r)
			if i > 0 {
				b.WriteByte(';')
			}
			b.WriteString(strconv.Itoa(int(g.index)))
			if !opt.NoAdvances {
				// Two decimals of the 1/100 em unit: 1/10,000 em is
				// below what any printer resolves, and shorter numbers
				// make smaller pages.
				b.WriteString("," + strconv.FormatFloat(math.Round(g.adv*1e4)/100, 'f', -1, 64))
			}
			i++
		}
		b.WriteString(`"`)
	}
	if opt.BidiLevel != 0 {
		b.WriteString(` BidiLevel="` + strconv.Itoa(opt.BidiLevel) + `"`)
	}
	fill := opt.Colour
	if fill == "" {
		fill = "#FF000000"
	}
	b.WriteString(` Fill="` + fill + `"`)
	if opt.Transform != nil {
		b.WriteString(` RenderTransform="` + opt.Transform.xps() + `"`)
	}
	b.WriteString(`/>`)
	c.items = append(c.items, item{xml: b.String()})
}

// Image draws a PNG image filling r (points, in the Canvas's
// coordinates): a Path whose Fill is an ImageBrush.
func (c *Canvas) Image(r pagetext.Rect, pngData []byte) {
	w := c.page.w
	cfg, err := png.DecodeConfig(bytes.NewReader(pngData))
	if err != nil {
		w.setErr(fmt.Errorf("xps: Image: %w", err))
		return
	}
	w.images++
	part := fmt.Sprintf("/Resources/Images/%d.png", w.images)
	w.create(part[1:], pngData)
	c.page.require(part)
	x0, y0, x1, y1 := r.X0/ptPerUnit, r.Y0/ptPerUnit, r.X1/ptPerUnit, r.Y1/ptPerUnit
	c.items = append(c.items, item{xml: fmt.Sprintf(`<Path Data="M %s,%s L %s,%s %s,%s %s,%s Z">`+
		`<Path.Fill><ImageBrush ImageSource="%s" Viewbox="0,0,%d,%d" ViewboxUnits="Absolute" Viewport="%s,%s,%s,%s" ViewportUnits="Absolute" TileMode="None"/></Path.Fill></Path>`,
		num(x0), num(y0), num(x1), num(y0), num(x1), num(y1), num(x0), num(y1),
		part, cfg.Width, cfg.Height, num(x0), num(y0), num(x1-x0), num(y1-y0))})
}

// Rect fills a rectangle (points) with a solid colour "#AARRGGBB".
func (c *Canvas) Rect(r pagetext.Rect, colour string) {
	x0, y0, x1, y1 := r.X0/ptPerUnit, r.Y0/ptPerUnit, r.X1/ptPerUnit, r.Y1/ptPerUnit
	c.items = append(c.items, item{xml: fmt.Sprintf(`<Path Data="M %s,%s L %s,%s %s,%s %s,%s Z" Fill="%s"/>`,
		num(x0), num(y0), num(x1), num(y0), num(x1), num(y1), num(x0), num(y1), colour)})
}

func (c *Canvas) writeItems(b *bytes.Buffer) {
	for _, it := range c.items {
		if it.sub == nil {
			b.WriteString(it.xml)
			continue
		}
		b.WriteString(`<Canvas RenderTransform="` + it.sub.transform.xps() + `">`)
		it.sub.writeItems(b)
		b.WriteString(`</Canvas>`)
	}
}

// xps writes m in XPS units (translation in 1/96 inch).
func (m Matrix) xps() string {
	return num(m.A) + "," + num(m.B) + "," + num(m.C) + "," + num(m.D) + "," + num(m.E/ptPerUnit) + "," + num(m.F/ptPerUnit)
}

// num writes a number as XPS does: shortest decimal, no exponent.
func num(v float64) string {
	v = math.Round(v*1e4) / 1e4 // 1/10,000 unit is far below what anyone sees
	if v == 0 {
		return "0"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

func xmlEscape(b *strings.Builder, s string) {
	for _, r := range s {
		switch r {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '"':
			b.WriteString("&quot;")
		case '\n':
			b.WriteString("&#10;")
		case '\t':
			b.WriteString("&#9;")
		case '\r':
			b.WriteString("&#13;")
		default:
			b.WriteRune(r)
		}
	}
}

// ptPerUnit converts XPS units (1/96 inch) to points (1/72 inch).
const ptPerUnit = 0.75
