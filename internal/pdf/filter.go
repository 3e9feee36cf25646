package pdf

import (
	"bufio"
	"compress/flate"
	"encoding/ascii85"
	"errors"
	"io"
)

// Stream filters: FlateDecode (zlib or raw deflate, lenient about a
// truncated end and the Adler-32), ASCIIHexDecode, ASCII85Decode, the
// Identity crypt filter, and the PNG (10 to 15) and TIFF (2) predictors.
// Every stage streams; only the final output is held, capped.

// decodeStream applies a stream's filters to raw and returns at most max
// decoded bytes (more is an ErrLimit error).
func decodeStream(raw io.Reader, d dict, resolve func(object) object, max int64) ([]byte, error) {
	return decodeStreamInto(nil, raw, d, resolve, max, nil)
}

// flateReuse is a Flate decompressor and its input buffer, reused from
// stream to stream by one goroutine (the text reader decodes a content
// stream per page; a new decompressor is 40 KB).
type flateReuse struct {
	br *bufio.Reader
	fr io.ReadCloser
}

func (f *flateReuse) reader(r io.Reader) io.Reader {
	if f.br == nil {
		f.br = bufio.NewReader(r)
	} else {
		f.br.Reset(r)
	}
	skipZlibHeader(f.br)
	if f.fr == nil {
		f.fr = flate.NewReader(f.br)
	} else if err := f.fr.(flate.Resetter).Reset(f.br, nil); err != nil {
		f.fr = flate.NewReader(f.br)
	}
	return f.fr
}

// decodeStreamInto is decodeStream appending to dst (max bounds what it
// appends), with the first Flate filter's decompressor from reuse when
// it is not nil.
func decodeStreamInto(dst []byte, raw io.Reader, d dict, resolve func(object) object, max int64, reuse *flateReuse) ([]byte, error) {
	filters, parms := filterList(resolve(d["Filter"]), resolve(d["DecodeParms"]), resolve)
	if filters == nil && d["F"] != nil {
		return nil, malformed("PDF stream data in an external file")
	}
	if len(filters) > 8 {
		return nil, malformed("PDF stream with %d filters", len(filters))
	}
	r := raw
	for i, f := range filters {
		var err error
		switch f {
		case "FlateDecode", "Fl":
			if reuse != nil {
				r, reuse = reuse.reader(r), nil
			} else {
				r = newFlate(r)
			}
		case "ASCIIHexDecode", "AHx":
			r = &hexDecoder{r: bufio.NewReader(r)}
		case "ASCII85Decode", "A85":
			r = ascii85.NewDecoder(&a85Trim{r: bufio.NewReader(r)})
		case "Crypt":
			if n, _ := resolve(parms[i]["Name"]).(pdfName); n != "" && n != "Identity" {
				return nil, newErr([]error{ErrEncrypted}, "PDF stream encrypted with the /%s crypt filter", n)
			}
		default:
			return nil, malformed("PDF stream filter /%s is not supported", f)
		}
		if r, err = predictor(r, parms[i], resolve); err != nil {
			return nil, err
		}
	}
	data, err := readAppend(dst, io.LimitReader(r, max+1))
	if err != nil {
		var ce flate.CorruptInputError
		switch {
		case errors.Is(err, io.ErrUnexpectedEOF):
			// truncated: keep what was decoded, as readers do
		case errors.As(err, &ce):
			return nil, malformed("corrupt FlateDecode data in a PDF stream")
		default:
			var e *Error
			if errors.As(err, &e) {
				return nil, err
			}
			return nil, malformed("undecodable PDF stream: %v", err)
		}
	}
	if int64(len(data)-len(dst)) > max {
		return nil, limitErr("a PDF stream decodes to more than %d bytes", max)
	}
	return data, nil
}

// readAppend is io.ReadAll appending to b.
func readAppend(b []byte, r io.Reader) ([]byte, error) {
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b, err
		}
	}
}

func filterList(f, p object, resolve func(object) object) ([]pdfName, []dict) {
	var names []pdfName
	var parms []dict
	switch f := f.(type) {
	case pdfName:
		names = []pdfName{f}
		pd, _ := p.(dict)
		if pa, ok := p.(array); ok && len(pa) > 0 {
			pd, _ = resolve(pa[0]).(dict)
		}
		parms = []dict{pd}
	case array:
		pa, _ := p.(array)
		for i, x := range f {
			n, _ := resolve(x).(pdfName)
			names = append(names, n)
			var pd dict
			if i < len(pa) {
				pd, _ = resolve(pa[i]).(dict)
			}
			parms = append(parms, pd)
		}
	}
	return names, parms
}

// newFlate reads zlib data, or raw deflate when there is no zlib header.
// The Adler-32 trailer is not checked (many writers get it wrong).
func newFlate(r io.Reader) io.Reader {
	br := bufio.NewReader(r)
	skipZlibHeader(br)
	return flate.NewReader(br)
}

func skipZlibHeader(br *bufio.Reader) {
	if h, err := br.Peek(2); err == nil && h[0]&0x0F == 8 && h[0]>>4 <= 7 && (uint16(h[0])<<8|uint16(h[1]))%31 == 0 && h[1]&0x20 == 0 {
		br.Discard(2)
	}
}

type hexDecoder struct {
	r   *bufio.Reader
	eod bool
}

func (h *hexDecoder) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) && !h.eod {
		var v [2]byte
		k := 0
		for k < 2 {
			c, err := h.r.ReadByte()
			if err != nil || c == '>' {
				h.eod = true
				break
			}
			if x, ok := unhex(c); ok {
				v[k] = x
				k++
			} else if !isSpace(c) {
				return n, malformed("bad character in ASCIIHexDecode data")
			}
		}
		if k > 0 {
			p[n] = v[0]<<4 | v[1]
			n++
		}
	}
	if n == 0 && h.eod {
		return 0, io.EOF
	}
	return n, nil
}

// a85Trim ends ASCII85 data at its "~>" marker.
type a85Trim struct {
	r    *bufio.Reader
	done bool
}

func (a *a85Trim) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) && !a.done {
		c, err := a.r.ReadByte()
		if err != nil || c == '~' {
			a.done = true
			break
		}
		p[n] = c
		n++
	}
	if n == 0 && a.done {
		return 0, io.EOF
	}
	return n, nil
}

// maxPredictorRow bounds the row buffers a predictor's parameters ask
// for (cross-reference rows are a few bytes).
const maxPredictorRow = 1 << 20

// predictor wraps r with the PNG or TIFF predictor of parms, if any.
func predictor(r io.Reader, parms dict, resolve func(object) object) (io.Reader, error) {
	geti := func(k pdfName, def int64) int64 {
		if v, ok := resolve(parms[k]).(int64); ok {
			return v
		}
		return def
	}
	pred := geti("Predictor", 1)
	if pred <= 1 {
		return r, nil
	}
	colors, bpc, columns := geti("Colors", 1), geti("BitsPerComponent", 8), geti("Columns", 1)
	if colors < 1 || colors > 32 || columns < 1 || columns > 1<<20 ||
		bpc != 1 && bpc != 2 && bpc != 4 && bpc != 8 && bpc != 16 {
		return nil, malformed("PDF stream predictor parameters out of range")
	}
	bpp := int((colors*bpc + 7) / 8)
	rowLen := int((colors*bpc*columns + 7) / 8)
	if rowLen > maxPredictorRow {
		return nil, malformed("PDF stream predictor rows of %d bytes are longer than %d", rowLen, maxPredictorRow)
	}
	switch {
	case pred == 2:
		if bpc != 8 {
			return nil, malformed("TIFF predictor with %d bits per component is not supported", bpc)
		}
		return &rowReader{r: r, rowLen: rowLen, bpp: bpp, tiff: true}, nil
	case pred >= 10 && pred <= 15:
		return &rowReader{r: r, rowLen: rowLen, bpp: bpp}, nil
	}
	return nil, malformed("PDF stream predictor %d is not supported", pred)
}

// rowReader undoes a PNG (per-row filter byte) or TIFF predictor row by
// row.
type rowReader struct {
	r           io.Reader
	rowLen, bpp int
	tiff        bool
	prev, cur   []byte
	out         []byte // undelivered part of cur
	err         error
}

func (p *rowReader) Read(b []byte) (int, error) {
	for len(p.out) == 0 {
		if p.err != nil {
			return 0, p.err
		}
		if p.prev == nil {
			p.prev = make([]byte, p.rowLen)
			p.cur = make([]byte, p.rowLen+1)
		}
		in := p.cur
		if p.tiff {
			in = p.cur[1:]
		}
		n, err := io.ReadFull(p.r, in)
		if err != nil {
			if err == io.ErrUnexpectedEOF || err == io.EOF {
				err = io.EOF // a partial last row is dropped
			}
			p.err = err
			continue
		}
		row := p.cur[1:]
		if p.tiff {
			for i := p.bpp; i < len(row); i++ {
				row[i] += row[i-p.bpp]
			}
		} else {
			if err := unPNG(p.cur[0], row, p.prev, p.bpp); err != nil {
				p.err = err
				continue
			}
			copy(p.prev, row)
		}
		_ = n
		p.out = row
	}
	n := copy(b, p.out)
	p.out = p.out[n:]
	return n, nil
}

func unPNG(filter byte, row, prev []byte, bpp int) error {
	switch filter {
	case 0: // None
	case 1: // Sub
		for i := bpp; i < len(row); i++ {
			row[i] += row[i-bpp]
		}
	case 2: // Up
		for i := range row {
			row[i] += prev[i]
		}
	case 3: // Average
		for i := range row {
			var left int
			if i >= bpp {
				left = int(row[i-bpp])
			}
			row[i] += byte((left + int(prev[i])) / 2)
		}
	case 4: // Paeth
		for i := range row {
			var a, c int
			if i >= bpp {
				a, c = int(row[i-bpp]), int(prev[i-bpp])
			}
			b := int(prev[i])
			pa, pb, pc := abs(b-c), abs(a-c), abs(a+b-2*c)
			switch {
			case pa <= pb && pa <= pc:
				row[i] += byte(a)
			case pb <= pc:
				row[i] += byte(b)
			default:
				row[i] += byte(c)
			}
		}
	default:
		return malformed("bad PNG predictor row filter %d", filter)
	}
	return nil
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
