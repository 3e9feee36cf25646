package auth

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
)

// TestHostileHeaders feeds the header parser what an attacker would: every
// case must fail with the given error, quickly, and without a password
// verification where none is due.
func TestHostileHeaders(t *testing.T) {
	fx := newFixture(t, Config{CacheTTL: -1, MaxFailures: -1})
	b64 := base64.StdEncoding.EncodeToString
	f := func(name string, header []byte, want error, verifies int) {
		t.Helper()
		p, err := fx.a.Authenticate(header, "192.0.2.1")
		v, _ := fx.work()
		if !errors.Is(err, want) || p != (Principal{}) || len(v) != verifies {
			t.Errorf("%s: %+v, %v after %d verifications; want %v after %d", name, p, err, len(v), want, verifies)
		}
	}
	mb := bytes.Repeat([]byte("A"), 1<<20)
	f("1 MB header", mb, ErrMalformed, 0)
	f("1 MB Bearer", append([]byte("Bearer "), mb...), ErrMalformed, 0)
	f("base64 of 1 MB", []byte("Basic "+b64(mb)), ErrMalformed, 0)
	f("base64 of 1 MB of colons", []byte("Basic "+b64(bytes.Repeat([]byte(":"), 1<<20))), ErrMalformed, 0)
	f("10,000 colons", []byte("Basic "+strings.Repeat(":", 10000)), ErrMalformed, 0)
	f("10,000 colons encoded", []byte("Basic "+b64(bytes.Repeat([]byte(":"), 10000))), ErrMalformed, 0)
	f("2,000 colons encoded", []byte("Basic "+b64(bytes.Repeat([]byte(":"), 2000))), ErrInvalid, 1)
	f("alice and 2,000 colons", []byte(basic("alice", strings.Repeat(":", 2000))), ErrInvalid, 1)
	f("just over the limit", []byte("Basic "+strings.Repeat("A", maxAuthorizationBytes)), ErrMalformed, 0)
	f("NUL", []byte{0}, ErrMalformed, 0)
	f("NUL in scheme", []byte("Bea\x00rer "+fx.good), ErrMalformed, 0)
	f("NUL after scheme", []byte("Bearer\x00"+fx.good), ErrMalformed, 0)
	f("NUL in credential", []byte("Basic YWxp\x00Y2U6cGFzc3dvcmQx"), ErrMalformed, 0)
	f("NUL in user", []byte("Basic "+b64([]byte("ali\x00ce:password1"))), ErrInvalid, 1)
	f("NUL in password", []byte(basic("alice", "password1\x00")), ErrInvalid, 1)
	f("invalid UTF-8 header", []byte("Basic \xff\xfe"), ErrMalformed, 0)
	f("invalid UTF-8 scheme", []byte("B\xe9arer x"), ErrMalformed, 0)
	f("invalid UTF-8 credentials", []byte("Basic "+b64([]byte("\xff\xfe:\xc0\xaf"))), ErrInvalid, 1)
	f("UTF-8 look-alike scheme", []byte("Веarer "+fx.good), ErrMalformed, 0) // Cyrillic
	f("CRLF injection", []byte("Bearer "+fx.good+"\r\nX-Admin: 1"), ErrMalformed, 0)
	f("only spaces after scheme", []byte("Basic      "), ErrMalformed, 0)
	f("only padding", []byte("Basic ===="), ErrMalformed, 0)
	f("empty base64 credential", []byte("Basic "+b64([]byte(":"))), ErrInvalid, 1)
	f("many schemes", []byte(strings.Repeat("Basic x, ", 400)), ErrMalformed, 0)
	f("Digest 1 MB", append([]byte("Digest "), mb...), ErrMalformed, 0)
	f("key with a NUL instead of _", []byte("Bearer "+fx.good[:13]+"\x00"+fx.good[14:]), ErrMalformed, 0)
}

// FuzzAuthenticate: no header panics, and none authenticates unless it
// carries the fixture's real credentials (which the seeds do not).
func FuzzAuthenticate(f *testing.F) {
	fx := newFixture(f, Config{MaxFailures: -1})
	b64 := base64.StdEncoding.EncodeToString
	for _, s := range []string{
		"", " ", "Bearer", "Bearer x", "Bearer lk_aaaaaaaaaa_" + strings.Repeat("A", 43), "bearer " + fx.good[:56],
		"Basic", "Basic " + b64([]byte("alice:password2")), "Basic " + b64([]byte("nobody:x")), "Basic " + b64([]byte("alice")),
		"Basic !!", "Basic YWxpY2U6cGFzc3dvcmQx=", "Digest username=\"alice\"", "Bearer a, Basic b",
		"Basic " + strings.Repeat(":", 100), "\x00\xff\xfe", "Basic " + b64([]byte("dave:password4")),
	} {
		f.Add([]byte(s))
	}
	var successes atomic.Int64
	f.Fuzz(func(t *testing.T, header []byte) {
		p, err := fx.a.Authenticate(header, "192.0.2.1")
		if err == nil {
			h := string(header)
			if !strings.Contains(h, fx.good) && !strings.Contains(h, b64([]byte("alice:password1"))) &&
				!strings.Contains(h, base64.RawStdEncoding.EncodeToString([]byte("alice:password1"))) {
				t.Fatalf("header %q authenticated as %+v", header, p)
			}
			successes.Add(1)
			return
		}
		if p != (Principal{}) {
			t.Fatalf("failure %v came with principal %+v", err, p)
		}
		for _, want := range []error{ErrMissing, ErrMalformed, ErrUnsupported, ErrInvalid} {
			if errors.Is(err, want) {
				return
			}
		}
		t.Fatalf("header %q: unexpected error %v", header, err)
	})
}
