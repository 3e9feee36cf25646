package gnaf

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// MaxLine is the longest row a reader accepts, in bytes, line end excluded.
// G-NAF's longest rows are under 1 KiB; a longer line means the file is not
// G-NAF and ends the read with an error.
const MaxLine = 64 << 10

// bufSize is the read buffer of one file: large reads, few system calls;
// fill reads at least minFill bytes at a time.
const (
	bufSize = 256 << 10
	minFill = 32 << 10
)

var errLineTooLong = fmt.Errorf("line longer than %d bytes", MaxLine)

// lineReader cuts its input into lines ending in \n or \r\n, keeping at most
// bufSize bytes. A line it returns is valid until the next call.
type lineReader struct {
	r      io.Reader
	buf    []byte
	start  int
	end    int
	err    error // sticky read error; io.EOF at the end
	line   int   // number of the line last returned, from 1
	onRead func(n int)
}

func (lr *lineReader) reset(r io.Reader, buf []byte, onRead func(int)) {
	*lr = lineReader{r: r, buf: buf[:cap(buf)], onRead: onRead}
}

// next returns the next line without its line end, or io.EOF, or a read
// error, or errLineTooLong.
func (lr *lineReader) next() ([]byte, error) {
	for {
		if i := bytes.IndexByte(lr.buf[lr.start:lr.end], '\n'); i >= 0 {
			l := lr.buf[lr.start : lr.start+i]
			lr.start += i + 1
			return lr.cut(l)
		}
		if lr.end-lr.start > MaxLine+1 {
			lr.line++
			return nil, errLineTooLong
		}
		if lr.err != nil {
			if lr.err == io.EOF && lr.start < lr.end {
				// The last line, without a line end.
				l := lr.buf[lr.start:lr.end]
				lr.start = lr.end
				return lr.cut(l)
			}
			if lr.err != io.EOF {
				lr.line++ // the line that could not be read
			}
			return nil, lr.err
		}
		lr.fill()
	}
}

func (lr *lineReader) cut(l []byte) ([]byte, error) {
	lr.line++
	if n := len(l); n > 0 && l[n-1] == '\r' {
		l = l[:n-1]
	}
	if len(l) > MaxLine {
		return nil, errLineTooLong
	}
	return l, nil
}

// fill moves the partial line to the front of buf and reads more after it.
func (lr *lineReader) fill() {
	if lr.start > 0 {
		lr.end = copy(lr.buf, lr.buf[lr.start:lr.end])
		lr.start = 0
	}
	// Read at least minFill bytes (or to the end), so that a reader giving
	// a few bytes at a time does not make next search a long partial line
	// again and again.
	want := min(lr.end+minFill, len(lr.buf))
	for tries := 0; lr.end < want; {
		n, err := lr.r.Read(lr.buf[lr.end:])
		if n < 0 || n > len(lr.buf)-lr.end {
			lr.err = errors.New("reader returned an impossible count")
			return
		}
		lr.end += n
		if n > 0 && lr.onRead != nil {
			lr.onRead(n)
		}
		if err != nil {
			lr.err = err
			return
		}
		if n > 0 {
			tries = 0
		} else if tries++; tries == 100 {
			lr.err = io.ErrNoProgress
			return
		}
	}
}

// ustr returns b as a string sharing b's memory: no copy, valid as long as
// b's bytes are not overwritten.
func ustr(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// splitRow cuts row at '|' into fields, views of row. It returns the number
// of fields the row has (those beyond len(fields) are counted, not stored)
// and, when the row holds a control character other than tab or is not
// valid UTF-8, why it is bad.
func splitRow(row []byte, fields []string) (int, string) {
	n, start := 0, 0
	var high byte
	for i := 0; i < len(row); i++ {
		c := row[i]
		if c-0x20 < '|'-0x20 {
			continue // printable ASCII before '|': the common case
		}
		switch {
		case c == '|':
			if n < len(fields) {
				fields[n] = ustr(row[start:i])
			}
			n++
			start = i + 1
		case c < 0x20 && c != '\t':
			return n + 1, fmt.Sprintf("control character %#02x at byte %d", c, i+1)
		default:
			high |= c
		}
	}
	if n < len(fields) {
		fields[n] = ustr(row[start:])
	}
	n++
	if high >= utf8.RuneSelf && !utf8.Valid(row) {
		return n, "invalid UTF-8"
	}
	return n, ""
}

// A psv reads one pipe-separated table file: a header naming the columns,
// then rows. It finds the columns a table needs by name, so extra columns
// and any order are fine.
type psv struct {
	name   string // for messages: "G-NAF NOVEMBER 2024/Standard/NSW_LOCALITY_psv.psv"
	lr     lineReader
	ncol   int      // fields per row, from the header
	ix     []int    // position of each wanted column in a row
	fields []string // the current row's fields, views of the line buffer
}

// open reads the header of r and finds cols in it. A header that is empty,
// holds an empty or repeated name, or lacks one of cols is an error.
func (p *psv) open(r io.Reader, name string, cols []string, buf []byte, onRead func(int)) error {
	p.name = name
	p.lr.reset(r, buf, onRead)
	line, err := p.lr.next()
	if err == io.EOF {
		return fmt.Errorf("%s: empty file, want a header line", name)
	}
	if err != nil {
		return fmt.Errorf("%s:1: header: %w", name, err)
	}
	line = bytes.TrimPrefix(line, []byte("\ufeff"))
	if len(line) == 0 {
		return fmt.Errorf("%s:1: header: empty line", name)
	}
	n, reason := splitRow(line, nil)
	if reason != "" {
		return fmt.Errorf("%s:1: header: %s", name, reason)
	}
	if cap(p.fields) < n+1 {
		p.fields = make([]string, n+1) // one more, to see a row's extra field
	}
	p.fields = p.fields[:n+1]
	splitRow(line, p.fields)
	pos := make(map[string]int, n)
	for i, h := range p.fields[:n] {
		h = asciiUpper(strings.TrimSpace(h))
		if h == "" {
			return fmt.Errorf("%s:1: header: column %d has no name", name, i+1)
		}
		if _, dup := pos[h]; dup {
			return fmt.Errorf("%s:1: header: column %s appears twice", name, h)
		}
		pos[h] = i
	}
	p.ncol = n
	p.ix = p.ix[:0]
	var missing []string
	for _, c := range cols {
		i, ok := pos[c]
		if !ok {
			missing = append(missing, c)
		}
		p.ix = append(p.ix, i)
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s:1: header lacks column %s", name, strings.Join(missing, ", "))
	}
	return nil
}

// next reads the next row into p.fields. It returns io.EOF at the end, an
// error for a file that cannot be read on, or a reason when the row is bad
// and should be skipped. Empty lines are skipped.
func (p *psv) next() (reason string, err error) {
	for {
		line, err := p.lr.next()
		if err != nil {
			if err == io.EOF {
				return "", io.EOF
			}
			return "", fmt.Errorf("%s:%d: %w", p.name, p.lr.line, err)
		}
		if len(line) == 0 {
			continue
		}
		n, reason := splitRow(line, p.fields)
		if reason != "" {
			return reason, nil
		}
		if n != p.ncol {
			return fmt.Sprintf("%d fields, want %d", n, p.ncol), nil
		}
		return "", nil
	}
}

// asciiUpper upper-cases the ASCII letters of s, leaving other bytes be.
func asciiUpper(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'a' <= c && c <= 'z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if c := b[j]; 'a' <= c && c <= 'z' {
					b[j] = c - 'a' + 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// field returns the row's value of the i-th wanted column.
func (p *psv) field(i int) string { return p.fields[p.ix[i]] }
