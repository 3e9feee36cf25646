package rpc

import (
	"unicode/utf8"

	"github.com/lodge-mail/lodge/engine"
)

// The fast path answers the request almost every caller sends, one
// addr_check call with one address,
//
//	{"jsonrpc":"2.0","id":7,"method":"addr_check","params":{"address":[...]}}
//
// in one pass over the body: it validates and takes it apart at once,
// where the general path runs json.Valid, a depth scan and three
// tokenizers over the same bytes (about half of the handler's time for a
// single address, beside the check itself). It accepts only a subset of
// JSON that is valid beyond doubt: the four members in any order, each
// once; an id that is an integer or a string; params holding "address"
// (a string or an array of strings) and perhaps "detail" (true or false);
// strings without escapes or control characters, in valid UTF-8. Anything
// else, even valid, is declined before anything is written, and the
// general path answers it from the start. Its answer is byte for byte the
// general path's (FuzzFastPath holds it to that).

// fastCall is what parseFast finds in a body; its slices are the body's.
type fastCall struct {
	id      []byte // as sent: digits or a quoted string
	address []byte // the value of params.address, as sent
	str     bool   // address is a string (else st.lines holds its lines)
	detail  bool
}

// parseFast parses body (trimmed of white space) as the common call. It
// fills st.lines with the address's lines, viewing body. ok is false when
// body is not of the accepted shape.
func (s *Server) parseFast(body []byte, st *state) (c fastCall, ok bool) {
	if s.cfg.MaxDepth < 3 {
		return c, false // "params":{"address":[ is three deep
	}
	p := scanner{b: body}
	if !p.take('{') {
		return c, false
	}
	const (
		seenVersion = 1 << iota
		seenMethod
		seenID
		seenParams
		seenAll = seenVersion | seenMethod | seenID | seenParams
	)
	seen := 0
	for {
		p.space()
		key, ok := p.plainString()
		if !ok || !p.colon() {
			return c, false
		}
		var part int
		switch string(key) {
		case "jsonrpc":
			part, ok = seenVersion, p.literal(`"2.0"`)
		case "method":
			part, ok = seenMethod, p.literal(`"addr_check"`)
		case "id":
			part = seenID
			c.id, ok = p.id()
			ok = ok && len(c.id) <= s.cfg.MaxIDBytes
		case "params":
			part, ok = seenParams, p.params(&c, st)
		}
		if !ok || part == 0 || seen&part != 0 {
			return c, false
		}
		seen |= part
		p.space()
		if p.take(',') {
			continue
		}
		if !p.take('}') {
			return c, false
		}
		break
	}
	return c, seen == seenAll && p.i == len(p.b)
}

// scanner reads the accepted subset of JSON; i is the next byte.
type scanner struct {
	b []byte
	i int
}

func (p *scanner) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// take consumes c if it is next.
func (p *scanner) take(c byte) bool {
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// colon consumes white space, ':' and white space.
func (p *scanner) colon() bool {
	p.space()
	if !p.take(':') {
		return false
	}
	p.space()
	return true
}

// literal consumes lit if it is next.
func (p *scanner) literal(lit string) bool {
	if len(p.b)-p.i >= len(lit) && string(p.b[p.i:p.i+len(lit)]) == lit {
		p.i += len(lit)
		return true
	}
	return false
}

// plainString consumes a string without escapes or control characters,
// in valid UTF-8, and returns what is between its quotes.
func (p *scanner) plainString() ([]byte, bool) {
	if !p.take('"') {
		return nil, false
	}
	start, ascii := p.i, true
	for ; p.i < len(p.b); p.i++ {
		c := p.b[p.i]
		if plainASCII[c] {
			continue
		}
		switch {
		case c == '"':
			s := p.b[start:p.i]
			p.i++
			return s, ascii || utf8.Valid(s)
		case c < 0x20 || c == '\\':
			return nil, false
		default:
			ascii = false
		}
	}
	return nil, false
}

// plainASCII marks the bytes a plain string holds as they are: ASCII but
// the control characters, the quote and the backslash.
var plainASCII = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// id consumes an integer (JSON's grammar: no leading zero) or a plain
// string, and returns it as sent.
func (p *scanner) id() ([]byte, bool) {
	start := p.i
	if p.i < len(p.b) && p.b[p.i] == '"' {
		_, ok := p.plainString()
		return p.b[start:p.i], ok
	}
	p.take('-')
	digits := p.i
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		p.i++
	}
	n := p.i - digits
	if n == 0 || (n > 1 && p.b[digits] == '0') {
		return nil, false
	}
	return p.b[start:p.i], true
}

// params consumes {"address":...} with perhaps "detail":true|false.
func (p *scanner) params(c *fastCall, st *state) bool {
	if !p.take('{') {
		return false
	}
	haveAddress, haveDetail := false, false
	for {
		p.space()
		key, ok := p.plainString()
		if !ok || !p.colon() {
			return false
		}
		switch string(key) {
		case "address":
			if haveAddress {
				return false
			}
			haveAddress = true
			start := p.i
			if c.str = p.i < len(p.b) && p.b[p.i] == '"'; c.str {
				_, ok = p.plainString()
			} else {
				ok = p.lines(st)
			}
			c.address = p.b[start:p.i]
		case "detail":
			if haveDetail {
				return false
			}
			haveDetail = true
			if c.detail = p.literal("true"); !c.detail {
				ok = p.literal("false")
			}
		default:
			return false
		}
		if !ok {
			return false
		}
		p.space()
		if p.take(',') {
			continue
		}
		return p.take('}') && haveAddress
	}
}

// lines consumes an array of plain strings into st.lines, at most
// maxLinesKept of them.
func (p *scanner) lines(st *state) bool {
	st.lines = st.lines[:0]
	if !p.take('[') {
		return false
	}
	p.space()
	if p.take(']') {
		return true
	}
	for len(st.lines) < maxLinesKept {
		line, ok := p.plainString()
		if !ok {
			return false
		}
		st.lines = append(st.lines, bytesString(line))
		p.space()
		if p.take(']') {
			return true
		}
		if !p.take(',') {
			return false
		}
		p.space()
	}
	return false
}

// answerFast appends the response to the call parseFast found, as
// handleOne would.
func (s *Server) answerFast(dst []byte, c fastCall, st *state) (out []byte) {
	start := len(dst)
	s.calls.Inc()
	defer s.recoverCall(&out, nil, dst, start, st, st.flushes)
	st.budget-- // MaxRequestAddresses is at least 1
	dst = appendHead(dst, c.id)
	dst = append(dst, `"result":`...)
	var r engine.Result
	if c.str {
		r = s.eng.CheckString(bytesString(c.address[1:len(c.address)-1]), c.detail)
	} else {
		r = s.eng.Check(st.lines, c.detail)
	}
	dst = s.appendResult(dst, c.address, r, c.detail)
	return append(dst, '}')
}
