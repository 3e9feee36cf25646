package corpus

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"

	"github.com/lodge-mail/lodge/internal/pagetext"
	"github.com/lodge-mail/lodge/internal/xps"
)

// TrueType fonts by logical font: the Liberation fonts are metric
// compatible with the standard ones, so an XPS copy of a PDF sets its
// words in the same places.
var fontFiles = map[font]struct{ path, family string }{
	sans:        {"/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf", "Liberation Sans:style=Regular"},
	sansBold:    {"/usr/share/fonts/truetype/liberation/LiberationSans-Bold.ttf", "Liberation Sans:style=Bold"},
	serif:       {"/usr/share/fonts/truetype/liberation/LiberationSerif-Regular.ttf", "Liberation Serif:style=Regular"},
	mono:        {"/usr/share/fonts/truetype/liberation/LiberationMono-Regular.ttf", "Liberation Mono:style=Regular"},
	dejavu:      {"/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", "DejaVu Sans:style=Book"},
	dejavuSerif: {"/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf", "DejaVu Serif:style=Book"},
}

var (
	fontPathMu sync.Mutex
	fontPaths  = map[font]string{}
)

// fontPath finds a font's file: where Debian puts it, else where
// fontconfig says.
func fontPath(f font) (string, error) {
	fontPathMu.Lock()
	defer fontPathMu.Unlock()
	if p, ok := fontPaths[f]; ok {
		return p, nil
	}
	ff, ok := fontFiles[f]
	if !ok {
		return "", fmt.Errorf("no TrueType font for %s", fontNames[f])
	}
	p := ff.path
	if _, err := os.Stat(p); err != nil {
		out, err := exec.Command("fc-match", "-f", "%{file}", ff.family).Output()
		if err != nil || !strings.Contains(strings.ToLower(string(out)), strings.ToLower(strings.ReplaceAll(strings.Split(ff.family, ":")[0], " ", ""))) {
			return "", fmt.Errorf("font %s not found (Debian packages fonts-liberation and fonts-dejavu-core)", ff.family)
		}
		p = string(out)
	}
	fontPaths[f] = p
	return p, nil
}

// renderXPS draws pages with internal/xps's Writer: form XObjects become
// Canvas elements (a translation; a scale of two with the text at half
// size inside), render mode 3 a fully transparent fill.
func renderXPS(pages []page) ([]byte, error) {
	var buf bytes.Buffer
	w := xps.NewWriter(&buf)
	fonts := map[font]*xps.Font{}
	for i, p := range pages {
		if p.Rotate != 0 {
			return nil, fmt.Errorf("page %d: XPS pages are not stored turned", i+1)
		}
		xp := w.Page(p.W, p.H)
		for _, bx := range p.Boxes {
			r := pagetext.Rect{X0: bx.X, Y0: bx.Y, X1: bx.X + bx.W, Y1: bx.Y + bx.H}
			if bx.Image == noImage {
				g := int(bx.Grey*255 + 0.5)
				xp.Rect(r, fmt.Sprintf("#FF%02X%02X%02X", g, g, g))
				continue
			}
			_, png, _ := imageData(bx.Image)
			xp.Image(r, png)
		}
		var form1, form2 *xps.Canvas
		const dx, dy = 10 * MM, 40 * MM // the forms' translation
		for _, t := range p.Texts {
			f, ok := fonts[t.Font]
			if !ok {
				path, err := fontPath(t.Font)
				if err != nil {
					return nil, err
				}
				if f, err = xps.LoadFont(path); err != nil {
					return nil, err
				}
				fonts[t.Font] = f
			}
			opt := xps.TextOptions{Colour: map[ink]string{black: "#FF000000", white: "#FFFFFFFF", grey: "#FF808080", invisible: "#00000000"}[t.Ink]}
			switch t.Form {
			case 0:
				xp.Text(t.X, t.Y, t.Size, f, t.S, opt)
			case 1:
				if form1 == nil {
					form1 = xp.Canvas(xps.Matrix{A: 1, D: 1, E: dx, F: dy})
				}
				form1.Text(t.X-dx, t.Y-dy, t.Size, f, t.S, opt)
			default:
				if form2 == nil {
					form2 = xp.Canvas(xps.Matrix{A: 1, D: 1, E: dx, F: dy}).Canvas(xps.Matrix{A: 2, D: 2})
				}
				form2.Text((t.X-dx)/2, (t.Y-dy)/2, t.Size/2, f, t.S, opt)
			}
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
