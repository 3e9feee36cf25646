package auth

import (
	"crypto/md5"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/crypto/argon2"
)

// argonParams are argon2id parameters. They are written into every hash
// (PHC form), so changing them here affects new passwords only; stored
// ones keep verifying with the parameters they were made with.
type argonParams struct {
	Memory  uint32 // KiB
	Time    uint32 // passes
	Threads uint8
	SaltLen int
	KeyLen  uint32
}

// defaultParams: argon2id with 19 MiB and two passes, OWASP's recommended
// minimum (RFC 9106's second recommended setting uses 64 MiB). The memory
// matters here: verifications run up to GOMAXPROCS at once, and a server
// that promises a small resident size should not take 64 MiB per login
// attempt. A verification costs a guesser about 20 ms of CPU on the 2-core
// development machine, while the Authenticator's cache keeps a busy Basic
// client from paying it per request. The parameters are stored in each
// hash, so they can be raised later. bcrypt (cost 10: about 75 ms here) was
// the alternative; argon2id is memory-hard and takes passwords longer than
// 72 bytes.
var defaultParams = argonParams{Memory: 19 * 1024, Time: 2, Threads: 1, SaltLen: 16, KeyLen: 32}

var b64 = base64.RawStdEncoding

// hashPassword hashes password with a fresh random salt and returns the
// PHC string $argon2id$v=19$m=<KiB>,t=<passes>,p=<lanes>$<salt>$<hash>.
func hashPassword(p argonParams, password []byte) string {
	salt := make([]byte, p.SaltLen)
	rand.Read(salt) // never fails (crypto/rand since Go 1.24)
	sum := argon2.IDKey(password, salt, p.Time, p.Memory, p.Threads, p.KeyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		argon2.Version, p.Memory, p.Time, p.Threads, b64.EncodeToString(salt), b64.EncodeToString(sum))
}

// verifyPassword says whether password matches the PHC hash phc. A hash it
// cannot read, or with parameters beyond sane bounds (a damaged record must
// not make us allocate gigabytes), matches nothing.
func verifyPassword(phc string, password []byte) bool {
	p, salt, want, ok := parsePHC(phc)
	if !ok {
		return false
	}
	got := argon2.IDKey(password, salt, p.Time, p.Memory, p.Threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1
}

func parsePHC(phc string) (p argonParams, salt, sum []byte, ok bool) {
	// "", "argon2id", "v=19", "m=..,t=..,p=..", salt, hash
	f := strings.Split(phc, "$")
	if len(f) != 6 || f[0] != "" || f[1] != "argon2id" || f[2] != "v="+strconv.Itoa(argon2.Version) {
		return p, nil, nil, false
	}
	var m, t, par uint64
	for _, kv := range strings.Split(f[3], ",") {
		k, v, found := strings.Cut(kv, "=")
		n, err := strconv.ParseUint(v, 10, 32)
		if !found || err != nil {
			return p, nil, nil, false
		}
		switch k {
		case "m":
			m = n
		case "t":
			t = n
		case "p":
			par = n
		default:
			return p, nil, nil, false
		}
	}
	if par < 1 || par > 64 || t < 1 || t > 64 || m < 8*par || m > 1<<20 {
		return p, nil, nil, false
	}
	salt, err1 := b64.DecodeString(f[4])
	sum, err2 := b64.DecodeString(f[5])
	if err1 != nil || err2 != nil || len(salt) < 8 || len(salt) > 64 || len(sum) < 16 || len(sum) > 64 {
		return p, nil, nil, false
	}
	return argonParams{Memory: uint32(m), Time: uint32(t), Threads: uint8(par), SaltLen: len(salt), KeyLen: uint32(len(sum))}, salt, sum, true
}

// dummyHash is the hash unknown users are verified against: a random
// password with the store's parameters, made on first use.
func (s *Store) dummyHash() string {
	s.dummyOnce.Do(func() {
		pw := make([]byte, 32)
		rand.Read(pw)
		s.dummy = hashPassword(s.params, pw)
	})
	return s.dummy
}

// Digest algorithms DigestHA1 knows (RFC 7616 names).
const (
	DigestMD5    = "MD5"
	DigestSHA256 = "SHA-256"
)

// digestHA1s returns hex H(name:realm:password) for MD5 and SHA-256.
func digestHA1s(name, realm, password string) (md5hex, sha256hex string) {
	a1 := name + ":" + realm + ":" + password
	m := md5.Sum([]byte(a1))
	s := sha256.Sum256([]byte(a1))
	return hex.EncodeToString(m[:]), hex.EncodeToString(s[:])
}

// DigestHA1 returns H(user:realm:password) for HTTP Digest (RFC 7616) as
// lower-case hex, the form the Digest computations concatenate, for
// algorithm "MD5" or "SHA-256" (case-insensitive; the -sess variants derive
// from the same value). realm is Realm(). The bool is false when the user
// has no usable credential: unknown, disabled, in a disabled or missing
// account, or with values made for another realm. An unknown algorithm is
// an error.
func (s *Store) DigestHA1(user, algorithm string) ([]byte, bool, error) {
	alg := strings.ToUpper(algorithm)
	if alg != DigestMD5 && alg != DigestSHA256 {
		return nil, false, fmt.Errorf("digest algorithm %q: %w: want MD5 or SHA-256", algorithm, ErrInvalidInput)
	}
	rec, ok, err := s.userRecord(user)
	if err != nil || !ok || rec.Disabled || rec.Realm != s.realm {
		return nil, false, err
	}
	if active, err := s.accountActive(rec.Account); err != nil || !active {
		return nil, false, err
	}
	v := rec.HA1SHA256
	if alg == DigestMD5 {
		v = rec.HA1MD5
	}
	if v == "" {
		return nil, false, nil
	}
	return []byte(v), true, nil
}
