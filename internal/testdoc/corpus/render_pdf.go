package corpus

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/lodge-mail/lodge/internal/pdf"
	"github.com/lodge-mail/lodge/internal/testdoc"
)

// Standard fonts by logical font, for the PDF producers.
var stdFontNames = map[font]string{sans: "Helvetica", sansBold: "Helvetica-Bold", serif: "Times-Roman", mono: "Courier"}

// winAnsiString writes s as a PDF literal string in WinAnsiEncoding (the
// corpus's texts are ASCII and Latin-1 letters).
func winAnsiString(b *strings.Builder, s string) {
	b.WriteByte('(')
	for _, r := range s {
		switch {
		case r == '(' || r == ')' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r >= 32 && r < 127:
			b.WriteRune(r)
		case r >= 0xA0 && r <= 0xFF:
			fmt.Fprintf(b, "\\%03o", r)
		default:
			b.WriteByte('?')
		}
	}
	b.WriteByte(')')
}

func num(v float64) string {
	v = math.Round(v*1e4) / 1e4
	if v == 0 {
		return "0"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

func inkOps(b *strings.Builder, k ink) {
	switch k {
	case white:
		b.WriteString("1 g 0 Tr ")
	case invisible:
		b.WriteString("0 g 3 Tr ")
	case grey:
		b.WriteString("0.5 g 0 Tr ")
	default:
		b.WriteString("0 g 0 Tr ")
	}
}

// writerFonts are the fonts internal/pdf's Writer sets itself.
var writerFonts = map[font]pdf.Font{sans: pdf.Helvetica, sansBold: pdf.HelveticaBold, mono: pdf.Courier}

// renderPDFWriter draws pages with internal/pdf's Writer: text in the
// standard fonts it has set directly; text in other fonts, invisible or
// meant for a form, in form XObjects written as streams (their fonts as
// objects of ours); images as image XObjects.
func renderPDFWriter(pages []page) ([]byte, error) {
	var buf bytes.Buffer
	w := pdf.NewWriter(&buf)
	fonts := map[font]pdf.Ref{}
	images := map[image]pdf.Ref{}
	fontRef := func(f font) pdf.Ref {
		if r, ok := fonts[f]; ok {
			return r
		}
		r := w.Alloc()
		w.Object(r, []byte("<< /Type /Font /Subtype /Type1 /BaseFont /"+stdFontNames[f]+" /Encoding /WinAnsiEncoding >>"))
		fonts[f] = r
		return r
	}
	// form writes the texts as a form XObject drawn at scale (1, or 2
	// with the texts set at half size inside a nested form).
	form := func(p page, ts []text, nested bool) pdf.Ref {
		s := 1.0
		if nested {
			s = 0.5
		}
		var b, res strings.Builder
		used := map[font]bool{}
		for _, t := range ts {
			used[t.Font] = true
			b.WriteString("BT ")
			inkOps(&b, t.Ink)
			fmt.Fprintf(&b, "/T%d %s Tf 1 0 0 1 %s %s Tm ", t.Font, num(t.Size*s), num(t.X*s), num((p.H-t.Y)*s))
			winAnsiString(&b, t.S)
			b.WriteString(" Tj ET\n")
		}
		res.WriteString("/Font <<")
		for f := font(0); f < fontCount; f++ {
			if used[f] {
				fmt.Fprintf(&res, " /T%d %d 0 R", f, fontRef(f))
			}
		}
		res.WriteString(" >>")
		inner := w.Alloc()
		w.ContentStream(inner, []byte(fmt.Sprintf("/Type /XObject /Subtype /Form /BBox [0 0 %s %s] /Resources << %s >>", num(p.W*s), num(p.H*s), res.String())), []byte(b.String()))
		if !nested {
			return inner
		}
		outer := w.Alloc()
		w.ContentStream(outer, []byte(fmt.Sprintf("/Type /XObject /Subtype /Form /BBox [0 0 %s %s] /Matrix [2 0 0 2 0 0] /Resources << /XObject << /Fi %d 0 R >> >>", num(p.W*s), num(p.H*s), inner)),
			[]byte("q /Fi Do Q\n"))
		return outer
	}
	var c pdf.Content
	for i, p := range pages {
		if p.Rotate != 0 {
			return nil, fmt.Errorf("page %d: internal/pdf's Writer does not rotate pages", i+1)
		}
		c.Reset()
		for _, bx := range p.Boxes {
			y := p.H - bx.Y - bx.H
			if bx.Image == noImage {
				c.Gray(bx.Grey)
				c.Rect(bx.X, y, bx.W, bx.H)
				c.Fill()
				continue
			}
			ref, ok := images[bx.Image]
			if !ok {
				ras, _, z := imageData(bx.Image)
				cs := "/DeviceRGB"
				if ras.Grey {
					cs = "/DeviceGray"
				}
				ref = w.Alloc()
				w.Stream(ref, []byte(fmt.Sprintf("/Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace %s /BitsPerComponent 8 /Filter /FlateDecode", ras.W, ras.H, cs)), z)
				images[bx.Image] = ref
			}
			c.Save()
			c.Transform(bx.W, 0, 0, bx.H, bx.X, y)
			c.Form(ref)
			c.Restore()
		}
		var inForm, nested []text
		for _, t := range p.Texts {
			f, ok := writerFonts[t.Font]
			switch {
			case t.Font == cipher || t.Font == dejavu || t.Font == dejavuSerif:
				return nil, fmt.Errorf("page %d: internal/pdf's Writer has no font %s", i+1, fontNames[t.Font])
			case t.Form == 2:
				nested = append(nested, t)
			case t.Form == 1 || t.Ink == invisible || !ok:
				inForm = append(inForm, t)
			default:
				c.Gray(map[ink]float64{black: 0, white: 1, grey: 0.5}[t.Ink])
				c.Text(f, t.Size, t.X, p.H-t.Y, t.S)
			}
		}
		c.Gray(0)
		if len(inForm) > 0 {
			c.Form(form(p, inForm, false))
		}
		if len(nested) > 0 {
			c.Form(form(p, nested, true))
		}
		w.AddPage(p.W, p.H, &c)
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// cipherCodes are the characters the Type 3 cipher font draws, in the
// order of its codes from 161: a reader that takes the codes for Latin-1
// reads nonsense, and the glyph names mean nothing (cipherGlyph).
const cipherChars = "ÉéÖPl,ü.#Q:HZb-VXWdmTe1Cö0FjhrJ5k6piM@So2q9sA yc4nIEz&KYx3LRa/uBÜNwë8vOUGf7D'tg"

// cipherGlyph names the cipher font's glyph k: "qz" and two letters from
// g to z, no glyph list's name, not hexadecimal, no ligature ("_") or
// suffix ("."), so that no reader's heuristics give it a character.
func cipherGlyph(k int) string {
	return "qz" + string(rune('g'+k/20)) + string(rune('g'+k%20))
}

func cipherCode(r rune) (byte, bool) {
	i := strings.IndexRune(cipherChars, r)
	if i < 0 {
		return 0, false
	}
	return byte(161 + len([]rune(cipherChars[:i]))), true
}

// renderPDFBuilder writes pages object by object: pages stored turned
// (/Rotate) with a matrix that makes them display upright, the standard
// fonts in WinAnsiEncoding, the Type 3 cipher font, images.
func renderPDFBuilder(pages []page) ([]byte, error) {
	b := testdoc.NewPDF()
	// 1 catalog, 2 page tree, 3.. fonts, then images, then pages.
	b.Obj(1, "<< /Type /Catalog /Pages 2 0 R >>")
	next := 3
	fontObj := map[font]int{}
	for _, f := range []font{sans, sansBold, serif, mono} {
		fontObj[f] = next
		b.Obj(next, "<< /Type /Font /Subtype /Type1 /BaseFont /"+stdFontNames[f]+" /Encoding /WinAnsiEncoding >>")
		next++
	}
	// The cipher font: a glyph per character, a bar of its own height.
	fontObj[cipher] = next
	n := len([]rune(cipherChars))
	var diffs, procs, widths strings.Builder
	for k := range n {
		fmt.Fprintf(&diffs, " /%s", cipherGlyph(k))
		fmt.Fprintf(&procs, " /%s %d 0 R", cipherGlyph(k), next+1+k)
		widths.WriteString(" 600")
	}
	b.Obj(next, fmt.Sprintf("<< /Type /Font /Subtype /Type3 /FontBBox [0 0 600 800] /FontMatrix [0.001 0 0 0.001 0 0] /CharProcs <<%s >> /Encoding << /Type /Encoding /Differences [161%s] >> /FirstChar 161 /LastChar %d /Widths [%s] /Resources << >> >>",
		procs.String(), diffs.String(), 160+n, widths.String()))
	for k := range n {
		h := 250 + (k*137)%500
		body := fmt.Sprintf("600 0 40 0 560 %d d1 60 0 480 %d re f", h, h)
		if []rune(cipherChars)[k] == ' ' {
			body = "600 0 0 0 0 0 d1"
		}
		b.Stream(next+1+k, "", []byte(body))
	}
	next += 1 + n
	imgObj := map[image]int{}
	for _, p := range pages {
		for _, bx := range p.Boxes {
			if bx.Image == noImage || imgObj[bx.Image] != 0 {
				continue
			}
			ras, _, z := imageData(bx.Image)
			cs := "/DeviceRGB"
			if ras.Grey {
				cs = "/DeviceGray"
			}
			imgObj[bx.Image] = next
			b.Stream(next, fmt.Sprintf("/Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace %s /BitsPerComponent 8 /Filter /FlateDecode", ras.W, ras.H, cs), z)
			next++
		}
	}
	var kids []string
	for i, p := range pages {
		var c strings.Builder
		mw, mh := p.W, p.H
		switch p.Rotate {
		case 0:
		case 90:
			mw, mh = p.H, p.W
			fmt.Fprintf(&c, "0 1 -1 0 %s 0 cm\n", num(p.H))
		case 180:
			fmt.Fprintf(&c, "-1 0 0 -1 %s %s cm\n", num(p.W), num(p.H))
		case 270:
			mw, mh = p.H, p.W
			fmt.Fprintf(&c, "0 -1 1 0 0 %s cm\n", num(p.W))
		default:
			return nil, fmt.Errorf("page %d: rotation %d", i+1, p.Rotate)
		}
		for _, bx := range p.Boxes {
			y := p.H - bx.Y - bx.H
			if bx.Image == noImage {
				fmt.Fprintf(&c, "%s g %s %s %s %s re f\n", num(bx.Grey), num(bx.X), num(y), num(bx.W), num(bx.H))
				continue
			}
			fmt.Fprintf(&c, "q %s 0 0 %s %s %s cm /Im%d Do Q\n", num(bx.W), num(bx.H), num(bx.X), num(y), bx.Image)
		}
		for _, t := range p.Texts {
			if t.Form != 0 || t.Font == dejavu || t.Font == dejavuSerif {
				return nil, fmt.Errorf("page %d: PDFBuilder pages draw no forms or TrueType fonts", i+1)
			}
			c.WriteString("BT ")
			inkOps(&c, t.Ink)
			fmt.Fprintf(&c, "/T%d %s Tf 1 0 0 1 %s %s Tm ", t.Font, num(t.Size), num(t.X), num(round2(p.H-t.Y)))
			if t.Font == cipher {
				c.WriteByte('<')
				for _, r := range t.S {
					code, ok := cipherCode(r)
					if !ok {
						return nil, fmt.Errorf("page %d: the cipher font has no %q", i+1, r)
					}
					fmt.Fprintf(&c, "%02x", code)
				}
				c.WriteByte('>')
			} else {
				winAnsiString(&c, t.S)
			}
			c.WriteString(" Tj ET\n")
		}
		var res strings.Builder
		res.WriteString("/Font <<")
		for _, f := range []font{sans, sansBold, serif, mono, cipher} {
			fmt.Fprintf(&res, " /T%d %d 0 R", f, fontObj[f])
		}
		res.WriteString(" >>")
		if len(imgObj) > 0 {
			res.WriteString(" /XObject <<")
			for _, im := range []image{logoImage, scanImage} {
				if imgObj[im] != 0 {
					fmt.Fprintf(&res, " /Im%d %d 0 R", im, imgObj[im])
				}
			}
			res.WriteString(" >>")
		}
		content := next
		b.Stream(content, "/Filter /FlateDecode", testdoc.Deflate([]byte(c.String())))
		rot := ""
		if p.Rotate != 0 {
			rot = fmt.Sprintf(" /Rotate %d", p.Rotate)
		}
		b.Obj(next+1, fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %s %s]%s /Resources << %s >> /Contents %d 0 R >>", num(mw), num(mh), rot, res.String(), content))
		kids = append(kids, fmt.Sprintf("%d 0 R", next+1))
		next += 2
	}
	b.Obj(2, fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(pages)))
	return b.Xref("/Root 1 0 R"), nil
}
