package bulk

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/segmentio/encoding/json"

	"github.com/lodge-mail/lodge/engine"
	"github.com/lodge-mail/lodge/internal/jsondepth"
	"github.com/lodge-mail/lodge/internal/jsonstr"
)

type jsonlSource struct {
	br    *bufio.Reader
	line  int64
	buf   []byte
	stall func()
}

func openJSONL(br *bufio.Reader, cfg Config, stall func()) setup {
	names := cfg.Columns
	return setup{
		src: &jsonlSource{br: br, stall: stall},
		newJ: func(e *engine.Engine) judge {
			return &jsonlJudge{e: e, names: names, detail: cfg.Detail, spans: make([]span, len(names))}
		},
	}
}

func (s *jsonlSource) next() (row, []byte, error) {
	for {
		if s.stall != nil && s.br.Buffered() == 0 {
			s.stall()
		}
		b, err := s.br.ReadSlice('\n')
		long := false
		if err == bufio.ErrBufferFull {
			s.buf = append(s.buf[:0], b...)
			for err == bufio.ErrBufferFull {
				b, err = s.br.ReadSlice('\n')
				if long || len(s.buf)+len(b) > MaxRowBytes+2 {
					long = true // keep reading to the line's end, keeping nothing
					continue
				}
				s.buf = append(s.buf, b...)
			}
			b = s.buf
		}
		if err != nil && err != io.EOF {
			return row{}, nil, fmt.Errorf("bulk: reading input: %w", err)
		}
		if len(b) == 0 && !long {
			return row{}, nil, io.EOF
		}
		s.line++
		b = bytes.TrimSuffix(b, []byte{'\n'})
		b = bytes.TrimSuffix(b, []byte{'\r'})
		if long || len(b) > MaxRowBytes {
			return row{line: s.line, err: fmt.Sprintf("line %d is longer than %d bytes", s.line, MaxRowBytes)}, nil, nil
		}
		if len(bytes.TrimSpace(b)) == 0 {
			continue // blank lines are not rows
		}
		return row{line: s.line}, b, nil
	}
}

// span is a value in a JSON line: [lo, hi), lo == hi when absent.
type span struct{ lo, hi int }

// member is a top-level member of an object: key and value, and whether
// the output drops it for a verdict field of the same name (see replaced).
type member struct {
	lo, hi int
	drop   bool
}

type jsonlJudge struct {
	e       *engine.Engine
	names   []string
	detail  bool
	tok     json.Tokenizer
	members []member
	spans   []span // the value of each of names
	strs    []span // string values in order, without Columns
	lines   []string
}

// verdict is what is added to a row.
type verdict struct {
	status, nation, message string
	detail                  *engine.Detail
}

func (j *jsonlJudge) process(ctx context.Context, c *chunk) {
	for i := range c.rows {
		if ctx.Err() != nil {
			return
		}
		r := &c.rows[i]
		line := bytes.TrimSpace(c.arena[r.lo:r.hi])
		out := c.out.AvailableBuffer()
		var k int
		out, k = j.row(out, line, r)
		c.out.Write(out)
		c.counts[k]++
		c.n++
	}
	c.complete = true
}

// row appends the output line of one row and returns the counts index of
// its verdict.
func (j *jsonlJudge) row(dst, line []byte, r *row) ([]byte, int) {
	if r.err != "" {
		return j.appendWrapped(dst, "", nil, verdict{status: statusError, message: r.err}), 0
	}
	if msg := checkDepth(line); msg != "" {
		return j.appendWrapped(dst, "input", line, verdict{status: statusError, message: fmt.Sprintf("line %d: %s", r.line, msg)}), 0
	}
	if !json.Valid(line) {
		return j.appendWrapped(dst, "input", line, verdict{status: statusError, message: fmt.Sprintf("line %d is not valid JSON", r.line)}), 0
	}
	var lines []string
	var msg string
	switch line[0] {
	case '{':
		lines, msg = j.object(line)
	case '[':
		lines, msg = j.array(j.lines[:0], line, "address")
	case '"':
		lines = engine.SplitLines(j.lines[:0], unquote(line))
	default:
		msg = "a JSON " + jsonstr.Kind(line) + " is not an address"
	}
	v := verdict{status: statusError}
	k := 0
	if msg != "" {
		v.message = fmt.Sprintf("line %d: %s", r.line, msg)
	} else {
		res := j.e.Check(lines, j.detail)
		if s := res.Status.String(); s != "" {
			v = verdict{status: s, nation: res.Nation, message: res.Message, detail: res.Detail}
			k = statusIndex(res)
		} else {
			v.message = fmt.Sprintf("line %d: the engine gave no verdict", r.line)
		}
	}
	clear(lines)
	j.lines = lines[:0]
	if line[0] == '{' {
		return j.appendObject(dst, line, v), k
	}
	return j.appendWrapped(dst, "address", line, v), k
}

// object reads the members of a valid JSON object and returns its address
// lines, or what is wrong.
func (j *jsonlJudge) object(line []byte) ([]string, string) {
	j.members = j.members[:0]
	j.strs = j.strs[:0]
	for i := range j.spans {
		j.spans[i] = span{}
	}
	addr := span{}
	t := &j.tok
	t.Reset(line)
	t.Next() // '{'
	for t.Next() {
		if t.Delim == '}' && t.Depth == 0 {
			break
		}
		if !t.IsKey {
			continue
		}
		klo := len(line) - t.Remaining() - len(t.Value)
		key := t.String()
		t.Next() // ':'
		t.Next()
		vlo, vhi := valueSpan(t, line)
		m := member{lo: klo, hi: vhi, drop: j.replaced(key)}
		j.members = append(j.members, m)
		v := span{vlo, vhi}
		if j.names == nil {
			if string(key) == "address" {
				if addr.lo == addr.hi {
					addr = v
				}
			} else if line[vlo] == '"' && !m.drop {
				j.strs = append(j.strs, v)
			}
			continue
		}
		for i, n := range j.names {
			if n == string(key) && j.spans[i].lo == j.spans[i].hi {
				j.spans[i] = v
			}
		}
	}
	lines := j.lines[:0]
	if j.names == nil {
		switch {
		case addr.lo != addr.hi:
			return j.value(lines, line[addr.lo:addr.hi], "address", true, false)
		case len(j.strs) == 1:
			return engine.SplitLines(lines, unquote(line[j.strs[0].lo:j.strs[0].hi])), ""
		}
		for _, s := range j.strs {
			lines = splitNewlines(lines, unquote(line[s.lo:s.hi]))
		}
		return lines, ""
	}
	found := false
	for i, s := range j.spans {
		if s.lo == s.hi {
			continue
		}
		found = true
		var msg string
		if lines, msg = j.value(lines, line[s.lo:s.hi], j.names[i], len(j.names) == 1, true); msg != "" {
			return lines, msg
		}
	}
	if !found {
		var b strings.Builder
		for i, n := range j.names {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%q", n)
		}
		return lines, "none of the fields " + b.String() + " is in this object"
	}
	return lines, ""
}

// verdictKeys are the keys the output adds to an object; "detail" only
// with Config.Detail.
var verdictKeys = [...]string{"status", "nation", "message", "detail"}

// replaced reports whether an input key gives way to a key the output
// adds: equal to it ignoring case (Unicode simple folding, so "Status",
// "STATUS" and "ſtatus" too), because decoders that match keys without
// regard to case (Go's encoding/json, PowerShell's ConvertFrom-Json)
// would otherwise read the input's value or the verdict by chance.
func (j *jsonlJudge) replaced(key []byte) bool {
	n := len(verdictKeys)
	if !j.detail {
		n--
	}
	for _, k := range verdictKeys[:n] {
		if bytes.EqualFold(key, []byte(k)) {
			return true
		}
	}
	return false
}

// value appends the lines of one field: a string (split as a string
// address when it is the only field, else at newlines), an array of
// strings, and with lenient a number (its text) or null (nothing).
func (j *jsonlJudge) value(dst []string, v []byte, name string, only, lenient bool) ([]string, string) {
	switch {
	case v[0] == '"' && only:
		return engine.SplitLines(dst, unquote(v)), ""
	case v[0] == '"':
		return splitNewlines(dst, unquote(v)), ""
	case v[0] == '[':
		return j.array(dst, v, fmt.Sprintf("field %q", name))
	case lenient && v[0] == 'n':
		return dst, ""
	case lenient && (v[0] == '-' || (v[0] >= '0' && v[0] <= '9')):
		return append(dst, string(v)), ""
	}
	return dst, fmt.Sprintf("field %q is a JSON %s, not a string or an array of strings", name, jsonstr.Kind(v))
}

// array appends the elements of a valid JSON array of strings.
func (j *jsonlJudge) array(dst []string, v []byte, what string) ([]string, string) {
	var t json.Tokenizer
	t.Reset(v)
	t.Next() // '['
	n := 0
	for t.Next() {
		if t.Delim == ']' && t.Depth == 0 {
			break
		}
		if t.Delim == ',' {
			continue
		}
		n++
		if t.Delim != 0 || !t.Value.String() {
			return dst, fmt.Sprintf("%s: line %d is not a string", what, n)
		}
		dst = append(dst, string(t.String()))
	}
	return dst, ""
}

// appendObject appends a valid JSON object with the verdict added, its own
// members of the verdict's names dropped.
func (j *jsonlJudge) appendObject(dst, obj []byte, v verdict) []byte {
	drop := false
	for _, m := range j.members {
		drop = drop || m.drop
	}
	if !drop {
		dst = append(dst, bytes.TrimRight(obj[:len(obj)-1], " \t\r\n")...)
		if len(j.members) > 0 {
			dst = append(dst, ',')
		}
	} else {
		dst = append(dst, '{')
		for _, m := range j.members {
			if !m.drop {
				dst = append(dst, obj[m.lo:m.hi]...)
				dst = append(dst, ',')
			}
		}
	}
	return append(appendVerdict(dst, v), '}', '\n')
}

// appendWrapped appends {"<key>":<value>, verdict}: value as raw JSON for
// the key "address", as a JSON string for "input", nothing for "".
func (j *jsonlJudge) appendWrapped(dst []byte, key string, val []byte, v verdict) []byte {
	dst = append(dst, '{')
	switch key {
	case "address":
		dst = append(dst, `"address":`...)
		dst = append(dst, val...)
		dst = append(dst, ',')
	case "input":
		dst = append(dst, `"input":`...)
		dst = json.AppendEscape(dst, string(val), 0)
		dst = append(dst, ',')
	}
	return append(appendVerdict(dst, v), '}', '\n')
}

func appendVerdict(dst []byte, v verdict) []byte {
	dst = append(dst, `"status":`...)
	dst = json.AppendEscape(dst, v.status, 0)
	dst = append(dst, `,"nation":`...)
	dst = json.AppendEscape(dst, v.nation, 0)
	if v.message != "" {
		dst = append(dst, `,"message":`...)
		dst = json.AppendEscape(dst, v.message, 0)
	}
	if v.detail != nil {
		dst = append(dst, `,"detail":`...)
		if b, err := json.Append(dst, v.detail, 0); err == nil {
			dst = b
		} else {
			dst = append(dst, "null"...)
		}
	}
	return dst
}

// valueSpan returns where the value the tokenizer is on lies in b,
// moving the tokenizer past its end.
func valueSpan(t *json.Tokenizer, b []byte) (int, int) {
	start := len(b) - t.Remaining() - len(t.Value)
	if t.Delim != '{' && t.Delim != '[' {
		return start, start + len(t.Value)
	}
	d := t.Depth
	for t.Next() {
		if (t.Delim == '}' || t.Delim == ']') && t.Depth == d {
			break
		}
	}
	return start, len(b) - t.Remaining()
}

// unquote decodes a valid JSON string.
func unquote(v []byte) string {
	if bytes.IndexByte(v, '\\') < 0 {
		return string(v[1 : len(v)-1])
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return ""
	}
	return s
}

// checkDepth refuses JSON nested deeper than maxDepth before a recursive
// parser sees it.
func checkDepth(b []byte) string {
	if jsondepth.Exceeds(b, maxDepth) >= 0 {
		return fmt.Sprintf("JSON nested deeper than %d levels", maxDepth)
	}
	return ""
}
