package inspect

import (
	"github.com/lodge-mail/lodge/internal/testdoc"
	"time"

	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// count runs the unrecovered page counter: a panic fails the test.
func count(kind Kind, data []byte, lim Limits) (int, error) {
	return pages(kind, bytes.NewReader(data), int64(len(data)), lim)
}

func TestPagesGolden(t *testing.T) {
	f := func(name string, kind Kind, data []byte, want int) {
		t.Helper()
		n, err := count(kind, data, Limits{})
		if n != want || err != nil {
			t.Errorf("%s: %d pages, %v; want %d", name, n, err, want)
		}
		if n2, err2 := Pages(kind, bytes.NewReader(data), int64(len(data)), Limits{}); n2 != n || (err2 == nil) != (err == nil) {
			t.Errorf("%s: Pages says %d, %v", name, n2, err2)
		}
	}
	f("1-page PDF", PDF, testdoc.OnePagePDF(), 1)
	f("3-page PDF with nested /Pages", PDF, testdoc.ThreePagePDF(), 3)
	f("PDF with an xref stream and object streams", PDF, testdoc.XrefStreamPDF(), 4)
	f("PDF with an incremental update", PDF, testdoc.IncrementalPDF(), 2)
	f("PDF xref stream without predictor", PDF, testdoc.NewPDF().
		Obj(1, "<< /Type /Catalog /Pages 2 0 R >>").
		Obj(2, "<< /Type /Pages /Kids [3 0 R] /Count 1 >>").
		Obj(3, "<< /Type /Page >>").
		XrefStream(4, "/Root 1 0 R", false), 1)
	b := testdoc.NewPDF().
		Obj(1, "<< /Type /Catalog /Pages 2 0 R >>").
		Obj(2, "<< /Type /Pages /Kids [3 0 R] /Count 1 >>").
		Obj(3, "<< /Type /Page >>")
	b.Xref("/Root 1 0 R")
	b.Obj(2, "<< /Type /Pages /Kids [3 0 R 5 0 R 6 0 R] /Count 3 >>").
		ObjStm(7, map[int]string{5: "<< /Type /Page >>", 6: "<< /Type /Page >>"})
	f("PDF updated with an xref stream over a table", PDF, b.XrefStream(8, "/Root 1 0 R", true), 3)
	hybrid := testdoc.NewPDF().
		Obj(1, "<< /Type /Catalog /Pages 2 0 R >>").
		Obj(2, "<< /Type /Pages /Kids [3 0 R] /Count 1 >>").
		Obj(3, "<< /Type /Page >>")
	hybrid.Xref("/Root 1 0 R")
	f("Kids as an indirect array, no /Type", PDF, testdoc.NewPDF().
		Obj(1, "<< /Pages 2 0 R >>").
		Obj(2, "<< /Kids 3 0 R /Count 2 >>").
		Obj(3, "[4 0 R 5 0 R]").
		Obj(4, "<< /Parent 2 0 R /MediaBox [0 0 595 842] >>").
		Obj(5, "<< /Type /Page >>").
		Xref("/Root 1 0 R"), 2)
	f("/Count lies low", PDF, testdoc.NewPDF().
		Obj(1, "<< /Type /Catalog /Pages 2 0 R >>").
		Obj(2, "<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 1 >>").
		Obj(3, "<< /Type /Page >>").Obj(4, "<< /Type /Page >>").
		Xref("/Root 1 0 R"), 2)
	f("comments, strings and odd syntax", PDF, testdoc.NewPDF().
		Obj(1, "% a comment\n<</Type/Catalog/Pages 2 0 R/Names<</X(a\\)b(c)\\\\)>>/Y<4142 43>/Z[1.5 -2 +.5 true false null]>>").
		Obj(2, "<</Type/Pages/Kids[3 0 R]/Count 1/N#20x/A>>").
		Obj(3, "<</Type /Page /Annots []>>").
		Xref("/Root 1 0 R"), 1)
	f("root is a single page", PDF, testdoc.NewPDF().
		Obj(1, "<< /Type /Catalog /Pages 2 0 R >>").
		Obj(2, "<< /Type /Page >>").
		Xref("/Root 1 0 R"), 1)

	f("PostScript", PostScript, []byte(psTwoPages), 2)
	f("PostScript, its DSC comments saying 3 pages", PostScript, []byte(psAtEnd), 1)

	f("XPS with 2 pages", XPS, twoPageXPS(t), 2)
	parts := xpsParts()
	parts[5] = `<FixedDocumentSequence ` + xpsNS + `><DocumentReference Source="/Documents/1/FixedDoc.fdoc"/><DocumentReference Source="Documents/1/FixedDoc.fdoc#x"/></FixedDocumentSequence>`
	f("XPS with a document referenced twice", XPS, zipOf(t, parts...), 4)
	parts = xpsParts()
	parts[2], parts[3] = "Other.xml", "<x/>" // no relationships: the only .fdseq
	f("XPS without _rels/.rels", XPS, zipOf(t, parts...), 2)
	parts = xpsParts()
	parts[7] = "\xFF\xFE" + utf16le(strings.Replace(parts[7], "<FixedDocument", `<?xml version="1.0" encoding="utf-16"?><FixedDocument`, 1))
	f("XPS with a UTF-16 part", XPS, zipOf(t, parts...), 2)
	parts = xpsParts()
	fdoc := parts[7]
	parts = append(parts[:6], parts[8:]...)
	parts = append(parts, "Documents/1/FixedDoc.fdoc/[0].piece", fdoc[:40], "Documents/1/FixedDoc.fdoc/[1].last.piece", fdoc[40:])
	f("XPS with an interleaved part", XPS, zipOf(t, parts...), 2)
	parts = xpsParts()
	parts[3] = strings.Replace(parts[3], "http://schemas.microsoft.com/xps/2005/06/fixedrepresentation", "http://schemas.openxps.org/oxps/v1.0/fixedrepresentation", 1)
	f("OpenXPS relationship", XPS, zipOf(t, parts...), 2)
}

func utf16le(s string) string {
	var b []byte
	for _, r := range s {
		b = append(b, byte(r), byte(r>>8))
	}
	return string(b)
}

func TestZipIsXPS(t *testing.T) {
	f := func(name string, data []byte, want bool) {
		t.Helper()
		if got := ZipIsXPS(bytes.NewReader(data), int64(len(data))); got != want {
			t.Errorf("%s: ZipIsXPS = %v", name, got)
		}
	}
	f("XPS", twoPageXPS(t), true)
	f("a ZIP of PDFs", zipOf(t, "a.pdf", string(testdoc.OnePagePDF())), false)
	f("no content types", zipOf(t, xpsParts()[2:]...), false)
	parts := xpsParts()
	parts[3] = "<Relationships/>"
	f("no fixed representation, but a .fdseq", zipOf(t, parts...), true)
	parts[4] = "seq.xml"
	f("no fixed representation, no .fdseq", zipOf(t, parts...), false)
	f("not a ZIP", testdoc.OnePagePDF(), false)
	f("empty", nil, false)
}

// TestPagesHostile: documents built to crash, hang or fool the counter.
func TestPagesHostile(t *testing.T) {
	f := func(name string, kind Kind, data []byte, lim Limits, want int, wantErr error, msg string) {
		t.Helper()
		n, err := count(kind, data, lim)
		if n != want || !errors.Is(err, wantErr) || err != nil && !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %d, %v; want %d, %v containing %q", name, n, err, want, wantErr, msg)
		}
		if err != nil && len(categoriesOf(err)) == 0 {
			t.Errorf("%s: error %v has no category", name, err)
		}
	}
	cat := "<< /Type /Catalog /Pages 2 0 R >>"
	page := "<< /Type /Page /Parent 2 0 R >>"

	f("/Kids points at its own /Pages", PDF, testdoc.PDFWith(cat, "<< /Type /Pages /Kids [2 0 R] /Count 1 >>"), Limits{}, 0, ErrMalformed, "page tree has a cycle")
	f("cycle two levels down", PDF, testdoc.PDFWith(cat, "<< /Type /Pages /Kids [3 0 R] >>", "<< /Type /Pages /Kids [4 0 R 2 0 R] >>", page),
		Limits{}, 0, ErrMalformed, "page tree has a cycle (object 2 is its own ancestor)")
	f("a page listed twice", PDF, testdoc.PDFWith(cat, "<< /Type /Pages /Kids [3 0 R 3 0 R] /Count 2 >>", page), Limits{}, 0, ErrMalformed, "reaches object 3 twice")
	// A DAG doubling at every level would be 2^40 pages if shared nodes were counted.
	dag := []string{cat}
	for i := 2; i < 42; i++ {
		dag = append(dag, fmt.Sprintf("<< /Type /Pages /Kids [%d 0 R %d 0 R] >>", i+1, i+1))
	}
	f("shared subtrees doubling 40 times", PDF, testdoc.PDFWith(append(dag, page)...), Limits{}, 0, ErrMalformed, "twice")
	f("/Count 1000000 but no kids", PDF, testdoc.PDFWith(cat, "<< /Type /Pages /Kids [] /Count 1000000 >>"), Limits{}, 0, ErrMalformed, "no pages (its /Count says 1000000)")
	f("/Count but no /Kids at all", PDF, testdoc.PDFWith(cat, "<< /Type /Pages /Count 5 >>"), Limits{}, 0, ErrMalformed, "no pages")
	deep := []string{cat}
	for i := 2; i < 10002; i++ {
		deep = append(deep, fmt.Sprintf("<< /Type /Pages /Kids [%d 0 R] /Count 1 >>", i+1))
	}
	f("/Kids nested 10,000 levels", PDF, testdoc.PDFWith(append(deep, page)...), Limits{}, 0, ErrLimit, "nested deeper than 256 levels")
	f("/Kids nested 256 levels", PDF, testdoc.PDFWith(append(slices.Clone(deep[:257]), page)...), Limits{}, 1, nil, "")
	f("/Kids nested 257 levels", PDF, testdoc.PDFWith(append(slices.Clone(deep[:258]), page)...), Limits{}, 0, ErrLimit, "deeper than 256")
	f("nested arrays 10,000 deep", PDF, testdoc.PDFWith(cat, "<< /Type /Pages /Kids [3 0 R] /X "+strings.Repeat("[", 10000)+" >>", page),
		Limits{}, 0, ErrMalformed, "nested deeper than 100")
	f("nested dictionaries 10,000 deep", PDF, testdoc.PDFWith(cat, "<< /Type /Pages /Kids [3 0 R] /X "+strings.Repeat("<< /A ", 10000)+" >>", page),
		Limits{}, 0, ErrMalformed, "nested deeper")
	var kids strings.Builder
	for range 20 {
		kids.WriteString("3 0 R ")
	}
	many := []string{cat, "<< /Type /Pages /Kids [3 0 R 4 0 R 5 0 R 6 0 R] >>"}
	for range 4 {
		many = append(many, page)
	}
	f("more pages than MaxPages", PDF, testdoc.PDFWith(many...), Limits{MaxPages: 3}, 0, ErrLimit, "more than 3 pages")
	f("as many pages as MaxPages", PDF, testdoc.PDFWith(many...), Limits{MaxPages: 4}, 4, nil, "")
	f("kid missing", PDF, testdoc.PDFWith(cat, "<< /Type /Pages /Kids [3 0 R 9 0 R] >>", page), Limits{}, 0, ErrMalformed, "object 9 is missing")
	f("kid is a number", PDF, testdoc.PDFWith(cat, "<< /Type /Pages /Kids [3 0 R 7] >>", page), Limits{}, 0, ErrMalformed, "not a dictionary")
	f("unknown node type", PDF, testdoc.PDFWith(cat, "<< /Type /Pages /Kids [3 0 R] >>", "<< /Type /Font >>"), Limits{}, 0, ErrMalformed, "/Type /Font")
	f("catalog without /Pages", PDF, testdoc.PDFWith("<< /Type /Catalog >>"), Limits{}, 0, ErrMalformed, "no document catalog")
	f("more objects than MaxPDFObjects", PDF, testdoc.PDFWith(cat, "<< /Type /Pages /Kids [3 0 R] >>", page), Limits{MaxPDFObjects: 2}, 0, ErrLimit, "2 objects")

	// Streams with lying /Length: a page's content (never read) and the
	// cross-reference stream itself (found by searching for endstream).
	b := testdoc.NewPDF().Obj(1, cat).Obj(2, "<< /Type /Pages /Kids [3 0 R] >>").Obj(3, "<< /Type /Page /Contents 4 0 R >>").
		Stream(4, "/Length 2147483648", []byte("BT ET"))
	f("content stream with a 2 GB /Length", PDF, b.Xref("/Root 1 0 R"), Limits{}, 1, nil, "")
	xs := testdoc.XrefStreamPDF()
	xs = bytes.Replace(xs, []byte("/XRef /W [1 4 2]"), []byte("/XRef /Length 2147483648 /W [1 4 2]"), 1)
	f("xref stream with a 2 GB /Length", PDF, xs, Limits{}, 4, nil, "")
	xs = bytes.Replace(testdoc.XrefStreamPDF(), []byte("/ObjStm /N 5"), []byte("/ObjStm /Length 99999999999 /N 5"), 1)
	f("object stream with a huge /Length", PDF, xs, Limits{}, 4, nil, "")
	xs = bytes.Replace(testdoc.XrefStreamPDF(), []byte("/ObjStm /N 5"), []byte("/ObjStm /N 5 /Length 5 0 R"), 1)
	f("object stream whose /Length is in itself", PDF, xs, Limits{}, 4, nil, "")

	// Cross-reference damage: rebuilt by scanning.
	one := testdoc.OnePagePDF()
	f("startxref points nowhere", PDF, bytes.Replace(one, []byte("startxref\n"), []byte("startxref\n9"), 1), Limits{}, 1, nil, "")
	f("no startxref", PDF, bytes.Replace(one, []byte("startxref"), []byte("startxreg"), 1), Limits{}, 1, nil, "")
	i := bytes.Index(one, []byte("xref\n0 1"))
	f("no xref table, no trailer", PDF, one[:i], Limits{}, 1, nil, "")
	f("xref offsets shifted", PDF, bytes.Replace(one, []byte("0000000015 00000 n"), []byte("0000000016 00000 n"), 1), Limits{}, 1, nil, "")
	f("junk before %PDF-", PDF, append([]byte(strings.Repeat("junk\n", 100)), one...), Limits{}, 1, nil, "")
	f("xref stream, broken startxref", PDF, bytes.Replace(testdoc.XrefStreamPDF(), []byte("startxref\n"), []byte("startxref\n1"), 1), Limits{}, 4, nil, "")
	f("not a PDF", PDF, []byte("hello, world"), Limits{}, 0, ErrMalformed, "no objects")
	f("empty", PDF, nil, Limits{}, 0, ErrMalformed, "")
	f("only a header", PDF, []byte("%PDF-1.7\n"), Limits{}, 0, ErrMalformed, "")
	inc := testdoc.IncrementalPDF()
	last := bytes.LastIndex(inc, []byte("/Prev "))
	end := last + bytes.IndexByte(inc[last+6:], ' ') + 6
	cyc := slices.Concat(inc[:last], fmt.Appendf(nil, "/Prev %d", bytes.LastIndex(inc, []byte("xref\n"))), inc[end:])
	f("/Prev pointing at itself", PDF, cyc, Limits{}, 2, nil, "")

	// Encryption: broken /Encrypt dictionaries (real encrypted documents
	// are in TestEncryptedPDFs).
	for _, c := range hostileEncrypt {
		f(c.name, PDF, c.pdf(), Limits{}, 0, ErrEncrypted, c.msg)
	}
	encStm := bytes.Replace(testdoc.XrefStreamPDF(), []byte("/Root 1 0 R"), []byte("/Root 1 0 R /Encrypt << /Filter /Standard >>"), 1)
	f("encrypted object streams, no algorithm", PDF, encStm, Limits{}, 0, ErrEncrypted, "algorithm this server does not know (/V 0 /R 0)")

	// Syntax bombs.
	f("unterminated string", PDF, testdoc.PDFWith(cat, "<< /Type /Pages /Kids [3 0 R] /X ("+strings.Repeat("(", 100000)), Limits{}, 0, ErrMalformed, "")
	f("2 MB string", PDF, testdoc.PDFWith(cat, "<< /Type /Pages /Kids [3 0 R] /X ("+strings.Repeat("x", 2<<20)+") >>", page), Limits{}, 1, nil, "")
	f("1 MB name", PDF, testdoc.PDFWith(cat, "<< /Type /Pages /Kids [3 0 R] /"+strings.Repeat("x", 1<<20)+" 1 >>", page), Limits{}, 0, ErrMalformed, "")
	f("a million and ten tokens in one object", PDF, testdoc.PDFWith(cat, "<< /Type /Pages /Kids [3 0 R] /X ["+strings.Repeat("0 ", 1<<20+10)+"] >>", page),
		Limits{}, 0, ErrLimit, "more than 1048576 tokens")
	f("huge integers", PDF, testdoc.PDFWith(cat, "<< /Type /Pages /Kids [99999999999999999999999 0 R 3 0 R] >>", page), Limits{}, 0, ErrMalformed, "")

	// XPS (PostScript: TestPostScript).
	parts := xpsParts()
	parts[7] = `<FixedDocument ` + xpsNS + `>` + strings.Repeat(`<PageContent Source="Pages/1.fpage"/>`, 11) + `</FixedDocument>`
	f("XPS with too many pages", XPS, zipOf(t, parts...), Limits{MaxPages: 10}, 0, ErrLimit, "more than 10 pages")
	parts = xpsParts()
	parts[5] = `<FixedDocumentSequence ` + xpsNS + `>` + strings.Repeat(`<DocumentReference Source="Documents/1/FixedDoc.fdoc"/>`, 6) + `</FixedDocumentSequence>`
	f("XPS referencing one document many times", XPS, zipOf(t, parts...), Limits{MaxPages: 10}, 0, ErrLimit, "more than 10 pages")
	parts = xpsParts()
	parts[7] = `<FixedDocument ` + xpsNS + `></FixedDocument>`
	f("XPS with no pages", XPS, zipOf(t, parts...), Limits{}, 0, ErrMalformed, "no pages")
	parts = xpsParts()
	parts[3] = strings.Replace(parts[3], "/FixedDocSeq.fdseq", "/../../etc/passwd", 1)
	f("XPS relationship climbing out", XPS, zipOf(t, parts...), Limits{}, 0, ErrMalformed, `"etc/passwd", which is not in the package`)
	parts = xpsParts()
	parts[5] = `<FixedDocumentSequence ` + xpsNS + `><DocumentReference Source="Missing.fdoc"/></FixedDocumentSequence>`
	f("XPS referencing a missing document", XPS, zipOf(t, parts...), Limits{}, 0, ErrMalformed, "is missing")
	parts = xpsParts()
	parts[7] = `<!DOCTYPE x [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><FixedDocument ` + xpsNS + `>&b;<PageContent/></FixedDocument>`
	f("XPS with entity definitions", XPS, zipOf(t, parts...), Limits{}, 0, ErrMalformed, "")
	parts = xpsParts()
	parts[7] = strings.Repeat("<a>", 100000) + `<PageContent/>`
	f("XPS with XML nested 100,000 deep", XPS, zipOf(t, parts...), Limits{}, 1, nil, "")
	f("XPS that is a PDF", XPS, testdoc.OnePagePDF(), Limits{}, 0, ErrMalformed, "XPS package")
	parts = xpsParts()
	parts = append(parts, "../x.fpage", "x")
	f("XPS with a ../ part", XPS, zipOf(t, parts...), Limits{}, 0, ErrUnsafe, "climbs out")
	f("XPS with a symlink part", XPS, rawZip(rawEntry{name: "_rels/.rels", data: []byte("/etc/passwd"), creator: 3, extAttr: 0o120777 << 16}), Limits{}, 0, ErrUnsafe, "symbolic link")
	parts = xpsParts()
	parts = append(parts, "Documents/1/pages/1.FPAGE", "x")
	f("XPS with parts differing in case", XPS, zipOf(t, parts...), Limits{}, 0, ErrUnsafe, "same name")
	var pz bytes.Buffer
	w := zip.NewWriter(&pz)
	for i := 0; i+1 < len(xpsParts()); i += 2 {
		fw, _ := w.Create(xpsParts()[i])
		fw.Write([]byte(xpsParts()[i+1]))
	}
	fw, _ := w.Create("Resources/big.bin")
	fw.Write(make([]byte, 8<<20))
	w.Close()
	f("XPS with an 8 MB zero part", XPS, pz.Bytes(), Limits{}, 0, ErrLimit, "more than the limit of 100:1")

	f("ZIP has no pages", ZIP, zipOf(t, "a.pdf", string(testdoc.OnePagePDF())), Limits{}, 0, ErrType, "not ZIP")
	f("JSON has no pages", JSON, []byte("{}"), Limits{}, 0, ErrType, "not JSON")
}

// TestTruncated cuts every golden document at every 10% and checks that
// the counters answer, a count or an error, without panicking.
func TestTruncated(t *testing.T) {
	docs := []struct {
		name string
		kind Kind
		data []byte
	}{
		{"1-page PDF", PDF, testdoc.OnePagePDF()},
		{"3-page PDF", PDF, testdoc.ThreePagePDF()},
		{"xref stream PDF", PDF, testdoc.XrefStreamPDF()},
		{"incremental PDF", PDF, testdoc.IncrementalPDF()},
		{"PostScript", PostScript, []byte(psTwoPages)},
		{"PostScript (atend)", PostScript, []byte(psAtEnd)},
		{"XPS", XPS, twoPageXPS(t)},
	}
	for _, d := range docs {
		for p := 0; p <= 100; p += 10 {
			cut := d.data[:len(d.data)*p/100]
			n, err := count(d.kind, cut, Limits{})
			if (err == nil) == (n == 0) || n < 0 {
				t.Errorf("%s cut at %d%%: %d, %v", d.name, p, n, err)
			}
			if err != nil && len(categoriesOf(err)) == 0 {
				t.Errorf("%s cut at %d%%: error %v has no category", d.name, p, err)
			}
			if p == 100 && err != nil {
				t.Errorf("%s whole: %v", d.name, err)
			}
			// and the same bytes as a ZIP
			if a, err := OpenZip(bytes.NewReader(cut), int64(len(cut)), Limits{}); err == nil {
				for _, e := range a.Entries() {
					a.Extract(e.Name, &bytes.Buffer{})
				}
			}
		}
	}
}

func TestPagesRecovers(t *testing.T) {
	n, err := Pages(PDF, panicReader{}, 100, Limits{})
	if n != 0 || !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "internal error") {
		t.Errorf("Pages on a panicking reader: %d, %v", n, err)
	}
}

type panicReader struct{}

func (panicReader) ReadAt([]byte, int64) (int, error) { panic("boom") }

// TestPDFLarge: 100,000 pages (the default limit) in a balanced tree of
// 100 × 1,000 are counted; one more page is refused.
func TestPDFLarge(t *testing.T) {
	build := func(extra bool) []byte {
		b := testdoc.NewPDF().Obj(1, "<< /Type /Catalog /Pages 2 0 R >>")
		var mid strings.Builder
		next := 103
		for i := range 100 {
			mid.WriteString(fmt.Sprintf("%d 0 R ", 3+i))
			var kids strings.Builder
			n := 1000
			if extra && i == 99 {
				n++
			}
			for range n {
				fmt.Fprintf(&kids, "%d 0 R ", next)
				next++
			}
			b.Obj(3+i, "<< /Type /Pages /Parent 2 0 R /Kids ["+kids.String()+"] >>")
		}
		b.Obj(2, "<< /Type /Pages /Kids ["+mid.String()+"] /Count 100000 >>")
		for n := 103; n < next; n++ {
			b.Obj(n, "<< /Type /Page >>")
		}
		return b.Xref("/Root 1 0 R")
	}
	// time enough on a loaded machine (under -race beside other
	// packages): this case tests the page limit, not the time limit
	if n, err := count(PDF, build(false), Limits{Timeout: 2 * time.Minute}); n != 100000 || err != nil {
		t.Errorf("100,000 pages: %d, %v", n, err)
	}
	if n, err := count(PDF, build(true), Limits{Timeout: 2 * time.Minute}); n != 0 || !errors.Is(err, ErrLimit) {
		t.Errorf("100,001 pages: %d, %v", n, err)
	}
}
