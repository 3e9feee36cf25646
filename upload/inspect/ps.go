package inspect

import (
	"github.com/lodge-mail/lodge/internal/deadline"

	"bytes"
	"io"
	"strconv"
)

// PostScript is a program: its pages are what it prints, and the only way
// to know them is to run it. Ghostscript interprets it in the sandbox
// (ghostscript.go) and reports each page it prints. The Document
// Structuring Conventions ("%%Pages: N", "%%Page:" comments) are read
// too, but only as a hint for messages: a file without them is counted
// all the same, and one whose comments lie is counted by what it prints.
//
// The DSC reading: the header's "%%Pages: N", or the trailer's when the
// header says "%%Pages: (atend)", else the number of "%%Page:" comments.
// Comments inside embedded documents (%%BeginDocument ... %%EndDocument)
// and in binary or data sections (%%BeginBinary, %%BeginData) do not
// count. An EPS file (%!PS-Adobe-x.y EPSF-x.y, or the DOS EPS binary
// header) is one page.

// dscHint is what the DSC comments say: pages < 0 when they say nothing.
type dscHint struct {
	pages int
	eps   bool
}

const psLineKeep = 256 // DSC lines are at most 255 bytes

// psDSC reads the DSC comments of a PostScript file. It stops counting
// "%%Page:" comments past lim.MaxPages.
func psDSC(r io.ReaderAt, size int64, lim Limits, dl *deadline.Deadline) (dscHint, error) {
	var head [4]byte
	if n, _ := r.ReadAt(head[:], 0); n == 4 && bytes.Equal(head[:], []byte{0xC5, 0xD0, 0xD3, 0xC6}) {
		return dscHint{pages: 1, eps: true}, nil
	}
	lr := &psLines{r: io.NewSectionReader(r, 0, size)}
	var (
		first                     = true
		inHeader                  = true
		atend                     bool
		headerPages, trailerPages = -1, -1
		pageComments              int
		nested                    int    // inside %%BeginDocument
		skipTo                    []byte // inside a binary or data section: its end comment
		inTrailer                 bool
	)
	for {
		line, ok, err := lr.next()
		if err != nil {
			return dscHint{}, err
		}
		if !ok {
			break
		}
		if err := dl.Check(); err != nil {
			return dscHint{}, err
		}
		if first {
			first = false
			l := bytes.TrimPrefix(line, []byte{0x04})
			if bytes.HasPrefix(l, []byte("%!PS-Adobe-")) && bytes.Contains(l, []byte(" EPSF-")) {
				return dscHint{pages: 1, eps: true}, nil
			}
		}
		if len(line) == 0 {
			continue
		}
		if skipTo != nil {
			if bytes.HasPrefix(line, skipTo) {
				skipTo = nil
			}
			continue
		}
		if inHeader && line[0] != '%' {
			inHeader = false
		}
		if !bytes.HasPrefix(line, []byte("%%")) {
			continue
		}
		switch {
		case bytes.HasPrefix(line, []byte("%%EndComments")):
			inHeader = false
		case bytes.HasPrefix(line, []byte("%%BeginDocument")):
			nested++
		case bytes.HasPrefix(line, []byte("%%EndDocument")):
			nested = max(0, nested-1)
		case bytes.HasPrefix(line, []byte("%%BeginBinary:")):
			skipTo = []byte("%%EndBinary")
		case bytes.HasPrefix(line, []byte("%%BeginData:")):
			skipTo = []byte("%%EndData")
		case nested > 0:
		case bytes.HasPrefix(line, []byte("%%Trailer")):
			inTrailer = true
		case bytes.HasPrefix(line, []byte("%%Pages:")):
			v := bytes.TrimSpace(line[len("%%Pages:"):])
			switch {
			case inHeader && bytes.HasPrefix(v, []byte("(atend)")):
				atend = true
			case inHeader && headerPages < 0:
				headerPages = dscInt(v)
			case inTrailer:
				if n := dscInt(v); n >= 0 {
					trailerPages = n
				}
			}
		case bytes.HasPrefix(line, []byte("%%Page:")):
			if pageComments <= lim.MaxPages {
				pageComments++
			}
		}
	}
	n := pageComments
	switch {
	case !atend && headerPages > 0:
		n = headerPages
	case atend && trailerPages > 0:
		n = trailerPages
	}
	if n == 0 {
		n = -1
	}
	return dscHint{pages: n}, nil
}

// String says what the comments promise, for messages ("" when nothing).
func (h dscHint) String() string {
	switch {
	case h.pages < 0:
		return ""
	case h.pages == 1:
		return "its DSC comments say 1 page"
	}
	return "its DSC comments say " + strconv.Itoa(h.pages) + " pages"
}

// dscInt reads the first number of a DSC value ("%%Pages: 12 -1" is 12);
// -1 when there is none.
func dscInt(v []byte) int {
	if i := bytes.IndexAny(v, " \t"); i >= 0 {
		v = v[:i]
	}
	n, err := strconv.Atoi(string(v))
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// psLines yields the first psLineKeep bytes of each line; lines end with
// CR, LF or CR LF.
type psLines struct {
	r      io.Reader
	buf    []byte
	data   []byte // read, not yet consumed
	line   []byte
	eof    bool
	skipLF bool // the last line ended with CR: a LF next belongs to it
}

func (l *psLines) next() ([]byte, bool, error) {
	l.line = l.line[:0]
	started := false
	for {
		if len(l.data) == 0 {
			if l.eof {
				return l.line, started, nil
			}
			if l.buf == nil {
				l.buf = make([]byte, 64<<10)
			}
			n, err := l.r.Read(l.buf)
			l.data = l.buf[:n]
			switch {
			case err == io.EOF:
				l.eof = true
			case err != nil:
				return nil, false, malformed("reading the PostScript: %v", err)
			}
			continue
		}
		if l.skipLF {
			l.skipLF = false
			if l.data[0] == '\n' {
				l.data = l.data[1:]
				continue
			}
		}
		started = true
		i := bytes.IndexAny(l.data, "\r\n")
		if i < 0 {
			l.keep(l.data)
			l.data = nil
			continue
		}
		l.keep(l.data[:i])
		l.skipLF = l.data[i] == '\r'
		l.data = l.data[i+1:]
		return l.line, true, nil
	}
}

func (l *psLines) keep(b []byte) {
	if room := psLineKeep - len(l.line); room > 0 {
		l.line = append(l.line, b[:min(room, len(b))]...)
	}
}
