package rpc

import (
	"fmt"

	"github.com/segmentio/encoding/json"

	"github.com/lodge-mail/lodge/engine"
	"github.com/lodge-mail/lodge/internal/jsonstr"
)

// maxLinesKept bounds the lines of one address passed to the engine: more
// than engine.MaxComponents is invalid whatever they hold, and the engine
// only needs to know there were more.
const maxLinesKept = 64

// addrCheckResult appends the result of an addr_check call: one result
// object for params.address, an array for params.addresses.
func (s *Server) addrCheckResult(dst, params []byte, st *state) ([]byte, int, string) {
	if params == nil {
		return dst, CodeInvalidParams, `invalid params: addr_check needs params with "address" or "addresses"`
	}
	if params[0] != '{' {
		return dst, CodeInvalidParams, `invalid params: params must be an object with "address" or "addresses"`
	}
	var address, addresses, detail []byte
	t := &st.ptok
	t.Reset(params)
	t.Next()
	for t.Next() {
		if t.Depth == 0 && t.Delim == '}' {
			break
		}
		if !t.IsKey {
			continue
		}
		key := t.Value
		t.Next() // ':'
		t.Next()
		b, e := valueSpan(t, params)
		switch string(key) {
		case `"address"`:
			address = params[b:e]
		case `"addresses"`:
			addresses = params[b:e]
		case `"detail"`:
			detail = params[b:e]
		}
	}
	withDetail := false
	switch string(detail) {
	case "", "false", "null":
	case "true":
		withDetail = true
	default:
		return dst, CodeInvalidParams, `invalid params: "detail" must be true or false`
	}
	switch {
	case address != nil && addresses != nil:
		return dst, CodeInvalidParams, `invalid params: give "address" or "addresses", not both`
	case address == nil && addresses == nil:
		return dst, CodeInvalidParams, `invalid params: addr_check needs "address" (one address) or "addresses" (an array of them)`
	case address != nil:
		if st.budget == 0 {
			return dst, CodeInvalidParams, s.budgetMessage()
		}
		st.budget--
		out, msg := s.judge(dst, address, st, withDetail)
		if msg != "" {
			return dst, CodeInvalidParams, "invalid params: address " + msg
		}
		return out, 0, ""
	}
	if addresses[0] != '[' {
		return dst, CodeInvalidParams, `invalid params: "addresses" must be an array`
	}
	// Streaming an answered call, its results are written as they come:
	// first the call is checked whole, so that no error comes after.
	stream := st.w != nil && st.replying
	if stream {
		if code, msg := s.checkAddresses(addresses, st); code != 0 {
			return dst, code, msg
		}
	}
	mark := len(dst)
	dst = append(dst, '[')
	t.Reset(addresses)
	t.Next() // '['
	n := 0
	for t.Next() {
		if t.Depth == 0 && t.Delim == ']' {
			break
		}
		if t.Delim == ',' {
			continue
		}
		b, e := valueSpan(t, addresses)
		n++
		if !stream {
			if code, msg := s.countAddress(n, st); code != 0 {
				return dst[:mark], code, msg
			}
		}
		if n > 1 {
			dst = append(dst, ',')
		}
		var msg string
		if dst, msg = s.judge(dst, addresses[b:e], st, withDetail); msg != "" {
			return dst[:mark], CodeInvalidParams, fmt.Sprintf("invalid params: addresses[%d] %s", n-1, msg)
		}
		switch {
		case !st.replying:
			dst = dst[:mark+1] // a notification's results are dropped as they come
		case stream:
			if dst = st.flush(dst); st.err != nil {
				return dst, 0, "" // w failed: the work ends, the answer is lost anyway
			}
		}
	}
	return append(dst, ']'), 0, ""
}

// countAddress counts the nth address of a call against the call's and
// the request's limits.
func (s *Server) countAddress(n int, st *state) (int, string) {
	if n > s.cfg.MaxAddresses {
		return CodeInvalidParams, fmt.Sprintf("invalid params: more than %d addresses in one call", s.cfg.MaxAddresses)
	}
	if st.budget == 0 {
		return CodeInvalidParams, s.budgetMessage()
	}
	st.budget--
	return 0, ""
}

func (s *Server) budgetMessage() string {
	return fmt.Sprintf("invalid params: more than %d addresses in one HTTP request (the calls of a batch count together): send the rest in another request", s.cfg.MaxRequestAddresses)
}

// checkAddresses finds, before any address of the array is judged, the
// error the call would get as they are judged: too many addresses, or one
// of the wrong type. The addresses are counted against the request's
// limit as judging them would count them.
func (s *Server) checkAddresses(addresses []byte, st *state) (int, string) {
	t := &st.ptok
	t.Reset(addresses)
	t.Next() // '['
	n := 0
	for t.Next() {
		if t.Depth == 0 && t.Delim == ']' {
			break
		}
		if t.Delim == ',' {
			continue
		}
		n++
		if code, msg := s.countAddress(n, st); code != 0 {
			return code, msg
		}
		b, e := valueSpan(t, addresses)
		if msg := addressTypeError(addresses[b:e], &st.tok); msg != "" {
			return CodeInvalidParams, fmt.Sprintf("invalid params: addresses[%d] %s", n-1, msg)
		}
	}
	return 0, ""
}

// addressTypeError says what judge would find wrong with the type of an
// address value, or "".
func addressTypeError(v []byte, t *json.Tokenizer) string {
	switch v[0] {
	case '"':
		return ""
	case '[':
		t.Reset(v)
		t.Next()
		n := 0
		for t.Next() {
			if t.Depth == 0 && t.Delim == ']' {
				break
			}
			if t.Delim == ',' {
				continue
			}
			if t.Delim != 0 || len(t.Value) == 0 || t.Value[0] != '"' {
				return fmt.Sprintf("line %d is not a string", n)
			}
			n++
		}
		return ""
	}
	return "must be a string or an array of strings"
}

// judge appends the result object for one address value (a JSON string or
// array of strings), or returns what is wrong with its type.
func (s *Server) judge(dst, v []byte, st *state, detail bool) ([]byte, string) {
	var r engine.Result
	st.buf = st.buf[:0]
	switch v[0] {
	case '"':
		st.buf = jsonstr.Append(st.buf, v, jsonstr.KeepInvalid)
		r = s.eng.CheckString(bytesString(st.buf), detail)
	case '[':
		// collect each line's end offset, then view the lines as strings
		// once the buffer has stopped growing
		t := &st.tok
		t.Reset(v)
		t.Next()
		var ends [maxLinesKept]int
		n := 0
		for t.Next() {
			if t.Depth == 0 && t.Delim == ']' {
				break
			}
			if t.Delim == ',' {
				continue
			}
			if t.Delim != 0 || len(t.Value) == 0 || t.Value[0] != '"' {
				return dst, fmt.Sprintf("line %d is not a string", n)
			}
			if n < maxLinesKept {
				st.buf = jsonstr.Append(st.buf, t.Value, jsonstr.KeepInvalid)
				ends[n] = len(st.buf)
			}
			n++
		}
		st.lines = st.lines[:0]
		prev := 0
		for i := 0; i < n && i < maxLinesKept; i++ {
			st.lines = append(st.lines, bytesString(st.buf[prev:ends[i]]))
			prev = ends[i]
		}
		for i := maxLinesKept; i < n; i++ {
			st.lines = append(st.lines, "x") // counted, never read
		}
		r = s.eng.Check(st.lines, detail)
	default:
		return dst, "must be a string or an array of strings"
	}
	return s.appendResult(dst, v, r, detail), ""
}

// appendResult counts the verdict r on the address value v and appends
// its result object.
func (s *Server) appendResult(dst, v []byte, r engine.Result, detail bool) []byte {
	s.addresses.Inc()
	if int(r.Status) < len(s.verdicts) && s.verdicts[r.Status] != nil {
		s.verdicts[r.Status].Inc()
	}
	dst = append(dst, `{"status":"`...)
	dst = append(dst, r.Status.String()...)
	dst = append(dst, `","nation":`...)
	dst = json.AppendEscape(dst, r.Nation, 0)
	dst = append(dst, `,"address":`...)
	dst = appendEcho(dst, v)
	if r.Message != "" {
		dst = append(dst, `,"message":`...)
		dst = json.AppendEscape(dst, r.Message, 0)
	}
	if detail && r.Detail != nil {
		dst = append(dst, `,"detail":`...)
		var err error
		if dst, err = json.Append(dst, r.Detail, 0); err != nil {
			dst = append(dst, "null"...)
		}
	}
	return append(dst, '}')
}
