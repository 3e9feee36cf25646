package auth

import (
	"bytes"
	"crypto/hmac"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ErrStaleNonce is AuthenticateRequest's error for Digest credentials that
// are right but whose nonce expired, or was forgotten (see
// Config.MaxNonces) or issued before this Authenticator was made (by the
// process before a restart): answer 401 with UploadChallengeHeaders(true),
// whose stale=true tells the client to retry with the new nonce without
// asking its user again. It is not counted as a failure by the throttle.
var ErrStaleNonce = errors.New("stale Digest nonce")

// Digest limits.
const (
	// maxDigestBytes bounds a Digest header value: it carries the
	// request-target (uri), which may be longer than a Bearer or Basic
	// credential.
	maxDigestBytes = 16 << 10
	// maxDigestElements bounds the auth-param list elements, empty ones
	// included; a Digest credential has about ten.
	maxDigestElements = 32
	// replayWindow is how far below the highest nonce count accepted for
	// a nonce a count not yet seen is still accepted (requests sent at
	// once may arrive out of order).
	replayWindow = 64
)

// Nonces are base64url (no padding) of 32 bytes: an 8-byte big-endian
// issue time (Unix nanoseconds of Config.Now), 8 random bytes, and the
// first 16 bytes of HMAC-SHA256 of those 16 bytes under the store's nonce
// key (auth/v1/nonce_key, made once). The key outlives the process, so a
// nonce issued before a restart is still recognised as ours: its client is
// told stale=true rather than counted as a failed login.
const (
	nonceIDLen  = 16
	nonceRawLen = nonceIDLen + 16
)

var nonceEnc = base64.RawURLEncoding.Strict()

// digestState is the Digest part of an Authenticator.
type digestState struct {
	macPool   sync.Pool // of HMAC-SHA256 under the nonce key
	opaque    string
	dummyMD5  []byte // hex HA1s unknown users are checked against
	dummySHA  []byte
	challenge [2]string // the SHA-256 and MD5 challenges up to the nonce
	nonces    *nonceTable
}

func (a *Authenticator) initDigest() {
	d := &a.digest
	key := a.s.nonceKey
	d.macPool.New = func() any { return hmac.New(sha256.New, key) }
	// opaque is derived from the key, so that it too survives a restart
	// (a client sends back the one it was given). Nonce ids are 16 bytes:
	// this longer input never signs one.
	op := hmac.New(sha256.New, key)
	op.Write([]byte("lodge digest opaque"))
	d.opaque = base64.RawURLEncoding.EncodeToString(op.Sum(nil)[:16])
	dm, ds := make([]byte, md5.Size), make([]byte, sha256.Size)
	rand.Read(dm)
	rand.Read(ds)
	d.dummyMD5, d.dummySHA = []byte(hex.EncodeToString(dm)), []byte(hex.EncodeToString(ds))
	// The HA1 values are made for the store's realm, so Digest names it
	// whatever Config.Realm says.
	realm := quote(a.s.Realm())
	for i, alg := range []string{DigestSHA256, DigestMD5} {
		d.challenge[i] = "Digest realm=" + realm + `, qop="auth", algorithm=` + alg + `, nonce="`
	}
	// A nonce issued before now (by an earlier process) is unknown to the
	// table but may have been used: it is stale, not new.
	d.nonces = newNonceTable(a.cfg.MaxNonces, a.cfg.NonceTTL, a.cfg.Now().UnixNano())
	a.checkDigest = checkDigestResponse
}

// AuthenticateRequest is Authenticate for a request with method and uri
// (its request-target exactly as received: r.RequestURI in net/http,
// RequestURI() in fasthttp) that also takes Digest credentials when
// Config.Digest is set; otherwise it answers Digest with ErrUnsupported as
// Authenticate does. On top of Authenticate's errors it returns
// ErrStaleNonce; answer a 401 with UploadChallengeHeaders(errors.Is(err,
// ErrStaleNonce)).
func (a *Authenticator) AuthenticateRequest(authorization, method, uri []byte, client string) (Principal, error) {
	return a.authenticate(authorization, method, uri, a.cfg.Digest, client)
}

// DigestChallenges returns the WWW-Authenticate values offering Digest,
// one header each, SHA-256 first, then MD5 for clients without it:
//
//	Digest realm="lodge", qop="auth", algorithm=SHA-256, nonce="...", opaque="...", charset=UTF-8
//
// with ", stale=true" appended when stale. Each call issues a fresh nonce
// per challenge (either nonce works with either algorithm); opaque is
// fixed for the store. It returns nil unless Config.Digest is set.
func (a *Authenticator) DigestChallenges(stale bool) []string {
	if !a.cfg.Digest {
		return nil
	}
	tail := `", opaque="` + a.digest.opaque + `", charset=UTF-8`
	if stale {
		tail += ", stale=true"
	}
	out := make([]string, len(a.digest.challenge))
	for i, c := range a.digest.challenge {
		out[i] = c + a.newNonce() + tail
	}
	return out
}

// UploadChallengeHeaders returns the WWW-Authenticate values of a 401 from
// an endpoint that takes every method: DigestChallenges(stale), then
// ChallengeHeaders (Bearer, Basic).
func (a *Authenticator) UploadChallengeHeaders(stale bool) []string {
	return append(a.DigestChallenges(stale), a.challenge...)
}

// ---- nonces

func (a *Authenticator) nonceMAC(id []byte, out []byte) []byte {
	h := a.digest.macPool.Get().(hash.Hash)
	h.Reset()
	h.Write(id)
	out = h.Sum(out)
	a.digest.macPool.Put(h)
	return out
}

// newNonce issues a nonce stamped with the current time.
func (a *Authenticator) newNonce() string {
	var raw [nonceRawLen + sha256.Size - 16]byte // room for the whole MAC
	binary.BigEndian.PutUint64(raw[:8], uint64(a.cfg.Now().UnixNano()))
	rand.Read(raw[8:nonceIDLen])
	a.nonceMAC(raw[:nonceIDLen], raw[nonceIDLen:nonceIDLen])
	return nonceEnc.EncodeToString(raw[:nonceRawLen])
}

// openNonce checks that nonce is one of ours and returns its id (time and
// random part) and issue time.
func (a *Authenticator) openNonce(nonce string) (id [nonceIDLen]byte, issued int64, ok bool) {
	if len(nonce) != nonceEnc.EncodedLen(nonceRawLen) {
		return id, 0, false
	}
	var raw [nonceRawLen]byte
	if n, err := nonceEnc.Decode(raw[:], []byte(nonce)); err != nil || n != nonceRawLen {
		return id, 0, false
	}
	var mac [sha256.Size]byte
	if !hmac.Equal(a.nonceMAC(raw[:nonceIDLen], mac[:0])[:16], raw[nonceIDLen:]) {
		return id, 0, false
	}
	copy(id[:], raw[:nonceIDLen])
	return id, int64(binary.BigEndian.Uint64(raw[:8])), true
}

// nonceTable remembers, per nonce used, the nonce counts accepted: the
// highest and a bitmap of the replayWindow below it. It holds at most max
// nonces, forgetting the one first used longest ago (or any expired one at
// the front); floor is the latest issue time of a forgotten nonce, or
// just before the table was made: a nonce issued then or earlier that is
// not in the table may have been used, so it is refused as stale.
type nonceTable struct {
	mu    sync.Mutex
	max   int
	ttl   int64 // nanoseconds
	m     map[[nonceIDLen]byte]nonceState
	order [][nonceIDLen]byte // first use order; order[head:] are in m
	head  int
	floor int64
}

type nonceState struct {
	issued int64
	high   uint32 // highest count accepted
	seen   uint64 // bit i: high-i was accepted
}

// newNonceTable makes a table whose nonces are issued from start on.
func newNonceTable(max int, ttl time.Duration, start int64) *nonceTable {
	return &nonceTable{max: max, ttl: int64(ttl), m: map[[nonceIDLen]byte]nonceState{}, floor: start - 1}
}

// use records count nc of nonce id issued at issued; ErrInvalid if it was
// seen before or is too far behind, ErrStaleNonce if the nonce may have
// been forgotten.
func (t *nonceTable) use(id [nonceIDLen]byte, issued int64, nc uint32, now int64) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	st, ok := t.m[id]
	if !ok {
		for t.head < len(t.order) && now-t.m[t.order[t.head]].issued >= t.ttl {
			t.dropOldest() // expired: refused by their age anyway
		}
		if issued <= t.floor {
			return ErrStaleNonce // before evicting: a refusal must not forget a live nonce
		}
		for len(t.m) >= t.max {
			t.dropOldest()
		}
		st = nonceState{issued: issued}
		t.order = append(t.order, id)
	}
	switch {
	case nc > st.high:
		if d := nc - st.high; d < 64 {
			st.seen = st.seen<<d | 1
		} else {
			st.seen = 1
		}
		st.high = nc
	case st.high-nc >= replayWindow || st.seen&(1<<(st.high-nc)) != 0:
		return ErrInvalid // a replay (a new entry never gets here: nc >= 1)
	default:
		st.seen |= 1 << (st.high - nc)
	}
	t.m[id] = st
	return nil
}

func (t *nonceTable) dropOldest() {
	id := t.order[t.head]
	t.head++
	t.floor = max(t.floor, t.m[id].issued)
	delete(t.m, id)
	if t.head >= 1024 && t.head*2 >= len(t.order) {
		n := copy(t.order, t.order[t.head:])
		t.order = t.order[:n]
		t.head = 0
	}
}

func (t *nonceTable) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m)
}

// ---- credentials

// digestCreds are the parameters of a Digest Authorization header. The
// fields that enter the response hash keep the client's spelling.
type digestCreds struct {
	username, realm, nonce, uri, cnonce, qop, nc string
	opaque                                       string
	hasOpaque                                    bool
	algorithm                                    string // DigestMD5 or DigestSHA256
	response                                     []byte // lower-case hex of the algorithm's size
	count                                        uint32 // nc, at least 1
}

// parseDigest reads the auth-param list of Digest credentials. Any
// syntax error, a duplicate or missing parameter and anything this server
// does not offer (another algorithm or qop, userhash=true, username*) is
// ErrMalformed.
func parseDigest(b []byte) (digestCreds, error) {
	var d digestCreds
	p, err := parseAuthParams(b)
	if err != nil {
		return d, err
	}
	for _, k := range []string{"username", "realm", "nonce", "uri", "response", "qop", "nc", "cnonce"} {
		if _, ok := p[k]; !ok {
			return d, ErrMalformed
		}
	}
	if _, ok := p["username*"]; ok {
		return d, ErrMalformed // user names are ASCII: username* is not needed
	}
	if uh, ok := p["userhash"]; ok && !strings.EqualFold(uh, "false") {
		return d, ErrMalformed // not offered
	}
	d.username, d.realm, d.nonce, d.uri = p["username"], p["realm"], p["nonce"], p["uri"]
	d.cnonce, d.qop, d.nc = p["cnonce"], p["qop"], p["nc"]
	d.opaque, d.hasOpaque = p["opaque"]
	switch alg, ok := p["algorithm"]; {
	case !ok || strings.EqualFold(alg, DigestMD5):
		d.algorithm = DigestMD5
	case strings.EqualFold(alg, DigestSHA256):
		d.algorithm = DigestSHA256
	default:
		return d, ErrMalformed
	}
	if !strings.EqualFold(d.qop, "auth") || d.cnonce == "" || d.uri == "" {
		return d, ErrMalformed
	}
	if len(d.nc) != 8 {
		return d, ErrMalformed
	}
	n, err := strconv.ParseUint(d.nc, 16, 32)
	if err != nil || n == 0 {
		return d, ErrMalformed
	}
	d.count = uint32(n)
	size := md5.Size
	if d.algorithm == DigestSHA256 {
		size = sha256.Size
	}
	d.response = []byte(strings.ToLower(p["response"]))
	if len(d.response) != 2*size {
		return d, ErrMalformed
	}
	if _, err := hex.Decode(make([]byte, size), d.response); err != nil {
		return d, ErrMalformed
	}
	return d, nil
}

// digestAuth checks Digest credentials for a request with method and uri.
func (a *Authenticator) digestAuth(cred, method, uri []byte, gate func(string) error) (Principal, error) {
	d, err := parseDigest(cred)
	if err != nil {
		return Principal{}, err
	}
	if gate != nil {
		if err := gate(userIdentity(d.username)); err != nil {
			return Principal{}, err
		}
	}
	// What the request says about itself, checked before the user is
	// looked up; none of it is secret.
	if d.realm != a.s.Realm() || d.hasOpaque && d.opaque != a.digest.opaque || !uriMatches(d.uri, uri) {
		return Principal{}, ErrInvalid
	}
	id, issued, ok := a.openNonce(d.nonce)
	if !ok {
		return Principal{}, ErrInvalid
	}
	// An unknown, disabled or misrealmed user costs the same check as a
	// known one.
	ha1, account, usable, err := a.digestUser(d.username, d.algorithm)
	if err != nil {
		return Principal{}, err
	}
	if ha1 == nil {
		ha1 = a.digest.dummyMD5
		if d.algorithm == DigestSHA256 {
			ha1 = a.digest.dummySHA
		}
	}
	if !a.checkDigest(ha1, &d, method) || !usable {
		return Principal{}, ErrInvalid
	}
	if active, err := a.s.accountActive(account); err != nil {
		return Principal{}, err
	} else if !active {
		return Principal{}, ErrInvalid
	}
	// The client knows the password: an old nonce is only stale.
	now := a.cfg.Now().UnixNano()
	if now-issued >= int64(a.cfg.NonceTTL) {
		return Principal{}, ErrStaleNonce
	}
	if err := a.digest.nonces.use(id, issued, d.count, now); err != nil {
		return Principal{}, err
	}
	return Principal{Account: account, User: d.username, Method: MethodDigest}, nil
}

// digestUser returns the user's HA1 for alg (nil when there is none) and
// account, and whether the user may authenticate.
func (a *Authenticator) digestUser(user, alg string) (ha1 []byte, account string, usable bool, err error) {
	if !ValidUserName(user) {
		return nil, "", false, nil
	}
	rec, found, err := a.s.userRecord(user)
	if err != nil || !found || rec.Realm != a.s.Realm() {
		return nil, "", false, err
	}
	v := rec.HA1SHA256
	if alg == DigestMD5 {
		v = rec.HA1MD5
	}
	if v == "" {
		return nil, "", false, nil
	}
	return []byte(v), rec.Account, !rec.Disabled, nil
}

// uriMatches says whether the uri parameter names the request-target:
// equal to it, or, for an absolute-form target (a request through a
// proxy), to its path and query.
func uriMatches(param string, target []byte) bool {
	t := string(target)
	if param == t {
		return true
	}
	i := strings.Index(t, "://")
	if i <= 0 || !isScheme(t[:i]) {
		return false
	}
	rest := t[i+3:]
	j := strings.IndexAny(rest, "/?")
	pq := ""
	if j >= 0 {
		pq = rest[j:]
	}
	if pq == "" || pq[0] == '?' {
		pq = "/" + pq
	}
	return param == pq
}

func isScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return s != ""
}

// checkDigestResponse compares the response the client sent with the one
// computed from ha1, in constant time.
func checkDigestResponse(ha1 []byte, d *digestCreds, method []byte) bool {
	want := digestResponse(d.algorithm, ha1, d.nonce, d.nc, d.cnonce, d.qop, method, d.uri)
	return subtle.ConstantTimeCompare(want, d.response) == 1
}

// digestResponse computes the RFC 7616 response for qop=auth:
// H(HA1:nonce:nc:cnonce:qop:H(method:uri)), lower-case hex, H being MD5
// or SHA-256 by alg.
func digestResponse(alg string, ha1 []byte, nonce, nc, cnonce, qop string, method []byte, uri string) []byte {
	var h hash.Hash
	if alg == DigestSHA256 {
		h = sha256.New()
	} else {
		h = md5.New()
	}
	var sum [sha256.Size]byte
	hexOf := func() []byte {
		s := h.Sum(sum[:0])
		out := make([]byte, hex.EncodedLen(len(s)))
		hex.Encode(out, s)
		return out
	}
	h.Write(method)
	h.Write([]byte{':'})
	h.Write([]byte(uri))
	ha2 := hexOf()
	h.Reset()
	for i, part := range [][]byte{ha1, []byte(nonce), []byte(nc), []byte(cnonce), []byte(qop), ha2} {
		if i > 0 {
			h.Write([]byte{':'})
		}
		h.Write(part)
	}
	return hexOf()
}

// ---- auth-param lists

// parseAuthParams parses a list of auth-params (RFC 9110 section 11.2):
// name = token / quoted-string, separated by commas with optional
// whitespace, empty elements allowed. Names are lower-cased; quoted
// values are unescaped. A syntax error, a control character outside a
// quoted-pair's allowance, a duplicate name or more than
// maxDigestElements elements is ErrMalformed.
func parseAuthParams(b []byte) (map[string]string, error) {
	params := make(map[string]string, 12)
	elems := 0
	i := 0
	for {
		i = skipOWS(b, i)
		if i == len(b) {
			break
		}
		if elems++; elems > maxDigestElements {
			return nil, ErrMalformed
		}
		if b[i] == ',' { // an empty element
			i++
			continue
		}
		j := scanToken(b, i)
		if j == i {
			return nil, ErrMalformed
		}
		name := strings.ToLower(string(b[i:j]))
		i = skipOWS(b, j)
		if i == len(b) || b[i] != '=' {
			return nil, ErrMalformed
		}
		i = skipOWS(b, i+1)
		var val string
		if i < len(b) && b[i] == '"' {
			v, n, ok := scanQuoted(b[i:])
			if !ok {
				return nil, ErrMalformed
			}
			val, i = v, i+n
		} else {
			j := scanToken(b, i)
			if j == i {
				return nil, ErrMalformed
			}
			val, i = string(b[i:j]), j
		}
		if _, dup := params[name]; dup {
			return nil, ErrMalformed
		}
		params[name] = val
		i = skipOWS(b, i)
		if i < len(b) {
			if b[i] != ',' {
				return nil, ErrMalformed
			}
			i++
		}
	}
	if len(params) == 0 {
		return nil, ErrMalformed
	}
	return params, nil
}

func skipOWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	return i
}

// scanToken returns the end of the token starting at i.
func scanToken(b []byte, i int) int {
	for i < len(b) && isTchar(b[i]) {
		i++
	}
	return i
}

func isTchar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// scanQuoted reads the quoted-string at the start of b and returns its
// unescaped value and length. Tabs, spaces, visible characters and
// obs-text (bytes 0x80 and up) are allowed, other control characters not.
func scanQuoted(b []byte) (string, int, bool) {
	var esc *bytes.Buffer
	start := 1
	for i := 1; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '"':
			if esc == nil {
				return string(b[start:i]), i + 1, true
			}
			esc.Write(b[start:i])
			return esc.String(), i + 1, true
		case c == '\\':
			if i+1 == len(b) || !qdAllowed(b[i+1]) {
				return "", 0, false
			}
			if esc == nil {
				esc = new(bytes.Buffer)
			}
			esc.Write(b[start:i])
			start = i + 1 // the escaped byte starts the next run
			i++
		case !qdAllowed(c):
			return "", 0, false
		}
	}
	return "", 0, false // unterminated
}

// qdAllowed: HTAB, SP, VCHAR, obs-text.
func qdAllowed(c byte) bool { return c == '\t' || c >= ' ' && c != 0x7f }
