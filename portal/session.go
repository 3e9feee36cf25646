package portal

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"log/slog"
	"sync"
	"time"
)

// session is one browser's session. Account is "" until its user signs
// in: the sign-in form is protected by a CSRF token too, so a page of
// another site cannot sign a victim in under the attacker's account.
type session struct {
	Account string
	User    string
	// Operator: the user had the operator role when signing in (the
	// operator view's pages; see operator.go). A role changed later
	// applies from the next sign-in.
	Operator bool
	CSRF     string
	created  time.Time
	seen     time.Time // last used, as far as the store has it (see SessionStore)
	// flash is a message shown once, on the next page (after a redirect
	// that follows an action).
	flash string
}

// sessionKey is what a session is stored under: the SHA-256 of its id, so
// that neither a timing difference of the lookup nor a copy of the store
// tells a live id.
type sessionKey = [32]byte

// sessionLimits are Config's: a session ends after idle unused or maxAge
// in all; past max sessions the one idle longest ends.
type sessionLimits struct {
	idle, maxAge time.Duration
	max          int
}

func (l sessionLimits) expired(se *session, now time.Time) bool {
	return now.Sub(se.seen) > l.idle || now.Sub(se.created) > l.maxAge
}

// SessionStore keeps the portal's sessions (Config.Sessions): in memory
// by default, one node's; NewPostgresSessions shares them among every
// node on one PostgreSQL database, so that a session signed in on one
// node is accepted on every other and signing out on one ends it on all.
// The portal applies the limits (Config.IdleTimeout, MaxAge,
// MaxSessions) the same way over either.
type SessionStore interface {
	// get returns the session stored under k, expired or not.
	get(k sessionKey) (session, bool, error)
	// create stores a new session; an in-memory store makes room for
	// it within l.max at once, a shared one at its next sweep.
	create(k sessionKey, se session, l sessionLimits, now time.Time) error
	// touch records that the session was used at.
	touch(k sessionKey, at time.Time) error
	setFlash(k sessionKey, msg string) error
	// takeFlash returns the session's message and clears it.
	takeFlash(k sessionKey) (string, error)
	end(k sessionKey) error
	// sweep drops the expired sessions, and the ones idle longest past
	// l.max.
	sweep(l sessionLimits, now time.Time) error
	count() (int, error)
	// touchEvery is how long a session's last use may go unrecorded:
	// 0 records every use; a shared store records at most one in this
	// long, not a write per request.
	touchEvery() time.Duration
}

// sessions applies the limits over a SessionStore. A store's error in
// reading or starting a session is logged and returned: the page answers
// 503 (Handler.sessionsUnavailable), never as if the browser had signed
// out, and nothing is done for it. Errors of the bookkeeping that
// follows (marking a session seen, its one-time message, ending one) are
// logged only: the request goes on.
type sessions struct {
	st  SessionStore
	l   sessionLimits
	now func() time.Time
	log *slog.Logger

	mu    sync.Mutex
	swept time.Time // when expired sessions were last dropped
	// flashes are the sessions whose last get saw a message: takeFlash
	// asks the store only for them, so that a request costs one read of
	// the store, not two.
	flashes map[sessionKey]struct{}
}

func newSessions(st SessionStore, idle, maxAge time.Duration, max int, now func() time.Time, log *slog.Logger) *sessions {
	if st == nil {
		st = newMemSessions()
	}
	return &sessions{st: st, l: sessionLimits{idle: idle, maxAge: maxAge, max: max}, now: now, log: log, flashes: map[sessionKey]struct{}{}}
}

func randomToken() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on the systems lodge runs on
	}
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func (s *sessions) failed(what string, err error) {
	s.log.Error("portal: sessions: "+what, "err", err)
}

// create starts a session and returns its id (for the cookie); an error
// when the store could not keep it.
func (s *sessions) create(account, user string, operator bool) (string, *session, error) {
	id := randomToken()
	now := s.now()
	se := &session{Account: account, User: user, Operator: operator, CSRF: randomToken(), created: now, seen: now}
	if err := s.st.create(sha256.Sum256([]byte(id)), *se, s.l, now); err != nil {
		s.failed("create", err)
		return "", nil, err
	}
	return id, se, nil
}

// get returns the live session of an id and marks it seen; ok false
// when there is none; an error when the store could not be read.
// The session returned is a copy: its fields are read without the lock.
func (s *sessions) get(id string) (session, bool, error) {
	if id == "" {
		return session{}, false, nil
	}
	k := sha256.Sum256([]byte(id))
	now := s.now()
	se, ok, err := s.st.get(k)
	if err != nil {
		s.failed("get", err)
		return session{}, false, err
	}
	if !ok {
		return session{}, false, nil
	}
	if s.l.expired(&se, now) {
		if err := s.st.end(k); err != nil {
			s.failed("end", err)
		}
		return session{}, false, nil
	}
	if now.Sub(se.seen) >= s.st.touchEvery() {
		if err := s.st.touch(k, now); err != nil {
			s.failed("touch", err)
		}
	}
	se.seen = now
	if se.flash != "" {
		s.mu.Lock()
		if len(s.flashes) >= s.l.max {
			clear(s.flashes) // only left behind by requests refused before takeFlash
		}
		s.flashes[k] = struct{}{}
		s.mu.Unlock()
	}
	return se, true, nil
}

// takeFlash returns and clears the session's message.
func (s *sessions) takeFlash(id string) string {
	k := sha256.Sum256([]byte(id))
	s.mu.Lock()
	_, pending := s.flashes[k]
	delete(s.flashes, k)
	s.mu.Unlock()
	if !pending {
		return "" // a message set since the get is shown on the next page
	}
	f, err := s.st.takeFlash(k)
	if err != nil {
		s.failed("take message", err)
	}
	return f
}

func (s *sessions) setFlash(id, msg string) {
	if err := s.st.setFlash(sha256.Sum256([]byte(id)), msg); err != nil {
		s.failed("set message", err)
	}
}

// end forgets a session.
func (s *sessions) end(id string) {
	if err := s.st.end(sha256.Sum256([]byte(id))); err != nil {
		s.failed("end", err)
	}
}

// sweepIfDue drops expired sessions, at most once a minute (every
// request calls it), so that no session is kept long after its expiry.
func (s *sessions) sweepIfDue() {
	now := s.now()
	s.mu.Lock()
	due := now.Sub(s.swept) > time.Minute
	if due {
		s.swept = now
	}
	s.mu.Unlock()
	if due {
		if err := s.st.sweep(s.l, now); err != nil {
			s.failed("sweep", err)
		}
	}
}

func (s *sessions) len() int {
	n, err := s.st.count()
	if err != nil {
		s.failed("count", err)
	}
	return n
}

// csrfOK compares a form's token with the session's in constant time.
func csrfOK(se session, token []byte) bool {
	return len(token) > 0 && subtle.ConstantTimeCompare([]byte(se.CSRF), token) == 1
}

// memSessions keeps sessions in this process's memory: the default, for
// one node. A restart signs everyone out.
type memSessions struct {
	mu sync.Mutex
	m  map[sessionKey]*session
}

func newMemSessions() *memSessions { return &memSessions{m: map[sessionKey]*session{}} }

func (m *memSessions) touchEvery() time.Duration { return 0 }

func (m *memSessions) get(k sessionKey) (session, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	se, ok := m.m[k]
	if !ok {
		return session{}, false, nil
	}
	return *se, true, nil
}

func (m *memSessions) create(k sessionKey, se session, l sessionLimits, now time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.m) >= l.max {
		m.sweepLocked(l, now)
	}
	if len(m.m) >= l.max {
		// still full of live sessions: the one idle longest goes (its
		// user signs in again), so that a flood of sign-in pages cannot
		// make memory grow without bound
		var oldest sessionKey
		var at time.Time
		for k, v := range m.m {
			if at.IsZero() || v.seen.Before(at) {
				oldest, at = k, v.seen
			}
		}
		delete(m.m, oldest)
	}
	m.m[k] = &se
	return nil
}

func (m *memSessions) touch(k sessionKey, at time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if se, ok := m.m[k]; ok {
		se.seen = at
	}
	return nil
}

func (m *memSessions) takeFlash(k sessionKey) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if se, ok := m.m[k]; ok {
		f := se.flash
		se.flash = ""
		return f, nil
	}
	return "", nil
}

func (m *memSessions) setFlash(k sessionKey, msg string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if se, ok := m.m[k]; ok {
		se.flash = msg
	}
	return nil
}

func (m *memSessions) end(k sessionKey) error {
	m.mu.Lock()
	delete(m.m, k)
	m.mu.Unlock()
	return nil
}

func (m *memSessions) sweep(l sessionLimits, now time.Time) error {
	m.mu.Lock()
	m.sweepLocked(l, now)
	m.mu.Unlock()
	return nil
}

func (m *memSessions) sweepLocked(l sessionLimits, now time.Time) {
	for k, v := range m.m {
		if l.expired(v, now) {
			delete(m.m, k)
		}
	}
}

func (m *memSessions) count() (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.m), nil
}
