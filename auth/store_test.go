package auth

import (
	"bufio"
	"bytes"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

// testParams make hashing cheap in tests; the code paths are the same.
var testParams = argonParams{Memory: 64, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32}

// openTest opens the pebble store in dir ("": a new one).
func openTest(t testing.TB, dir string) *Store { return pebbleKind.openTest(t, dir) }

func mustNil(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestStoreReopen(t *testing.T) { eachKind(t, testStoreReopen) }

func testStoreReopen(t *testing.T, kd kind) {
	dir := kd.place(t)
	s := kd.openTest(t, dir)
	a, err := s.AddAccount(" abc12345 ", "  Acme Pty Ltd ")
	mustNil(t, err)
	if a.Code != "ABC12345" || a.Name != "Acme Pty Ltd" || a.Created.IsZero() {
		t.Fatalf("AddAccount = %+v", a)
	}
	_, err = s.AddAccount("XYZ00001", "")
	mustNil(t, err)
	u, err := s.AddUser("abc12345", "alice@example.com", "correct horse")
	mustNil(t, err)
	if u.Account != "ABC12345" || u.Name != "alice@example.com" {
		t.Fatalf("AddUser = %+v", u)
	}
	_, err = s.AddUser("XYZ00001", "bob", "battery staple")
	mustNil(t, err)
	mustNil(t, s.DisableUser("bob"))
	secret, k, err := s.CreateKey("ABC12345", "billing")
	mustNil(t, err)
	_, k2, err := s.CreateKey("XYZ00001", "")
	mustNil(t, err)
	mustNil(t, s.RevokeKey(strings.ToUpper(k2.ID))) // ids are case-insensitive on the way in
	mustNil(t, s.DisableAccount("XYZ00001"))
	mustNil(t, s.Close())
	mustNil(t, s.Close()) // twice is fine
	if _, err := s.Accounts(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Accounts after Close: %v, want ErrClosed", err)
	}

	s = kd.openTest(t, dir)
	accts, err := s.Accounts()
	mustNil(t, err)
	if len(accts) != 2 || accts[0].Code != "ABC12345" || accts[0].Name != "Acme Pty Ltd" || !accts[0].Created.Equal(a.Created) ||
		accts[1].Code != "XYZ00001" || !accts[1].Disabled {
		t.Fatalf("Accounts after reopen = %+v", accts)
	}
	users, err := s.Users("")
	mustNil(t, err)
	if len(users) != 2 || users[0].Name != "alice@example.com" || users[0].Disabled || users[1].Name != "bob" || !users[1].Disabled {
		t.Fatalf("Users after reopen = %+v", users)
	}
	if users, _ := s.Users("xyz00001"); len(users) != 1 || users[0].Name != "bob" {
		t.Fatalf("Users(XYZ00001) = %+v", users)
	}
	keys, err := s.Keys("")
	mustNil(t, err)
	if len(keys) != 2 || keys[0].ID != k.ID || keys[0].Label != "billing" || keys[0].IsRevoked() || keys[1].ID != k2.ID || !keys[1].IsRevoked() {
		t.Fatalf("Keys after reopen = %+v", keys)
	}
	if keys, _ := s.Keys("ABC12345"); len(keys) != 1 || keys[0].ID != k.ID {
		t.Fatalf("Keys(ABC12345) = %+v", keys)
	}
	// The secret is not stored, only its hash.
	rec, ok, err := s.keyRecord(k.ID)
	mustNil(t, err)
	if sum := sha256.Sum256([]byte(secret)); !ok || hex.EncodeToString(rec.SHA256) != hex.EncodeToString(sum[:]) {
		t.Fatalf("key record %+v does not hold the secret's SHA-256", rec)
	}
	// The password survives the reopen.
	urec, ok, err := s.userRecord("alice@example.com")
	mustNil(t, err)
	if !ok || !verifyPassword(urec.Hash, []byte("correct horse")) || verifyPassword(urec.Hash, []byte("correct horsE")) {
		t.Fatalf("password hash %q does not verify after reopen", urec.Hash)
	}
	if s.Realm() != DefaultRealm {
		t.Fatalf("Realm = %q", s.Realm())
	}
}

func TestStoreErrors(t *testing.T) { eachKind(t, testStoreErrors) }

func testStoreErrors(t *testing.T, kd kind) {
	s := kd.openTest(t, "")
	_, err := s.AddAccount("ABC12345", "Acme")
	mustNil(t, err)
	_, err = s.AddUser("ABC12345", "alice", "password1")
	mustNil(t, err)
	_, k, err := s.CreateKey("ABC12345", "")
	mustNil(t, err)

	f := func(what string, err, want error) {
		t.Helper()
		if !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", what, err, want)
		}
	}
	_, err = s.AddAccount("abc12345", "again")
	f("duplicate account", err, ErrExists)
	_, err = s.AddUser("ABC12345", "alice", "password2")
	f("duplicate user", err, ErrExists)
	_, err = s.AddUser("ZZZ99999", "carol", "password1")
	f("user of unknown account", err, ErrNotFound)
	_, _, err = s.CreateKey("ZZZ99999", "")
	f("key of unknown account", err, ErrNotFound)
	_, err = s.Account("ZZZ99999")
	f("unknown account", err, ErrNotFound)
	_, err = s.User("nobody")
	f("unknown user", err, ErrNotFound)
	f("password of unknown user", s.SetPassword("nobody", "password1"), ErrNotFound)
	f("disable unknown user", s.DisableUser("nobody"), ErrNotFound)
	f("enable unknown user", s.EnableUser("nobody"), ErrNotFound)
	f("disable unknown account", s.DisableAccount("ZZZ99999"), ErrNotFound)
	f("revoke unknown key", s.RevokeKey("aaaaaaaaaa"), ErrNotFound)
	f("short new password", s.SetPassword("alice", "short"), ErrInvalidInput)
	f("revoke twice", errors.Join(s.RevokeKey(k.ID), s.RevokeKey(k.ID)), nil)
	_, _, err = s.CreateKey("ABC12345", "bad\x00label")
	f("control character in label", err, ErrInvalidInput)
	_, err = s.AddAccount("ABD12345", "tab\there")
	f("control character in name", err, ErrInvalidInput)
	_, err = s.AddAccount("ABD12345", strings.Repeat("x", 201))
	f("long name", err, ErrInvalidInput)
	if users, _ := s.Users(""); len(users) != 1 {
		t.Errorf("failed adds left users behind: %+v", users)
	}
}

func TestValidation(t *testing.T) { eachKind(t, testValidation) }

func testValidation(t *testing.T, k kind) {
	s := k.openTest(t, "")
	code := func(code string, ok bool) {
		t.Helper()
		_, err := s.AddAccount(code, "")
		if ok && err != nil || !ok && !errors.Is(err, ErrInvalidInput) {
			t.Errorf("AddAccount(%q): %v, want ok=%v", code, err, ok)
		}
	}
	code("ABC12345", true)
	code("abc12346", true) // upper-cased
	code(" Abc12347\t", true)
	code("AB12345", false)
	code("ABCD1234", false)
	code("ABC1234", false)
	code("ABC123456", false)
	code("ABC1234A", false)
	code("123ABCDE", false)
	code("ÀBC12345", false)
	code("", false)
	code("ABC 12345", false)
	code("ABC１２３４５", false) // full-width digits

	name := func(name string, ok bool) {
		t.Helper()
		_, err := s.AddUser("ABC12345", name, "password1")
		if ok && err != nil || !ok && !errors.Is(err, ErrInvalidInput) {
			t.Errorf("AddUser(%q): %v, want ok=%v", name, err, ok)
		}
	}
	name("a", true)
	name("alice.smith@example.com", true)
	name("Bob_O-Neil", true)
	name(strings.Repeat("x", 64), true)
	name(strings.Repeat("y", 65), false)
	name("", false)
	name("al ice", false)
	name("al:ice", false) // Basic could not carry it
	name("alice/x", false)
	name("zoë", false)
	name("a\x00b", false)

	pw := func(pw string, ok bool) {
		t.Helper()
		err := CheckPassword(pw)
		if ok && err != nil || !ok && !errors.Is(err, ErrInvalidInput) {
			t.Errorf("CheckPassword(%q): %v, want ok=%v", pw, err, ok)
		}
		if ok { // and the store takes it
			h := md5.Sum([]byte(pw))
			_, err := s.AddUser("ABC12345", "pw"+hex.EncodeToString(h[:8]), pw)
			mustNil(t, err)
		}
	}
	pw("12345678", true)
	pw("pässwörd", true)
	pw("with:colons:and spaces", true)
	pw(strings.Repeat("p", 1024), true)
	pw(strings.Repeat("p", 1025), false)
	pw("1234567", false)
	pw("", false)
	pw("tab\tinside", false)
	pw("nul\x00inside", false)
	pw("bad\xffutf8", false)
}

func TestDigestHA1(t *testing.T) { eachKind(t, testDigestHA1) }

func testDigestHA1(t *testing.T, k kind) {
	s := k.openTest(t, "")
	_, err := s.AddAccount("ABC12345", "")
	mustNil(t, err)
	_, err = s.AddUser("ABC12345", "Mufasa", "Circle of Life")
	mustNil(t, err)

	f := func(user, alg, want string, ok bool) {
		t.Helper()
		got, found, err := s.DigestHA1(user, alg)
		if err != nil || found != ok || string(got) != want {
			t.Errorf("DigestHA1(%q, %q) = %q, %v, %v; want %q, %v", user, alg, got, found, err, want, ok)
		}
	}
	// By hand: H("Mufasa:lodge:Circle of Life").
	md := md5.Sum([]byte("Mufasa:lodge:Circle of Life"))
	sh := sha256.Sum256([]byte("Mufasa:lodge:Circle of Life"))
	f("Mufasa", "MD5", hex.EncodeToString(md[:]), true)
	f("Mufasa", "md5", hex.EncodeToString(md[:]), true)
	f("Mufasa", "SHA-256", hex.EncodeToString(sh[:]), true)
	f("mufasa", "SHA-256", "", false) // names are exact
	f("nobody", "MD5", "", false)

	mustNil(t, s.SetPassword("Mufasa", "Circle of Death"))
	sh = sha256.Sum256([]byte("Mufasa:lodge:Circle of Death"))
	f("Mufasa", "SHA-256", hex.EncodeToString(sh[:]), true)
	mustNil(t, s.DisableUser("Mufasa"))
	f("Mufasa", "SHA-256", "", false)
	mustNil(t, s.EnableUser("Mufasa"))
	mustNil(t, s.DisableAccount("ABC12345"))
	f("Mufasa", "MD5", "", false)

	if _, _, err := s.DigestHA1("Mufasa", "SHA-512-256"); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("unknown algorithm: %v", err)
	}
}

func TestPasswordHash(t *testing.T) {
	h := hashPassword(testParams, []byte("password1"))
	if !strings.HasPrefix(h, "$argon2id$v=19$m=64,t=1,p=1$") {
		t.Fatalf("hash %q is not PHC argon2id with its parameters", h)
	}
	if h2 := hashPassword(testParams, []byte("password1")); h2 == h {
		t.Fatal("two hashes of one password are equal: no salt")
	}
	f := func(phc, pw string, want bool) {
		t.Helper()
		if got := verifyPassword(phc, []byte(pw)); got != want {
			t.Errorf("verifyPassword(%q, %q) = %v", phc, pw, got)
		}
	}
	f(h, "password1", true)
	f(h, "password2", false)
	f(h, "", false)
	parts := strings.Split(h, "$")
	with := func(i int, v string) string {
		p := append([]string(nil), parts...)
		p[i] = v
		return strings.Join(p, "$")
	}
	f(with(1, "argon2i"), "password1", false)
	f(with(2, "v=16"), "password1", false)
	f(with(3, "m=64,t=2,p=1"), "password1", false)         // other parameters, other hash
	f(with(3, "m=4294967295,t=1,p=1"), "password1", false) // absurd memory is refused, not allocated
	f(with(3, "m=64,t=1000000,p=1"), "password1", false)   // absurd time too
	f(with(3, "m=64,t=1,p=0"), "password1", false)         // no lanes
	f(with(3, "m=64,t=1,p=1,x=1"), "password1", false)     // unknown parameter
	f(with(3, "m=64,t=1"), "password1", false)             // p missing: 0
	f(with(4, "!!"), "password1", false)                   // bad salt
	f(with(5, parts[5][:10]), "password1", false)          // short hash
	f(h+"$", "password1", false)                           // extra field
	f("", "password1", false)
	f("$2a$10$abcdefghijklmnopqrstuuJ0M2b4hG5c1Zt5o6Ih3Sdw4v4qS5w6e", "password1", false) // bcrypt is not read
}

// TestDefaultParams checks the parameters new hashes get: the ones the
// package documents.
func TestDefaultParams(t *testing.T) {
	if testing.Short() {
		t.Skip("19 MiB argon2id")
	}
	h := hashPassword(defaultParams, []byte("password1"))
	if !strings.HasPrefix(h, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Fatalf("default hash %q", h)
	}
	if !verifyPassword(h, []byte("password1")) {
		t.Fatal("default hash does not verify")
	}
}

func TestKeyFormat(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		id, secret := newKeySecret()
		if seen[id] {
			t.Fatalf("id %s drawn twice", id)
		}
		seen[id] = true
		got, ok := parseKeyToken([]byte(secret))
		if !ok || got != id || len(secret) != 57 || !strings.HasPrefix(secret, "lk_"+id+"_") {
			t.Fatalf("secret %q (id %s) does not parse: %q %v", secret, id, got, ok)
		}
		if !looksLikeKey([]byte("/x?y=" + secret)) {
			t.Fatalf("looksLikeKey misses %q", secret)
		}
	}
	_, secret := newKeySecret()
	f := func(tok string) {
		t.Helper()
		if _, ok := parseKeyToken([]byte(tok)); ok {
			t.Errorf("parseKeyToken(%q) accepted", tok)
		}
	}
	f(secret[:56])
	f(secret + "A")
	f("LK" + secret[2:])
	f(secret[:3] + "ABCDEFGHIJ" + secret[13:]) // id not lower-case base32
	f(secret[:13] + "-" + secret[14:])
	f(secret[:56] + "=")
	f(secret[:56] + "+")
	f("")
}

func TestStoreConcurrent(t *testing.T) { eachKind(t, testStoreConcurrent) }

func testStoreConcurrent(t *testing.T, k kind) {
	s := k.openTest(t, "")
	_, err := s.AddAccount("ABC12345", "")
	mustNil(t, err)
	_, err = s.AddUser("ABC12345", "alice", "password1")
	mustNil(t, err)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 8 {
				if _, _, err := s.CreateKey("ABC12345", ""); err != nil {
					errs <- err
				}
				if err := s.SetPassword("alice", "password"+string(rune('0'+i))); err != nil {
					errs <- err
				}
				if _, err := s.Keys(""); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	keys, _ := s.Keys("ABC12345")
	rec, _, _ := s.userRecord("alice")
	if len(keys) != 64 || rec.Gen != 1+64 {
		t.Fatalf("%d keys, user generation %d; want 64 and 65: lost updates", len(keys), rec.Gen)
	}
}

func TestDemo(t *testing.T) { eachKind(t, testDemo) }

func testDemo(t *testing.T, k kind) {
	s := k.openTest(t, "")
	acct, secret1, err := Demo(s)
	mustNil(t, err)
	_, secret2, err := Demo(s) // idempotent account, new key
	mustNil(t, err)
	if acct != "DEM00001" || secret1 == secret2 {
		t.Fatalf("Demo = %s %s %s", acct, secret1, secret2)
	}
	a, err := s.Account(acct)
	mustNil(t, err)
	keys, _ := s.Keys(acct)
	if a.Name != "Demo account" || len(keys) != 2 || keys[0].Label != "demo" {
		t.Fatalf("demo account %+v keys %+v", a, keys)
	}
	an := NewAuthenticator(s, Config{})
	for _, sec := range []string{secret1, secret2} {
		if p, err := an.Authenticate([]byte("Bearer "+sec), "192.0.2.1"); err != nil || p.Account != acct {
			t.Fatalf("demo key: %+v %v", p, err)
		}
	}
	mustNil(t, s.DisableAccount(acct))
	if _, _, err := Demo(s); err == nil {
		t.Fatal("Demo made a key for a disabled account")
	}
}

func TestOpenInUse(t *testing.T) {
	if dir := os.Getenv("LODGE_AUTH_TEST_HOLD"); dir != "" {
		// The helper process: hold the store open until stdin closes.
		s, err := Open(dir)
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		fmt.Println("open")
		io.Copy(io.Discard, os.Stdin)
		s.Close()
		os.Exit(0)
	}
	f := func(err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), "in use by another process") {
			t.Errorf("second Open: %v, want in use", err)
		}
	}
	dir := filepath.Join(t.TempDir(), "auth")
	s := openTest(t, dir)
	_, err := openStore(dir, testParams) // same process
	f(err)
	s.Close()

	cmd := exec.Command(os.Args[0], "-test.run=^TestOpenInUse$")
	cmd.Env = append(os.Environ(), "LODGE_AUTH_TEST_HOLD="+dir)
	stdin, err := cmd.StdinPipe()
	mustNil(t, err)
	stdout, err := cmd.StdoutPipe()
	mustNil(t, err)
	mustNil(t, cmd.Start())
	defer cmd.Wait()
	defer stdin.Close()
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	if line != "open\n" {
		t.Fatalf("helper: %q", line)
	}
	_, err = openStore(dir, testParams) // another process
	f(err)
}

// TestNonceKey: the store makes its Digest nonce key once and keeps it;
// a damaged key record stops Open with an error naming it.
func TestNonceKey(t *testing.T) {
	eachKind(t, func(t *testing.T, k kind) {
		dir := k.place(t)
		s := k.openTest(t, dir)
		key := bytes.Clone(s.nonceKey)
		if len(key) != nonceKeyLen || bytes.Equal(key, make([]byte, nonceKeyLen)) {
			t.Fatalf("nonce key %x", key)
		}
		mustNil(t, s.Close())
		s = k.openTest(t, dir)
		if !bytes.Equal(s.nonceKey, key) {
			t.Fatalf("nonce key %x after reopen, was %x", s.nonceKey, key)
		}
	})
	f := func(record, wantErr string) {
		t.Helper()
		dir := filepath.Join(t.TempDir(), "auth")
		s := openTest(t, dir)
		mustNil(t, pebbleDB(s).Set([]byte(nonceKeyKey), []byte(record), pebble.Sync))
		mustNil(t, s.Close())
		s, err := openStore(dir, testParams)
		if err == nil {
			s.Close()
			t.Fatalf("%s: opened", record)
		}
		if !strings.Contains(err.Error(), wantErr) || !strings.Contains(err.Error(), nonceKeyKey) {
			t.Errorf("%s: %v, want %q naming %s", record, err, wantErr, nonceKeyKey)
		}
	}
	f(`{"key":"AAAA"}`, "key of 3 bytes, want 32")
	f(`{"key":""}`, "key of 0 bytes, want 32")
	f(`{"key":7}`, "auth store")
	f(`not json`, "auth store")
}
