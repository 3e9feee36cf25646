package auth

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Errors of Authenticate and AuthenticateRequest. Every one of them means
// 401 except ErrThrottled (429, with the RetryAfter of the
// *ThrottledError). AuthenticateRequest also returns ErrStaleNonce (401
// with a fresh Digest challenge marked stale=true).
var (
	ErrMissing     = errors.New("no credentials")
	ErrMalformed   = errors.New("malformed Authorization header")
	ErrUnsupported = errors.New("authentication scheme not supported here")
	ErrInvalid     = errors.New("invalid credentials")
	ErrThrottled   = errors.New("too many failed attempts")
)

// ThrottledError is returned to a client with too many recent failures;
// errors.Is(err, ErrThrottled) holds for it.
type ThrottledError struct {
	RetryAfter time.Duration // when the client may try again
}

func (e *ThrottledError) Error() string {
	return fmt.Sprintf("%v: retry after %v", ErrThrottled, e.RetryAfter.Round(time.Second))
}

// Is makes errors.Is(err, ErrThrottled) true.
func (e *ThrottledError) Is(target error) bool { return target == ErrThrottled }

// Methods a Principal authenticated with.
const (
	MethodBearer = "bearer"
	MethodBasic  = "basic"
	MethodDigest = "digest"
)

// Principal is who a request authenticated as.
type Principal struct {
	Account string // account code
	User    string // user name (Basic or Digest), or ""
	KeyID   string // API key id (Bearer), or ""
	Method  string // MethodBearer, MethodBasic or MethodDigest
	// Role is the user's (RoleCustomer or RoleOperator) for Basic, which
	// the portal's sign-in uses; "" otherwise (an API key has no role,
	// and the API does not look at it).
	Role string
}

// Config tunes an Authenticator. The zero value means the defaults given
// for each field.
type Config struct {
	// Realm named in challenges; default the store's realm ("lodge").
	Realm string
	// CacheTTL is how long a successful Basic verification is remembered;
	// default 5 minutes, negative: no cache.
	CacheTTL time.Duration
	// CacheEntries bounds the cache; default 10,000, the oldest entry goes
	// first.
	CacheEntries int
	// MaxFailures failed credential checks within FailureWindow from one
	// client for one user name or API key id throttle that user or key
	// from that client; default 10, negative: no throttling.
	MaxFailures   int
	FailureWindow time.Duration // default 1 minute
	// MaxClientFailures failures within FailureWindow from one client,
	// whatever the names, throttle the client; default 10 times
	// MaxFailures. It is counted in FailureWindow/16 steps.
	MaxClientFailures int
	// MaxClients bounds the clients whose failures are remembered, and
	// separately the (client, user or key) pairs; default 100,000, the
	// one that failed least recently is forgotten first.
	MaxClients int
	// MaxConcurrentHashes bounds the password verifications running at a
	// time (each takes 19 MiB); default GOMAXPROCS.
	MaxConcurrentHashes int
	// Now is the clock; default time.Now.
	Now func() time.Time

	// Digest makes AuthenticateRequest accept HTTP Digest (RFC 7616) and
	// DigestChallenges offer it; default false. Authenticate never
	// accepts Digest.
	Digest bool
	// NonceTTL is how long a Digest nonce is accepted after it was
	// issued; default 5 minutes.
	NonceTTL time.Duration
	// MaxNonces bounds the Digest nonces whose nonce counts are
	// remembered; default 100,000, the one first used longest ago is
	// forgotten first (and refused as stale from then on).
	MaxNonces int
}

func (c Config) withDefaults(s *Store) Config {
	if c.Realm == "" {
		c.Realm = s.Realm()
	}
	if c.CacheTTL == 0 {
		c.CacheTTL = 5 * time.Minute
	}
	if c.CacheEntries <= 0 {
		c.CacheEntries = 10_000
	}
	if c.MaxFailures == 0 {
		c.MaxFailures = 10
	}
	if c.FailureWindow <= 0 {
		c.FailureWindow = time.Minute
	}
	if c.MaxClientFailures <= 0 && c.MaxFailures > 0 {
		c.MaxClientFailures = 10 * c.MaxFailures
	}
	if c.MaxClients <= 0 {
		c.MaxClients = 100_000
	}
	if c.MaxConcurrentHashes <= 0 {
		c.MaxConcurrentHashes = runtime.GOMAXPROCS(0)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.NonceTTL <= 0 {
		c.NonceTTL = 5 * time.Minute
	}
	if c.MaxNonces <= 0 {
		c.MaxNonces = 100_000
	}
	return c
}

// maxAuthorizationBytes bounds the header value: a Bearer key is 57 bytes,
// Basic credentials of a 64-byte name and a 1024-byte password under 1.5
// KiB. Anything longer is refused before it is decoded.
const maxAuthorizationBytes = 4096

// Authenticator checks Authorization header values against a Store. It is
// safe for concurrent use.
type Authenticator struct {
	s         *Store
	cfg       Config
	challenge []string
	cache     *basicCache // nil when disabled
	thr       *throttle   // per (client, user or key); nil when disabled
	clientThr *throttle   // per client; nil when disabled
	sem       chan struct{}
	hmacPool  sync.Pool
	dummyKey  [32]byte

	flightMu sync.Mutex
	flight   map[[32]byte]*flightCall

	digest digestState // see digest.go

	checks atomic.Uint64 // see Checks

	// Test hooks: every password, key and Digest response check goes
	// through these.
	verifyPW    func(phc string, password []byte) bool
	checkKey    func(want, token []byte) bool
	checkDigest func(ha1 []byte, d *digestCreds, method []byte) bool
}

// NewAuthenticator returns an Authenticator over s. It makes the dummy hash
// unknown users are verified against, which takes one password hash.
func NewAuthenticator(s *Store, cfg Config) *Authenticator {
	cfg = cfg.withDefaults(s)
	a := &Authenticator{
		s:        s,
		cfg:      cfg,
		sem:      make(chan struct{}, cfg.MaxConcurrentHashes),
		flight:   map[[32]byte]*flightCall{},
		verifyPW: verifyPassword,
		checkKey: checkKeyHash,
	}
	realm := quote(cfg.Realm)
	a.challenge = []string{"Bearer realm=" + realm, "Basic realm=" + realm + `, charset="UTF-8"`}
	if cfg.CacheTTL > 0 {
		a.cache = newBasicCache(cfg.CacheEntries)
	}
	if cfg.MaxFailures > 0 {
		a.thr = newThrottle(cfg.MaxFailures, cfg.FailureWindow, 0, cfg.MaxClients)
		a.clientThr = newThrottle(cfg.MaxClientFailures, cfg.FailureWindow, cfg.FailureWindow/16, cfg.MaxClients)
	}
	key := make([]byte, 32)
	rand.Read(key)
	a.hmacPool.New = func() any { return hmac.New(sha256.New, key) }
	rand.Read(a.dummyKey[:])
	a.initDigest()
	s.dummyHash()
	return a
}

// ChallengeHeaders returns the WWW-Authenticate values of a 401 response,
// one header each: Bearer realm="lodge" and Basic realm="lodge",
// charset="UTF-8".
func (a *Authenticator) ChallengeHeaders() []string {
	return append([]string(nil), a.challenge...)
}

// Challenge returns the challenges as one WWW-Authenticate value.
func (a *Authenticator) Challenge() string { return strings.Join(a.challenge, ", ") }

func quote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(s) + `"`
}

// Authenticate checks the value of an Authorization header from client (an
// IP address, see ClientAddr; the key failures are counted under). It
// returns ErrMissing for no credentials, ErrMalformed for a header that is
// not exactly one Bearer or Basic credential, ErrUnsupported for Digest,
// ErrInvalid for credentials that do not authenticate, a *ThrottledError
// when the client failed too often, or the client failed too often for the
// presented user or key, or an error of the store. AuthenticateRequest
// also takes Digest.
func (a *Authenticator) Authenticate(authorization []byte, client string) (Principal, error) {
	return a.authenticate(authorization, nil, nil, false, client)
}

// Checks is the number of Authorization headers checked (verified, or
// refused before it) since a was made: those of Authenticate and
// AuthenticateRequest, and those of AuthenticateConn that were not its
// connection's remembered header.
func (a *Authenticator) Checks() uint64 { return a.checks.Load() }

func (a *Authenticator) authenticate(authorization, method, uri []byte, digest bool, client string) (Principal, error) {
	a.checks.Add(1)
	if a.thr == nil {
		return a.check(authorization, method, uri, digest, nil)
	}
	ck := clientKey(client)
	if d := a.clientThr.blocked(ck, a.cfg.Now()); d > 0 {
		return Principal{}, &ThrottledError{RetryAfter: d}
	}
	var pair string // what failures of the presented identity count under
	gate := func(identity string) error {
		pair = ck + " " + identity
		if d := a.thr.blocked(pair, a.cfg.Now()); d > 0 {
			return &ThrottledError{RetryAfter: d}
		}
		return nil
	}
	p, err := a.check(authorization, method, uri, digest, gate)
	if errors.Is(err, ErrInvalid) {
		now := a.cfg.Now()
		a.clientThr.fail(ck, now)
		if pair != "" {
			a.thr.fail(pair, now)
		}
	}
	return p, err
}

// Identities failures are counted under, with the client: a user name
// (Basic and Digest alike) or an API key id. Names that cannot exist
// share one identity per kind, which bounds what a guesser makes the
// throttle remember.
const (
	identityUser    = "u:"
	identityBadUser = "u?"
	identityKey     = "k:"
	identityBadKey  = "k?"
)

func userIdentity(name string) string {
	if !ValidUserName(name) {
		return identityBadUser
	}
	return identityUser + name
}

// check checks one header value; digest says whether Digest credentials
// for a request with method and uri are accepted. gate, when not nil, is
// called with the presented identity once the credentials are parsed and
// before anything is looked up or verified; an error of it is returned
// instead.
func (a *Authenticator) check(h, method, uri []byte, digest bool, gate func(identity string) error) (Principal, error) {
	h = bytes.Trim(h, " \t")
	if len(h) == 0 {
		return Principal{}, ErrMissing
	}
	limit := maxAuthorizationBytes
	if digest {
		limit = maxDigestBytes
	}
	if len(h) > limit {
		return Principal{}, ErrMalformed
	}
	scheme, cred := h, []byte(nil)
	if i := bytes.IndexAny(h, " \t"); i >= 0 {
		scheme, cred = h[:i], bytes.TrimLeft(h[i:], " \t")
	}
	switch {
	case bytes.EqualFold(scheme, []byte("Digest")):
		if !digest {
			return Principal{}, ErrUnsupported
		}
		return a.digestAuth(cred, method, uri, gate)
	case len(h) > maxAuthorizationBytes:
		return Principal{}, ErrMalformed
	case !isToken68(cred):
		return Principal{}, ErrMalformed
	case bytes.EqualFold(scheme, []byte("Bearer")):
		return a.bearer(cred, gate)
	case bytes.EqualFold(scheme, []byte("Basic")):
		return a.basic(cred, gate)
	}
	return Principal{}, ErrMalformed
}

// isToken68 says whether b is one token68 (RFC 9110 section 11.2): one
// credential, no spaces or commas.
func isToken68(b []byte) bool {
	n := len(b)
	for n > 0 && b[n-1] == '=' {
		n--
	}
	if n == 0 {
		return false
	}
	for _, c := range b[:n] {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9',
			c == '-', c == '.', c == '_', c == '~', c == '+', c == '/':
		default:
			return false
		}
	}
	return true
}

// checkKeyHash compares the SHA-256 of token with want in constant time.
func checkKeyHash(want, token []byte) bool {
	sum := keyHash(token)
	return subtle.ConstantTimeCompare(sum[:], want) == 1
}

func (a *Authenticator) bearer(tok []byte, gate func(string) error) (Principal, error) {
	id, shaped := parseKeyToken(tok)
	if gate != nil {
		identity := identityBadKey
		if shaped {
			identity = identityKey + id
		}
		if err := gate(identity); err != nil {
			return Principal{}, err
		}
	}
	var rec keyRecord
	var found bool
	if shaped {
		var err error
		if rec, found, err = a.s.keyRecord(id); err != nil {
			return Principal{}, err
		}
	}
	want := a.dummyKey[:] // an unknown or misshapen key costs the same hash and compare
	if found {
		want = rec.SHA256
	}
	if !a.checkKey(want, tok) || !found || rec.IsRevoked() {
		return Principal{}, ErrInvalid
	}
	if active, err := a.s.accountActive(rec.Account); err != nil {
		return Principal{}, err
	} else if !active {
		return Principal{}, ErrInvalid
	}
	return Principal{Account: rec.Account, KeyID: rec.ID, Method: MethodBearer}, nil
}

func (a *Authenticator) basic(cred []byte, gate func(string) error) (Principal, error) {
	enc := base64.StdEncoding
	if len(cred)%4 != 0 {
		enc = base64.RawStdEncoding // some clients leave the padding off
	}
	buf := make([]byte, enc.DecodedLen(len(cred)))
	n, err := enc.Decode(buf, cred)
	if err != nil {
		return Principal{}, ErrMalformed
	}
	user, pass, ok := bytes.Cut(buf[:n], []byte{':'})
	if !ok {
		return Principal{}, ErrMalformed
	}
	if gate != nil {
		if err := gate(userIdentity(string(user))); err != nil {
			return Principal{}, err
		}
	}
	ck := a.cacheKey(user, pass)
	if a.cache != nil {
		if p, ok, err := a.cached(ck); ok || err != nil {
			return p, err
		}
	}
	return a.shared(ck, func() (Principal, error) { return a.verifyBasic(ck, string(user), pass) })
}

func (a *Authenticator) cacheKey(user, pass []byte) [32]byte {
	h := a.hmacPool.Get().(hash.Hash)
	h.Reset()
	h.Write(user)
	h.Write([]byte{0})
	h.Write(pass)
	var k [32]byte
	h.Sum(k[:0])
	a.hmacPool.Put(h)
	return k
}

// cached answers from the cache when it holds ck and the user record has
// not changed since.
func (a *Authenticator) cached(ck [32]byte) (Principal, bool, error) {
	e, ok := a.cache.get(ck, a.cfg.Now())
	if !ok {
		return Principal{}, false, nil
	}
	rec, found, err := a.s.userRecord(e.user)
	if err != nil {
		return Principal{}, false, err
	}
	if found && rec.Gen == e.gen && !rec.Disabled && rec.Account == e.account {
		active, err := a.s.accountActive(rec.Account)
		if err != nil {
			return Principal{}, false, err
		}
		if active {
			return Principal{Account: rec.Account, User: rec.Name, Method: MethodBasic, Role: rec.User.withRole().Role}, true, nil
		}
	}
	a.cache.remove(ck)
	return Principal{}, false, nil
}

// verifyBasic does the full check of a user and password. An unknown user
// costs the same verification as a known one (against the dummy hash); a
// disabled user the same as an enabled one.
func (a *Authenticator) verifyBasic(ck [32]byte, user string, pass []byte) (Principal, error) {
	var rec userRecord
	var found bool
	if ValidUserName(user) {
		var err error
		if rec, found, err = a.s.userRecord(user); err != nil {
			return Principal{}, err
		}
	}
	phc := a.s.dummyHash()
	if found {
		phc = rec.Hash
	}
	if !a.verify(phc, pass) || !found || rec.Disabled {
		return Principal{}, ErrInvalid
	}
	if active, err := a.s.accountActive(rec.Account); err != nil {
		return Principal{}, err
	} else if !active {
		return Principal{}, ErrInvalid
	}
	if a.cache != nil {
		a.cache.put(ck, cacheEntry{user: rec.Name, account: rec.Account, gen: rec.Gen, expires: a.cfg.Now().Add(a.cfg.CacheTTL)})
	}
	return Principal{Account: rec.Account, User: rec.Name, Method: MethodBasic, Role: rec.User.withRole().Role}, nil
}

// verify runs one password verification, at most MaxConcurrentHashes at a
// time.
func (a *Authenticator) verify(phc string, pass []byte) bool {
	a.sem <- struct{}{}
	defer func() { <-a.sem }()
	return a.verifyPW(phc, pass)
}

// flightCall is a verification in progress that requests with the same
// credentials wait for instead of starting their own.
type flightCall struct {
	done chan struct{}
	p    Principal
	err  error
}

func (a *Authenticator) shared(ck [32]byte, fn func() (Principal, error)) (Principal, error) {
	a.flightMu.Lock()
	if c, ok := a.flight[ck]; ok {
		a.flightMu.Unlock()
		<-c.done
		return c.p, c.err
	}
	c := &flightCall{done: make(chan struct{}), err: ErrInvalid} // stays so if fn panics
	a.flight[ck] = c
	a.flightMu.Unlock()
	defer func() {
		a.flightMu.Lock()
		delete(a.flight, ck)
		a.flightMu.Unlock()
		close(c.done)
	}()
	c.p, c.err = fn()
	return c.p, c.err
}
