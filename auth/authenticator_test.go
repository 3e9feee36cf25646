package auth

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *fakeClock { return &fakeClock{t: time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// fixture is a store with:
//
//	ABC12345: user alice (password1), dave (password4, disabled), colon (pass:word:x);
//	          keys good, revoked
//	XYZ00001 (disabled): user erin (password5); key xkey
type fixture struct {
	k                  kind
	place              string // where the store is (see kind)
	s                  *Store
	a                  *Authenticator
	clock              *fakeClock
	good, revoked, xky string
	goodID             string

	mu        sync.Mutex
	verified  []string // PHC hashes passed to the password check, in order
	keyChecks atomic.Int64
}

// newFixtureOn makes the fixture on a new store of kind k.
func newFixtureOn(t testing.TB, kd kind, cfg Config) *fixture {
	t.Helper()
	fx := &fixture{k: kd, place: kd.place(t), clock: newClock()}
	fx.s = kd.openTest(t, fx.place)
	s := fx.s
	_, err := s.AddAccount("ABC12345", "Acme")
	mustNil(t, err)
	_, err = s.AddAccount("XYZ00001", "Gone")
	mustNil(t, err)
	for _, u := range [][3]string{{"ABC12345", "alice", "password1"}, {"ABC12345", "dave", "password4"}, {"ABC12345", "colon", "pass:word:x"}, {"XYZ00001", "erin", "password5"}} {
		_, err := s.AddUser(u[0], u[1], u[2])
		mustNil(t, err)
	}
	mustNil(t, s.DisableUser("dave"))
	var k Key
	fx.good, k, err = s.CreateKey("ABC12345", "good")
	mustNil(t, err)
	fx.goodID = k.ID
	fx.revoked, k, err = s.CreateKey("ABC12345", "revoked")
	mustNil(t, err)
	mustNil(t, s.RevokeKey(k.ID))
	fx.xky, _, err = s.CreateKey("XYZ00001", "")
	mustNil(t, err)
	mustNil(t, s.DisableAccount("XYZ00001"))

	if cfg.Now == nil {
		cfg.Now = fx.clock.Now
	}
	fx.a = NewAuthenticator(s, cfg)
	fx.a.verifyPW = func(phc string, pw []byte) bool {
		fx.mu.Lock()
		fx.verified = append(fx.verified, phc)
		fx.mu.Unlock()
		return verifyPassword(phc, pw)
	}
	fx.a.checkKey = func(want, tok []byte) bool {
		fx.keyChecks.Add(1)
		return checkKeyHash(want, tok)
	}
	return fx
}

// work returns and resets the password verifications and key checks done.
func (fx *fixture) work() (verified []string, keyChecks int) {
	fx.mu.Lock()
	defer fx.mu.Unlock()
	v := fx.verified
	fx.verified = nil
	return v, int(fx.keyChecks.Swap(0))
}

func (fx *fixture) hash(user string) string {
	rec, _, _ := fx.s.userRecord(user)
	return rec.Hash
}

func basic(user, pass string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
}

func TestAuthenticate(t *testing.T) { eachKind(t, testAuthenticate) }

func testAuthenticate(t *testing.T, k kind) {
	fx := newFixtureOn(t, k, Config{CacheTTL: -1, MaxFailures: -1})
	alice := Principal{Account: "ABC12345", User: "alice", Method: MethodBasic, Role: RoleCustomer}
	bearer := Principal{Account: "ABC12345", KeyID: fx.goodID, Method: MethodBearer}
	dummy := fx.s.dummyHash()

	// f checks one header: the error, the principal, and the work done:
	// which password hash was verified ("" for none) and how many key
	// hashes compared.
	f := func(header string, wantErr error, want Principal, verified string, keyChecks int) {
		t.Helper()
		p, err := fx.a.Authenticate([]byte(header), "192.0.2.1")
		if !errors.Is(err, wantErr) || p != want {
			t.Errorf("Authenticate(%.60q) = %+v, %v; want %+v, %v", header, p, err, want, wantErr)
		}
		v, k := fx.work()
		if verified == "" && len(v) != 0 || verified != "" && (len(v) != 1 || v[0] != verified) || k != keyChecks {
			t.Errorf("Authenticate(%.60q): verified %d hashes (dummy: %v), %d key checks; want %q, %d", header, len(v), len(v) > 0 && v[0] == dummy, k, verified, keyChecks)
		}
	}
	none := Principal{}
	b64 := base64.StdEncoding.EncodeToString
	unknownID := "lk_aaaaaaaaaa_" + fx.good[14:]
	wrongSecret := fx.good[:14] + strings.Repeat("A", 43)

	// Bearer.
	f("Bearer "+fx.good, nil, bearer, "", 1)
	f("bearer "+fx.good, nil, bearer, "", 1)
	f("BEARER\t "+fx.good+" ", nil, bearer, "", 1)
	f("Bearer "+unknownID, ErrInvalid, none, "", 1)
	f("Bearer "+wrongSecret, ErrInvalid, none, "", 1)
	f("Bearer "+fx.good[:56], ErrInvalid, none, "", 1) // truncated
	f("Bearer "+fx.good+"A", ErrInvalid, none, "", 1)
	f("Bearer "+fx.revoked, ErrInvalid, none, "", 1)
	f("Bearer "+fx.xky, ErrInvalid, none, "", 1) // disabled account
	f("Bearer abc", ErrInvalid, none, "", 1)
	f("Bearer "+strings.ToUpper(fx.good), ErrInvalid, none, "", 1)

	// Basic.
	f(basic("alice", "password1"), nil, alice, fx.hash("alice"), 0)
	f("basic "+b64([]byte("alice:password1")), nil, alice, fx.hash("alice"), 0)
	f("Basic "+base64.RawStdEncoding.EncodeToString([]byte("alice:password1")), nil, alice, fx.hash("alice"), 0) // no padding
	f(basic("colon", "pass:word:x"), nil, Principal{Account: "ABC12345", User: "colon", Method: MethodBasic, Role: RoleCustomer}, fx.hash("colon"), 0)
	f(basic("alice", "password2"), ErrInvalid, none, fx.hash("alice"), 0)
	f(basic("alice", ""), ErrInvalid, none, fx.hash("alice"), 0)
	f(basic("Alice", "password1"), ErrInvalid, none, dummy, 0) // names are exact
	f(basic("nobody", "password1"), ErrInvalid, none, dummy, 0)
	f(basic("", "password1"), ErrInvalid, none, dummy, 0)
	f(basic("bad name", "password1"), ErrInvalid, none, dummy, 0)
	f(basic(strings.Repeat("x", 65), "password1"), ErrInvalid, none, dummy, 0)
	f(basic("dave", "password4"), ErrInvalid, none, fx.hash("dave"), 0) // disabled user, right password
	f(basic("dave", "wrong"), ErrInvalid, none, fx.hash("dave"), 0)
	f(basic("erin", "password5"), ErrInvalid, none, fx.hash("erin"), 0) // disabled account

	// Headers that are not one Bearer or Basic credential.
	f("", ErrMissing, none, "", 0)
	f(" \t ", ErrMissing, none, "", 0)
	f("Bearer", ErrMalformed, none, "", 0)
	f("Bearer ", ErrMalformed, none, "", 0)
	f("Basic", ErrMalformed, none, "", 0)
	f(fx.good, ErrMalformed, none, "", 0) // no scheme
	f("Token "+fx.good, ErrMalformed, none, "", 0)
	f("Negotiate YII=", ErrMalformed, none, "", 0)
	f("Bearer: "+fx.good, ErrMalformed, none, "", 0)
	f("Bearer "+fx.good+", "+basic("alice", "password1"), ErrMalformed, none, "", 0) // two schemes
	f("Bearer "+fx.good+" "+fx.good, ErrMalformed, none, "", 0)                      // two credentials
	f("Bearer "+fx.good+","+fx.good, ErrMalformed, none, "", 0)
	f("Bearer a b", ErrMalformed, none, "", 0)
	f("Bearer ="+fx.good, ErrMalformed, none, "", 0)
	f("Bearer "+fx.good+"\x00", ErrMalformed, none, "", 0)
	f("Basic !!!!", ErrMalformed, none, "", 0)
	f("Basic YWxpY2U6cGFzc3dvcmQx=", ErrMalformed, none, "", 0) // wrong padding
	f("Basic "+b64([]byte("alice")), ErrMalformed, none, "", 0) // no colon
	f("Basic "+b64([]byte("alice:password1"))+" x", ErrMalformed, none, "", 0)
	f("Basic realm=x", ErrMalformed, none, "", 0)
	f(`Digest username="alice", realm="lodge", nonce="x", uri="/", response="y"`, ErrUnsupported, none, "", 0)
	f("digest x", ErrUnsupported, none, "", 0)
}

// TestSameWork checks that an unknown user costs what a known one does:
// one verification through the same function, with the same parameters.
func TestSameWork(t *testing.T) { eachKind(t, testSameWork) }

func testSameWork(t *testing.T, k kind) {
	fx := newFixtureOn(t, k, Config{CacheTTL: -1, MaxFailures: -1})
	params := func(phc string) string { return strings.Split(phc, "$")[3] }
	for _, c := range []struct{ user, pass string }{{"alice", "wrong"}, {"nobody", "wrong"}, {"dave", "password4"}, {"", ""}} {
		fx.a.Authenticate([]byte(basic(c.user, c.pass)), "192.0.2.1")
		v, _ := fx.work()
		if len(v) != 1 || params(v[0]) != params(fx.hash("alice")) {
			t.Errorf("user %q: verified %q, want one verification with %s", c.user, v, params(fx.hash("alice")))
		}
	}
	for _, tok := range []string{fx.good, "lk_aaaaaaaaaa_" + fx.good[14:], "x", fx.good[:20]} {
		fx.a.Authenticate([]byte("Bearer "+tok), "192.0.2.1")
		if _, k := fx.work(); k != 1 {
			t.Errorf("Bearer %q: %d key hash comparisons, want 1", tok, k)
		}
	}
}

func TestCache(t *testing.T) { eachKind(t, testCache) }

func testCache(t *testing.T, k kind) {
	fx := newFixtureOn(t, k, Config{MaxFailures: -1})
	a, s := fx.a, fx.s
	// f authenticates and checks the error and whether a password was
	// verified (false: answered from the cache, or refused before).
	f := func(header string, wantErr error, wantVerify bool) {
		t.Helper()
		_, err := a.Authenticate([]byte(header), "192.0.2.1")
		v, _ := fx.work()
		if !errors.Is(err, wantErr) || (len(v) > 0) != wantVerify {
			t.Errorf("Authenticate(%q) = %v with %d verifications; want %v, verify %v", header, err, len(v), wantErr, wantVerify)
		}
	}
	f(basic("alice", "password1"), nil, true)
	f(basic("alice", "password1"), nil, false) // cached
	f(basic("alice", "password2"), ErrInvalid, true)
	f(basic("alice", "password1"), nil, false)
	fx.clock.Add(5*time.Minute - time.Second)
	f(basic("alice", "password1"), nil, false)
	fx.clock.Add(time.Second) // TTL over
	f(basic("alice", "password1"), nil, true)
	f(basic("alice", "password1"), nil, false)

	mustNil(t, s.SetPassword("alice", "password9"))
	f(basic("alice", "password1"), ErrInvalid, true) // the old password is not served from the cache
	f(basic("alice", "password9"), nil, true)
	f(basic("alice", "password9"), nil, false)

	mustNil(t, s.DisableUser("alice"))
	f(basic("alice", "password9"), ErrInvalid, true)
	f(basic("alice", "password9"), ErrInvalid, true) // failures are not cached
	mustNil(t, s.EnableUser("alice"))
	f(basic("alice", "password9"), nil, true)
	f(basic("alice", "password9"), nil, false)

	mustNil(t, s.DisableAccount("ABC12345"))
	f(basic("alice", "password9"), ErrInvalid, true)
	f("Bearer "+fx.good, ErrInvalid, false)
	mustNil(t, s.EnableAccount("ABC12345"))
	f(basic("alice", "password9"), nil, true)
	f("Bearer "+fx.good, nil, false)

	mustNil(t, s.RevokeKey(fx.goodID))
	f("Bearer "+fx.good, ErrInvalid, false)

	// Different users with one password do not share an entry.
	_, err := s.AddUser("ABC12345", "bob", "password9")
	mustNil(t, err)
	f(basic("bob", "password9"), nil, true)
	f(basic("bob", "password9"), nil, false)
}

func TestCacheBounded(t *testing.T) { eachKind(t, testCacheBounded) }

func testCacheBounded(t *testing.T, k kind) {
	fx := newFixtureOn(t, k, Config{CacheEntries: 3, MaxFailures: -1})
	for i := range 5 {
		_, err := fx.s.AddUser("ABC12345", fmt.Sprint("user", i), "password1")
		mustNil(t, err)
	}
	// verified authenticates user i and says whether a password was
	// verified (false: served from the cache).
	verified := func(i int) bool {
		t.Helper()
		_, err := fx.a.Authenticate([]byte(basic(fmt.Sprint("user", i), "password1")), "192.0.2.1")
		mustNil(t, err)
		v, _ := fx.work()
		return len(v) > 0
	}
	for i := range 5 {
		if !verified(i) {
			t.Fatalf("user%d served from an empty cache", i)
		}
	}
	if n := fx.a.cache.len(); n != 3 {
		t.Fatalf("cache holds %d entries, want 3", n)
	}
	// Cached: 2, 3, 4 (oldest first). 4 is a hit; 0 was evicted and
	// evicts 2 when it comes back.
	if verified(4) || !verified(0) || !verified(2) || verified(0) {
		t.Fatal("eviction did not drop the oldest entry")
	}
}

func TestConcurrentVerification(t *testing.T) { eachKind(t, testConcurrentVerification) }

func testConcurrentVerification(t *testing.T, k kind) {
	fx := newFixtureOn(t, k, Config{MaxConcurrentHashes: 2, MaxFailures: -1})
	var running, peak atomic.Int64
	real := fx.a.verifyPW
	fx.a.verifyPW = func(phc string, pw []byte) bool {
		n := running.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
		running.Add(-1)
		return real(phc, pw)
	}
	// Sixteen requests with one set of credentials share a verification.
	var wg sync.WaitGroup
	var fails atomic.Int64
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if p, err := fx.a.Authenticate([]byte(basic("alice", "password1")), "192.0.2.1"); err != nil || p.User != "alice" {
				fails.Add(1)
			}
		}()
	}
	wg.Wait()
	if v, _ := fx.work(); fails.Load() != 0 || len(v) > 2 {
		t.Errorf("%d failures, %d verifications for 16 identical requests; want 0 and 1", fails.Load(), len(v))
	}
	// Different credentials verify separately, at most two at a time.
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fx.a.Authenticate([]byte(basic(fmt.Sprint("user", i), "password1")), "192.0.2.1")
		}()
	}
	wg.Wait()
	if v, _ := fx.work(); len(v) != 8 || peak.Load() > 2 {
		t.Errorf("%d verifications, %d at once; want 8, at most 2", len(v), peak.Load())
	}
}

func TestChallenge(t *testing.T) { eachKind(t, testChallenge) }

func testChallenge(t *testing.T, k kind) {
	s := k.openTest(t, "")
	a := NewAuthenticator(s, Config{})
	got := a.ChallengeHeaders()
	if len(got) != 2 || got[0] != `Bearer realm="lodge"` || got[1] != `Basic realm="lodge", charset="UTF-8"` {
		t.Errorf("ChallengeHeaders = %q", got)
	}
	if c := a.Challenge(); c != `Bearer realm="lodge", Basic realm="lodge", charset="UTF-8"` {
		t.Errorf("Challenge = %q", c)
	}
	got[0] = "changed"
	if a.ChallengeHeaders()[0] == "changed" {
		t.Error("ChallengeHeaders returns its own slice")
	}
	if c := NewAuthenticator(s, Config{Realm: `a "b" \c`}).Challenge(); c != `Bearer realm="a \"b\" \\c", Basic realm="a \"b\" \\c", charset="UTF-8"` {
		t.Errorf("quoted realm: %s", c)
	}
}

// newFixture is the fixture on a pebble store.
func newFixture(t testing.TB, cfg Config) *fixture { return newFixtureOn(t, pebbleKind, cfg) }
