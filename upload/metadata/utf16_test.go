package metadata_test

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/lodge-mail/lodge/upload/metadata"
)

// TestUTF16Files: XML metadata as .NET writes it (XmlSerializer's layout,
// encoding="utf-16", CRLF), in UTF-16 of both byte orders, with a byte
// order mark and, with LF, without one (the declaration tells). The files
// in testdata/utf16 were made by iconv (not by this package's decoder)
// from one UTF-8 text holding characters beyond U+FFFF (surrogate
// pairs):
//
//	{ printf '\xff\xfe'; iconv -f UTF-8 -t UTF-16LE pack.crlf.xml; } > le_bom_crlf.xml
//	iconv -f UTF-8 -t UTF-16BE pack.xml > be_nobom.xml
//
// Each must give the pack of pack.json, the same mailing in UTF-8 JSON.
func TestUTF16Files(t *testing.T) {
	read := func(name string) []byte {
		t.Helper()
		b, err := os.ReadFile(filepath.Join("testdata", "utf16", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	want, probs := metadata.Parse("pack.json", read("pack.json"), metadata.Limits{})
	if want == nil || len(probs) > 0 {
		t.Fatalf("pack.json: %q", strs(probs))
	}
	files := metadata.Files{{Name: "statements.pdf", Pages: 3}}
	for _, name := range []string{"le_bom_crlf.xml", "be_bom_crlf.xml", "le_nobom.xml", "be_nobom.xml"} {
		p, probs := metadata.Parse(name, read(name), metadata.Limits{})
		if p == nil || len(probs) > 0 {
			t.Errorf("%s: %q", name, strs(probs))
			continue
		}
		if !reflect.DeepEqual(stripRaw(p), stripRaw(want)) {
			t.Errorf("%s:\ngot  %s\nwant %s", name, dump(stripRaw(p)), dump(stripRaw(want)))
		}
		if raw := p.Letters[0].Postal.Raw; !strings.Contains(raw, "<line>Chloë O’Brien</line>") {
			t.Errorf("%s: Postal.Raw is not the source text in UTF-8: %q", name, raw)
		}
		if _, vp := p.Plan(files); len(vp) > 0 {
			t.Errorf("%s: plan: %q", name, strs(vp))
		}
	}
}

// le and be write s in UTF-16 (little- and big-endian), without a byte
// order mark; units may hold lone surrogates.
func le(s string) string { return string(units(binary.LittleEndian, utf16.Encode([]rune(s)))) }
func be(s string) string { return string(units(binary.BigEndian, utf16.Encode([]rune(s)))) }

func units(order binary.AppendByteOrder, u []uint16) []byte {
	var b []byte
	for _, x := range u {
		b = order.AppendUint16(b, x)
	}
	return b
}

const bomLE, bomBE = "\xff\xfe", "\xfe\xff"

// TestUTF16: what UTF-16 metadata is read, and every way of getting it
// wrong refused with where and why.
func TestUTF16(t *testing.T) {
	// ok parses in and wants the title.
	ok := func(name, in, title string) {
		t.Helper()
		p, probs := metadata.Parse(name, []byte(in), metadata.Limits{})
		if p == nil || len(probs) > 0 || p.Title == nil || *p.Title != title {
			t.Errorf("%s %q: problems %q, pack %s", name, in, strs(probs), dump(p))
		}
	}
	decl := `<?xml version="1.0" encoding="utf-16"?>`
	pack := "<pack><title>Zoë 😀</title></pack>"
	ok("m.xml", bomLE+le(pack), "Zoë 😀")
	ok("m.xml", bomBE+be(pack), "Zoë 😀")
	ok("m.xml", bomLE+le(decl+pack), "Zoë 😀")
	ok("m.xml", bomBE+be(`<?xml version='1.0' encoding='UTF-16BE' standalone='yes'?>`+pack), "Zoë 😀")
	ok("m.xml", bomLE+le(`<?xml version="1.0" encoding = "UTF-16LE"?>`+pack), "Zoë 😀")
	ok("m.xml", bomLE+le(`<?xml version="1.0"?>`+pack), "Zoë 😀")
	ok("m.xml", le(decl+pack), "Zoë 😀")
	ok("m.xml", be(decl+pack), "Zoë 😀")
	ok("m.xml", le("\r\n  "+decl+"\r\n"+pack), "Zoë 😀")
	ok("m.xml", be(`<?xml version="1.0" encoding="ISO-10646-UCS-2"?>`+pack), "Zoë 😀")
	ok("metadata", bomLE+le(pack), "Zoë 😀") // sniffed
	ok("m.xml", bomLE+le("<pack><title>&#x1F600;&amp;</title></pack>"), "😀&")

	// bad parses in and wants exactly these problems and no pack.
	bad := func(name, in string, want ...string) {
		t.Helper()
		p, probs := metadata.Parse(name, []byte(in), metadata.Limits{})
		if p != nil || !reflect.DeepEqual(strs(probs), want) {
			t.Errorf("%s %q:\ngot  %q (pack %v)\nwant %q", name, in, strs(probs), p != nil, want)
		}
	}
	// Broken UTF-16: an odd byte count, lone surrogates of either half,
	// at the end and in the middle, located by line and column.
	bad("m.xml", bomLE+le(pack)+"x", "invalid UTF-16LE at line 1, column 34: the file ends with half a character (an odd number of bytes)")
	bad("m.xml", bomBE+be("<pack>\n<title>")+"\x00", "invalid UTF-16BE at line 2, column 8: the file ends with half a character (an odd number of bytes)")
	bad("m.xml", bomLE+le("<pack>")+"\x3c", "invalid UTF-16LE at line 1, column 7: the file ends with half a character (an odd number of bytes)")
	bad("m.xml", bomLE+string(units(binary.LittleEndian, append(utf16.Encode([]rune("<pack><title>\na")), 0xD800, 'b'))),
		"invalid UTF-16LE at line 2, column 2: lone surrogate U+D800, followed by U+0062 instead of its other half")
	bad("m.xml", bomBE+string(units(binary.BigEndian, append(utf16.Encode([]rune("<pack><title>")), 0xDC00, 0xD800))),
		"invalid UTF-16BE at line 1, column 14: lone surrogate U+DC00 (the second half of a character without its first)")
	bad("m.xml", bomLE+string(units(binary.LittleEndian, append(utf16.Encode([]rune("<pack><title>")), 0xDBFF))),
		"invalid UTF-16LE at line 1, column 14: lone surrogate U+DBFF at the end (half a character)")
	bad("m.xml", bomLE+string(units(binary.LittleEndian, append(utf16.Encode([]rune("<pack><title>")), 0xD800, 0xD800, 0xDC00))),
		"invalid UTF-16LE at line 1, column 14: lone surrogate U+D800, followed by U+D800 instead of its other half")
	// The byte order mark and the declaration disagree.
	bad("m.xml", bomLE+le(`<?xml version="1.0" encoding="UTF-8"?>`+pack),
		`line 1: the file is UTF-16LE (by its byte order mark) but declares encoding "UTF-8": declare UTF-16, or save it in the encoding it declares`)
	bad("m.xml", bomBE+be("\n"+`<?xml version="1.0" encoding="ISO-8859-1"?>`+pack),
		`line 2: the file is UTF-16BE (by its byte order mark) but declares encoding "ISO-8859-1": declare UTF-16, or save it in the encoding it declares`)
	bad("m.xml", bomLE+le(`<?xml version="1.0" encoding="UTF-16BE"?>`+pack), `line 1: the file is UTF-16LE (by its byte order mark) but declares encoding "UTF-16BE"`)
	bad("m.xml", be(`<?xml version="1.0" encoding="UTF-16LE"?>`+pack), `line 1: the file is UTF-16BE (by its first bytes) but declares encoding "UTF-16LE"`)
	bad("m.xml", le(`<?xml version="1.0" encoding="utf-8"?>`+pack),
		`line 1: the file is UTF-16LE (by its first bytes) but declares encoding "utf-8": declare UTF-16, or save it in the encoding it declares`)
	// Without a byte order mark, only a declaration says UTF-16.
	bad("m.xml", le(pack), `line 1: the file looks like UTF-16LE but has no byte order mark and no XML declaration: start it with a byte order mark or <?xml version="1.0" encoding="UTF-16"?>`)
	bad("m.xml", be(" \n"+`<?xml version="1.0"?>`+pack), `line 2: the file looks like UTF-16BE but has no byte order mark and an XML declaration without an encoding: start it with a byte order mark or <?xml version="1.0" encoding="UTF-16"?>`)
	// A file that is not UTF-16 declaring it, and other encodings.
	bad("m.xml", decl+pack, `line 1: the declaration names encoding "utf-16", but the file is not UTF-16 (no byte order mark, and its first character is one byte): save it as UTF-16 with a byte order mark, or declare the encoding it has`)
	bad("m.xml", "\xef\xbb\xbf"+decl+pack, `line 1: the declaration names encoding "utf-16", but the file is not UTF-16 (no byte order mark, and its first character is one byte): save it as UTF-16 with a byte order mark, or declare the encoding it has`)
	bad("m.xml", "\n"+`<?xml version="1.0" encoding="Shift_JIS"?>`+pack, `line 2: encoding "Shift_JIS" is not supported: use UTF-8 or UTF-16 (ISO-8859-1, Windows-1252 and US-ASCII are also read when declared)`)
	bad("m.xml", bomLE+le(`<?xml version="1.0" encoding="EBCDIC-CP-US"?>`+pack), `line 1: the file is UTF-16LE (by its byte order mark) but declares encoding "EBCDIC-CP-US": declare UTF-16, or save it in the encoding it declares`)
	bad("m.xml", "\x00\x00\xfe\xff"+string(units(binary.BigEndian, []uint16{0, '<'})), "UTF-32 is not supported: metadata must be UTF-8 (XML may also be UTF-16)")
	bad("m.xml", "\xff\xfe\x00\x00<\x00\x00\x00", "UTF-32 is not supported: metadata must be UTF-8 (XML may also be UTF-16)")
	// JSON is UTF-8 only (RFC 8259), named or sniffed.
	bad("m.json", bomLE+le(`{"title":"x"}`), "UTF-16 is not supported for JSON: JSON metadata must be UTF-8 (RFC 8259)")
	bad("metadata", bomBE+be(`  {"title":"x"}`), "UTF-16 is not supported for JSON: JSON metadata must be UTF-8 (RFC 8259)")
	// What UTF-16 can carry that XML refuses.
	bad("m.xml", bomLE+le("<pack><title>a\x00</title></pack>"), "invalid XML at line 1: illegal character code U+0000")
	bad("m.xml", bomBE+be("<pack><title>a\uFFFE</title></pack>"), "invalid XML at line 1: illegal character code U+FFFE")
	bad("m.xml", bomLE, "no root element")
	bad("m.xml", bomLE+le("<pack>\n\n<title></pack>"), "invalid XML at line 3: element <title> closed by </pack>")
	bad("m.xml", bomLE+le("<?xml version=\"1.0\"?><!DOCTYPE pack><pack/>"), "line 1: a document type declaration (<!DOCTYPE …>) is not accepted: metadata needs no DTD or entities")

	// A UTF-16 file has the limits of its bytes, not of its UTF-8 form.
	big := bomLE + le("<pack><title>"+strings.Repeat("x", 40)+"</title></pack>")
	p, probs := metadata.Parse("m.xml", []byte(big), metadata.Limits{MaxBytes: len(big) - 1})
	if want := fmt.Sprintf("metadata file of %d bytes exceeds the limit of %d bytes", len(big), len(big)-1); p != nil || !reflect.DeepEqual(strs(probs), []string{want}) {
		t.Errorf("over the limit: %q, want %q", strs(probs), want)
	}
}

// TestUTF16SameAsUTF8: every golden XML file gives the same pack and
// problems in UTF-16 (with a byte order mark, either order) as in UTF-8.
func TestUTF16SameAsUTF8(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "*.xml"))
	if len(paths) == 0 {
		t.Fatal("no golden XML files")
	}
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		// .NET writes encoding="utf-16"; the golden files say utf-8
		s := strings.Replace(string(b), `encoding="utf-8"`, `encoding="utf-16"`, 1)
		s = strings.Replace(s, `encoding="UTF-8"`, `encoding="utf-16"`, 1)
		want, wantProbs := metadata.Parse("m.xml", b, metadata.Limits{})
		for _, in := range []string{bomLE + le(s), bomBE + be(s)} {
			got, probs := metadata.Parse("m.xml", []byte(in), metadata.Limits{})
			if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(probs, wantProbs) {
				t.Errorf("%s in UTF-16: %s %q, in UTF-8: %s %q", path, dump(got), strs(probs), dump(want), strs(wantProbs))
			}
		}
	}
}
