package points

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
	"unsafe"
)

// MaxRecord is the longest record a reader accepts, in bytes, line ends
// (and the line ends inside quoted fields) included. A longer one ends the
// read with an error: past it the reader cannot tell where the next record
// starts.
const MaxRecord = 64 << 10

const (
	bufSize = 256 << 10
	minFill = 32 << 10
)

var errTooLong = fmt.Errorf("record longer than %d bytes", MaxRecord)

// csvReader reads RFC 4180 CSV as encoding/csv does (comma separated,
// fields optionally in double quotes with "" for a quote and line ends
// allowed inside, \r\n read as \n, empty lines skipped) with bounded memory
// and no allocation per record. Fields are valid until the next call.
type csvReader struct {
	r       io.Reader
	buf     []byte
	start   int
	end     int
	err     error // sticky read error; io.EOF at the end
	line    int   // first line of the record last returned, from 1
	lines   int   // lines consumed
	fields  []string
	scratch []byte // unquoted copies of quoted fields that need rewriting
}

func newCSVReader(r io.Reader) *csvReader {
	return &csvReader{r: r, buf: make([]byte, bufSize), scratch: make([]byte, 0, 4<<10)}
}

// next reads the next record into c.fields. It returns io.EOF at the end,
// an error when the input cannot be read on, or a reason why the record
// (which was read past) is bad.
func (c *csvReader) next() (reason string, err error) {
	for {
		data := c.buf[c.start:c.end]
		atEOF := c.err == io.EOF
		consumed, done, reason := c.parse(data, atEOF)
		if done {
			if consumed == 0 {
				return "", io.EOF
			}
			c.line = c.lines + 1
			c.lines += bytes.Count(data[:consumed], []byte{'\n'})
			if consumed > MaxRecord {
				return "", errTooLong
			}
			c.start += consumed
			if len(c.fields) == 0 {
				continue // an empty line
			}
			if reason == "" {
				reason = checkText(data[:consumed])
			}
			return reason, nil
		}
		if len(data) > MaxRecord {
			c.line = c.lines + 1
			return "", errTooLong
		}
		if c.err != nil {
			c.line = c.lines + 1
			return "", c.err
		}
		c.fill()
	}
}

// checkText says why a record's bytes are not text, or "".
func checkText(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return "NUL byte"
	}
	if !utf8.Valid(b) {
		return "invalid UTF-8"
	}
	return ""
}

func (c *csvReader) fill() {
	if c.start > 0 {
		c.end = copy(c.buf, c.buf[c.start:c.end])
		c.start = 0
	}
	// Read at least minFill bytes (or to the end), so that a reader giving
	// a few bytes at a time does not make parse go over a long record
	// again and again.
	want := min(c.end+minFill, len(c.buf))
	for tries := 0; c.end < want; {
		n, err := c.r.Read(c.buf[c.end:])
		if n < 0 || n > len(c.buf)-c.end {
			c.err = errors.New("reader returned an impossible count")
			return
		}
		c.end += n
		if err != nil {
			c.err = err
			return
		}
		if n > 0 {
			tries = 0
		} else if tries++; tries == 100 {
			c.err = io.ErrNoProgress
			return
		}
	}
}

func ustr(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// parse parses the record at the start of data into c.fields. done is
// false when data ends before the record does and more may come. consumed
// counts the record's bytes, its line end included (0 with done: the end
// of the input). An empty line gives no fields. A malformed record (a
// quote inside an unquoted field, a character after a closing quote, a
// quote never closed) is read to the end of its line and reason says what
// is wrong.
func (c *csvReader) parse(data []byte, atEOF bool) (consumed int, done bool, reason string) {
	c.fields = c.fields[:0]
	c.scratch = c.scratch[:0]
	switch {
	case len(data) == 0:
		return 0, atEOF, ""
	case data[0] == '\n':
		return 1, true, ""
	case data[0] == '\r' && len(data) == 1:
		return 1, atEOF, "" // csv drops a \r before the end of the input
	case data[0] == '\r' && data[1] == '\n':
		return 2, true, ""
	}
	i := 0
	for {
		if i < len(data) && data[i] == '"' {
			// A quoted field: find the closing quote, a " not followed by ".
			j, esc := i+1, false
			for {
				k := bytes.IndexByte(data[j:], '"')
				if k < 0 {
					if !atEOF {
						return 0, false, ""
					}
					c.fields = append(c.fields, "")
					return len(data), true, "quoted field is not closed"
				}
				k += j
				if k+1 == len(data) && !atEOF {
					return 0, false, ""
				}
				if k+1 < len(data) && data[k+1] == '"' {
					esc = true
					j = k + 2
					continue
				}
				j = k
				break
			}
			content := data[i+1 : j]
			if esc || bytes.Contains(content, []byte("\r\n")) {
				c.fields = append(c.fields, c.unquote(content))
			} else {
				c.fields = append(c.fields, ustr(content))
			}
			k := j + 1
			switch {
			case k == len(data):
				return k, true, ""
			case data[k] == ',':
				i = k + 1
				continue
			case data[k] == '\n':
				return k + 1, true, ""
			case data[k] == '\r' && k+1 == len(data):
				if !atEOF {
					return 0, false, ""
				}
				return k + 1, true, ""
			case data[k] == '\r' && data[k+1] == '\n':
				return k + 2, true, ""
			}
			return c.skipLine(data, k, atEOF, fmt.Sprintf("%q after a closing quote", data[k]))
		}
		// An unquoted field, up to a comma or the line end.
		k := i
		for k < len(data) && data[k] != ',' && data[k] != '\n' && data[k] != '"' {
			k++
		}
		switch {
		case k == len(data):
			if !atEOF {
				return 0, false, ""
			}
			c.fields = append(c.fields, ustr(bytes.TrimSuffix(data[i:k], []byte{'\r'})))
			return k, true, ""
		case data[k] == ',':
			c.fields = append(c.fields, ustr(data[i:k]))
			i = k + 1
		case data[k] == '\n':
			c.fields = append(c.fields, ustr(bytes.TrimSuffix(data[i:k], []byte{'\r'})))
			return k + 1, true, ""
		default:
			c.fields = append(c.fields, "")
			return c.skipLine(data, k, atEOF, `" in an unquoted field`)
		}
	}
}

// skipLine reads a malformed record to the end of the line holding data[k].
func (c *csvReader) skipLine(data []byte, k int, atEOF bool, reason string) (int, bool, string) {
	if e := bytes.IndexByte(data[k:], '\n'); e >= 0 {
		return k + e + 1, true, reason
	}
	if !atEOF {
		return 0, false, ""
	}
	return len(data), true, reason
}

// unquote returns the content of a quoted field with "" read as " and
// \r\n as \n, in c.scratch.
func (c *csvReader) unquote(b []byte) string {
	s := len(c.scratch)
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == '"' && i+1 < len(b) && b[i+1] == '"':
			i++
		case b[i] == '\r' && i+1 < len(b) && b[i+1] == '\n':
			continue
		}
		c.scratch = append(c.scratch, b[i])
	}
	return ustr(c.scratch[s:])
}
