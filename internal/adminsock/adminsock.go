// Package adminsock is lodge's admin socket: a Unix socket in the data
// directory (<data-dir>/admin.sock) through which the command-line tools
// reach the stores a running lodge serve holds (Pebble lets one process
// open a store at a time). One socket carries the operations of every
// part that registers some: lodge serve registers the accounts' (package
// auth) and the mailroom's (package printroom) on one Server.
//
// # Protocol
//
// One request per connection, each a line of JSON (the newline may be
// left out before the client half-closes):
//
//	-> {"op":"add_account","args":{"code":"ABC12345","name":"Acme"}}
//	<- {"ok":true,"result":{"code":"ABC12345","name":"Acme","created":"..."}}
//	<- {"ok":false,"error":"account ABC12345: already exists","kind":"exists"}
//
// A request is one JSON object with the fields op (a string) and args
// (an object; absent or null for none) and nothing else. The answer is
// one line: ok true with the operation's result (absent when it has
// none), or ok false with the error's text and its kind. The kinds every
// server has are badrequest (a request that is not one: not JSON, an
// unknown op or field, arguments an operation does not take), denied (a
// peer refused) and internal (anything else); each group of operations
// adds its own (Ops.Kinds: auth's exists, notfound, invalid, closed), so
// that a client's errors wrap the same sentinel errors as the store's
// would (errors.Is works either way).
//
// The op ping is always there and answers {"protocol":1,"ops":[...]}, the
// protocol version and the operations served, sorted: Dial refuses a
// server of another protocol, and a tool can tell a lodge serve that
// lacks its operations.
//
// # Limits and guards
//
// A request line is at most 64 KiB (Config.MaxRequest), its newline
// included; an answer at most 64 MiB (Config.MaxResponse: a larger
// result is answered with an internal error). A connection gets 10
// seconds (Config.Deadline) for its request, the work and the answer; at
// most 16 connections (Config.MaxConns) are served at a time, more wait
// in the listen backlog. A client that connects and says nothing gets
// no answer and holds nobody up. An operation that panics is answered
// with an internal error; the server goes on.
//
// The socket file has mode 0600 (set after listening, whatever the
// umask) and on Linux (SO_PEERCRED), macOS and FreeBSD (LOCAL_PEERCRED) a
// peer whose user is not the server's is refused (denied); elsewhere the
// file mode is the only guard. What operations take and answer (account
// passwords, new API key secrets) travels in clear: the socket is local
// and same-user. The server logs nothing. Serve removes a socket file
// left by an earlier server only when nothing answers on it, never a file
// that is not a socket, and its stop function removes the file and waits
// for the requests in progress.
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
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// SocketName is the admin socket's name in a data directory.
const SocketName = "admin.sock"

// Path returns the admin socket of the data directory dataDir.
func Path(dataDir string) string { return filepath.Join(dataDir, SocketName) }

// Protocol is the version ping answers; Dial refuses another.
const Protocol = 1

// Defaults of Config and Client.
const (
	DefaultMaxRequest    = 64 << 10
	DefaultMaxResponse   = 64 << 20
	DefaultDeadline      = 10 * time.Second
	DefaultMaxConns      = 16
	DefaultClientTimeout = 15 * time.Second // longer than the server's, so that the server's counts
)

// Error kinds every server has.
const (
	KindBadRequest = "badrequest"
	KindDenied     = "denied"
	KindInternal   = "internal"
)

var (
	// ErrBadRequest is what a request that is not one gives (kind
	// badrequest). Operations wrap it for arguments they do not take.
	ErrBadRequest = errors.New("admin socket: bad request")
	// ErrDenied is what a peer of another user gets (kind denied).
	ErrDenied = errors.New("admin socket: permission denied")
)

// BadRequest returns an error of kind badrequest with the text given.
func BadRequest(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBadRequest, fmt.Sprintf(format, args...))
}

// Request is one request line.
type Request struct {
	Op   string          `json:"op"`
	Args json.RawMessage `json:"args,omitempty"`
}

// Response is one answer line.
type Response struct {
	OK     bool            `json:"ok"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
	Kind   string          `json:"kind,omitempty"`
}

// Ping is what the op ping answers.
type Ping struct {
	Protocol int      `json:"protocol"`
	Ops      []string `json:"ops"`
}

// Handler carries out one operation: args is the request's args object
// (nil when absent or null); the result is sent as JSON. Arguments it
// does not take are an error wrapping ErrBadRequest (DecodeArgs gives
// those).
type Handler func(args json.RawMessage) (any, error)

// Kind names the sentinel error an operation's errors may wrap: a server
// sends such an error with the kind's name, and a client given the same
// kinds returns an error wrapping the same sentinel.
type Kind struct {
	Name string
	Err  error
}

// Ops is a group of operations registered together and the kinds of
// their errors.
type Ops struct {
	Handlers map[string]Handler
	Kinds    []Kind
}

// DecodeRequest decodes and checks a request line: one JSON object with
// a string op and, when given, an args object; nothing else. Its errors
// wrap ErrBadRequest. Whether the op exists is the server's to say.
func DecodeRequest(line []byte) (Request, error) {
	var req Request
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return Request{}, BadRequest("want one JSON object {\"op\":...,\"args\":{...}}: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Request{}, BadRequest("more than one JSON value")
	}
	raw := bytes.TrimSpace(req.Args)
	switch {
	case len(raw) == 0 || bytes.Equal(raw, []byte("null")):
		req.Args = nil
	case raw[0] != '{':
		return Request{}, BadRequest("args of %.64q: want a JSON object", req.Op)
	default:
		req.Args = raw
	}
	return req, nil
}

// DecodeArgs decodes an operation's args into v (a pointer to a struct),
// refusing fields v does not have; nil args leave v as it is. Its errors
// wrap ErrBadRequest.
func DecodeArgs(op string, args json.RawMessage, v any) error {
	if args == nil {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(args))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return BadRequest("args of %s: %v", op, err)
	}
	if _, err := d.Token(); err != io.EOF {
		return BadRequest("args of %s: more than one JSON value", op)
	}
	return nil
}

// readLine reads one line of at most max bytes, its newline included; a
// last line without newline counts. An empty input gives io.EOF.
func readLine(r io.Reader, max int) ([]byte, error) {
	line, err := bufio.NewReaderSize(io.LimitReader(r, int64(max)+1), 4096).ReadBytes('\n')
	if len(line) > max {
		return nil, BadRequest("line longer than %d bytes", max)
	}
	if err == io.EOF && len(line) > 0 {
		err = nil
	}
	return line, err
}

// ---- the server

// Config tunes a Server. The zero value means the documented defaults.
type Config struct {
	MaxRequest  int           // bytes of a request line, newline included (default 64 KiB)
	MaxResponse int           // bytes of an answer line (default 64 MiB)
	Deadline    time.Duration // a connection's time for request, work and answer (default 10 s)
	MaxConns    int           // connections served at a time (default 16)
	// PeerUID is the user whose processes are served, where the system
	// tells who connects; nil means this process's effective user.
	PeerUID *int
}

func (c Config) withDefaults() Config {
	if c.MaxRequest <= 0 {
		c.MaxRequest = DefaultMaxRequest
	}
	if c.MaxResponse <= 0 {
		c.MaxResponse = DefaultMaxResponse
	}
	if c.Deadline <= 0 {
		c.Deadline = DefaultDeadline
	}
	if c.MaxConns <= 0 {
		c.MaxConns = DefaultMaxConns
	}
	if c.PeerUID == nil {
		uid := os.Geteuid()
		c.PeerUID = &uid
	}
	return c
}

type entry struct {
	h     Handler
	kinds []Kind
}

// Server serves registered operations on an admin socket.
type Server struct {
	cfg Config

	mu      sync.RWMutex
	ops     map[string]entry
	serving bool
}

// NewServer returns a server with no operations but ping.
func NewServer(cfg Config) *Server {
	return &Server{cfg: cfg.withDefaults(), ops: map[string]entry{}}
}

var opName = regexp.MustCompile(`^[a-z][a-z0-9_.]{0,63}$`)

// Handle registers an operation whose errors have the kinds every server
// has. It panics on a name that is taken (ping is) or not made of
// lowercase letters, digits, '_' and '.': both are programming errors.
func (s *Server) Handle(op string, h Handler) { s.handle(op, h, nil) }

// HandleOps registers a group of operations (see Handle).
func (s *Server) HandleOps(ops Ops) {
	for _, name := range sortedKeys(ops.Handlers) {
		s.handle(name, ops.Handlers[name], ops.Kinds)
	}
}

func (s *Server) handle(op string, h Handler, kinds []Kind) {
	if !opName.MatchString(op) || op == "ping" || h == nil {
		panic(fmt.Sprintf("adminsock: bad operation %q", op))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.ops[op]; ok {
		panic(fmt.Sprintf("adminsock: operation %q registered twice", op))
	}
	s.ops[op] = entry{h: h, kinds: kinds}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Call carries out one request line as the server would and returns the
// answer line, newline included: the socket's work without the socket
// (Serve's connections use it; so do tests and fuzzing).
func (s *Server) Call(line []byte) []byte {
	req, err := DecodeRequest(line)
	if err != nil {
		return s.encode(nil, err, nil)
	}
	if req.Op == "ping" {
		if err := DecodeArgs("ping", req.Args, &struct{}{}); err != nil {
			return s.encode(nil, err, nil)
		}
		s.mu.RLock()
		p := Ping{Protocol: Protocol, Ops: append(sortedKeys(s.ops), "ping")}
		s.mu.RUnlock()
		slices.Sort(p.Ops)
		return s.encode(p, nil, nil)
	}
	s.mu.RLock()
	e, ok := s.ops[req.Op]
	s.mu.RUnlock()
	if !ok {
		return s.encode(nil, BadRequest("unknown op %.64q", req.Op), nil)
	}
	result, err := run(e.h, req)
	return s.encode(result, err, e.kinds)
}

// run calls h, turning a panic into an error: one bad operation does not
// take lodge serve down.
func run(h Handler, req Request) (result any, err error) {
	defer func() {
		if p := recover(); p != nil {
			result, err = nil, fmt.Errorf("admin socket: %s failed: panic: %v", req.Op, p)
		}
	}()
	return h(req.Args)
}

func kindOf(err error, kinds []Kind) string {
	for _, k := range kinds {
		if errors.Is(err, k.Err) {
			return k.Name
		}
	}
	switch {
	case errors.Is(err, ErrBadRequest):
		return KindBadRequest
	case errors.Is(err, ErrDenied):
		return KindDenied
	}
	return KindInternal
}

func (s *Server) encode(result any, err error, kinds []Kind) []byte {
	var resp Response
	if err == nil && result != nil {
		b, merr := json.Marshal(result)
		switch {
		case merr != nil:
			err = fmt.Errorf("admin socket: encoding the result: %w", merr)
		case len(b)+64 > s.cfg.MaxResponse:
			err = fmt.Errorf("admin socket: a result of %d bytes is over the %d-byte limit of an answer: ask for less", len(b), s.cfg.MaxResponse)
		default:
			resp.Result = b
		}
	}
	if err != nil {
		resp = Response{Error: err.Error(), Kind: kindOf(err, kinds)}
	} else {
		resp.OK = true
	}
	b, _ := json.Marshal(resp) // strings, a bool and valid JSON: cannot fail
	return append(b, '\n')
}

// Serve serves the operations on a Unix socket at path until ctx is done
// or stop is called; stop waits for the requests in progress, so call it
// before closing what the operations use. A server serves once. An
// existing file at path is removed first only if it is a socket nothing
// answers on.
func (s *Server) Serve(ctx context.Context, path string) (stop func() error, err error) {
	s.mu.Lock()
	if s.serving {
		s.mu.Unlock()
		return nil, errors.New("admin socket: this server serves already")
	}
	s.serving = true
	s.mu.Unlock()
	if err := removeStale(path); err != nil {
		return nil, err
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("admin socket: %w", err)
	}
	// Listen made the file with the umask's permissions; a peer that
	// connected before this is refused by the peer check.
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("admin socket: %w", err)
	}
	l := &listener{
		s: s, ln: ln,
		done:  make(chan struct{}),
		sem:   make(chan struct{}, s.cfg.MaxConns),
		conns: make(map[*net.UnixConn]struct{}),
	}
	l.wg.Add(1)
	go l.accept()
	var once sync.Once
	var stopErr error
	stop = func() error {
		once.Do(func() { stopErr = l.shutdown() })
		return stopErr
	}
	go func() {
		select {
		case <-ctx.Done():
			stop()
		case <-l.done:
		}
	}()
	return stop, nil
}

// removeStale removes a socket file at path that nothing answers on.
func removeStale(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("admin socket: %w", err)
	}
	if fi.Mode().Type() != os.ModeSocket {
		return fmt.Errorf("admin socket %s: exists and is not a socket", path)
	}
	c, err := net.DialTimeout("unix", path, time.Second)
	if err == nil {
		c.Close()
		return fmt.Errorf("admin socket %s: in use: another process answers on it", path)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("admin socket %s: exists, and connecting to it: %w", path, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("admin socket: removing the stale one: %w", err)
	}
	return nil
}

// listener is one Serve.
type listener struct {
	s    *Server
	ln   *net.UnixListener
	done chan struct{}
	sem  chan struct{}
	wg   sync.WaitGroup

	mu      sync.Mutex
	closing bool
	conns   map[*net.UnixConn]struct{}
}

func (l *listener) shutdown() error {
	close(l.done)
	err := l.ln.Close() // removes the socket file too
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	l.mu.Lock()
	l.closing = true
	for c := range l.conns {
		c.SetDeadline(time.Now()) // stop waiting for requests; a running op still finishes
	}
	l.mu.Unlock()
	l.wg.Wait()
	return err
}

func (l *listener) accept() {
	defer l.wg.Done()
	var delay time.Duration
	for {
		select {
		case l.sem <- struct{}{}:
		case <-l.done:
			return
		}
		c, err := l.ln.AcceptUnix()
		if err != nil {
			<-l.sem
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of file descriptors or the like: wait a little.
			delay = min(max(2*delay, 5*time.Millisecond), time.Second)
			select {
			case <-time.After(delay):
				continue
			case <-l.done:
				return
			}
		}
		delay = 0
		c.SetDeadline(time.Now().Add(l.s.cfg.Deadline))
		l.mu.Lock()
		if l.closing {
			l.mu.Unlock()
			c.Close()
			<-l.sem
			return
		}
		l.conns[c] = struct{}{}
		l.wg.Add(1)
		l.mu.Unlock()
		go func() {
			defer l.wg.Done()
			l.serve(c)
			c.Close()
			l.mu.Lock()
			delete(l.conns, c)
			l.mu.Unlock()
			<-l.sem
		}()
	}
}

// serve answers one connection: one request, one answer.
func (l *listener) serve(c *net.UnixConn) {
	max := l.s.cfg.MaxRequest
	if err := checkPeer(c, *l.s.cfg.PeerUID); err != nil {
		// Read the request before refusing it: closing with it unread
		// resets the connection, and the client would see a broken pipe
		// instead of the refusal.
		readLine(c, max)
		c.Write(l.s.encode(nil, err, nil))
		return
	}
	line, err := readLine(c, max)
	if err == io.EOF {
		return // connected and said nothing, like removeStale
	}
	if err != nil {
		if errors.Is(err, ErrBadRequest) {
			c.Write(l.s.encode(nil, err, nil))
		}
		return // else a deadline or reset: nobody to answer
	}
	c.Write(l.s.Call(line))
}

// checkPeer refuses a peer of another user than uid where the system
// tells; elsewhere the socket file's mode is the only guard.
func checkPeer(c *net.UnixConn, uid int) error {
	peer, known, err := PeerUID(c)
	if err != nil {
		return fmt.Errorf("%w: cannot tell who connects: %v", ErrDenied, err)
	}
	if known && peer != uid {
		return fmt.Errorf("%w: user %d is not the server's user %d", ErrDenied, peer, uid)
	}
	return nil
}

// Locked reports whether opening a Pebble store failed on its directory
// lock, held by another process (fcntl gives EAGAIN or EACCES) or by this
// one: the case where a tool turns to the admin socket of the process
// that holds the store.
func Locked(err error) bool {
	return errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EACCES) && strings.Contains(err.Error(), "LOCK") ||
		strings.Contains(err.Error(), "lock held by current process")
}
