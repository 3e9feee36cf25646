// Package template fills the metadata's template (spec 2.2: the body of an
// SMS or email) with each letter's data. The specification leaves the
// marker syntax open; this is lodge's:
//
//	{{key}}    the value of the letter's custom_data key: letters, digits,
//	           '_', '-' and '.'; case matters ({{Name}} is not {{name}})
//	{{link}}   the link to the letter's PDF (an unguessable, expiring URL
//	           served by lodge); "link" in any case is reserved, so a
//	           custom_data key spelt link, Link, LINK ... cannot be used
//	{{{{       a literal "{{" ("}}" alone needs no escape)
//
// Spaces and tabs inside the braces are allowed ({{ name }}). Anything else
// that starts with "{{" is an error located by line and column (1-based,
// columns in characters) quoting the marker: an empty marker ({{}}), one
// never closed on its line ({{name), or one holding other characters
// ({{#if x}}, {{first name}}, {{{name}}}). A custom_data key with other
// characters (a space, say) cannot be used in a template. A single '{' or
// '}' is text.
//
// Which keys a letter must have is checked when the metadata is validated
// (Check, Missing: a key a letter lacks is an error naming the letter), not
// here; Render writes a missing key as nothing.
//
// # Text and HTML
//
// A template is HTML (IsHTML) when, after leading white space, it starts
// with '<' (a document, <!DOCTYPE html>, <p>...), or when it holds a
// closing tag of an HTML element (</p>, </a>, </b> ...) or a <br>, <p> or
// <hr> tag: "a<b and c>d" stays text. An email of an HTML template has an
// HTML part (values escaped with html.EscapeString) and a text part: the
// same HTML turned to text (Body; tags dropped, block elements and <br> as
// line breaks, entities decoded, a link's address after its text, <head>,
// <style>, <script> and comments dropped). A text template gives a text
// part only; its values are written as they are.
//
// Values may hold CR and LF: they are fine in a body, and a caller must
// never put a rendered template, or a value, in a mail header.
//
// # Bounds
//
// A template is at most MaxBytes (64 KiB, the metadata's string limit)
// with at most MaxMarkers markers (10,000): more is a Parse error. A
// rendered text is at most MaxOutput (1 MiB; its HTML form at most five
// times that, the most html.EscapeString can grow it): Check reports a
// letter whose values make it longer, and Render refuses it. Parsing and
// rendering take time linear in the template and the output.
package template

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Bounds of a template and of what it renders.
const (
	MaxBytes   = 64 << 10
	MaxMarkers = 10_000
	MaxOutput  = 1 << 20
	// htmlGrowth is the most html.EscapeString multiplies a value's
	// length by ("&" becomes "&amp;").
	htmlGrowth = 5
)

// Mode says how values are written by Render.
type Mode int

const (
	// Text writes values as they are.
	Text Mode = iota
	// HTML writes values escaped with html.EscapeString (the link too).
	HTML
)

// LinkMarker is the reserved name of the link marker.
const LinkMarker = "link"

// ErrTooLong is the error of a rendered text past MaxOutput.
var ErrTooLong = errors.New("the filled template is too long")

// SyntaxError is a problem of a template's text, at Line and Col
// (1-based; Col counts characters), quoting Marker (cut at 40 characters).
type SyntaxError struct {
	Line, Col int
	Marker    string
	Msg       string
}

func (e *SyntaxError) Error() string {
	if e.Marker == "" {
		return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Col, e.Msg)
	}
	return fmt.Sprintf("line %d, column %d: %s %q", e.Line, e.Col, e.Msg, e.Marker)
}

// part is a piece of a template: text, a key's value, or the link.
type part struct {
	text string
	key  string // a custom_data key, when not empty
	link bool
}

// Template is a parsed template. It is immutable and safe for concurrent
// use.
type Template struct {
	parts   []part
	keys    []string // distinct, in order of first use
	link    bool
	html    bool
	text    int // bytes of text parts
	markers int
}

// Parse parses a template. Its errors are *SyntaxError, or a plain error
// for a template over MaxBytes.
func Parse(src string) (*Template, error) {
	if len(src) > MaxBytes {
		return nil, fmt.Errorf("the template has %d bytes; at most %d are accepted", len(src), MaxBytes)
	}
	// each "{{" starts at most one marker and one text part before it:
	// the parts are allocated once
	t := &Template{html: isHTML(src), parts: make([]part, 0, 2*strings.Count(src, "{{")+1)}
	seen := map[string]bool{}
	text := func(s string) { // text parts are pieces of src: no copies
		if s != "" {
			t.parts = append(t.parts, part{text: s})
			t.text += len(s)
		}
	}
	line, lineStart := 1, 0 // for locating errors
	at := func(i int) (int, int) { return line, utf8.RuneCountInString(src[lineStart:i]) + 1 }
	i := 0
	for i < len(src) {
		j := strings.Index(src[i:], "{{")
		if j < 0 {
			text(src[i:])
			break
		}
		for k := i; k < i+j; k++ {
			if src[k] == '\n' {
				line, lineStart = line+1, k+1
			}
		}
		text(src[i : i+j])
		i += j
		if strings.HasPrefix(src[i+2:], "{{") {
			text(src[i : i+2])
			i += 4
			continue
		}
		name, end, problem := scanMarker(src, i)
		if problem != "" {
			l, c := at(i)
			return nil, &SyntaxError{Line: l, Col: c, Marker: quoteMarker(src, i), Msg: problem}
		}
		if t.markers++; t.markers > MaxMarkers {
			l, c := at(i)
			return nil, &SyntaxError{Line: l, Col: c, Marker: src[i:end], Msg: fmt.Sprintf("more than %d markers (the limit) at", MaxMarkers)}
		}
		if strings.EqualFold(name, LinkMarker) {
			t.parts = append(t.parts, part{link: true})
			t.link = true
		} else {
			t.parts = append(t.parts, part{key: name})
			if !seen[name] {
				seen[name] = true
				t.keys = append(t.keys, name)
			}
		}
		i = end
	}
	return t, nil
}

func isKeyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
}

// scanMarker reads the marker starting at src[i] ("{{"): its name and
// the index after its "}}", or why it is not one.
func scanMarker(src string, i int) (name string, end int, problem string) {
	k := i + 2
	for k < len(src) && (src[k] == ' ' || src[k] == '\t') {
		k++
	}
	start := k
	for k < len(src) && isKeyByte(src[k]) {
		k++
	}
	name = src[start:k]
	for k < len(src) && (src[k] == ' ' || src[k] == '\t') {
		k++
	}
	switch {
	case strings.HasPrefix(src[k:], "}}") && name == "":
		return "", 0, "empty marker"
	case strings.HasPrefix(src[k:], "}}"):
		return name, k + 2, ""
	case k == len(src) || src[k] == '\n' || src[k] == '\r':
		return "", 0, "marker not closed by }} on its line"
	}
	close := strings.Index(src[k:], "}}")
	if nl := strings.IndexAny(src[k:], "\r\n"); close < 0 || nl >= 0 && nl < close {
		return "", 0, "marker not closed by }} on its line"
	}
	return "", 0, "unknown marker (a marker is {{link}} or a custom_data key of letters, digits, '_', '-' and '.')"
}

// quoteMarker returns the marker at src[i] for an error: up to its "}}"
// or the end of its line, cut at 40 characters.
func quoteMarker(src string, i int) string {
	rest := src[i:]
	end := len(rest)
	if nl := strings.IndexAny(rest, "\r\n"); nl >= 0 {
		end = nl
	}
	if c := strings.Index(rest[2:], "}}"); c >= 0 && c+4 < end {
		end = c + 4
	}
	m := rest[:end]
	if utf8.RuneCountInString(m) > 40 {
		n := 0
		for k := range m {
			if n == 40 {
				m = m[:k] + "…"
				break
			}
			n++
		}
	}
	return m
}

// Keys returns the custom_data keys the template uses, each once, in order
// of first use.
func (t *Template) Keys() []string { return append([]string(nil), t.keys...) }

// UsesLink reports whether the template has a {{link}} marker.
func (t *Template) UsesLink() bool { return t.link }

// IsHTML reports whether the template is HTML (see the package doc).
func (t *Template) IsHTML() bool { return t.html }

// Markers returns the number of markers in the template.
func (t *Template) Markers() int { return t.markers }

// size returns the length of the template rendered as Text with data and
// a link of linkLen bytes.
func (t *Template) size(data map[string]string, linkLen int) int {
	n := t.text
	for _, p := range t.parts {
		switch {
		case p.link:
			n += linkLen
		case p.key != "":
			n += len(data[p.key])
		}
	}
	return n
}

// Render fills the template with a letter's custom_data (a key it lacks
// gives nothing: Check first) and the link to its PDF. In HTML mode values
// and the link are escaped with html.EscapeString; template text is
// written as it is in both modes. A result past MaxOutput (five times that
// in HTML) is ErrTooLong.
func (t *Template) Render(data map[string]string, link string, mode Mode) (string, error) {
	n := t.size(data, len(link))
	if n > MaxOutput {
		return "", fmt.Errorf("%w: %d bytes (at most %d)", ErrTooLong, n, MaxOutput)
	}
	var b strings.Builder
	b.Grow(n)
	for _, p := range t.parts {
		v := p.text
		switch {
		case p.link:
			v = link
		case p.key != "":
			v = data[p.key]
		default:
			b.WriteString(v)
			continue
		}
		if mode == HTML {
			escape(&b, v)
		} else {
			b.WriteString(v)
		}
	}
	return b.String(), nil
}

// Body renders the template for an email or SMS: text is the message as
// text (a text template filled as it is; an HTML template filled and then
// turned to text, see the package doc), and html the HTML part, empty for
// a text template.
func (t *Template) Body(data map[string]string, link string) (text, html string, err error) {
	if !t.html {
		text, err = t.Render(data, link, Text)
		return text, "", err
	}
	html, err = t.Render(data, link, HTML)
	if err != nil {
		return "", "", err
	}
	return HTMLToText(html), html, nil
}

// Missing returns the keys of the template that data lacks, in order of
// first use.
func (t *Template) Missing(data map[string]string) []string {
	var out []string
	for _, k := range t.keys {
		if _, ok := data[k]; !ok {
			out = append(out, k)
		}
	}
	return out
}

// LinkAllowance is the length Check counts for the link: lodge's links
// are about 100 bytes.
const LinkAllowance = 256

// LetterError is Check's error for one letter.
type LetterError struct {
	Letter int    // the letter's index in the metadata's letters
	Key    string // the custom_data key it lacks; "" for a text too long
	Size   int    // the rendered length, when too long
}

// Error is Path() and Reason().
func (e *LetterError) Error() string { return e.Path() + ": " + e.Reason() }

// Path locates the problem in the metadata: "letters[3].custom_data".
func (e *LetterError) Path() string { return fmt.Sprintf("letters[%d].custom_data", e.Letter) }

// Reason says what is wrong, without the path.
func (e *LetterError) Reason() string {
	if e.Key == "" {
		return fmt.Sprintf("the template filled with these values has %d bytes; at most %d are accepted", e.Size, MaxOutput)
	}
	return fmt.Sprintf("no key %q for the template's {{%s}}", e.Key, e.Key)
}

// CheckLetter checks one letter's custom_data (letters[index]) against the
// template: each key the template uses that data lacks, and values that
// make the filled text longer than MaxOutput (the link counted at
// LinkAllowance bytes), is a *LetterError.
func (t *Template) CheckLetter(index int, data map[string]string) []*LetterError {
	var errs []*LetterError
	for _, k := range t.Missing(data) {
		errs = append(errs, &LetterError{Letter: index, Key: k})
	}
	if n := t.size(data, LinkAllowance); n > MaxOutput {
		errs = append(errs, &LetterError{Letter: index, Size: n})
	}
	return errs
}

// Check is CheckLetter for each letter's custom_data, in order.
func Check(t *Template, letters []map[string]string) []error {
	var errs []error
	for i, data := range letters {
		for _, e := range t.CheckLetter(i, data) {
			errs = append(errs, e)
		}
	}
	return errs
}
