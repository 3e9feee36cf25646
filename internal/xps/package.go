package xps

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path"
	"strconv"
	"strings"
	"unicode/utf16"

	kflate "github.com/klauspost/compress/flate"
)

// pkg is the ZIP package: its parts by folded name, and the byte budget
// that bounds decompression over the Doc's life.
type pkg struct {
	zr     *zip.Reader
	parts  map[string]*zip.File // by partKey
	lim    Limits
	budget int64 // decompressed bytes left (MaxTotalBytes)
	// inflater is reused for every part (a Doc is one goroutine's).
	inflater io.ReadCloser
}

func openPackage(r io.ReaderAt, size int64, lim Limits) (*pkg, error) {
	if size < 0 {
		return nil, malformed("package size %d is negative", size)
	}
	// archive/zip reads the whole central directory at once: a count
	// declared past MaxParts is refused before it does.
	if n, ok := declaredParts(r, size); ok && n > uint64(lim.MaxParts) {
		return nil, limitErr("package declares %d parts, more than %d", n, lim.MaxParts)
	}
	zr, err := zip.NewReader(r, size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		// Part names are only looked up, never used as paths: an
		// "insecure" name is harmless here.
		return nil, malformed("not a ZIP package: %v", err)
	}
	if len(zr.File) > lim.MaxParts {
		return nil, limitErr("package has %d parts, more than %d", len(zr.File), lim.MaxParts)
	}
	p := &pkg{zr: zr, parts: make(map[string]*zip.File, len(zr.File)), lim: lim, budget: lim.MaxTotalBytes}
	zr.RegisterDecompressor(zip.Deflate, p.decompressor)
	for _, f := range zr.File {
		if strings.HasSuffix(f.Name, "/") {
			continue // a directory entry
		}
		k := partKey(f.Name)
		if p.parts[k] != nil {
			return nil, malformed("package has two parts named %q (part names ignore case)", f.Name)
		}
		p.parts[k] = f
	}
	return p, nil
}

// declaredParts reads the number of entries a ZIP's end of central
// directory record (or its ZIP64 record) declares.
func declaredParts(r io.ReaderAt, size int64) (uint64, bool) {
	const endLen, maxComment = 22, 65535
	tail := min(size, endLen+maxComment)
	if tail < endLen {
		return 0, false
	}
	buf := make([]byte, tail)
	if _, err := r.ReadAt(buf, size-tail); err != nil && err != io.EOF {
		return 0, false
	}
	i := bytes.LastIndex(buf, []byte("PK\x05\x06"))
	if i < 0 || len(buf)-i < endLen {
		return 0, false
	}
	n := uint64(binary.LittleEndian.Uint16(buf[i+10:]))
	if n != 0xFFFF || i < 20 || !bytes.Equal(buf[i-20:i-16], []byte("PK\x06\x07")) {
		return n, true
	}
	off := binary.LittleEndian.Uint64(buf[i-20+8:])
	var rec [56]byte
	if off > uint64(size) || off+56 > uint64(size) {
		return 0, false
	}
	if _, err := r.ReadAt(rec[:], int64(off)); err != nil || !bytes.Equal(rec[:4], []byte("PK\x06\x06")) {
		return 0, false
	}
	return binary.LittleEndian.Uint64(rec[32:]), true
}

// decompressor reuses one inflater: zip.File.Open calls it for each
// part, and a Doc reads one part at a time.
func (p *pkg) decompressor(r io.Reader) io.ReadCloser {
	if p.inflater == nil {
		p.inflater = kflate.NewReader(r)
	} else if err := p.inflater.(kflate.Resetter).Reset(r, nil); err != nil {
		return kflate.NewReader(r)
	}
	return io.NopCloser(p.inflater)
}

// partKey is how a part name is looked up: no leading slash,
// percent-decoded, ASCII case folded (OPC part names ignore case).
func partKey(name string) string {
	name = strings.TrimPrefix(name, "/")
	if strings.Contains(name, "%") {
		if u, err := url.PathUnescape(name); err == nil {
			name = u
		}
	}
	return strings.ToLower(name)
}

// resolve resolves a URI found in part base to a part name (no leading
// slash; the fragment cut off and returned). Relative references climb no
// higher than the package root. Absolute URIs of another scheme ("http:",
// "file:") are refused.
func resolve(base, uri string) (name, fragment string, err error) {
	uri = strings.TrimSpace(uri)
	if i := strings.IndexByte(uri, '#'); i >= 0 {
		uri, fragment = uri[:i], uri[i+1:]
	}
	if i := strings.IndexByte(uri, '?'); i >= 0 {
		uri = uri[:i]
	}
	if uri == "" {
		return "", "", errors.New("empty URI")
	}
	if i := strings.IndexByte(uri, ':'); i >= 0 && !strings.ContainsAny(uri[:i], "/") {
		return "", "", fmt.Errorf("URI %q is outside the package", uri)
	}
	if strings.HasPrefix(uri, "//") {
		return "", "", fmt.Errorf("URI %q is outside the package", uri)
	}
	if !strings.HasPrefix(uri, "/") {
		uri = path.Join(path.Dir("/"+strings.TrimPrefix(base, "/")), uri)
	}
	return strings.TrimPrefix(path.Clean("/"+uri), "/"), fragment, nil
}

func (p *pkg) has(name string) bool {
	k := partKey(name)
	return p.parts[k] != nil || p.parts[k+"/[0].piece"] != nil
}

// read returns a part's content, its interleaved pieces joined, read into
// buf (reused). A part larger than max, or past the Doc's budget, is an
// ErrLimit error; a missing or corrupt one ErrMalformed.
func (p *pkg) read(name string, max int64, buf []byte) ([]byte, error) {
	buf = buf[:0]
	k := partKey(name)
	if f := p.parts[k]; f != nil {
		return p.readFile(name, f, max, buf)
	}
	for i := 0; ; i++ {
		f := p.parts[k+"/["+strconv.Itoa(i)+"].piece"]
		last := false
		if f == nil {
			f = p.parts[k+"/["+strconv.Itoa(i)+"].last.piece"]
			last = true
		}
		if f == nil {
			if i == 0 {
				return nil, malformed("part %q is not in the package", name)
			}
			return nil, malformed("part %q has no last piece after %d", name, i)
		}
		var err error
		if buf, err = p.readFile(name, f, max, buf); err != nil {
			return nil, err
		}
		if last {
			return buf, nil
		}
	}
}

// readFile appends a ZIP entry's content to buf, so that the total is at
// most max bytes.
func (p *pkg) readFile(name string, f *zip.File, max int64, buf []byte) ([]byte, error) {
	room := max - int64(len(buf))
	if f.UncompressedSize64 > uint64(room) {
		return nil, limitErr("part %q is %d bytes decompressed, more than %d", name, f.UncompressedSize64, max)
	}
	n := int64(f.UncompressedSize64)
	if n > p.budget {
		return nil, limitErr("part %q: the document decompresses to more than %d bytes", name, p.lim.MaxTotalBytes)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, malformed("part %q cannot be read: %v", name, err)
	}
	defer rc.Close()
	// The declared size is checked by archive/zip as it reads (more is
	// ErrFormat, less or a bad CRC an error at the end): reading n+1
	// bytes at most makes the check certain.
	start := len(buf)
	buf = growTo(buf, start+int(n))
	got, err := io.ReadFull(rc, buf[start:start+int(n)])
	p.budget -= int64(got)
	if err != nil {
		return nil, malformed("part %q cannot be read: %v", name, err)
	}
	var one [1]byte
	if m, err := rc.Read(one[:]); m > 0 || (err != nil && err != io.EOF) {
		if err == nil {
			err = errors.New("longer than declared")
		}
		return nil, malformed("part %q cannot be read: %v", name, err)
	}
	return buf, nil
}

func growTo(b []byte, n int) []byte {
	if cap(b) >= n {
		return b[:n]
	}
	nb := make([]byte, n, n+n/4)
	copy(nb, b)
	return nb
}

// utf8Part returns an XML part as UTF-8: UTF-16 (told by its byte order
// mark) is transcoded, a UTF-8 byte order mark dropped.
func utf8Part(b []byte) []byte {
	switch {
	case len(b) >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF:
		return b[3:]
	case len(b) >= 2 && (b[0] == 0xFF && b[1] == 0xFE || b[0] == 0xFE && b[1] == 0xFF):
		le := b[0] == 0xFF
		u := make([]uint16, 0, len(b)/2)
		for i := 2; i+1 < len(b); i += 2 {
			if le {
				u = append(u, uint16(b[i])|uint16(b[i+1])<<8)
			} else {
				u = append(u, uint16(b[i])<<8|uint16(b[i+1]))
			}
		}
		var out bytes.Buffer
		out.Grow(len(u))
		for _, r := range utf16.Decode(u) {
			out.WriteRune(r)
		}
		return out.Bytes()
	}
	return b
}
