package xps

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lodge-mail/lodge/internal/pagetext"
)

// readAll opens a package and reads every page, with and without a zone,
// returning the first error and the characters read.
func readAll(data []byte, lim Limits) (int, error) {
	d, err := open(data, lim)
	if err != nil {
		return 0, err
	}
	n := 0
	var p pagetext.Page
	for i := 0; i < d.NumPages(); i++ {
		for _, zone := range []*pagetext.Rect{nil, &window} {
			if err := d.PageText(i, zone, &p); err != nil {
				return n, err
			}
			n += len(p.Chars)
		}
	}
	return n, nil
}

// TestHostile: broken, hostile and oversized packages give a located
// error of the right category (or, where the page can be read, its
// text), never a panic or a hang.
func TestHostile(t *testing.T) {
	f := func(name string, data []byte, lim Limits, cat error, msg string) {
		t.Helper()
		_, err := readAll(data, lim)
		if cat == nil {
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
			return
		}
		found := err != nil
		for _, m := range strings.Split(msg, " … ") {
			found = found && strings.Contains(err.Error(), m)
		}
		if !found || !errors.Is(err, cat) {
			t.Errorf("%s: got %v, want %v containing %q", name, err, cat, msg)
		}
		var e *Error
		if err != nil && !errors.As(err, &e) {
			t.Errorf("%s: %T is not an *Error", name, err)
		}
	}
	one := func(body string) []byte { return pages(t, []string{body}) }
	run := func(attrs string) []byte { return one(glyphs(`UnicodeString="A" ` + attrs)) }
	withFont := func(font []byte, name, attrs string) []byte {
		return zipOf(t, true, "_rels/.rels", relsXML, "seq.fdseq", seqXML,
			"Documents/1/doc.fdoc", `<FixedDocument `+xpsNS+`><PageContent Source="p.fpage"/></FixedDocument>`,
			"Documents/1/p.fpage", page(`<Glyphs OriginX="96" OriginY="192" FontRenderingEmSize="96" Fill="#FF000000" FontUri="/`+name+`" `+attrs+`/>`),
			name, string(font))
	}
	seq := func(fdoc, fpage string) []byte {
		return zipOf(t, false, "_rels/.rels", relsXML, "seq.fdseq", seqXML, "Documents/1/doc.fdoc", fdoc, "Documents/1/Pages/1.fpage", fpage)
	}
	fdoc := func(content string) string { return `<FixedDocument ` + xpsNS + `>` + content + `</FixedDocument>` }
	okPage := page(glyphs(`UnicodeString="A" Indices="36,50"`))

	// Not a package, or not XPS.
	f("not a ZIP", []byte("hello, this is not a zip"), Limits{}, ErrMalformed, "not a ZIP package")
	f("empty", nil, Limits{}, ErrMalformed, "not a ZIP package")
	f("a ZIP of something else", zipOf(t, false, "a.txt", "hi"), Limits{}, ErrMalformed, "no FixedDocumentSequence")
	f("two sequences and no relationship", zipOf(t, false, "a.fdseq", seqXML, "b.fdseq", seqXML), Limits{}, ErrMalformed, "several FixedDocumentSequences")
	f("two parts whose names differ in case", zipOf(t, false, "seq.fdseq", seqXML, "SEQ.fdseq", seqXML), Limits{}, ErrMalformed, `two parts named "SEQ.fdseq"`)
	f("relationship to a missing sequence", zipOf(t, false, "_rels/.rels", relsXML), Limits{}, ErrMalformed, "seq.fdseq as the FixedDocumentSequence, which is not in the package")
	f("relationship outside the package", zipOf(t, false, "_rels/.rels", strings.Replace(relsXML, "/seq.fdseq", "http://example.com/seq.fdseq", 1)), Limits{}, ErrMalformed, "outside the package")

	// Structure that loops or points the wrong way.
	f("the sequence is something else", zipOf(t, false, "_rels/.rels", relsXML, "seq.fdseq", `<FixedPage `+xpsNS+` Width="1" Height="1"/>`), Limits{}, ErrMalformed, "seq.fdseq: root element is FixedPage, not an XPS FixedDocumentSequence")
	f("an unknown namespace", zipOf(t, false, "_rels/.rels", relsXML, "seq.fdseq", `<FixedDocumentSequence xmlns="urn:evil"/>`), Limits{}, ErrMalformed, `FixedDocumentSequence of namespace "urn:evil"`)
	f("an empty part", zipOf(t, false, "_rels/.rels", relsXML, "seq.fdseq", ``), Limits{}, ErrMalformed, "seq.fdseq is empty")
	f("the sequence names itself", zipOf(t, false, "_rels/.rels", relsXML, "seq.fdseq", `<FixedDocumentSequence `+xpsNS+`><DocumentReference Source="/seq.fdseq"/></FixedDocumentSequence>`), Limits{}, ErrMalformed, "names itself")
	f("a document names itself as a page", seq(fdoc(`<PageContent Source="doc.fdoc"/>`), okPage), Limits{}, ErrMalformed, "names Documents/1/doc.fdoc as a page")
	f("a document names the sequence as a page", seq(fdoc(`<PageContent Source="/seq.fdseq"/>`), okPage), Limits{}, ErrMalformed, "names seq.fdseq as a page")
	f("a document reference to a page", zipOf(t, false, "_rels/.rels", relsXML, "seq.fdseq", `<FixedDocumentSequence `+xpsNS+`><DocumentReference Source="p.fpage"/></FixedDocumentSequence>`, "p.fpage", okPage), Limits{}, ErrMalformed, "p.fpage: root element is FixedPage, not an XPS FixedDocument")
	f("a page that is a document", seq(fdoc(`<PageContent Source="Pages/1.fpage"/>`), fdoc(``)), Limits{}, ErrMalformed, "page 1: Documents/1/Pages/1.fpage: root element is FixedDocument")
	f("a missing page", seq(fdoc(`<PageContent Source="Pages/2.fpage"/>`), okPage), Limits{}, ErrMalformed, "names page Documents/1/Pages/2.fpage, which is not in the package")
	f("a PageContent without Source", seq(fdoc(`<PageContent/>`), okPage), Limits{}, ErrMalformed, "line 1: PageContent has no Source")
	f("no pages", seq(fdoc(``), okPage), Limits{}, ErrMalformed, "the document has no pages")
	f("a missing document", zipOf(t, false, "_rels/.rels", relsXML, "seq.fdseq", seqXML), Limits{}, ErrMalformed, `part "Documents/1/doc.fdoc" is not in the package`)
	f("pieces without a last one", zipOf(t, false, "_rels/.rels", relsXML, "seq.fdseq", seqXML, "Documents/1/doc.fdoc", fdoc(`<PageContent Source="Pages/1.fpage"/>`),
		"Documents/1/Pages/1.fpage/[0].piece", okPage), Limits{}, ErrMalformed, "has no last piece")

	// XML.
	f("invalid UTF-8", one("<Canvas Name=\"\xff\"/>"), Limits{}, ErrMalformed, "invalid UTF-8")
	f("an entity bomb", one(`<!DOCTYPE x [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>`+glyphs(`UnicodeString="&b;" Indices="1,1"`)), Limits{}, ErrMalformed, "invalid character entity &b;")
	f("an unclosed element", seq(fdoc(`<PageContent Source="Pages/1.fpage"/>`), `<FixedPage `+xpsNS+` Width="10" Height="10"><Canvas>`), Limits{}, ErrMalformed, "the part ends inside an element")
	f("a mismatched end tag", one(`<Canvas><Path></Canvas></Path>`), Limits{}, ErrMalformed, "line 1: </Canvas> closes <Path>")
	f("an encoding not supported", seq(fdoc(`<PageContent Source="Pages/1.fpage"/>`), `<?xml version="1.0" encoding="EBCDIC"?>`+okPage), Limits{}, ErrMalformed, `encoding "EBCDIC" is not supported`)
	f("elements nested too deep", one(strings.Repeat("<Canvas>", 300)+strings.Repeat("</Canvas>", 300)), Limits{}, ErrLimit, "nests elements more than 256 deep")
	f("too many elements", one(strings.Repeat(`<Path Data="M 0,0"/>`, 200)), Limits{MaxElements: 100}, ErrLimit, "more than 100 elements")

	// Numbers and attributes.
	for _, c := range []struct{ attrs, msg string }{
		{`Indices="36,50" OriginX="NaN"`, `Glyphs OriginX: "NaN" is not a number`},
		{`Indices="36,50" OriginX="Infinity"`, `"Infinity" is not a number`},
		{`Indices="36,50" OriginX="1e400"`, `"1e400" is not a number`},
		{`Indices="36,50" OriginX="1e12"`, `"1e12" is out of range`},
		{`Indices="36,50" OriginX="0x10"`, `"0x10" is not a number`},
		{`Indices="36,50" OriginX="1_000"`, `"1_000" is not a number`},
		{`Indices="36,NaN"`, `Indices: "NaN" is not a number`},
		{`Indices="36,-5"`, `advance "-5" is negative`},
		{`Indices="70000,5"`, `glyph index "70000"`},
		{`Indices="36,1,2,3,4"`, `more than four numbers`},
		{`Indices="(0:1)36,5"`, `cluster map "(0:1)"`},
		{`Indices="(1:0)36,5"`, `cluster map "(1:0)"`},
		{`Indices="(x)36,5"`, `cluster map "(x)"`},
		{`Indices="(1:2 36,5"`, `has no ')'`},
		{`Indices="(1:3)36,5;37,5"`, `a cluster of 3 glyphs has only 2`},
		{`Indices="(1:2)36,5;(1:1)37,5"`, `a cluster starts inside a cluster`},
		{`Indices="36,50" RenderTransform="1,0,0,1,NaN,0"`, `"NaN" is not a number`},
		{`Indices="36,50" RenderTransform="1,0,0"`, `3 numbers, not 6`},
		{`Indices="36,50" RenderTransform="{StaticResource Nowhere}"`, `StaticResource "Nowhere" is not defined`},
		{`Indices="36,50" Fill="red"`, `colour "red" is not an XPS colour`},
		{`Indices="36,50" Fill="#GGHHII"`, `colour "#GGHHII" is not hexadecimal`},
		{`Indices="36,50" Opacity="-"`, `"-" is not a number`},
		{`Indices="36,50" BidiLevel="1.5"`, `"1.5" is not a level`},
		{`Indices="36,50" BidiLevel="99"`, `"99" is not a level`},
	} {
		f("Glyphs "+c.attrs, run(c.attrs), Limits{}, ErrMalformed, "page 1: Documents/1/Pages/1.fpage line 1: Glyphs … "+c.msg)
	}
	f("Glyphs without an origin", one(`<Glyphs FontRenderingEmSize="10" UnicodeString="A"/>`), Limits{}, ErrMalformed, "Glyphs needs OriginX, OriginY and FontRenderingEmSize")
	f("a negative em size", one(`<Glyphs OriginX="1" OriginY="1" FontRenderingEmSize="-10" UnicodeString="A"/>`), Limits{}, ErrMalformed, `"-10" is negative`)
	f("transforms that reach infinity", one(strings.Repeat(`<Canvas RenderTransform="1e9,0,0,1e9,0,0">`, 40)+glyphs(`UnicodeString="A" Indices="36,50"`)+strings.Repeat(`</Canvas>`, 40)), Limits{}, ErrMalformed, "puts the text at infinity")
	f("a StaticResource of the wrong kind", one(`<Canvas><Canvas.Resources><ResourceDictionary><SolidColorBrush x:Key="B" Color="#FF000000"/></ResourceDictionary></Canvas.Resources>`+glyphs(`UnicodeString="A" Indices="36,50" RenderTransform="{StaticResource B}"`)+`</Canvas>`), Limits{}, ErrMalformed, `StaticResource "B" is not a transform`)
	f("a remote dictionary that is missing", one(`<Canvas><Canvas.Resources><ResourceDictionary Source="/d.dict"/></Canvas.Resources></Canvas>`), Limits{}, ErrMalformed, `ResourceDictionary Source: part "d.dict" is not in the package`)
	for _, c := range []struct{ width, msg string }{
		{`Width="0"`, `FixedPage Width "0" is not a page size`},
		{`Width="-5"`, `FixedPage Width "-5" is not a page size`},
		{`Width="1e300"`, `FixedPage Width "1e300" is not a page size`},
		{`Widthless="1"`, `FixedPage has no Width`},
	} {
		f("page "+c.width, seq(fdoc(`<PageContent Source="Pages/1.fpage"/>`), `<FixedPage `+xpsNS+` `+c.width+` Height="10"/>`), Limits{}, ErrMalformed, c.msg)
	}
	f("path data with an unknown command", one(`<Path Data="M 0,0 X 1,1"><Path.Fill><ImageBrush ImageSource="/i.png" Viewbox="0,0,1,1" Viewport="0,0,1,1"/></Path.Fill></Path>`), Limits{}, ErrMalformed, `Path Data: path data command 'X' is unknown`)
	f("path data with a huge number", one(`<Path Data="M 1e999,0"/>`), Limits{}, ErrMalformed, `"1e999" is not a number`)
	f("path data cut short", one(`<Path Data="M 0,0 L 5"/>`), Limits{}, ErrMalformed, `path data ends where a number belongs`)

	// Fonts.
	font, err := os.ReadFile(fontDir + "DejaVuSans.ttf")
	if err != nil {
		t.Fatal(err)
	}
	f("a font that is not a font, needed", withFont([]byte(strings.Repeat("junk", 100)), "f.ttf", `UnicodeString="A"`), Limits{}, ErrMalformed, "line 1: Glyphs: font f.ttf: ")
	f("a font cut short, needed", withFont(font[:2000], "f.ttf", `UnicodeString="A"`), Limits{}, ErrMalformed, "font f.ttf: ")
	f("a broken font, not needed: read with the default box", withFont([]byte("junk"), "f.ttf", `UnicodeString="A" Indices="36,50"`), Limits{}, nil, "")
	f("an obfuscated font without a GUID", withFont(font, "f.odttf", `UnicodeString="A"`), Limits{}, ErrMalformed, "an obfuscated font's name holds no GUID")
	f("an obfuscated font of 10 bytes", withFont(font[:10], "0123456789ABCDEF0123456789ABCDEF.odttf", `UnicodeString="A"`), Limits{}, ErrMalformed, "an obfuscated font of 10 bytes")
	f("a plain font named as obfuscated", withFont(font, "01234567-89AB-CDEF-0123-456789ABCDEF.odttf", `UnicodeString="A"`), Limits{}, ErrMalformed, "font 01234567-89AB-CDEF-0123-456789ABCDEF.odttf")
	f("a missing font, needed", one(`<Glyphs OriginX="1" OriginY="1" FontRenderingEmSize="10" FontUri="/gone.ttf" Fill="#FF000000" UnicodeString="A"/>`), Limits{}, ErrMalformed, "font gone.ttf: the part is not in the package")
	f("no FontUri, needed", one(`<Glyphs OriginX="1" OriginY="1" FontRenderingEmSize="10" Fill="#FF000000" UnicodeString="A"/>`), Limits{}, ErrMalformed, "no FontUri")
	f("a font larger than MaxFontBytes", withFont(font, "f.ttf", `UnicodeString="A"`), Limits{MaxFontBytes: 1000}, ErrLimit, "more than 1000")
	f("a font URI with a fragment not a number", zipOf(t, true, "_rels/.rels", relsXML, "seq.fdseq", seqXML,
		"Documents/1/doc.fdoc", fdoc(`<PageContent Source="p.fpage"/>`),
		"Documents/1/p.fpage", page(`<Glyphs OriginX="96" OriginY="192" FontRenderingEmSize="96" Fill="#FF000000" FontUri="/f.ttf#x" UnicodeString="A"/>`),
		"f.ttf", string(font)), Limits{}, ErrMalformed, `FontUri fragment "x" is not a font number`)
	f("a font collection index of a plain font", zipOf(t, true, "_rels/.rels", relsXML, "seq.fdseq", seqXML,
		"Documents/1/doc.fdoc", fdoc(`<PageContent Source="p.fpage"/>`),
		"Documents/1/p.fpage", page(`<Glyphs OriginX="96" OriginY="192" FontRenderingEmSize="96" Fill="#FF000000" FontUri="/f.ttf#1" UnicodeString="A"/>`),
		"f.ttf", string(font)), Limits{}, ErrMalformed, `font f.ttf: `)

	// Sizes: bombs, budgets and counts.
	spaces := `<FixedPage ` + xpsNS + ` Width="10" Height="10">` + strings.Repeat(" ", 40<<20) + `</FixedPage>`
	bomb := seq(fdoc(`<PageContent Source="Pages/1.fpage"/>`), spaces)
	if len(bomb) > 1<<20 {
		t.Fatalf("the bomb is %d bytes: not a bomb", len(bomb))
	}
	f("a zip bomb: a 40 MiB page", bomb, Limits{}, ErrLimit, fmt.Sprintf("Documents/1/Pages/1.fpage\" is %d bytes decompressed, more than %d", len(spaces), DefaultMaxPartBytes))
	f("a page past the document's budget", pages(t, []string{okPage, okPage, okPage}), Limits{MaxTotalBytes: 2000}, ErrLimit, "the document decompresses to more than 2000 bytes")
	var many strings.Builder
	for i := 0; i < 11; i++ {
		many.WriteString(`<PageContent Source="Pages/1.fpage"/>`)
	}
	f("more pages than MaxPages", seq(fdoc(many.String()), okPage), Limits{MaxPages: 10}, ErrLimit, "more than 10")
	f("more parts than MaxParts", pages(t, []string{"", "", "", ""}), Limits{MaxParts: 5}, ErrLimit, "package declares 8 parts, more than 5")
	f("more characters than MaxChars", run(`UnicodeString="ABCDEFGHIJKL" Indices="1,1;1,1;1,1;1,1;1,1;1,1;1,1;1,1;1,1;1,1;1,1;1,1"`), Limits{MaxChars: 10}, ErrLimit, "draws more than 10 characters")
	f("a part longer than it says", lying(t), Limits{}, ErrMalformed, "cannot be read")
	f("a bad checksum", badCRC(t), Limits{}, ErrMalformed, "checksum error")

	// The deadline: Open, then each page, stop at Timeout.
	var long strings.Builder
	for i := 0; i < 5000; i++ {
		long.WriteString(`<PageContent Source="Pages/1.fpage"/>`)
	}
	f("Open past its deadline", seq(fdoc(long.String()), okPage), Limits{Timeout: time.Nanosecond}, ErrLimit, "XPS document not read within 1ns")
	f("a page past its deadline", one(strings.Repeat(`<Path Data="M 0,0"/>`, 5000)), Limits{Timeout: time.Nanosecond}, ErrLimit, "XPS document not read within 1ns")
}

// lying is a package whose page says it is 100 bytes and inflates to
// more.
func lying(t *testing.T) []byte {
	body := page(strings.Repeat(`<Path Data="M 0,0"/>`, 100))
	var comp bytes.Buffer
	fw, _ := flate.NewWriter(&comp, flate.BestCompression)
	fw.Write([]byte(body))
	fw.Close()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	add := func(name, s string) {
		w, _ := zw.Create(name)
		w.Write([]byte(s))
	}
	add("_rels/.rels", relsXML)
	add("seq.fdseq", seqXML)
	add("Documents/1/doc.fdoc", `<FixedDocument `+xpsNS+`><PageContent Source="p.fpage"/></FixedDocument>`)
	w, err := zw.CreateRaw(&zip.FileHeader{Name: "Documents/1/p.fpage", Method: zip.Deflate, CRC32: crc32.ChecksumIEEE([]byte(body)),
		CompressedSize64: uint64(comp.Len()), UncompressedSize64: 100})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(comp.Bytes())
	zw.Close()
	return b.Bytes()
}

// badCRC is a package whose page's checksum is wrong.
func badCRC(t *testing.T) []byte {
	body := page(glyphs(`UnicodeString="A" Indices="36,50"`))
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	add := func(name, s string) {
		w, _ := zw.Create(name)
		w.Write([]byte(s))
	}
	add("_rels/.rels", relsXML)
	add("seq.fdseq", seqXML)
	add("Documents/1/doc.fdoc", `<FixedDocument `+xpsNS+`><PageContent Source="p.fpage"/></FixedDocument>`)
	w, err := zw.CreateRaw(&zip.FileHeader{Name: "Documents/1/p.fpage", Method: zip.Store, CRC32: 12345,
		CompressedSize64: uint64(len(body)), UncompressedSize64: uint64(len(body))})
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte(body))
	zw.Close()
	return b.Bytes()
}

// TestManyTextObjects: a page of 100,000 Glyphs elements is read in
// bounded memory (its characters, nothing more), and with the zone only
// those inside.
func TestManyTextObjects(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 100_000; i++ {
		fmt.Fprintf(&b, `<Glyphs OriginX="%d" OriginY="%d" FontRenderingEmSize="12" FontUri="/none.ttf" Fill="#FF000000" UnicodeString="x" Indices="91,50"/>`, 10+i%900, 10+i/100)
	}
	data := pages(t, []string{b.String()})
	// time enough on a loaded machine under the race detector (it took
	// over the 10 s default once in CI); the deadline itself is tested by
	// the cases that expect it
	d, err := open(data, Limits{Timeout: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	var p pagetext.Page
	if err := d.PageText(0, nil, &p); err != nil {
		t.Fatal(err)
	}
	if len(p.Chars) != 100_000 {
		t.Fatalf("%d characters, want 100,000", len(p.Chars))
	}
	zone := pagetext.Rect{X0: 0, Y0: 0, X1: 720, Y1: 100}
	if err := d.PageText(0, &zone, &p); err != nil {
		t.Fatal(err)
	}
	if len(p.Chars) == 0 || len(p.Chars) >= 100_000 {
		t.Fatalf("zone: %d characters", len(p.Chars))
	}
}

// TestObfuscatedFontNamedTtf: a font obfuscated under a name that does
// not say so (.ttf) is read as libgxps reads it: tried plain, then
// restored with the GUID of its name.
func TestObfuscatedFontNamedTtf(t *testing.T) {
	font, err := os.ReadFile(fontDir + "DejaVuSans.ttf")
	if err != nil {
		t.Fatal(err)
	}
	const name = "01234567-89AB-CDEF-0123-456789ABCDEF.ttf"
	obfuscate(font, guidKey(name))
	data := zipOf(t, true, "_rels/.rels", relsXML, "seq.fdseq", seqXML,
		"Documents/1/doc.fdoc", `<FixedDocument `+xpsNS+`><PageContent Source="p.fpage"/></FixedDocument>`,
		"Documents/1/p.fpage", page(`<Glyphs OriginX="96" OriginY="192" FontRenderingEmSize="96" Fill="#FF000000" FontUri="/`+name+`" UnicodeString="AV"/>`),
		name, string(font))
	p := readPage(t, data, 0, nil)
	if text(p) != "AV" || math.Abs(p.Chars[1].X1-(72+2*1401.0/2048*72)) > 0.01 {
		t.Fatalf("%s", describe(p))
	}
}
