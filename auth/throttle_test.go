package auth

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// flipLast changes the last character of a key secret: same id, wrong
// secret.
func flipLast(s string) string {
	c := byte('A')
	if s[len(s)-1] == 'A' {
		c = 'B'
	}
	return s[:len(s)-1] + string(c)
}

// TestThrottle: failures are counted per client and presented user or
// key; the client as a whole is throttled only at MaxClientFailures.
func TestThrottle(t *testing.T) { eachKind(t, testThrottle) }

func testThrottle(t *testing.T, k kind) {
	fx := newFixtureOn(t, k, Config{MaxFailures: 3, MaxClientFailures: 8, FailureWindow: time.Minute, CacheTTL: -1})
	a, clock := fx.a, fx.clock
	f := func(client, header string, wantErr error, wantRetry time.Duration) {
		t.Helper()
		_, err := a.Authenticate([]byte(header), client)
		var th *ThrottledError
		if !errors.Is(err, wantErr) || err != nil && wantErr == nil || errors.As(err, &th) && th.RetryAfter != wantRetry {
			t.Errorf("%s %q: %v, want %v (retry after %v)", client, header, err, wantErr, wantRetry)
		}
	}
	noWork := func() {
		t.Helper()
		if v, k := fx.work(); len(v) != 0 || k != 0 {
			t.Errorf("a throttled request was checked: %d verifications, %d key checks", len(v), k)
		}
	}
	good, bad, bad2 := basic("alice", "password1"), basic("alice", "nope"), basic("alice", "nope2")
	colon := basic("colon", "pass:word:x")
	key, wrongKey := "Bearer "+fx.good, "Bearer "+flipLast(fx.good)
	const ip, ip2 = "198.51.100.7", "198.51.100.8"

	// One user from one client.
	f(ip, bad, ErrInvalid, 0) // t0
	clock.Add(10 * time.Second)
	f(ip, "", ErrMissing, 0)             // not counted
	f(ip, "Bearer a b", ErrMalformed, 0) // not counted
	f(ip, good, nil, 0)                  // success does not clear failures
	f(ip, bad, ErrInvalid, 0)            // t0+10s
	clock.Add(10 * time.Second)
	f(ip, "Bearer "+fx.revoked, ErrInvalid, 0) // t0+20s: another identity
	f(ip, good, nil, 0)                        // alice: two failures
	f(ip, bad2, ErrInvalid, 0)                 // t0+20s: three
	fx.work()
	f(ip, good, ErrThrottled, 40*time.Second) // the same user is blocked; right credentials are not even looked at
	f(ip, bad, ErrThrottled, 40*time.Second)
	noWork()
	f(ip, key, nil, 0)   // a valid key from the same client still works
	f(ip, colon, nil, 0) // and another user
	f(ip2, good, nil, 0) // and the same user from another client
	clock.Add(39 * time.Second)
	f(ip, good, ErrThrottled, time.Second)
	clock.Add(time.Second) // t0+60s: the first failure left the window
	f(ip, good, nil, 0)
	f(ip, bad, ErrInvalid, 0)                 // three in the window again
	f(ip, good, ErrThrottled, 10*time.Second) // until t0+10s's leaves
	clock.Add(10 * time.Second)
	f(ip, good, nil, 0)

	// One key id from one client: a wrong secret counts against the id.
	const kip = "192.0.2.50"
	for range 3 {
		f(kip, wrongKey, ErrInvalid, 0)
	}
	fx.work()
	f(kip, key, ErrThrottled, time.Minute)
	noWork()
	f(kip, "Bearer "+fx.revoked, ErrInvalid, 0) // another key id is looked at
	f(kip, good, nil, 0)
	f("192.0.2.51", key, nil, 0)

	// Names that cannot exist, and misshapen keys, each count as one.
	const nip = "192.0.2.60"
	f(nip, basic("no such!", "x"), ErrInvalid, 0)
	f(nip, basic("", "x"), ErrInvalid, 0)
	f(nip, basic(strings.Repeat("x", 65), "x"), ErrInvalid, 0)
	f(nip, basic("bad name?", "x"), ErrThrottled, time.Minute)
	f(nip, "Bearer x", ErrInvalid, 0)
	f(nip, "Bearer lk_y", ErrInvalid, 0)
	f(nip, "Bearer "+fx.good+"x", ErrInvalid, 0)
	f(nip, "Bearer z", ErrThrottled, time.Minute)
	f(nip, good, nil, 0)
	f(nip, key, nil, 0)

	// A client rotating names is throttled as a whole at MaxClientFailures
	// (8), before its header is even parsed.
	const cip = "203.0.113.70"
	for i := range 7 {
		f(cip, basic(fmt.Sprint("user", i), "x"), ErrInvalid, 0)
	}
	f(cip, key, nil, 0) // seven failures: still served
	clock.Add(10 * time.Second)
	f(cip, basic("user7", "x"), ErrInvalid, 0)
	fx.work()
	f(cip, key, ErrThrottled, 50*time.Second) // until the first seven leave
	f(cip, "", ErrThrottled, 50*time.Second)
	f(cip, "Bearer a b", ErrThrottled, 50*time.Second)
	noWork()
	f("203.0.113.71", key, nil, 0)
	clock.Add(50 * time.Second)
	f(cip, key, nil, 0)
	f(cip, basic("user7", "x"), ErrInvalid, 0) // two in the window
	f(cip, key, nil, 0)

	// IPv6 clients are counted per /64; v4-mapped addresses as IPv4.
	for _, c := range []string{"2001:db8::1", "2001:db8::2", "2001:db8::ffff:1"} {
		f(c, bad, ErrInvalid, 0)
	}
	f("2001:db8::3", good, ErrThrottled, time.Minute)
	f("2001:db8::3", key, nil, 0)
	f("2001:db8:0:1::1", good, nil, 0)
	for range 3 {
		f("::ffff:203.0.113.9", bad, ErrInvalid, 0)
	}
	f("203.0.113.9", good, ErrThrottled, time.Minute)

	// Errors say when to come back.
	_, err := a.Authenticate([]byte(good), "203.0.113.9")
	if err == nil || !strings.Contains(err.Error(), "retry after 1m0s") {
		t.Errorf("error text %q", err)
	}
}

// TestThrottleDefaults: 10 failures a minute per user or key, 100 per
// client.
func TestThrottleDefaults(t *testing.T) { eachKind(t, testThrottleDefaults) }

func testThrottleDefaults(t *testing.T, k kind) {
	fx := newFixtureOn(t, k, Config{CacheTTL: -1})
	if c := fx.a.cfg; c.MaxFailures != 10 || c.MaxClientFailures != 100 || c.FailureWindow != time.Minute {
		t.Errorf("defaults: %d per identity, %d per client, window %v", c.MaxFailures, c.MaxClientFailures, c.FailureWindow)
	}
	for i := range 9 {
		if _, err := fx.a.Authenticate([]byte(basic("alice", fmt.Sprint("guess", i))), "192.0.2.9"); !errors.Is(err, ErrInvalid) {
			t.Fatalf("failure %d: %v", i, err)
		}
	}
	for i := range 20 {
		if _, err := fx.a.Authenticate([]byte("Bearer "+flipLast(fx.good)), "192.0.2.9"); i < 10 && !errors.Is(err, ErrInvalid) || i >= 10 && !errors.Is(err, ErrThrottled) {
			t.Fatalf("wrong key %d: %v", i, err)
		}
	}
	if _, err := fx.a.Authenticate([]byte(basic("alice", "password1")), "192.0.2.9"); err != nil {
		t.Errorf("alice after 9 failures (and 10 of a key): %v", err)
	}
	if _, err := fx.a.Authenticate([]byte(basic("alice", "guess")), "192.0.2.9"); !errors.Is(err, ErrInvalid) {
		t.Errorf("alice's tenth failure: %v", err)
	}
	if _, err := fx.a.Authenticate([]byte(basic("alice", "password1")), "192.0.2.9"); !errors.Is(err, ErrThrottled) {
		t.Errorf("alice after 10 failures: %v", err)
	}
}

// TestThrottleBehindProxy: callers behind a trusted proxy are told apart
// by X-Forwarded-For; a spoofed X-Forwarded-For from anyone else is not
// believed.
func TestThrottleBehindProxy(t *testing.T) { eachKind(t, testThrottleBehindProxy) }

func testThrottleBehindProxy(t *testing.T, k kind) {
	fx := newFixtureOn(t, k, Config{MaxFailures: 2, MaxClientFailures: 4, CacheTTL: -1})
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	f := func(peer, xff, header string, wantErr error) {
		t.Helper()
		var fwd [][]byte
		if xff != "" {
			fwd = [][]byte{[]byte(xff)}
		}
		_, err := fx.a.Authenticate([]byte(header), ClientAddr(netip.MustParseAddr(peer), fwd, trusted))
		if !errors.Is(err, wantErr) || err != nil && wantErr == nil {
			t.Errorf("%s (X-Forwarded-For %q) %q: %v, want %v", peer, xff, header, err, wantErr)
		}
	}
	good, bad := basic("alice", "password1"), basic("alice", "nope")
	key := "Bearer " + fx.good
	const proxy = "10.0.0.1"
	f(proxy, "203.0.113.1", bad, ErrInvalid)
	f(proxy, "203.0.113.1", bad, ErrInvalid)
	f(proxy, "203.0.113.1", good, ErrThrottled)                 // that caller, that user
	f(proxy, "203.0.113.2", good, nil)                          // another caller behind the proxy
	f("10.0.0.2", "192.0.2.1, 203.0.113.1", good, ErrThrottled) // forged left-hand entries do not help
	for i := range 4 {
		f(proxy, "203.0.113.3", basic(fmt.Sprint("u", i), "x"), ErrInvalid)
	}
	f(proxy, "203.0.113.3", key, ErrThrottled) // that caller as a whole
	f(proxy, "203.0.113.4", key, nil)          // not the proxy's other callers
	f(proxy, "", key, nil)                     // nor the proxy itself

	// An untrusted peer cannot pick its identity with X-Forwarded-For.
	const peer = "198.51.100.9"
	f(peer, "203.0.113.10", bad, ErrInvalid)
	f(peer, "203.0.113.11", bad, ErrInvalid)
	f(peer, "203.0.113.12", good, ErrThrottled)
	f(peer, "", good, ErrThrottled)
	f(proxy, "203.0.113.12", good, nil)
	f(proxy, peer, good, ErrThrottled) // the same caller through the proxy
}

func TestClientAddr(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("2001:db8:f::/48")}
	f := func(peer string, xff []string, want string) {
		t.Helper()
		var fwd [][]byte
		for _, x := range xff {
			fwd = append(fwd, []byte(x))
		}
		if got := ClientAddr(netip.MustParseAddr(peer), fwd, trusted); got != want {
			t.Errorf("%s %q: %s, want %s", peer, xff, got, want)
		}
	}
	// Untrusted peers: X-Forwarded-For is ignored.
	f("198.51.100.1", nil, "198.51.100.1")
	f("198.51.100.1", []string{"203.0.113.5"}, "198.51.100.1")
	f("198.51.100.1", []string{"10.0.0.9"}, "198.51.100.1")
	f("::ffff:198.51.100.1", []string{"203.0.113.5"}, "198.51.100.1")
	f("2001:db8:e::1", []string{"203.0.113.5"}, "2001:db8:e::1")
	// Trusted peers: the right-most address that is not a trusted proxy.
	f("10.0.0.1", nil, "10.0.0.1")
	f("10.0.0.1", []string{""}, "10.0.0.1")
	f("10.0.0.1", []string{"203.0.113.5"}, "203.0.113.5")
	f("10.0.0.1", []string{"198.51.100.1, 203.0.113.5"}, "203.0.113.5")
	f("10.0.0.1", []string{"198.51.100.1,203.0.113.5, 10.0.0.2"}, "203.0.113.5")
	f("10.0.0.1", []string{"198.51.100.1", "203.0.113.5, 10.1.1.1"}, "203.0.113.5")
	f("10.0.0.1", []string{"203.0.113.5", "10.1.1.1"}, "203.0.113.5")
	f("10.0.0.1", []string{" , 203.0.113.5 ,, "}, "203.0.113.5")
	f("::ffff:10.0.0.1", []string{"::ffff:203.0.113.5"}, "203.0.113.5")
	f("2001:db8:f::1", []string{"2001:db8:1::5, 2001:db8:f::2"}, "2001:db8:1::5")
	f("10.0.0.1", []string{"203.0.113.5:4711"}, "203.0.113.5")
	f("10.0.0.1", []string{"[2001:db8::1]:443"}, "2001:db8::1")
	f("10.0.0.1", []string{"[2001:db8::1]"}, "2001:db8::1")
	f("10.0.0.1", []string{"fe80::1%eth0"}, "fe80::1")
	// Only trusted hops: the left-most.
	f("10.0.0.1", []string{"10.0.0.3, 10.0.0.2"}, "10.0.0.3")
	// Not an address: the nearest trusted hop.
	f("10.0.0.1", []string{"unknown"}, "10.0.0.1")
	f("10.0.0.1", []string{"203.0.113.5, unknown, 10.0.0.2"}, "10.0.0.2")
	f("10.0.0.1", []string{"203.0.113.5, [10.0.0.2]"}, "10.0.0.1")
	f("10.0.0.1", []string{"203.0.113.5, " + strings.Repeat("1", 100)}, "10.0.0.1")
	// No trusted proxies at all.
	if got := ClientAddr(netip.MustParseAddr("10.0.0.1"), [][]byte{[]byte("203.0.113.5")}, nil); got != "10.0.0.1" {
		t.Errorf("no trusted proxies: %s", got)
	}
}

func TestThrottleBounded(t *testing.T) { eachKind(t, testThrottleBounded) }

func testThrottleBounded(t *testing.T, k kind) {
	fx := newFixtureOn(t, k, Config{MaxFailures: 1, MaxClientFailures: 3, MaxClients: 2, CacheTTL: -1})
	a := fx.a
	f := func(client, header string, wantErr error) {
		t.Helper()
		if _, err := a.Authenticate([]byte(header), client); !errors.Is(err, wantErr) || err != nil && wantErr == nil {
			t.Errorf("%s %q: %v, want %v", client, header, err, wantErr)
		}
	}
	for _, c := range []string{"192.0.2.1", "192.0.2.2", "192.0.2.3"} {
		f(c, "Bearer x", ErrInvalid)
	}
	if n, m := a.thr.len(), a.clientThr.len(); n != 2 || m != 2 {
		t.Fatalf("throttle remembers %d pairs and %d clients, want 2 and 2", n, m)
	}
	f("192.0.2.1", "Bearer y", ErrInvalid)   // the least recently failed was forgotten
	f("192.0.2.3", "Bearer y", ErrThrottled) // the others not
	f("192.0.2.3", "Bearer "+fx.good, nil)   // for that identity only
	f("192.0.2.3", basic("u1", "x"), ErrInvalid)
	f("192.0.2.3", basic("u2", "x"), ErrInvalid) // the third failure of 192.0.2.3
	if n, m := a.thr.len(), a.clientThr.len(); n != 2 || m != 2 {
		t.Fatalf("throttle remembers %d pairs and %d clients, want 2 and 2", n, m)
	}
	f("192.0.2.3", "Bearer "+fx.good, ErrThrottled)
	// Clients whose failures left the window are dropped when seen.
	fx.clock.Add(time.Minute)
	f("192.0.2.3", "Bearer "+fx.good, nil)
	if n := a.clientThr.len(); n != 1 {
		t.Errorf("throttle remembers %d clients after the window, want 1", n)
	}
}

// TestThrottleSteps: with a granularity, failures close together share a
// stamp, so a key keeps at most window/gran+1 stamps however many it
// fails; without one, every failure is its own (at most max).
func TestThrottleSteps(t *testing.T) {
	t0 := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	f := func(gran time.Duration, max int, fails []time.Duration, at time.Duration, wantStamps int, wantRetry time.Duration) {
		t.Helper()
		th := newThrottle(max, time.Minute, gran, 10)
		for _, d := range fails {
			th.fail("k", t0.Add(d))
		}
		got := th.blocked("k", t0.Add(at))
		n := 0
		if el, ok := th.m["k"]; ok {
			n = len(el.Value.(*failures).stamps)
		}
		if got != wantRetry || n != wantStamps {
			t.Errorf("gran %v max %d %v at %v: retry %v with %d stamps, want %v with %d", gran, max, fails, at, got, n, wantRetry, wantStamps)
		}
	}
	s := time.Second
	many := make([]time.Duration, 600)
	for i := range many {
		many[i] = time.Duration(i) * 100 * time.Millisecond // 600 failures over a minute
	}
	f(0, 3, []time.Duration{0, s, 2 * s}, 2*s, 3, 58*s)
	f(0, 3, []time.Duration{0, s, 2 * s, 3 * s}, 3*s, 3, 58*s) // at most max stamps
	f(0, 3, []time.Duration{0, s}, 2*s, 2, 0)
	f(4*s, 3, []time.Duration{0, s, 2 * s}, 2*s, 1, 58*s) // one stamp at 0
	f(4*s, 3, []time.Duration{0, s, 5 * s}, 5*s, 2, 55*s) // two left at 0: wait for them
	f(4*s, 3, []time.Duration{0, 5 * s, 6 * s, 10 * s}, 10*s, 3, 55*s)
	f(4*s, 3, []time.Duration{0, 5 * s, 6 * s, 10 * s}, 65*s, 1, 0)
	f(4*s, 100, many, 59*s, 15, 49*s) // 15 stamps of 40: wait for 13 to leave
	f(4*s, 100, many, 60*s, 14, 48*s)
	f(4*s, 1000, many, 60*s, 14, 0)
}
