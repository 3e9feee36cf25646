package pdf

import (
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
)

// Form is a page of another PDF placed in a Writer as a form XObject,
// upright: drawn at the origin (Content.Form) it covers W by H points,
// its crop box with its /Rotate and /UserUnit applied.
type Form struct {
	Ref  Ref
	W, H float64
}

// Importer copies pages of one Reader into a Writer. Each source object
// is copied once, however many pages use it (fonts, images, a letterhead
// shared by every page), and each page once, however often it is asked
// for; only the numbers of the objects copied stay in memory.
type Importer struct {
	w      *Writer
	r      *Reader
	memo   map[int64]Ref // source object number → its copy
	forms  map[int]Form  // pages placed
	queue  []ref         // objects numbered in the copy, not written yet
	copied int           // objects copied, bounded by the reader's MaxObjects
	buf    []byte
}

// Importer returns an importer of r's pages into w.
func (w *Writer) Importer(r *Reader) *Importer {
	return &Importer{w: w, r: r, memo: map[int64]Ref{}, forms: map[int]Form{}}
}

// Page places page i (0-based) of the source in the writer, once, and
// returns its form. The page's content is copied as stored when it is one
// stream (any filter), or decoded and joined when it is several; its
// resources and transparency group are copied with everything they
// refer to; an object that cannot be read is copied as null, as readers
// treat a missing object. Pages reached from resources (a link's /P) are
// not copied. An error leaves the writer as it was: the page could not
// be read. A panic (a bug) is returned as an ErrMalformed error.
func (im *Importer) Page(i int) (f Form, err error) {
	defer func() {
		if p := recover(); p != nil {
			f, err = Form{}, malformed("page %d could not be copied (internal error: %v)", i+1, p)
		}
	}()
	return im.page(i)
}

// page is Page without the recover, for tests and fuzzing.
func (im *Importer) page(i int) (Form, error) {
	if f, ok := im.forms[i]; ok {
		return f, nil
	}
	if err := im.w.Err(); err != nil {
		return Form{}, err
	}
	r := im.r
	r.beginPage()
	pg, err := r.page(i)
	if err != nil {
		return Form{}, prefixed(fmt.Sprintf("page %d: ", i+1), err)
	}
	// Everything that can fail is read before anything is written.
	streams := r.contentStreams(pg)
	var (
		decoded []byte
		raw     io.Reader
		rawLen  int64
	)
	if len(streams) == 1 {
		raw, rawLen, err = r.rawStream(streams[0])
	} else {
		decoded, err = r.contents(pg)
	}
	if err != nil {
		return Form{}, prefixed(fmt.Sprintf("page %d: ", i+1), err)
	}
	info := pg.info
	box, u := info.Box, info.UserUnit
	w, h := box[2]-box[0], box[3]-box[1]
	f := Form{W: w * u, H: h * u}
	var m [6]float64 // maps the box to [0 W] x [0 H], turned as shown
	switch info.Rotate {
	case 90:
		m = [6]float64{0, -1, 1, 0, -box[1], w + box[0]}
		f.W, f.H = f.H, f.W
	case 180:
		m = [6]float64{-1, 0, 0, -1, w + box[0], h + box[1]}
	case 270:
		m = [6]float64{0, 1, -1, 0, h + box[1], -box[0]}
		f.W, f.H = f.H, f.W
	default:
		m = [6]float64{1, 0, 0, 1, -box[0], -box[1]}
	}
	for k := range m {
		m[k] *= u
	}
	b := append(im.buf[:0], " /Type /XObject /Subtype /Form /FormType 1 /BBox "...)
	b = appendReals(b, box[:])
	b = append(b, " /Matrix "...)
	b = appendReals(b, m[:])
	b = append(b, " /Resources "...)
	if pg.res != nil {
		b = im.appendObject(b, pg.res, 0)
	} else {
		b = append(b, "<< >>"...)
	}
	if g, ok := pg.d["Group"]; ok {
		b = append(b, " /Group "...)
		b = im.appendObject(b, g, 0)
	}
	f.Ref = im.w.Alloc()
	if raw != nil {
		b = im.appendFilters(b, streams[0])
		im.w.streamFrom(f.Ref, b, raw, rawLen)
	} else {
		im.w.ContentStream(f.Ref, b, decoded)
	}
	im.buf = b
	if err := im.flush(); err != nil {
		return Form{}, prefixed(fmt.Sprintf("page %d: ", i+1), err)
	}
	if err := im.w.Err(); err != nil {
		return Form{}, err
	}
	im.forms[i] = f
	return f, nil
}

// appendFilters appends a raw stream's /Filter and /DecodeParms.
func (im *Importer) appendFilters(b []byte, s *stream) []byte {
	filter, parms := im.r.filters(s)
	if filter != nil {
		b = append(b, " /Filter "...)
		b = im.appendObject(b, filter, 0)
	}
	if parms != nil {
		b = append(b, " /DecodeParms "...)
		b = im.appendObject(b, parms, 0)
	}
	return b
}

// maxCopyDepth bounds the nesting of a copied object (the parser allows
// 100).
const maxCopyDepth = 128

// appendObject writes o with its references renumbered, queueing the
// objects they name. What cannot be written (nested too deep, a stream
// inside an object) is null.
func (im *Importer) appendObject(b []byte, o object, depth int) []byte {
	if depth > maxCopyDepth {
		return append(b, "null"...)
	}
	switch v := o.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, v)
	case int64:
		return strconv.AppendInt(b, v, 10)
	case float64:
		return appendReal(b, v)
	case pdfName:
		return appendName(b, string(v))
	case pdfString:
		b = append(b, '<')
		b = hex.AppendEncode(b, []byte(v))
		return append(b, '>')
	case array:
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ' ')
			}
			b = im.appendObject(b, e, depth+1)
		}
		return append(b, ']')
	case dict:
		if t, _ := v["Type"].(pdfName); t == "Page" || t == "Pages" {
			// a page reached through a resource (a link's /P): not copied
			return append(b, "null"...)
		}
		b = append(b, "<<"...)
		for _, k := range sortedKeys(v) {
			b = append(b, ' ')
			b = appendName(b, string(k))
			b = append(b, ' ')
			b = im.appendObject(b, v[k], depth+1)
		}
		return append(b, " >>"...)
	case ref:
		dst, ok := im.memo[v.num]
		if !ok {
			if im.copied >= im.r.lim.MaxObjects {
				return append(b, "null"...)
			}
			im.copied++
			dst = im.w.Alloc()
			im.memo[v.num] = dst
			im.queue = append(im.queue, v)
		}
		return appendRef(b, dst)
	}
	return append(b, "null"...)
}

// flush writes the queued objects, and those they name. Past the
// deadline, the rest are written as null (every number allocated is
// written) and forgotten, so that a later page copies them afresh, and
// the deadline's error is returned.
func (im *Importer) flush() error {
	var body []byte
	var late error
	for len(im.queue) > 0 && im.w.Err() == nil {
		src := im.queue[len(im.queue)-1]
		im.queue = im.queue[:len(im.queue)-1]
		dst := im.memo[src.num]
		if late == nil {
			late = im.r.dl.Check()
		}
		if late != nil {
			delete(im.memo, src.num)
			im.w.Object(dst, []byte("null"))
			continue
		}
		o, err := im.r.load(src)
		if err != nil {
			im.w.Object(dst, []byte("null"))
			continue
		}
		s, ok := o.(*stream)
		if !ok {
			body = im.appendObject(body[:0], o, 0)
			im.w.Object(dst, body)
			continue
		}
		data, n, err := im.r.rawStream(s)
		if err != nil {
			im.w.Object(dst, []byte("null"))
			continue
		}
		body = body[:0]
		for _, k := range sortedKeys(s.dict) {
			switch k {
			case "Length", "Filter", "DecodeParms":
				continue
			}
			body = append(body, ' ')
			body = appendName(body, string(k))
			body = append(body, ' ')
			body = im.appendObject(body, s.dict[k], 1)
		}
		body = im.appendFilters(body, s)
		im.w.streamFrom(dst, body, data, n)
	}
	return late
}

func sortedKeys(d dict) []pdfName {
	keys := make([]pdfName, 0, len(d))
	for k := range d {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// appendReal writes a real exactly (the shortest form that reads back as
// the same float64, no exponent); one that is not finite is 0.
func appendReal(b []byte, v float64) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return append(b, '0')
	}
	if v == float64(int64(v)) && v < 1e15 && v > -1e15 {
		return strconv.AppendInt(b, int64(v), 10)
	}
	return strconv.AppendFloat(b, v, 'f', -1, 64)
}

func appendReals(b []byte, vs []float64) []byte {
	b = append(b, '[')
	for i, v := range vs {
		if i > 0 {
			b = append(b, ' ')
		}
		b = appendReal(b, v)
	}
	return append(b, ']')
}

// appendName writes a name, escaping what is not a regular character.
func appendName(b []byte, n string) []byte {
	b = append(b, '/')
	for i := 0; i < len(n); i++ {
		c := n[i]
		if c < '!' || c > '~' || c == '#' || isDelim(c) {
			b = append(b, '#', "0123456789ABCDEF"[c>>4], "0123456789ABCDEF"[c&15])
			continue
		}
		b = append(b, c)
	}
	return b
}
