package auth

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
	"strings"
	"sync"
	"syscall"
	"time"
)

// Admin is what the account, user and key commands do with the accounts:
// a *Store does it directly, the client DialAdmin returns does it through
// a running lodge serve's admin socket. See the package documentation.
type Admin interface {
	AddAccount(code, name string) (Account, error)
	Account(code string) (Account, error)
	Accounts() ([]Account, error)
	DisableAccount(code string) error
	EnableAccount(code string) error

	AddUser(account, name, password string) (User, error)
	User(name string) (User, error)
	SetPassword(name, password string) error
	DisableUser(name string) error
	EnableUser(name string) error
	Users(account string) ([]User, error)

	CreateKey(account, label string) (secret string, k Key, err error)
	Keys(account string) ([]Key, error)
	RevokeKey(id string) error
}

var (
	_ Admin = (*Store)(nil)
	_ Admin = (*adminClient)(nil)
)

const (
	// adminSocketName is the admin socket's name in the data directory.
	adminSocketName = "admin.sock"
	// adminProtocol is what ping answers; a client refuses another.
	adminProtocol = 1
	// maxAdminRequest bounds a request line, its newline included.
	maxAdminRequest = 64 << 10
	// maxAdminResponse bounds a response line (lists can be long).
	maxAdminResponse = 64 << 20
	// adminDeadline is the time a connection gets on the server: to send
	// its request, have it carried out and read the answer.
	adminDeadline = 10 * time.Second
	// adminClientDeadline is the client's, a little longer so that the
	// server's deadline is the one that counts.
	adminClientDeadline = 15 * time.Second
	// maxAdminConns bounds the connections served at a time; more wait
	// in the listen backlog.
	maxAdminConns = 16
)

// Error kinds on the wire.
const (
	kindExists     = "exists"
	kindNotFound   = "notfound"
	kindInvalid    = "invalid"
	kindClosed     = "closed"
	kindBadRequest = "badrequest"
	kindDenied     = "denied"
	kindInternal   = "internal"
)

var (
	errBadRequest = errors.New("admin socket: bad request")
	errDenied     = errors.New("admin socket: permission denied")
)

// ---- the protocol

// adminRequest is one request line: {"op":"...","args":{...}}.
type adminRequest struct {
	Op   string          `json:"op"`
	Args json.RawMessage `json:"args,omitempty"`
}

// adminResponse is one response line: {"ok":true,"result":...} or
// {"ok":false,"error":"...","kind":"..."}.
type adminResponse struct {
	OK     bool            `json:"ok"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
	Kind   string          `json:"kind,omitempty"`
}

// adminArgs are the arguments of every op; an op allows some of them and
// requires some of those. nil means absent.
type adminArgs struct {
	Code     *string `json:"code,omitempty"`
	Name     *string `json:"name,omitempty"`
	Account  *string `json:"account,omitempty"`
	Password *string `json:"password,omitempty"`
	Label    *string `json:"label,omitempty"`
	ID       *string `json:"id,omitempty"`
}

// Bits naming the fields of adminArgs.
const (
	argCode = 1 << iota
	argName
	argAccount
	argPassword
	argLabel
	argID
)

var argNames = []string{"code", "name", "account", "password", "label", "id"}

func (a *adminArgs) present() uint {
	var m uint
	for i, p := range []*string{a.Code, a.Name, a.Account, a.Password, a.Label, a.ID} {
		if p != nil {
			m |= 1 << i
		}
	}
	return m
}

func argList(m uint) string {
	var names []string
	for i, n := range argNames {
		if m&(1<<i) != 0 {
			names = append(names, n)
		}
	}
	return strings.Join(names, ", ")
}

type adminOp struct {
	required, allowed uint
}

// adminOps are the ops the socket serves, each with its arguments.
var adminOps = map[string]adminOp{
	"ping":            {},
	"add_account":     {required: argCode, allowed: argCode | argName},
	"account":         {required: argCode, allowed: argCode},
	"accounts":        {},
	"disable_account": {required: argCode, allowed: argCode},
	"enable_account":  {required: argCode, allowed: argCode},
	"add_user":        {required: argAccount | argName | argPassword, allowed: argAccount | argName | argPassword},
	"user":            {required: argName, allowed: argName},
	"set_password":    {required: argName | argPassword, allowed: argName | argPassword},
	"disable_user":    {required: argName, allowed: argName},
	"enable_user":     {required: argName, allowed: argName},
	"users":           {allowed: argAccount},
	"create_key":      {required: argAccount, allowed: argAccount | argLabel},
	"keys":            {allowed: argAccount},
	"revoke_key":      {required: argID, allowed: argID},
}

// adminCall is a decoded, checked request.
type adminCall struct {
	op   string
	args adminArgs
}

type adminPing struct {
	Protocol int `json:"protocol"`
}

type createKeyResult struct {
	Secret string `json:"secret"`
	Key    Key    `json:"key"`
}

func badRequest(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errBadRequest, fmt.Sprintf(format, args...))
}

// decodeAdminRequest decodes and checks one request line: one JSON object
// with a known op and exactly the arguments it takes, of the right types.
// Its errors wrap errBadRequest.
func decodeAdminRequest(line []byte) (adminCall, error) {
	var req adminRequest
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return adminCall{}, badRequest("want one JSON object {\"op\":...,\"args\":{...}}: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return adminCall{}, badRequest("more than one JSON value")
	}
	op, ok := adminOps[req.Op]
	if !ok {
		return adminCall{}, badRequest("unknown op %.64q", req.Op)
	}
	c := adminCall{op: req.Op}
	if raw := bytes.TrimSpace(req.Args); len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
		if raw[0] != '{' {
			return adminCall{}, badRequest("args of %s: want a JSON object", req.Op)
		}
		d := json.NewDecoder(bytes.NewReader(raw))
		d.DisallowUnknownFields()
		if err := d.Decode(&c.args); err != nil {
			return adminCall{}, badRequest("args of %s: %v", req.Op, err)
		}
	}
	have := c.args.present()
	if extra := have &^ op.allowed; extra != 0 {
		return adminCall{}, badRequest("args of %s: %s not taken", req.Op, argList(extra))
	}
	if missing := op.required &^ have; missing != 0 {
		return adminCall{}, badRequest("args of %s: %s missing", req.Op, argList(missing))
	}
	return c, nil
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// run carries out a checked call on a.
func (c adminCall) run(a Admin) (any, error) {
	g := c.args
	switch c.op {
	case "ping":
		return adminPing{Protocol: adminProtocol}, nil
	case "add_account":
		return a.AddAccount(str(g.Code), str(g.Name))
	case "account":
		return a.Account(str(g.Code))
	case "accounts":
		return a.Accounts()
	case "disable_account":
		return nil, a.DisableAccount(str(g.Code))
	case "enable_account":
		return nil, a.EnableAccount(str(g.Code))
	case "add_user":
		return a.AddUser(str(g.Account), str(g.Name), str(g.Password))
	case "user":
		return a.User(str(g.Name))
	case "set_password":
		return nil, a.SetPassword(str(g.Name), str(g.Password))
	case "disable_user":
		return nil, a.DisableUser(str(g.Name))
	case "enable_user":
		return nil, a.EnableUser(str(g.Name))
	case "users":
		return a.Users(str(g.Account))
	case "create_key":
		secret, k, err := a.CreateKey(str(g.Account), str(g.Label))
		if err != nil {
			return nil, err
		}
		return createKeyResult{Secret: secret, Key: k}, nil
	case "keys":
		return a.Keys(str(g.Account))
	case "revoke_key":
		return nil, a.RevokeKey(str(g.ID))
	}
	return nil, badRequest("unknown op %.64q", c.op) // not reached: decodeAdminRequest checks
}

func errorKind(err error) string {
	switch {
	case errors.Is(err, ErrExists):
		return kindExists
	case errors.Is(err, ErrNotFound):
		return kindNotFound
	case errors.Is(err, ErrInvalidInput):
		return kindInvalid
	case errors.Is(err, ErrClosed):
		return kindClosed
	case errors.Is(err, errBadRequest):
		return kindBadRequest
	case errors.Is(err, errDenied):
		return kindDenied
	}
	return kindInternal
}

// kindErrors are the sentinel errors a client's errors wrap, by kind.
var kindErrors = map[string]error{
	kindExists:     ErrExists,
	kindNotFound:   ErrNotFound,
	kindInvalid:    ErrInvalidInput,
	kindClosed:     ErrClosed,
	kindBadRequest: errBadRequest,
	kindDenied:     errDenied,
}

// adminError is an error the server sent: its text, wrapping the sentinel
// error of its kind so that errors.Is works as with a local Store.
type adminError struct {
	msg  string
	kind error // nil for internal errors
}

func (e *adminError) Error() string { return e.msg }
func (e *adminError) Unwrap() error { return e.kind }

func encodeResponse(result any, err error) []byte {
	var resp adminResponse
	if err == nil && result != nil {
		b, merr := json.Marshal(result)
		if merr != nil {
			err = merr
		} else {
			resp.Result = b
		}
	}
	if err != nil {
		resp = adminResponse{Error: err.Error(), Kind: errorKind(err)}
	} else {
		resp.OK = true
	}
	b, _ := json.Marshal(resp) // strings, bools and valid JSON: cannot fail
	return append(b, '\n')
}

// readAdminLine reads one line of at most max bytes, its newline
// included; a last line without newline counts. An empty input gives
// io.EOF.
func readAdminLine(r io.Reader, max int) ([]byte, error) {
	line, err := bufio.NewReaderSize(io.LimitReader(r, int64(max)+1), 4096).ReadBytes('\n')
	if len(line) > max {
		return nil, badRequest("line longer than %d bytes", max)
	}
	if err == io.EOF && len(line) > 0 {
		err = nil
	}
	return line, err
}

// ---- the server

// ServeAdmin serves the admin protocol for s on a Unix socket at
// socketPath until ctx is done or stop is called; stop waits for the
// requests in progress, so call it before closing s. See the package
// documentation for the protocol.
//
// The socket file gets mode 0600 and, where the system says who connects
// (SO_PEERCRED on Linux, LOCAL_PEERCRED on macOS and FreeBSD), only this
// process's user is served. Passwords (add_user, set_password) and new
// API key secrets (create_key) travel over the socket in clear: it is
// local and same-user. Nothing is logged.
//
// An existing file at socketPath is removed first only if it is a socket
// nothing answers on.
func ServeAdmin(ctx context.Context, s *Store, socketPath string) (stop func() error, err error) {
	return serveAdmin(ctx, s, socketPath, os.Geteuid())
}

type adminServer struct {
	a    Admin
	ln   *net.UnixListener
	uid  int // the peer user served
	done chan struct{}
	sem  chan struct{}
	wg   sync.WaitGroup

	mu      sync.Mutex
	closing bool
	conns   map[*net.UnixConn]struct{}
}

func serveAdmin(ctx context.Context, a Admin, path string, uid int) (func() error, error) {
	if err := removeStaleSocket(path); err != nil {
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
	srv := &adminServer{
		a: a, ln: ln, uid: uid,
		done:  make(chan struct{}),
		sem:   make(chan struct{}, maxAdminConns),
		conns: make(map[*net.UnixConn]struct{}),
	}
	srv.wg.Add(1)
	go srv.accept()
	var once sync.Once
	var stopErr error
	stop := func() error {
		once.Do(func() { stopErr = srv.shutdown() })
		return stopErr
	}
	go func() {
		select {
		case <-ctx.Done():
			stop()
		case <-srv.done:
		}
	}()
	return stop, nil
}

// removeStaleSocket removes a socket file at path that nothing answers on.
func removeStaleSocket(path string) error {
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

func (srv *adminServer) shutdown() error {
	close(srv.done)
	err := srv.ln.Close() // removes the socket file too
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	srv.mu.Lock()
	srv.closing = true
	for c := range srv.conns {
		c.SetDeadline(time.Now()) // stop waiting for requests; a running op still finishes
	}
	srv.mu.Unlock()
	srv.wg.Wait()
	return err
}

func (srv *adminServer) accept() {
	defer srv.wg.Done()
	var delay time.Duration
	for {
		select {
		case srv.sem <- struct{}{}:
		case <-srv.done:
			return
		}
		c, err := srv.ln.AcceptUnix()
		if err != nil {
			<-srv.sem
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of file descriptors or the like: wait a little.
			delay = min(max(2*delay, 5*time.Millisecond), time.Second)
			select {
			case <-time.After(delay):
				continue
			case <-srv.done:
				return
			}
		}
		delay = 0
		c.SetDeadline(time.Now().Add(adminDeadline))
		srv.mu.Lock()
		if srv.closing {
			srv.mu.Unlock()
			c.Close()
			<-srv.sem
			return
		}
		srv.conns[c] = struct{}{}
		srv.wg.Add(1)
		srv.mu.Unlock()
		go func() {
			defer srv.wg.Done()
			srv.handle(c)
			c.Close()
			srv.mu.Lock()
			delete(srv.conns, c)
			srv.mu.Unlock()
			<-srv.sem
		}()
	}
}

// handle serves one connection: one request, one response.
func (srv *adminServer) handle(c *net.UnixConn) {
	if err := checkPeer(c, srv.uid); err != nil {
		// Read the request before refusing it: closing with it unread
		// resets the connection, and the client would see a broken pipe
		// instead of the refusal.
		readAdminLine(c, maxAdminRequest)
		c.Write(encodeResponse(nil, err))
		return
	}
	line, err := readAdminLine(c, maxAdminRequest)
	if err == io.EOF {
		return // connected and said nothing, like removeStaleSocket
	}
	if err != nil && !errors.Is(err, errBadRequest) {
		return // deadline or reset: nobody to answer
	}
	var result any
	if err == nil {
		var call adminCall
		if call, err = decodeAdminRequest(line); err == nil {
			result, err = call.run(srv.a)
		}
	}
	c.Write(encodeResponse(result, err))
}

// checkPeer refuses a peer of another user than uid where the system
// tells; elsewhere the socket file's mode is the only guard.
func checkPeer(c *net.UnixConn, uid int) error {
	peer, known, err := peerUID(c)
	if err != nil {
		return fmt.Errorf("%w: cannot tell who connects: %v", errDenied, err)
	}
	if known && peer != uid {
		return fmt.Errorf("%w: user %d is not the server's user %d", errDenied, peer, uid)
	}
	return nil
}

// ---- the client

// adminClient is an Admin that sends every call over the admin socket,
// one connection per call.
type adminClient struct {
	path string
}

// DialAdmin returns an Admin that works through the admin socket at
// socketPath (see ServeAdmin), after checking that a server of this
// protocol answers there. Errors the server reports wrap the same
// sentinel errors (ErrExists, ErrNotFound, ErrInvalidInput, ErrClosed) as
// a Store's, with the same text. Passwords travel over the socket.
func DialAdmin(socketPath string) (Admin, error) {
	c := &adminClient{path: socketPath}
	var p adminPing
	if err := c.call("ping", nil, &p); err != nil {
		return nil, err
	}
	if p.Protocol != adminProtocol {
		return nil, fmt.Errorf("admin socket %s: server speaks protocol %d, this lodge %d", socketPath, p.Protocol, adminProtocol)
	}
	return c, nil
}

func (c *adminClient) call(op string, args *adminArgs, result any) error {
	var req adminRequest
	req.Op = op
	if args != nil {
		b, err := json.Marshal(args)
		if err != nil {
			return err
		}
		req.Args = b
	}
	line, err := json.Marshal(req)
	if err != nil {
		return err
	}
	conn, err := net.DialTimeout("unix", c.path, adminClientDeadline)
	if err != nil {
		return fmt.Errorf("admin socket: %w", err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(adminClientDeadline))
	if _, err := conn.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("admin socket %s: %s: %w", c.path, op, err)
	}
	line, err = readAdminLine(conn, maxAdminResponse)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return fmt.Errorf("admin socket %s: %s: %w", c.path, op, err)
	}
	var resp adminResponse
	if err := json.Unmarshal(line, &resp); err != nil {
		return fmt.Errorf("admin socket %s: %s: bad response: %w", c.path, op, err)
	}
	if !resp.OK {
		if resp.Error == "" {
			resp.Error = "admin socket: " + op + " failed"
		}
		return &adminError{msg: resp.Error, kind: kindErrors[resp.Kind]}
	}
	if result != nil {
		if err := json.Unmarshal(resp.Result, result); err != nil {
			return fmt.Errorf("admin socket %s: %s: bad result: %w", c.path, op, err)
		}
	}
	return nil
}

func (c *adminClient) AddAccount(code, name string) (a Account, err error) {
	err = c.call("add_account", &adminArgs{Code: &code, Name: &name}, &a)
	return a, err
}

func (c *adminClient) Account(code string) (a Account, err error) {
	err = c.call("account", &adminArgs{Code: &code}, &a)
	return a, err
}

func (c *adminClient) Accounts() (as []Account, err error) {
	err = c.call("accounts", nil, &as)
	return as, err
}

func (c *adminClient) DisableAccount(code string) error {
	return c.call("disable_account", &adminArgs{Code: &code}, nil)
}

func (c *adminClient) EnableAccount(code string) error {
	return c.call("enable_account", &adminArgs{Code: &code}, nil)
}

func (c *adminClient) AddUser(account, name, password string) (u User, err error) {
	err = c.call("add_user", &adminArgs{Account: &account, Name: &name, Password: &password}, &u)
	return u, err
}

func (c *adminClient) User(name string) (u User, err error) {
	err = c.call("user", &adminArgs{Name: &name}, &u)
	return u, err
}

func (c *adminClient) SetPassword(name, password string) error {
	return c.call("set_password", &adminArgs{Name: &name, Password: &password}, nil)
}

func (c *adminClient) DisableUser(name string) error {
	return c.call("disable_user", &adminArgs{Name: &name}, nil)
}

func (c *adminClient) EnableUser(name string) error {
	return c.call("enable_user", &adminArgs{Name: &name}, nil)
}

func (c *adminClient) Users(account string) (us []User, err error) {
	err = c.call("users", &adminArgs{Account: &account}, &us)
	return us, err
}

func (c *adminClient) CreateKey(account, label string) (string, Key, error) {
	var r createKeyResult
	if err := c.call("create_key", &adminArgs{Account: &account, Label: &label}, &r); err != nil {
		return "", Key{}, err
	}
	return r.Secret, r.Key, nil
}

func (c *adminClient) Keys(account string) (ks []Key, err error) {
	err = c.call("keys", &adminArgs{Account: &account}, &ks)
	return ks, err
}

func (c *adminClient) RevokeKey(id string) error {
	return c.call("revoke_key", &adminArgs{ID: &id}, nil)
}

// ---- choosing

// OpenAdmin gives the account, user and key commands their Admin for the
// data directory dataDir: the store <dataDir>/auth opened directly when
// no other process holds it, else, when <dataDir>/admin.sock exists, the
// admin socket of the lodge serve that holds it. Otherwise it returns
// Open's error. The returned func closes what was opened.
func OpenAdmin(dataDir string) (Admin, func() error, error) {
	s, err := Open(filepath.Join(dataDir, "auth"))
	if err == nil {
		return s, s.Close, nil
	}
	var inUse *inUseError
	if !errors.As(err, &inUse) {
		return nil, nil, err
	}
	sock := filepath.Join(dataDir, adminSocketName)
	if _, serr := os.Lstat(sock); serr != nil {
		return nil, nil, err
	}
	c, derr := DialAdmin(sock)
	if derr != nil {
		return nil, nil, fmt.Errorf("%w; and its admin socket does not answer: %v", err, derr)
	}
	return c, func() error { return nil }, nil
}
