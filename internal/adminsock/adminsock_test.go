package adminsock

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/lodge-mail/lodge/internal/pebblelog"
)

var (
	errGone = errors.New("gone")
	errFull = errors.New("full")
)

// counter is a small service with a state, its operations and kinds: what
// a part of lodge registers.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) ops() Ops {
	type nameArgs struct {
		Name string `json:"name"`
		By   int    `json:"by"`
	}
	return Ops{
		Handlers: map[string]Handler{
			"counter.add": func(raw json.RawMessage) (any, error) {
				var a nameArgs
				if err := DecodeArgs("counter.add", raw, &a); err != nil {
					return nil, err
				}
				if a.Name == "" {
					return nil, BadRequest("args of counter.add: name missing")
				}
				c.mu.Lock()
				defer c.mu.Unlock()
				if c.n[a.Name]+a.By > 100 {
					return nil, fmt.Errorf("counter %s: %w at 100", a.Name, errFull)
				}
				c.n[a.Name] += a.By
				return c.n[a.Name], nil
			},
			"counter.get": func(raw json.RawMessage) (any, error) {
				var a nameArgs
				if err := DecodeArgs("counter.get", raw, &a); err != nil {
					return nil, err
				}
				c.mu.Lock()
				defer c.mu.Unlock()
				v, ok := c.n[a.Name]
				if !ok {
					return nil, fmt.Errorf("counter %q: %w", a.Name, errGone)
				}
				return v, nil
			},
		},
		Kinds: []Kind{{Name: "gone", Err: errGone}, {Name: "full", Err: errFull}},
	}
}

type fixture struct {
	sock string
	srv  *Server
	c    *counter
	stop func() error
}

// serve starts a server with the counter's operations and two of its
// own (a panic and a large answer).
func serve(t *testing.T, cfg Config) *fixture {
	t.Helper()
	fx := &fixture{sock: Path(t.TempDir()), srv: NewServer(cfg), c: &counter{n: map[string]int{}}}
	fx.srv.HandleOps(fx.c.ops())
	fx.srv.Handle("boom", func(json.RawMessage) (any, error) { panic("kaboom") })
	fx.srv.Handle("big", func(raw json.RawMessage) (any, error) {
		var a struct{ N int }
		if err := DecodeArgs("big", raw, &a); err != nil {
			return nil, err
		}
		return strings.Repeat("x", a.N), nil
	})
	stop, err := fx.srv.Serve(context.Background(), fx.sock)
	if err != nil {
		t.Fatal(err)
	}
	fx.stop = stop
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	return fx
}

func mustNil(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestRoundTrip(t *testing.T) {
	fx := serve(t, Config{})
	kinds := fx.c.ops().Kinds
	c, p, err := Dial(fx.sock, kinds...)
	mustNil(t, err)
	if want := []string{"big", "boom", "counter.add", "counter.get", "ping"}; !reflect.DeepEqual(p.Ops, want) || p.Protocol != Protocol {
		t.Errorf("ping = %+v, want protocol %d and ops %q", p, Protocol, want)
	}
	if !p.Serves("counter.add", "ping") || p.Serves("counter.add", "counter.sub") {
		t.Errorf("Serves is wrong for %q", p.Ops)
	}
	var n int
	mustNil(t, c.Call("counter.add", map[string]any{"name": "a", "by": 40}, &n))
	mustNil(t, c.Call("counter.add", map[string]any{"name": "a", "by": 2}, &n))
	if n != 42 {
		t.Errorf("counter.add gave %d, want 42", n)
	}
	mustNil(t, c.Call("counter.get", map[string]any{"name": "a"}, &n))
	if n != 42 || fx.c.n["a"] != 42 {
		t.Errorf("counter.get gave %d (%v)", n, fx.c.n)
	}
	mustNil(t, c.Call("counter.add", map[string]any{"name": "a", "by": 1}, nil)) // result dropped

	// Errors come back with the server's text, wrapping the sentinel of
	// their kind.
	f := func(op string, args any, wantErr error, wantKind, wantText string) {
		t.Helper()
		err := c.Call(op, args, &n)
		var e *Error
		if !errors.As(err, &e) || e.Kind != wantKind || e.Op != op || !strings.Contains(err.Error(), wantText) {
			t.Errorf("%s %v: %v (%#v), want kind %s saying %q", op, args, err, e, wantKind, wantText)
		}
		if wantErr != nil && !errors.Is(err, wantErr) {
			t.Errorf("%s %v: %v does not wrap %v", op, args, err, wantErr)
		}
		if wantErr == nil && errors.Unwrap(err) != nil {
			t.Errorf("%s %v: %v wraps %v", op, args, err, errors.Unwrap(err))
		}
	}
	f("counter.get", map[string]any{"name": "zz"}, errGone, "gone", `counter "zz": gone`)
	f("counter.add", map[string]any{"name": "a", "by": 100}, errFull, "full", "counter a: full at 100")
	f("counter.add", map[string]any{"by": 1}, ErrBadRequest, KindBadRequest, "name missing")
	f("counter.add", map[string]any{"name": "a", "evil": 1}, ErrBadRequest, KindBadRequest, `unknown field "evil"`)
	f("counter.sub", nil, ErrBadRequest, KindBadRequest, `unknown op "counter.sub"`)
	f("boom", nil, nil, KindInternal, "boom failed: panic: kaboom")
	f("ping", map[string]int{"x": 1}, ErrBadRequest, KindBadRequest, `unknown field "x"`)

	// A client without the kinds gets the text, wrapping nothing.
	plain := &Client{Path: fx.sock}
	err = plain.Call("counter.get", map[string]any{"name": "zz"}, nil)
	if err == nil || errors.Is(err, errGone) || err.Error() != `counter "zz": gone` {
		t.Errorf("without kinds: %v", err)
	}

	// An answer over the client's limit is refused by the client; one over
	// the server's is answered with an error instead.
	small := &Client{Path: fx.sock, MaxResponse: 1000}
	mustNil(t, small.Call("big", map[string]int{"n": 900}, nil))
	if err := small.Call("big", map[string]int{"n": 2000}, nil); err == nil || IsServerError(err) || !strings.Contains(err.Error(), "line longer than 1000 bytes") {
		t.Errorf("an answer over the client's limit: %v", err)
	}
	if IsServerError(errors.New("x")) || !IsServerError(c.Call("boom", nil, nil)) {
		t.Error("IsServerError is wrong")
	}
}

func TestMaxResponse(t *testing.T) {
	fx := serve(t, Config{MaxResponse: 1 << 10})
	c := &Client{Path: fx.sock}
	var s string
	mustNil(t, c.Call("big", map[string]int{"n": 900}, &s))
	if len(s) != 900 {
		t.Errorf("got %d bytes", len(s))
	}
	err := c.Call("big", map[string]int{"n": 1000}, &s)
	if err == nil || !strings.Contains(err.Error(), "over the 1024-byte limit of an answer") {
		t.Errorf("a result over the server's limit: %v", err)
	}
}

// raw sends payload on a connection of its own, half-closes it and
// returns the answer line, or nil when the server closed without one.
func raw(t *testing.T, sock string, payload []byte) []byte {
	t.Helper()
	conn, err := net.Dial("unix", sock)
	mustNil(t, err)
	defer conn.Close()
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		conn.Write(payload) // the server may stop reading early
		conn.(*net.UnixConn).CloseWrite()
	}()
	// A server that stops reading early resets the connection after its
	// answer: read up to the newline only.
	line, err := bufio.NewReader(conn).ReadBytes('\n')
	<-wrote
	if errors.Is(err, io.EOF) && len(line) == 0 {
		return nil
	}
	if err != nil {
		t.Fatalf("reading the answer: %q %v", line, err)
	}
	return line
}

// TestHostile sends what a confused or malicious local client might:
// every request gets an answer of the kind given (or ok), never a long
// one, and the server goes on serving.
func TestHostile(t *testing.T) {
	fx := serve(t, Config{})
	silent, err := net.Dial("unix", fx.sock) // connects and says nothing: holds nobody up
	mustNil(t, err)
	defer silent.Close()

	mb := strings.Repeat("A", 1<<20)
	pad := func(req string, size int) string { // req padded with spaces to size bytes with its newline
		return req + strings.Repeat(" ", size-len(req)-1) + "\n"
	}
	get := `{"op":"counter.get","args":{"name":"a"}}`
	f := func(name, payload, kind string) {
		t.Helper()
		line := raw(t, fx.sock, []byte(payload))
		var resp Response
		if err := json.Unmarshal(line, &resp); err != nil {
			t.Errorf("%s: answer %q: %v", name, line, err)
		} else if kind == "" && (!resp.OK || resp.Kind != "" || resp.Error != "") {
			t.Errorf("%s: %+v, want ok", name, resp)
		} else if kind != "" && (resp.OK || resp.Kind != kind || resp.Error == "" || resp.Result != nil) {
			t.Errorf("%s: %+v, want an error of kind %s", name, resp, kind)
		}
		if len(line) > 1000 {
			t.Errorf("%s: an answer of %d bytes", name, len(line))
		}
		var n int
		if err := (&Client{Path: fx.sock}).Call("counter.get", map[string]string{"name": "a"}, &n); err != nil || n != 1 {
			t.Fatalf("after %s: %d %v", name, n, err)
		}
	}
	mustNil(t, (&Client{Path: fx.sock}).Call("counter.add", map[string]any{"name": "a", "by": 1}, nil))
	f("ok", get+"\n", "")
	f("no newline", get, "")
	f("CRLF", get+"\r\n", "")
	f("spaces around", "  "+get+"  \n", "")
	f("at the limit", pad(get, DefaultMaxRequest), "")
	f("one byte over the limit", pad(get, DefaultMaxRequest+1), KindBadRequest)
	f("1 MB line", mb+"\n", KindBadRequest)
	f("1 MB without newline", mb, KindBadRequest)
	f("1 MB argument", `{"op":"counter.get","args":{"name":"`+mb+`"}}`+"\n", KindBadRequest)
	f("garbage", "hello\n", KindBadRequest)
	f("binary", "\x00\xff\xfe\x80\n", KindBadRequest)
	f("invalid UTF-8 in op", "{\"op\":\"counter.get\xff\"}\n", KindBadRequest)
	f("blank line", "\n", KindBadRequest)
	f("null", "null\n", KindBadRequest)
	f("number", "12\n", KindBadRequest)
	f("string", `"counter.get"`+"\n", KindBadRequest)
	f("array", "["+get+"]\n", KindBadRequest)
	f("deep nesting", strings.Repeat("[", 50000)+"\n", KindBadRequest)
	f("deep args", `{"op":"counter.get","args":{"name":`+strings.Repeat("[", 50000)+"}}\n", KindBadRequest)
	f("truncated", `{"op":"counter.g`+"\n", KindBadRequest)
	f("two lines", get+"\n"+get+"\n", "") // the first is the request; the rest is never read
	f("two requests on a line", get+" "+get+"\n", KindBadRequest)
	f("trailing garbage", get+"x\n", KindBadRequest)
	f("no op", "{}\n", KindBadRequest)
	f("empty op", `{"op":""}`+"\n", KindBadRequest)
	f("unknown op", `{"op":"drop_everything"}`+"\n", KindBadRequest)
	f("long unknown op", `{"op":"`+strings.Repeat("x", 10000)+`"}`+"\n", KindBadRequest)
	f("op of the wrong type", `{"op":5}`+"\n", KindBadRequest)
	f("op null", `{"op":null}`+"\n", KindBadRequest)
	f("unknown field", `{"op":"counter.get","admin":true}`+"\n", KindBadRequest)
	f("args an array", `{"op":"counter.get","args":[]}`+"\n", KindBadRequest)
	f("args a string", `{"op":"counter.get","args":"a"}`+"\n", KindBadRequest)
	f("args a number", `{"op":"counter.get","args":1}`+"\n", KindBadRequest)
	f("argument of the wrong type", `{"op":"counter.get","args":{"name":1}}`+"\n", KindBadRequest)
	f("unknown argument", `{"op":"counter.get","args":{"name":"a","evil":1}}`+"\n", KindBadRequest)
	f("null args", `{"op":"counter.get","args":null}`+"\n", "gone") // no args: the counter "" does not exist
	f("ping with args", `{"op":"ping","args":{"x":1}}`+"\n", KindBadRequest)
	f("ping with empty args", `{"op":"ping","args":{}}`+"\n", "")
	f("panic", `{"op":"boom"}`+"\n", KindInternal)
	if line := raw(t, fx.sock, nil); line != nil {
		t.Errorf("an empty connection was answered %q", line)
	}
}

// TestBusy: clients that connect and say nothing hold a connection slot
// until their deadline, then the others are served; stop ends them at
// once.
func TestBusy(t *testing.T) {
	fx := serve(t, Config{MaxConns: 2, Deadline: 300 * time.Millisecond})
	var silent []net.Conn
	for range 3 {
		c, err := net.Dial("unix", fx.sock)
		mustNil(t, err)
		defer c.Close()
		silent = append(silent, c)
	}
	// Both slots are taken (the third waits in the backlog); this call is
	// served once a silent one's deadline passes.
	c := &Client{Path: fx.sock}
	mustNil(t, c.Call("counter.add", map[string]any{"name": "b", "by": 1}, nil))
	// The silent ones were closed by the server without an answer.
	for i, s := range silent[:2] {
		if b, err := io.ReadAll(s); len(b) != 0 || err != nil {
			t.Errorf("silent client %d got %q %v", i, b, err)
		}
	}
	mustNil(t, fx.stop())
}

func TestStopEndsIdleConnections(t *testing.T) {
	fx := serve(t, Config{Deadline: 1 << 62}) // never, in a test's life
	c, err := net.Dial("unix", fx.sock)
	mustNil(t, err)
	defer c.Close()
	// The connection is accepted (the server answers a ping meanwhile) ...
	_, _, err = Dial(fx.sock)
	mustNil(t, err)
	// ... and stop does not wait for it to speak.
	mustNil(t, fx.stop())
	if b, _ := io.ReadAll(c); len(b) != 0 {
		t.Errorf("the idle connection got %q", b)
	}
}

func TestSocketFile(t *testing.T) {
	dir := t.TempDir()
	sock := Path(dir)
	if sock != filepath.Join(dir, "admin.sock") {
		t.Errorf("Path = %s", sock)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	newServer := func() *Server {
		s := NewServer(Config{})
		s.Handle("hello", func(json.RawMessage) (any, error) { return "hi", nil })
		return s
	}

	srv := newServer()
	stop, err := srv.Serve(ctx, sock)
	mustNil(t, err)
	fi, err := os.Lstat(sock)
	mustNil(t, err)
	if fi.Mode().Type() != os.ModeSocket || fi.Mode().Perm() != 0o600 {
		t.Errorf("socket file mode %v, want a socket with 0600", fi.Mode())
	}
	if _, err := srv.Serve(ctx, filepath.Join(dir, "other.sock")); err == nil {
		t.Error("a server served twice")
	}
	// A second server does not take over a live socket.
	if _, err := newServer().Serve(ctx, sock); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Errorf("second Serve: %v, want in use", err)
	}
	if _, _, err := Dial(sock); err != nil {
		t.Errorf("the first server stopped answering: %v", err)
	}
	mustNil(t, stop())
	mustNil(t, stop()) // twice is fine
	if _, err := os.Lstat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stop left the socket file: %v", err)
	}
	if _, _, err := Dial(sock); err == nil {
		t.Error("Dial after stop worked")
	}

	// A stale socket (its server died) is replaced.
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	mustNil(t, err)
	ln.SetUnlinkOnClose(false)
	ln.Close()
	stop, err = newServer().Serve(ctx, sock)
	mustNil(t, err)
	var s string
	if err := (&Client{Path: sock}).Call("hello", nil, &s); err != nil || s != "hi" {
		t.Errorf("after replacing a stale socket: %q %v", s, err)
	}
	// Cancelling the context stops the server.
	cancel()
	mustNil(t, stop())
	if _, err := os.Lstat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the socket file is left after the context ended: %v", err)
	}

	// Something that is not a socket is left alone.
	mustNil(t, os.WriteFile(sock, []byte("mine"), 0o600))
	if _, err := newServer().Serve(context.Background(), sock); err == nil {
		t.Error("Serve over a regular file worked")
	}
	if b, err := os.ReadFile(sock); err != nil || string(b) != "mine" {
		t.Errorf("Serve touched a regular file: %q %v", b, err)
	}
}

// TestOtherUser: a peer of another user is refused, where the system says
// who connects. The server is told to expect another user.
func TestOtherUser(t *testing.T) {
	other := os.Geteuid() + 1
	fx := serve(t, Config{PeerUID: &other})
	conn, err := net.Dial("unix", fx.sock)
	mustNil(t, err)
	_, known, err := PeerUID(conn.(*net.UnixConn))
	conn.Close()
	mustNil(t, err)
	if !known {
		if runtime.GOOS == "linux" || runtime.GOOS == "darwin" || runtime.GOOS == "freebsd" {
			t.Fatalf("%s tells a socket's peer, but PeerUID did not find it", runtime.GOOS)
		}
		t.Skip("this system does not tell a socket's peer")
	}
	if _, _, err := Dial(fx.sock); !errors.Is(err, ErrDenied) {
		t.Fatalf("Dial as another user: %v, want denied", err)
	}
	err = (&Client{Path: fx.sock}).Call("counter.add", map[string]any{"name": "a", "by": 1}, nil)
	if !errors.Is(err, ErrDenied) || !strings.Contains(err.Error(), "is not the server's user") {
		t.Errorf("counter.add as another user: %v, want denied", err)
	}
	if len(fx.c.n) != 0 {
		t.Errorf("a refused peer changed %v", fx.c.n)
	}
}

func TestHandleRefuses(t *testing.T) {
	srv := NewServer(Config{})
	srv.Handle("a.b_c9", func(json.RawMessage) (any, error) { return nil, nil })
	nop := func(json.RawMessage) (any, error) { return nil, nil }
	for _, name := range []string{"", "ping", "a.b_c9", "Upper", "9lives", "with space", "dash-ed", strings.Repeat("x", 65)} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Handle(%q) did not panic", name)
				}
			}()
			srv.Handle(name, nop)
		}()
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("Handle with a nil handler did not panic")
			}
		}()
		srv.Handle("nil_handler", nil)
	}()
}

// TestLocked: a Pebble store held by another handle (pebble refuses one in
// this process as it refuses another process) is told apart from other
// failures.
func TestLocked(t *testing.T) {
	dir := t.TempDir()
	db, err := pebble.Open(dir, &pebble.Options{Logger: pebblelog.Quiet{}})
	mustNil(t, err)
	defer db.Close()
	_, err = pebble.Open(dir, &pebble.Options{Logger: pebblelog.Quiet{}})
	if err == nil || !Locked(fmt.Errorf("mailroom store: %w", err)) {
		t.Errorf("the second open: %v, not seen as locked", err)
	}
	f := filepath.Join(t.TempDir(), "file")
	mustNil(t, os.WriteFile(f, nil, 0o600))
	_, err = pebble.Open(filepath.Join(f, "db"), &pebble.Options{Logger: pebblelog.Quiet{}})
	if err == nil || Locked(err) {
		t.Errorf("opening under a file: %v, seen as locked", err)
	}
	if Locked(os.ErrPermission) || Locked(errors.New("x")) {
		t.Error("other errors seen as locked")
	}
}

// FuzzDecodeRequest: the decoder never panics; it refuses with a bad
// request or gives an op and args that are an object (or none) and
// survive a round trip through the client's encoding; the server's answer
// to the line is one JSON line, ok only for a request it decoded.
func FuzzDecodeRequest(f *testing.F) {
	for _, s := range []string{
		"", "\n", "null", "{}", "[]", `{"op":"ping"}`, `{"op":"ping","args":{}}`, `{"op":"counter.get","args":{"name":"a"}}`,
		`{"op":"counter.add","args":{"name":"a","by":1e400}}`, `{"op":"x","args":null}`, `{"op":"x","args":[1]}`,
		`{"op":"x","args":"s"}`, `{"OP":"ping"}`, `{"op":"ping"}{"op":"ping"}`, `{"op":"ping","op":"counter.get"}`,
		`{"op":"\xff"}`, `{"op":"a\u0000b"}`, strings.Repeat("[", 1000), `{"op":"ping","args":{"a":` + strings.Repeat("[", 100),
	} {
		f.Add([]byte(s))
	}
	c := &counter{n: map[string]int{"a": 1}}
	srv := NewServer(Config{})
	srv.HandleOps(c.ops())
	f.Fuzz(func(t *testing.T, line []byte) {
		answer := srv.Call(line)
		var resp Response
		if err := json.Unmarshal(answer, &resp); err != nil || bytes.IndexByte(answer, '\n') != len(answer)-1 {
			t.Fatalf("%q: answer %q: %v", line, answer, err)
		}
		req, err := DecodeRequest(line)
		if err != nil {
			if !errors.Is(err, ErrBadRequest) {
				t.Fatalf("%q: error %v is not a bad request", line, err)
			}
			if resp.OK || resp.Kind != KindBadRequest {
				t.Fatalf("%q: refused (%v) yet answered %+v", line, err, resp)
			}
			return
		}
		if req.Args != nil && (req.Args[0] != '{' || !json.Valid(req.Args)) {
			t.Fatalf("%q: args %q", line, req.Args)
		}
		again, err := json.Marshal(req)
		mustNil(t, err)
		req2, err := DecodeRequest(again)
		if err != nil || req2.Op != req.Op || !jsonEqual(req.Args, req2.Args) {
			t.Fatalf("%q: re-encoded as %s, decoded as %+v %v", line, again, req2, err)
		}
		if resp.OK && req.Op != "ping" && !strings.HasPrefix(req.Op, "counter.") {
			t.Fatalf("%q: op %q answered ok", line, req.Op)
		}
	})
}

func jsonEqual(a, b json.RawMessage) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	var x, y bytes.Buffer
	return json.Compact(&x, a) == nil && json.Compact(&y, b) == nil && bytes.Equal(x.Bytes(), y.Bytes())
}
