package auth

import (
	"crypto/subtle"
	"sync"
)

// ConnCache remembers the last Authorization header a connection
// authenticated with, what it authenticated as and the store's generation
// it was verified at, so that the connection's next requests with the same
// header skip the verification (the hashing and the record look-ups) until
// anything in the store changes. The zero value is empty and ready.
//
// A ConnCache belongs to one connection: it is never shared between
// connections (what one connection's client proved says nothing about
// another's) and is reset when its connection closes. It holds one header:
// a different header is verified afresh and, if it authenticates, takes
// its place; one that fails empties it.
//
// Only Bearer and Basic credentials are remembered. A Digest header is
// never the same twice in good faith: each request raises the nonce count
// and signs its own method and URI, so presenting the same header again is
// a replay, which must be refused as it is today (AuthenticateConn takes
// no Digest, as Authenticate does not). A Bearer key or a Basic password
// are sent unchanged with every request; what they authenticate as
// depends only on the store's records, which the generation covers.
type ConnCache struct {
	mu       sync.Mutex // requests of one connection come one at a time; this is for safety
	ok       bool
	header   []byte // exact bytes, the connection's own copy
	gen      uint64
	p        Principal
	identity string // what its failures count under (see Authenticate)
}

// Reset empties c and lets go of the header it held.
func (c *ConnCache) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ok, c.header, c.gen, c.p, c.identity = false, nil, 0, Principal{}, ""
}

// AuthenticateConn is Authenticate for a request on the connection c
// belongs to (nil: no cache, as Authenticate). client is called for the
// client's address only when it is needed: always when the header is not
// the one c holds, and for a remembered header only while some client or
// identity may be throttled (a throttled client is refused even with
// credentials it proved before, as Authenticate refuses it).
//
// A remembered header is honoured only while the store's generation is
// still the one it was verified at: every change to the store (a key
// revoked, a user or account disabled, a password or role changed) moves
// the generation before the method that made it returns, so the change
// applies to the very next request of every open connection.
func (a *Authenticator) AuthenticateConn(c *ConnCache, authorization []byte, client func() string) (Principal, error) {
	if c == nil {
		return a.Authenticate(authorization, client())
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ok && c.gen == a.s.generation() && subtle.ConstantTimeCompare(c.header, authorization) == 1 {
		if a.thr != nil && (a.clientThr.mayBlock(a.cfg.Now) || a.thr.mayBlock(a.cfg.Now)) {
			if err := a.gateVerified(client(), c.identity); err != nil {
				return Principal{}, err
			}
		}
		return c.p, nil
	}
	c.ok = false
	gen := a.s.generation() // before the verification: see Store.generation
	p, err := a.Authenticate(authorization, client())
	if err != nil {
		return p, err
	}
	switch p.Method {
	case MethodBearer:
		c.identity = identityKey + p.KeyID
	case MethodBasic:
		c.identity = userIdentity(p.User)
	default:
		return p, nil
	}
	c.header = append(c.header[:0], authorization...)
	c.gen, c.p, c.ok = gen, p, true
	return p, nil
}

// gateVerified refuses, as authenticate would before verifying them, the
// credentials of identity from client while the client or the pair is
// throttled.
func (a *Authenticator) gateVerified(client, identity string) error {
	now := a.cfg.Now()
	ck := clientKey(client)
	if d := a.clientThr.blocked(ck, now); d > 0 {
		return &ThrottledError{RetryAfter: d}
	}
	if d := a.thr.blocked(ck+" "+identity, now); d > 0 {
		return &ThrottledError{RetryAfter: d}
	}
	return nil
}
