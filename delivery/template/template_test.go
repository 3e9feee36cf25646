package template

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// TestParse: templates that parse, with their keys, link and HTML-ness,
// and what they render to.
func TestParse(t *testing.T) {
	data := map[string]string{"name": "Jo <Citizen>", "due-date.1": "1 May", "Name": "NAME", "amount_due": "$5 & 6"}
	f := func(src string, keys []string, link, isHTML bool, text, html string) {
		t.Helper()
		tm, err := Parse(src)
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		if got := tm.Keys(); !reflect.DeepEqual(got, keys) {
			t.Errorf("%q: keys %q, want %q", src, got, keys)
		}
		if tm.UsesLink() != link || tm.IsHTML() != isHTML {
			t.Errorf("%q: link %v html %v, want %v %v", src, tm.UsesLink(), tm.IsHTML(), link, isHTML)
		}
		if got, err := tm.Render(data, "https://x/l/a?b&c", Text); err != nil || got != text {
			t.Errorf("%q: text %q %v, want %q", src, got, err, text)
		}
		if got, err := tm.Render(data, "https://x/l/a?b&c", HTML); err != nil || got != html {
			t.Errorf("%q: html %q %v, want %q", src, got, err, html)
		}
	}
	f("", nil, false, false, "", "")
	f("Hello", nil, false, false, "Hello", "Hello")
	f("Dear {{name}},", []string{"name"}, false, false, "Dear Jo <Citizen>,", "Dear Jo &lt;Citizen&gt;,")
	f("{{ name }}{{\tName\t}}{{name}}", []string{"name", "Name"}, false, false, "Jo <Citizen>NAMEJo <Citizen>", "Jo &lt;Citizen&gt;NAMEJo &lt;Citizen&gt;")
	f("Due {{due-date.1}}: {{amount_due}}", []string{"due-date.1", "amount_due"}, false, false, "Due 1 May: $5 & 6", "Due 1 May: $5 &amp; 6")
	f("Read it: {{link}} {{LINK}} {{Link}}", nil, true, false, "Read it: https://x/l/a?b&c https://x/l/a?b&c https://x/l/a?b&c",
		"Read it: https://x/l/a?b&amp;c https://x/l/a?b&amp;c https://x/l/a?b&amp;c")
	// a key the data lacks renders as nothing (Check reports it first)
	f("[{{missing}}]", []string{"missing"}, false, false, "[]", "[]")
	// literal braces: {{{{ is "{{"; single braces and "}}" are text
	f("{{{{name}} {a} }} {", nil, false, false, "{{name}} {a} }} {", "{{name}} {a} }} {")
	f("{{{{{{{{", nil, false, false, "{{{{", "{{{{")
	f("{{{{{{name}}", []string{"name"}, false, false, "{{Jo <Citizen>", "{{Jo &lt;Citizen&gt;")
	f("{{name}}}", []string{"name"}, false, false, "Jo <Citizen>}", "Jo &lt;Citizen&gt;}")
	// HTML, by its first character, a closing tag, or <br>, <p>, <hr>
	f("  <p>Hi {{name}}</p>", []string{"name"}, false, true, "  <p>Hi Jo <Citizen></p>", "  <p>Hi Jo &lt;Citizen&gt;</p>")
	f("Hi <b>you</b>", nil, false, true, "Hi <b>you</b>", "Hi <b>you</b>")
	f("line<br/>two", nil, false, true, "line<br/>two", "line<br/>two")
	f("one<BR>two", nil, false, true, "one<BR>two", "one<BR>two")
	f("a<b and c>d, x</y>", nil, false, false, "a<b and c>d, x</y>", "a<b and c>d, x</y>")
	f("1 < 2 > 0", nil, false, false, "1 < 2 > 0", "1 < 2 > 0")
	f("Ünïcode {{name}} ✓", []string{"name"}, false, false, "Ünïcode Jo <Citizen> ✓", "Ünïcode Jo &lt;Citizen&gt; ✓")
}

// TestParseErrors: every malformed marker is an error located by line and
// column (characters), quoting it.
func TestParseErrors(t *testing.T) {
	f := func(src, want string) {
		t.Helper()
		_, err := Parse(src)
		if err == nil || err.Error() != want {
			t.Errorf("%q: got %v, want %s", src, err, want)
		}
	}
	f("Hi {{}}", `line 1, column 4: empty marker "{{}}"`)
	f("Hi {{  }}", `line 1, column 4: empty marker "{{  }}"`)
	f("Hi {{name", `line 1, column 4: marker not closed by }} on its line "{{name"`)
	f("Hi {{name\n}}", `line 1, column 4: marker not closed by }} on its line "{{name"`)
	f("Hi {{name}\r\n}}", `line 1, column 4: marker not closed by }} on its line "{{name}"`)
	f("a\nb\n\nü {{", `line 4, column 3: marker not closed by }} on its line "{{"`)
	f("x {{#if name}}y{{/if}}", `line 1, column 3: unknown marker (a marker is {{link}} or a custom_data key of letters, digits, '_', '-' and '.') "{{#if name}}"`)
	f("{{first name}}", `line 1, column 1: unknown marker (a marker is {{link}} or a custom_data key of letters, digits, '_', '-' and '.') "{{first name}}"`)
	f("{{{name}}}", `line 1, column 1: unknown marker (a marker is {{link}} or a custom_data key of letters, digits, '_', '-' and '.') "{{{name}}"`)
	f("{{näme}}", `line 1, column 1: unknown marker (a marker is {{link}} or a custom_data key of letters, digits, '_', '-' and '.') "{{näme}}"`)
	f("ok {{a}}\n\t✓ {{a b", `line 2, column 4: marker not closed by }} on its line "{{a b"`)
	f("{{"+strings.Repeat("k", 100), `line 1, column 1: marker not closed by }} on its line "{{`+strings.Repeat("k", 38)+`…"`)
	f("{{x"+strings.Repeat(" ", 10)+"y}}", `line 1, column 1: unknown marker (a marker is {{link}} or a custom_data key of letters, digits, '_', '-' and '.') "{{x          y}}"`)
	f(strings.Repeat("x", MaxBytes+1), fmt.Sprintf("the template has %d bytes; at most %d are accepted", MaxBytes+1, MaxBytes))
	f(strings.Repeat("{{a}}", MaxMarkers+1), fmt.Sprintf(`line 1, column %d: more than 10000 markers (the limit) at "{{a}}"`, 5*MaxMarkers+1))
}

// TestHostile: templates an attacker would send parse or fail cleanly,
// within the bounds, and render what the bounds allow.
func TestHostile(t *testing.T) {
	big := strings.Repeat("v", 64<<10)
	f := func(name, src string, data map[string]string, wantErr string) {
		t.Helper()
		tm, err := Parse(src)
		if err != nil {
			if wantErr == "" || !strings.Contains(err.Error(), wantErr) {
				t.Errorf("%s: parse: %v, want %q", name, err, wantErr)
			}
			return
		}
		_, _, err = tm.Body(data, "https://l")
		if wantErr == "" && err != nil || wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)) {
			t.Errorf("%s: body: %v, want %q", name, err, wantErr)
		}
	}
	f("10,000 markers", strings.Repeat("{{a}}", MaxMarkers), map[string]string{"a": "x"}, "")
	f("6,500 links in 64 KiB", strings.Repeat("{{ link}}", MaxBytes/9), nil, "")
	f("10,000 markers of 64 KiB values", strings.Repeat("{{a}}", MaxMarkers), map[string]string{"a": big}, "too long")
	f("10,001 markers", strings.Repeat("{{a}}", MaxMarkers+1), nil, "more than 10000 markers")
	f("64 KiB of {", strings.Repeat("{", MaxBytes), nil, "")
	f("64 KiB less one of {", strings.Repeat("{", MaxBytes-1), nil, "not closed")
	f("64 KiB of {{{{", strings.Repeat("{{{{", MaxBytes/4), nil, "")
	f("64 KiB of }", strings.Repeat("}", MaxBytes), nil, "")
	f("64 KiB of <", strings.Repeat("<", MaxBytes), nil, "")
	f("64 KiB of <a", strings.Repeat("<a", MaxBytes/2), nil, "")
	f("64 KiB of <p>", strings.Repeat("<p>", MaxBytes/3), nil, "")
	f("unclosed comment", "<p>"+strings.Repeat("<!--", 10000), nil, "")
	f("unclosed style", "<style>"+strings.Repeat("<style>", 9000), nil, "")
	f("unclosed quote", `<p><a href="`+strings.Repeat(`'`, 60000), nil, "")
	f("64 KiB of {{ and spaces", "{{"+strings.Repeat(" ", MaxBytes-2), nil, "not closed")
	f("key of 64 KiB", "{{"+strings.Repeat("k", MaxBytes-4)+"}}", nil, "")
	f("NUL and invalid UTF-8", "\x00\xff{{a}}\xfe", map[string]string{"a": "\xff\x00"}, "")
	f("CR LF in values", "Dear {{a}}", map[string]string{"a": "x\r\nBcc: evil@example.com"}, "")
	f("HTML injection in values", "<p>{{a}}</p>", map[string]string{"a": `<script>alert(1)</script>"'&`}, "")
}

// TestValuesEscaped: in HTML, no value can open a tag or end an attribute.
func TestValuesEscaped(t *testing.T) {
	tm, err := Parse(`<a href="{{link}}" title='{{t}}'>{{t}}</a>`)
	if err != nil {
		t.Fatal(err)
	}
	text, html, err := tm.Body(map[string]string{"t": `"'><script>x</script>&`}, `https://x/l/"onmouseover=1`)
	if err != nil {
		t.Fatal(err)
	}
	want := `<a href="https://x/l/&#34;onmouseover=1" title='&#34;&#39;&gt;&lt;script&gt;x&lt;/script&gt;&amp;'>&#34;&#39;&gt;&lt;script&gt;x&lt;/script&gt;&amp;</a>`
	if html != want {
		t.Errorf("html %s\nwant %s", html, want)
	}
	if want := "\"'><script>x</script>& <https://x/l/\"onmouseover=1>\n"; text != want {
		t.Errorf("text %q, want %q", text, want)
	}
}

// TestHTMLToText: the text part of HTML emails.
func TestHTMLToText(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		if got := HTMLToText(in); got != want {
			t.Errorf("%q:\ngot  %q\nwant %q", in, got, want)
		}
	}
	f("", "\n")
	f("plain", "plain\n")
	f("<p>Dear Jo,</p><p>Your   letter\n  is <b>ready</b>.</p>", "Dear Jo,\n\nYour letter is ready.\n")
	f("a<br>b<br/><br><br>c", "a\nb\n\nc\n")
	f(`<p>Read it <a href="https://x/l/T?a=1&amp;b=2">here</a>.</p>`, "Read it here <https://x/l/T?a=1&b=2>.\n")
	f(`<a href="https://x/l/T">https://x/l/T</a>`, "https://x/l/T\n")
	f(`<a href=mailto:a@b.com>a@b.com</a>`, "a@b.com\n")
	f(`<a href='https://q'><img src=x></a> next`, "<https://q> next\n")
	f("<html><head><title>T</title><style>p{color:red}</style></head><body><h1>Title</h1><p>Text</p></body></html>", "Title\n\nText\n")
	f("<!DOCTYPE html><!-- a comment <p>x</p> --><div>A</div><div>B</div>", "A\nB\n")
	f("<ul><li>one</li><li> two </li></ul>", "- one\n- two\n")
	f("<table><tr><td>a</td><td>b</td></tr><tr><td>c</td></tr></table>", "a b\nc\n")
	f("1 &lt; 2 &amp;&amp; 3 &gt; 2&nbsp;ok &#169; &unknown;", "1 < 2 && 3 > 2 ok © &unknown;\n")
	f("x < y and <3", "x < y and <3\n")
	f("<SCRIPT>alert('<p>')</SCRIPT>after", "after\n")
	f("<style>never closed", "\n")
}

// TestCheck: a letter lacking a key the template uses is an error naming
// the letter; values too long to send are one too.
func TestCheck(t *testing.T) {
	tm, err := Parse("Dear {{name}}, {{amount}} due. {{link}} {{name}}")
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", MaxOutput/2)
	letters := []map[string]string{
		{"name": "Jo", "amount": "$5"},
		nil,
		{"name": "Al", "password": "p"},
		{"name": big, "amount": ""},
		{"name": "", "amount": ""},
	}
	var got []string
	for _, e := range Check(tm, letters) {
		var le *LetterError
		if !errors.As(e, &le) {
			t.Fatalf("%T %v", e, e)
		}
		got = append(got, e.Error())
	}
	want := []string{
		`letters[1].custom_data: no key "name" for the template's {{name}}`,
		`letters[1].custom_data: no key "amount" for the template's {{amount}}`,
		`letters[2].custom_data: no key "amount" for the template's {{amount}}`,
		fmt.Sprintf("letters[3].custom_data: the template filled with these values has %d bytes; at most %d are accepted", MaxOutput+14+LinkAllowance, MaxOutput),
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	// what Check passes, Render renders
	if _, err := tm.Render(letters[0], strings.Repeat("l", LinkAllowance), HTML); err != nil {
		t.Fatal(err)
	}
	if _, err := tm.Render(letters[3], "", Text); !errors.Is(err, ErrTooLong) {
		t.Fatalf("too long: %v", err)
	}
}

// TestLinear: 10,000 markers parse into 10,000 parts, and rendering
// allocates the output once.
func TestLinear(t *testing.T) {
	src := strings.Repeat("{{k}}{{link}}", MaxMarkers/2)
	tm, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	if tm.Markers() != MaxMarkers {
		t.Fatalf("%d markers", tm.Markers())
	}
	data := map[string]string{"k": "value"}
	allocs := testing.AllocsPerRun(10, func() { tm.Render(data, "https://link", Text) })
	if allocs > 1 {
		t.Fatalf("Render allocates %v times, want once", allocs)
	}
	out, _ := tm.Render(data, "https://link", Text)
	if want := strings.Repeat("valuehttps://link", MaxMarkers/2); out != want {
		t.Fatal("wrong output")
	}
}

func BenchmarkParse10000(b *testing.B) {
	src := strings.Repeat("{{a}}{{link}}", MaxMarkers/2)
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if _, err := Parse(src); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRender10000(b *testing.B) {
	tm, err := Parse(strings.Repeat("{{a}}{{link}}", MaxMarkers/2))
	if err != nil {
		b.Fatal(err)
	}
	data := map[string]string{"a": "Jo Citizen"}
	for b.Loop() {
		tm.Body(data, "https://lodge.example/l/abcdefghijklmnopqrstuvwxyz")
	}
}
