package auth

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/lodge-mail/lodge/internal/adminsock"
)

// adminFixture is a store served on an admin socket in a data directory
// laid out as lodge serve lays it out.
type adminFixture struct {
	dataDir, sock string
	s             *Store
	c             Admin
	stop          func() error
}

func newAdminFixture(t *testing.T) *adminFixture { return newAdminFixtureOn(t, pebbleKind) }

// newAdminFixtureOn serves a new store of kind k on an admin socket.
func newAdminFixtureOn(t *testing.T, k kind) *adminFixture {
	t.Helper()
	fx := &adminFixture{dataDir: t.TempDir()}
	fx.sock = filepath.Join(fx.dataDir, adminsock.SocketName)
	place := filepath.Join(fx.dataDir, "auth")
	if k.name != pebbleKind.name {
		place = ""
	}
	fx.s = k.openTest(t, place)
	stop, err := ServeAdmin(context.Background(), fx.s, fx.sock)
	mustNil(t, err)
	fx.stop = stop
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	fx.c, err = DialAdmin(fx.sock)
	mustNil(t, err)
	return fx
}

func same(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s over the socket:\n  %+v\ndirectly:\n  %+v", what, got, want)
	}
}

func TestAdminRoundTrip(t *testing.T) { eachKind(t, testAdminRoundTrip) }

func testAdminRoundTrip(t *testing.T, kd kind) {
	fx := newAdminFixtureOn(t, kd)
	s, c := fx.s, fx.c

	a, err := c.AddAccount(" abc12345 ", "  Acme Pty Ltd ")
	mustNil(t, err)
	direct, err := s.Account("ABC12345")
	mustNil(t, err)
	same(t, "AddAccount", a, direct)
	if a.Code != "ABC12345" || a.Name != "Acme Pty Ltd" {
		t.Errorf("AddAccount = %+v", a)
	}
	a, err = c.Account("abc12345")
	mustNil(t, err)
	same(t, "Account", a, direct)
	_, err = c.AddAccount("XYZ00001", "")
	mustNil(t, err)
	mustNil(t, c.DisableAccount("xyz00001"))
	if a, _ := s.Account("XYZ00001"); !a.Disabled {
		t.Errorf("DisableAccount over the socket left %+v", a)
	}
	as, err := c.Accounts()
	mustNil(t, err)
	das, err := s.Accounts()
	mustNil(t, err)
	same(t, "Accounts", as, das)
	if len(as) != 2 || !as[1].Disabled {
		t.Errorf("Accounts = %+v", as)
	}
	mustNil(t, c.EnableAccount("XYZ00001"))
	if a, _ := s.Account("XYZ00001"); a.Disabled {
		t.Errorf("EnableAccount over the socket left %+v", a)
	}

	u, err := c.AddUser("abc12345", "alice@example.com", "correct horse")
	mustNil(t, err)
	du, err := s.User("alice@example.com")
	mustNil(t, err)
	same(t, "AddUser", u, du)
	u, err = c.User("alice@example.com")
	mustNil(t, err)
	same(t, "User", u, du)
	verifies := func(name, pw string) bool {
		rec, ok, err := s.userRecord(name)
		mustNil(t, err)
		return ok && verifyPassword(rec.Hash, []byte(pw))
	}
	if !verifies("alice@example.com", "correct horse") {
		t.Error("the password sent over the socket does not verify")
	}
	mustNil(t, c.SetPassword("alice@example.com", "battery staple"))
	if !verifies("alice@example.com", "battery staple") || verifies("alice@example.com", "correct horse") {
		t.Error("SetPassword over the socket did not replace the password")
	}
	_, err = c.AddUser("XYZ00001", "bob", "password1")
	mustNil(t, err)
	mustNil(t, c.DisableUser("bob"))
	if u, _ := s.User("bob"); !u.Disabled {
		t.Errorf("DisableUser over the socket left %+v", u)
	}
	for _, acct := range []string{"", "abc12345", "XYZ00001", "ZZZ99999"} {
		us, err := c.Users(acct)
		mustNil(t, err)
		dus, err := s.Users(acct)
		mustNil(t, err)
		same(t, fmt.Sprintf("Users(%q)", acct), us, dus)
	}
	mustNil(t, c.EnableUser("bob"))
	if u, _ := s.User("bob"); u.Disabled {
		t.Errorf("EnableUser over the socket left %+v", u)
	}

	secret, k, err := c.CreateKey("abc12345", " billing ")
	mustNil(t, err)
	dk, err := s.Key(k.ID)
	mustNil(t, err)
	same(t, "CreateKey", k, dk)
	if k.Label != "billing" || k.Account != "ABC12345" {
		t.Errorf("CreateKey = %+v", k)
	}
	rec, ok, err := s.keyRecord(k.ID)
	mustNil(t, err)
	if sum := sha256.Sum256([]byte(secret)); !ok || !bytes.Equal(rec.SHA256, sum[:]) {
		t.Errorf("the secret CreateKey sent is not the stored key's")
	}
	_, k2, err := c.CreateKey("XYZ00001", "")
	mustNil(t, err)
	mustNil(t, c.RevokeKey(strings.ToUpper(k2.ID)))
	if k, _ := s.Key(k2.ID); !k.IsRevoked() {
		t.Errorf("RevokeKey over the socket left %+v", k)
	}
	for _, acct := range []string{"", "ABC12345", "xyz00001", "ZZZ99999"} {
		ks, err := c.Keys(acct)
		mustNil(t, err)
		dks, err := s.Keys(acct)
		mustNil(t, err)
		same(t, fmt.Sprintf("Keys(%q)", acct), ks, dks)
	}
	// The key works.
	an := NewAuthenticator(s, Config{})
	if p, err := an.Authenticate([]byte("Bearer "+secret), "192.0.2.1"); err != nil || p.Account != "ABC12345" {
		t.Errorf("key made over the socket: %+v %v", p, err)
	}
}

// TestAdminErrors: every error a Store gives, the client gives with the
// same text and sentinel.
func TestAdminErrors(t *testing.T) { eachKind(t, testAdminErrors) }

func testAdminErrors(t *testing.T, k kind) {
	fx := newAdminFixtureOn(t, k)
	s, c := fx.s, fx.c
	_, err := s.AddAccount("ABC12345", "Acme")
	mustNil(t, err)
	_, err = s.AddUser("ABC12345", "alice", "password1")
	mustNil(t, err)

	for _, tc := range []struct {
		name string
		want error
		call func(a Admin) error
	}{
		{"duplicate account", ErrExists, func(a Admin) error { _, err := a.AddAccount("abc12345", "again"); return err }},
		{"bad code", ErrInvalidInput, func(a Admin) error { _, err := a.AddAccount("AB12345", ""); return err }},
		{"control character in name", ErrInvalidInput, func(a Admin) error { _, err := a.AddAccount("ABD12345", "tab\there"); return err }},
		{"unknown account", ErrNotFound, func(a Admin) error { _, err := a.Account("ZZZ99999"); return err }},
		{"disable unknown account", ErrNotFound, func(a Admin) error { return a.DisableAccount("ZZZ99999") }},
		{"enable unknown account", ErrNotFound, func(a Admin) error { return a.EnableAccount("ZZZ99999") }},
		{"duplicate user", ErrExists, func(a Admin) error { _, err := a.AddUser("ABC12345", "alice", "password2"); return err }},
		{"user of unknown account", ErrNotFound, func(a Admin) error { _, err := a.AddUser("ZZZ99999", "carol", "password1"); return err }},
		{"bad user name", ErrInvalidInput, func(a Admin) error { _, err := a.AddUser("ABC12345", "a b", "password1"); return err }},
		{"short password", ErrInvalidInput, func(a Admin) error { _, err := a.AddUser("ABC12345", "carol", "short"); return err }},
		{"unknown user", ErrNotFound, func(a Admin) error { _, err := a.User("nobody"); return err }},
		{"password of unknown user", ErrNotFound, func(a Admin) error { return a.SetPassword("nobody", "password1") }},
		{"short new password", ErrInvalidInput, func(a Admin) error { return a.SetPassword("alice", "short") }},
		{"disable unknown user", ErrNotFound, func(a Admin) error { return a.DisableUser("nobody") }},
		{"enable unknown user", ErrNotFound, func(a Admin) error { return a.EnableUser("nobody") }},
		{"key of unknown account", ErrNotFound, func(a Admin) error { _, _, err := a.CreateKey("ZZZ99999", ""); return err }},
		{"control character in label", ErrInvalidInput, func(a Admin) error { _, _, err := a.CreateKey("ABC12345", "bad\x00label"); return err }},
		{"revoke unknown key", ErrNotFound, func(a Admin) error { return a.RevokeKey("aaaaaaaaaa") }},
	} {
		errC, errS := tc.call(c), tc.call(s)
		if !errors.Is(errC, tc.want) || !errors.Is(errS, tc.want) {
			t.Errorf("%s: over the socket %v, directly %v; want %v", tc.name, errC, errS, tc.want)
		} else if errC.Error() != errS.Error() {
			t.Errorf("%s: over the socket %q, directly %q", tc.name, errC, errS)
		}
	}

	// A closed store says so over the socket too.
	mustNil(t, s.Close())
	if _, err := c.Accounts(); !errors.Is(err, ErrClosed) {
		t.Errorf("Accounts of a closed store over the socket: %v, want ErrClosed", err)
	}
}

// rawAdmin sends payload on a connection of its own, half-closes it and
// returns the response line, or nil when the server closed without one.
func rawAdmin(t *testing.T, sock string, payload []byte) []byte {
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
	line, err := bufio.NewReader(io.LimitReader(conn, adminsock.DefaultMaxResponse)).ReadBytes('\n')
	<-wrote
	if errors.Is(err, io.EOF) && len(line) == 0 {
		return nil
	}
	if err != nil {
		t.Fatalf("reading the response: %q %v", line, err)
	}
	return line
}

// TestAdminHostile sends what a confused or malicious local client
// might: every request gets an error of the kind given, and the server
// goes on serving.
func TestAdminHostile(t *testing.T) {
	fx := newAdminFixture(t)
	_, err := fx.s.AddAccount("ABC12345", "Acme")
	mustNil(t, err)

	// A client that connects and says nothing does not hold others up.
	silent, err := net.Dial("unix", fx.sock)
	mustNil(t, err)
	defer silent.Close()

	mb := strings.Repeat("A", 1<<20)
	pad := func(req string, size int) string { // req padded with spaces to size bytes with its newline
		return req + strings.Repeat(" ", size-len(req)-1) + "\n"
	}
	for _, tc := range []struct {
		name, payload, kind string
	}{
		{"garbage", "hello\n", adminsock.KindBadRequest},
		{"binary", "\x00\xff\xfe\x80\n", adminsock.KindBadRequest},
		{"1 MB line", mb + "\n", adminsock.KindBadRequest},
		{"1 MB without newline", mb, adminsock.KindBadRequest},
		{"1 MB name", `{"op":"add_account","args":{"code":"ABD12345","name":"` + mb + `"}}` + "\n", adminsock.KindBadRequest},
		{"one byte over the limit", pad(`{"op":"accounts"}`, adminsock.DefaultMaxRequest+1), adminsock.KindBadRequest},
		{"at the limit", pad(`{"op":"accounts"}`, adminsock.DefaultMaxRequest), ""},
		{"no newline", `{"op":"accounts"}`, ""},
		{"CRLF", "{\"op\":\"accounts\"}\r\n", ""},
		{"blank line", "\n", adminsock.KindBadRequest},
		{"null", "null\n", adminsock.KindBadRequest},
		{"number", "12\n", adminsock.KindBadRequest},
		{"array", `[{"op":"accounts"}]` + "\n", adminsock.KindBadRequest},
		{"deep nesting", strings.Repeat("[", 50000) + "\n", adminsock.KindBadRequest},
		{"truncated", `{"op":"accou` + "\n", adminsock.KindBadRequest},
		{"no op", `{}` + "\n", adminsock.KindBadRequest},
		{"empty op", `{"op":""}` + "\n", adminsock.KindBadRequest},
		{"unknown op", `{"op":"drop_everything"}` + "\n", adminsock.KindBadRequest},
		{"method name as op", `{"op":"AddAccount","args":{"code":"ABD12345"}}` + "\n", adminsock.KindBadRequest},
		{"op of the wrong type", `{"op":5}` + "\n", adminsock.KindBadRequest},
		{"unknown field", `{"op":"accounts","admin":true}` + "\n", adminsock.KindBadRequest},
		{"two requests", `{"op":"accounts"} {"op":"accounts"}` + "\n", adminsock.KindBadRequest},
		{"trailing garbage", `{"op":"accounts"}x` + "\n", adminsock.KindBadRequest},
		{"missing args", `{"op":"add_account"}` + "\n", adminsock.KindBadRequest},
		{"null args", `{"op":"revoke_key","args":null}` + "\n", adminsock.KindBadRequest},
		{"missing password", `{"op":"add_user","args":{"account":"ABC12345","name":"bob"}}` + "\n", adminsock.KindBadRequest},
		{"null argument", `{"op":"account","args":{"code":null}}` + "\n", adminsock.KindBadRequest},
		{"args an array", `{"op":"accounts","args":[]}` + "\n", adminsock.KindBadRequest},
		{"args a string", `{"op":"account","args":"ABC12345"}` + "\n", adminsock.KindBadRequest},
		{"code a number", `{"op":"account","args":{"code":12345678}}` + "\n", adminsock.KindBadRequest},
		{"password an object", `{"op":"set_password","args":{"name":"bob","password":{"x":1}}}` + "\n", adminsock.KindBadRequest},
		{"unknown argument", `{"op":"account","args":{"code":"ABC12345","evil":1}}` + "\n", adminsock.KindBadRequest},
		{"argument not taken", `{"op":"account","args":{"code":"ABC12345","password":"password1"}}` + "\n", adminsock.KindBadRequest},
		{"bad code", `{"op":"add_account","args":{"code":"nope"}}` + "\n", kindInvalid},
		{"NUL in name", `{"op":"add_account","args":{"code":"ABD12345","name":"a\u0000b"}}` + "\n", kindInvalid},
		{"existing account", `{"op":"add_account","args":{"code":"ABC12345"}}` + "\n", kindExists},
		{"unknown key", `{"op":"revoke_key","args":{"id":"../../etc"}}` + "\n", kindNotFound},
	} {
		line := rawAdmin(t, fx.sock, []byte(tc.payload))
		var resp adminsock.Response
		if err := json.Unmarshal(line, &resp); err != nil {
			t.Errorf("%s: response %q: %v", tc.name, line, err)
		} else if tc.kind == "" && (!resp.OK || resp.Kind != "") {
			t.Errorf("%s: %+v, want ok", tc.name, resp)
		} else if tc.kind != "" && (resp.OK || resp.Kind != tc.kind || resp.Error == "" || resp.Result != nil) {
			t.Errorf("%s: %+v, want an error of kind %s", tc.name, resp, tc.kind)
		}
		if len(line) > 1000 {
			t.Errorf("%s: a response of %d bytes", tc.name, len(line))
		}
		if _, err := fx.c.Accounts(); err != nil {
			t.Fatalf("after %s: %v", tc.name, err)
		}
	}
	if line := rawAdmin(t, fx.sock, nil); line != nil {
		t.Errorf("empty connection answered %q", line)
	}
	as, err := fx.c.Accounts()
	mustNil(t, err)
	if len(as) != 1 {
		t.Errorf("the hostile requests changed the accounts: %+v", as)
	}
}

func TestAdminSocketFile(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, filepath.Join(dir, "auth"))
	sock := filepath.Join(dir, adminsock.SocketName)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	stop, err := ServeAdmin(ctx, s, sock)
	mustNil(t, err)
	fi, err := os.Lstat(sock)
	mustNil(t, err)
	if fi.Mode().Type() != os.ModeSocket || fi.Mode().Perm() != 0o600 {
		t.Errorf("socket file mode %v, want a socket with 0600", fi.Mode())
	}
	// A second server does not take over a live socket.
	if _, err := ServeAdmin(ctx, s, sock); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Errorf("second ServeAdmin: %v, want in use", err)
	}
	if _, err := DialAdmin(sock); err != nil {
		t.Errorf("the first server stopped answering: %v", err)
	}
	mustNil(t, stop())
	mustNil(t, stop()) // twice is fine
	if _, err := os.Lstat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stop left the socket file: %v", err)
	}
	if _, err := DialAdmin(sock); err == nil {
		t.Error("DialAdmin after stop worked")
	}

	// A stale socket (its server died) is replaced.
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	mustNil(t, err)
	ln.SetUnlinkOnClose(false)
	ln.Close()
	stop, err = ServeAdmin(ctx, s, sock)
	mustNil(t, err)
	if _, err := DialAdmin(sock); err != nil {
		t.Errorf("after replacing a stale socket: %v", err)
	}
	// Cancelling the context stops the server.
	cancel()
	mustNil(t, stop())
	if _, err := os.Lstat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the socket file is left after the context ended: %v", err)
	}

	// Something that is not a socket is left alone.
	mustNil(t, os.WriteFile(sock, []byte("mine"), 0o600))
	if _, err := ServeAdmin(context.Background(), s, sock); err == nil {
		t.Error("ServeAdmin over a regular file worked")
	}
	if b, err := os.ReadFile(sock); err != nil || string(b) != "mine" {
		t.Errorf("ServeAdmin touched a regular file: %q %v", b, err)
	}
}

// TestAdminOtherUser: a peer of another user is refused, where the system
// says who connects. The server is told to expect another user.
func TestAdminOtherUser(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, filepath.Join(dir, "auth"))
	sock := filepath.Join(dir, adminsock.SocketName)
	stop, err := serveAdmin(context.Background(), s, sock, os.Geteuid()+1)
	mustNil(t, err)
	defer stop()
	conn, err := net.Dial("unix", sock)
	mustNil(t, err)
	_, known, err := adminsock.PeerUID(conn.(*net.UnixConn))
	conn.Close()
	mustNil(t, err)
	if !known {
		t.Skip("this system does not tell a socket's peer")
	}
	_, err = DialAdmin(sock)
	if !errors.Is(err, adminsock.ErrDenied) {
		t.Fatalf("DialAdmin as another user: %v, want denied", err)
	}
	c := &adminClient{path: sock}
	if _, err := c.AddAccount("ABC12345", ""); !errors.Is(err, adminsock.ErrDenied) {
		t.Errorf("AddAccount as another user: %v, want denied", err)
	}
	if as, _ := s.Accounts(); len(as) != 0 {
		t.Errorf("a refused peer added %+v", as)
	}
}

func TestOpenAdmin(t *testing.T) {
	dataDir := t.TempDir()
	sock := filepath.Join(dataDir, adminsock.SocketName)

	// Nobody holds the store: it is opened directly.
	a, done, err := OpenAdmin(dataDir)
	mustNil(t, err)
	if _, ok := a.(*Store); !ok {
		t.Errorf("OpenAdmin of a free store gave %T", a)
	}
	_, err = a.AddAccount("ABC12345", "Acme")
	mustNil(t, err)
	mustNil(t, done())

	// Held (by a second handle in this process, which pebble refuses
	// like another process) and no socket: Open's error.
	s := openTest(t, filepath.Join(dataDir, "auth"))
	_, _, err = OpenAdmin(dataDir)
	if err == nil || !strings.Contains(err.Error(), "in use by another process") {
		t.Fatalf("OpenAdmin of a held store without socket: %v", err)
	}

	// A stale socket: Open's error, saying the socket does not answer.
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	mustNil(t, err)
	ln.SetUnlinkOnClose(false)
	ln.Close()
	_, _, err = OpenAdmin(dataDir)
	if err == nil || !strings.Contains(err.Error(), "in use by another process") || !strings.Contains(err.Error(), "does not answer") {
		t.Fatalf("OpenAdmin of a held store with a stale socket: %v", err)
	}

	// Served: the socket client.
	stop, err := ServeAdmin(context.Background(), s, sock)
	mustNil(t, err)
	defer stop()
	a, done, err = OpenAdmin(dataDir)
	mustNil(t, err)
	if _, ok := a.(*adminClient); !ok {
		t.Fatalf("OpenAdmin of a served store gave %T", a)
	}
	_, err = a.AddAccount("XYZ00001", "Other")
	mustNil(t, err)
	if _, err := a.AddAccount("ABC12345", ""); !errors.Is(err, ErrExists) {
		t.Errorf("duplicate through OpenAdmin's client: %v", err)
	}
	mustNil(t, done())
	if _, err := s.Account("XYZ00001"); err != nil {
		t.Errorf("the account added over the socket: %v", err)
	}
}

// TestOpenAdminOtherProcess: the real case, a server in another process.
func TestOpenAdminOtherProcess(t *testing.T) {
	if dataDir := os.Getenv("LODGE_AUTH_TEST_SERVE"); dataDir != "" {
		// The helper process: serve the store until stdin closes.
		s, err := openStore(filepath.Join(dataDir, "auth"), testParams)
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		stop, err := ServeAdmin(context.Background(), s, filepath.Join(dataDir, adminsock.SocketName))
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		fmt.Println("serving")
		io.Copy(io.Discard, os.Stdin)
		if err := errors.Join(stop(), s.Close()); err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	dataDir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestOpenAdminOtherProcess$")
	cmd.Env = append(os.Environ(), "LODGE_AUTH_TEST_SERVE="+dataDir)
	stdin, err := cmd.StdinPipe()
	mustNil(t, err)
	stdout, err := cmd.StdoutPipe()
	mustNil(t, err)
	mustNil(t, cmd.Start())
	defer cmd.Wait()
	defer stdin.Close()
	out := bufio.NewReader(stdout)
	line, _ := out.ReadString('\n')
	if line != "serving\n" {
		t.Fatalf("helper: %q", line)
	}

	a, done, err := OpenAdmin(dataDir)
	mustNil(t, err)
	if _, ok := a.(*adminClient); !ok {
		t.Fatalf("OpenAdmin while another process serves gave %T", a)
	}
	_, err = a.AddAccount("ABC12345", "Acme")
	mustNil(t, err)
	_, err = a.AddUser("ABC12345", "alice", "password1")
	mustNil(t, err)
	secret, k, err := a.CreateKey("ABC12345", "ops")
	mustNil(t, err)
	if _, err := a.AddAccount("abc12345", ""); !errors.Is(err, ErrExists) {
		t.Errorf("duplicate account from another process: %v", err)
	}
	mustNil(t, done())

	stdin.Close()
	rest, _ := io.ReadAll(out)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("helper: %v %s", err, rest)
	}
	if _, err := os.Lstat(filepath.Join(dataDir, adminsock.SocketName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the helper left its socket: %v", err)
	}
	// What the other process wrote is there.
	s := openTest(t, filepath.Join(dataDir, "auth"))
	if u, err := s.User("alice"); err != nil || u.Account != "ABC12345" {
		t.Errorf("user added over the socket: %+v %v", u, err)
	}
	an := NewAuthenticator(s, Config{})
	if p, err := an.Authenticate([]byte("Bearer "+secret), "192.0.2.1"); err != nil || p.KeyID != k.ID {
		t.Errorf("key made over the socket: %+v %v", p, err)
	}
}

// nopAdmin does nothing; FuzzAdminRequest runs decoded calls on it.
type nopAdmin struct{}

func (nopAdmin) AddAccount(code, name string) (Account, error)        { return Account{}, nil }
func (nopAdmin) Account(code string) (Account, error)                 { return Account{}, nil }
func (nopAdmin) Accounts() ([]Account, error)                         { return nil, nil }
func (nopAdmin) DisableAccount(code string) error                     { return nil }
func (nopAdmin) EnableAccount(code string) error                      { return nil }
func (nopAdmin) AddUser(account, name, password string) (User, error) { return User{}, nil }
func (nopAdmin) User(name string) (User, error)                       { return User{}, nil }
func (nopAdmin) SetPassword(name, password string) error              { return nil }
func (nopAdmin) SetRole(name, role string) error                      { return nil }
func (nopAdmin) DisableUser(name string) error                        { return nil }
func (nopAdmin) EnableUser(name string) error                         { return nil }
func (nopAdmin) Users(account string) ([]User, error)                 { return nil, nil }
func (nopAdmin) CreateKey(account, label string) (string, Key, error) { return "", Key{}, nil }
func (nopAdmin) Keys(account string) ([]Key, error)                   { return nil, nil }
func (nopAdmin) RevokeKey(id string) error                            { return nil }

// FuzzAdminRequest: a request line through the server's whole path (on
// an Admin that does nothing) gets one answer: ok, or a bad request when
// the line is not a request, names an unknown op or arguments the op does
// not take. A request accepted gives a known op with exactly the
// arguments it takes, which survives a round trip through the client's
// encoding.
func FuzzAdminRequest(f *testing.F) {
	for _, s := range []string{
		"", "\n", "null", "{}", "[]", `{"op":"ping"}`, `{"op":"accounts","args":{}}`,
		`{"op":"add_account","args":{"code":"ABC12345","name":"Acme"}}`,
		`{"op":"add_user","args":{"account":"ABC12345","name":"alice","password":"password1"}}`,
		`{"op":"set_password","args":{"name":"alice","password":"p\u0000ssw\ud800rd"}}`,
		`{"op":"create_key","args":{"account":"ABC12345","label":null}}`,
		`{"op":"revoke_key","args":{"id":5}}`, `{"op":"keys","args":[]}`, `{"op":"users","args":"x"}`,
		`{"op":"account","args":{"code":"ABC12345","evil":1}}`, `{"OP":"ping"}`, `{"op":"ping"}{"op":"ping"}`,
		`{"op":"ping","op":"accounts"}`, `{"op":"\xff"}`, strings.Repeat("[", 1000),
	} {
		f.Add([]byte(s))
	}
	srv := adminsock.NewServer(adminsock.Config{})
	srv.HandleOps(AdminOps(nopAdmin{}))
	f.Fuzz(func(t *testing.T, line []byte) {
		var resp adminsock.Response
		answer := srv.Call(line)
		if err := json.Unmarshal(answer, &resp); err != nil || bytes.IndexByte(answer, '\n') != len(answer)-1 {
			t.Fatalf("%q: answer %q: %v", line, answer, err)
		}
		if !resp.OK && resp.Kind != adminsock.KindBadRequest {
			t.Fatalf("%q: answer %+v, want ok or a bad request", line, resp)
		}
		req, err := adminsock.DecodeRequest(line)
		if err == nil && req.Op == "ping" {
			return
		}
		var call adminCall
		if err == nil {
			call, err = decodeAdminArgs(req.Op, req.Args)
		}
		if err != nil {
			if !errors.Is(err, adminsock.ErrBadRequest) {
				t.Fatalf("%q: error %v is not a bad request", line, err)
			}
			if resp.OK {
				t.Fatalf("%q: refused (%v) yet answered ok", line, err)
			}
			return
		}
		if !resp.OK {
			t.Fatalf("%q: accepted yet answered %+v", line, resp)
		}
		op, ok := adminOps[call.op]
		if !ok {
			t.Fatalf("%q: unknown op %q accepted", line, call.op)
		}
		if have := call.args.present(); have&^op.allowed != 0 || op.required&^have != 0 {
			t.Fatalf("%q: op %s with arguments %s", line, call.op, argList(have))
		}
		args, err := json.Marshal(call.args)
		mustNil(t, err)
		again, err := json.Marshal(adminsock.Request{Op: call.op, Args: args})
		mustNil(t, err)
		req2, err := adminsock.DecodeRequest(again)
		mustNil(t, err)
		call2, err := decodeAdminArgs(req2.Op, req2.Args)
		if err != nil || !reflect.DeepEqual(call, call2) {
			t.Fatalf("%q: re-encoded as %s, decoded as %+v %v", line, again, call2, err)
		}
		if _, err := call.run(nopAdmin{}); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
	})
}
