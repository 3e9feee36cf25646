package portal_test

import (
	"context"
	"crypto/tls"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lodge-mail/lodge/auth"
	"github.com/lodge-mail/lodge/engine"
	"github.com/lodge-mail/lodge/index"
	"github.com/lodge-mail/lodge/internal/testpg"
	"github.com/lodge-mail/lodge/internal/testref"
	"github.com/lodge-mail/lodge/internal/tests3"
	"github.com/lodge-mail/lodge/library"
	"github.com/lodge-mail/lodge/pipeline"
	"github.com/lodge-mail/lodge/portal"
	"github.com/lodge-mail/lodge/production"
	"github.com/lodge-mail/lodge/server"
	"github.com/lodge-mail/lodge/upload"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testref.Cleanup()
	testpg.Stop()
	tests3.Stop()
	os.Exit(code)
}

// Customer-controlled strings that would run script if not escaped.
const (
	xssTitle = `<script>alert("title")</script>`
	xssRef   = `"><img src=x onerror=alert('ref')>`
	xssLine  = `<svg onload=alert(1)>`
	xssFile  = `<iframe src=javascript:alert(1)>.pdf`
)

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// fixture is lodge's real server on loopback with the portal among its
// public handlers, two accounts with a user each and their mailings:
//
//	HOLD1 (ABC00001, cust_hold): 3 letters, the first with hostile strings
//	FIX1  (ABC00001): letter 0 fine, 1 fine, 2 with an invalid address
//	EVE1  (ABC00002): 2 letters
type fixture struct {
	t     *testing.T
	url   string
	mr    *pipeline.Mailroom
	clock *clock
	// uploads is the upload interface's store behind /portal/auto
	uploads *upload.Store
	// lib is the documents library behind /portal/documents (documents
	// up to libMaxBytes)
	lib *library.Library
}

const (
	joPass  = "jo's password 1"
	evePass = "eve's password 2"
)

// testEngine is the address check on the test reference data.
func testEngine(t *testing.T) (*index.Index, *engine.Engine) {
	t.Helper()
	ix := testref.Index(t)
	eng, err := engine.New(ix.Ref, engine.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Close)
	return ix, eng
}

// testUsers opens an auth store in dir with an account and a user for
// each {account, user, password}, and its authenticator (3 failures
// throttle).
func testUsers(t *testing.T, dir string, users ...[3]string) (*auth.Store, *auth.Authenticator) {
	t.Helper()
	store, err := auth.Open(filepath.Join(dir, "auth"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	for _, u := range users {
		if _, err := store.AddAccount(u[0], "test "+u[0]); err != nil {
			t.Fatal(err)
		}
		if _, err := store.AddUser(u[0], u[1], u[2]); err != nil {
			t.Fatal(err)
		}
	}
	return store, auth.NewAuthenticator(store, auth.Config{MaxFailures: 3})
}

// checkAddress is the mailroom's address check by the engine, as lodge
// serve wires it.
func checkAddress(eng *engine.Engine) func([]string) pipeline.Verdict {
	return func(lines []string) pipeline.Verdict {
		r := eng.Check(lines, false)
		return pipeline.Verdict{Status: r.Status.String(), Nation: r.Nation, Message: r.Message}
	}
}

// servePortal runs lodge's real server on loopback with the portal of cfg
// (its Auth set to authn) as its public handler, and returns its URL.
func servePortal(t *testing.T, dir string, ix *index.Index, eng *engine.Engine, authn *auth.Authenticator, cfg portal.Config) string {
	t.Helper()
	cfg.Auth = authn
	srv, err := server.New(server.Config{Addr: "127.0.0.1:0", DataDir: filepath.Join(dir, "data"), Public: portal.Mux{portal.New(cfg)}},
		eng, ix, authn, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return "https://" + srv.Addr().String()
}

func newFixture(t *testing.T) *fixture { return newFixtureWith(t, nil) }

// newFixtureWith is newFixture with the portal's sessions kept in ss
// (nil: in memory).
func newFixtureWith(t *testing.T, ss portal.SessionStore) *fixture {
	t.Helper()
	ix, eng := testEngine(t)
	dir := t.TempDir()
	_, authn := testUsers(t, dir, [3]string{"ABC00001", "jo", joPass}, [3]string{"ABC00002", "eve", evePass})

	// previews are made by the real producer, from the documents of
	// mailings submitted with files on disk
	prod, err := production.New(production.Config{DataDir: filepath.Join(dir, "production")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := pipeline.OpenPebble(filepath.Join(dir, "mailroom"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	c := &clock{now: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)}
	mr := pipeline.New(st, nil, pipeline.Config{Now: c.Now, CancelWindow: time.Hour,
		CheckAddress: checkAddress(eng),
		SuggestAddress: func(lines []string) (pipeline.Verdict, []string) {
			r := eng.Check(lines, true)
			v := pipeline.Verdict{Status: r.Status.String(), Nation: r.Nation, Message: r.Message}
			if r.Detail == nil || r.Status == engine.StatusMatched {
				return v, nil
			}
			return v, r.Detail.Suggestion
		}}, slog.New(slog.DiscardHandler))
	f := &fixture{t: t, mr: mr, clock: c}
	letter := func(idx int, ref string, postal ...string) pipeline.Letter {
		v := eng.Check(postal, false)
		return pipeline.Letter{Idx: idx, Reference: ref, Channels: []string{"postal"}, Postal: postal, Price: 123,
			Address: &pipeline.Verdict{Status: v.Status.String(), Nation: v.Nation, Message: v.Message}}
	}
	good := []string{"Jo Citizen", "10 Jones St", "Ultimo NSW 2007"}
	submit := func(m pipeline.Mailing, ls ...pipeline.Letter) {
		t.Helper()
		m.Letters = len(ls)
		if err := mr.Submit(m, ls); err != nil {
			t.Fatal(err)
		}
		c.advance(time.Second)
	}
	submit(pipeline.Mailing{EPID: "HOLD1", Account: "ABC00001", User: "jo", CustHold: true, Title: xssTitle, Department: xssTitle,
		Files: []pipeline.File{{Name: xssFile, Kind: "pdf", Pages: 3}}},
		letter(0, xssRef, xssLine, "10 Jones St", "Ultimo NSW 2007"), letter(1, "h1", good...), letter(2, "h2", good...))
	submit(pipeline.Mailing{EPID: "FIX1", Account: "ABC00001", User: "jo", Title: "Statements"},
		letter(0, "f0", good...), letter(1, "f1", good...), letter(2, "f2", "Jo Citizen", "x"))
	submit(pipeline.Mailing{EPID: "EVE1", Account: "ABC00002", User: "eve", Title: "Eve's secret mailing"},
		letter(0, "eve-ref", good...), letter(1, "e1", good...))
	if l := f.letter("FIX1", 2); l.Status != pipeline.Held || l.Hold != pipeline.HoldAddress {
		t.Fatalf("FIX1 letter 2 should be held for its address: %s %s %+v", l.Status, l.Hold, l.Address)
	}

	uploads, uploadStore := newUploads(t, dir, eng, mr)
	f.uploads = uploadStore
	if f.lib, err = library.Open(filepath.Join(dir, "library"), library.Options{InProcess: true, MaxBytes: libMaxBytes, Now: c.Now}); err != nil {
		t.Fatal(err)
	}
	f.url = servePortal(t, dir, ix, eng, authn, portal.Config{Mailroom: mr, Now: c.Now, Sessions: ss,
		Library: f.lib, Uploads: uploads, MaxUploadFiles: autoMaxFiles, MaxUploadBytes: autoMaxBytes,
		Preview: prod.PreviewPDF, PreviewBusy: production.ErrPreviewBusy, DocumentError: production.DocumentError})
	return f
}

func (f *fixture) letter(epid string, idx int) pipeline.Letter {
	f.t.Helper()
	ls, err := f.mr.Store().Letters(epid, idx, 1)
	if err != nil || len(ls) != 1 {
		f.t.Fatalf("letter %s/%d: %v", epid, idx, err)
	}
	return ls[0]
}

// browser is a net/http client with a cookie jar.
type browser struct {
	f      *fixture
	c      *http.Client
	status int
	body   string
	header http.Header
}

func (f *fixture) browser() *browser {
	jar, _ := cookiejar.New(nil)
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	f.t.Cleanup(tr.CloseIdleConnections)
	return &browser{f: f, c: &http.Client{Jar: jar, Transport: tr}}
}

func (b *browser) do(req *http.Request) *browser {
	b.f.t.Helper()
	resp, err := b.c.Do(req)
	if err != nil {
		b.f.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		b.f.t.Fatal(err)
	}
	b.status, b.body, b.header = resp.StatusCode, string(body), resp.Header
	return b
}

func (b *browser) get(path string) *browser {
	b.f.t.Helper()
	req, _ := http.NewRequest("GET", b.f.url+path, nil)
	return b.do(req)
}

func (b *browser) post(path string, form url.Values) *browser {
	b.f.t.Helper()
	req, _ := http.NewRequest("POST", b.f.url+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.do(req)
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf is the token of the last page's forms.
func (b *browser) csrf() string {
	b.f.t.Helper()
	m := csrfRE.FindStringSubmatch(b.body)
	if m == nil {
		b.f.t.Fatalf("no CSRF token on the page (%d): %s", b.status, b.body)
	}
	return m[1]
}

func (b *browser) signIn(name, password string) *browser {
	b.f.t.Helper()
	b.get("/portal/signin")
	return b.post("/portal/signin", url.Values{"csrf": {b.csrf()}, "name": {name}, "password": {password}})
}

func (b *browser) expect(status int, contains ...string) {
	b.f.t.Helper()
	if b.status != status {
		b.f.t.Fatalf("status %d, want %d: %s", b.status, status, b.body)
	}
	for _, s := range contains {
		if !strings.Contains(b.body, s) {
			b.f.t.Fatalf("the page lacks %q: %s", s, b.body)
		}
	}
}

func TestSignInAndOut(t *testing.T) { eachSessionStore(t, testSignInAndOut) }

func testSignInAndOut(t *testing.T, ss func(*testing.T) portal.SessionStore) {
	f := newFixtureWith(t, ss(t))
	b := f.browser()
	// not signed in: every page leads to the sign-in form
	b.get("/portal/mailings").expect(200, "Sign in", `name="password"`)
	b.get("/portal/mailings/HOLD1").expect(200, "Sign in")
	if strings.Contains(b.body, "HOLD1") {
		t.Fatal("a mailing shown before sign-in")
	}
	b.signIn("jo", "wrong password").expect(401, "The name or password is wrong.")
	b.signIn("nobody", joPass).expect(401, "The name or password is wrong.")
	b.signIn("jo:x", joPass).expect(401, "The name or password is wrong.")

	// the cookie's attributes, seen on the sign-in answer itself
	b.get("/portal/signin")
	token := b.csrf()
	b.c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	b.post("/portal/signin", url.Values{"csrf": {token}, "name": {"jo"}, "password": {joPass}})
	if b.status != 303 || !strings.HasSuffix(b.header.Get("Location"), "/portal/mailings") {
		t.Fatalf("sign-in answered %d to %q", b.status, b.header.Get("Location"))
	}
	cookie := b.header.Get("Set-Cookie")
	for _, attr := range []string{"lodge_portal=", "; path=/portal/", "; HttpOnly", "; secure", "; SameSite=Strict"} {
		if !strings.Contains(strings.ToLower(cookie), strings.ToLower(attr)) {
			t.Fatalf("Set-Cookie %q lacks %q", cookie, attr)
		}
	}
	id := strings.TrimPrefix(strings.SplitN(cookie, ";", 2)[0], "lodge_portal=")
	if len(id) != 43 {
		t.Fatalf("session id %q is not 32 random bytes in base64url", id)
	}
	b.c.CheckRedirect = nil

	b.get("/portal/mailings").expect(200, "HOLD1", "FIX1", "Sign out", "jo · ABC00001")
	if strings.Contains(b.body, "EVE1") {
		t.Fatal("another account's mailing is listed")
	}
	for _, h := range []string{"Content-Security-Policy: default-src 'self'; frame-ancestors 'none'; form-action 'self'",
		"X-Content-Type-Options: nosniff", "Referrer-Policy: same-origin", "Cache-Control: no-store"} {
		k, v, _ := strings.Cut(h, ": ")
		if got := b.header.Get(k); got != v {
			t.Fatalf("%s: %q, want %q", k, got, v)
		}
	}

	// sign out: the session id no longer works, from this browser or another
	b.post("/portal/signout", url.Values{"csrf": {b.csrf()}}).expect(200, "Sign in")
	b.get("/portal/mailings").expect(200, "Sign in")
	thief := f.browser()
	u, _ := url.Parse(f.url + "/portal/")
	thief.c.Jar.SetCookies(u, []*http.Cookie{{Name: "lodge_portal", Value: id, Path: "/portal/"}})
	thief.get("/portal/mailings").expect(200, "Sign in")
	if strings.Contains(thief.body, "HOLD1") {
		t.Fatal("a signed-out session id still works")
	}
}

func TestSessionExpiry(t *testing.T) { eachSessionStore(t, testSessionExpiry) }

func testSessionExpiry(t *testing.T, ss func(*testing.T) portal.SessionStore) {
	f := newFixtureWith(t, ss(t))
	b := f.browser()
	b.signIn("jo", joPass).expect(200, "HOLD1")
	// used every 29 minutes, the session lives on until 12 hours
	for i := 0; i < 24; i++ {
		f.clock.advance(29 * time.Minute)
		b.get("/portal/mailings").expect(200, "HOLD1")
	}
	f.clock.advance(29 * time.Minute)
	b.get("/portal/mailings").expect(200, "Sign in")

	b.signIn("jo", joPass).expect(200, "HOLD1")
	f.clock.advance(31 * time.Minute)
	b.get("/portal/mailings").expect(200, "Sign in")
}

func TestThrottle(t *testing.T) {
	f := newFixture(t)
	b := f.browser()
	for i := 0; i < 3; i++ {
		b.signIn("eve", "not her password").expect(401, "wrong")
	}
	// the right password is refused too while the throttle holds
	b.signIn("eve", evePass).expect(429, "Too many failed sign-ins")
	if b.header.Get("Retry-After") == "" {
		t.Fatal("no Retry-After")
	}
	// another user from the same client is not locked out
	b.signIn("jo", joPass).expect(200, "HOLD1")
}

func TestCSRF(t *testing.T) {
	f := newFixture(t)
	b := f.browser()
	// the sign-in form needs its token too
	b.get("/portal/signin")
	b.post("/portal/signin", url.Values{"name": {"jo"}, "password": {joPass}}).expect(403)
	b.signIn("jo", joPass).expect(200, "HOLD1")
	token := b.csrf()
	f.clock.advance(time.Second)
	// the token with its last character changed (to another: a fixed
	// replacement would be the token itself one time in 64)
	last := byte('A')
	if token[len(token)-1] == last {
		last = 'B'
	}
	for _, form := range []url.Values{
		{"whole": {"1"}},
		{"whole": {"1"}, "csrf": {""}},
		{"whole": {"1"}, "csrf": {token[:len(token)-1] + string(last)}},
	} {
		b.post("/portal/mailings/HOLD1/release", form).expect(403)
		if l := f.letter("HOLD1", 1); l.Status != pipeline.Held {
			t.Fatalf("released without a CSRF token: %s", l.Status)
		}
	}
	b.post("/portal/mailings/FIX1/cancel", url.Values{"letter": {"0"}}).expect(403)
	b.post("/portal/mailings/FIX1/letters/2/correct", url.Values{"address": {"Jo\n10 Jones St\nUltimo NSW 2007"}}).expect(403)
	b.post("/portal/signout", nil).expect(403)
	if l := f.letter("FIX1", 0); l.Status != pipeline.Received {
		t.Fatalf("cancelled without a CSRF token: %s", l.Status)
	}
	if l := f.letter("FIX1", 2); l.Status != pipeline.Held {
		t.Fatalf("corrected without a CSRF token: %s", l.Status)
	}
	// another session's token is not this one's
	other := f.browser()
	other.signIn("jo", joPass).expect(200)
	b.post("/portal/mailings/HOLD1/release", url.Values{"whole": {"1"}, "csrf": {other.csrf()}}).expect(403)
	b.get("/portal/mailings").expect(200, "HOLD1") // still signed in
}

func TestAnotherAccount(t *testing.T) {
	f := newFixture(t)
	b := f.browser()
	b.signIn("jo", joPass).expect(200)
	token := b.csrf()
	for _, path := range []string{"/portal/mailings/EVE1", "/portal/mailings/EVE1/letters/0", "/portal/mailings/NOSUCH"} {
		b.get(path).expect(404, "no such page, mailing or letter")
		if strings.Contains(b.body, "secret") {
			t.Fatalf("%s leaks the mailing", path)
		}
	}
	b.post("/portal/mailings/EVE1/cancel", url.Values{"csrf": {token}, "letter": {"0"}}).expect(404)
	b.post("/portal/mailings/EVE1/release", url.Values{"csrf": {token}, "whole": {"1"}}).expect(404)
	b.post("/portal/mailings/EVE1/letters/0/correct", url.Values{"csrf": {token}, "address": {"A\n1 B St\nUltimo NSW 2007"}}).expect(404)
	if l := f.letter("EVE1", 0); l.Status != pipeline.Received {
		t.Fatalf("jo changed eve's letter: %s", l.Status)
	}
	// searching names neither eve's mailing nor her letters
	b.get("/portal/mailings?q=EVE1").expect(200, "No mailing or letter of your account matches")
	b.get("/portal/mailings?q=eve-ref").expect(200, "No mailing or letter of your account matches")
	b.get("/portal/failovers").expect(200, "No letter of your account has failed over")
}

func TestEscaping(t *testing.T) {
	f := newFixture(t)
	b := f.browser()
	b.signIn("jo", joPass).expect(200)
	pages := []string{"/portal/mailings", "/portal/mailings/HOLD1", "/portal/mailings/HOLD1/letters/0",
		"/portal/mailings?q=" + url.QueryEscape(xssRef)}
	for _, p := range pages {
		b.get(p).expect(200)
		// (the page's one script element is the portal's own, app.js)
		for _, bad := range []string{xssTitle, xssRef, xssLine, xssFile, "<script>", "<img", "<svg", "<iframe"} {
			if strings.Contains(b.body, bad) {
				t.Fatalf("%s shows %q unescaped", p, bad)
			}
		}
	}
	b.get("/portal/mailings/HOLD1").expect(200, "&lt;script&gt;alert(&#34;title&#34;)&lt;/script&gt;", "&lt;iframe src=javascript:alert(1)&gt;.pdf",
		"&#34;&gt;&lt;img src=x onerror=alert(&#39;ref&#39;)&gt;")
	b.get("/portal/mailings/HOLD1/letters/0").expect(200, "&lt;svg onload=alert(1)&gt;")
	// a search that matches a letter lists it, escaped
	b.get("/portal/mailings?q="+url.QueryEscape(xssRef)).expect(200, "/portal/mailings/HOLD1/letters/0")
}

func TestActions(t *testing.T) {
	f := newFixture(t)
	b := f.browser()
	b.signIn("jo", joPass).expect(200)

	// release one letter, then the whole mailing
	b.get("/portal/mailings/HOLD1").expect(200, "Release the whole mailing", "on hold")
	b.post("/portal/mailings/HOLD1/release", url.Values{"csrf": {b.csrf()}, "letter": {"1"}}).expect(200, "1 letter released.")
	if l0, l1 := f.letter("HOLD1", 0), f.letter("HOLD1", 1); l0.Status != pipeline.Held || l1.Status != pipeline.Received {
		t.Fatalf("after releasing letter 1: %s, %s", l0.Status, l1.Status)
	}
	b.post("/portal/mailings/HOLD1/release", url.Values{"csrf": {b.csrf()}, "whole": {"1"}}).expect(200, "2 letters released. Not released: letter 2 (not held).")
	if m, _ := f.mr.Store().Mailing("HOLD1"); m.CustHold {
		t.Fatal("the mailing is still on customer hold")
	}
	if l := f.letter("HOLD1", 0); l.Status != pipeline.Received || !strings.Contains(l.Events[len(l.Events)-1].Detail, "portal user jo") {
		t.Fatalf("letter 0 after the release: %s %+v", l.Status, l.Events)
	}

	// cancel two letters
	b.get("/portal/mailings/FIX1")
	b.post("/portal/mailings/FIX1/cancel", url.Values{"csrf": {b.csrf()}, "letter": {"0", "1"}}).expect(200, "2 letters cancelled.", "Cancelled")
	for i := 0; i < 2; i++ {
		if l := f.letter("FIX1", i); l.Status != pipeline.Cancelled {
			t.Fatalf("letter %d: %s", i, l.Status)
		}
	}
	b.post("/portal/mailings/FIX1/cancel", url.Values{"csrf": {b.csrf()}, "letter": {"0"}}).expect(200, "0 letters cancelled. Not cancelled: letter 1 (already cancelled).")
	b.post("/portal/mailings/FIX1/cancel", url.Values{"csrf": {b.csrf()}, "letter": {"3"}}).expect(400)
	b.post("/portal/mailings/FIX1/cancel", url.Values{"csrf": {b.csrf()}}).expect(200, "Tick the letters first")

	// correct an invalid address: an address the engine calls invalid
	// changes nothing and shows the verdict; a good one sends it on
	b.get("/portal/mailings/FIX1/letters/2").expect(200, "Correct the address", "invalid")
	b.post("/portal/mailings/FIX1/letters/2/correct", url.Values{"csrf": {b.csrf()}, "address": {"Jo Citizen\nx"}}).
		expect(422, "The address check says", "Not corrected: the corrected address is invalid")
	if l := f.letter("FIX1", 2); l.Status != pipeline.Held {
		t.Fatalf("an invalid correction changed the letter: %s", l.Status)
	}
	b.post("/portal/mailings/FIX1/letters/2/correct", url.Values{"csrf": {b.csrf()}, "address": {"\n\n"}}).expect(422, "1 to 7 lines")
	b.post("/portal/mailings/FIX1/letters/2/correct", url.Values{"csrf": {b.csrf()}, "address": {"Jo Citizen\r\n10 Jones St\r\nUltimo NSW 2007\r\n"}}).
		expect(200, "Letter 3 corrected: the address check says matched", "Received")
	l := f.letter("FIX1", 2)
	if l.Status != pipeline.Received || strings.Join(l.Postal, "|") != "Jo Citizen|10 Jones St|Ultimo NSW 2007" {
		t.Fatalf("after the correction: %s %q", l.Status, l.Postal)
	}
}

func TestPaging(t *testing.T) {
	f := newFixture(t)
	var ls []pipeline.Letter
	for i := 0; i < 250; i++ {
		ls = append(ls, pipeline.Letter{Idx: i, Reference: "p" + string(rune('a'+i%26)), Channels: []string{"postal"}, Postal: []string{"A", "1 B St", "Ultimo NSW 2007"}})
	}
	if err := f.mr.Submit(pipeline.Mailing{EPID: "BIG1", Account: "ABC00001", Letters: len(ls)}, ls); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 60; i++ {
		f.clock.advance(time.Second)
		if err := f.mr.Submit(pipeline.Mailing{EPID: "M" + string(rune('A'+i/26)) + string(rune('A'+i%26)), Account: "ABC00001", Letters: 0}, nil); err != nil {
			t.Fatal(err)
		}
	}
	b := f.browser()
	b.signIn("jo", joPass).expect(200, "MCH", "Older") // the newest first
	if strings.Contains(b.body, "HOLD1") {
		t.Fatal("the first page holds more than 50 mailings")
	}
	next := regexp.MustCompile(`href="(/portal/mailings\?after=[^"]+)"`).FindStringSubmatch(b.body)
	b.get(strings.ReplaceAll(next[1], "&amp;", "&")).expect(200, "HOLD1", "BIG1", "Newest")
	b.get("/portal/mailings/BIG1").expect(200, "Letters 1–100 of 250", "Next letters")
	b.get("/portal/mailings/BIG1?from=200").expect(200, "Letters 201–250 of 250", "Previous letters")
	b.get("/portal/mailings?q=big1").expect(200, "Letters 1–100 of 250") // an EPID found whatever its case
}

// TestAddressCheck: addresses pasted with blank lines between them are
// judged by the engine, shown (escaped) or downloaded as CSV (cells that
// a spreadsheet would run as formulas defused); without the form's token
// nothing is checked; bounds are said.
func TestAddressCheck(t *testing.T) {
	f := newFixture(t)
	b := f.browser()
	b.signIn("jo", joPass).expect(200)
	b.get("/portal/check").expect(200, "Address check", `name="addresses"`)
	token := b.csrf()
	text := "Jo Citizen\r\n10 Jones St\r\nUltimo NSW 2007\r\n\r\nJoe Blogs\n10 Jones St\nSmithville NSW 2987\n\n\nA\n<script>x</script> VIC 3000\n\n=HYPERLINK(\"x\")\nLondon\nUnited Kingdom\n"
	b.post("/portal/check", url.Values{"csrf": {token}, "addresses": {text}, "format": {"page"}}).
		expect(200, "st-matched", "st-unmatched", "st-invalid", "st-international", "&lt;script&gt;x&lt;/script&gt;")
	if strings.Contains(b.body, "<script>x") {
		t.Fatal("an address rendered unescaped")
	}
	b.post("/portal/check", url.Values{"csrf": {token}, "addresses": {text}, "format": {"csv"}})
	if b.status != 200 || !strings.HasPrefix(b.header.Get("Content-Type"), "text/csv") {
		t.Fatalf("CSV: %d %s", b.status, b.header.Get("Content-Type"))
	}
	rows := strings.Split(strings.TrimSpace(b.body), "\n")
	if len(rows) != 5 || rows[0] != "address,status,nation,message" || !strings.HasPrefix(rows[1], `"Jo Citizen, 10 Jones St, Ultimo NSW 2007",matched,AUS`) ||
		!strings.HasPrefix(rows[4], `"'=HYPERLINK(""x""), London, United Kingdom",international,GBR`) {
		t.Fatalf("CSV rows:\n%s", b.body)
	}
	b.post("/portal/check", url.Values{"addresses": {text}}).expect(403)
	b.get("/portal/check")
	b.post("/portal/check", url.Values{"csrf": {b.csrf()}, "addresses": {"\n \n"}}).expect(422, "Paste at least one address")
	b.post("/portal/check", url.Values{"csrf": {b.csrf()}, "addresses": {"1\n2\n3\n4\n5\n6\n7\n8"}}).expect(422, "Address 1 has more than 7 lines")
	b.post("/portal/check", url.Values{"csrf": {b.csrf()}, "addresses": {strings.Repeat("A\nB\n\n", 1001)}}).expect(422, "At most 1,000 addresses")
}
