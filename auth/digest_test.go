package auth

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// digestFixture is the fixture of authenticator_test.go with Digest on
// and every Digest response check recorded.
type digestFixture struct {
	*fixture
	mu      sync.Mutex
	checked [][]byte // HA1s the responses were checked with, in order
}

func newDigestFixture(t testing.TB, cfg Config) *digestFixture {
	t.Helper()
	return newDigestFixtureOn(t, pebbleKind, cfg)
}

func newDigestFixtureOn(t testing.TB, k kind, cfg Config) *digestFixture {
	t.Helper()
	fx := &digestFixture{fixture: newFixtureOn(t, k, cfg)}
	fx.a.checkDigest = func(ha1 []byte, d *digestCreds, method []byte) bool {
		fx.mu.Lock()
		fx.checked = append(fx.checked, bytes.Clone(ha1))
		fx.mu.Unlock()
		return checkDigestResponse(ha1, d, method)
	}
	return fx
}

// digestWork returns and resets the HA1s checked.
func (fx *digestFixture) digestWork() [][]byte {
	fx.mu.Lock()
	defer fx.mu.Unlock()
	c := fx.checked
	fx.checked = nil
	return c
}

// header builds the Digest credentials a client would send for GET /x as
// alice (password1) with MD5 and a fresh nonce. Each mod is name=value,
// replacing a parameter or adding one, or -name, leaving one out; the
// pseudo-parameters password and method change what the response is
// computed from. The response is computed from the result unless a mod
// sets it.
func (fx *digestFixture) header(mods ...string) string {
	p := map[string]string{
		"username": "alice", "realm": "lodge", "nonce": fx.a.newNonce(), "uri": "/x", "algorithm": "MD5",
		"qop": "auth", "nc": "00000001", "cnonce": "0a4f113b", "opaque": fx.a.digest.opaque,
		"password": "password1", "method": "GET",
	}
	order := []string{"username", "realm", "nonce", "uri", "algorithm", "response", "qop", "nc", "cnonce", "opaque"}
	var drop []string
	for _, m := range mods {
		if k, ok := strings.CutPrefix(m, "-"); ok {
			drop = append(drop, k)
			continue
		}
		k, v, _ := strings.Cut(m, "=")
		if _, ok := p[k]; !ok && k != "response" {
			order = append(order, k)
		}
		p[k] = v
	}
	if _, ok := p["response"]; !ok {
		md, sh := digestHA1s(p["username"], p["realm"], p["password"])
		alg, ha1 := DigestMD5, md
		if strings.EqualFold(p["algorithm"], DigestSHA256) {
			alg, ha1 = DigestSHA256, sh
		}
		p["response"] = string(digestResponse(alg, []byte(ha1), p["nonce"], p["nc"], p["cnonce"], p["qop"], []byte(p["method"]), p["uri"]))
	}
	var parts []string
	for _, k := range order {
		v, ok := p[k]
		if !ok || slices.Contains(drop, k) {
			continue
		}
		if k == "algorithm" || k == "qop" || k == "nc" || k == "userhash" {
			parts = append(parts, k+"="+v)
		} else {
			parts = append(parts, k+"="+quote(v))
		}
	}
	return "Digest " + strings.Join(parts, ", ")
}

// flip changes the character at i of s.
func flip(s string, i int) string {
	b := []byte(s)
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return string(b)
}

// TestDigestRFC7616Example: the worked example of RFC 7616 section 3.9.1,
// for both algorithms, through the response computation and through the
// parser with the example's Authorization header.
func TestDigestRFC7616Example(t *testing.T) {
	const (
		realm  = "http-auth@example.org"
		nonce  = "7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v"
		cnonce = "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ"
		opaque = "FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"
	)
	md, sh := digestHA1s("Mufasa", realm, "Circle of Life")
	ha1 := map[string]string{DigestMD5: md, DigestSHA256: sh}
	f := func(alg, want string) {
		t.Helper()
		if got := digestResponse(alg, []byte(ha1[alg]), nonce, "00000001", cnonce, "auth", []byte("GET"), "/dir/index.html"); string(got) != want {
			t.Errorf("%s response = %s, want %s", alg, got, want)
		}
		// The example's header, folded as in the RFC.
		h := "username=\"Mufasa\",\n\trealm=\"" + realm + "\",\n\turi=\"/dir/index.html\",\n\talgorithm=" + alg +
			",\n\tnonce=\"" + nonce + "\",\n\tnc=00000001,\n\tcnonce=\"" + cnonce + "\",\n\tqop=auth,\n\tresponse=\"" + want +
			"\",\n\topaque=\"" + opaque + "\""
		d, err := parseDigest([]byte(strings.ReplaceAll(h, "\n\t", " ")))
		if err != nil {
			t.Fatalf("%s: parsing the example: %v", alg, err)
		}
		if d.username != "Mufasa" || d.realm != realm || d.algorithm != alg || d.count != 1 || d.opaque != opaque || !d.hasOpaque {
			t.Errorf("%s: parsed %+v", alg, d)
		}
		if !checkDigestResponse([]byte(ha1[alg]), &d, []byte("GET")) {
			t.Errorf("%s: the example's response does not check", alg)
		}
		if checkDigestResponse([]byte(ha1[alg]), &d, []byte("POST")) {
			t.Errorf("%s: the example's response checks for POST", alg)
		}
	}
	f(DigestMD5, "8ca523f5e9506fed4657c9700eebdbec")
	f(DigestSHA256, "753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1")
}

func TestDigest(t *testing.T) { eachKind(t, testDigest) }

func testDigest(t *testing.T, k kind) {
	fx := newDigestFixtureOn(t, k, Config{Digest: true, CacheTTL: -1, MaxFailures: -1})
	alice := Principal{Account: "ABC12345", User: "alice", Method: MethodDigest}
	none := Principal{}
	ha1s := func(user string) [][]byte {
		if user == "dummy" {
			return [][]byte{fx.a.digest.dummyMD5, fx.a.digest.dummySHA}
		}
		rec, _, _ := fx.s.userRecord(user)
		return [][]byte{[]byte(rec.HA1MD5), []byte(rec.HA1SHA256)}
	}
	// f checks one request for GET /x: the error, the principal and the
	// Digest work done: "" for none, else one response check with the
	// HA1 of the user named, or with a dummy one.
	f := func(header string, wantErr error, want Principal, work string) {
		t.Helper()
		p, err := fx.a.AuthenticateRequest([]byte(header), []byte("GET"), []byte("/x"), "192.0.2.1")
		if !errors.Is(err, wantErr) || p != want {
			t.Errorf("AuthenticateRequest(%.200q) = %+v, %v; want %+v, %v", header, p, err, want, wantErr)
		}
		c := fx.digestWork()
		if work == "" && len(c) != 0 || work != "" && (len(c) != 1 || !slices.ContainsFunc(ha1s(work), func(h []byte) bool { return bytes.Equal(h, c[0]) })) {
			t.Errorf("AuthenticateRequest(%.200q): checked %q; want one check with %s's HA1", header, c, work)
		}
	}

	// Success.
	f(fx.header(), nil, alice, "alice")
	f(fx.header("algorithm=SHA-256"), nil, alice, "alice")
	f(fx.header("algorithm=sha-256"), nil, alice, "alice")
	f(fx.header("algorithm=md5"), nil, alice, "alice")
	f(fx.header("-algorithm"), nil, alice, "alice") // absent: MD5
	f(fx.header("-opaque"), nil, alice, "alice")
	f(fx.header("qop=AUTH"), nil, alice, "alice")
	f(fx.header("nc=0000000a"), nil, alice, "alice")
	f(fx.header("userhash=false"), nil, alice, "alice")
	f(fx.header("unknown=ignored", "charset=UTF-8"), nil, alice, "alice")
	f(fx.header("uri=http://lodge.example/x"), ErrInvalid, none, "") // absolute uri, origin-form request-target
	f(strings.Replace(fx.header(), "Digest ", "dIgEsT\t ", 1), nil, alice, "alice")
	f(strings.Replace(fx.header(), "Digest ", "Digest , ,", 1)+",", nil, alice, "alice") // empty list elements
	f(strings.ReplaceAll(fx.header(), "=", " \t= "), nil, alice, "alice")                // BWS
	f(strings.Replace(fx.header(), `username="alice"`, `username="al\ice"`, 1), nil, alice, "alice")
	f(strings.Replace(fx.header(), `username="alice"`, `username=alice`, 1), nil, alice, "alice") // token form
	f(strings.ToUpper(fx.header("nonce=x"))[:0]+upperResponse(fx.header()), nil, alice, "alice")

	// Credentials that do not authenticate.
	f(fx.header("password=password2"), ErrInvalid, none, "alice")
	f(fx.header("algorithm=SHA-256", "password=Password1"), ErrInvalid, none, "alice")
	f(fx.header("method=POST"), ErrInvalid, none, "alice") // made for another method
	f(fx.header("response="+strings.Repeat("0", 32)), ErrInvalid, none, "alice")
	f(fx.header("algorithm=SHA-256", "response="+strings.Repeat("0", 64)), ErrInvalid, none, "alice")
	f(fx.header("username=nobody"), ErrInvalid, none, "dummy")
	f(fx.header("username=nobody", "algorithm=SHA-256"), ErrInvalid, none, "dummy")
	f(fx.header("username=Alice"), ErrInvalid, none, "dummy") // names are exact
	f(fx.header("username=bad name"), ErrInvalid, none, "dummy")
	f(fx.header("username="), ErrInvalid, none, "dummy")
	f(fx.header("username="+strings.Repeat("a", 65)), ErrInvalid, none, "dummy")
	f(fx.header("username=dave", "password=password4"), ErrInvalid, none, "dave") // disabled user
	f(fx.header("username=erin", "password=password5"), ErrInvalid, none, "erin") // disabled account
	f(fx.header("realm=other"), ErrInvalid, none, "")
	f(fx.header("realm=Lodge"), ErrInvalid, none, "")
	f(fx.header("opaque=other"), ErrInvalid, none, "")
	f(fx.header("uri=/y"), ErrInvalid, none, "")
	f(fx.header("uri=/x?a=1"), ErrInvalid, none, "")
	f(fx.header("uri=/X"), ErrInvalid, none, "")

	// Nonces.
	other := NewAuthenticator(k.openTest(t, ""), Config{Digest: true}) // another server: its own store and key
	n := fx.a.newNonce()
	f(fx.header("nonce="+flip(n, 0)), ErrInvalid, none, "")  // the time
	f(fx.header("nonce="+flip(n, 15)), ErrInvalid, none, "") // the random part
	f(fx.header("nonce="+flip(n, 30)), ErrInvalid, none, "") // the MAC
	f(fx.header("nonce="+flip(n, 42)), ErrInvalid, none, "") // the last character: also its unused bits
	f(fx.header("nonce="+n[:42]), ErrInvalid, none, "")
	f(fx.header("nonce="+n+"A"), ErrInvalid, none, "")
	f(fx.header("nonce="+n+"="), ErrInvalid, none, "")
	f(fx.header("nonce="+strings.ReplaceAll(strings.ReplaceAll(n, "-", "+"), "_", "/")+"="), ErrInvalid, none, "")
	f(fx.header("nonce="), ErrInvalid, none, "")
	f(fx.header("nonce=7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v"), ErrInvalid, none, "") // RFC 7616's
	f(fx.header("nonce="+other.newNonce()), ErrInvalid, none, "")

	// Nonce counts.
	f(fx.header("nonce="+n), nil, alice, "alice")
	f(fx.header("nonce="+n), ErrInvalid, none, "alice") // replay
	f(fx.header("nonce="+n, "cnonce=other"), ErrInvalid, none, "alice")
	f(fx.header("nonce="+n, "nc=00000002"), nil, alice, "alice")
	f(fx.header("nonce="+n, "nc=00000002"), ErrInvalid, none, "alice")
	f(fx.header("nonce="+n, "nc=00000003"), nil, alice, "alice")
	f(fx.header("nonce="+n, "nc=00000006"), nil, alice, "alice")
	f(fx.header("nonce="+n, "nc=00000005"), nil, alice, "alice") // overtaken by 6, not seen yet
	f(fx.header("nonce="+n, "nc=00000005"), ErrInvalid, none, "alice")
	f(fx.header("nonce="+n, "nc=00000006"), ErrInvalid, none, "alice")
	f(fx.header("nonce="+n, "nc=00000007", "password=x"), ErrInvalid, none, "alice") // a failure uses no count
	f(fx.header("nonce="+n, "nc=00000007"), nil, alice, "alice")
	f(fx.header("nonce="+n, "nc=00000100"), nil, alice, "alice")
	f(fx.header("nonce="+n, "nc=00000004"), ErrInvalid, none, "alice") // too far behind
	f(fx.header("nonce="+n, "nc=000000c0"), ErrInvalid, none, "alice") // 64 behind
	f(fx.header("nonce="+n, "nc=000000C1"), nil, alice, "alice")       // 63 behind
	f(fx.header("nonce="+n, "nc=000000c1"), ErrInvalid, none, "alice") // the same count
	f(fx.header("nonce="+n, "nc=ffffffff"), nil, alice, "alice")
	f(fx.header("nonce="+n, "nc=ffffffff"), ErrInvalid, none, "alice")

	// Expiry: stale for the right credentials only.
	old := fx.a.newNonce()
	fx.clock.Add(5*time.Minute - time.Nanosecond)
	f(fx.header("nonce="+old), nil, alice, "alice")
	fx.clock.Add(time.Nanosecond)
	f(fx.header("nonce="+old, "nc=00000002"), ErrStaleNonce, none, "alice")
	f(fx.header("nonce="+old, "nc=00000002", "algorithm=SHA-256"), ErrStaleNonce, none, "alice")
	f(fx.header("nonce="+old, "nc=00000002", "password=x"), ErrInvalid, none, "alice")
	f(fx.header("nonce="+old, "username=nobody"), ErrInvalid, none, "dummy")
	f(fx.header("nonce="+old, "username=dave", "password=password4"), ErrInvalid, none, "dave")
	f(fx.header("nonce="+flip(old, 30)), ErrInvalid, none, "")
	f(fx.header(), nil, alice, "alice") // a fresh one works

	// What this server does not offer, and lists that are not Digest
	// credentials.
	for _, p := range []string{"username", "realm", "nonce", "uri", "response", "qop", "nc", "cnonce"} {
		f(fx.header("-"+p), ErrMalformed, none, "")
	}
	f(fx.header("qop=auth-int"), ErrMalformed, none, "")
	f(fx.header("qop=auth-int", "algorithm=SHA-256"), ErrMalformed, none, "")
	f(fx.header("qop="), ErrMalformed, none, "")
	f(fx.header("algorithm=MD5-sess"), ErrMalformed, none, "")
	f(fx.header("algorithm=SHA-256-sess"), ErrMalformed, none, "")
	f(fx.header("algorithm=SHA-512-256"), ErrMalformed, none, "")
	f(fx.header("algorithm="), ErrMalformed, none, "")
	f(fx.header("userhash=true"), ErrMalformed, none, "")
	f(fx.header("username*=UTF-8''alice"), ErrMalformed, none, "")
	f(fx.header("nc=1"), ErrMalformed, none, "")
	f(fx.header("nc=00000000"), ErrMalformed, none, "")
	f(fx.header("nc=000000001"), ErrMalformed, none, "")
	f(fx.header("nc=0000000g"), ErrMalformed, none, "")
	f(fx.header("nc=+0000001"), ErrMalformed, none, "")
	f(fx.header("nc=-0000001"), ErrMalformed, none, "")
	f(fx.header("cnonce="), ErrMalformed, none, "")
	f(fx.header("uri="), ErrMalformed, none, "")
	f(fx.header("response=abc"), ErrMalformed, none, "")
	f(fx.header("response="+strings.Repeat("0", 64)), ErrMalformed, none, "") // SHA-256 size with MD5
	f(fx.header("response="+strings.Repeat("0", 1000)), ErrMalformed, none, "")
	f(fx.header("response="+strings.Repeat("g", 32)), ErrMalformed, none, "")
	f("Digest", ErrMalformed, none, "")
	f("Digest ", ErrMalformed, none, "")
	f("Digest , ,", ErrMalformed, none, "")
	f("Digest abc==", ErrMalformed, none, "")
	f("Digest username", ErrMalformed, none, "")
	f("Digest =alice", ErrMalformed, none, "")
	f(`Digest username="alice`, ErrMalformed, none, "")                             // unterminated
	f(strings.Replace(fx.header(), `"alice"`, `"alice`, 1), ErrMalformed, none, "") // unterminated, the rest swallowed
	f(strings.TrimSuffix(fx.header(), `"`), ErrMalformed, none, "")
	f(strings.TrimSuffix(fx.header(), `"`)+`\"`, ErrMalformed, none, "")
	f(strings.TrimSuffix(fx.header(), `"`)+`\`, ErrMalformed, none, "")
	f(fx.header()+`, username="alice"`, ErrMalformed, none, "") // duplicate
	f(fx.header()+`, USERNAME="bob"`, ErrMalformed, none, "")
	f(fx.header()+`, unknown=1, unknown=2`, ErrMalformed, none, "")
	f(fx.header("cnonce="+strings.Repeat("a", 100<<10)), ErrMalformed, none, "") // 100 KB
	f(fx.header("cnonce="+strings.Repeat("a", maxDigestBytes)), ErrMalformed, none, "")
	f(fx.header("cnonce=a\x00b"), ErrMalformed, none, "")
	f(fx.header()+"\x00", ErrMalformed, none, "")
	f(fx.header()+", \x00=1", ErrMalformed, none, "")
	f(strings.Replace(fx.header(), "Digest", "Dig\x00est", 1), ErrMalformed, none, "")
	f(fx.header("cnonce=a\r\nX-Admin: 1"), ErrMalformed, none, "")
	f(fx.header("cnonce=a\x7fb"), ErrMalformed, none, "")
	f(fx.header()+strings.Repeat(",", 10000), ErrMalformed, none, "")
	f(fx.header()+strings.Repeat(",", maxDigestElements), ErrMalformed, none, "")
	f("Digest "+strings.Repeat(",", 10000), ErrMalformed, none, "")
	f("Digest "+strings.Repeat("a=b, ", 1000), ErrMalformed, none, "")
	f(strings.Replace(fx.header(), `", realm`, `" realm`, 1), ErrMalformed, none, "") // no comma
	f(strings.Replace(fx.header(), `", realm`, `"; realm`, 1), ErrMalformed, none, "")
	f(fx.header()+`, x="a"b`, ErrMalformed, none, "")
	f(fx.header()+`, x=a b`, ErrMalformed, none, "")
	f(fx.header()+`, x=`, ErrMalformed, none, "")
	f(fx.header()+`, Digest username="alice"`, ErrMalformed, none, "") // two credentials

	// The other schemes go through AuthenticateRequest as through
	// Authenticate.
	f("Bearer "+fx.good, nil, Principal{Account: "ABC12345", KeyID: fx.goodID, Method: MethodBearer}, "")
	f(basic("alice", "password1"), nil, Principal{Account: "ABC12345", User: "alice", Method: MethodBasic, Role: RoleCustomer}, "")
	f(basic("alice", "password2"), ErrInvalid, none, "")
	f("Bearer "+strings.Repeat("A", 5000), ErrMalformed, none, "") // their limit is unchanged
	f("", ErrMissing, none, "")
	f("Negotiate YII=", ErrMalformed, none, "")

	// Authenticate (the address check) never takes Digest.
	if _, err := fx.a.Authenticate([]byte(fx.header()), "192.0.2.1"); !errors.Is(err, ErrUnsupported) {
		t.Errorf("Authenticate took Digest: %v", err)
	}
}

// upperResponse is h with its response in upper-case hex.
func upperResponse(h string) string {
	i := strings.Index(h, `response="`) + len(`response="`)
	j := i + strings.IndexByte(h[i:], '"')
	return h[:i] + strings.ToUpper(h[i:j]) + h[j:]
}

func TestDigestOff(t *testing.T) { eachKind(t, testDigestOff) }

func testDigestOff(t *testing.T, k kind) {
	fx := newDigestFixtureOn(t, k, Config{CacheTTL: -1, MaxFailures: -1})
	on := newDigestFixtureOn(t, k, Config{Digest: true})
	h := on.header()
	for _, h := range []string{h, "digest x", "DIGEST " + strings.Repeat("a", 5000)} {
		if p, err := fx.a.AuthenticateRequest([]byte(h), []byte("GET"), []byte("/x"), "192.0.2.1"); !errors.Is(err, ErrUnsupported) && !errors.Is(err, ErrMalformed) || p != (Principal{}) {
			t.Errorf("Digest off: %.60q gave %+v, %v", h, p, err)
		}
	}
	if _, err := fx.a.AuthenticateRequest([]byte(fx.header()), []byte("GET"), []byte("/x"), "192.0.2.1"); !errors.Is(err, ErrUnsupported) {
		t.Errorf("Digest off: %v, want ErrUnsupported", err)
	}
	if len(fx.digestWork()) != 0 {
		t.Error("Digest off: a response was checked")
	}
	if c := fx.a.DigestChallenges(false); c != nil {
		t.Errorf("Digest off: DigestChallenges = %q", c)
	}
	if c := fx.a.UploadChallengeHeaders(true); !slices.Equal(c, fx.a.ChallengeHeaders()) {
		t.Errorf("Digest off: UploadChallengeHeaders = %q", c)
	}
}

func TestDigestURI(t *testing.T) { eachKind(t, testDigestURI) }

func testDigestURI(t *testing.T, k kind) {
	f := func(param, target string, want bool) {
		t.Helper()
		if got := uriMatches(param, []byte(target)); got != want {
			t.Errorf("uriMatches(%q, %q) = %v", param, target, got)
		}
	}
	f("/x", "/x", true)
	f("/x?a=1&b", "/x?a=1&b", true)
	f("/direct_upload/s1/a%20b.pdf", "/direct_upload/s1/a%20b.pdf", true)
	f("*", "*", true)
	f("http://h/x", "http://h/x", true)
	f("/x", "http://h:8080/x", true) // absolute-form target: its path and query
	f("/x?q", "https://h/x?q", true)
	f("/", "http://h", true)
	f("/?q", "http://h?q", true)
	f("/x", "/x?", false)
	f("/x", "/x/", false)
	f("/x", "/X", false)
	f("/a%20b", "/a b", false) // no decoding
	f("/x?q", "http://h/x", false)
	f("http://h/x", "/x", false)
	f("/x", "1http://h/x", false)
	f("/x", "://h/x", false)
	f("", "", true) // parseDigest refuses an empty uri before
}

func TestDigestChallenges(t *testing.T) { eachKind(t, testDigestChallenges) }

func testDigestChallenges(t *testing.T, k kind) {
	fx := newDigestFixtureOn(t, k, Config{Digest: true, MaxFailures: -1})
	a := fx.a
	parse := func(c string) map[string]string {
		t.Helper()
		rest, ok := strings.CutPrefix(c, "Digest ")
		if !ok {
			t.Fatalf("challenge %q is not Digest", c)
		}
		p, err := parseAuthParams([]byte(rest))
		if err != nil {
			t.Fatalf("challenge %q does not parse: %v", c, err)
		}
		return p
	}
	var nonces []string
	for _, stale := range []bool{false, true} {
		c := a.DigestChallenges(stale)
		if len(c) != 2 {
			t.Fatalf("DigestChallenges(%v) = %q", stale, c)
		}
		for i, alg := range []string{"SHA-256", "MD5"} {
			p := parse(c[i])
			want := map[string]string{"realm": "lodge", "qop": "auth", "algorithm": alg, "nonce": p["nonce"], "opaque": a.digest.opaque, "charset": "UTF-8"}
			if stale {
				want["stale"] = "true"
			}
			if fmt.Sprint(p) != fmt.Sprint(want) {
				t.Errorf("challenge %d: %v, want %v", i, p, want)
			}
			if _, _, ok := a.openNonce(p["nonce"]); !ok {
				t.Errorf("challenge %d: nonce %q is not ours", i, p["nonce"])
			}
			nonces = append(nonces, p["nonce"])
		}
		if !strings.HasPrefix(c[0], `Digest realm="lodge", qop="auth", algorithm=SHA-256, nonce="`) ||
			!strings.HasSuffix(c[0], `", opaque="`+a.digest.opaque+`", charset=UTF-8`+map[bool]string{true: ", stale=true"}[stale]) {
			t.Errorf("challenge text %q", c[0])
		}
	}
	if len(slices.Compact(slices.Sorted(slices.Values(nonces)))) != 4 {
		t.Errorf("nonces repeat: %q", nonces)
	}
	up := a.UploadChallengeHeaders(false)
	if len(up) != 4 || !strings.Contains(up[0], "algorithm=SHA-256") || !strings.Contains(up[1], "algorithm=MD5") ||
		!slices.Equal(up[2:], a.ChallengeHeaders()) {
		t.Errorf("UploadChallengeHeaders = %q", up)
	}
	// Either challenge's nonce works with either algorithm (clients that
	// merge the challenges take one's nonce with the other's algorithm).
	for i, n := range nonces {
		alg := []string{"SHA-256", "MD5"}[i%2]
		if p, err := a.AuthenticateRequest([]byte(fx.header("nonce="+n, "algorithm="+alg)), []byte("GET"), []byte("/x"), "192.0.2.1"); err != nil || p.User != "alice" {
			t.Errorf("nonce %d with %s: %+v, %v", i, alg, p, err)
		}
	}
	// A quoted realm is escaped and parses back.
	s := k.openTest(t, "")
	s.realm = `a "b" \c`
	if p := parse(NewAuthenticator(s, Config{Digest: true}).DigestChallenges(false)[0]); p["realm"] != s.realm {
		t.Errorf("realm %q parsed back as %q", s.realm, p["realm"])
	}
}

// TestDigestConcurrent: requests sharing a nonce with increasing counts,
// sent at once and so arriving in any order, all authenticate; sent again
// they are all refused.
func TestDigestConcurrent(t *testing.T) { eachKind(t, testDigestConcurrent) }

func testDigestConcurrent(t *testing.T, k kind) {
	fx := newDigestFixtureOn(t, k, Config{Digest: true, MaxFailures: -1})
	n := fx.a.newNonce()
	headers := make([]string, replayWindow)
	for i := range headers {
		headers[i] = fx.header("nonce="+n, fmt.Sprintf("nc=%08x", i+1), fmt.Sprintf("algorithm=%s", []string{"MD5", "SHA-256"}[i%2]))
	}
	run := func() (ok int64) {
		var wg sync.WaitGroup
		var count atomic.Int64
		for _, i := range rand.Perm(len(headers)) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := fx.a.AuthenticateRequest([]byte(headers[i]), []byte("GET"), []byte("/x"), "192.0.2.1"); err == nil {
					count.Add(1)
				} else if !errors.Is(err, ErrInvalid) {
					t.Errorf("nc %d: %v", i+1, err)
				}
			}()
		}
		wg.Wait()
		return count.Load()
	}
	if ok := run(); ok != int64(len(headers)) {
		t.Errorf("%d of %d concurrent requests authenticated", ok, len(headers))
	}
	if ok := run(); ok != 0 {
		t.Errorf("%d of %d replays authenticated", ok, len(headers))
	}
}

// TestDigestNonceTable: the nonces remembered are bounded; a forgotten
// nonce, or one issued before it, is stale, not new.
func TestDigestNonceTable(t *testing.T) { eachKind(t, testDigestNonceTable) }

func testDigestNonceTable(t *testing.T, k kind) {
	fx := newDigestFixtureOn(t, k, Config{Digest: true, MaxFailures: -1, MaxNonces: 2})
	f := func(header string, wantErr error) {
		t.Helper()
		if _, err := fx.a.AuthenticateRequest([]byte(header), []byte("GET"), []byte("/x"), "192.0.2.1"); !errors.Is(err, wantErr) {
			t.Errorf("%.200q: %v, want %v", header, err, wantErr)
		}
	}
	var n [5]string
	for i := range n {
		n[i] = fx.a.newNonce()
		fx.clock.Add(time.Second)
	}
	f(fx.header("nonce="+n[1]), nil)
	f(fx.header("nonce="+n[2]), nil)
	f(fx.header("nonce="+n[3]), nil) // forgets n[1]
	if l := fx.a.digest.nonces.len(); l != 2 {
		t.Errorf("%d nonces remembered, want 2", l)
	}
	f(fx.header("nonce="+n[1]), ErrStaleNonce) // a replay but for the table's bound: stale
	f(fx.header("nonce="+n[1], "nc=00000002"), ErrStaleNonce)
	f(fx.header("nonce="+n[0]), ErrStaleNonce) // never used, but older than one forgotten
	f(fx.header("nonce="+n[2], "nc=00000002"), nil)
	f(fx.header("nonce="+n[3]), ErrInvalid)
	f(fx.header("nonce="+n[4]), nil) // forgets n[2]
	f(fx.header("nonce="+n[2], "nc=00000003"), ErrStaleNonce)
	f(fx.header("nonce="+n[3], "nc=00000002"), nil)

	// Expired nonces are forgotten first.
	fx.clock.Add(5 * time.Minute)
	f(fx.header(), nil)
	if l := fx.a.digest.nonces.len(); l != 1 {
		t.Errorf("%d nonces remembered after expiry, want 1", l)
	}
	f(fx.header("nonce="+n[4], "nc=00000002"), ErrStaleNonce)

	// The first-use order compacts without losing entries.
	tbl := newNonceTable(3, time.Hour, 0)
	for i := range 5000 {
		var id [nonceIDLen]byte
		id[0], id[1] = byte(i), byte(i>>8)
		if err := tbl.use(id, int64(i), 1, int64(i)); err != nil {
			t.Fatalf("nonce %d: %v", i, err)
		}
		if len(tbl.m) != min(i+1, 3) || len(tbl.order)-tbl.head != len(tbl.m) || len(tbl.order) > 2048 {
			t.Fatalf("nonce %d: %d remembered, order %d from %d", i, len(tbl.m), len(tbl.order), tbl.head)
		}
	}
}

// TestDigestThrottle: wrong Digest credentials count as failures; stale
// nonces and malformed headers do not.
func TestDigestThrottle(t *testing.T) { eachKind(t, testDigestThrottle) }

func testDigestThrottle(t *testing.T, k kind) {
	fx := newDigestFixtureOn(t, k, Config{Digest: true, MaxFailures: 2, CacheTTL: -1})
	f := func(header string, wantErr error) {
		t.Helper()
		if _, err := fx.a.AuthenticateRequest([]byte(header), []byte("GET"), []byte("/x"), "192.0.2.1"); !errors.Is(err, wantErr) {
			t.Errorf("%.200q: %v, want %v", header, err, wantErr)
		}
	}
	old := fx.a.newNonce()
	fx.clock.Add(5 * time.Minute)
	for range 3 {
		f(fx.header("nonce="+old), ErrStaleNonce)
		f(fx.header("qop=auth-int"), ErrMalformed)
	}
	f(fx.header(), nil)
	f(fx.header("password=x"), ErrInvalid)
	f(fx.header("nonce="+flip(old, 3)), ErrInvalid)
	fx.digestWork()
	f(fx.header(), ErrThrottled)
	if c := fx.digestWork(); len(c) != 0 {
		t.Errorf("a throttled Digest request was checked: %d", len(c))
	}
	f(basic("alice", "password1"), ErrThrottled) // the user, whatever the method
	f("Bearer "+fx.good, nil)                    // other keys and users from the client are not
	f(basic("colon", "pass:word:x"), nil)
}

// FuzzDigestHeader: no Digest header panics or authenticates (the seeds
// carry server nonces but no right response), and what the auth-param
// parser accepts it reads back the same once written out again.
func FuzzDigestHeader(f *testing.F) {
	fx := newDigestFixture(f, Config{Digest: true, MaxFailures: -1})
	for _, s := range []string{
		fx.header("password=password2"), fx.header("algorithm=SHA-256", "password=x"), fx.header("username=nobody"),
		fx.header("qop=auth-int"), fx.header("nc=00000000"), fx.header("userhash=true"), fx.header("response=" + strings.Repeat("a", 32)),
		`Digest username="Mufasa", realm="http-auth@example.org", uri="/dir/index.html", algorithm=MD5, nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", nc=00000001, cnonce="f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ", qop=auth, response="8ca523f5e9506fed4657c9700eebdbec", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"`,
		"Digest", "Digest ,,,", `Digest a="\"\\", b=c`, `Digest a="`, "Digest a=b=c", "Digest \x00", "digest a = \"b\" , ,c=d",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, header []byte) {
		p, err := fx.a.AuthenticateRequest(header, []byte("GET"), []byte("/x"), "192.0.2.1")
		if err == nil && p.Method == MethodDigest {
			t.Fatalf("header %q authenticated as %+v", header, p)
		}
		if err != nil && p != (Principal{}) {
			t.Fatalf("failure %v came with principal %+v", err, p)
		}
		known := err == nil
		for _, want := range []error{ErrMissing, ErrMalformed, ErrUnsupported, ErrInvalid, ErrStaleNonce} {
			known = known || errors.Is(err, want)
		}
		if !known {
			t.Fatalf("header %q: unexpected error %v", header, err)
		}

		params, err := parseAuthParams(header)
		if err != nil {
			return
		}
		var parts []string
		for k, v := range params {
			parts = append(parts, k+"="+quote(v))
		}
		again, err := parseAuthParams([]byte(strings.Join(parts, ", ")))
		if err != nil || fmt.Sprint(again) != fmt.Sprint(params) {
			t.Fatalf("%q parsed as %q, written out and parsed again as %q, %v", header, params, again, err)
		}
	})
}

// TestDigestNonceAcrossRestart: a nonce issued before a restart (the store
// closed and opened again, a new Authenticator on it) still verifies: with
// the right response it is stale, whether it was used or not, and never a
// failed login, so clients behind one address do not lock their user out
// after a deploy; a forged nonce is still a failure.
func TestDigestNonceAcrossRestart(t *testing.T) { eachKind(t, testDigestNonceAcrossRestart) }

func testDigestNonceAcrossRestart(t *testing.T, k kind) {
	cfg := Config{Digest: true, MaxFailures: 1, CacheTTL: -1}
	fx := newDigestFixtureOn(t, k, cfg)
	f := func(header string, wantErr error) {
		t.Helper()
		if _, err := fx.a.AuthenticateRequest([]byte(header), []byte("GET"), []byte("/x"), "192.0.2.1"); !errors.Is(err, wantErr) {
			t.Errorf("%.200q: %v, want %v", header, err, wantErr)
		}
	}
	used, unused, opaque := fx.a.newNonce(), fx.a.newNonce(), fx.a.digest.opaque
	f(fx.header("nonce="+used, "opaque="+opaque), nil)

	mustNil(t, fx.s.Close())
	fx.s = k.openTest(t, fx.place)
	fx.clock.Add(time.Second)
	cfg.Now = fx.clock.Now
	fx.a = NewAuthenticator(fx.s, cfg)
	if fx.a.digest.opaque != opaque {
		t.Errorf("opaque %q after the restart, was %q", fx.a.digest.opaque, opaque)
	}
	for range 3 {
		f(fx.header("nonce="+used, "nc=00000002", "opaque="+opaque), ErrStaleNonce) // the client goes on
		f(fx.header("nonce="+used, "opaque="+opaque), ErrStaleNonce)                // a replay is not accepted
		f(fx.header("nonce="+unused, "opaque="+opaque), ErrStaleNonce)              // issued, never used
		f(fx.header("nonce="+unused, "-opaque", "algorithm=SHA-256"), ErrStaleNonce)
	}
	f(basic("alice", "password1"), nil) // no failure was counted
	f(fx.header(), nil)                 // the new nonce works
	f(fx.header("nonce="+flip(used, 3), "opaque="+opaque), ErrInvalid)
	f(basic("alice", "password1"), ErrThrottled) // a forged nonce is a failure
}
