package inspect

import (
	"archive/zip"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"slices"
	"strings"
	"testing"
)

// Builders for the test documents: PDFs with correct cross-reference
// tables or streams, ZIPs through archive/zip or byte by byte, XPS
// packages and PostScript.

type pdfEntry struct {
	off      int // type 1
	stm, idx int // type 2 when stm > 0
}

type pdfBuilder struct {
	buf      bytes.Buffer
	sec      map[int]pdfEntry // this section's objects
	lastXref int              // offset of the last xref section, -1 before any
}

func newPDF() *pdfBuilder {
	b := &pdfBuilder{sec: map[int]pdfEntry{}, lastXref: -1}
	b.buf.WriteString("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
	return b
}

// obj writes "num 0 obj body endobj".
func (b *pdfBuilder) obj(num int, body string) *pdfBuilder {
	b.sec[num] = pdfEntry{off: b.buf.Len()}
	fmt.Fprintf(&b.buf, "%d 0 obj\n%s\nendobj\n", num, body)
	return b
}

// stream writes a stream object; dict is the dictionary's body without
// /Length, which is added unless dict has one.
func (b *pdfBuilder) stream(num int, dict string, data []byte) *pdfBuilder {
	b.sec[num] = pdfEntry{off: b.buf.Len()}
	if !strings.Contains(dict, "/Length") {
		dict += fmt.Sprintf(" /Length %d", len(data))
	}
	fmt.Fprintf(&b.buf, "%d 0 obj\n<<%s>>\nstream\n", num, dict)
	b.buf.Write(data)
	b.buf.WriteString("\nendstream\nendobj\n")
	return b
}

func deflate(data []byte) []byte {
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	w.Write(data)
	w.Close()
	return z.Bytes()
}

// objStm puts objects (number to body) into object stream num.
func (b *pdfBuilder) objStm(num int, objs map[int]string) *pdfBuilder {
	var head, body bytes.Buffer
	nums := slices.Sorted(mapKeys(objs))
	for i, n := range nums {
		fmt.Fprintf(&head, "%d %d ", n, body.Len())
		body.WriteString(objs[n])
		body.WriteString("\n")
		b.sec[n] = pdfEntry{stm: num, idx: i}
	}
	data := append(head.Bytes(), body.Bytes()...)
	return b.stream(num, fmt.Sprintf("/Type /ObjStm /N %d /First %d /Filter /FlateDecode", len(nums), head.Len()), deflate(data))
}

func (b *pdfBuilder) sectionNums() []int { return slices.Sorted(mapKeys(b.sec)) }

// xref ends a section with a cross-reference table and a trailer holding
// trailer (plus /Size and, after an earlier section, /Prev), and returns
// the file so far.
func (b *pdfBuilder) xref(trailer string) []byte {
	off := b.buf.Len()
	b.buf.WriteString("xref\n")
	nums := b.sectionNums()
	if b.lastXref < 0 {
		b.buf.WriteString("0 1\n0000000000 65535 f \n")
	}
	for i := 0; i < len(nums); {
		j := i
		for j+1 < len(nums) && nums[j+1] == nums[j]+1 {
			j++
		}
		fmt.Fprintf(&b.buf, "%d %d\n", nums[i], j-i+1)
		for _, n := range nums[i : j+1] {
			fmt.Fprintf(&b.buf, "%010d 00000 n \n", b.sec[n].off)
		}
		i = j + 1
	}
	size := 1
	if len(nums) > 0 {
		size = nums[len(nums)-1] + 1
	}
	prev := ""
	if b.lastXref >= 0 {
		prev = fmt.Sprintf(" /Prev %d", b.lastXref)
	}
	fmt.Fprintf(&b.buf, "trailer\n<< /Size %d%s %s >>\nstartxref\n%d\n%%%%EOF\n", size, prev, trailer, off)
	b.lastXref = off
	clear(b.sec)
	return bytes.Clone(b.buf.Bytes())
}

// xrefStream ends a section with cross-reference stream object num (W
// [1 4 2]); png adds the PNG Up predictor.
func (b *pdfBuilder) xrefStream(num int, trailer string, png bool) []byte {
	off := b.buf.Len()
	b.sec[num] = pdfEntry{off: off}
	nums := b.sectionNums()
	var rows [][]byte
	var index []string
	for i := 0; i < len(nums); {
		j := i
		for j+1 < len(nums) && nums[j+1] == nums[j]+1 {
			j++
		}
		index = append(index, fmt.Sprintf("%d %d", nums[i], j-i+1))
		for _, n := range nums[i : j+1] {
			e := b.sec[n]
			row := make([]byte, 7)
			if e.stm > 0 {
				row[0] = 2
				binary.BigEndian.PutUint32(row[1:], uint32(e.stm))
				binary.BigEndian.PutUint16(row[5:], uint16(e.idx))
			} else {
				row[0] = 1
				binary.BigEndian.PutUint32(row[1:], uint32(e.off))
			}
			rows = append(rows, row)
		}
		i = j + 1
	}
	var data []byte
	parms := ""
	if png {
		prev := make([]byte, 7)
		for _, r := range rows {
			data = append(data, 2) // Up
			for k := range r {
				data = append(data, r[k]-prev[k])
			}
			prev = r
		}
		parms = " /DecodeParms << /Predictor 12 /Columns 7 >>"
	} else {
		data = slices.Concat(rows...)
	}
	prevKey := ""
	if b.lastXref >= 0 {
		prevKey = fmt.Sprintf(" /Prev %d", b.lastXref)
	}
	b.stream(num, fmt.Sprintf("/Type /XRef /W [1 4 2] /Index [%s] /Size %d%s /Filter /FlateDecode%s %s",
		strings.Join(index, " "), nums[len(nums)-1]+1, prevKey, parms, trailer), deflate(data))
	fmt.Fprintf(&b.buf, "startxref\n%d\n%%%%EOF\n", off)
	b.lastXref = off
	clear(b.sec)
	return bytes.Clone(b.buf.Bytes())
}

func onePagePDF() []byte {
	return newPDF().
		obj(1, "<< /Type /Catalog /Pages 2 0 R >>").
		obj(2, "<< /Type /Pages /Kids [3 0 R] /Count 1 >>").
		obj(3, "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R >>").
		stream(4, "", []byte("BT /F1 12 Tf 72 712 Td (Hello) Tj ET")).
		xref("/Root 1 0 R")
}

func threePagePDF() []byte {
	return newPDF().
		obj(1, "<< /Type /Catalog /Pages 2 0 R >>").
		obj(2, "<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 3 >>").
		obj(3, "<< /Type /Pages /Parent 2 0 R /Kids [5 0 R 6 0 R] /Count 2 >>").
		obj(4, "<< /Type /Page /Parent 2 0 R >>").
		obj(5, "<< /Type /Page /Parent 3 0 R >>").
		obj(6, "<< /Type /Page /Parent 3 0 R >>").
		xref("/Root 1 0 R /Info << /Title (three \\(3\\) pages) /Author <4C6F646765> >>")
}

// xrefStreamPDF: catalog and page tree in an object stream, a PNG-Up
// predicted cross-reference stream; 4 pages.
func xrefStreamPDF() []byte {
	return newPDF().
		objStm(10, map[int]string{
			1: "<< /Type /Catalog /Pages 2 0 R >>",
			2: "<< /Type /Pages /Kids [3 0 R 4 0 R 5 0 R 6 0 R] /Count 4 >>",
			3: "<< /Type /Page /Parent 2 0 R >>",
			4: "<< /Type /Page /Parent 2 0 R >>",
			5: "<< /Type /Page /Parent 2 0 R >>",
		}).
		obj(6, "<< /Type /Page /Parent 2 0 R /Resources << /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >> >>").
		xrefStream(11, "/Root 1 0 R", true)
}

// incrementalPDF: a one-page file updated to two pages by an appended
// section with /Prev.
func incrementalPDF() []byte {
	b := newPDF().
		obj(1, "<< /Type /Catalog /Pages 2 0 R >>").
		obj(2, "<< /Type /Pages /Kids [3 0 R] /Count 1 >>").
		obj(3, "<< /Type /Page /Parent 2 0 R >>")
	b.xref("/Root 1 0 R")
	b.obj(2, "<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 >>").
		obj(4, "<< /Type /Page /Parent 2 0 R >>")
	return b.xref("/Root 1 0 R")
}

// zipOf builds a ZIP with archive/zip: name, content pairs, deflated.
func zipOf(t testing.TB, files ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for i := 0; i+1 < len(files); i += 2 {
		f, err := w.Create(files[i])
		if err != nil {
			t.Fatal(err)
		}
		f.Write([]byte(files[i+1]))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

const (
	xpsNS   = `xmlns="http://schemas.microsoft.com/xps/2005/06"`
	xpsPage = `<FixedPage Width="793.76" Height="1122.56" ` + xpsNS + ` xml:lang="en-AU"><Path Data="M 0,0 L 10,10" Stroke="#000000"/></FixedPage>`
)

// xpsParts is a two-page XPS package.
func xpsParts() []string {
	return []string{
		"[Content_Types].xml", `<?xml version="1.0" encoding="utf-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
			`<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>` +
			`<Default Extension="fdseq" ContentType="application/vnd.ms-package.xps-fixeddocumentsequence+xml"/>` +
			`<Default Extension="fdoc" ContentType="application/vnd.ms-package.xps-fixeddocument+xml"/>` +
			`<Default Extension="fpage" ContentType="application/vnd.ms-package.xps-fixedpage+xml"/></Types>`,
		"_rels/.rels", `<?xml version="1.0" encoding="utf-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
			`<Relationship Type="http://schemas.microsoft.com/xps/2005/06/fixedrepresentation" Target="/FixedDocSeq.fdseq" Id="R0"/></Relationships>`,
		"FixedDocSeq.fdseq", `<FixedDocumentSequence ` + xpsNS + `><DocumentReference Source="Documents/1/FixedDoc.fdoc"/></FixedDocumentSequence>`,
		"Documents/1/FixedDoc.fdoc", `<FixedDocument ` + xpsNS + `><PageContent Source="Pages/1.fpage"/><PageContent Source="Pages/2.fpage"/></FixedDocument>`,
		"Documents/1/Pages/1.fpage", xpsPage,
		"Documents/1/Pages/2.fpage", xpsPage,
	}
}

func twoPageXPS(t testing.TB) []byte { return zipOf(t, xpsParts()...) }

const (
	psTwoPages = "%!PS-Adobe-3.0\n%%Creator: lodge test\n%%Pages: 2\n%%EndComments\n%%Page: 1 1\nshowpage\n%%Page: 2 2\nshowpage\n%%EOF\n"
	psAtEnd    = "%!PS-Adobe-3.0\r\n%%Pages: (atend)\r\n%%EndComments\r\n%%Page: 1 1\r\nshowpage\r\n%%Trailer\r\n%%Pages: 3\r\n%%EOF\r\n"
)

// rawEntry is one entry of a ZIP built byte by byte.
type rawEntry struct {
	name         string
	localName    string // when it differs from name
	data         []byte // as stored (compressed when method is 8)
	method       uint16
	flags        uint16
	crc          uint32
	csize, usize uint32 // 0: len(data)
	extAttr      uint32
	creator      uint16
	offset       int  // the central directory's local header offset; 0: where it is written
	cdOnly       bool // no local header and data: only a central directory record
}

// rawZip writes entries with their local headers and a central directory.
func rawZip(entries ...rawEntry) []byte {
	var buf bytes.Buffer
	offs := make([]int, len(entries))
	for i, e := range entries {
		offs[i] = buf.Len()
		if e.cdOnly {
			continue
		}
		ln := e.name
		if e.localName != "" {
			ln = e.localName
		}
		buf.Write(localHeader(ln, e))
		buf.Write(e.data)
	}
	cd := buf.Len()
	for i, e := range entries {
		off := offs[i]
		if e.offset != 0 {
			off = e.offset
		}
		buf.Write(centralHeader(e, off))
	}
	buf.Write(endRecord(len(entries), buf.Len()-cd, cd))
	return buf.Bytes()
}

func (e rawEntry) sizes() (uint32, uint32, uint32) {
	c, u, crc := e.csize, e.usize, e.crc
	if c == 0 {
		c = uint32(len(e.data))
	}
	if u == 0 {
		u = uint32(len(e.data))
	}
	if crc == 0 && e.method == 0 {
		crc = crc32.ChecksumIEEE(e.data)
	}
	return c, u, crc
}

func localHeader(name string, e rawEntry) []byte {
	c, u, crc := e.sizes()
	h := make([]byte, 30, 30+len(name))
	le.PutUint32(h, sigLocal)
	le.PutUint16(h[4:], 20)
	le.PutUint16(h[6:], e.flags)
	le.PutUint16(h[8:], e.method)
	le.PutUint32(h[14:], crc)
	le.PutUint32(h[18:], c)
	le.PutUint32(h[22:], u)
	le.PutUint16(h[26:], uint16(len(name)))
	return append(h, name...)
}

func centralHeader(e rawEntry, off int) []byte {
	c, u, crc := e.sizes()
	h := make([]byte, 46, 46+len(e.name))
	le.PutUint32(h, sigCentral)
	le.PutUint16(h[4:], e.creator<<8|20)
	le.PutUint16(h[6:], 20)
	le.PutUint16(h[8:], e.flags)
	le.PutUint16(h[10:], e.method)
	le.PutUint32(h[16:], crc)
	le.PutUint32(h[20:], c)
	le.PutUint32(h[24:], u)
	le.PutUint16(h[28:], uint16(len(e.name)))
	le.PutUint32(h[38:], e.extAttr)
	le.PutUint32(h[42:], uint32(off))
	return append(h, e.name...)
}

func endRecord(n, cdLen, cdOff int) []byte {
	h := make([]byte, 22)
	le.PutUint32(h, sigEnd)
	le.PutUint16(h[8:], uint16(n))
	le.PutUint16(h[10:], uint16(n))
	le.PutUint32(h[12:], uint32(cdLen))
	le.PutUint32(h[16:], uint32(cdOff))
	return h
}
