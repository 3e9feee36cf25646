package corpus

import (
	"encoding/base64"
	"fmt"
	"html"
	"strings"
)

// CSS font families by logical font, and where their baseline falls in a
// line box of line-height 1: (1 + ascent - descent) / 2 em, with the
// ascent and descent Chromium takes from the fonts' hhea tables.
var htmlFonts = map[font]struct {
	family   string
	bold     bool
	baseline float64
}{
	sans:        {"Liberation Sans", false, (1 + 0.905 - 0.212) / 2},
	sansBold:    {"Liberation Sans", true, (1 + 0.905 - 0.212) / 2},
	serif:       {"Liberation Serif", false, (1 + 0.891 - 0.216) / 2},
	mono:        {"Liberation Mono", false, (1 + 0.833 - 0.300) / 2},
	dejavu:      {"DejaVu Sans", false, (1 + 0.928 - 0.236) / 2},
	dejavuSerif: {"DejaVu Serif", false, (1 + 0.928 - 0.236) / 2},
}

// renderHTML writes pages as one HTML document for Chromium to print:
// a page box each (A4, or a named landscape page), everything absolutely
// placed in points, ligatures and kerning off so that words print as
// written.
func renderHTML(pages []page) ([]byte, error) {
	var b strings.Builder
	b.WriteString(`<!doctype html><html><head><meta charset="utf-8"><style>
@page { size: 210mm 297mm; margin: 0 }
@page land { size: 297mm 210mm; margin: 0 }
html, body { margin: 0; padding: 0 }
* { print-color-adjust: exact; -webkit-print-color-adjust: exact }
.p { position: relative; width: 210mm; height: 297mm; overflow: hidden; break-after: page }
.p.land { page: land; width: 297mm; height: 210mm }
.t { position: absolute; margin: 0; white-space: pre; line-height: 1; font-variant-ligatures: none; font-kerning: none; font-synthesis: none }
.i, .r { position: absolute; margin: 0 }
`)
	for f := font(0); f < fontCount; f++ {
		if hf, ok := htmlFonts[f]; ok {
			weight := "normal"
			if hf.bold {
				weight = "bold"
			}
			fmt.Fprintf(&b, ".f%d { font-family: %q; font-weight: %s }\n", f, hf.family, weight)
		}
	}
	b.WriteString("</style></head><body>\n")
	uris := map[image]string{}
	for i, p := range pages {
		if p.Rotate != 0 {
			return nil, fmt.Errorf("page %d: HTML pages are not stored turned", i+1)
		}
		switch {
		case p.W == a4W && p.H == a4H:
			b.WriteString(`<div class="p">`)
		case p.W == a4H && p.H == a4W:
			b.WriteString(`<div class="p land">`)
		default:
			return nil, fmt.Errorf("page %d: HTML pages are A4", i+1)
		}
		for _, bx := range p.Boxes {
			pos := fmt.Sprintf("left:%spt;top:%spt;width:%spt;height:%spt", num(bx.X), num(bx.Y), num(bx.W), num(bx.H))
			if bx.Image == noImage {
				g := int(bx.Grey*255 + 0.5)
				fmt.Fprintf(&b, `<div class="r" style="%s;background:rgb(%d,%d,%d)"></div>`, pos, g, g, g)
				continue
			}
			uri, ok := uris[bx.Image]
			if !ok {
				_, png, _ := imageData(bx.Image)
				uri = "data:image/png;base64," + base64.StdEncoding.EncodeToString(png)
				uris[bx.Image] = uri
			}
			fmt.Fprintf(&b, `<img class="i" style="%s" src="%s">`, pos, uri)
		}
		for _, t := range p.Texts {
			hf, ok := htmlFonts[t.Font]
			if !ok || t.Form != 0 || t.Ink == invisible {
				return nil, fmt.Errorf("page %d: HTML draws no %s, forms or invisible text", i+1, fontNames[t.Font])
			}
			colour := map[ink]string{black: "#000", white: "#fff", grey: "#808080"}[t.Ink]
			fmt.Fprintf(&b, `<div class="t f%d" style="left:%spt;top:%spt;font-size:%spt;color:%s">%s</div>`,
				t.Font, num(t.X), num(t.Y-hf.baseline*t.Size), num(t.Size), colour, html.EscapeString(t.S))
		}
		b.WriteString("</div>\n")
	}
	b.WriteString("</body></html>\n")
	return []byte(b.String()), nil
}
