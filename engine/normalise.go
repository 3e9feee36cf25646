package engine

import (
	"unicode"
	"unicode/utf8"
)

// MaxComponentRunes is the longest component (address line) accepted, in
// characters, after trimming. Longer lines make the address invalid.
const MaxComponentRunes = 100

// normIssue says why a component could not be normalised.
type normIssue uint8

const (
	normOK normIssue = iota
	normTooLong
	normBadUTF8
	normControl
)

// latinFold maps U+00C0..U+017F to the ASCII letters an Australian address
// would use. Empty entries are kept as they are (upper-cased).
var latinFold = [...]string{
	// U+00C0
	"A", "A", "A", "A", "A", "A", "AE", "C", "E", "E", "E", "E", "I", "I", "I", "I",
	"D", "N", "O", "O", "O", "O", "O", "", "O", "U", "U", "U", "U", "Y", "TH", "SS",
	// U+00E0
	"A", "A", "A", "A", "A", "A", "AE", "C", "E", "E", "E", "E", "I", "I", "I", "I",
	"D", "N", "O", "O", "O", "O", "O", "", "O", "U", "U", "U", "U", "Y", "TH", "Y",
	// U+0100
	"A", "A", "A", "A", "A", "A", "C", "C", "C", "C", "C", "C", "C", "C", "D", "D",
	"D", "D", "E", "E", "E", "E", "E", "E", "E", "E", "E", "E", "G", "G", "G", "G",
	"G", "G", "G", "G", "H", "H", "H", "H", "I", "I", "I", "I", "I", "I", "I", "I",
	"I", "I", "IJ", "IJ", "J", "J", "K", "K", "K", "L", "L", "L", "L", "L", "L", "L",
	"L", "L", "L", "N", "N", "N", "N", "N", "N", "N", "N", "N", "O", "O", "O", "O",
	"O", "O", "OE", "OE", "R", "R", "R", "R", "R", "R", "S", "S", "S", "S", "S", "S",
	"S", "S", "T", "T", "T", "T", "T", "T", "U", "U", "U", "U", "U", "U", "U", "U",
	"U", "U", "U", "U", "W", "W", "Y", "Y", "Y", "Z", "Z", "Z", "Z", "Z", "Z", "S",
}

// asciiKeep maps the ASCII bytes kept as they are (or upper-cased) to their
// output byte; 0 for every other byte.
var asciiKeep = func() (t [256]byte) {
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = byte(c)
		t[c-'A'+'a'] = byte(c)
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = byte(c)
	}
	t['&'], t['#'] = '&', '#'
	return t
}()

// normalise appends the canonical form of one address component to dst.
//
// The canonical form is what verdicts are computed from, so everything that
// must never change a verdict is folded away here: case, diacritics, repeated
// and non-breaking spaces, dots, apostrophes, dash and slash variants, full
// width forms. It holds only A-Z, 0-9, single spaces, '-', '/', '&', '#' and
// upper-case letters of other scripts, has no space next to '-' or '/', and
// no leading or trailing space. normalise(normalise(x)) == normalise(x).
//
// It reports a component longer than MaxComponentRunes, invalid UTF-8 and
// control characters (a tab counts as a space). The length limit counts
// the characters between the first and last that are not white space. On
// an issue dst is returned with whatever was appended: the caller discards
// it.
func normalise(dst []byte, s string) ([]byte, normIssue) {
	start := len(dst)
	runes := 0 // characters from the first non-space one on
	pendingSpace := false
	flushSpace := func() {
		if pendingSpace {
			if n := len(dst); dst[n-1] != '-' && dst[n-1] != '/' {
				dst = append(dst, ' ')
			}
			pendingSpace = false
		}
	}
	emit := func(b byte) {
		switch b {
		case ' ':
			pendingSpace = len(dst) > start
			return
		case '-', '/':
			// no spaces around joiners
			pendingSpace = false
			if n := len(dst); n > start && dst[n-1] == ' ' {
				dst = dst[:n-1]
			}
			dst = append(dst, b)
			return
		}
		flushSpace()
		dst = append(dst, b)
	}
	for i := 0; i < len(s); {
		c := s[i]
		// fast path: letters, digits, '&' and '#', the bulk of any address
		if m := asciiKeep[c]; m != 0 {
			runes++
			if runes > MaxComponentRunes {
				return dst, normTooLong
			}
			if pendingSpace {
				if last := dst[len(dst)-1]; last != '-' && last != '/' {
					dst = append(dst, ' ')
				}
				pendingSpace = false
			}
			dst = append(dst, m)
			i++
			continue
		}
		if c < utf8.RuneSelf {
			i++
			if c == ' ' || c == '\t' {
				if runes > 0 {
					runes++
				}
				emit(' ')
				continue
			}
			runes++
			if runes > MaxComponentRunes && !allSpace(s[i-1:]) {
				return dst, normTooLong
			}
			switch {
			case c >= 'a' && c <= 'z':
				emit(c - 'a' + 'A')
			case c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
				emit(c)
			case c == ' ' || c == '\t':
				emit(' ')
			case c < 0x20 || c == 0x7f:
				return dst, normControl
			case c == '-' || c == '/' || c == '&' || c == '#':
				emit(c)
			case c == '\'' || c == '`':
				// O'CONNOR and OCONNOR are the same place
			default:
				emit(' ')
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return dst, normBadUTF8
		}
		i += size
		if r >= 0x80 && r < 0xa0 {
			return dst, normControl // C1 controls, NEL among them
		}
		if unicode.IsSpace(r) {
			if runes > 0 {
				runes++
			}
			emit(' ')
			continue
		}
		runes++
		if runes > MaxComponentRunes && !allSpace(s[i-size:]) {
			return dst, normTooLong
		}
		switch {
		case r >= 0x80 && r < 0xa0, r == 0x2028, r == 0x2029:
			return dst, normControl
		case r >= 0xff01 && r <= 0xff5e: // full width ASCII
			c := byte(r - 0xff01 + '!')
			switch {
			case c >= 'a' && c <= 'z':
				emit(c - 'a' + 'A')
			case c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '/', c == '&', c == '#':
				emit(c)
			case c == '\'' || c == '`':
			default:
				emit(' ')
			}
		case r >= 0xc0 && r <= 0x17f && latinFold[r-0xc0] != "":
			f := latinFold[r-0xc0]
			for j := 0; j < len(f); j++ {
				emit(f[j])
			}
		case r == 0x2018 || r == 0x2019 || r == 0x201b || r == 0x2032 || r == 0x02bc || r == 0x00b4 || r == 0x02b9:
			// curly and modifier apostrophes, primes
		case r == 0x2010 || r == 0x2011 || r == 0x2012 || r == 0x2013 || r == 0x2014 || r == 0x2015 || r == 0x2212 || r == 0xfe58 || r == 0xfe63:
			emit('-')
		case r == 0x2044 || r == 0x2215:
			emit('/')
		case r == 0xfeff || r == 0x200b || r == 0x200c || r == 0x200d || r == 0x2060:
			// zero-width characters and byte order marks vanish
		case unicode.IsSpace(r):
			emit(' ')
		case unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r):
			// combining marks: "E" + acute is "E"
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			flushSpace()
			dst = utf8.AppendRune(dst, unicode.ToUpper(r))
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Co, r) || unicode.Is(unicode.Cs, r):
			return dst, normControl
		default:
			emit(' ')
		}
	}
	return dst, normOK
}

// allSpace reports whether s holds only white space from here on: spaces at
// the end of a line do not count towards its length.
func allSpace(s string) bool {
	for _, r := range s {
		if !unicode.IsSpace(r) {
			return false
		}
	}
	return true
}
