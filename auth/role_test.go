package auth

import (
	"bytes"
	"encoding/base64"
	"errors"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

func basicCred(user, pw string) []byte {
	return []byte("Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pw)))
}

// TestRoleOldRecord: a user record written before roles existed (no role
// field) reads, lists and signs in as a customer; SetRole makes it an
// operator at once, even with its verification cached, and back.
func TestRoleOldRecord(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "auth")
	s := openTest(t, dir)
	_, err := s.AddAccount("ABC12345", "Acme")
	mustNil(t, err)
	_, err = s.AddUser("ABC12345", "alice", "correct horse")
	mustNil(t, err)
	// Rewrite the record as an older lodge wrote it: the same fields but
	// role, which it did not know.
	rec, ok, err := getJSON[map[string]any](pebbleDB(s), userPrefix+"alice")
	if err != nil || !ok {
		t.Fatalf("reading the record: %v %v", ok, err)
	}
	delete(rec, "role")
	b := pebbleDB(s).NewBatch()
	mustNil(t, setJSON(b, userPrefix+"alice", rec))
	mustNil(t, b.Commit(pebble.Sync))
	s.Close()
	s = openTest(t, dir)

	an := NewAuthenticator(s, Config{})
	role := func(want string) {
		t.Helper()
		u, err := s.User("alice")
		mustNil(t, err)
		us, err := s.Users("")
		mustNil(t, err)
		p, err := an.Authenticate(basicCred("alice", "correct horse"), "192.0.2.1")
		mustNil(t, err)
		if u.Role != want || len(us) != 1 || us[0].Role != want || p.Role != want || u.IsOperator() != (want == RoleOperator) {
			t.Errorf("role: User %q, Users %+v, signed in as %q; want %q", u.Role, us, p.Role, want)
		}
	}
	role(RoleCustomer)
	mustNil(t, s.SetRole("alice", RoleOperator))
	role(RoleOperator) // the cached verification is not honoured past the change
	s.Close()
	s = openTest(t, dir) // and the role is on disk
	an = NewAuthenticator(s, Config{})
	role(RoleOperator)
	mustNil(t, s.SetRole("alice", RoleCustomer))
	role(RoleCustomer)
	// the customer role is stored as before roles: no field
	raw, closer, err := pebbleDB(s).Get([]byte(userPrefix + "alice"))
	mustNil(t, err)
	if bytes.Contains(raw, []byte(`"role"`)) {
		t.Errorf("a customer's record holds a role: %s", raw)
	}
	closer.Close()

	// An API key has no role.
	secret, _, err := s.CreateKey("ABC12345", "")
	mustNil(t, err)
	if p, err := an.Authenticate([]byte("Bearer "+secret), "192.0.2.1"); err != nil || p.Role != "" {
		t.Errorf("a key signs in with role %q (%v)", p.Role, err)
	}
}

// TestSetRoleErrors: a role other than customer or operator, and an
// unknown user, are refused, directly and over the admin socket alike,
// and change nothing.
func TestSetRoleErrors(t *testing.T) { eachKind(t, testSetRoleErrors) }

func testSetRoleErrors(t *testing.T, k kind) {
	fx := newAdminFixtureOn(t, k)
	_, err := fx.s.AddAccount("ABC12345", "")
	mustNil(t, err)
	_, err = fx.s.AddUser("ABC12345", "alice", "correct horse")
	mustNil(t, err)
	f := func(name, role string, want error) {
		t.Helper()
		for _, a := range []Admin{fx.s, fx.c} {
			err := a.SetRole(name, role)
			if !errors.Is(err, want) {
				t.Errorf("SetRole(%q, %q) = %v, want %v", name, role, err, want)
			}
		}
		if u, _ := fx.s.User("alice"); u.Role != RoleCustomer {
			t.Errorf("after SetRole(%q, %q) alice is %q", name, role, u.Role)
		}
	}
	f("alice", "", ErrInvalidInput)
	f("alice", "Operator", ErrInvalidInput)
	f("alice", "admin", ErrInvalidInput)
	f("alice", "operator\x00", ErrInvalidInput)
	f("nobody", RoleOperator, ErrNotFound)

	// over the socket it works as directly
	mustNil(t, fx.c.SetRole("alice", RoleOperator))
	u, err := fx.c.User("alice")
	mustNil(t, err)
	du, err := fx.s.User("alice")
	mustNil(t, err)
	same(t, "User after SetRole", u, du)
	if u.Role != RoleOperator {
		t.Errorf("SetRole over the socket left %+v", u)
	}
}
