// Package testdoc writes small valid documents for tests and benchmarks:
// PDFs with a correct cross-reference table, PostScript with document
// structuring comments and XPS packages, each with a chosen number of
// pages, as clients upload them.
package testdoc

import (
	"archive/zip"
	"bytes"
	"fmt"
	"strings"
)

// PDF writes a valid PDF with n pages and, when pad > 0, a comment of pad
// bytes after the header (to reach a size).
func PDF(n, pad int) []byte {
	var b bytes.Buffer
	var offs []int
	obj := func(s string) {
		offs = append(offs, b.Len())
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", len(offs), s)
	}
	b.WriteString("%PDF-1.4\n")
	if pad > 0 {
		b.WriteString("%" + strings.Repeat("x", pad) + "\n")
	}
	obj("<</Type/Catalog/Pages 2 0 R>>")
	kids := make([]string, n)
	for i := range kids {
		kids[i] = fmt.Sprintf("%d 0 R", 3+i)
	}
	obj(fmt.Sprintf("<</Type/Pages/Kids[%s]/Count %d>>", strings.Join(kids, " "), n))
	for i := 0; i < n; i++ {
		obj("<</Type/Page/Parent 2 0 R/MediaBox[0 0 595 842]>>")
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(offs)+1)
	for _, o := range offs {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<</Size %d/Root 1 0 R>>\nstartxref\n%d\n%%%%EOF\n", len(offs)+1, xref)
	return b.Bytes()
}

// PostScript writes a PostScript document with its page count in the
// document structuring comments.
func PostScript(pages int) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "%%!PS-Adobe-3.0\n%%%%Pages: %d\n%%%%EndComments\n", pages)
	for i := 1; i <= pages; i++ {
		fmt.Fprintf(&b, "%%%%Page: %d %d\nshowpage\n", i, i)
	}
	b.WriteString("%%EOF\n")
	return []byte(b.String())
}

// XPS writes a minimal XPS package with n pages.
func XPS(n int) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	add := func(name, body string) {
		w, _ := zw.Create(name)
		w.Write([]byte(body))
	}
	add("[Content_Types].xml", `<?xml version="1.0" encoding="utf-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="fdseq" ContentType="application/vnd.ms-package.xps-fixeddocumentsequence+xml"/><Default Extension="fdoc" ContentType="application/vnd.ms-package.xps-fixeddocument+xml"/><Default Extension="fpage" ContentType="application/vnd.ms-package.xps-fixedpage+xml"/><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/></Types>`)
	add("_rels/.rels", `<?xml version="1.0" encoding="utf-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Type="http://schemas.microsoft.com/xps/2005/06/fixedrepresentation" Target="/FixedDocSeq.fdseq" Id="R0"/></Relationships>`)
	add("FixedDocSeq.fdseq", `<FixedDocumentSequence xmlns="http://schemas.microsoft.com/xps/2005/06"><DocumentReference Source="/Documents/1/FixedDoc.fdoc"/></FixedDocumentSequence>`)
	var pages strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&pages, `<PageContent Source="/Documents/1/Pages/%d.fpage"/>`, i)
		add(fmt.Sprintf("Documents/1/Pages/%d.fpage", i), `<FixedPage xmlns="http://schemas.microsoft.com/xps/2005/06" Width="793" Height="1122" xml:lang="en-AU"></FixedPage>`)
	}
	add("Documents/1/FixedDoc.fdoc", `<FixedDocument xmlns="http://schemas.microsoft.com/xps/2005/06">`+pages.String()+`</FixedDocument>`)
	zw.Close()
	return buf.Bytes()
}

// RichPostScript writes a three-page PostScript document that exercises
// a PDF converter: A4 text in two fonts with a string that needs escapes,
// a colour image and filled shapes, and a landscape A4 page.
func RichPostScript() []byte {
	var b strings.Builder
	b.WriteString("%!PS-Adobe-3.0\n%%Pages: 3\n%%EndComments\n")
	b.WriteString("%%Page: 1 1\n<< /PageSize [595 842] >> setpagedevice\n" +
		"/Times-Roman findfont 14 scalefont setfont 72 760 moveto (Page one: Times \\(Roman\\) text) show\n" +
		"/Helvetica-Bold findfont 11 scalefont setfont 72 730 moveto (Helvetica bold, 3/72 Charles St) show\n" +
		"0 0.4 0.8 setrgbcolor 72 600 200 80 rectfill showpage\n")
	b.WriteString("%%Page: 2 2\n<< /PageSize [595 842] >> setpagedevice\n" +
		"/Helvetica findfont 12 scalefont setfont 72 760 moveto (Page two: an image below) show\n" +
		"gsave 100 400 translate 300 200 scale 4 4 8 [4 0 0 -4 0 4]\n" +
		"<ff0000 00ff00 0000ff ffff00 00ffff ff00ff 000000 ffffff 808080 ff8000 0080ff 80ff00 400000 004000 000040 c0c0c0>\n" +
		"false 3 colorimage grestore showpage\n")
	b.WriteString("%%Page: 3 3\n<< /PageSize [842 595] >> setpagedevice\n" +
		"/Helvetica findfont 12 scalefont setfont 72 520 moveto (Page three: landscape) show\n" +
		"1 0 0 setrgbcolor 600 100 150 150 rectfill showpage\n%%EOF\n")
	return []byte(b.String())
}
