package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/lodge-mail/lodge/internal/adminsock"
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
	SetRole(name, role string) error
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

// adminProtocol is what auth's clients expect ping to answer.
const adminProtocol = adminsock.Protocol

// Error kinds on the wire (besides adminsock's badrequest, denied and
// internal).
const (
	kindExists   = "exists"
	kindNotFound = "notfound"
	kindInvalid  = "invalid"
	kindClosed   = "closed"
)

// adminKinds are the sentinel errors of a Store by their kinds on the
// wire: the server sends them, the client wraps them again.
var adminKinds = []adminsock.Kind{
	{Name: kindExists, Err: ErrExists},
	{Name: kindNotFound, Err: ErrNotFound},
	{Name: kindInvalid, Err: ErrInvalidInput},
	{Name: kindClosed, Err: ErrClosed},
}

// ---- the operations

// adminArgs are the arguments of every op; an op allows some of them and
// requires some of those. nil means absent.
type adminArgs struct {
	Code     *string `json:"code,omitempty"`
	Name     *string `json:"name,omitempty"`
	Account  *string `json:"account,omitempty"`
	Password *string `json:"password,omitempty"`
	Label    *string `json:"label,omitempty"`
	ID       *string `json:"id,omitempty"`
	Role     *string `json:"role,omitempty"`
}

// Bits naming the fields of adminArgs.
const (
	argCode = 1 << iota
	argName
	argAccount
	argPassword
	argLabel
	argID
	argRole
)

var argNames = []string{"code", "name", "account", "password", "label", "id", "role"}

func (a *adminArgs) present() uint {
	var m uint
	for i, p := range []*string{a.Code, a.Name, a.Account, a.Password, a.Label, a.ID, a.Role} {
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

// adminOps are the ops auth serves, each with its arguments.
var adminOps = map[string]adminOp{
	"add_account":     {required: argCode, allowed: argCode | argName},
	"account":         {required: argCode, allowed: argCode},
	"accounts":        {},
	"disable_account": {required: argCode, allowed: argCode},
	"enable_account":  {required: argCode, allowed: argCode},
	"add_user":        {required: argAccount | argName | argPassword, allowed: argAccount | argName | argPassword},
	"user":            {required: argName, allowed: argName},
	"set_password":    {required: argName | argPassword, allowed: argName | argPassword},
	"set_role":        {required: argName | argRole, allowed: argName | argRole},
	"disable_user":    {required: argName, allowed: argName},
	"enable_user":     {required: argName, allowed: argName},
	"users":           {allowed: argAccount},
	"create_key":      {required: argAccount, allowed: argAccount | argLabel},
	"keys":            {allowed: argAccount},
	"revoke_key":      {required: argID, allowed: argID},
}

// adminCall is a decoded, checked call.
type adminCall struct {
	op   string
	args adminArgs
}

type createKeyResult struct {
	Secret string `json:"secret"`
	Key    Key    `json:"key"`
}

// decodeAdminArgs decodes and checks the args of op (one of adminOps):
// exactly the arguments it takes, strings all. Its errors wrap
// adminsock.ErrBadRequest.
func decodeAdminArgs(op string, raw json.RawMessage) (adminCall, error) {
	o, ok := adminOps[op]
	if !ok {
		return adminCall{}, adminsock.BadRequest("unknown op %.64q", op)
	}
	c := adminCall{op: op}
	if err := adminsock.DecodeArgs(op, raw, &c.args); err != nil {
		return adminCall{}, err
	}
	have := c.args.present()
	if extra := have &^ o.allowed; extra != 0 {
		return adminCall{}, adminsock.BadRequest("args of %s: %s not taken", op, argList(extra))
	}
	if missing := o.required &^ have; missing != 0 {
		return adminCall{}, adminsock.BadRequest("args of %s: %s missing", op, argList(missing))
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
	case "set_role":
		return nil, a.SetRole(str(g.Name), str(g.Role))
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
	return nil, adminsock.BadRequest("unknown op %.64q", c.op) // not reached: decodeAdminArgs checks
}

// AdminOps returns the account, user and key operations over a (a
// *Store), for an adminsock.Server: lodge serve registers them on the
// data directory's admin socket beside the other parts' operations.
func AdminOps(a Admin) adminsock.Ops {
	ops := adminsock.Ops{Handlers: map[string]adminsock.Handler{}, Kinds: adminKinds}
	for op := range adminOps {
		ops.Handlers[op] = func(raw json.RawMessage) (any, error) {
			c, err := decodeAdminArgs(op, raw)
			if err != nil {
				return nil, err
			}
			return c.run(a)
		}
	}
	return ops
}

// ---- the server

// ServeAdmin serves the account operations of s (AdminOps) alone on a
// Unix socket at socketPath until ctx is done or stop is called; stop
// waits for the requests in progress, so call it before closing s. A
// server with other parts' operations too registers AdminOps on an
// adminsock.Server itself. See the package documentation and adminsock's
// for the protocol and its guards.
func ServeAdmin(ctx context.Context, s *Store, socketPath string) (stop func() error, err error) {
	return serveAdmin(ctx, s, socketPath, os.Geteuid())
}

// serveAdmin serves a to the peers of user uid (tests pretend to be
// another).
func serveAdmin(ctx context.Context, a Admin, path string, uid int) (func() error, error) {
	srv := adminsock.NewServer(adminsock.Config{PeerUID: &uid})
	srv.HandleOps(AdminOps(a))
	return srv.Serve(ctx, path)
}

// ---- the client

// adminClient is an Admin that sends every call over the admin socket,
// one connection per call.
type adminClient struct {
	path string
}

// DialAdmin returns an Admin that works through the admin socket at
// socketPath (see ServeAdmin), after checking that a server of this
// protocol with the account operations answers there. Errors the server
// reports wrap the same sentinel errors (ErrExists, ErrNotFound,
// ErrInvalidInput, ErrClosed) as a Store's, with the same text. Passwords
// travel over the socket.
func DialAdmin(socketPath string) (Admin, error) {
	_, p, err := adminsock.Dial(socketPath, adminKinds...)
	if err != nil {
		return nil, err
	}
	if !p.Serves("accounts", "add_user", "create_key") {
		return nil, fmt.Errorf("admin socket %s: the server there does not serve accounts", socketPath)
	}
	return &adminClient{path: socketPath}, nil
}

func (c *adminClient) call(op string, args *adminArgs, result any) error {
	var a any
	if args != nil {
		a = args
	}
	cl := adminsock.Client{Path: c.path, Kinds: adminKinds}
	return cl.Call(op, a, result)
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

func (c *adminClient) SetRole(name, role string) error {
	return c.call("set_role", &adminArgs{Name: &name, Role: &role}, nil)
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
	sock := adminsock.Path(dataDir)
	if _, serr := os.Lstat(sock); serr != nil {
		return nil, nil, err
	}
	c, derr := DialAdmin(sock)
	if derr != nil {
		return nil, nil, fmt.Errorf("%w; and its admin socket does not answer: %v", err, derr)
	}
	return c, func() error { return nil }, nil
}
