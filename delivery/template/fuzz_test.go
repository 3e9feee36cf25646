package template

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/lodge-mail/lodge/internal/testenv"
)

// FuzzParse: Parse never panics; an error is a *SyntaxError whose line and
// column point at a "{{" of the source (or the size limit); a template
// that parses renders, in both modes and as a body, to exactly its
// computed size in Text mode, and its keys are what Missing reports of
// empty data.
func FuzzParse(f *testing.F) {
	testenv.LimitMinimization(f, "10s")
	for _, s := range []string{"", "Dear {{name}}", "{{link}}", "{{{{x}}", "{{", "{{}}", "{{ a.b-c_d }}\n{{x y}}", "<p>{{a}}</p><br>",
		`<a href="{{link}}">x</a>`, "<style>", "<!--", "a\r\nb {{c", "{{{{{{a}}}}", "ü{{ü}}"} {
		f.Add(s, "v")
	}
	f.Fuzz(func(t *testing.T, src, value string) {
		tm, err := Parse(src)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				if len(src) > MaxBytes {
					return
				}
				t.Fatalf("%q: %T %v", src, err, err)
			}
			i := offset(src, se.Line, se.Col)
			if i < 0 || !strings.HasPrefix(src[i:], "{{") || !strings.HasPrefix(src[i:], strings.TrimSuffix(se.Marker, "…")) {
				t.Fatalf("%q: error %v does not point at its marker", src, err)
			}
			return
		}
		data := map[string]string{}
		if got := tm.Missing(data); len(got) != len(tm.Keys()) {
			t.Fatalf("%q: missing %q of keys %q", src, got, tm.Keys())
		}
		for _, k := range tm.Keys() {
			if k == "" || strings.EqualFold(k, LinkMarker) {
				t.Fatalf("%q: key %q", src, k)
			}
			data[k] = value
		}
		text, err := tm.Render(data, "L"+value, Text)
		if err != nil {
			if !errors.Is(err, ErrTooLong) {
				t.Fatal(err)
			}
			return
		}
		if len(text) != tm.size(data, len(value)+1) {
			t.Fatalf("%q: rendered %d bytes, computed %d", src, len(text), tm.size(data, len(value)+1))
		}
		if _, err := tm.Render(data, "L"+value, HTML); err != nil {
			t.Fatal(err)
		}
		if _, _, err := tm.Body(data, "L"+value); err != nil {
			t.Fatal(err)
		}
		if len(tm.CheckLetter(0, data)) != 0 && tm.size(data, LinkAllowance) <= MaxOutput {
			t.Fatalf("%q: Check refused complete data", src)
		}
	})
}

// offset returns the byte offset of a 1-based line and column (in
// characters), or -1.
func offset(src string, line, col int) int {
	i := 0
	for l := 1; l < line; l++ {
		nl := strings.IndexByte(src[i:], '\n')
		if nl < 0 {
			return -1
		}
		i += nl + 1
	}
	for c := 1; c < col; c++ {
		if i >= len(src) {
			return -1
		}
		_, n := utf8.DecodeRuneInString(src[i:])
		i += n
	}
	return i
}

// FuzzHTMLToText: never panics, always ends in one line break, and keeps
// every word of a text without '<' or '&'.
func FuzzHTMLToText(f *testing.F) {
	testenv.LimitMinimization(f, "10s")
	for _, s := range []string{"", "<p>a</p>", "<a href='x'>y</a>", "<style>", "<!--", "<li>x", "a &amp; b", "<br><br><br>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := HTMLToText(s)
		if !strings.HasSuffix(out, "\n") {
			t.Fatalf("%q: %q", s, out)
		}
		if !strings.ContainsAny(s, "<&") {
			got := strings.FieldsFunc(out, isSpace)
			want := strings.FieldsFunc(s, isSpace)
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Fatalf("%q: words %q, want %q", s, got, want)
			}
		}
	})
}
