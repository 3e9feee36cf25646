package pdf

import (
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Glyph names and the standard 14 fonts' metrics (tables in
// fontdata_gen.go, made by go generate).

// std14Font is the metrics of one of the standard fonts.
type std14Font struct {
	name            string
	ascent, descent int
	widths          []uint32 // glyph index<<16 | width, sorted
}

// width returns the advance width (1/1000 em) of a glyph by name, or
// by the name of the font's glyph for the same character (uni20AC is
// the Euro's).
func (f *std14Font) width(name string) (int, bool) {
	if g, ok := glyphIndex(name); ok {
		key := uint32(g) << 16
		i := sort.Search(len(f.widths), func(i int) bool { return f.widths[i] >= key })
		if i < len(f.widths) && f.widths[i]>>16 == uint32(g) {
			return int(f.widths[i] & 0xFFFF), true
		}
	}
	r, n := utf8.DecodeRuneInString(glyphText(name))
	if n == 0 || r == utf8.RuneError || n != len(glyphText(name)) {
		return 0, false
	}
	for _, w := range f.widths {
		if glyphRunes[w>>16] == r {
			return int(w & 0xFFFF), true
		}
	}
	return 0, false
}

func glyphIndex(name string) (int, bool) {
	i := sort.SearchStrings(glyphNames[:], name)
	return i, i < len(glyphNames) && glyphNames[i] == name
}

// std14ByName finds the standard font a font's /BaseFont names, exactly
// or by the names word processors use for the same faces (Arial,
// TimesNewRoman, CourierNew, with styles as ",Bold" or "-BoldItalicMT"),
// after any subset tag ("ABCDEF+"). nil when none.
func std14ByName(base string) *std14Font {
	if len(base) > 7 && base[6] == '+' {
		base = base[7:]
	}
	for i := range std14 {
		if std14[i].name == base {
			return &std14[i]
		}
	}
	n := strings.ToLower(strings.NewReplacer(" ", "", "-", "", ",", "", "_", "").Replace(base))
	var family int // the family's first entry in std14
	switch {
	case strings.HasPrefix(n, "courier"):
		family = 0
	case strings.HasPrefix(n, "helvetica"), strings.HasPrefix(n, "arial"):
		family = 4
	case strings.HasPrefix(n, "times"):
		family = 8
	case n == "symbol" || n == "symbolmt":
		return &std14[12]
	case strings.HasPrefix(n, "zapfdingbats"), n == "dingbats":
		return &std14[13]
	default:
		return nil
	}
	bold := strings.Contains(n, "bold") || strings.Contains(n, "black") || strings.Contains(n, "heavy")
	italic := strings.Contains(n, "italic") || strings.Contains(n, "oblique")
	style := 0
	if bold {
		style++
	}
	if italic {
		style += 2
	}
	// each family is regular, bold, italic, bold italic in the table
	return &std14[family+style]
}

// glyphText returns the text of a glyph by its name: by the Adobe Glyph
// List; uniXXXX (one or more groups of four hex digits) and uXXXX to
// uXXXXXX; a name with a suffix (a.sc, one.oldstyle) as its base; a
// ligature name (f_f_i) as its parts. "" when the name tells nothing.
func glyphText(name string) string {
	if name == "" || name == ".notdef" {
		return ""
	}
	if i := strings.IndexByte(name, '.'); i > 0 {
		name = name[:i]
	} else if i == 0 {
		return ""
	}
	if strings.IndexByte(name, '_') > 0 {
		var b strings.Builder
		for _, part := range strings.Split(name, "_") {
			t := glyphText(part)
			if t == "" {
				return ""
			}
			b.WriteString(t)
		}
		return b.String()
	}
	if g, ok := glyphIndex(name); ok && glyphRunes[g] != 0 {
		return runeText(glyphRunes[g])
	}
	if strings.HasPrefix(name, "uni") && len(name) >= 7 && (len(name)-3)%4 == 0 {
		var b strings.Builder
		for i := 3; i < len(name); i += 4 {
			v, err := strconv.ParseUint(name[i:i+4], 16, 32)
			if err != nil || !isUpperHex(name[i:i+4]) || v >= 0xD800 && v <= 0xDFFF {
				return ""
			}
			b.WriteString(runeText(rune(v)))
		}
		return b.String()
	}
	if len(name) >= 5 && len(name) <= 7 && name[0] == 'u' && isUpperHex(name[1:]) {
		v, err := strconv.ParseUint(name[1:], 16, 32)
		if err != nil || v > utf8.MaxRune || v >= 0xD800 && v <= 0xDFFF {
			return ""
		}
		return runeText(rune(v))
	}
	return ""
}

func isUpperHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// runeText is the text of a character, ligatures (U+FB00 to U+FB06)
// spelt out: an address reads "fi", not "ﬁ".
func runeText(r rune) string {
	if r >= 0xFB00 && r <= 0xFB06 {
		return [...]string{"ff", "fi", "fl", "ffi", "ffl", "st", "st"}[r-0xFB00]
	}
	if r < 0 || r > utf8.MaxRune || r >= 0xD800 && r <= 0xDFFF {
		return "\uFFFD"
	}
	if r < 128 {
		return asciiText[r : r+1]
	}
	return string(r)
}

// asciiText makes one-character strings of ASCII without allocating.
const asciiText = "\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f" +
	"\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f" +
	" !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~\x7f"
