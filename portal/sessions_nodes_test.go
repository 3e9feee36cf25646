package portal_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lodge-mail/lodge/auth"
	"github.com/lodge-mail/lodge/internal/testpg"
	"github.com/lodge-mail/lodge/pgdb"
	"github.com/lodge-mail/lodge/pipeline"
	"github.com/lodge-mail/lodge/portal"
)

// eachSessionStore runs fn over the portal's session stores: in memory
// (nil) and on PostgreSQL (a new database).
func eachSessionStore(t *testing.T, fn func(t *testing.T, ss func(*testing.T) portal.SessionStore)) {
	t.Run("memory", func(t *testing.T) { fn(t, func(*testing.T) portal.SessionStore { return nil }) })
	t.Run("postgres", func(t *testing.T) {
		fn(t, func(t *testing.T) portal.SessionStore {
			return portal.NewPostgresSessions(openDB(t, testpg.NewDatabase(t)), 0)
		})
	})
}

// openDB opens the database at url with a pool of its own (a node's).
func openDB(t *testing.T, url string) *pgdb.DB {
	t.Helper()
	db, err := pgdb.Open(context.Background(), pgdb.Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return db
}

// TestSessionAcrossNodes: two lodge servers share one PostgreSQL
// database for their accounts (auth.OpenPostgres) and their portal
// sessions, as nodes behind a load balancer do (the browser's cookie
// goes to both: cookies are per host, not per port). A session signed
// in on A is accepted on B, forms of A's pages are taken by B, and
// signing out on A ends it on B.
func TestSessionAcrossNodes(t *testing.T) {
	ix, eng := testEngine(t)
	dbURL := testpg.NewDatabase(t)
	c := &clock{now: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)}
	st, err := pipeline.OpenPebble(filepath.Join(t.TempDir(), "mailroom"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	mr := pipeline.New(st, nil, pipeline.Config{Now: c.Now, CheckAddress: checkAddress(eng)}, slog.New(slog.DiscardHandler))
	if err := mr.Submit(pipeline.Mailing{EPID: "NODES1", Account: "ABC00001", User: "jo", Title: "Shared", Letters: 1},
		[]pipeline.Letter{{Idx: 0, Reference: "r0", Channels: []string{"postal"}, Postal: []string{"Jo Citizen", "10 Jones St", "Ultimo NSW 2007"}, Price: 1}}); err != nil {
		t.Fatal(err)
	}
	var as *auth.Store // node A's
	node := func() *fixture {
		db := openDB(t, dbURL)
		s, err := auth.OpenPostgres(context.Background(), db, auth.PostgresConfig{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		if as == nil {
			as = s
		}
		authn := auth.NewAuthenticator(s, auth.Config{MaxFailures: 3})
		u := servePortal(t, t.TempDir(), ix, eng, authn, portal.Config{Mailroom: mr, Now: c.Now, Sessions: portal.NewPostgresSessions(db, 0)})
		return &fixture{t: t, url: u, mr: mr, clock: c}
	}
	a, b := node(), node()
	if _, err := as.AddAccount("ABC00001", "test"); err != nil {
		t.Fatal(err)
	}
	if _, err := as.AddUser("ABC00001", "jo", joPass); err != nil {
		t.Fatal(err)
	}
	onA := a.browser()
	onB := &browser{f: b, c: onA.c} // the same browser, its requests sent to B
	onA.signIn("jo", joPass).expect(200, "NODES1", "jo · ABC00001")
	onB.get("/portal/mailings").expect(200, "NODES1", "jo · ABC00001")

	// a form of A's page, posted to B, carries the session's token; the
	// message B sets is shown on A's next page
	onA.get("/portal/mailings/NODES1")
	token := onA.csrf()
	onA.c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	onB.post("/portal/mailings/NODES1/cancel", url.Values{"csrf": {token}, "letter": {"0"}}).expect(303)
	onA.c.CheckRedirect = nil
	if l := a.letter("NODES1", 0); l.Status != pipeline.Cancelled {
		t.Fatalf("the letter cancelled through B is %s", l.Status)
	}
	onA.get("/portal/mailings/NODES1").expect(200, "1 letter cancelled.")

	// signed out on A, the session ends on B
	onA.post("/portal/signout", url.Values{"csrf": {onA.csrf()}}).expect(200, "Sign in")
	onB.get("/portal/mailings").expect(200, "Sign in")
	if strings.Contains(onB.body, "NODES1") {
		t.Fatal("signed out on A, the session still works on B")
	}
}

// TestSessionStoreDown: while the shared session store cannot be reached
// (its database pool closed here), the portal answers 503 with
// Retry-After to a browser that is signed in, to the sign-in form and to
// a sign-in: not the sign-in form, as if the browser had signed out.
func TestSessionStoreDown(t *testing.T) {
	db := openDB(t, testpg.NewDatabase(t))
	f := newFixtureWith(t, portal.NewPostgresSessions(db, 0))
	b := f.browser()
	b.signIn("jo", joPass).expect(200, "jo · ABC00001")
	db.Close()
	down := func(what string, b *browser) {
		t.Helper()
		b.expect(503, "cannot reach its records")
		if got := b.header.Get("Retry-After"); got != "30" {
			t.Fatalf("%s: Retry-After %q", what, got)
		}
		if strings.Contains(b.body, `name="password"`) {
			t.Fatalf("%s: the sign-in form shown while the store is down", what)
		}
	}
	down("a page", b.get("/portal/mailings"))
	down("the sign-in form", f.browser().get("/portal/signin"))
	down("a sign-in", b.post("/portal/signin", url.Values{"name": {"jo"}, "password": {joPass}}))
}
