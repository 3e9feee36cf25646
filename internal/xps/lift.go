package xps

import (
	"bytes"
	"unicode/utf8"
)

// Lifting: most of a FixedPage's bytes are the values of its Glyphs'
// Indices and UnicodeString attributes, and encoding/xml's tokenizer
// costs about 8 ns a byte, which alone would hold a letter page to
// about 2,500 pages a second. Before the page is tokenized, lift copies
// it without those values (each becomes "") and notes where they are;
// the Decoder then reads everything else token by token as usual, and a
// Glyphs element takes its values back from the notes, only when it is
// laid out (a run outside the zone never is).
//
// Only plain values are lifted: no '&' (entities), no white space other
// than ' ' (attribute value normalisation), no control characters, valid
// UTF-8, so that a lifted value is exactly what the Decoder would have
// given. lift understands tags, quoted attribute values, comments,
// processing instructions and CDATA sections; anything else (a DOCTYPE,
// a '<' inside a tag) stops it and the page is tokenized whole. The
// walker checks, Glyphs element by Glyphs element, that the Decoder saw
// the values lift took away (an empty Indices or UnicodeString where
// lift noted one); should it not, the page is read again without lifting.

// lifted notes a Glyphs tag's lifted values: byte ranges of the page.
type lifted struct {
	indices, unicode [2]int32
	hasIx, hasUS     bool
}

// lift copies src to dst with the plain values of Glyphs' Indices and
// UnicodeString attributes removed, noting them in notes (one entry for
// each Glyphs tag, in order). ok is false when the page must be
// tokenized whole.
func lift(src, dst []byte, notes []lifted) (_ []byte, _ []lifted, ok bool) {
	dst, notes = dst[:0], notes[:0]
	if len(src) > 1<<31-1 {
		return dst, notes, false
	}
	copied := 0 // src[:copied] is in dst
	i := 0
	for {
		j := bytes.IndexByte(src[i:], '<')
		if j < 0 {
			return append(dst, src[copied:]...), notes, true
		}
		i += j + 1
		rest := src[i:]
		switch {
		case bytes.HasPrefix(rest, []byte("!--")):
			k := bytes.Index(rest[3:], []byte("-->"))
			if k < 0 {
				return dst, notes, false
			}
			i += 3 + k + 3
			continue
		case bytes.HasPrefix(rest, []byte("![CDATA[")):
			k := bytes.Index(rest, []byte("]]>"))
			if k < 0 {
				return dst, notes, false
			}
			i += k + 3
			continue
		case bytes.HasPrefix(rest, []byte("?")):
			k := bytes.Index(rest, []byte("?>"))
			if k < 0 {
				return dst, notes, false
			}
			i += k + 2
			continue
		case bytes.HasPrefix(rest, []byte("!")):
			return dst, notes, false // a DOCTYPE: leave it to the Decoder
		}
		// A tag: its name, then attributes up to '>'.
		n := 0
		for n < len(rest) && !isSpace(rest[n]) && rest[n] != '>' && rest[n] != '/' {
			n++
		}
		name := rest[:n]
		glyphs := bytes.Equal(name, []byte("Glyphs")) || bytes.HasSuffix(name, []byte(":Glyphs"))
		var note lifted
		i += n
		for {
			for i < len(src) && isSpace(src[i]) {
				i++
			}
			if i >= len(src) {
				return dst, notes, false
			}
			c := src[i]
			if c == '>' || c == '/' {
				i++
				break
			}
			if c == '<' {
				return dst, notes, false
			}
			// An attribute: name = quoted value.
			a := i
			for i < len(src) && src[i] != '=' && !isSpace(src[i]) && src[i] != '>' && src[i] != '<' {
				i++
			}
			attr := src[a:i]
			for i < len(src) && isSpace(src[i]) {
				i++
			}
			if i >= len(src) || src[i] != '=' {
				return dst, notes, false
			}
			i++
			for i < len(src) && isSpace(src[i]) {
				i++
			}
			if i >= len(src) || src[i] != '"' && src[i] != '\'' {
				return dst, notes, false
			}
			q := src[i]
			k := bytes.IndexByte(src[i+1:], q)
			if k < 0 {
				return dst, notes, false
			}
			v0, v1 := i+1, i+1+k
			i = v1 + 1
			if !glyphs || !plain(src[v0:v1]) {
				continue
			}
			switch string(attr) {
			case "Indices":
				note.indices, note.hasIx = [2]int32{int32(v0), int32(v1)}, true
			case "UnicodeString":
				note.unicode, note.hasUS = [2]int32{int32(v0), int32(v1)}, true
			default:
				continue
			}
			dst = append(dst, src[copied:v0]...)
			copied = v1
		}
		if glyphs {
			notes = append(notes, note)
		}
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// plain reports whether an attribute value means its bytes: no entity,
// no white space but ' ', no '<', no control character, valid UTF-8.
func plain(v []byte) bool {
	ascii := true
	for _, c := range v {
		if c < ' ' || c == '&' || c == '<' || c == 0x7F {
			return false
		}
		if c >= 0x80 {
			ascii = false
		}
	}
	if ascii {
		return true
	}
	if !utf8.Valid(v) {
		return false
	}
	// XML forbids U+FFFE, U+FFFF and surrogates (utf8.Valid refuses
	// these last); the Decoder would refuse the page.
	return !bytes.Contains(v, []byte("\uFFFE")) && !bytes.Contains(v, []byte("\uFFFF"))
}
