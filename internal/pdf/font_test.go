package pdf

import (
	"strings"
	"testing"

	"github.com/lodge-mail/lodge/internal/deadline"
	"github.com/lodge-mail/lodge/internal/pagetext"
)

// glyphRun is a font test's expectation: the characters' texts and
// where each starts and ends along the baseline, with the line's top
// and bottom.
type glyphRun struct {
	texts  []string
	xs     []float64 // len(texts)+1 edges: X0 of each, then the last X1; or X0, X1 of each
	y0, y1 float64
}

func run(texts string, y0, y1 float64, xs ...float64) glyphRun {
	return glyphRun{texts: strings.Split(texts, "|"), xs: xs, y0: y0, y1: y1}
}

func checkRun(t *testing.T, name string, p *pagetext.Page, want glyphRun) {
	t.Helper()
	if len(p.Chars) != len(want.texts) {
		t.Errorf("%s: %d characters, want %d (%q):%s", name, len(p.Chars), len(want.texts), want.texts, fmtChars(p.Chars))
		return
	}
	for i, c := range p.Chars {
		x0, x1 := want.xs[i], want.xs[i+1]
		if len(want.xs) == 2*len(want.texts) {
			x0, x1 = want.xs[2*i], want.xs[2*i+1]
		}
		if c.Text != want.texts[i] || !near(c.X0, x0) || !near(c.X1, x1) || !near(c.Y0, want.y0) || !near(c.Y1, want.y1) || c.Dir != 0 {
			t.Errorf("%s: character %d is%s\nwant %q [%.3f %.3f %.3f %.3f]", name, i, fmtChars(p.Chars[i:i+1]), want.texts[i], x0, want.y0, x1, want.y1)
		}
	}
}

// TestSimpleFonts: the standard fonts' widths and ascents by name (and
// by the names word processors give them), encodings by name, with
// /Differences through the glyph list, /Widths with /MissingWidth, the
// descriptor's ascent, ToUnicode first, Type 3 fonts in their matrix.
func TestSimpleFonts(t *testing.T) {
	f := func(name, font, text string, want glyphRun, more ...tobj) {
		t.Helper()
		content := "BT /F1 10 Tf 100 700 Td " + text + " Tj ET"
		p := readText(t, textDoc(letterPage, content, append([]tobj{dictObj(font)}, more...)...), nil)
		checkRun(t, name, p, want)
	}
	std := func(base string) string { return "<< /Type /Font /Subtype /Type1 /BaseFont /" + base + " >>" }
	f("Times-Roman", std("Times-Roman"), "(A)", run("A", 85.17, 94.17, 100, 107.22))
	f("Courier", std("Courier"), "(A)", run("A", 85.71, 93.57, 100, 106))
	f("Helvetica-Bold", std("Helvetica-Bold"), "(A)", run("A", 84.82, 94.07, 100, 107.22))
	f("Symbol has its own encoding", std("Symbol"), "(a)", run("α", 81.9, 94.93, 100, 106.31))
	f("ZapfDingbats glyphs have no text", std("ZapfDingbats"), "(!)", run("\uFFFD", 83.8, 93.43, 100, 109.74))
	f("Arial,Bold is Helvetica-Bold", "<< /Type /Font /Subtype /TrueType /BaseFont /Arial,Bold >>", "(A)", run("A", 84.82, 94.07, 100, 107.22))
	f("CourierNew-BoldItalicMT is Courier", "<< /Type /Font /Subtype /TrueType /BaseFont /CourierNew-BoldItalicMT >>", "(A)", run("A", 85.71, 93.57, 100, 106))
	f("standard encoding", std("Helvetica"), "(\x27\x60)", run("’|‘", 84.82, 94.07, 100, 102.22, 104.44))
	f("WinAnsiEncoding", "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>", "(\x27\x80\x92)",
		run("'|€|’", 84.82, 94.07, 100, 101.91, 107.47, 109.69))
	f("MacRomanEncoding", "<< /Type /Font /Subtype /Type1 /BaseFont /Times-Roman /Encoding /MacRomanEncoding >>", "(\x8e)", run("é", 85.17, 94.17, 100, 104.44))
	f("Differences", "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding << /BaseEncoding /WinAnsiEncoding /Differences [65 /uni20AC /f_i /a.sc /u1F600 /.notdef /gibberish /Euro 97 /uni00410042] >> >>",
		"(ABCDEFGa)", run("€|fi|a|😀|\uFFFD|\uFFFD|€|AB", 84.82, 94.07, 100, 105.56, 110.56, 116.12, 121.12, 121.12, 126.12, 131.68, 136.68))
	f("Widths, FirstChar, MissingWidth, the descriptor's ascent",
		"<< /Type /Font /Subtype /TrueType /BaseFont /ABCDEF+Arial /FirstChar 65 /LastChar 66 /Widths [500 250] /Encoding /WinAnsiEncoding /FontDescriptor 6 0 R >>",
		"(ABC)", run("A|B|C", 83, 93, 100, 105, 107.5, 110.83),
		dictObj("<< /Type /FontDescriptor /FontName /ABCDEF+Arial /Flags 32 /Ascent 900 /Descent -100 /MissingWidth 333 /FontFile2 7 0 R >>"),
		streamObj("", "not a font"))
	f("ToUnicode before the encoding", "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /ToUnicode 6 0 R >>", "(ABCD)",
		run("X|a|b|D", 84.82, 94.07, 100, 106.67, 113.34, 120.56, 127.78),
		streamObj("", "/CIDInit /ProcSet findresource begin 12 dict begin begincmap 1 begincodespacerange <00> <FF> endcodespacerange\n"+
			"1 beginbfchar <41> <0058> endbfchar 1 beginbfrange <42> <43> <0061> endbfrange endcmap CMapName currentdict /CMap defineresource pop end end"))
	f("Type 3 in its font matrix", "<< /Type /Font /Subtype /Type3 /FontBBox [0 0 100 100] /FontMatrix [0.01 0 0 0.01 0 0] /CharProcs << >> /Encoding << /Differences [65 /A /g2] >> /FirstChar 65 /LastChar 66 /Widths [50 100] /Resources << >> >>",
		"(AB)", run("A|\uFFFD", 82, 92, 100, 105, 115))
	f("a font with nothing", "<< >>", "(A)", run("A", 82.5, 95.5, 100, 105))
	f("a font that is not a dictionary", "(text)", "(A)", run("A", 82.5, 95.5, 100, 105))
	f("an embedded Type 1 font's own encoding", "<< /Type /Font /Subtype /Type1 /BaseFont /ABCDEF+Custom /FirstChar 65 /LastChar 66 /Widths [500 600] /FontDescriptor 6 0 R >>",
		"(AB)", run("Z|ß", 82.5, 95.5, 100, 105, 111),
		dictObj("<< /Type /FontDescriptor /FontName /ABCDEF+Custom /Flags 4 /FontFile 7 0 R >>"),
		streamObj("", "%!PS-AdobeFont-1.0: Custom\n/Encoding 256 array\n0 1 255 {1 index exch /.notdef put} for\ndup 65 /Z put\ndup 66 /germandbls put\nreadonly def\ncurrentfile eexec\n"))
}

// TestCompositeFonts: Type 0 fonts with Identity-H and -V, /W and /DW,
// /W2, ToUnicode with bfrange arrays, surrogates and several characters
// a glyph; an embedded encoding CMap with codes of one and two bytes;
// a predefined Unicode CMap without ToUnicode.
func TestCompositeFonts(t *testing.T) {
	const toUni = "/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CMapName /Adobe-Identity-UCS def /CMapType 2 def\n" +
		"1 begincodespacerange <0000> <FFFF> endcodespacerange\n" +
		"3 beginbfchar <0001> <0048> <0002> <D83DDE00> <0020> <0020> endbfchar\n" +
		"2 beginbfrange <0003> <0005> <0061> <0006> <0007> [<006600660069> <0041>] endbfrange\n" +
		"endcmap CMapName currentdict /CMap defineresource pop end end"
	identity := func(enc string) []tobj {
		return []tobj{
			dictObj("<< /Type /Font /Subtype /Type0 /BaseFont /ABCDEF+Foo /Encoding /" + enc + " /DescendantFonts [6 0 R] /ToUnicode 7 0 R >>"),
			dictObj("<< /Type /Font /Subtype /CIDFontType2 /BaseFont /ABCDEF+Foo /CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> /FontDescriptor 8 0 R /DW 1000 /W [1 [500 600] 3 5 700] /W2 [3 [-900 300 800]] >>"),
			streamObj("", toUni),
			dictObj("<< /Type /FontDescriptor /FontName /ABCDEF+Foo /Flags 4 /Ascent 800 /Descent -200 >>"),
		}
	}
	f := func(name string, objs []tobj, text string, want glyphRun) {
		t.Helper()
		p := readText(t, textDoc(letterPage, "BT /F1 10 Tf 5 Tw 100 700 Td "+text+" Tj ET", objs...), nil)
		checkRun(t, name, p, want)
	}
	f("Identity-H", identity("Identity-H"), "<00010002000300040005000600070008>",
		run("H|😀|a|b|c|ffi|A|\uFFFD", 84, 94, 100, 105, 111, 118, 125, 132, 142, 152, 162))
	f("two-byte codes get no word spacing", identity("Identity-H"), "<00200001>", run(" |H", 84, 94, 100, 110, 115))

	// vertical: glyphs hang centred below the point, which moves down
	p := readText(t, textDoc(letterPage, "BT /F1 10 Tf 100 700 Td <000100020003> Tj ET", identity("Identity-V")...), nil)
	want := []pagetext.Char{
		sized(ch("H", 97.5, 92.8, 102.5, 102.8), 10, 1),
		sized(ch("😀", 97, 102.8, 103, 112.8), 10, 1),
		sized(ch("a", 97, 112, 104, 122), 10, 1),
	}
	if len(p.Chars) != len(want) {
		t.Errorf("Identity-V:%s", fmtChars(p.Chars))
	} else {
		for i := range want {
			if !sameChar(p.Chars[i], want[i]) {
				t.Errorf("Identity-V: character %d is%s\nwant%s", i, fmtChars(p.Chars[i:i+1]), fmtChars(want[i:i+1]))
			}
		}
	}

	const encCMap = "/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CMapName /Mixed def\n" +
		"2 begincodespacerange <00> <7F> <8000> <FFFF> endcodespacerange\n" +
		"2 begincidrange <20> <7E> 1 <8000> <80FF> 200 endcidrange 1 begincidchar <8140> 500 endcidchar\n" +
		"endcmap CMapName currentdict /CMap defineresource pop end end"
	const mixedToUni = "1 begincodespacerange <00> <FF> endcodespacerange 4 beginbfchar <41> <0041> <8001> <4E00> <42> <0042> <20> <0020> endbfchar"
	f("an embedded CMap: one- and two-byte codes, word spacing on the one-byte space", []tobj{
		dictObj("<< /Type /Font /Subtype /Type0 /BaseFont /Mixed /Encoding 6 0 R /DescendantFonts [7 0 R] /ToUnicode 8 0 R >>"),
		streamObj("/Type /CMap /CMapName /Mixed", encCMap),
		dictObj("<< /Type /Font /Subtype /CIDFontType0 /BaseFont /Mixed /W [34 35 400 201 201 800] /FontDescriptor 9 0 R >>"),
		streamObj("", mixedToUni),
		dictObj("<< /Type /FontDescriptor /Ascent 800 /Descent -200 >>"),
	}, "<4180012042>", run("A|一| |B", 84, 94, 100, 104, 104, 112, 112, 122, 127, 131))
	f("a Unicode CMap without ToUnicode", []tobj{
		dictObj("<< /Type /Font /Subtype /Type0 /BaseFont /STSong-Light /Encoding /UniGB-UCS2-H /DescendantFonts [6 0 R] >>"),
		dictObj("<< /Type /Font /Subtype /CIDFontType0 /BaseFont /STSong-Light /FontDescriptor 7 0 R >>"),
		dictObj("<< /Type /FontDescriptor /Ascent 800 /Descent -200 >>"),
	}, "<4E2D6587>", run("中|文", 84, 94, 100, 110, 120))
}

// TestCMap: the parser's reading of codespaces (codes of several
// lengths), CID and text ranges (the array form, counting up, surrogate
// pairs, several characters, overlaps where the later start wins),
// usecmap and WMode.
func TestCMap(t *testing.T) {
	dl := deadline.New(1<<62, nil)
	parse := func(s string) *cmap {
		cm := &cmap{}
		if err := parseCMap([]byte(s), dl, cm); err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		return cm
	}
	code := func(cm *cmap, s string, want uint32, n int) {
		t.Helper()
		if c, k := cm.code([]byte(s)); c != want || k != n {
			t.Errorf("code(%x) = %#x, %d; want %#x, %d", s, c, k, want, n)
		}
	}
	cm := parse("3 begincodespacerange <00> <80> <8140> <9FFC> <A0A0A0> <A0FFFF> endcodespacerange")
	code(cm, "\x41\x42", 0x41, 1)
	code(cm, "\x81\x40\x41", 0x8140, 2)
	code(cm, "\xa0\xa0\xa5\x00", 0xa0a0a5, 3)
	code(cm, "\x81\x20", 0x81, 1) // no range holds it: the shortest length
	code(cm, "\xa0", 0xa0, 1)

	text := func(cm *cmap, c uint32, want string, found bool) {
		t.Helper()
		if got, ok := cm.text(c); got != want || ok != found {
			t.Errorf("text(%#x) = %q, %v; want %q, %v", c, got, ok, want, found)
		}
	}
	cm = parse("2 beginbfrange <0010> <0020> <0041> <0100> <0102> [<0061> <D835DC00> <00660069>] endbfrange\n" +
		"1 beginbfrange <0000> <FFFF> <0030> endbfrange 1 beginbfchar <0015> /eacute endbfchar 1 beginbfchar <0016> <> endbfchar")
	text(cm, 0x10, "A", true)
	text(cm, 0x12, "C", true)
	text(cm, 0x15, "é", true) // a name destination, starting after the range that holds it
	text(cm, 0x16, "", true)  // mapped to nothing
	text(cm, 0x101, "𝐀", true)
	text(cm, 0x102, "fi", true)
	text(cm, 0x103, "\u0133", true) // from the range over everything: '0' + 0x103
	text(cm, 0x21, "Q", true)

	cm = parse("/CIDInit /ProcSet findresource begin /WMode 1 def /Identity-V usecmap 1 begincidchar <01> 7 endcidchar")
	if cm.wmode != 1 || cm.usecmap != "Identity-V" || cm.cid(1) != 7 || cm.cid(0x1234) != 0x1234 {
		t.Errorf("WMode %d, usecmap %q, cid(1) %d, cid(0x1234) %#x", cm.wmode, cm.usecmap, cm.cid(1), cm.cid(0x1234))
	}
}
