package corpus

import (
	"encoding/hex"
	"fmt"
	"strings"
)

// PostScript fonts by logical font: the standard ones, and the TrueType
// ones Ghostscript finds through fontconfig.
var (
	psStdFonts = map[font]string{sans: "Helvetica", sansBold: "Helvetica-Bold", serif: "Times-Roman", mono: "Courier",
		dejavu: "DejaVuSans", dejavuSerif: "DejaVuSerif"}
	psTrueTypeFonts = map[font]string{sans: "LiberationSans", sansBold: "LiberationSans-Bold", serif: "LiberationSerif",
		mono: "LiberationMono", dejavu: "DejaVuSans", dejavuSerif: "DejaVuSerif"}
)

// latin1Names are the glyph names of the encoding our fonts are set in:
// ISO Latin-1 (ISOLatin1Encoding with an apostrophe, a hyphen and a grave
// accent where Latin-1 has them: PostScript's own puts quoteright, minus
// and quoteleft there, which read back as other characters).
func latin1Names() [256]string {
	var n [256]string
	for i := range n {
		n[i] = ".notdef"
	}
	ascii := []string{"space", "exclam", "quotedbl", "numbersign", "dollar", "percent", "ampersand", "quotesingle",
		"parenleft", "parenright", "asterisk", "plus", "comma", "hyphen", "period", "slash",
		"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
		"colon", "semicolon", "less", "equal", "greater", "question", "at"}
	copy(n[32:], ascii)
	for c := 'A'; c <= 'Z'; c++ {
		n[c] = string(c)
	}
	copy(n['['-0:], []string{"bracketleft", "backslash", "bracketright", "asciicircum", "underscore", "grave"})
	for c := 'a'; c <= 'z'; c++ {
		n[c] = string(c)
	}
	copy(n['{'-0:], []string{"braceleft", "bar", "braceright", "asciitilde"})
	high := map[rune]string{0xE9: "eacute", 0xEB: "edieresis", 0xFC: "udieresis", 0xC9: "Eacute", 0xE8: "egrave",
		0xE0: "agrave", 0xF6: "odieresis", 0xE7: "ccedilla", 0xD6: "Odieresis", 0xDC: "Udieresis", 0xE1: "aacute",
		0xED: "iacute", 0xF3: "oacute", 0xFA: "uacute", 0xF1: "ntilde"}
	for r, name := range high {
		n[r] = name
	}
	return n
}

// customCodes is the custom encoding the serif font is set in: Latin-1's
// glyphs, capitals and small letters swapped and the digits reversed, so
// that the bytes in the file are not the text (only the glyph names are).
func customCodes(r rune) rune {
	switch {
	case r >= 'a' && r <= 'z':
		return r - 'a' + 'A'
	case r >= 'A' && r <= 'Z':
		return r - 'A' + 'a'
	case r >= '0' && r <= '9':
		return '9' - (r - '0')
	}
	return r
}

// psString writes s as a PostScript string in Latin-1, through the
// custom encoding when custom is set.
func psString(b *strings.Builder, s string, custom bool) error {
	b.WriteByte('(')
	for _, r := range s {
		if custom {
			r = customCodes(r)
		}
		switch {
		case r == '(' || r == ')' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r >= 32 && r < 127:
			b.WriteRune(r)
		case r >= 0xA0 && r <= 0xFF:
			fmt.Fprintf(b, "\\%03o", r)
		default:
			return fmt.Errorf("no PostScript code for %q", r)
		}
	}
	b.WriteByte(')')
	return nil
}

// renderPS writes pages as a DSC-conforming PostScript document.
func renderPS(pages []page, trueType bool) ([]byte, error) {
	names := psStdFonts
	if trueType {
		names = psTrueTypeFonts
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%%!PS-Adobe-3.0\n%%%%Creator: lodge internal/testdoc/corpus\n%%%%Pages: %d\n%%%%EndComments\n%%%%BeginProlog\n", len(pages))
	b.WriteString("/reencode { % newname encoding basename\n  findfont dup length dict begin { 1 index /FID ne { def } { pop pop } ifelse } forall\n  /Encoding exch def currentdict end definefont pop } bind def\n")
	b.WriteString("/.settextrenderingmode where { pop /trm { .settextrenderingmode } bind def } { /trm { pop } bind def } ifelse\n")
	l1 := latin1Names()
	b.WriteString("/Latin1 [")
	for i, n := range l1 {
		if i%16 == 0 {
			b.WriteString("\n")
		}
		b.WriteString(" /" + n)
	}
	b.WriteString(" ] def\n/Custom [")
	var custom [256]string
	for i := range custom {
		custom[i] = ".notdef"
	}
	for c := range 256 {
		if l1[c] != ".notdef" {
			custom[customCodes(rune(c))] = l1[c]
		}
	}
	for i, n := range custom {
		if i%16 == 0 {
			b.WriteString("\n")
		}
		b.WriteString(" /" + n)
	}
	b.WriteString(" ] def\n")
	used := map[font]bool{}
	imgs := map[image]bool{}
	for _, p := range pages {
		for _, t := range p.Texts {
			used[t.Font] = true
		}
		for _, bx := range p.Boxes {
			imgs[bx.Image] = true
		}
	}
	for f := font(0); f < fontCount; f++ {
		if !used[f] {
			continue
		}
		name, ok := names[f]
		if !ok {
			return nil, fmt.Errorf("no PostScript font for %s", fontNames[f])
		}
		enc := "Latin1"
		if f == serif {
			enc = "Custom"
		}
		fmt.Fprintf(&b, "/F%d %s /%s reencode\n", f, enc, name)
	}
	for _, im := range []image{logoImage, scanImage} {
		if imgs[im] {
			ras, _, _ := imageData(im)
			fmt.Fprintf(&b, "/Img%d <\n", im)
			h := hex.EncodeToString(ras.Pix)
			for len(h) > 0 {
				k := min(len(h), 200)
				b.WriteString(h[:k])
				b.WriteByte('\n')
				h = h[k:]
			}
			b.WriteString("> def\n")
		}
	}
	b.WriteString("%%EndProlog\n")
	var w, h float64
	for i, p := range pages {
		if p.Rotate != 0 {
			return nil, fmt.Errorf("page %d: PostScript pages are not stored turned", i+1)
		}
		fmt.Fprintf(&b, "%%%%Page: %d %d\n", i+1, i+1)
		if p.W != w || p.H != h {
			w, h = p.W, p.H
			fmt.Fprintf(&b, "<< /PageSize [%s %s] >> setpagedevice\n", num(w), num(h))
		}
		for _, bx := range p.Boxes {
			y := p.H - bx.Y - bx.H
			if bx.Image == noImage {
				fmt.Fprintf(&b, "%s setgray %s %s %s %s rectfill 0 setgray\n", num(bx.Grey), num(bx.X), num(y), num(bx.W), num(bx.H))
				continue
			}
			ras, _, _ := imageData(bx.Image)
			op := "false 3 colorimage"
			if ras.Grey {
				op = "image"
			}
			fmt.Fprintf(&b, "gsave %s %s translate %s %s scale %d %d 8 [%d 0 0 -%d 0 %d] Img%d %s grestore\n",
				num(bx.X), num(y), num(bx.W), num(bx.H), ras.W, ras.H, ras.W, ras.H, ras.H, bx.Image, op)
		}
		for _, t := range p.Texts {
			if t.Form != 0 || t.Font == cipher {
				return nil, fmt.Errorf("page %d: PostScript pages draw no forms or Type 3 cipher", i+1)
			}
			switch t.Ink {
			case white:
				b.WriteString("1 setgray ")
			case grey:
				b.WriteString("0.5 setgray ")
			case invisible:
				b.WriteString("3 trm ")
			}
			fmt.Fprintf(&b, "/F%d %s selectfont %s %s moveto ", t.Font, num(t.Size), num(t.X), num(p.H-t.Y))
			if err := psString(&b, t.S, t.Font == serif); err != nil {
				return nil, fmt.Errorf("page %d: %w", i+1, err)
			}
			b.WriteString(" show")
			switch t.Ink {
			case white, grey:
				b.WriteString(" 0 setgray")
			case invisible:
				b.WriteString(" 0 trm")
			}
			b.WriteByte('\n')
		}
		b.WriteString("showpage\n")
	}
	b.WriteString("%%EOF\n")
	return []byte(b.String()), nil
}
