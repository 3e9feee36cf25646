package portal

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
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
	seen     time.Time
	// flash is a message shown once, on the next page (after a redirect
	// that follows an action).
	flash string
}

// sessions are kept in memory, keyed by the SHA-256 of their ids (a
// timing difference of the map lookup tells nothing of a live id).
type sessions struct {
	mu     sync.Mutex
	m      map[[32]byte]*session
	idle   time.Duration
	maxAge time.Duration
	max    int
	now    func() time.Time
	swept  time.Time // when expired sessions were last dropped
}

func newSessions(idle, maxAge time.Duration, max int, now func() time.Time) *sessions {
	return &sessions{m: map[[32]byte]*session{}, idle: idle, maxAge: maxAge, max: max, now: now}
}

func randomToken() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on the systems lodge runs on
	}
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func (s *sessions) expired(se *session, now time.Time) bool {
	return now.Sub(se.seen) > s.idle || now.Sub(se.created) > s.maxAge
}

// create starts a session and returns its id (for the cookie).
func (s *sessions) create(account, user string, operator bool) (string, *session) {
	id := randomToken()
	now := s.now()
	se := &session{Account: account, User: user, Operator: operator, CSRF: randomToken(), created: now, seen: now}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.m) >= s.max {
		s.sweepLocked(now)
	}
	if len(s.m) >= s.max {
		// still full of live sessions: the one idle longest goes (its
		// user signs in again), so that a flood of sign-in pages cannot
		// make memory grow without bound
		var oldest [32]byte
		var at time.Time
		for k, v := range s.m {
			if at.IsZero() || v.seen.Before(at) {
				oldest, at = k, v.seen
			}
		}
		delete(s.m, oldest)
	}
	s.m[sha256.Sum256([]byte(id))] = se
	return id, se
}

// get returns the live session of an id and marks it seen, or nil.
// The session returned is a copy: its fields are read without the lock.
func (s *sessions) get(id string) (session, bool) {
	if id == "" {
		return session{}, false
	}
	k := sha256.Sum256([]byte(id))
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	se, ok := s.m[k]
	if !ok {
		return session{}, false
	}
	if s.expired(se, now) {
		delete(s.m, k)
		return session{}, false
	}
	se.seen = now
	return *se, true
}

// takeFlash returns and clears the session's message.
func (s *sessions) takeFlash(id string) string {
	k := sha256.Sum256([]byte(id))
	s.mu.Lock()
	defer s.mu.Unlock()
	if se, ok := s.m[k]; ok {
		f := se.flash
		se.flash = ""
		return f
	}
	return ""
}

func (s *sessions) setFlash(id, msg string) {
	k := sha256.Sum256([]byte(id))
	s.mu.Lock()
	defer s.mu.Unlock()
	if se, ok := s.m[k]; ok {
		se.flash = msg
	}
}

// end forgets a session.
func (s *sessions) end(id string) {
	k := sha256.Sum256([]byte(id))
	s.mu.Lock()
	delete(s.m, k)
	s.mu.Unlock()
}

func (s *sessions) sweepLocked(now time.Time) {
	for k, v := range s.m {
		if s.expired(v, now) {
			delete(s.m, k)
		}
	}
}

// sweepIfDue drops expired sessions, at most once a minute (every
// request calls it), so that memory holds no session long after its
// expiry.
func (s *sessions) sweepIfDue() {
	now := s.now()
	s.mu.Lock()
	if now.Sub(s.swept) > time.Minute {
		s.swept = now
		s.sweepLocked(now)
	}
	s.mu.Unlock()
}

func (s *sessions) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

// csrfOK compares a form's token with the session's in constant time.
func csrfOK(se session, token []byte) bool {
	return len(token) > 0 && subtle.ConstantTimeCompare([]byte(se.CSRF), token) == 1
}
