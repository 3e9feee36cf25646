package portal

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/lodge-mail/lodge/internal/testpg"
	"github.com/lodge-mail/lodge/pgdb"
)

// sessionStores are the SessionStores the session tests run over: each
// makes a new, empty one (a second call of the same kind's node on the
// same place is another node).
var sessionStores = []struct {
	name string
	// place: where a new store is ("" for memory); node: a store there
	node  func(t *testing.T, place string) (SessionStore, *pgdb.DB)
	place func(t *testing.T) string
}{
	{"memory", func(*testing.T, string) (SessionStore, *pgdb.DB) { return newMemSessions(), nil }, func(*testing.T) string { return "" }},
	{"postgres", pgSessionNode, func(t *testing.T) string { return testpg.NewDatabase(t) }},
}

// pgSessionNode is a node's store on the database at url, with a pool of
// its own.
func pgSessionNode(t *testing.T, url string) (SessionStore, *pgdb.DB) {
	t.Helper()
	db, err := pgdb.Open(context.Background(), pgdb.Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return NewPostgresSessions(db, 0), db
}

type sessionClock struct{ t time.Time }

func (c *sessionClock) now() time.Time { return c.t }

func eachSessionStore(t *testing.T, fn func(t *testing.T, node func() (*sessions, *pgdb.DB), c *sessionClock)) {
	for _, st := range sessionStores {
		t.Run(st.name, func(t *testing.T) {
			c := &sessionClock{t: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)}
			place := st.place(t)
			var mem SessionStore // the memory store's nodes are one: it cannot be shared
			fn(t, func() (*sessions, *pgdb.DB) {
				ss, db := st.node(t, place)
				if place == "" {
					if mem == nil {
						mem = ss
					}
					ss = mem
				}
				return newSessions(ss, 30*time.Minute, 12*time.Hour, 3, c.now, slog.New(slog.DiscardHandler)), db
			}, c)
		})
	}
}

// TestSessionLimits: the limits of Config over each store: a session
// ends 30 minutes unused or 12 hours after it began, and on end; its
// message is shown once; past MaxSessions (3 here) the ones idle longest
// go (in memory at once, shared at the next sweep).
func TestSessionLimits(t *testing.T) {
	eachSessionStore(t, func(t *testing.T, node func() (*sessions, *pgdb.DB), c *sessionClock) {
		s, _ := node()
		live := func(id string, want bool) session {
			t.Helper()
			se, ok, _ := s.get(id)
			if ok != want {
				t.Fatalf("session %.8s: live %v, want %v", id, ok, want)
			}
			return se
		}
		if _, ok, _ := s.get(""); ok {
			t.Fatal("the empty id is a session")
		}
		live("no-such-session", false)

		id, se, _ := s.create("ABC00001", "jo", true)
		if got := live(id, true); got.Account != "ABC00001" || got.User != "jo" || !got.Operator || got.CSRF != se.CSRF || len(got.CSRF) != 43 {
			t.Fatalf("session read back %+v, made %+v", got, *se)
		}
		// used every 29 minutes, it lives until 12 hours
		for range 24 {
			c.t = c.t.Add(29 * time.Minute)
			live(id, true)
			s.sweepIfDue()
		}
		c.t = c.t.Add(29 * time.Minute)
		live(id, false)

		// 31 minutes unused: ended, by the read and by the sweep alike
		a, _, _ := s.create("ABC00001", "jo", false)
		b, _, _ := s.create("ABC00001", "jo", false)
		c.t = c.t.Add(31 * time.Minute)
		live(a, false)
		s.sweepIfDue()
		if n := s.len(); n != 0 {
			t.Fatalf("%d sessions after the sweep, want 0", n)
		}
		live(b, false)

		// a message, shown once
		id, _, _ = s.create("ABC00001", "jo", false)
		if f := s.takeFlash(id); f != "" {
			t.Fatalf("message %q before one was set", f)
		}
		s.setFlash(id, "Released 3 letters.")
		if f := s.takeFlash(id); f != "" {
			t.Fatalf("message %q taken without the page's read", f) // the portal reads the session first
		}
		live(id, true)
		if f := s.takeFlash(id); f != "Released 3 letters." {
			t.Fatalf("message %q", f)
		}
		live(id, true)
		if f := s.takeFlash(id); f != "" {
			t.Fatalf("message %q shown twice", f)
		}
		s.end(id)
		live(id, false)

		// MaxSessions: the ones idle longest go
		var ids []string
		for range 5 {
			c.t = c.t.Add(time.Second)
			id, _, _ := s.create("", "", false)
			ids = append(ids, id)
		}
		c.t = c.t.Add(2 * time.Minute)
		s.sweepIfDue()
		if n := s.len(); n != 3 {
			t.Fatalf("%d sessions, want MaxSessions (3)", n)
		}
		for i, id := range ids {
			live(id, i >= 2)
		}
	})
}

// TestSessionNodes: two nodes on one database share their sessions: one
// signed in on A is accepted on B with its CSRF token, its message set on
// B is shown on A, signing out on A ends it on B. (In memory there is
// one node, and the same holds of it.)
func TestSessionNodes(t *testing.T) {
	eachSessionStore(t, func(t *testing.T, node func() (*sessions, *pgdb.DB), c *sessionClock) {
		a, _ := node()
		b, _ := node()
		id, se, _ := a.create("ABC00001", "jo", false)
		got, ok, _ := b.get(id)
		if !ok || got.Account != "ABC00001" || got.User != "jo" || !csrfOK(got, []byte(se.CSRF)) {
			t.Fatalf("A's session on B: %+v %v", got, ok)
		}
		b.setFlash(id, "Batch marked.")
		a.get(id)
		if f := a.takeFlash(id); f != "Batch marked." {
			t.Fatalf("B's message on A: %q", f)
		}
		// used on B only, it stays alive on A
		for range 3 {
			c.t = c.t.Add(20 * time.Minute)
			if _, ok, _ := b.get(id); !ok {
				t.Fatal("the session ended while used on B")
			}
		}
		if _, ok, _ := a.get(id); !ok {
			t.Fatal("A ended a session B kept using")
		}
		a.end(id)
		if _, ok, _ := b.get(id); ok {
			t.Fatal("signed out on A, the session still works on B")
		}
	})
}

// TestSessionRoundTrips: a page costs one round trip to the shared
// store (the session's read); its last use is written at most once a
// minute; a message costs one more, on the page that shows it.
func TestSessionRoundTrips(t *testing.T) {
	c := &sessionClock{t: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)}
	st, db := pgSessionNode(t, testpg.NewDatabase(t))
	s := newSessions(st, 30*time.Minute, 12*time.Hour, 100, c.now, slog.New(slog.DiscardHandler))
	id, _, _ := s.create("ABC00001", "jo", false)
	s.sweepIfDue()             // the first sweep
	c.t = c.t.Add(time.Second) // a minute has not passed: the sweep is not due either
	page := func() { s.sweepIfDue(); s.get(id); s.takeFlash(id) }
	trips := func(what string, want int64, fn func()) {
		t.Helper()
		before := db.RoundTrips()
		fn()
		got := db.RoundTrips() - before
		t.Logf("%s: %d round trips", what, got)
		if got != want {
			t.Errorf("%s: %d round trips, want %d", what, got, want)
		}
	}
	for i := range 3 {
		trips(fmt.Sprintf("page %d within the minute", i+1), 1, page)
		c.t = c.t.Add(10 * time.Second)
	}
	c.t = c.t.Add(time.Minute)
	trips("page after a minute (read, last use written, sweep)", 4, page)
	trips("the next page", 1, page)
	s.setFlash(id, "Released.")
	trips("the page with a message", 2, page)
	trips("sign-in (a session made)", 1, func() { s.create("ABC00001", "jo", false) })
}
