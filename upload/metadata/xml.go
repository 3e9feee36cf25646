package metadata

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

const xsiNS = "http://www.w3.org/2001/XMLSchema-instance"

// parseXML reads an XML metadata file, data in UTF-8 (converted from
// enc when that is UTF-16).
func (st *state) parseXML(data []byte, enc utf16Enc) *Pack {
	if enc.on && !st.checkUTF16Declaration(data, enc) {
		return nil
	}
	r := &xmlReader{st: st, src: data, utf16: enc.on}
	r.d = xml.NewDecoder(bytes.NewReader(data))
	r.d.Strict = true
	r.d.CharsetReader = r.charset
	for {
		tok, ok := r.next()
		if !ok {
			if !st.stop {
				st.fatal("no root element")
			}
			return nil
		}
		switch t := tok.(type) {
		case xml.CharData:
			if !isSpace(t) {
				st.fatal("text before the root element")
				return nil
			}
		case xml.StartElement:
			if t.Name.Local != "pack" {
				st.fatal(fmt.Sprintf("the root element must be <pack>, got <%s>", clip(t.Name.Local)))
				return nil
			}
			r.enter(t)
			if r.isNil {
				st.fatal("the root element <pack> is nil")
				return nil
			}
			p := st.decodePack(r)
			r.afterRoot()
			if st.broken {
				return nil
			}
			return p
		}
	}
}

// afterRoot reads what follows the root element: only white space,
// comments and processing instructions may.
func (r *xmlReader) afterRoot() {
	for !r.st.stop {
		tok, ok := r.next()
		if !ok {
			return
		}
		switch t := tok.(type) {
		case xml.StartElement:
			r.st.fatal(fmt.Sprintf("a second root element <%s>: a metadata file has exactly one root", clip(t.Name.Local)))
		case xml.CharData:
			if !isSpace(t) {
				r.st.fatal("text after the root element")
			}
		}
	}
}

// xmlReader decodes with encoding/xml's token stream, positioned just
// after the start tag of the current value's element; each method
// consumes through its end tag. Depth is counted here, so nesting is
// refused before it costs anything.
type xmlReader struct {
	st      *state
	d       *xml.Decoder
	src     []byte // the input as the decoder sees it (converted from a legacy charset)
	depth   int
	pending xml.Token // a start tag read ahead by textOr
	isNil   bool      // the current element has xsi:nil="true"
	started bool      // a token other than white space has been read
	utf16   bool      // src was converted from UTF-16, whose declaration has been checked
	// Offsets into src: the end of the latest token read, the end of the
	// latest start tag and the start of the latest end tag.
	prevOff, startOff, contentEnd int64
}

func (r *xmlReader) xml() bool { return true }

// next returns the next token that matters (comments and processing
// instructions are dropped), or false at the end or on an error, which
// it reports.
func (r *xmlReader) next() (xml.Token, bool) {
	if r.pending != nil {
		t := r.pending
		r.pending = nil
		r.depth++ // textOr took it back
		return t, true
	}
	for !r.st.stop {
		tok, err := r.d.Token()
		if err != nil {
			if err != io.EOF {
				r.syntaxError(err)
			}
			return nil, false
		}
		off := r.d.InputOffset()
		switch t := tok.(type) {
		case xml.StartElement:
			r.depth++
			if r.depth > r.st.lim.MaxDepth {
				line, col := r.d.InputPos()
				r.st.fatal(fmt.Sprintf("nested deeper than %s at line %d, column %d", count(r.st.lim.MaxDepth, "level"), line, col))
				return nil, false
			}
			r.startOff = off
		case xml.EndElement:
			r.depth--
			r.contentEnd = r.prevOff
		case xml.CharData:
			tok = xml.CharData(bytes.Clone(t))
		case xml.Directive:
			line, _ := r.d.InputPos()
			if bytes.HasPrefix(t, []byte("DOCTYPE")) {
				r.st.fatal(fmt.Sprintf("line %d: a document type declaration (<!DOCTYPE …>) is not accepted: metadata needs no DTD or entities", line))
			} else {
				r.st.fatal(fmt.Sprintf("line %d: markup declaration <!%s…> is not accepted", line, clip(string(t[:min(len(t), 20)]))))
			}
			return nil, false
		case xml.ProcInst:
			if t.Target == "xml" && r.started {
				line, _ := r.d.InputPos()
				r.st.fatal(fmt.Sprintf("line %d: the XML declaration <?xml …?> must come first", line))
				return nil, false
			}
			r.prevOff = off
			continue
		case xml.Comment:
			r.prevOff = off
			continue
		}
		r.prevOff = off
		if cd, text := tok.(xml.CharData); !text || !isSpace(cd) {
			r.started = true
		}
		return tok, true
	}
	return nil, false
}

func (r *xmlReader) syntaxError(err error) {
	var se *xml.SyntaxError
	if errors.As(err, &se) {
		msg := se.Msg
		if strings.Contains(msg, "invalid UTF-8") {
			msg += ": XML metadata must be UTF-8 or declare its encoding"
		}
		r.st.fatal(fmt.Sprintf("invalid XML at line %d: %s", se.Line, msg))
		return
	}
	if r.st.stop {
		return // the charset reader reported it
	}
	r.st.fatal("invalid XML: " + strings.TrimPrefix(err.Error(), "xml: "))
}

// charset converts a document that declares a legacy encoding to UTF-8.
// Latin-1 and Windows-1252 are converted; US-ASCII is read as is; UTF-16
// was converted before (see parseXML), and is refused in a file that is
// not UTF-16.
func (r *xmlReader) charset(label string, input io.Reader) (io.Reader, error) {
	var conv func([]byte) []byte
	lower := strings.ToLower(label)
	_, isUTF16 := utf16Labels[lower]
	switch {
	case isUTF16 && r.utf16, lower == "utf8", lower == "us-ascii", lower == "ascii":
		return input, nil
	case lower == "iso-8859-1", lower == "iso8859-1", lower == "iso_8859-1", lower == "latin1", lower == "latin-1", lower == "l1":
		conv = latin1
	case lower == "windows-1252", lower == "cp1252":
		conv = cp1252
	case r.utf16:
		// checkUTF16Declaration lets only UTF-16 names through
		r.st.fatal(fmt.Sprintf("encoding %s is not UTF-16", quote(label)))
		return nil, errors.New("unsupported encoding")
	case isUTF16:
		line, _ := r.d.InputPos()
		r.st.fatal(fmt.Sprintf("line %d: the declaration names encoding %s, but the file is not UTF-16 (no byte order mark, and its first character is one byte): save it as UTF-16 with a byte order mark, or declare the encoding it has", line, quote(label)))
		return nil, errors.New("unsupported encoding")
	default:
		line, _ := r.d.InputPos()
		r.st.fatal(fmt.Sprintf("line %d: encoding %s is not supported: use UTF-8 or UTF-16 (ISO-8859-1, Windows-1252 and US-ASCII are also read when declared)", line, quote(label)))
		return nil, errors.New("unsupported encoding")
	}
	rest, err := io.ReadAll(input)
	if err != nil {
		return nil, err
	}
	off := int(r.d.InputOffset())
	converted := conv(rest)
	src := make([]byte, 0, off+len(converted))
	src = append(src, r.src[:off]...)
	r.src = append(src, converted...)
	return bytes.NewReader(converted), nil
}

func latin1(b []byte) []byte {
	out := make([]byte, 0, len(b)+len(b)/4)
	for _, c := range b {
		out = utf8.AppendRune(out, rune(c))
	}
	return out
}

// cp1252High maps Windows-1252 bytes 0x80 to 0x9F; the rest is Latin-1.
var cp1252High = [32]rune{
	'€', 0x81, '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', 0x8D, 'Ž', 0x8F,
	0x90, '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', 0x9D, 'ž', 'Ÿ',
}

func cp1252(b []byte) []byte {
	out := make([]byte, 0, len(b)+len(b)/4)
	for _, c := range b {
		r := rune(c)
		if c >= 0x80 && c < 0xA0 {
			r = cp1252High[c-0x80]
		}
		out = utf8.AppendRune(out, r)
	}
	return out
}

// enter takes in the start tag of the current value: xsi:nil and
// namespace declarations are understood, other attributes are problems.
func (r *xmlReader) enter(se xml.StartElement) {
	r.isNil = false
	for _, a := range se.Attr {
		switch {
		case a.Name.Space == "xmlns", a.Name.Space == "" && a.Name.Local == "xmlns":
		case a.Name.Space == xsiNS || a.Name.Space == "xsi":
			if a.Name.Local == "nil" {
				v := trimSpace(a.Value)
				r.isNil = v == "true" || v == "1"
			}
		case a.Name.Space == "xml" || a.Name.Space == "http://www.w3.org/XML/1998/namespace":
		default:
			r.st.here(fmt.Sprintf("attribute %s is not used: give fields as child elements", quote(a.Name.Local)))
		}
	}
}

func (r *xmlReader) null() bool { return r.isNil }

// skip consumes the rest of the current element.
func (r *xmlReader) skip() { r.skipTo(r.depth) }

// skipTo consumes tokens up to the end tag of the element at level.
func (r *xmlReader) skipTo(level int) {
	for {
		tok, ok := r.next()
		if !ok {
			return
		}
		if _, end := tok.(xml.EndElement); end && r.depth < level {
			return
		}
	}
}

// text consumes the current element and returns its text. A child
// element is a problem (reported once).
func (r *xmlReader) text() (string, bool) {
	level := r.depth
	var b []byte
	ok, long := true, false
	for {
		tok, more := r.next()
		if !more {
			return "", false
		}
		switch t := tok.(type) {
		case xml.CharData:
			if len(b)+len(t) > r.st.lim.MaxStringBytes {
				if !long {
					r.st.here(fmt.Sprintf("value exceeds the limit of %s", count(r.st.lim.MaxStringBytes, "byte")))
				}
				long, ok = true, false
				continue
			}
			b = append(b, t...)
		case xml.StartElement:
			if ok {
				r.st.here(fmt.Sprintf("want text, got element <%s>", clip(t.Name.Local)))
			}
			ok = false
			r.skip()
		case xml.EndElement:
			if r.depth < level {
				return string(b), ok
			}
		}
	}
}

func (r *xmlReader) str(trim bool) (string, bool) {
	s, ok := r.text()
	if !ok {
		return "", false
	}
	if trim {
		s = trimSpace(s)
	}
	if !r.st.checkString(s) {
		return "", false
	}
	return s, true
}

func (r *xmlReader) integer() (int, bool) {
	s, ok := r.text()
	if !ok {
		return 0, false
	}
	s = trimSpace(s)
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && ne.Err == strconv.ErrRange {
			r.st.here("integer " + quote(s) + " is out of range")
		} else {
			r.st.here("want an integer, got " + quote(s))
		}
		return 0, false
	}
	return int(n), true
}

func (r *xmlReader) boolean() (bool, bool) {
	s, ok := r.text()
	if !ok {
		return false, false
	}
	switch trimSpace(s) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	r.st.here("want true or false, got " + quote(trimSpace(s)))
	return false, false
}

func (r *xmlReader) object(fn func(key string)) {
	level := r.depth
	reported := false
	for !r.st.stop {
		tok, ok := r.next()
		if !ok {
			return
		}
		switch t := tok.(type) {
		case xml.CharData:
			if !reported && !isSpace(t) {
				r.st.here(fmt.Sprintf("want child elements, got text %s", quote(string(t))))
				reported = true
			}
		case xml.StartElement:
			r.st.push(t.Name.Local)
			r.enter(t)
			fn(t.Name.Local)
			r.st.pop()
		case xml.EndElement:
			if r.depth < level {
				return
			}
		}
	}
}

func (r *xmlReader) list(singular string, fn func(i int) bool) {
	level := r.depth
	reported := false
	for i := 0; !r.st.stop; {
		tok, ok := r.next()
		if !ok {
			return
		}
		switch t := tok.(type) {
		case xml.CharData:
			if !reported && !isSpace(t) {
				r.st.here(fmt.Sprintf("want <%s> elements, got text %s", singular, quote(string(t))))
				reported = true
			}
		case xml.StartElement:
			r.st.pushIdx(i)
			r.enter(t)
			more := true
			if t.Name.Local != singular {
				r.st.here(fmt.Sprintf("want <%s>, got <%s>", singular, clip(t.Name.Local)))
				r.skip()
			} else {
				more = fn(i)
			}
			r.st.pop()
			i++
			if !more {
				r.skip() // the item fn left
				r.skipTo(level)
				return
			}
		case xml.EndElement:
			if r.depth < level {
				return
			}
		}
	}
}

func (r *xmlReader) textOr(string) (string, bool, bool) {
	level := r.depth
	var b []byte
	for {
		tok, ok := r.next()
		if !ok {
			return "", false, false
		}
		switch t := tok.(type) {
		case xml.CharData:
			if len(b) <= r.st.lim.MaxStringBytes {
				b = append(b, t...)
			}
		case xml.StartElement:
			if !isSpace(b) {
				// The text is dropped; the elements are read.
				r.st.here("text mixed with elements: give either text or child elements")
			}
			r.pending = t
			r.depth--
			return "", false, true
		case xml.EndElement:
			if r.depth < level {
				if len(b) > r.st.lim.MaxStringBytes {
					r.st.here(fmt.Sprintf("value exceeds the limit of %s", count(r.st.lim.MaxStringBytes, "byte")))
					return "", false, false
				}
				return string(b), true, true
			}
		}
	}
}

func (r *xmlReader) mark() int { return int(r.startOff) }

func (r *xmlReader) rawSince(m int) string {
	end := int(r.contentEnd)
	if m < 0 || end < m || end > len(r.src) {
		return ""
	}
	return string(r.src[m:end])
}

func isSpace(b []byte) bool {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\r', '\n':
		default:
			return false
		}
	}
	return true
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
