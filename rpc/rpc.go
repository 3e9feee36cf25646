package rpc

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/VictoriaMetrics/metrics"
	"github.com/segmentio/encoding/json"

	"github.com/lodge-mail/lodge/engine"
	"github.com/lodge-mail/lodge/internal/jsondepth"
	"github.com/lodge-mail/lodge/internal/jsonstr"
)

// Standard JSON-RPC 2.0 error codes.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

// Config holds the limits of the interface. The zero value means the
// documented defaults.
type Config struct {
	// MaxAddresses is the most addresses one call may carry (default
	// 10,000); more is error -32602.
	MaxAddresses int
	// MaxRequestAddresses is the most addresses one request body may
	// carry, the calls of a batch (notifications included) counted
	// together in order (default 10,000, or MaxAddresses if larger). The
	// call in which the count passes it, and every addr_check call after
	// it, get error -32602; the calls before it are answered. It bounds
	// the work and the answer of one HTTP request.
	MaxRequestAddresses int
	// MaxBatch is the most requests one batch may hold (default 1,000);
	// more is error -32600.
	MaxBatch int
	// MaxDepth is the deepest JSON nesting accepted (default 32); deeper is
	// error -32700.
	MaxDepth int
	// MaxIDBytes is the longest id accepted, in bytes of JSON (default 256);
	// longer is error -32600.
	MaxIDBytes int
}

func (c Config) withDefaults() Config {
	if c.MaxAddresses <= 0 {
		c.MaxAddresses = 10_000
	}
	if c.MaxRequestAddresses <= 0 {
		c.MaxRequestAddresses = max(10_000, c.MaxAddresses)
	}
	if c.MaxBatch <= 0 {
		c.MaxBatch = 1_000
	}
	if c.MaxDepth <= 0 {
		c.MaxDepth = 32
	}
	if c.MaxIDBytes <= 0 {
		c.MaxIDBytes = 256
	}
	return c
}

// Method is a JSON-RPC method other than addr_check that a transport adds
// (the upload interface's status queries). It appends the JSON result to
// dst, or returns an error code and message.
type Method func(dst []byte, params []byte, p Principal) (out []byte, code int, msg string)

// Documented is a Method with its OpenRPC method object, for Register.
type Documented struct {
	Handle Method
	Doc    string
}

// Principal is who makes a call, as the transport authenticated it.
type Principal struct {
	Account string
	User    string
}

// Server answers JSON-RPC request bodies.
type Server struct {
	eng     *engine.Engine
	cfg     Config
	methods map[string]Method
	docs    []methodDoc // OpenRPC objects of the registered methods, by name
	openRPC []byte      // what rpc.discover answers
	pool    sync.Pool
	// flushBytes is FlushBytes; tests lower it to write after every result
	flushBytes int
	// noFast turns the fast path off, for tests comparing the two paths
	noFast bool

	verdicts  [5]*metrics.Counter // by engine.Status
	calls     *metrics.Counter
	errors    *metrics.Counter
	addresses *metrics.Counter
}

// New returns a Server judging addresses with e.
func New(e *engine.Engine, cfg Config, set *metrics.Set) *Server {
	if set == nil {
		set = metrics.NewSet()
	}
	s := &Server{eng: e, cfg: cfg.withDefaults(), methods: map[string]Method{}, openRPC: openRPC, flushBytes: FlushBytes}
	s.pool.New = func() any { return &state{lines: make([]string, 0, 16), buf: make([]byte, 0, 1024)} }
	for _, st := range engine.Statuses {
		s.verdicts[st] = set.GetOrCreateCounter(fmt.Sprintf(`lodge_addr_check_verdicts_total{status=%q}`, st.String()))
	}
	s.calls = set.GetOrCreateCounter(`lodge_jsonrpc_calls_total`)
	s.errors = set.GetOrCreateCounter(`lodge_jsonrpc_errors_total`)
	s.addresses = set.GetOrCreateCounter(`lodge_addr_check_addresses_total`)
	return s
}

type methodDoc struct {
	name string
	doc  []byte
}

// Register adds a method; doc is its OpenRPC method object, which
// rpc.discover lists after addr_check. Call before serving. It refuses a
// name that is taken and a doc that is not a JSON object naming the method.
func (s *Server) Register(name string, m Method, doc string) error {
	if _, taken := s.methods[name]; taken || name == "addr_check" || strings.HasPrefix(name, "rpc.") {
		return fmt.Errorf("rpc: method %q is already defined", name)
	}
	var d struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal([]byte(doc), &d); err != nil || d.Name != name {
		return fmt.Errorf("rpc: method %q: its OpenRPC doc must be a JSON object with \"name\":%q", name, name)
	}
	s.methods[name] = m
	i := sort.Search(len(s.docs), func(i int) bool { return s.docs[i].name >= name })
	s.docs = slices.Insert(s.docs, i, methodDoc{name, []byte(doc)})
	// rebuild the document: addr_check, the registered methods, rpc.discover
	at := bytes.Index(openRPC, []byte(`{"name":"rpc.discover"`))
	out := append([]byte{}, openRPC[:at]...)
	for _, d := range s.docs {
		out = append(append(out, d.doc...), ',')
	}
	s.openRPC = append(out, openRPC[at:]...)
	return nil
}

// state is the pooled working memory of one Handle call.
type state struct {
	btok  json.Tokenizer // the batch
	tok   json.Tokenizer // one request
	ptok  json.Tokenizer
	lines []string
	buf   []byte // unescaped strings of the address being judged

	budget int // addresses the request may still carry (MaxRequestAddresses)

	// Streaming (HandleTo): the response is written to w in pieces once it
	// holds FlushBytes, where nothing written can have to be taken back.
	w        io.Writer
	flushAt  int   // Server.flushBytes
	flushes  int   // pieces written
	err      error // w's error, or a panic after a piece of the call was written
	replying bool  // the call being answered has an id (a notification's results are dropped)
}

// FlushBytes is about how much of a response HandleTo holds before it
// writes it.
const FlushBytes = 64 << 10

// Handle answers one request body and appends the response body to dst. It
// returns false when there is nothing to send (only notifications).
func (s *Server) Handle(dst, body []byte, p Principal) (out []byte, respond bool) {
	out, respond, _ = s.handle(dst, body, p, nil)
	return out, respond
}

// HandleTo answers one request body as Handle does, with the same
// response, but writes it to w as it is made, in pieces of about
// FlushBytes, rather than holding all of it: for large bodies, whose
// answers are large. Before a piece of a call's result is written, the
// call is checked whole (its addresses' count and types), so that no
// error can take back what was written. buf is working memory, returned
// for reuse. It returns false, having written nothing, when there is
// nothing to send (only notifications). An error is w's, which ends the
// work, or a panic after part of a call was written; either way what was
// written is not a whole response, and the caller must not end it as if
// it were (close the connection, or cut the chunked body short).
func (s *Server) HandleTo(w io.Writer, buf, body []byte, p Principal) (out []byte, respond bool, err error) {
	out, respond, err = s.handle(buf[:0], body, p, w)
	if err == nil && respond && len(out) > 0 {
		_, err = w.Write(out)
	}
	return out[:0], respond, err
}

func (s *Server) handle(dst, body []byte, p Principal, w io.Writer) (out []byte, respond bool, err error) {
	st := s.pool.Get().(*state)
	st.budget = s.cfg.MaxRequestAddresses
	st.w, st.flushAt, st.flushes, st.err = w, s.flushBytes, 0, nil
	tokenized := false
	defer func() {
		if tokenized { // let go of body: resetting costs as much as the fast path's parse
			st.btok.Reset(nil)
			st.tok.Reset(nil)
			st.ptok.Reset(nil)
		}
		st.w, st.err = nil, nil
		if cap(st.buf) <= 1<<20 && cap(st.lines) <= 4096 {
			clear(st.lines) // the fast path's lines view body: let go of it
			st.lines = st.lines[:0]
			s.pool.Put(st)
		}
	}()
	start := len(dst)
	body = bytes.TrimSpace(body)
	if !s.noFast {
		if c, ok := s.parseFast(body, st); ok {
			return s.answerFast(dst, c, st), true, nil
		}
	}
	tokenized = true
	if err := checkDepth(body, s.cfg.MaxDepth); err != "" {
		return appendError(dst, nil, CodeParseError, err), true, nil
	}
	if !json.Valid(body) {
		return appendError(dst, nil, CodeParseError, "parse error: the body is not valid JSON"), true, nil
	}
	if body[0] != '[' {
		dst, respond = s.handleOne(dst, body, st, p)
		return dst, respond, st.err
	}
	// batch: its size is known before any of it is answered, so that a
	// streamed answer never has to be replaced by this error
	switch n := batchLen(body, s.cfg.MaxBatch); {
	case n == 0:
		return appendError(dst, nil, CodeInvalidRequest, "invalid request: empty batch"), true, nil
	case n > s.cfg.MaxBatch:
		return appendError(dst, nil, CodeInvalidRequest, fmt.Sprintf("invalid request: a batch may hold at most %d requests", s.cfg.MaxBatch)), true, nil
	}
	t := &st.btok
	t.Reset(body)
	t.Next() // '['
	answered := 0
	dst = append(dst, '[')
	for t.Next() {
		if t.Delim == ']' && t.Depth == 0 {
			break
		}
		if t.Delim == ',' {
			continue
		}
		b, e := valueSpan(t, body)
		mark := len(dst)
		if answered > 0 {
			dst = append(dst, ',')
		}
		var r bool
		if dst, r = s.handleOne(dst, body[b:e], st, p); r {
			answered++
		} else {
			dst = dst[:mark] // a notification: nothing of it was written
		}
		if st.err != nil {
			return dst, true, st.err
		}
		if answered > 0 {
			dst = st.flush(dst)
		}
	}
	if answered == 0 {
		return dst[:start], false, nil // only notifications
	}
	return append(dst, ']'), true, st.err
}

// flush writes dst when streaming and it holds FlushBytes or more, and
// returns it emptied; else it returns dst as it is. Call it only where
// nothing written can have to be taken back.
func (st *state) flush(dst []byte) []byte {
	if st.w == nil || len(dst) < st.flushAt || st.err != nil {
		return dst
	}
	if _, err := st.w.Write(dst); err != nil {
		st.err = err
	}
	st.flushes++
	return dst[:0]
}

// batchLen counts the members of b, a valid JSON array, up to one past
// max. A byte scan: it costs little beside json.Valid.
func batchLen(b []byte, max int) int {
	n, depth := 0, 0
	for i := 0; i < len(b) && n <= max; i++ {
		switch c := b[i]; c {
		case '"':
			if depth == 1 && n == 0 {
				n = 1
			}
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		case '[', '{':
			if depth == 1 && n == 0 {
				n = 1
			}
			depth++
		case ']', '}':
			depth--
		case ',':
			if depth == 1 {
				n++
			}
		case ' ', '\t', '\n', '\r':
		default:
			if depth == 1 && n == 0 {
				n = 1 // a number, true, false or null
			}
		}
	}
	return n
}

// handleOne answers one request object (or any other value in its place).
func (s *Server) handleOne(dst, req []byte, st *state, p Principal) (out []byte, respond bool) {
	start := len(dst)
	flushes := st.flushes
	s.calls.Inc()
	defer s.recoverCall(&out, &respond, dst, start, st, flushes)
	if len(req) == 0 || req[0] != '{' {
		s.errors.Inc()
		return appendError(dst, nil, CodeInvalidRequest, "invalid request: want a JSON object"), true
	}
	var (
		id                  []byte
		hasID               bool
		version, method     []byte
		params              []byte
		badVersion, badMeth bool
	)
	t := &st.tok
	t.Reset(req)
	t.Next() // '{'
	for t.Next() {
		if t.Depth == 0 && t.Delim == '}' {
			break
		}
		if !t.IsKey {
			continue
		}
		key := t.Value
		t.Next() // ':'
		t.Next() // value
		b, e := valueSpan(t, req)
		v := req[b:e]
		switch string(key) {
		case `"jsonrpc"`:
			version = v
		case `"method"`:
			if v[0] != '"' {
				badMeth = true
			}
			method = v
		case `"id"`:
			id, hasID = v, true
		case `"params"`:
			params = v
		}
	}
	if string(version) != `"2.0"` {
		badVersion = true
	}
	if hasID {
		switch {
		case len(id) > s.cfg.MaxIDBytes:
			s.errors.Inc()
			return appendError(dst, nil, CodeInvalidRequest, fmt.Sprintf("invalid request: id longer than %d bytes", s.cfg.MaxIDBytes)), true
		case id[0] == '{' || id[0] == '[' || id[0] == 't' || id[0] == 'f':
			s.errors.Inc()
			return appendError(dst, nil, CodeInvalidRequest, "invalid request: id must be a string, a number or null"), true
		}
	}
	if badVersion {
		s.errors.Inc()
		return appendError(dst, id, CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`), true
	}
	if method == nil || badMeth {
		s.errors.Inc()
		return appendError(dst, id, CodeInvalidRequest, `invalid request: "method" must be a string`), true
	}
	if params != nil && params[0] != '{' && params[0] != '[' {
		s.errors.Inc()
		return appendError(dst, id, CodeInvalidRequest, `invalid request: "params" must be an object or an array`), true
	}
	if !hasID {
		// A notification: do the work, send nothing.
		if string(method) == `"addr_check"` {
			mark := len(dst)
			st.replying = false
			dst, _, _ = s.addrCheckResult(dst, params, st)
			return dst[:mark], false
		}
		return dst, false
	}
	mark := len(dst)
	dst = appendHead(dst, id)
	switch string(method) {
	case `"addr_check"`:
		var code int
		var msg string
		dst = append(dst, `"result":`...)
		st.replying = true
		if dst, code, msg = s.addrCheckResult(dst, params, st); code != 0 {
			s.errors.Inc()
			return appendError(dst[:mark], id, code, msg), true
		}
	case `"rpc.discover"`:
		dst = append(dst, `"result":`...)
		dst = append(dst, s.openRPC...)
	default:
		m, ok := s.methods[unquote(method)]
		if !ok {
			s.errors.Inc()
			return appendError(dst[:mark], id, CodeMethodNotFound, "method not found: "+unquote(method)), true
		}
		dst = append(dst, `"result":`...)
		var code int
		var msg string
		if dst, code, msg = m(dst, params, p); code != 0 {
			s.errors.Inc()
			return appendError(dst[:mark], id, code, msg), true
		}
	}
	return append(dst, '}'), true
}

// recoverCall, deferred by the handler of a call that began at dst[start:]
// when st had written flushes pieces, answers a panic in it with an
// internal error in place of what it wrote, and sets *respond.
func (s *Server) recoverCall(out *[]byte, respond *bool, dst []byte, start int, st *state, flushes int) {
	r := recover()
	if r == nil {
		return
	}
	s.errors.Inc()
	*out = appendError(dst[:start], nil, CodeInternalError, "internal error")
	if respond != nil {
		*respond = true
	}
	slog.Error("jsonrpc: panic", "err", r, "stack", string(debug.Stack()))
	if st.flushes != flushes && st.err == nil {
		// part of this call's result is written: it cannot be replaced by
		// the error
		st.err = fmt.Errorf("rpc: internal error after part of the response was written: %v", r)
	}
}

// appendHead writes `{"jsonrpc":"2.0","id":ID,`.
func appendHead(dst, id []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	if id == nil {
		dst = append(dst, "null"...)
	} else {
		dst = appendEcho(dst, id)
	}
	return append(dst, ',')
}

// appendError writes a complete error response.
func appendError(dst, id []byte, code int, msg string) []byte {
	dst = appendHead(dst, id)
	dst = append(dst, `"error":{"code":`...)
	dst = strconv.AppendInt(dst, int64(code), 10)
	dst = append(dst, `,"message":`...)
	dst = json.AppendEscape(dst, msg, 0)
	return append(dst, "}}"...)
}

// unquote returns the contents of a JSON string token (escapes kept as
// written: method names have none).
func unquote(v []byte) string {
	if len(v) >= 2 && v[0] == '"' {
		return string(v[1 : len(v)-1])
	}
	return string(v)
}

// valueSpan returns the byte range in b of the value whose first token t is
// positioned on, consuming the tokens of a nested array or object.
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

// checkDepth rejects nesting deeper than max before anything recursive
// sees the body, and an empty body.
func checkDepth(b []byte, max int) string {
	if len(b) == 0 {
		return "parse error: empty body"
	}
	if jsondepth.Exceeds(b, max) >= 0 {
		return fmt.Sprintf("parse error: JSON nested deeper than %d levels", max)
	}
	return ""
}

// appendEcho appends the JSON value v (part of a validated body) as it
// was sent, except for what would make the response no valid JSON text
// (RFC 8259 section 8.1: UTF-8; section 8.2 and I-JSON: no lone
// surrogates): each byte that is not part of valid UTF-8 and each \u escape
// of a lone surrogate is written \ufffd, as encoding/json would write the
// decoded value. Valid input is appended unchanged, without allocating.
func appendEcho(dst, v []byte) []byte {
	last := 0
	for i := 0; i < len(v); {
		c := v[i]
		if c < utf8.RuneSelf && c != '\\' {
			i++
			continue
		}
		if c == '\\' {
			if i+5 >= len(v) || v[i+1] != 'u' {
				i += 2 // a one-character escape (validated: never cut short)
				continue
			}
			r := jsonstr.Hex4(v[i+2 : i+6])
			if !utf16.IsSurrogate(r) {
				i += 6
				continue
			}
			if i+11 < len(v) && v[i+6] == '\\' && v[i+7] == 'u' && utf16.DecodeRune(r, jsonstr.Hex4(v[i+8:i+12])) != utf8.RuneError {
				i += 12 // a surrogate pair
				continue
			}
			dst = append(append(dst, v[last:i]...), `\ufffd`...)
			i += 6
			last = i
			continue
		}
		if r, size := utf8.DecodeRune(v[i:]); r != utf8.RuneError || size > 1 {
			i += size
			continue
		}
		dst = append(append(dst, v[last:i]...), `\ufffd`...)
		i++
		last = i
	}
	return append(dst, v[last:]...)
}

// bytesString views b as a string without copying; the string must not
// outlive b's contents.
func bytesString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}
