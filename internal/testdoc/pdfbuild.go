package testdoc

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// PDFBuilder writes PDFs object by object, with correct cross-reference
// tables or streams, for tests of readers: every object's bytes are the
// caller's, so a test can write exactly the damage it means.
type PDFBuilder struct {
	buf      bytes.Buffer
	sec      map[int]pdfEntry // this section's objects
	lastXref int              // offset of the last xref section, -1 before any
}

type pdfEntry struct {
	off      int // type 1
	stm, idx int // type 2 when stm > 0
}

// NewPDF starts a PDF 1.7 file.
func NewPDF() *PDFBuilder {
	b := &PDFBuilder{sec: map[int]pdfEntry{}, lastXref: -1}
	b.buf.WriteString("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
	return b
}

// Obj writes "num 0 obj body endobj".
func (b *PDFBuilder) Obj(num int, body string) *PDFBuilder {
	b.sec[num] = pdfEntry{off: b.buf.Len()}
	fmt.Fprintf(&b.buf, "%d 0 obj\n%s\nendobj\n", num, body)
	return b
}

// Stream writes a stream object; dict is the dictionary's body without
// /Length, which is added unless dict has one.
func (b *PDFBuilder) Stream(num int, dict string, data []byte) *PDFBuilder {
	b.sec[num] = pdfEntry{off: b.buf.Len()}
	if !strings.Contains(dict, "/Length") {
		dict += fmt.Sprintf(" /Length %d", len(data))
	}
	fmt.Fprintf(&b.buf, "%d 0 obj\n<<%s>>\nstream\n", num, dict)
	b.buf.Write(data)
	b.buf.WriteString("\nendstream\nendobj\n")
	return b
}

// Deflate compresses data as FlateDecode does.
func Deflate(data []byte) []byte {
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	w.Write(data)
	w.Close()
	return z.Bytes()
}

// ObjStm puts objects (number to body) into object stream num.
func (b *PDFBuilder) ObjStm(num int, objs map[int]string) *PDFBuilder {
	var head, body bytes.Buffer
	nums := slices.Sorted(maps.Keys(objs))
	for i, n := range nums {
		fmt.Fprintf(&head, "%d %d ", n, body.Len())
		body.WriteString(objs[n])
		body.WriteString("\n")
		b.sec[n] = pdfEntry{stm: num, idx: i}
	}
	data := append(head.Bytes(), body.Bytes()...)
	return b.Stream(num, fmt.Sprintf("/Type /ObjStm /N %d /First %d /Filter /FlateDecode", len(nums), head.Len()), Deflate(data))
}

func (b *PDFBuilder) sectionNums() []int { return slices.Sorted(maps.Keys(b.sec)) }

// Xref ends a section with a cross-reference table and a trailer holding
// trailer (plus /Size and, after an earlier section, /Prev), and returns
// the file so far.
func (b *PDFBuilder) Xref(trailer string) []byte {
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

// XrefStream ends a section with cross-reference stream object num (W
// [1 4 2]); png adds the PNG Up predictor.
func (b *PDFBuilder) XrefStream(num int, trailer string, png bool) []byte {
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
	b.Stream(num, fmt.Sprintf("/Type /XRef /W [1 4 2] /Index [%s] /Size %d%s /Filter /FlateDecode%s %s",
		strings.Join(index, " "), nums[len(nums)-1]+1, prevKey, parms, trailer), Deflate(data))
	fmt.Fprintf(&b.buf, "startxref\n%d\n%%%%EOF\n", off)
	b.lastXref = off
	clear(b.sec)
	return bytes.Clone(b.buf.Bytes())
}

// PDFWith builds a PDF from numbered object bodies (the first is object
// 1), with /Root 1 0 R.
func PDFWith(objs ...string) []byte {
	b := NewPDF()
	for i, o := range objs {
		b.Obj(i+1, o)
	}
	return b.Xref("/Root 1 0 R")
}

// OnePagePDF: one A4 page saying Hello.
func OnePagePDF() []byte {
	return NewPDF().
		Obj(1, "<< /Type /Catalog /Pages 2 0 R >>").
		Obj(2, "<< /Type /Pages /Kids [3 0 R] /Count 1 >>").
		Obj(3, "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R >>").
		Stream(4, "", []byte("BT /F1 12 Tf 72 712 Td (Hello) Tj ET")).
		Xref("/Root 1 0 R")
}

// ThreePagePDF: a nested page tree of three pages and an /Info
// dictionary with strings.
func ThreePagePDF() []byte {
	return NewPDF().
		Obj(1, "<< /Type /Catalog /Pages 2 0 R >>").
		Obj(2, "<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 3 >>").
		Obj(3, "<< /Type /Pages /Parent 2 0 R /Kids [5 0 R 6 0 R] /Count 2 >>").
		Obj(4, "<< /Type /Page /Parent 2 0 R >>").
		Obj(5, "<< /Type /Page /Parent 3 0 R >>").
		Obj(6, "<< /Type /Page /Parent 3 0 R >>").
		Xref("/Root 1 0 R /Info << /Title (three \\(3\\) pages) /Author <4C6F646765> >>")
}

// XrefStreamPDF: catalog and page tree in an object stream, a PNG-Up
// predicted cross-reference stream; 4 pages.
func XrefStreamPDF() []byte {
	return NewPDF().
		ObjStm(10, map[int]string{
			1: "<< /Type /Catalog /Pages 2 0 R >>",
			2: "<< /Type /Pages /Kids [3 0 R 4 0 R 5 0 R 6 0 R] /Count 4 >>",
			3: "<< /Type /Page /Parent 2 0 R >>",
			4: "<< /Type /Page /Parent 2 0 R >>",
			5: "<< /Type /Page /Parent 2 0 R >>",
		}).
		Obj(6, "<< /Type /Page /Parent 2 0 R /Resources << /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >> >>").
		XrefStream(11, "/Root 1 0 R", true)
}

// IncrementalPDF: a one-page file updated to two pages by an appended
// section with /Prev.
func IncrementalPDF() []byte {
	b := NewPDF().
		Obj(1, "<< /Type /Catalog /Pages 2 0 R >>").
		Obj(2, "<< /Type /Pages /Kids [3 0 R] /Count 1 >>").
		Obj(3, "<< /Type /Page /Parent 2 0 R >>")
	b.Xref("/Root 1 0 R")
	b.Obj(2, "<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 >>").
		Obj(4, "<< /Type /Page /Parent 2 0 R >>")
	return b.Xref("/Root 1 0 R")
}
