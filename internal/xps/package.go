package xps

import (
	"archive/zip"
	"bytes"
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
