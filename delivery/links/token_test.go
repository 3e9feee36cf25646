package links

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lodge-mail/lodge/internal/testenv"
)

var (
	testKey  = bytes.Repeat([]byte{7}, KeySize)
	otherKey = bytes.Repeat([]byte{8}, KeySize)
	now      = time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	epid     = "ABCDEFGHJKMNPQRSTVWXYZ234567"
)

// forge signs a payload of our own making with the key: malformed tokens
// that nonetheless carry a valid signature.
func forge(key, payload []byte) string {
	return base64.RawURLEncoding.EncodeToString(append(payload, mac(key, payload)...))
}

// TestVerify: what Sign makes, Verify reads back until it expires; any
// other token is ErrInvalid.
func TestVerify(t *testing.T) {
	exp := now.Add(time.Hour)
	f := func(name string, key []byte, token string, at time.Time, want error, wantEPID string, wantIdx int, wantKind string) {
		t.Helper()
		e, i, k, err := Verify(key, token, at)
		if !errors.Is(err, want) || err == nil && (e != wantEPID || i != wantIdx || k != wantKind) {
			t.Errorf("%s: %q %d %q %v, want %q %d %q %v", name, e, i, k, err, wantEPID, wantIdx, wantKind, want)
		}
	}
	doc := Sign(testKey, epid, 7, KindDoc, exp)
	f("doc", testKey, doc, now, nil, epid, 7, KindDoc)
	f("open", testKey, Sign(testKey, epid, 0, KindOpen, exp), now, nil, epid, 0, KindOpen)
	f("large index", testKey, Sign(testKey, "E", 99_999, KindDoc, exp), now, nil, "E", 99_999, KindDoc)
	f("a second before expiry", testKey, doc, exp.Add(-time.Second), nil, epid, 7, KindDoc)
	f("at expiry", testKey, doc, exp, ErrExpired, "", 0, "")
	f("after expiry", testKey, doc, exp.Add(24*time.Hour), ErrExpired, "", 0, "")
	f("sub-second expiry is cut to the second", testKey, Sign(testKey, epid, 1, KindDoc, now.Add(1500*time.Millisecond)), now.Add(time.Second), ErrExpired, "", 0, "")
	f("other key", otherKey, doc, now, ErrInvalid, "", 0, "")
	f("short key", testKey[:MinKeySize-1], Sign(testKey[:MinKeySize-1], epid, 7, KindDoc, exp), now, ErrInvalid, "", 0, "")
	f("empty", testKey, "", now, ErrInvalid, "", 0, "")
	f("truncated", testKey, doc[:len(doc)-1], now, ErrInvalid, "", 0, "")
	f("a character more", testKey, doc+"A", now, ErrInvalid, "", 0, "")
	f("padded", testKey, doc+"=", now, ErrInvalid, "", 0, "")
	if std := strings.NewReplacer("-", "+", "_", "/").Replace(doc); std != doc {
		f("standard base64", testKey, std, now, ErrInvalid, "", 0, "")
	}
	f("spaces", testKey, " "+doc, now, ErrInvalid, "", 0, "")
	f("a line break inside", testKey, doc[:10]+"\r\n"+doc[10:], now, ErrInvalid, "", 0, "")
	f("too long", testKey, strings.Repeat("A", MaxTokenLen+1), now, ErrInvalid, "", 0, "")
	f("garbage", testKey, "not-a-token-at-all", now, ErrInvalid, "", 0, "")
	// payloads only the key holder could sign are still checked
	payload := func(kind byte, exp uint32, idx uint64, epid string) []byte {
		b := []byte{kind}
		b = binary.BigEndian.AppendUint32(b, exp)
		b = binary.AppendUvarint(b, idx)
		return append(b, epid...)
	}
	e := uint32(exp.Unix())
	f("signed, well formed", testKey, forge(testKey, payload('d', e, 3, "X")), now, nil, "X", 3, KindDoc)
	f("signed, unknown kind", testKey, forge(testKey, payload('x', e, 3, "X")), now, ErrInvalid, "", 0, "")
	f("signed, no EPID", testKey, forge(testKey, payload('d', e, 3, "")), now, ErrInvalid, "", 0, "")
	f("signed, EPID too long", testKey, forge(testKey, payload('d', e, 3, strings.Repeat("E", maxEPID+1))), now, ErrInvalid, "", 0, "")
	f("signed, index past int32", testKey, forge(testKey, payload('d', e, 1<<31, "X")), now, ErrInvalid, "", 0, "")
	f("signed, bad varint", testKey, forge(testKey, append([]byte{'d', 0xff, 0xff, 0xff, 0xff}, bytes.Repeat([]byte{0x80}, 11)...)), now, ErrInvalid, "", 0, "")
	// every single character changed breaks it
	for i := range doc {
		for _, c := range []byte("AQgw_-9z") {
			if doc[i] == c {
				continue
			}
			bad := doc[:i] + string(c) + doc[i+1:]
			if _, _, _, err := Verify(testKey, bad, now); err == nil {
				t.Fatalf("%q (character %d changed) verified", bad, i)
			}
		}
	}
	// the token is short enough for an SMS
	if len(doc) > 80 {
		t.Errorf("a token of a 28-character EPID has %d characters", len(doc))
	}
}

// TestSignPanics: arguments no caller should pass are a panic, not a
// token.
func TestSignPanics(t *testing.T) {
	f := func(name string, fn func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s: no panic", name)
			}
		}()
		fn()
	}
	exp := now.Add(time.Hour)
	f("kind", func() { Sign(testKey, epid, 0, "click", exp) })
	f("empty EPID", func() { Sign(testKey, "", 0, KindDoc, exp) })
	f("long EPID", func() { Sign(testKey, strings.Repeat("E", maxEPID+1), 0, KindDoc, exp) })
	f("negative index", func() { Sign(testKey, epid, -1, KindDoc, exp) })
	f("before 1970", func() { Sign(testKey, epid, 0, KindDoc, time.Unix(-1, 0)) })
	f("after 2106", func() { Sign(testKey, epid, 0, KindDoc, time.Unix(1<<32, 0)) })
}

// FuzzVerify: Verify never panics and accepts only what Sign made with
// the key; a token of any arguments Sign takes reads back the same until
// it expires, and fails under another key or with any character changed.
func FuzzVerify(f *testing.F) {
	testenv.LimitMinimization(f, "10s")
	f.Add(Sign(testKey, epid, 7, KindDoc, now.Add(time.Hour)), epid, 7, int64(now.Unix()+60), 3)
	f.Add("", "E", 0, int64(1), 0)
	f.Add("AAAA", "\x00\xff", 1<<30, int64(1<<32-1), 100)
	f.Fuzz(func(t *testing.T, token, e string, idx int, exp int64, pos int) {
		if ep, i, k, err := Verify(testKey, token, now); err == nil {
			if Sign(testKey, ep, i, k, time.Unix(int64(binary.BigEndian.Uint32(mustDecode(t, token)[1:5])), 0)) != token {
				t.Fatalf("%q verified but is not Sign's", token)
			}
		}
		if e == "" || len(e) > maxEPID || idx < 0 || idx > 1<<31-1 || exp < 1 || exp > 1<<32-1 {
			return
		}
		for _, kind := range []string{KindDoc, KindOpen} {
			tok := Sign(testKey, e, idx, kind, time.Unix(exp, 0))
			ge, gi, gk, err := Verify(testKey, tok, time.Unix(exp-1, 0))
			if err != nil || ge != e || gi != idx || gk != kind {
				t.Fatalf("round trip: %q %d %q %v", ge, gi, gk, err)
			}
			if _, _, _, err := Verify(testKey, tok, time.Unix(exp, 0)); !errors.Is(err, ErrExpired) {
				t.Fatalf("at expiry: %v", err)
			}
			if _, _, _, err := Verify(otherKey, tok, time.Unix(exp-1, 0)); !errors.Is(err, ErrInvalid) {
				t.Fatalf("other key: %v", err)
			}
			p := pos % len(tok)
			if p < 0 {
				p = -p
			}
			c := byte('A')
			if tok[p] == 'A' {
				c = 'B'
			}
			if _, _, _, err := Verify(testKey, tok[:p]+string(c)+tok[p+1:], time.Unix(exp-1, 0)); err == nil {
				t.Fatalf("%q changed at %d verified", tok, p)
			}
		}
	})
}

func mustDecode(t *testing.T, token string) []byte {
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestLoadOrCreateKey: made once (32 bytes, mode 0600) and read back; a
// key file of another size or readable by others is refused; processes
// making it at once agree.
func TestLoadOrCreateKey(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "links.key")
	k1, err := LoadOrCreateKey(path)
	if err != nil || len(k1) != KeySize {
		t.Fatalf("%x %v", k1, err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v %v", fi.Mode(), err)
	}
	k2, err := LoadOrCreateKey(path)
	if err != nil || !bytes.Equal(k1, k2) {
		t.Fatalf("read back %x %v, want %x", k2, err, k1)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "sub", ".links-key-*")); len(left) != 0 {
		t.Fatalf("left %q", left)
	}
	os.Chmod(path, 0o644)
	if _, err := LoadOrCreateKey(path); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("mode 0644: %v", err)
	}
	os.WriteFile(path, []byte("short"), 0o600)
	os.Chmod(path, 0o600)
	if _, err := LoadOrCreateKey(path); err == nil || !strings.Contains(err.Error(), "5 bytes, want 32") {
		t.Fatalf("short key: %v", err)
	}
	os.WriteFile(path, bytes.Repeat([]byte{1}, KeySize+1), 0o600)
	if _, err := LoadOrCreateKey(path); err == nil || !strings.Contains(err.Error(), "want 32") {
		t.Fatalf("long key: %v", err)
	}
	// eight at once on a fresh path: one key
	path = filepath.Join(dir, "race.key")
	keys := make([][]byte, 8)
	var wg sync.WaitGroup
	for i := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k, err := LoadOrCreateKey(path)
			if err != nil {
				t.Error(err)
			}
			keys[i] = k
		}()
	}
	wg.Wait()
	for _, k := range keys {
		if !bytes.Equal(k, keys[0]) || len(k) != KeySize {
			t.Fatalf("keys differ: %x", keys)
		}
	}
}
