package metadata

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// XML 1.0 requires every processor to read UTF-16 (section 4.3.3), and
// .NET writes XML in UTF-16 by default (XmlSerializer with a StringWriter,
// Encoding.Unicode), so XML metadata may be UTF-16: it is converted to
// UTF-8 before anything else reads it. JSON must be UTF-8 (RFC 8259).

// utf16Enc says how a file is encoded in UTF-16; the zero value is "not
// UTF-16".
type utf16Enc struct {
	on        bool
	bigEndian bool
	bom       bool // the file starts with a byte order mark
}

func (e utf16Enc) String() string {
	if e.bigEndian {
		return "UTF-16BE"
	}
	return "UTF-16LE"
}

// detectUTF16 tells UTF-16 by its byte order mark (FF FE little-endian,
// FE FF big-endian) or, without one, by a first character that is '<'
// or XML white space written in two bytes, one of them zero (appendix F
// of XML 1.0): no UTF-8 file starts with a NUL byte. It returns the
// length of the mark.
func detectUTF16(data []byte) (utf16Enc, int) {
	switch {
	case len(data) >= 2 && data[0] == 0xFF && data[1] == 0xFE:
		return utf16Enc{on: true, bom: true}, 2
	case len(data) >= 2 && data[0] == 0xFE && data[1] == 0xFF:
		return utf16Enc{on: true, bigEndian: true, bom: true}, 2
	case len(data) >= 2 && data[1] == 0 && isXMLStart(data[0]):
		return utf16Enc{on: true}, 0
	case len(data) >= 2 && data[0] == 0 && isXMLStart(data[1]):
		return utf16Enc{on: true, bigEndian: true}, 0
	}
	return utf16Enc{}, 0
}

func isXMLStart(c byte) bool { return c == '<' || isSpace([]byte{c}) }

// isUTF32 reports a UTF-32 byte order mark. FF FE 00 00 could also be
// UTF-16LE starting with U+0000, which no metadata file does.
func isUTF32(data []byte) bool {
	return bytes.HasPrefix(data, []byte{0, 0, 0xFE, 0xFF}) || bytes.HasPrefix(data, []byte{0xFF, 0xFE, 0, 0})
}

// fromUTF16 converts b (the byte order mark removed) to UTF-8. A lone
// surrogate or a last half character is refused, located by line and
// column (in characters, from 1).
func (st *state) fromUTF16(b []byte, enc utf16Enc) ([]byte, bool) {
	out := make([]byte, 0, len(b)+len(b)/2)
	line, col := 1, 1
	unit := func(i int) rune {
		if enc.bigEndian {
			return rune(b[i])<<8 | rune(b[i+1])
		}
		return rune(b[i+1])<<8 | rune(b[i])
	}
	bad := func(msg string) ([]byte, bool) {
		st.fatal(fmt.Sprintf("invalid %s at line %d, column %d: %s", enc, line, col, msg))
		return nil, false
	}
	for i := 0; i < len(b); i += 2 {
		if i+1 == len(b) {
			return bad("the file ends with half a character (an odd number of bytes)")
		}
		r := unit(i)
		switch {
		case utf16.IsSurrogate(r) && r < 0xDC00:
			if i+3 >= len(b) {
				return bad(fmt.Sprintf("lone surrogate %U at the end (half a character)", r))
			}
			r2 := unit(i + 2)
			if r2 < 0xDC00 || r2 > 0xDFFF {
				return bad(fmt.Sprintf("lone surrogate %U, followed by %U instead of its other half", r, r2))
			}
			r = utf16.DecodeRune(r, r2)
			i += 2
		case utf16.IsSurrogate(r):
			return bad(fmt.Sprintf("lone surrogate %U (the second half of a character without its first)", r))
		}
		out = utf8.AppendRune(out, r)
		col++
		if r == '\n' {
			line, col = line+1, 1
		}
	}
	return out, true
}

// utf16Labels are the encoding names a UTF-16 file may declare, with
// the byte order each implies ("" for either).
var utf16Labels = map[string]string{
	"utf-16": "", "utf16": "", "ucs-2": "", "iso-10646-ucs-2": "", "csunicode": "",
	"utf-16le": "UTF-16LE", "utf-16be": "UTF-16BE",
}

// checkUTF16Declaration checks the XML declaration of a file converted
// from UTF-16 (text) against the encoding found: without a byte order
// mark the declaration must name UTF-16; with one it may be absent or
// name no encoding, and must not name another.
func (st *state) checkUTF16Declaration(text []byte, enc utf16Enc) bool {
	label, line, declared := declaredEncoding(text)
	if label == "" {
		if enc.bom {
			return true
		}
		what := "no XML declaration"
		if declared {
			what = "an XML declaration without an encoding"
		}
		st.fatal(fmt.Sprintf(`line %d: the file looks like %s but has no byte order mark and %s: start it with a byte order mark or <?xml version="1.0" encoding="UTF-16"?>`, line, enc, what))
		return false
	}
	order, ok := utf16Labels[strings.ToLower(label)]
	how := "by its byte order mark"
	if !enc.bom {
		how = "by its first bytes"
	}
	switch {
	case !ok:
		st.fatal(fmt.Sprintf("line %d: the file is %s (%s) but declares encoding %s: declare UTF-16, or save it in the encoding it declares", line, enc, how, quote(label)))
		return false
	case order != "" && order != enc.String():
		st.fatal(fmt.Sprintf("line %d: the file is %s (%s) but declares encoding %s", line, enc, how, quote(label)))
		return false
	}
	return true
}

// declaredEncoding returns the encoding named by the XML declaration
// that starts text (after white space), the declaration's line, and
// whether there is a declaration at all. It reads only what it needs:
// encoding/xml checks the declaration's syntax afterwards.
func declaredEncoding(text []byte) (label string, line int, declared bool) {
	t := bytes.TrimLeft(text, " \t\r\n")
	line = 1 + bytes.Count(text[:len(text)-len(t)], []byte{'\n'})
	if !bytes.HasPrefix(t, []byte("<?xml")) || len(t) < 6 || !isSpace(t[5:6]) {
		return "", line, false
	}
	end := bytes.Index(t, []byte("?>"))
	if end < 0 {
		return "", line, true
	}
	decl := t[5:end]
	for {
		i := bytes.Index(decl, []byte("encoding"))
		if i < 0 {
			return "", line, true
		}
		rest := bytes.TrimLeft(decl[i+len("encoding"):], " \t\r\n")
		if i == 0 || !isSpace(decl[i-1:i]) || len(rest) == 0 || rest[0] != '=' {
			decl = decl[i+len("encoding"):]
			continue
		}
		rest = bytes.TrimLeft(rest[1:], " \t\r\n")
		if len(rest) == 0 || rest[0] != '"' && rest[0] != '\'' {
			return "", line, true
		}
		if j := bytes.IndexByte(rest[1:], rest[0]); j >= 0 {
			return string(rest[1 : 1+j]), line, true
		}
		return "", line, true
	}
}
