package metadata_test

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/lodge-mail/lodge/upload/metadata"
)

// TestHostile: inputs built to hurt. Each is refused (or trimmed) with
// exactly these problems; none panics, recurses per level of nesting or
// holds more than the input in memory.
func TestHostile(t *testing.T) {
	f := func(name string, in []byte, lim metadata.Limits, wantPack bool, want ...string) *metadata.Pack {
		t.Helper()
		p, probs := metadata.Parse(name, in, lim)
		if (p != nil) != wantPack {
			t.Errorf("%s (%d bytes): got pack %v, want %v", name, len(in), p != nil, wantPack)
		}
		if got := strs(probs); !reflect.DeepEqual(got, want) {
			t.Errorf("%s (%d bytes):\ngot  %.300q\nwant %.300q", name, len(in), got, want)
		}
		return p
	}
	rep := func(s string, n int) string { return strings.Repeat(s, n) }
	none := metadata.Limits{}

	// Nesting 10,000 deep, closed and unclosed, in every container.
	f("deep.json", []byte(rep(`{"a":`, 10000)+"1"+rep("}", 10000)), none, false, "nested deeper than 32 levels at line 1, column 161")
	f("deep.json", []byte(rep("[", 10000)), none, false, "nested deeper than 32 levels at line 1, column 33")
	f("deep.json", []byte(`{"letters":[{"custom_data":`+rep(`{"k":[`, 5000)), none, false, "nested deeper than 32 levels at line 1, column 117")
	f("deep.xml", []byte("<pack>"+rep("<a>", 10000)+rep("</a>", 10000)+"</pack>"), none, false, "a: unknown field", "nested deeper than 32 levels at line 1, column 103")
	f("deep.xml", []byte(rep("<pack>", 10000)), none, false, "pack: unknown field", "nested deeper than 32 levels at line 1, column 199")
	// At the limit nesting is fine: an unknown field is skipped whole.
	f("ok.json", []byte(`{"x":`+rep("[", 31)+rep("]", 31)+`}`), none, true, "x: unknown field")
	f("ok.xml", []byte("<pack><x>"+rep("<a>", 30)+rep("</a>", 30)+"</x></pack>"), none, true, "x: unknown field")
	f("lim.json", []byte(`{"x":[[]]}`), metadata.Limits{MaxDepth: 2}, false, "nested deeper than 2 levels at line 1, column 7")

	// Limits of one read "1 level", "1 byte" and so on.
	one := metadata.Limits{MaxDepth: 1, MaxLetters: 1, MaxStringBytes: 1, MaxValues: 1}
	f("one.json", []byte(`{"x":[]}`), one, false, "nested deeper than 1 level at line 1, column 6")
	f("one.xml", []byte(`<pack><x/></pack>`), one, false, "nested deeper than 1 level at line 1, column 11")
	f("one.json", []byte(`{"title":"ab","ab":1}`), metadata.Limits{MaxStringBytes: 1}, true,
		"title: key of 5 bytes exceeds the limit of 1 byte", "ab: key of 2 bytes exceeds the limit of 1 byte")
	f("one.xml", []byte(`<pack><title>ab</title></pack>`), metadata.Limits{MaxStringBytes: 1}, true, "title: value exceeds the limit of 1 byte")
	f("one.json", []byte(`{"letters":[{},{}]}`), metadata.Limits{MaxLetters: 1}, true, "letters: more than 1 letter (the limit)")
	f("one.json", []byte(`{"attachments":["a","b"]}`), metadata.Limits{MaxValues: 1}, true,
		"attachments[1]: more than 1 value (attachments, postal lines, files, custom_data entries) in the file (the limit)")
	f("one.json", []byte(`{}`), metadata.Limits{MaxBytes: 1}, false, "metadata file of 2 bytes exceeds the limit of 1 byte")

	// A 10 MB string, value and key.
	big := rep("x", 10<<20)
	p := f("big.json", []byte(`{"title":"`+big+`","department":"d"}`), none, true, "title: value of 10485760 bytes exceeds the limit of 65536 bytes")
	if p != nil && (p.Title != nil || *p.Department != "d") {
		t.Error("big.json: the long title was kept or the rest lost")
	}
	f("big.json", []byte(`{"`+big+`":1}`), none, true, rep("x", 64)+`: key of 10485760 bytes exceeds the limit of 65536 bytes`)
	f("big.xml", []byte("<pack><title>"+big+"</title><department>d</department></pack>"), none, true, "title: value exceeds the limit of 65536 bytes")
	f("big.xml", []byte("<pack><letters><letter><postal>"+big+"</postal></letter></letters></pack>"), none, true, "letters[0].postal: value exceeds the limit of 65536 bytes")
	f("big.json", []byte(`{"letters":[{"postal":"`+big+`"}]}`), none, true, "letters[0].postal: value of 10485760 bytes exceeds the limit of 65536 bytes")
	// The limit applies to the decoded value, not to its escaped form.
	f("esc.json", []byte(`{"title":"`+rep(`\u0041`, 60000)+`"}`), none, true)
	f("esc.json", []byte(`{"title":"`+rep(`\u0041`, 70000)+`"}`), none, true, "title: value of 70000 bytes exceeds the limit of 65536 bytes")
	// The whole file.
	f("huge.json", make([]byte, 32<<20+1), none, false, "metadata file of 33554433 bytes exceeds the limit of 33554432 bytes")
	f("small.json", []byte(`{"title":"0123456789"}`), metadata.Limits{MaxBytes: 10}, false, "metadata file of 22 bytes exceeds the limit of 10 bytes")

	// 100,001 letters: the first 100,000 are kept.
	p = f("many.json", []byte(`{"letters":[`+strings.TrimSuffix(rep(`{},`, 100001), ",")+`],"title":"t"}`), none, true, "letters: more than 100000 letters (the limit)")
	if p != nil && (len(p.Letters) != 100000 || p.Title == nil) {
		t.Errorf("many.json: %d letters, title %v", len(p.Letters), p.Title)
	}
	p = f("many.xml", []byte(`<pack><letters>`+rep(`<letter/>`, 100001)+`</letters><title>t</title></pack>`), none, true, "letters: more than 100000 letters (the limit)")
	if p != nil && (len(p.Letters) != 100000 || p.Title == nil) {
		t.Errorf("many.xml: %d letters, title %v", len(p.Letters), p.Title)
	}
	f("few.json", []byte(`{"letters":[{},{},[[[]]],{}]}`), metadata.Limits{MaxLetters: 2}, true, "letters: more than 2 letters (the limit)")

	// Values other than letters are bounded across the file.
	const values = "more than 3 values (attachments, postal lines, files, custom_data entries) in the file (the limit)"
	vl := metadata.Limits{MaxValues: 3}
	f("values.json", []byte(`{"attachments":["a","b","c","d"],"title":"t"}`), vl, true, "attachments[3]: "+values)
	f("values.json", []byte(`{"letters":[{"postal":"a\nb","files":[{},{}]}]}`), vl, true, "letters[0].files[1]: "+values)
	f("values.json", []byte(`{"letters":[{"custom_data":{"a":"1","b":"2"}},{"postal":["x",{"country":"AU"}]}]}`), vl, true, "letters[1].postal[1]: "+values)
	f("values.xml", []byte(`<pack><letters><letter><postal>a&#10;b&#10;c&#10;d</postal></letter></letters></pack>`), vl, true, "letters[0].postal: "+values)
	f("values.xml", []byte(`<pack><letters><letter><custom_data><a/><b/><c/><d/></custom_data></letter></letters></pack>`), vl, true, "letters[0].custom_data.d: "+values)

	// Invalid UTF-8: a stray byte, an overlong encoding, an encoded surrogate.
	for _, b := range []string{"\xff", "\xc0\xaf", "\xed\xa0\x80"} {
		f("bad.json", []byte(`{"title":"`+b+`"}`), none, false, "invalid UTF-8 at line 1, column 11: JSON metadata must be UTF-8 (RFC 7159)")
		f("bad.xml", []byte("<pack><title>"+b+"</title></pack>"), none, false, "invalid XML at line 1: invalid UTF-8: XML metadata must be UTF-8 or declare its encoding")
	}

	// Duplicate keys: reported, the first value kept.
	p = f("dup.json", []byte(`{"title":"a","title":"b","letters":[{"email":"x@y.co","email":"z@y.co"}]}`), none, true, "title: duplicate field", "letters[0].email: duplicate field")
	if p != nil && (*p.Title != "a" || p.Letters[0].Email != "x@y.co") {
		t.Error("dup.json: the first value was not kept")
	}
	f("dup.xml", []byte(`<pack><letters/><letters/></pack>`), none, true, "letters: duplicate field")

	// Entity expansion: a DTD is refused before anything is expanded, and
	// without one an entity reference is an error.
	laughs := `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">` + func() string {
		var b strings.Builder
		for i := 1; i <= 9; i++ {
			fmt.Fprintf(&b, `<!ENTITY lol%d "%s">`, i, rep(fmt.Sprintf("&lol%d;", i-1), 10))
		}
		return strings.Replace(b.String(), "&lol0;", "&lol;", -1)
	}() + `]><pack><title>&lol9;</title></pack>`
	f("laughs.xml", []byte(laughs), none, false, "line 1: a document type declaration (<!DOCTYPE …>) is not accepted: metadata needs no DTD or entities")
	f("xxe.xml", []byte(`<?xml version="1.0"?>`+"\n"+`<!DOCTYPE pack [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><pack><title>&xxe;</title></pack>`), none, false,
		"line 2: a document type declaration (<!DOCTYPE …>) is not accepted: metadata needs no DTD or entities")
	f("ent.xml", []byte(`<pack><title>&lol9;</title></pack>`), none, false, "invalid XML at line 1: invalid character entity &lol9;")

	// Two roots.
	f("two.xml", []byte(`<pack/><pack/>`), none, false, "a second root element <pack>: a metadata file has exactly one root")
	f("two.json", []byte(`{}{}`), none, false, "invalid JSON at line 1, column 3: invalid character '{' after top-level value")

	// Byte order marks: UTF-8 is skipped, UTF-16 read in XML (see
	// TestUTF16 for its hostile cases) and refused in JSON.
	f("bom.json", []byte("\xef\xbb\xbf{}"), none, true)
	f("bom.xml", []byte("\xef\xbb\xbf<pack/>"), none, true)
	f("bom16.xml", []byte("\xff\xfe<\x00p\x00a\x00c\x00k\x00/\x00>\x00"), none, true)
	f("bom16.xml", []byte("\xff\xfe<\x00p\x00"), none, false, "invalid XML at line 1: unexpected EOF")
	f("bom16.json", []byte("\xff\xfe{\x00}\x00"), none, false, "UTF-16 is not supported for JSON: JSON metadata must be UTF-8 (RFC 8259)")

	// NUL bytes, raw and escaped.
	f("nul.json", []byte("{\"title\":\"a\x00\"}"), none, false, "invalid JSON at line 1, column 12: invalid character '\\x00' in string literal")
	f("nul.json", []byte(`{"title":"a\u0000"}`), none, true, "title: value contains a NUL character")
	f("nul.json", []byte("{}\x00"), none, false, "invalid JSON at line 1, column 3: invalid character '\\x00' after top-level value")
	f("nul.xml", []byte("<pack><title>a\x00</title></pack>"), none, false, "invalid XML at line 1: illegal character code U+0000")
	f("nul.xml", []byte("<pack><title>a&#0;</title></pack>"), none, false, "invalid XML at line 1: illegal character code U+0000")
	f("nul.xml", []byte("<pack/>\x00"), none, false, "invalid XML at line 1: illegal character code U+0000")
	f("nul", []byte("\x00\x00\x00"), none, false, `"nul" is neither JSON (.json) nor XML (.xml)`)

	// Too many problems: the list stops at the limit, plus one entry.
	var b bytes.Buffer
	b.WriteString("{")
	for i := range 2000 {
		fmt.Fprintf(&b, `"u%d":1,`, i)
	}
	b.WriteString(`"title":"t"}`)
	_, probs := metadata.Parse("many.json", b.Bytes(), none)
	if len(probs) != 1001 || probs[999].String() != "u999: unknown field" || probs[1000].String() != "too many problems: stopped after 1000" {
		t.Errorf("many problems: %d, ending %q", len(probs), strs(probs[max(len(probs)-2, 0):]))
	}
	f("few.xml", []byte(`<pack><a/><b/><c/><d/><e/></pack>`), metadata.Limits{MaxProblems: 3}, true,
		"a: unknown field", "b: unknown field", "c: unknown field", "too many problems: stopped after 3")
}
