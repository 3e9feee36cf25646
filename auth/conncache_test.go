package auth

import (
	"errors"
	"sync"
	"testing"
	"time"
)

// TestConnCacheChanges checks that a connection's remembered credentials
// are verified once, then honoured without work, and that every kind of
// change to the store applies to the very next request of the connection.
func TestConnCacheChanges(t *testing.T) { eachKind(t, testConnCacheChanges) }

func testConnCacheChanges(t *testing.T, k kind) {
	alice := Principal{Account: "ABC12345", User: "alice", Method: MethodBasic, Role: RoleCustomer}
	client := func() string { return "192.0.2.1" }

	// f: the header authenticates as want, once verified and then
	// remembered; change runs; the next request on the same connection
	// is verified again and gives wantErr, or after.
	f := func(name string, header func(fx *fixture) string, want Principal, change func(fx *fixture) error, wantErr error, after Principal) {
		t.Helper()
		fx := newFixtureOn(t, k, Config{CacheTTL: -1}) // no process-wide Basic cache: every verification shows
		for _, p := range []*Principal{&want, &after} {
			if p.Method == MethodBearer {
				p.KeyID = fx.goodID
			}
		}
		h := []byte(header(fx))
		var c ConnCache
		for i, wantWork := range []int{1, 0, 0} {
			p, err := fx.a.AuthenticateConn(&c, h, client)
			v, k := fx.work()
			if err != nil || p != want || len(v)+k != wantWork {
				t.Fatalf("%s: request %d before the change = %+v, %v after %d verifications; want %+v after %d", name, i+1, p, err, len(v)+k, want, wantWork)
			}
		}
		if err := change(fx); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		p, err := fx.a.AuthenticateConn(&c, h, client)
		v, k := fx.work()
		if !errors.Is(err, wantErr) || p != after {
			t.Errorf("%s: the request after the change = %+v, %v; want %+v, %v", name, p, err, after, wantErr)
		}
		if len(v)+k != 1 && !errors.Is(wantErr, ErrClosed) {
			t.Errorf("%s: the request after the change made %d verifications, want 1", name, len(v)+k)
		}
	}
	bearer := func(fx *fixture) string { return "Bearer " + fx.good }
	aliceBasic := func(fx *fixture) string { return basic("alice", "password1") }
	key := Principal{Account: "ABC12345", Method: MethodBearer}
	none := Principal{}

	f("key revoked", bearer, key, func(fx *fixture) error { return fx.s.RevokeKey(fx.goodID) }, ErrInvalid, none)
	f("key's account disabled", bearer, key, func(fx *fixture) error { return fx.s.DisableAccount("ABC12345") }, ErrInvalid, none)
	f("user disabled", aliceBasic, alice, func(fx *fixture) error { return fx.s.DisableUser("alice") }, ErrInvalid, none)
	f("user's account disabled", aliceBasic, alice, func(fx *fixture) error { return fx.s.DisableAccount("ABC12345") }, ErrInvalid, none)
	f("password changed", aliceBasic, alice, func(fx *fixture) error { return fx.s.SetPassword("alice", "password9") }, ErrInvalid, none)
	f("role changed", aliceBasic, alice, func(fx *fixture) error { return fx.s.SetRole("alice", RoleOperator) },
		nil, Principal{Account: "ABC12345", User: "alice", Method: MethodBasic, Role: RoleOperator})
	f("store closed", bearer, key, func(fx *fixture) error { return fx.s.Close() }, ErrClosed, none)
	// The generation is the store's: any write has the next request
	// verified again, which then still succeeds.
	f("another account added", bearer, key, func(fx *fixture) error { _, err := fx.s.AddAccount("DEF00001", ""); return err }, nil, key)
	f("another key revoked", aliceBasic, alice, func(fx *fixture) error { return fx.s.RevokeKey(fx.goodID) }, nil, alice)
}

// TestConnCacheHeaders checks what a ConnCache holds: the exact bytes of
// one header that authenticated, for one connection.
func TestConnCacheHeaders(t *testing.T) { eachKind(t, testConnCacheHeaders) }

func testConnCacheHeaders(t *testing.T, k kind) {
	fx := newFixtureOn(t, k, Config{CacheTTL: -1, MaxFailures: -1})
	good := "Bearer " + fx.good
	client := func() string { return "192.0.2.1" }
	// f authenticates header with c and checks the error and the
	// verifications made (0: answered from c).
	f := func(c *ConnCache, header string, wantErr error, wantWork int) {
		t.Helper()
		_, err := fx.a.AuthenticateConn(c, []byte(header), client)
		v, k := fx.work()
		if !errors.Is(err, wantErr) || len(v)+k != wantWork {
			t.Errorf("AuthenticateConn(%.40q) = %v after %d verifications; want %v after %d", header, err, len(v)+k, wantErr, wantWork)
		}
	}
	var c1, c2 ConnCache
	f(&c1, good, nil, 1)
	f(&c1, good, nil, 0)
	f(&c2, good, nil, 1) // another connection does not see c1's
	f(&c2, good, nil, 0)
	f(&c1, good, nil, 0)

	f(&c1, "bearer "+fx.good, nil, 1) // the same key written otherwise is another header
	f(&c1, good, nil, 1)              // which took the place of the first
	f(&c1, good+" ", nil, 1)
	f(&c1, basic("alice", "password1"), nil, 1)
	f(&c1, basic("alice", "password1"), nil, 0)
	f(&c1, basic("alice", "password2"), ErrInvalid, 1)
	f(&c1, basic("alice", "password1"), nil, 1) // a failure empties it
	f(&c1, "Bearer "+fx.revoked, ErrInvalid, 1)
	f(&c1, "Bearer "+fx.revoked, ErrInvalid, 1) // failures are never remembered
	f(&c1, "", ErrMissing, 0)
	f(&c1, good, nil, 1)
	f(&c1, `Digest username="alice", realm="lodge", nonce="x", uri="/", response="y"`, ErrUnsupported, 0)
	f(&c1, good, nil, 1)
	c1.Reset()
	f(&c1, good, nil, 1)
	f(nil, good, nil, 1) // no cache
	f(nil, good, nil, 1)
	if c1.ok != true || string(c1.header) != good {
		t.Fatalf("c1 holds %q (ok %v)", c1.header, c1.ok)
	}
	c1.Reset()
	if c1.ok || c1.header != nil || c1.p != (Principal{}) {
		t.Errorf("Reset left %q, %+v", c1.header, c1.p)
	}

	// The header is the cache's own copy: the caller's buffer is reused
	// by the next request.
	buf := []byte(good)
	f(&c2, basic("alice", "password1"), nil, 1)
	if _, err := fx.a.AuthenticateConn(&c2, buf, client); err != nil {
		t.Fatal(err)
	}
	fx.work()
	copy(buf, basic("alice", "password1"))
	f(&c2, good, nil, 0)
}

// TestConnCacheThrottle checks that remembered credentials do not get
// past a throttle that Authenticate would apply, and that the client's
// address is not even computed while nothing is throttled.
func TestConnCacheThrottle(t *testing.T) { eachKind(t, testConnCacheThrottle) }

func testConnCacheThrottle(t *testing.T, k kind) {
	fx := newFixtureOn(t, k, Config{CacheTTL: -1, MaxFailures: 3, MaxClientFailures: 6, FailureWindow: time.Minute})
	good := []byte("Bearer " + fx.good)
	wrong := []byte("Bearer " + fx.good[:14] + "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
	asked := 0
	from := func(ip string) func() string { return func() string { asked++; return ip } }
	// f authenticates header from ip with c and checks the error, the
	// verifications and whether the client's address was asked for.
	f := func(c *ConnCache, header []byte, ip string, wantErr error, wantWork int, wantAsked bool) {
		t.Helper()
		asked = 0
		_, err := fx.a.AuthenticateConn(c, header, from(ip))
		v, k := fx.work()
		if !errors.Is(err, wantErr) || len(v)+k != wantWork || (asked > 0) != wantAsked {
			t.Errorf("AuthenticateConn(%.30q) from %s = %v after %d verifications, address asked %d times; want %v after %d, asked %v",
				header, ip, err, len(v)+k, asked, wantErr, wantWork, wantAsked)
		}
	}
	var c1, c2 ConnCache
	f(&c1, good, "192.0.2.1", nil, 1, true)
	f(&c1, good, "192.0.2.1", nil, 0, false)
	f(&c2, good, "192.0.2.2", nil, 1, true)
	for range 3 { // the key guessed at from 192.0.2.1 on another connection
		f(nil, wrong, "192.0.2.1", ErrInvalid, 1, true)
	}
	f(nil, good, "192.0.2.1", ErrThrottled, 0, true)                       // what Authenticate does
	f(&c1, good, "192.0.2.1", ErrThrottled, 0, true)                       // and so does the remembered key
	f(&c2, good, "192.0.2.2", nil, 0, true)                                // other clients are not throttled
	f(&c1, []byte(basic("alice", "password1")), "192.0.2.1", nil, 1, true) // nor other identities of that client
	f(&c1, good, "192.0.2.1", ErrThrottled, 0, true)
	fx.clock.Add(time.Minute)
	f(&c1, good, "192.0.2.1", nil, 1, true) // c1 held alice's credentials last
	f(&c1, good, "192.0.2.1", nil, 0, false)

	// The whole client throttled: 6 failures of any names.
	for _, u := range []string{"u1", "u2", "u3", "u4", "u5", "u6"} {
		f(nil, []byte(basic(u, "password1")), "192.0.2.1", ErrInvalid, 1, true)
	}
	f(&c1, good, "192.0.2.1", ErrThrottled, 0, true)
	f(&c2, good, "192.0.2.2", nil, 0, true)
	fx.clock.Add(time.Minute)
	f(&c1, good, "192.0.2.1", nil, 0, false)
}

// TestConnCacheRevokeRace checks the generation's promise under
// concurrency: once RevokeKey has returned, no connection's next request
// with the key succeeds, however its remembered verification raced with
// the revocation.
func TestConnCacheRevokeRace(t *testing.T) { eachKind(t, testConnCacheRevokeRace) }

func testConnCacheRevokeRace(t *testing.T, k kind) {
	fx := newFixtureOn(t, k, Config{MaxFailures: -1}) // requests racing past the revocation fail, and would be throttled
	h := []byte("Bearer " + fx.good)
	client := func() string { return "192.0.2.1" }
	revoked := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var c ConnCache
			for {
				select {
				case <-revoked:
					if _, err := fx.a.AuthenticateConn(&c, h, client); !errors.Is(err, ErrInvalid) {
						errs <- err
					}
					return
				default:
				}
				fx.a.AuthenticateConn(&c, h, client)
			}
		}()
	}
	mustNil(t, fx.s.RevokeKey(fx.goodID))
	close(revoked)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("a request after RevokeKey returned: %v, want %v", err, ErrInvalid)
	}
}

// TestConnCacheAllocs checks that a remembered header costs no
// allocation, with the default throttle on and nothing throttled.
func TestConnCacheAllocs(t *testing.T) {
	fx := newFixture(t, Config{})
	client := func() string { return "192.0.2.1" }
	for _, h := range []string{"Bearer " + fx.good, basic("alice", "password1")} {
		var c ConnCache
		b := []byte(h)
		if _, err := fx.a.AuthenticateConn(&c, b, client); err != nil {
			t.Fatal(err)
		}
		if n := testing.AllocsPerRun(200, func() { fx.a.AuthenticateConn(&c, b, client) }); n != 0 {
			t.Errorf("%.20s…: %v allocations a request, want 0", h, n)
		}
	}
}

// FuzzAuthenticateConn: on a connection that remembers a good key, any
// header gets what Authenticate gives it, and the good key still works
// after it.
func FuzzAuthenticateConn(f *testing.F) {
	fx := newFixture(f, Config{MaxFailures: -1})
	good := []byte("Bearer " + fx.good)
	for _, s := range []string{
		"", "Bearer " + fx.good, "Bearer " + fx.good + " ", "bearer " + fx.good, "Bearer " + fx.good[:56], "Bearer " + fx.good + "A",
		"Bearer " + fx.revoked, basic("alice", "password1"), basic("alice", "password2"), "Digest username=\"alice\"", "\x00\xff",
	} {
		f.Add([]byte(s))
	}
	client := func() string { return "192.0.2.1" }
	f.Fuzz(func(t *testing.T, header []byte) {
		var c ConnCache
		if _, err := fx.a.AuthenticateConn(&c, good, client); err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			want, wantErr := fx.a.Authenticate(header, "192.0.2.1")
			p, err := fx.a.AuthenticateConn(&c, header, client)
			if p != want || (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
				t.Fatalf("header %q, request %d: %+v, %v; Authenticate gives %+v, %v", header, i+1, p, err, want, wantErr)
			}
		}
		if _, err := fx.a.AuthenticateConn(&c, good, client); err != nil {
			t.Fatalf("the good key after %q: %v", header, err)
		}
	})
}
