package auth

import (
	"encoding/base64"
	"path/filepath"
	"testing"
)

// BenchmarkVerifyPassword measures one Basic verification with the
// default parameters: the cost a guesser pays per attempt.
func BenchmarkVerifyPassword(b *testing.B) {
	h := hashPassword(defaultParams, []byte("password1"))
	for b.Loop() {
		if !verifyPassword(h, []byte("password1")) {
			b.Fatal("no match")
		}
	}
}

func benchFixture(b *testing.B) *Authenticator {
	s, err := Open(filepath.Join(b.TempDir(), "auth"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	if _, err := s.AddAccount("ABC12345", ""); err != nil {
		b.Fatal(err)
	}
	if _, err := s.AddUser("ABC12345", "alice", "password1"); err != nil {
		b.Fatal(err)
	}
	return NewAuthenticator(s, Config{MaxFailures: -1})
}

// BenchmarkBasicCached is a Basic client's steady state: a cache hit and
// two record reads per request.
func BenchmarkBasicCached(b *testing.B) {
	a := benchFixture(b)
	h := []byte("Basic " + base64.StdEncoding.EncodeToString([]byte("alice:password1")))
	if _, err := a.Authenticate(h, "192.0.2.1"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := a.Authenticate(h, "192.0.2.1"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBearer(b *testing.B) {
	a := benchFixture(b)
	secret, _, err := a.s.CreateKey("ABC12345", "")
	if err != nil {
		b.Fatal(err)
	}
	h := []byte("Bearer " + secret)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := a.Authenticate(h, "192.0.2.1"); err != nil {
			b.Fatal(err)
		}
	}
}
