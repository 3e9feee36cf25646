package pdf

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/lodge-mail/lodge/internal/deadline"
)

// The reader: cross-reference tables and streams (with /Prev chains and
// hybrid /XRefStm), object streams, a rebuild by scanning for "N G obj"
// when the cross-reference data is broken, and a walk of the page tree
// with cycle detection and a depth limit.

const (
	maxXrefSections  = 1024     // /Prev chain length
	maxStreamBytes   = 64 << 20 // one decoded stream held in memory
	maxDecodedTotal  = 1 << 30  // all decoded streams of Open, or of one imported page
	maxObjStmCache   = 64 << 20 // decoded object streams kept
	maxResolveDepth  = 8        // a /Length in an object stream whose /Length ...
	startxrefWindow  = 64 << 10 // where to look for startxref
	scanChunk        = 1 << 20
	scanAhead        = 1024 // bytes after "obj" looked at for /Type
	scanBack         = 64   // bytes before "obj" for "N G"
	maxTrailersTried = 64
)

// HeaderWindow is how far into a file its %PDF- header may start: like
// Acrobat, the reader accepts up to 1024 bytes of junk before it.
const HeaderWindow = 1024

// errFinal marks errors a rebuild cannot cure (cycles); limits and
// encryption are final too.
var errFinal = errors.New("final")

func isFinal(err error) bool {
	return errors.Is(err, errFinal) || errors.Is(err, ErrLimit) || errors.Is(err, ErrEncrypted)
}

type xrefEntry struct {
	typ uint8 // 0 free, 1 at off, 2 in object stream off at index idx
	off int64
	idx int64
}

type objStm struct {
	data    []byte
	offsets map[int64]int64 // object number to offset in data
}

// Reader reads a PDF whose bytes may be hostile: Open finds its objects
// and walks its page tree once; an Importer then copies pages out of it.
// Nothing it does recurses without a depth limit, allocates by a size the
// file declares, or loops without a bound of Limits or of the file's
// size. A Reader belongs to one goroutine.
type Reader struct {
	r         io.ReaderAt
	size      int64
	lim       Limits
	dl        *deadline.Deadline
	p         *parser
	hdrOff    int64 // where %PDF- is: offsets may be relative to it
	xref      map[int64]xrefEntry
	trailer   dict
	encrypted bool
	crypt     *pdfCrypt // the document opened with the empty user password
	stms      map[int64]*objStm
	stmBytes  int64
	decoded   int64
	depth     int
	rebuilt   bool
	parsed    int // xref entries read, all sections
	pages     []pageEntry
	declared  int64 // the root's /Count, for the message of a tree without pages

	encryptScanned, encryptFound bool
	encryptedStms                []int64 // object streams a rebuild could not read yet

	text *textCache // fonts, forms and buffers of PageText
}

// Open reads a PDF's cross-reference data (rebuilding it by scanning the
// file when it is missing or wrong), opens an encrypted one with the empty
// user password, and walks its page tree. A document without pages is an
// error. Errors match ErrMalformed, ErrLimit or ErrEncrypted.
func Open(r io.ReaderAt, size int64, lim Limits) (*Reader, error) {
	lim = lim.WithDefaults()
	if size < 0 {
		return nil, malformed("negative size")
	}
	d := &Reader{r: r, size: size, lim: lim, hdrOff: -1}
	d.dl = deadline.New(lim.Timeout, limitErr("reading the PDF took longer than %v", lim.Timeout))
	d.p = newParser(newCursor(r, size, d.dl), d.dl, lim.MaxStringBytes)
	head := make([]byte, min(size, HeaderWindow+5))
	if n, _ := r.ReadAt(head, 0); n > 0 {
		d.hdrOff = int64(bytes.Index(head[:n], []byte("%PDF-")))
	}
	err := d.fromXref()
	if err == nil {
		return d, nil
	}
	if isFinal(err) {
		return nil, err
	}
	if err := d.rebuild(); err != nil {
		return nil, err
	}
	if err := d.openEncryption(); err != nil {
		if !errors.Is(err, ErrEncrypted) {
			return nil, encryptedErr("encrypted, and its /Encrypt dictionary cannot be read (%v): it cannot be opened", err)
		}
		return nil, err
	}
	if d.crypt != nil {
		// the object streams the rebuild left, now that they can be read
		if err := d.indexObjStms(d.encryptedStms, nil); err != nil {
			return nil, err
		}
	}
	if err := d.walkPages(); err != nil {
		return nil, err
	}
	return d, nil
}

// Encrypted reports whether the document is encrypted (it opened with
// the empty user password: an owner password restricts it at most).
// Importer decrypts what it copies.
func (d *Reader) Encrypted() bool { return d.encrypted }

// NumPages returns the number of pages.
func (d *Reader) NumPages() int { return len(d.pages) }

func (d *Reader) reset() {
	d.xref = map[int64]xrefEntry{}
	d.trailer = dict{}
	d.stms = map[int64]*objStm{}
	d.stmBytes = 0
	d.encrypted = false
	d.crypt = nil
	d.encryptedStms = nil
	d.pages = nil
}

func (d *Reader) fromXref() error {
	d.reset()
	start, err := d.startxref()
	if err != nil {
		return err
	}
	if err := d.loadXref(start); err != nil {
		return err
	}
	if err := d.openEncryption(); err != nil {
		return err
	}
	return d.walkPages()
}

// startxref finds the offset after the last "startxref".
func (d *Reader) startxref() (int64, error) {
	n := min(d.size, startxrefWindow)
	tail := make([]byte, n)
	if err := d.readAt(tail, d.size-n); err != nil {
		return 0, err
	}
	i := bytes.LastIndex(tail, []byte("startxref"))
	if i < 0 {
		return 0, malformed("PDF has no startxref")
	}
	p := newParser(bytesCursor(tail[i+len("startxref"):], d.dl), d.dl, 0)
	t, err := p.next()
	if err != nil || t.kind != tInt || t.i < 0 || t.i >= d.size {
		return 0, malformed("PDF startxref is not an offset in the file")
	}
	return t.i, nil
}

// loadXref reads the cross-reference sections from start, following /Prev
// and /XRefStm, each offset once. Newer sections take precedence.
func (d *Reader) loadXref(start int64) error {
	seen := map[int64]bool{}
	queue := []int64{start}
	first := true
	for len(queue) > 0 {
		off := queue[0]
		queue = queue[1:]
		if seen[off] {
			continue // a /Prev cycle: every section is read once
		}
		seen[off] = true
		if len(seen) > maxXrefSections {
			return limitErr("PDF has more than %d cross-reference sections", maxXrefSections)
		}
		tr, err := d.xrefSection(off)
		if err != nil && d.hdrOff > 0 && !isFinal(err) {
			tr, err = d.xrefSection(off + d.hdrOff)
		}
		if err != nil {
			return err
		}
		for _, k := range []pdfName{"Root", "Encrypt", "Size", "ID"} {
			if _, ok := d.trailer[k]; !ok && tr[k] != nil {
				d.trailer[k] = tr[k]
			}
		}
		if first && tr["Root"] == nil {
			return malformed("PDF trailer has no /Root")
		}
		first = false
		if x, ok := tr["XRefStm"].(int64); ok && x >= 0 && x < d.size {
			queue = append(queue, x)
		}
		if x, ok := tr["Prev"].(int64); ok && x >= 0 && x < d.size {
			queue = append(queue, x)
		}
	}
	d.encrypted = d.trailer["Encrypt"] != nil
	return nil
}

// xrefSection reads an xref table or stream at off and returns its trailer
// dictionary.
func (d *Reader) xrefSection(off int64) (dict, error) {
	d.p.seek(off)
	t, err := d.p.next()
	if err != nil {
		return nil, err
	}
	if t.kind == tKeyword && t.s == "xref" {
		return d.xrefTable()
	}
	_, _, o, err := d.p.indirect(off)
	if err != nil {
		return nil, prefixed("PDF cross-reference: ", err)
	}
	s, ok := o.(*stream)
	if !ok || s.dict["Type"] != pdfName("XRef") {
		return nil, malformed("PDF has no cross-reference section at offset %d", off)
	}
	return s.dict, d.xrefStream(s)
}

func (d *Reader) addEntries(n int64) error {
	if n < 0 || n > int64(d.lim.MaxObjects) {
		// Not final: a damaged count is repaired by the rebuild, which
		// counts the objects really there.
		return malformed("PDF cross-reference section declares %d entries, more than the limit of %d objects", n, d.lim.MaxObjects)
	}
	d.parsed += int(n)
	if d.parsed > 4*d.lim.MaxObjects {
		return limitErr("PDF cross-reference sections hold more than %d entries", 4*d.lim.MaxObjects)
	}
	return nil
}

func (d *Reader) setEntry(num int64, e xrefEntry) error {
	if num <= 0 {
		return nil
	}
	if _, ok := d.xref[num]; ok {
		return nil // a newer section has it
	}
	if len(d.xref) >= d.lim.MaxObjects {
		return limitErr("PDF has more than %d objects", d.lim.MaxObjects)
	}
	d.xref[num] = e
	return nil
}

func (d *Reader) xrefTable() (dict, error) {
	p := d.p
	for {
		t, err := p.next()
		if err != nil {
			return nil, err
		}
		if t.kind == tKeyword && t.s == "trailer" {
			p.budget = maxObjectToken
			o, err := p.object(0)
			if err != nil {
				return nil, err
			}
			tr, ok := o.(dict)
			if !ok {
				return nil, malformed("PDF trailer is not a dictionary")
			}
			return tr, nil
		}
		t2, err := p.next()
		if err != nil {
			return nil, err
		}
		if t.kind != tInt || t2.kind != tInt || t.i < 0 {
			return nil, malformed("bad PDF cross-reference table at offset %d", t.pos)
		}
		if err := d.addEntries(t2.i); err != nil {
			return nil, err
		}
		for i := int64(0); i < t2.i; i++ {
			p.budget = maxObjectToken
			off, err1 := p.next()
			gen, err2 := p.next()
			kind, err3 := p.next()
			if err := errors.Join(err1, err2, err3); err != nil {
				return nil, err
			}
			if off.kind != tInt || gen.kind != tInt || kind.kind != tKeyword || kind.s != "n" && kind.s != "f" {
				return nil, malformed("bad PDF cross-reference entry at offset %d", off.pos)
			}
			e := xrefEntry{typ: 1, off: off.i}
			if kind.s == "f" || off.i <= 0 || off.i >= d.size {
				e = xrefEntry{}
			}
			if err := d.setEntry(t.i+i, e); err != nil {
				return nil, err
			}
		}
	}
}

func (d *Reader) xrefStream(s *stream) error {
	w, _ := s.dict["W"].(array)
	if len(w) != 3 {
		return malformed("PDF cross-reference stream without /W")
	}
	var ws [3]int
	for i, x := range w {
		v, ok := x.(int64)
		if !ok || v < 0 || v > 8 {
			return malformed("PDF cross-reference stream /W out of range")
		}
		ws[i] = int(v)
	}
	rowLen := ws[0] + ws[1] + ws[2]
	if rowLen == 0 {
		return malformed("PDF cross-reference stream /W is empty")
	}
	size, _ := s.dict["Size"].(int64)
	index := []int64{0, size}
	if ix, ok := s.dict["Index"].(array); ok {
		index = index[:0]
		for _, x := range ix {
			v, ok := x.(int64)
			if !ok || v < 0 {
				return malformed("PDF cross-reference stream /Index is not numbers")
			}
			index = append(index, v)
		}
		if len(index)%2 != 0 {
			return malformed("PDF cross-reference stream /Index has an odd length")
		}
	}
	var total int64
	for i := 1; i < len(index); i += 2 {
		total += index[i]
		if err := d.addEntries(total); err != nil {
			return err
		}
	}
	data, err := d.streamData(s, maxStreamBytes)
	if err != nil {
		return prefixed("PDF cross-reference stream: ", err)
	}
	field := func(b []byte) int64 {
		var v int64
		for _, c := range b {
			v = v<<8 | int64(c)
		}
		return v
	}
	for i := 0; i+1 < len(index); i += 2 {
		for j := int64(0); j < index[i+1]; j++ {
			if len(data) < rowLen {
				return nil // short: use the rows there are
			}
			row := data[:rowLen]
			data = data[rowLen:]
			typ := int64(1)
			if ws[0] > 0 {
				typ = field(row[:ws[0]])
			}
			a, b := field(row[ws[0]:ws[0]+ws[1]]), field(row[ws[0]+ws[1]:])
			var e xrefEntry
			switch typ {
			case 0:
			case 1:
				if a > 0 && a < d.size {
					e = xrefEntry{typ: 1, off: a}
				}
			case 2:
				e = xrefEntry{typ: 2, off: a, idx: b}
			default:
				continue
			}
			if err := d.setEntry(index[i]+j, e); err != nil {
				return err
			}
		}
	}
	return nil
}

// resolve follows references; a reference that cannot be followed is
// null, as the PDF specification says of missing objects.
func (d *Reader) resolve(o object) object {
	for range maxResolveDepth {
		r, ok := o.(ref)
		if !ok {
			return o
		}
		var err error
		if o, err = d.load(r); err != nil {
			return nil
		}
	}
	return nil
}

// resolveErr is resolve that reports why a reference cannot be followed.
func (d *Reader) resolveErr(o object) (object, error) {
	for range maxResolveDepth {
		r, ok := o.(ref)
		if !ok {
			return o, nil
		}
		var err error
		if o, err = d.load(r); err != nil {
			return nil, err
		}
	}
	return nil, malformed("PDF references nest too deep")
}

var errMissing = errors.New("missing object")

// load parses an indirect object. Streams come back as *stream.
func (d *Reader) load(r ref) (object, error) {
	d.depth++
	defer func() { d.depth-- }()
	if d.depth > maxResolveDepth {
		return nil, malformed("PDF object %d refers through too many levels", r.num)
	}
	e, ok := d.xref[r.num]
	switch {
	case !ok || e.typ == 0:
		return nil, newErr([]error{ErrMalformed, errMissing}, "PDF object %d is missing", r.num)
	case e.typ == 2:
		return d.fromObjStm(e.off, e.idx, r.num)
	}
	num, gen, o, err := d.p.indirect(e.off)
	if (err != nil || num != r.num) && d.hdrOff > 0 && !isFinal(err) {
		num, gen, o, err = d.p.indirect(e.off + d.hdrOff)
	}
	if err != nil {
		return nil, err
	}
	if num != r.num {
		return nil, malformed("PDF cross-reference entry for object %d points at object %d", r.num, num)
	}
	if d.crypt != nil {
		o = d.crypt.decryptStrings(o, num, gen)
	}
	return o, nil
}

// streamData decodes a stream, trusting /Length only when "endstream"
// follows it and otherwise searching for "endstream".
func (d *Reader) streamData(s *stream, max int64) ([]byte, error) {
	return d.streamDataInto(nil, s, max, nil)
}

// streamDataInto is streamData appending to dst, reusing a Flate
// decompressor when reuse is not nil.
func (d *Reader) streamDataInto(dst []byte, s *stream, max int64, reuse *flateReuse) ([]byte, error) {
	n := d.streamLength(s)
	var raw io.Reader = io.NewSectionReader(d.r, s.off, n)
	if d.encryptedStream(s) {
		if n > max {
			return nil, limitErr("PDF stream %d is longer than %d bytes", s.num, max)
		}
		enc := make([]byte, n)
		if err := d.readAt(enc, s.off); err != nil {
			return nil, err
		}
		plain, err := d.crypt.decrypt(s.num, s.gen, enc)
		if err != nil {
			return nil, err
		}
		raw = bytes.NewReader(plain)
	}
	data, err := decodeStreamInto(dst, raw, s.dict, d.resolve, max, reuse)
	if err != nil {
		return nil, err
	}
	d.decoded += int64(len(data) - len(dst))
	if d.decoded > maxDecodedTotal {
		return nil, limitErr("PDF streams decode to more than %d bytes in all", maxDecodedTotal)
	}
	return data, nil
}

// encryptedStream reports whether a stream's data is encrypted with the
// document's stream method: cross-reference streams never are, /Metadata
// streams not when /EncryptMetadata is false, and a stream with its own
// /Crypt filter uses that filter instead (decodeStream allows only
// Identity).
func (d *Reader) encryptedStream(s *stream) bool {
	if d.crypt == nil {
		return false
	}
	switch s.dict["Type"] {
	case pdfName("XRef"):
		return false
	case pdfName("Metadata"):
		if !d.crypt.metadata {
			return false
		}
	}
	names, _ := filterList(d.resolve(s.dict["Filter"]), nil, d.resolve)
	return !slices.Contains(names, "Crypt")
}

func (d *Reader) streamLength(s *stream) int64 {
	var l int64 = -1
	switch v := s.dict["Length"].(type) {
	case int64:
		l = v
	case ref:
		if x, ok := d.resolve(v).(int64); ok {
			l = x
		}
	}
	if l >= 0 && l <= d.size-s.off && d.endstreamAt(s.off+l) {
		return l
	}
	return d.findEndstream(s.off)
}

func (d *Reader) endstreamAt(pos int64) bool {
	var b [32]byte
	n, _ := d.r.ReadAt(b[:], pos)
	t := bytes.TrimLeft(b[:n], " \t\r\n\f\x00")
	return bytes.HasPrefix(t, []byte("endstream")) || len(t) == 0 && n < len(b)
}

// findEndstream returns the length of a stream's data: up to "endstream"
// (less the end of line before it), or to the end of the file.
func (d *Reader) findEndstream(off int64) int64 {
	kw := []byte("endstream")
	buf := make([]byte, 64<<10)
	for pos := off; pos < d.size; pos += int64(len(buf) - len(kw)) {
		if d.dl.Now() != nil {
			break
		}
		n, _ := d.r.ReadAt(buf, pos)
		if n <= 0 {
			break
		}
		if i := bytes.Index(buf[:n], kw); i >= 0 {
			end := pos + int64(i)
			// drop the end of line before "endstream" (within this chunk)
			if i > 0 && end > off && (buf[i-1] == '\n' || buf[i-1] == '\r') {
				end--
				if i > 1 && end > off && buf[i-2] == '\r' && buf[i-1] == '\n' {
					end--
				}
			}
			return end - off
		}
		if n < len(buf) {
			break
		}
	}
	return d.size - off
}

// fromObjStm parses object num, the idx'th in object stream stmNum.
func (d *Reader) fromObjStm(stmNum, idx, num int64) (object, error) {
	if d.encrypted && d.crypt == nil {
		return nil, newErr([]error{ErrEncrypted}, "the PDF is encrypted and object %d is in an encrypted object stream: its pages cannot be counted without the password", num)
	}
	os, err := d.objStm(stmNum)
	if err != nil {
		return nil, err
	}
	off, ok := os.offsets[num]
	if !ok {
		return nil, newErr([]error{ErrMalformed, errMissing}, "PDF object %d is not in object stream %d", num, stmNum)
	}
	p := newParser(bytesCursor(os.data, d.dl), d.dl, d.lim.MaxStringBytes)
	p.seek(off)
	return p.object(0)
}

func (d *Reader) objStm(num int64) (*objStm, error) {
	if os := d.stms[num]; os != nil {
		return os, nil
	}
	e, ok := d.xref[num]
	if !ok || e.typ != 1 {
		return nil, malformed("PDF object stream %d is missing", num)
	}
	n, _, o, err := d.p.indirect(e.off)
	if err != nil {
		return nil, err
	}
	s, ok := o.(*stream)
	if !ok || n != num || s.dict["Type"] != pdfName("ObjStm") {
		return nil, malformed("PDF object %d is not an object stream", num)
	}
	return d.readObjStm(s)
}

func (d *Reader) readObjStm(s *stream) (*objStm, error) {
	count, _ := d.resolve(s.dict["N"]).(int64)
	first, _ := d.resolve(s.dict["First"]).(int64)
	if count < 0 || first < 0 || count > int64(d.lim.MaxObjects) {
		return nil, malformed("PDF object stream %d has a bad /N or /First", s.num)
	}
	data, err := d.streamData(s, maxStreamBytes)
	if err != nil {
		return nil, prefixed(fmt.Sprintf("PDF object stream %d: ", s.num), err)
	}
	if first > int64(len(data)) {
		return nil, malformed("PDF object stream %d: /First beyond its data", s.num)
	}
	os := &objStm{data: data, offsets: map[int64]int64{}}
	p := newParser(bytesCursor(data[:first], d.dl), d.dl, 0)
	p.seek(0)
	for range count {
		t1, err1 := p.next()
		t2, err2 := p.next()
		if err := errors.Join(err1, err2); err != nil {
			return nil, err
		}
		if t1.kind != tInt || t2.kind != tInt || t2.i < 0 || first+t2.i > int64(len(data)) {
			break
		}
		if _, dup := os.offsets[t1.i]; !dup {
			os.offsets[t1.i] = first + t2.i
		}
	}
	if d.stmBytes+int64(len(data)) > maxObjStmCache {
		clear(d.stms)
		d.stmBytes = 0
	}
	d.stms[s.num] = os
	d.stmBytes += int64(len(data))
	return os, nil
}

// rebuild recreates the cross-reference table by scanning the whole file
// for "N G obj", as PDF readers do with damaged files. Later definitions
// of an object win (incremental updates append). Object streams found are
// indexed; the trailer comes from the last "trailer" or cross-reference
// stream with a /Root, else from the last /Catalog.
func (d *Reader) rebuild() error {
	d.reset()
	d.rebuilt = true
	var trailers, stms, xrefs, catalogs []int64
	kw := []byte("obj")
	buf := make([]byte, scanChunk)
	for base := int64(0); base < d.size; {
		if err := d.dl.Now(); err != nil {
			return err
		}
		n, _ := d.r.ReadAt(buf, base)
		if n <= 0 {
			break
		}
		chunk := buf[:n]
		last := base+int64(n) >= d.size || n < len(buf)
		lo, hi := 0, n
		if base > 0 {
			lo = scanBack
		}
		if !last {
			hi = n - scanAhead
		}
		for i := lo; i < hi; {
			j := bytes.Index(chunk[i:hi], kw)
			if j < 0 {
				break
			}
			at := i + j
			i = at + 1
			if at+3 < n && isRegular(chunk[at+3]) {
				continue
			}
			num, start, ok := objHeader(chunk, at)
			if !ok {
				continue
			}
			if _, seen := d.xref[num]; !seen && len(d.xref) >= d.lim.MaxObjects {
				return limitErr("PDF has more than %d objects", d.lim.MaxObjects)
			}
			off := base + int64(start)
			d.xref[num] = xrefEntry{typ: 1, off: off}
			ahead := chunk[at+3 : min(n, at+3+scanAhead)]
			if k := bytes.Index(ahead, []byte("endobj")); k >= 0 {
				ahead = ahead[:k]
			}
			switch {
			case bytes.Contains(ahead, []byte("/ObjStm")):
				stms = append(stms, num)
			case bytes.Contains(ahead, []byte("/XRef")):
				xrefs = append(xrefs, num)
			case bytes.Contains(ahead, []byte("/Catalog")):
				catalogs = append(catalogs, num)
			}
		}
		for i := lo; i < hi; {
			j := bytes.Index(chunk[i:hi], []byte("trailer"))
			if j < 0 {
				break
			}
			trailers = append(trailers, base+int64(i+j))
			i += j + 1
		}
		if last {
			break
		}
		base += int64(hi - scanBack)
	}
	if len(d.xref) == 0 {
		return malformed("not a PDF: no objects found")
	}
	// Index object streams; objects defined directly win. Encrypted
	// ones wait until the trailer tells how to decrypt them.
	if d.hasEncrypt() {
		d.encryptedStms = stms
	} else if err := d.indexObjStms(stms, &catalogs); err != nil {
		return err
	}
	// The trailer: the last that names a catalog (or, encrypted, that
	// names a catalog maybe in an object stream not yet read).
	for i := len(trailers) - 1; i >= 0 && i >= len(trailers)-maxTrailersTried; i-- {
		d.p.seek(trailers[i] + int64(len("trailer")))
		o, err := d.p.object(0)
		if tr, ok := o.(dict); err == nil && ok && d.isCatalog(tr["Root"]) {
			d.trailer = tr
			break
		}
	}
	if d.trailer["Root"] == nil && d.encryptedStms != nil {
		for i := len(trailers) - 1; i >= 0 && i >= len(trailers)-maxTrailersTried; i-- {
			d.p.seek(trailers[i] + int64(len("trailer")))
			o, err := d.p.object(0)
			if tr, ok := o.(dict); err == nil && ok && tr["Root"] != nil && tr["Encrypt"] != nil {
				d.trailer = tr
				break
			}
		}
	}
	if d.trailer["Root"] == nil {
		for i := len(xrefs) - 1; i >= 0; i-- {
			_, _, o, err := d.p.indirect(d.xref[xrefs[i]].off)
			if s, ok := o.(*stream); err == nil && ok && (d.isCatalog(s.dict["Root"]) ||
				d.encryptedStms != nil && s.dict["Root"] != nil && s.dict["Encrypt"] != nil) {
				d.trailer = s.dict
				break
			}
		}
	}
	if d.trailer["Root"] == nil {
		for i := len(catalogs) - 1; i >= 0; i-- {
			r := ref{catalogs[i], 0}
			if d.isCatalog(r) {
				d.trailer = dict{"Root": r}
				break
			}
		}
	}
	if d.trailer["Root"] == nil {
		return malformed("PDF has no document catalog")
	}
	d.encrypted = d.trailer["Encrypt"] != nil || d.hasEncrypt()
	return nil
}

// indexObjStms adds the objects of the object streams stms to the
// cross-reference table, those defined directly winning, and the ones
// that may be catalogs to *catalogs.
func (d *Reader) indexObjStms(stms []int64, catalogs *[]int64) error {
	for _, num := range stms {
		e := d.xref[num]
		if e.typ != 1 {
			continue
		}
		n, _, o, err := d.p.indirect(e.off)
		s, ok := o.(*stream)
		if err != nil || !ok || n != num || s.dict["Type"] != pdfName("ObjStm") {
			continue
		}
		os, err := d.readObjStm(s)
		if err != nil {
			if isFinal(err) {
				return err
			}
			continue
		}
		members := slices.Sorted(mapKeys(os.offsets))
		for _, m := range members {
			if _, ok := d.xref[m]; ok {
				continue
			}
			if len(d.xref) >= d.lim.MaxObjects {
				return limitErr("PDF has more than %d objects", d.lim.MaxObjects)
			}
			d.xref[m] = xrefEntry{typ: 2, off: num}
			if catalogs != nil && bytes.Contains(os.data, []byte("/Catalog")) {
				*catalogs = append(*catalogs, m)
			}
		}
	}
	return nil
}

// hasEncrypt tells whether any trailer in the file names an /Encrypt
// dictionary (asked during a rebuild, before the trailer is known).
func (d *Reader) hasEncrypt() bool {
	if d.trailer["Encrypt"] != nil {
		return true
	}
	if d.encryptScanned {
		return d.encryptFound
	}
	d.encryptScanned = true
	kw := []byte("/Encrypt")
	buf := make([]byte, scanChunk)
	for base := int64(0); base < d.size; base += int64(len(buf) - len(kw)) {
		n, _ := d.r.ReadAt(buf, base)
		if n <= 0 || d.dl.Now() != nil {
			break
		}
		if bytes.Contains(buf[:n], kw) {
			d.encryptFound = true
			break
		}
		if n < len(buf) {
			break
		}
	}
	return d.encryptFound
}

func (d *Reader) isCatalog(o object) bool {
	c, ok := d.resolve(o).(dict)
	return ok && c["Pages"] != nil && (c["Type"] == pdfName("Catalog") || c["Type"] == nil)
}

func mapKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// objHeader recognises "N G obj" ending just before chunk[at:] and
// returns N and where it starts.
func objHeader(chunk []byte, at int) (num int64, start int, ok bool) {
	i := at - 1
	skipSpace := func() int {
		n := 0
		for i >= 0 && isSpace(chunk[i]) && n < 16 {
			i--
			n++
		}
		return n
	}
	digits := func() (int64, int) {
		end := i
		for i >= 0 && chunk[i] >= '0' && chunk[i] <= '9' && end-i < 10 {
			i--
		}
		if i == end {
			return 0, 0
		}
		var v int64
		for _, c := range chunk[i+1 : end+1] {
			v = v*10 + int64(c-'0')
		}
		return v, end - i
	}
	if skipSpace() == 0 {
		return 0, 0, false
	}
	if _, n := digits(); n == 0 {
		return 0, 0, false
	}
	if skipSpace() == 0 {
		return 0, 0, false
	}
	num, n := digits()
	if n == 0 || num == 0 {
		return 0, 0, false
	}
	if i >= 0 && isRegular(chunk[i]) {
		return 0, 0, false
	}
	return num, i + 1, true
}

// pageEntry is one page of the index Open builds.
type pageEntry struct {
	obj    ref  // the page's object (num 0: a direct object in /Kids)
	direct dict // the page when it is a direct object
	inh    *inherited
	info   PageInfo
}

// inherited are the attributes a page tree node passes to its
// descendants, unresolved; nodes that set none share their parent's.
type inherited struct{ media, crop, rotate, resources object }

func (in *inherited) with(n dict) *inherited {
	m, hasM := n["MediaBox"]
	c, hasC := n["CropBox"]
	r, hasR := n["Rotate"]
	res, hasRes := n["Resources"]
	if !hasM && !hasC && !hasR && !hasRes {
		return in
	}
	out := *in
	if hasM {
		out.media = m
	}
	if hasC {
		out.crop = c
	}
	if hasR {
		out.rotate = r
	}
	if hasRes {
		out.resources = res
	}
	return &out
}

// PageInfo is what the page tree tells of a page's geometry.
type PageInfo struct {
	// Box is the page's visible area in its own units, [x1 y1 x2 y2] with
	// x1 < x2 and y1 < y2: its /CropBox within its /MediaBox (both
	// inherited from its ancestors when it has none). When Known is
	// false, the page has neither box valid and Box is US Letter, which
	// readers assume.
	Box   [4]float64
	Known bool
	// Rotate is how far the page is turned clockwise when shown: 0, 90,
	// 180 or 270.
	Rotate int
	// UserUnit is the size of the page's unit in points (1 but for
	// /UserUnit).
	UserUnit float64
}

// Size returns the page's width and height in points as shown: its box
// times its user unit, turned by its rotation.
func (p PageInfo) Size() (w, h float64) {
	w, h = (p.Box[2]-p.Box[0])*p.UserUnit, (p.Box[3]-p.Box[1])*p.UserUnit
	if p.Rotate == 90 || p.Rotate == 270 {
		w, h = h, w
	}
	return w, h
}

// Page returns page i's geometry (0-based; it panics out of range, as a
// slice does).
func (d *Reader) Page(i int) PageInfo { return d.pages[i].info }

// walkPages walks the page tree from the catalog without recursion and
// indexes its leaves: a node reached twice is an error (a cycle, or a
// shared subtree that would otherwise multiply), as is a tree deeper than
// MaxDepth or with more than MaxPages leaves. /Count is not trusted: the
// leaves are counted.
func (d *Reader) walkPages() error {
	d.pages = nil
	c, err := d.resolveErr(d.trailer["Root"])
	if err != nil {
		return prefixed("PDF document catalog: ", err)
	}
	cat, ok := c.(dict)
	if !ok {
		return malformed("PDF document catalog is missing")
	}
	root := cat["Pages"]
	if root == nil {
		return malformed("PDF document catalog has no /Pages")
	}
	type frame struct {
		kids  array
		i     int
		self  ref
		isRef bool
		inh   *inherited // passed to the kids
	}
	var (
		stack   []frame
		visited       = map[ref]bool{}
		onPath        = map[ref]bool{}
		decl    int64 = -1
		none          = &inherited{}
	)
	visit := func(o object) error {
		var self ref
		isRef := false
		if r, ok := o.(ref); ok {
			if onPath[r] {
				return newErr([]error{ErrMalformed, errFinal}, "PDF page tree has a cycle (object %d is its own ancestor)", r.num)
			}
			if visited[r] {
				return newErr([]error{ErrMalformed, errFinal}, "PDF page tree reaches object %d twice", r.num)
			}
			visited[r] = true
			var err error
			if o, err = d.load(r); err != nil {
				if errors.Is(err, errMissing) && d.encrypted && d.crypt == nil {
					return newErr([]error{ErrEncrypted}, "the PDF is encrypted and its page tree object %d cannot be read without the password", r.num)
				}
				return prefixed("PDF page tree: ", err)
			}
			self, isRef = r, true
		}
		n, ok := o.(dict)
		if !ok {
			return malformed("PDF page tree node is not a dictionary")
		}
		parent := none
		if len(stack) > 0 {
			parent = stack[len(stack)-1].inh
		}
		typ, _ := n["Type"].(pdfName)
		kids, hasKids := n["Kids"]
		switch {
		case typ == "Pages" || typ == "" && hasKids:
			if len(stack) >= d.lim.MaxDepth {
				return limitErr("PDF page tree is nested deeper than %d levels", d.lim.MaxDepth)
			}
			k, err := d.resolveErr(kids)
			if err != nil {
				return prefixed("PDF page tree: ", err)
			}
			ka, ok := k.(array)
			if !ok && kids != nil {
				return malformed("PDF page tree node /Kids is not an array")
			}
			if decl < 0 {
				decl, _ = d.resolve(n["Count"]).(int64)
			}
			stack = append(stack, frame{kids: ka, self: self, isRef: isRef, inh: parent.with(n)})
			if isRef {
				onPath[self] = true
			}
		case typ == "Page" || typ == "":
			if len(d.pages) >= d.lim.MaxPages {
				return limitErr("PDF has more than %d pages", d.lim.MaxPages)
			}
			e := pageEntry{obj: self, inh: parent, info: d.pageInfo(parent.with(n), n["UserUnit"])}
			if !isRef {
				e.direct = n
			}
			d.pages = append(d.pages, e)
		default:
			return malformed("PDF page tree node has /Type /%s", typ)
		}
		return nil
	}
	if err := visit(root); err != nil {
		return err
	}
	for len(stack) > 0 {
		if err := d.dl.Check(); err != nil {
			return err
		}
		top := &stack[len(stack)-1]
		if top.i >= len(top.kids) {
			if top.isRef {
				delete(onPath, top.self)
			}
			stack = stack[:len(stack)-1]
			continue
		}
		kid := top.kids[top.i]
		top.i++
		if err := visit(kid); err != nil {
			return err
		}
	}
	if len(d.pages) == 0 {
		if decl > 0 {
			return malformed("PDF page tree has no pages (its /Count says %d)", decl)
		}
		return malformed("PDF has no pages")
	}
	return nil
}

// letter is the box of a page that has none: US Letter, as readers
// assume.
var letter = [4]float64{0, 0, 612, 792}

// pageInfo is a page's geometry from its (inherited) attributes: its crop
// box within its media box, its rotation and its user unit.
func (d *Reader) pageInfo(a *inherited, unit object) PageInfo {
	info := PageInfo{Box: letter, UserUnit: 1}
	media, okM := d.rect(a.media)
	crop, okC := d.rect(a.crop)
	switch {
	case okM && okC:
		crop = [4]float64{max(crop[0], media[0]), max(crop[1], media[1]), min(crop[2], media[2]), min(crop[3], media[3])}
		if crop[2] <= crop[0] || crop[3] <= crop[1] {
			crop = media // no overlap: readers fall back to the media box
		}
		info.Box, info.Known = crop, true
	case okM:
		info.Box, info.Known = media, true
	case okC:
		info.Box, info.Known = crop, true
	}
	if v, ok := number(d.resolve(unit)); ok && v > 0 && v < 1e5 {
		info.UserUnit = v
	}
	if r, ok := d.resolve(a.rotate).(int64); ok && r%90 == 0 {
		info.Rotate = int((r%360 + 360) % 360)
	}
	return info
}

// rect reads a rectangle [x1 y1 x2 y2], normalised so that x1 < x2 and
// y1 < y2; ok is false unless it is four finite numbers enclosing an area.
func (d *Reader) rect(o object) (r [4]float64, ok bool) {
	a, isArray := d.resolve(o).(array)
	if !isArray || len(a) != 4 {
		return r, false
	}
	for i, v := range a {
		if r[i], ok = number(d.resolve(v)); !ok {
			return r, false
		}
	}
	if r[0] > r[2] {
		r[0], r[2] = r[2], r[0]
	}
	if r[1] > r[3] {
		r[1], r[3] = r[3], r[1]
	}
	return r, r[2] > r[0] && r[3] > r[1] && !math.IsInf(r[2]-r[0], 0) && !math.IsInf(r[3]-r[1], 0)
}

func number(o object) (float64, bool) {
	switch v := o.(type) {
	case int64:
		return float64(v), true
	case float64:
		return v, !math.IsNaN(v) && !math.IsInf(v, 0)
	}
	return 0, false
}

// readAt reads len(p) bytes at off.
func (d *Reader) readAt(p []byte, off int64) error {
	if _, err := io.ReadFull(io.NewSectionReader(d.r, off, int64(len(p))), p); err != nil {
		return malformed("reading the PDF at offset %d: %v", off, err)
	}
	return nil
}
