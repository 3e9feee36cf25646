package pdf

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/lodge-mail/lodge/internal/pagetext"
	"github.com/lodge-mail/lodge/internal/testdoc"
	"github.com/lodge-mail/lodge/internal/testenv"
)

// checkChars fails on a character no reader should give: a box not
// finite or inside out, a direction out of range, no text or text that
// is not UTF-8.
func checkChars(t *testing.T, name string, p *pagetext.Page) {
	t.Helper()
	for i, c := range p.Chars {
		if !finite(c.X0) || !finite(c.X1) || !finite(c.Y0) || !finite(c.Y1) || !finite(c.Size) ||
			c.X0 > c.X1 || c.Y0 > c.Y1 || c.Dir < 0 || c.Dir > 3 || c.Text == "" || !utf8.ValidString(c.Text) || c.Size < 0 {
			t.Fatalf("%s: character %d is%s", name, i, fmtChars(p.Chars[i:i+1]))
		}
	}
	for _, r := range p.Images {
		if !finite(r.X0) || !finite(r.X1) || !finite(r.Y0) || !finite(r.Y1) || r.X0 > r.X1 || r.Y0 > r.Y1 {
			t.Fatalf("%s: image %v", name, r)
		}
	}
}

// hostileFont is a Helvetica with a /ToUnicode map.
func hostileFont(cmap string) []tobj {
	return []tobj{dictObj("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /ToUnicode 6 0 R >>"), streamObj("", cmap)}
}

// forms makes n form XObjects (objects 6 on), form i drawing form i+1
// draws times; the last draws leaf.
func forms(n, draws int, leaf string) []tobj {
	objs := []tobj{dictObj(helvetica)}
	for i := range n {
		content := leaf
		res := "/Font << /F1 5 0 R >>"
		if i < n-1 {
			content = strings.Repeat("/X Do ", draws)
			res = fmt.Sprintf("/XObject << /X %d 0 R >>", 7+i)
		}
		objs = append(objs, streamObj("/Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources << "+res+" >>", content))
	}
	return objs
}

// TestPageTextHostile: pages built to hurt the reader get their text or
// a located error matching their category, in bounded time and memory;
// nothing panics or hangs, and no character is absurd.
func TestPageTextHostile(t *testing.T) {
	f := func(name string, data []byte, wantText string, wantErr error, errHas ...string) {
		t.Helper()
		// Each case names the bound that stops it (operators, glyphs,
		// depth ...): no wall-clock bound may race them, however slow the
		// machine (the race detector on a loaded CI machine took more
		// than the default 10 s over the fan-out bomb). The time bound
		// has a test of its own below.
		r := open(t, data, Limits{Timeout: time.Hour})
		var p pagetext.Page
		err := r.pageText(0, nil, &p)
		checkChars(t, name, &p)
		if wantErr != nil {
			if !errors.Is(err, wantErr) {
				t.Errorf("%s: error %v, want %v", name, err, wantErr)
				return
			}
			for _, s := range append(errHas, "page 1: ") {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("%s: error %q does not say %q", name, err, s)
				}
			}
			return
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			return
		}
		var got strings.Builder
		for _, c := range p.Chars {
			got.WriteString(c.Text)
		}
		if got.String() != wantText {
			t.Errorf("%s: text %.80q, want %.80q", name, got.String(), wantText)
		}
	}
	page := func(content string, objs ...tobj) []byte {
		if len(objs) == 0 {
			objs = []tobj{dictObj(helvetica)}
		}
		return textDoc("/MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> /XObject << /X 6 0 R >> >>", content, objs...)
	}
	show := "BT /F1 10 Tf 100 700 Td (ABC) Tj ET"

	f("100,000 text objects", page(strings.Repeat("BT /F1 10 Tf 100 700 Td (A) Tj ET\n", 100_000)), strings.Repeat("A", 100_000), nil)

	// broken ToUnicode maps fall back to the encoding, code by code
	f("ToUnicode of garbage", page(show, hostileFont("\x00\xff\x13 beginbfchar ((( <<< [[[ endbfchar >> ] ) <41")...), "ABC", nil)
	f("ToUnicode cut short", page(show, hostileFont("2 beginbfchar <41> <0058> <42> <00")...), "XBC", nil)
	f("ToUnicode with wrong ranges", page(show, hostileFont("4 beginbfrange <43> <41> <0061> <4141414141> <4141414142> <0062> <41> <42> [<0078>] <43> <43> [<D800>] endbfrange")...), "xB\uFFFD", nil)
	f("ToUnicode over every code", page(show, hostileFont("1 beginbfrange <00000000> <FFFFFFFF> <0030> endbfrange 1 beginbfrange <0000> <FFFF> <4E00> endbfrange")...), "乁乂乃", nil)
	f("ToUnicode mapping to NUL and odd bytes", page(show, hostileFont("3 beginbfchar <41> <0000> <42> <004100> <43> <> endbfchar")...), "AA", nil)
	f("ToUnicode that is not a stream", page(show, dictObj("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /ToUnicode 6 0 R >>"), dictObj("<< /Not /AStream >>")), "ABC", nil)
	f("ToUnicode whose Flate is corrupt", page(show, dictObj("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /ToUnicode 6 0 R >>"), streamObj("/Filter /FlateDecode", "x\x9c garbage")), "ABC", nil)
	f("a composite font's broken ToUnicode", page("BT /F1 10 Tf 100 700 Td <00410042> Tj ET",
		dictObj("<< /Type /Font /Subtype /Type0 /Encoding /Identity-H /DescendantFonts [7 0 R] /ToUnicode 6 0 R >>"),
		streamObj("", "1 beginbfchar <0041> <0058> endbfchar 1 beginbfrange <0042> <"), dictObj("<< /Subtype /CIDFontType2 /W [1 (x) [/a] 3] >>")),
		"X\uFFFD", nil)
	var big strings.Builder
	big.WriteString("131073 beginbfchar\n")
	for i := range maxCMapEntries + 1 {
		fmt.Fprintf(&big, "<%04X> <0041>\n", i)
	}
	f("a CMap over its bound", page(show, hostileFont(big.String())...), "", ErrLimit, "font Helvetica: ToUnicode: ", "more than 131072 entries")

	// fonts that are empty or wrong
	f("a Type 0 font with nothing", page("BT /F1 10 Tf 100 700 Td <0041> Tj ET", dictObj("<< /Type /Font /Subtype /Type0 >>")), "\uFFFD", nil)
	f("an encoding CMap of garbage", page("BT /F1 10 Tf 100 700 Td <0041> Tj ET", dictObj("<< /Type /Font /Subtype /Type0 /Encoding 6 0 R /DescendantFonts 7 0 R >>"), streamObj("/UseCMap 6 0 R", "\xff\xfe begincodespacerange endcidrange"), dictObj("[ 5 0 R ]")), "\uFFFD", nil)
	f("a font resource that is a number", page(show, dictObj("42")), "ABC", nil)
	f("Tf without a name", page("BT 10 Tf 100 700 Td (A) Tj ET"), "A", nil)
	f("a missing font", page("BT /Nope 10 Tf 100 700 Td (AB) Tj ET"), "AB", nil)

	// forms
	f("forms drawing each other", textDoc("/MediaBox [0 0 612 792] /Resources << /XObject << /X 6 0 R >> >>", "/X Do",
		dictObj(helvetica),
		streamObj("/Subtype /Form /Resources << /Font << /F1 5 0 R >> /XObject << /Y 7 0 R >> >>", "BT /F1 10 Tf 1 1 Td (A) Tj ET /Y Do"),
		streamObj("/Subtype /Form /Resources << /Font << /F1 5 0 R >> /XObject << /X 6 0 R >> >>", "BT /F1 10 Tf 2 2 Td (B) Tj ET /X Do")), "AB", nil)
	f("forms nested too deep", page("/X Do", forms(maxFormDepth+2, 1, show)...), "", ErrLimit, "forms drawn inside each other more than 16 deep")
	f("forms nested as deep as allowed", page("/X Do", forms(maxFormDepth, 1, show)...), "ABC", nil)
	f("a form fan-out bomb", page("/X Do", forms(9, 10, "0 0 m 1 1 l S")...), "", ErrLimit, "more than 4194304 operators", "form XObject")
	f("a form fan-out bomb of text", page("/X Do", forms(9, 10, show)...), "", ErrLimit, "more than 524288 glyphs", "form XObject")
	f("an XObject that is not a stream", page("/X Do", dictObj(helvetica), dictObj("<< /Subtype /Form >>")), "", nil)
	f("a form whose Flate is corrupt", page("/X Do", dictObj(helvetica), streamObj("/Subtype /Form /Filter /FlateDecode", "x\x9c garbage")), "", ErrMalformed, "form XObject 6: ", "corrupt FlateDecode")

	// bounds of the page
	f("q nested too deep", page(strings.Repeat("q ", maxSaveDepth+1)), "", ErrLimit, "(q) more than 1024 deep", "content at byte")
	f("q nested as deep as allowed", page(strings.Repeat("q ", maxSaveDepth)+show), "ABC", nil)
	f("too many glyphs", page("BT /F1 10 Tf ("+strings.Repeat("A", maxPageGlyphs+1)+") Tj ET"), "", ErrLimit, "more than 524288 glyphs")
	f("a TJ array too long", page("BT /F1 10 Tf ["+strings.Repeat("1 ", maxArrayElems+1)+"] TJ ET"), "", ErrLimit, "an array of more than 262144 elements")
	f("too many operators", page(strings.Repeat("n\n", maxTextOps+1)), "", ErrLimit, "more than 4194304 operators")

	// numbers
	huge := strings.Repeat("9", 400)
	f("huge Tz and Tc", page("q BT /F1 10 Tf "+huge+" Tz 100 700 Td (AB) Tj 1e38 Tc (C) Tj "+huge+" Tc (D) Tj ET Q BT /F1 10 Tf 100 600 Td (E) Tj ET"), "ABCDE", nil)
	f("matrices beyond floating point", page("q "+strings.Repeat(huge+" 0 0 "+huge+" 0 0 cm ", 9)+"BT /F1 10 Tf (A) Tj ET Q BT /F1 10 Tf (B) Tj ET"), "B", nil)
	f("numbers that are not", page("BT /F1 10 Tf nan Tz inf Tc - Tw --5 TL 1.2.3 Ts .. +.e5 100 700 Td (A) Tj 0 NaN Tz (B) Tj ET"), "AB", nil)
	f("a font size of zero and of a huge number", page("BT /F1 0 Tf (A) Tj /F1 -"+huge+" Tf (B) Tj ET"), "AB", nil)

	// syntax
	f("an inline image without EI", page(show+" BI /W 10 /H 10 /BPC 8 /CS /G ID (D) Tj"), "ABC", nil)
	f("an inline image with a negative length", page(show+" BI /W 1 /H 1 /L -5 ID xx"), "ABC", nil)
	f("an inline image with a huge length", page("BI /W 1 /H 1 /L 99999999999 /F /AHx ID 00> EI "+show), "ABC", nil)
	f("an inline image cut short", page(show+" BI /W"), "ABC", nil)
	f("an inline image with an operator for a key", page("BI /W 1 BT /F1 10 Tf 100 700 Td (A) Tj ET"), "A", nil)
	f("an inline image's nested arrays", page("BI /CS [/I [/RGB] 1 <00ff>] /F [] /D [[1] 0] /W 1 /H 1 /BPC 8 ID x EI "+show), "ABC", nil)
	f("an inline image's empty colour space array", page("BI /CS [] /W 1 /H 1 /BPC 8 ID x EI "+show), "ABC", nil)
	f("unterminated string", page(show+" (abc"), "ABC", nil)
	f("unterminated array", page(show+" [ (abc"), "ABC", nil)
	f("unterminated dictionary", page(show+" << /A [1 2"), "ABC", nil)
	f("unterminated hex string", page(show+" <41"), "ABC", nil)
	f("arrays nested a hundred thousand deep", page(strings.Repeat("[", 100_000)+" "+show+" "+strings.Repeat("]", 100_000)+" "+show), "ABC", nil)
	f("dictionaries nested deep", page(strings.Repeat("<<", 50_000)+show), "", nil)
	f("stray closers", page(") ] >> } { "+show), "ABC", nil)
	f("no content", textDoc("/MediaBox [0 0 612 792]", ""), "", nil)
}

// TestFontsReadOnce: a font is read once per document however many
// pages and text objects select it, when it is an indirect object (the
// document's cache) and when it is a direct dictionary in the resources
// (theirs).
func TestFontsReadOnce(t *testing.T) {
	f := func(name string, data []byte, pages, loads int) {
		t.Helper()
		r := open(t, data, Limits{})
		var p pagetext.Page
		for i := range r.NumPages() {
			if err := r.PageText(i, nil, &p); err != nil {
				t.Fatal(err)
			}
		}
		if r.NumPages() != pages || r.text.fontLoads != loads {
			t.Errorf("%s: %d pages, %d fonts read; want %d, %d", name, r.NumPages(), r.text.fontLoads, pages, loads)
		}
	}
	f("a statement run", statementRun(t, 50), 50, 2)
	f("a direct font selected 10,000 times", textDoc("/MediaBox [0 0 612 792] /Resources << /Font << /F1 "+helvetica+" >> >>",
		strings.Repeat("BT /F1 10 Tf 100 700 Td (A) Tj ET\n", 10_000)), 1, 1)
}

// TestPageTextErrors: a corrupt content stream, a page out of range and
// the deadline are errors that say what and where.
func TestPageTextErrors(t *testing.T) {
	b := testdoc.NewPDF()
	b.Obj(1, "<< /Type /Catalog /Pages 2 0 R >>")
	b.Obj(2, "<< /Type /Pages /Kids [3 0 R 5 0 R] /Count 2 >>")
	b.Obj(3, "<< /Type /Page /Parent 2 0 R /Contents 4 0 R >>")
	b.Stream(4, "/Filter /FlateDecode", []byte("x\x9c not flate"))
	b.Obj(5, "<< /Type /Page /Parent 2 0 R /Contents 6 0 R /Resources << /Font << /F1 7 0 R >> >> >>")
	b.Stream(6, "", []byte(strings.Repeat("BT /F1 10 Tf 100 700 Td (A) Tj ET\n", 20_000)))
	b.Obj(7, helvetica)
	r := open(t, b.Xref("/Root 1 0 R"), Limits{})
	var p pagetext.Page
	err := r.PageText(0, nil, &p)
	if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "page 1: PDF content stream 4: corrupt FlateDecode data") {
		t.Errorf("corrupt content: %v", err)
	}
	if err := r.PageText(2, nil, &p); err == nil || !strings.Contains(err.Error(), "page 3 of a document of 2 pages") {
		t.Errorf("page out of range: %v", err)
	}
	if err := r.PageText(1, nil, &p); err != nil || len(p.Chars) != 20_000 {
		t.Errorf("page 2: %d characters, %v", len(p.Chars), err)
	}
	r.lim.Timeout = time.Nanosecond // each page gets it afresh: this one cannot finish
	if err := r.PageText(1, nil, &p); !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "took longer than") {
		t.Errorf("deadline: %v", err)
	}
	r.lim.Timeout = time.Hour
	if err := r.PageText(1, nil, &p); err != nil || len(p.Chars) != 20_000 {
		t.Errorf("page 2 with time again: %d characters, %v", len(p.Chars), err)
	}
}

// FuzzPageText: any bytes as a PDF; every page of one that opens is read
// whole and in a zone without panicking or hanging, every character is
// sane, and the zone gives the whole page's characters in it.
func FuzzPageText(f *testing.F) {
	for _, name := range []string{"gs.pdf", "chromium.pdf", "cairo.pdf", "rotated.pdf"} {
		data, err := os.ReadFile(filepath.Join("testdata", "text", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add(statementRun(f, 2))
	f.Add(textDoc(letterPage, "BT /F1 10 Tf 2 Tc 5 Tw 50 Tz 14 TL 100 700 Td (A B) Tj T* [(C) -500 (D)] TJ (E) ' 1 2 (F) \" 0 1 -1 0 9 9 Tm (G) Tj ET", dictObj(helvetica)))
	f.Add(textDoc("/MediaBox [0 0 612 792] /Rotate 90 /Resources << /Font << /F1 5 0 R >> /XObject << /X 6 0 R >> >>",
		"q 1 0 0 1 5 5 cm /X Do Q BI /W 2 /H 2 /BPC 8 /CS /G ID abcd EI 1 g 3 Tr", dictObj(helvetica),
		streamObj("/Subtype /Form /Matrix [2 0 0 2 0 0] /Resources << /Font << /F1 5 0 R >> /XObject << /X 6 0 R >> >>", "BT /F1 10 Tf (A) Tj ET /X Do")))
	f.Add(textDoc(letterPage, "BT /F1 10 Tf 100 700 Td <00410042> Tj ET",
		dictObj("<< /Type /Font /Subtype /Type0 /Encoding 6 0 R /DescendantFonts [7 0 R] /ToUnicode 8 0 R >>"),
		streamObj("", "2 begincodespacerange <00> <7F> <8000> <FFFF> endcodespacerange 1 begincidrange <00> <7F> 1 endcidrange /WMode 1 def"),
		dictObj("<< /Subtype /CIDFontType0 /W [1 [500 600] 3 5 700] /W2 [1 [-900 300 800]] >>"),
		streamObj("", "1 beginbfchar <41> <0058> endbfchar 1 beginbfrange <00> <10> [<0041> <D83DDE00>] endbfrange")))
	lim := Limits{MaxPages: 20, MaxObjects: 10000, MaxDepth: 32, Timeout: 10 * time.Second}
	testenv.LimitMinimization(f, "2000x")
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Open(bytes.NewReader(data), int64(len(data)), lim)
		if err != nil {
			return
		}
		var whole, part pagetext.Page
		zone := pagetext.Rect{X0: 50, Y0: 50, X1: 300, Y1: 300}
		for i := range min(r.NumPages(), 5) {
			if err := r.pageText(i, nil, &whole); err != nil {
				continue
			}
			checkChars(t, "whole", &whole)
			if err := r.pageText(i, &zone, &part); err != nil {
				t.Fatalf("page %d read whole, in a zone: %v", i+1, err)
			}
			var want []pagetext.Char
			for _, c := range whole.Chars {
				if zone.Contains((c.X0+c.X1)/2, (c.Y0+c.Y1)/2) {
					want = append(want, c)
				}
			}
			if fmt.Sprint(want) != fmt.Sprint(part.Chars) {
				t.Fatalf("page %d: the zone gives %d characters, the whole page %d in it", i+1, len(part.Chars), len(want))
			}
		}
	})
}
