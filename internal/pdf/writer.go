package pdf

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"strconv"

	"github.com/klauspost/compress/zlib"
)

// Ref is the number of an indirect object of a Writer.
type Ref int

// Writer writes a PDF 1.7 file front to back: objects as they are made,
// pages in order, the page tree, catalog and cross-reference table at
// Close. It keeps 8 bytes per object and 4 per page in memory, whatever
// the size of the document, so a batch of any length streams to disk.
type Writer struct {
	w        *bufio.Writer
	n        int64   // bytes written so far
	offs     []int64 // offs[r-1]: where object r starts; 0 while not written
	pages    []Ref
	pagesRef Ref
	fonts    map[Font]Ref
	gstates  map[string]Ref
	id       hash.Hash // the file identifier: a hash of the content
	zbuf     bytes.Buffer
	zw       *zlib.Writer
	err      error
	// Compress makes Writer compress the content streams it writes
	// (Flate); imported streams keep their own encoding.
	Compress bool
}

// NewWriter starts a PDF on w.
func NewWriter(w io.Writer) *Writer {
	pw := &Writer{w: bufio.NewWriterSize(w, 256<<10), fonts: map[Font]Ref{}, gstates: map[string]Ref{}, Compress: true}
	pw.id = sha256.New()
	pw.pagesRef = pw.Alloc()
	pw.raw("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
	return pw
}

// Err returns the first error of the writer.
func (w *Writer) Err() error { return w.err }

func (w *Writer) raw(s string) {
	if w.err != nil {
		return
	}
	n, err := w.w.WriteString(s)
	w.n += int64(n)
	w.err = err
}

func (w *Writer) rawBytes(b []byte) {
	if w.err != nil {
		return
	}
	n, err := w.w.Write(b)
	w.n += int64(n)
	w.err = err
}

// Alloc reserves an object number, for an object written later.
func (w *Writer) Alloc() Ref {
	w.offs = append(w.offs, 0)
	return Ref(len(w.offs))
}

func (w *Writer) begin(r Ref) {
	if w.err != nil {
		return
	}
	if r < 1 || int(r) > len(w.offs) {
		w.err = fmt.Errorf("pdf: object %d was not allocated", r)
		return
	}
	if w.offs[r-1] != 0 {
		w.err = fmt.Errorf("pdf: object %d written twice", r)
		return
	}
	w.offs[r-1] = w.n
	w.raw(strconv.Itoa(int(r)))
	w.raw(" 0 obj\n")
}

// Object writes object r with the body given (a dictionary, array or
// other PDF object, written as is).
func (w *Writer) Object(r Ref, body []byte) {
	w.begin(r)
	w.rawBytes(body)
	w.raw("\nendobj\n")
	w.id.Write(body)
}

// Stream writes object r as a stream: dict holds the dictionary's entries
// other than /Length (for example "/Type /XObject /Subtype /Form ...",
// and /Filter when data is already encoded).
func (w *Writer) Stream(r Ref, dict []byte, data []byte) {
	w.begin(r)
	w.raw("<<")
	w.rawBytes(dict)
	w.raw(" /Length ")
	w.raw(strconv.Itoa(len(data)))
	w.raw(" >>\nstream\n")
	w.rawBytes(data)
	w.raw("\nendstream\nendobj\n")
	w.id.Write(data)
}

// streamFrom writes object r as a stream of the n bytes src gives (data
// already encoded as dict's /Filter says), without holding them.
func (w *Writer) streamFrom(r Ref, dict []byte, src io.Reader, n int64) {
	w.begin(r)
	w.raw("<<")
	w.rawBytes(dict)
	w.raw(" /Length ")
	w.raw(strconv.FormatInt(n, 10))
	w.raw(" >>\nstream\n")
	if w.err == nil {
		m, err := io.CopyN(io.MultiWriter(w.w, w.id), src, n)
		w.n += m
		if err != nil {
			w.err = fmt.Errorf("pdf: copying stream %d: %w", r, err)
		}
	}
	w.raw("\nendstream\nendobj\n")
}

// ContentStream writes data, compressed when w.Compress, as stream r with
// the dictionary entries dict.
func (w *Writer) ContentStream(r Ref, dict []byte, data []byte) {
	if !w.Compress || len(data) < 64 {
		w.Stream(r, dict, data)
		return
	}
	w.zbuf.Reset()
	if w.zw == nil {
		w.zw, _ = zlib.NewWriterLevel(&w.zbuf, zlib.BestSpeed)
	} else {
		w.zw.Reset(&w.zbuf)
	}
	w.zw.Write(data)
	w.zw.Close()
	d := append(append([]byte(nil), dict...), " /Filter /FlateDecode"...)
	w.Stream(r, d, w.zbuf.Bytes())
}

// Page size and resources.

// AddPage appends a page of width by height points drawn by c; c can be
// reset and reused once AddPage returns.
func (w *Writer) AddPage(width, height float64, c *Content) {
	if w.err != nil {
		return
	}
	contents := w.Alloc()
	w.ContentStream(contents, nil, c.buf)
	page := w.Alloc()
	b := make([]byte, 0, 256)
	b = append(b, "<< /Type /Page /Parent "...)
	b = appendRef(b, w.pagesRef)
	b = append(b, " /MediaBox [0 0 "...)
	b = appendNum(b, width)
	b = append(b, ' ')
	b = appendNum(b, height)
	b = append(b, "] /Resources "...)
	b = w.appendResources(b, c)
	b = append(b, " /Contents "...)
	b = appendRef(b, contents)
	b = append(b, " >>"...)
	w.Object(page, b)
	w.pages = append(w.pages, page)
}

// Pages returns how many pages were added.
func (w *Writer) Pages() int { return len(w.pages) }

func (w *Writer) appendResources(b []byte, c *Content) []byte {
	b = append(b, "<< /ProcSet [/PDF /Text /ImageB /ImageC /ImageI]"...)
	if c.fonts != 0 {
		b = append(b, " /Font <<"...)
		for f := Font(0); f < fontCount; f++ {
			if c.fonts&(1<<f) != 0 {
				b = append(b, ' ', '/')
				b = append(b, f.resName()...)
				b = append(b, ' ')
				b = appendRef(b, w.font(f))
			}
		}
		b = append(b, " >>"...)
	}
	if len(c.xobjects) > 0 {
		b = append(b, " /XObject <<"...)
		for _, x := range c.xobjects {
			b = append(b, " /X"...)
			b = strconv.AppendInt(b, int64(x), 10)
			b = append(b, ' ')
			b = appendRef(b, x)
		}
		b = append(b, " >>"...)
	}
	if c.blends != 0 {
		b = append(b, " /ExtGState <<"...)
		for m := BlendMode(1); m < blendCount; m++ {
			if c.blends&(1<<m) != 0 {
				b = append(b, " /"...)
				b = append(b, m.resName()...)
				b = append(b, ' ')
				b = appendRef(b, w.gstate(m))
			}
		}
		b = append(b, " >>"...)
	}
	return append(b, " >>"...)
}

func (w *Writer) font(f Font) Ref {
	if r, ok := w.fonts[f]; ok {
		return r
	}
	r := w.Alloc()
	w.fonts[f] = r
	w.Object(r, []byte("<< /Type /Font /Subtype /Type1 /BaseFont /"+f.baseName()+" /Encoding /WinAnsiEncoding >>"))
	return r
}

func (w *Writer) gstate(m BlendMode) Ref {
	key := m.resName()
	if r, ok := w.gstates[key]; ok {
		return r
	}
	r := w.Alloc()
	w.gstates[key] = r
	w.Object(r, []byte("<< /Type /ExtGState /BM /"+m.pdfName()+" >>"))
	return r
}

// Close writes the page tree, the catalog, the cross-reference table and
// the trailer, and flushes. It does not close the underlying writer.
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	if len(w.pages) == 0 {
		return errors.New("pdf: a document needs at least one page")
	}
	b := make([]byte, 0, 64+len(w.pages)*10)
	b = append(b, "<< /Type /Pages /Count "...)
	b = strconv.AppendInt(b, int64(len(w.pages)), 10)
	b = append(b, " /Kids ["...)
	for i, p := range w.pages {
		if i > 0 {
			b = append(b, ' ')
		}
		b = appendRef(b, p)
	}
	b = append(b, "] >>"...)
	w.begin(w.pagesRef)
	w.rawBytes(b)
	w.raw("\nendobj\n")
	catalog := w.Alloc()
	b = append(b[:0], "<< /Type /Catalog /Pages "...)
	b = appendRef(b, w.pagesRef)
	b = append(b, " >>"...)
	w.Object(catalog, b)
	info := w.Alloc()
	w.Object(info, []byte("<< /Producer (lodge) >>"))
	for i, off := range w.offs {
		if off == 0 && w.err == nil {
			w.err = fmt.Errorf("pdf: object %d was allocated but never written", i+1)
		}
	}
	xref := w.n
	w.raw("xref\n0 ")
	w.raw(strconv.Itoa(len(w.offs) + 1))
	w.raw("\n0000000000 65535 f \n")
	line := make([]byte, 0, 20)
	for _, off := range w.offs {
		line = append(line[:0], fmt.Sprintf("%010d 00000 n \n", off)...)
		w.rawBytes(line)
	}
	sum := w.id.Sum(nil)
	id := hex.EncodeToString(sum[:16])
	w.raw(fmt.Sprintf("trailer\n<< /Size %d /Root %d 0 R /Info %d 0 R /ID [<%s> <%s>] >>\nstartxref\n%d\n%%%%EOF\n",
		len(w.offs)+1, catalog, info, id, id, xref))
	if w.err != nil {
		return w.err
	}
	return w.w.Flush()
}

func appendRef(b []byte, r Ref) []byte {
	b = strconv.AppendInt(b, int64(r), 10)
	return append(b, " 0 R"...)
}

// appendNum writes v with at most 4 decimals and no trailing zeros, as PDF
// reals are written (no exponent).
func appendNum(b []byte, v float64) []byte {
	if v == float64(int64(v)) && v < 1e15 && v > -1e15 {
		return strconv.AppendInt(b, int64(v), 10)
	}
	start := len(b)
	b = strconv.AppendFloat(b, v, 'f', 4, 64)
	for b[len(b)-1] == '0' {
		b = b[:len(b)-1]
	}
	if b[len(b)-1] == '.' {
		b = b[:len(b)-1]
	}
	if string(b[start:]) == "-0" {
		b = append(b[:start], '0')
	}
	return b
}
