package metadata

import (
	"bytes"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/segmentio/encoding/json"

	"github.com/lodge-mail/lodge/internal/jsondepth"
	"github.com/lodge-mail/lodge/internal/jsonstr"
)

func (st *state) parseJSON(data []byte) *Pack {
	if off := invalidUTF8(data); off >= 0 {
		st.fatal(fmt.Sprintf("invalid UTF-8 at %s: JSON metadata must be UTF-8 (RFC 7159)", where(data, off)))
		return nil
	}
	first := bytes.TrimLeft(data, " \t\r\n")
	if len(first) == 0 {
		st.fatal("empty metadata file")
		return nil
	}
	if off := jsondepth.Exceeds(data, st.lim.MaxDepth); off >= 0 {
		st.fatal(fmt.Sprintf("nested deeper than %s at %s", count(st.lim.MaxDepth, "level"), where(data, off)))
		return nil
	}
	// The depth is bounded now, so the validator's recursion is too.
	if !json.Valid(data) {
		st.fatal(syntaxError(data))
		return nil
	}
	if first[0] != '{' {
		st.fatal("the root must be a JSON object, got " + jsonstr.Kind(first))
		return nil
	}
	r := &jsonReader{st: st, src: data, t: json.NewTokenizer(data)}
	r.t.Next()
	return st.decodePack(r)
}

// syntaxError describes why data is not JSON, with its position. The
// standard library's validating scanner (which Unmarshal runs before
// decoding anything) gives the offset.
func syntaxError(data []byte) string {
	var v struct{}
	err := stdjson.Unmarshal(data, &v)
	var se *stdjson.SyntaxError
	if errors.As(err, &se) {
		off := int(se.Offset) - 1 // the offending byte
		if se.Offset >= int64(len(data)) && strings.Contains(se.Error(), "end of JSON input") {
			off = len(data)
		}
		off = max(off, 0)
		return fmt.Sprintf("invalid JSON at %s: %s", where(data, off), se.Error())
	}
	return "invalid JSON"
}

// where is "line L, column C" of byte offset off (columns count
// characters, from 1).
func where(data []byte, off int) string {
	if off > len(data) {
		off = len(data)
	}
	line := 1 + bytes.Count(data[:off], []byte{'\n'})
	start := bytes.LastIndexByte(data[:off], '\n') + 1
	col := 1 + utf8.RuneCount(data[start:off])
	return fmt.Sprintf("line %d, column %d", line, col)
}

// invalidUTF8 returns the offset of the first byte that is not valid
// UTF-8, or -1.
func invalidUTF8(b []byte) int {
	if utf8.Valid(b) {
		return -1
	}
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return -1
}

// jsonReader decodes with segmentio's tokenizer, positioned on the first
// token of the current value. The input has been validated, so the
// tokenizer's tokens are well formed; each method leaves it on the last
// token of the value it consumed.
type jsonReader struct {
	st  *state
	src []byte
	t   *json.Tokenizer
}

func (r *jsonReader) xml() bool { return false }

func (r *jsonReader) kind() string {
	if r.t.Delim != 0 {
		return jsonstr.Kind([]byte{byte(r.t.Delim)})
	}
	return jsonstr.Kind(r.t.Value)
}

func (r *jsonReader) null() bool { return r.t.Delim == 0 && r.t.Value.Null() }

func (r *jsonReader) skip() {
	if r.t.Delim != '{' && r.t.Delim != '[' {
		return
	}
	d := r.t.Depth
	for r.t.Next() {
		if (r.t.Delim == '}' || r.t.Delim == ']') && r.t.Depth == d {
			return
		}
	}
}

func (r *jsonReader) wrongType(want string) {
	got := r.kind()
	if got == "number" {
		got += " " + quoteNum(r.t.Value)
	}
	r.st.here("want " + want + ", got " + got)
	r.skip()
}

func quoteNum(v []byte) string {
	if len(v) > 30 {
		return string(v[:30]) + "…"
	}
	return string(v)
}

func (r *jsonReader) str(bool) (string, bool) {
	if r.t.Delim != 0 || !r.t.Value.String() {
		r.wrongType("a string")
		return "", false
	}
	s := string(jsonstr.Append(nil, r.t.Value, jsonstr.Replace))
	if !r.st.checkString(s) {
		return "", false
	}
	return s, true
}

func (r *jsonReader) integer() (int, bool) {
	v := r.t.Value
	if r.t.Delim != 0 || !v.Number() {
		r.wrongType("an integer")
		return 0, false
	}
	if bytes.ContainsAny(v, ".eE") {
		r.st.here("want an integer, got number " + quoteNum(v))
		return 0, false
	}
	n, err := strconv.ParseInt(string(v), 10, 32)
	if err != nil {
		r.st.here("integer " + quoteNum(v) + " is out of range")
		return 0, false
	}
	return int(n), true
}

func (r *jsonReader) boolean() (bool, bool) {
	v := r.t.Value
	if r.t.Delim != 0 || !(v.True() || v.False()) {
		r.wrongType("a boolean (true or false)")
		return false, false
	}
	return v.True(), true
}

func (r *jsonReader) object(fn func(key string)) {
	if r.t.Delim != '{' {
		r.wrongType("an object")
		return
	}
	d := r.t.Depth
	for !r.st.stop && r.t.Next() {
		if r.t.Delim == '}' && r.t.Depth == d {
			return
		}
		if r.t.Delim == ',' {
			r.t.Next()
		}
		key := string(jsonstr.Append(nil, r.t.Value, jsonstr.Replace))
		r.t.Next() // ':'
		r.t.Next()
		r.st.push(key)
		switch {
		case len(key) > r.st.lim.MaxStringBytes:
			r.st.path[len(r.st.path)-1].key = key[:min(len(key), 64)]
			r.st.here(fmt.Sprintf("key of %s exceeds the limit of %s", count(len(key), "byte"), count(r.st.lim.MaxStringBytes, "byte")))
			r.skip()
		default:
			fn(key)
		}
		r.st.pop()
	}
}

func (r *jsonReader) list(_ string, fn func(i int) bool) {
	if r.t.Delim != '[' {
		r.wrongType("an array")
		return
	}
	d := r.t.Depth
	for i := 0; !r.st.stop && r.t.Next(); i++ {
		if r.t.Delim == ']' && r.t.Depth == d {
			return
		}
		if r.t.Delim == ',' {
			r.t.Next()
		}
		r.st.pushIdx(i)
		more := fn(i)
		r.st.pop()
		if !more {
			r.skip() // the item fn left
			for r.t.Next() {
				if r.t.Delim == ']' && r.t.Depth == d {
					return
				}
			}
			return
		}
	}
}

func (r *jsonReader) textOr(container string) (string, bool, bool) {
	switch {
	case r.t.Delim == 0 && r.t.Value.String():
		return string(jsonstr.Append(nil, r.t.Value, jsonstr.Replace)), true, true
	case container == "array" && r.t.Delim == '[', container == "object" && r.t.Delim == '{':
		return "", false, true
	}
	r.wrongType("a string or an " + container)
	return "", false, false
}

func (r *jsonReader) pos() int { return len(r.src) - r.t.Remaining() }

func (r *jsonReader) mark() int { return r.pos() - len(r.t.Value) }

func (r *jsonReader) rawSince(m int) string { return string(r.src[m:r.pos()]) }
