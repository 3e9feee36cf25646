package corpus

import (
	"fmt"
	"html"
	"strings"
)

// CSS font families by logical font, with the ascent and descent (in em)
// Chromium takes from the fonts' hhea tables, which place the baseline in
// a line box: (line height - (ascent + descent) × size) / 2 + ascent ×
// size below the box's top.
var htmlFonts = map[font]struct {
	family          string
	bold            bool
	ascent, descent float64
}{
	sans:        {"Liberation Sans", false, 0.905, 0.212},
	sansBold:    {"Liberation Sans", true, 0.905, 0.212},
	serif:       {"Liberation Serif", false, 0.891, 0.216},
	mono:        {"Liberation Mono", false, 0.833, 0.300},
	dejavu:      {"DejaVu Sans", false, 0.928, 0.236},
	dejavuSerif: {"DejaVu Serif", false, 0.928, 0.236},
}

// imageFile names an image's PNG beside the HTML: one file that every
// page shows, so that Chromium embeds it once.
func imageFile(im image) string { return fmt.Sprintf("image-%d.png", im) }

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
.t { position: absolute; margin: 0; white-space: pre; font-variant-ligatures: none; font-kerning: none; font-synthesis: none }
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
			fmt.Fprintf(&b, `<img class="i" style="%s" src="%s">`, pos, imageFile(bx.Image))
		}
		// Lines of one column (same left edge, font, size and ink, on a
		// regular pitch, gaps of whole lines) go in one element: Chromium
		// lays out tens of thousands of elements slowly.
		ts := p.Texts
		for len(ts) > 0 {
			t := ts[0]
			hf, ok := htmlFonts[t.Font]
			if !ok || t.Form != 0 || t.Ink == invisible {
				return nil, fmt.Errorf("page %d: HTML draws no %s, forms or invisible text", i+1, fontNames[t.Font])
			}
			lines := []string{html.EscapeString(t.S)}
			pitch, y := 0.0, t.Y
			k := 1
			for ; k < len(ts); k++ {
				u := ts[k]
				if u.X != t.X || u.Font != t.Font || u.Size != t.Size || u.Ink != t.Ink || u.Form != 0 || u.Y <= y {
					break
				}
				if pitch == 0 {
					pitch = u.Y - y
				}
				steps := (u.Y - y) / pitch
				n := int(steps + 0.5)
				if n < 1 || n > 3 || abs(steps-float64(n)) > 0.001 {
					break
				}
				for range n - 1 {
					lines = append(lines, "")
				}
				lines = append(lines, html.EscapeString(u.S))
				y = u.Y
			}
			ts = ts[k:]
			lh := t.Size
			if pitch > 0 {
				lh = pitch
			}
			top := t.Y - ((lh-(hf.ascent+hf.descent)*t.Size)/2 + hf.ascent*t.Size)
			colour := map[ink]string{black: "#000", white: "#fff", grey: "#808080"}[t.Ink]
			fmt.Fprintf(&b, `<div class="t f%d" style="left:%spt;top:%spt;font-size:%spt;line-height:%spt;color:%s">%s</div>`,
				t.Font, num(t.X), num(top), num(t.Size), num(lh), colour, strings.Join(lines, "\n"))
		}
		b.WriteString("</div>\n")
	}
	b.WriteString("</body></html>\n")
	return []byte(b.String()), nil
}
