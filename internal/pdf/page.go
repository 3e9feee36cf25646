package pdf

import (
	"bytes"
	"fmt"
	"io"
)

// Reading pages for copying: a page's dictionary, its resources, its
// content, and streams as stored (decrypted, filters kept).

// page is a page loaded for copying.
type page struct {
	d    dict
	info PageInfo
	res  object // its /Resources, its own or inherited, unresolved
}

// page loads page i.
func (d *Reader) page(i int) (*page, error) {
	if i < 0 || i >= len(d.pages) {
		return nil, fmt.Errorf("pdf: page %d of a document of %d pages", i+1, len(d.pages))
	}
	e := d.pages[i]
	n := e.direct
	if n == nil {
		o, err := d.load(e.obj)
		if err != nil {
			return nil, err
		}
		var ok bool
		if n, ok = o.(dict); !ok {
			return nil, malformed("PDF page object %d is not a dictionary", e.obj.num)
		}
	}
	pg := &page{d: n, info: e.info, res: e.inh.resources}
	if r, ok := n["Resources"]; ok {
		pg.res = r
	}
	return pg, nil
}

// contentStreams returns the streams of a page's /Contents (a stream or
// an array of them); those that cannot be read are left out, as readers
// do.
func (d *Reader) contentStreams(pg *page) []*stream {
	var out []*stream
	switch c := d.resolve(pg.d["Contents"]).(type) {
	case *stream:
		out = append(out, c)
	case array:
		for _, x := range c {
			if s, ok := d.resolve(x).(*stream); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

// contents returns a page's content decoded: its streams joined, each
// followed by an end of line (a content array is one content split).
func (d *Reader) contents(pg *page) ([]byte, error) {
	var buf []byte
	for _, s := range d.contentStreams(pg) {
		data, err := d.streamData(s, maxStreamBytes)
		if err != nil {
			return nil, prefixed(fmt.Sprintf("PDF content stream %d: ", s.num), err)
		}
		if len(buf)+len(data) > maxStreamBytes {
			return nil, limitErr("a PDF page's content decodes to more than %d bytes", maxStreamBytes)
		}
		buf = append(append(buf, data...), '\n')
	}
	return buf, nil
}

// rawStream returns a stream's data as stored, decrypted: a reader of n
// bytes. Unencrypted data is read from the file as it is copied, so a
// large image costs no memory; encrypted data is decrypted whole, at most
// maxStreamBytes of it.
func (d *Reader) rawStream(s *stream) (io.Reader, int64, error) {
	n := d.streamLength(s)
	if !d.encryptedStream(s) {
		return io.NewSectionReader(d.r, s.off, n), n, nil
	}
	if n > maxStreamBytes {
		return nil, 0, limitErr("PDF stream %d is longer than %d bytes", s.num, maxStreamBytes)
	}
	enc := make([]byte, n)
	if err := d.readAt(enc, s.off); err != nil {
		return nil, 0, err
	}
	plain, err := d.crypt.decrypt(s.num, s.gen, enc)
	if err != nil {
		return nil, 0, err
	}
	return bytes.NewReader(plain), int64(len(plain)), nil
}

// filters returns a stream's /Filter and /DecodeParms to write with its
// raw data, without /Crypt filters (the copy is not encrypted; rawStream
// decrypted what the document's method encrypted, and a /Crypt filter
// the reader accepts is Identity).
func (d *Reader) filters(s *stream) (filter, parms object) {
	filter, parms = s.dict["Filter"], s.dict["DecodeParms"]
	names, ps := filterList(d.resolve(filter), d.resolve(parms), d.resolve)
	crypt := false
	for _, n := range names {
		crypt = crypt || n == "Crypt"
	}
	if !crypt {
		return filter, parms
	}
	var fa, pa array
	hasParms := false
	for i, n := range names {
		if n == "Crypt" {
			continue
		}
		fa = append(fa, n)
		if ps[i] != nil {
			hasParms = true
			pa = append(pa, ps[i])
		} else {
			pa = append(pa, nil)
		}
	}
	if len(fa) == 0 {
		return nil, nil
	}
	if !hasParms {
		pa = nil
	}
	return fa, pa
}

// beginPage gives the next page its own time and decoding budget (and
// forgets a read error or deadline the file cursor stopped at).
func (d *Reader) beginPage() {
	d.dl.Reset(d.lim.Timeout)
	d.decoded = 0
	d.p.c.err = nil
}
