// Package portal is lodge's customer portal: web pages under /portal/ on
// the HTTPS listener where a customer's users follow their mailings and
// letters (newest first; found by EPID, reference, part of a title or
// department, letter status, creation dates), and release held
// letters, correct addresses and cancel letters. Pages are rendered on the
// server (html/template, templates and one stylesheet embedded in the
// binary). Every page works without JavaScript; one small script,
// static/app.js, served from the portal itself (no inline script), adds
// live suggestions to the address correction box by asking
// /portal/suggest as the customer types. A letter's preview is a PDF made
// for the request by production and not kept.
//
// # What it stores
//
// Only sessions: a random 32-byte id (the lodge_portal cookie; kept as
// its SHA-256), the account and user signed in, a CSRF token, when it
// started and was last used, and a one-time message. Sessions end after
// 30 minutes unused (Config.IdleTimeout) or 12 hours in all
// (Config.MaxAge), and on sign-out. By default they are kept in memory,
// and a restart signs everyone out; with Config.Sessions from
// NewPostgresSessions they are in the database that several nodes share
// (session.go, session_postgres.go), so any node serves any page of a
// session. Mailings and letters are read from, and actions go to,
// the mailroom (package pipeline); users and passwords are the auth
// store's (lodge user add); documents uploaded on /portal/documents are
// the account's documents library's (package library, Config.Library),
// which mailings' metadata then names. Letters uploaded on /portal/auto
// become a mailing through the upload interface (Config.Uploads: its
// store keeps the files, the mailroom the mailing; auto.go).
//
// # Security rules
//
//   - HTTPS only: on the plain listener the portal answers 403 unless the
//     request comes from a trusted proxy that says (X-Forwarded-Proto:
//     https) it terminated TLS.
//   - Sign-in checks the name and password with the Authenticator the API
//     uses (argon2id, its cache and its failed-login throttle, one budget
//     with the API: too many failures get 429 and when to try again).
//     A new session id is made at sign-in (no fixation).
//   - The cookie is Secure, HttpOnly, SameSite=Strict, Path=/portal/.
//   - Every form carries the session's CSRF token (the sign-in form too,
//     with a session not yet signed in); a POST without the right one gets
//     403 and changes nothing.
//     A multipart form (an upload) carries it as its first part, which
//     its route checks before it reads or stores anything else.
//   - Every page and action reads the mailing and checks that it belongs
//     to the session's account: another account's EPID is 404, the same
//     answer as an EPID that does not exist.
//   - The operator view (/portal/operator/, operator.go) alone shows
//     every account's print batches, and only to a session signed in by a
//     user with the operator role (auth.RoleOperator); to any other it is
//     404 on every path, as a page that does not exist.
//   - Everything a customer controls (titles, references, addresses, file
//     names, hold reasons) goes through html/template's escaping; no
//     template.HTML is made of it.
//   - Every answer carries Content-Security-Policy: default-src 'self';
//     frame-ancestors 'none'; form-action 'self' (no inline script or
//     style), X-Content-Type-Options: nosniff, Referrer-Policy:
//     same-origin; pages with customer data are Cache-Control: no-store.
package portal

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/lodge-mail/lodge/auth"
	"github.com/lodge-mail/lodge/billing"
	"github.com/lodge-mail/lodge/library"
	"github.com/lodge-mail/lodge/pipeline"
	"github.com/lodge-mail/lodge/server"
	"github.com/lodge-mail/lodge/upload"
)

// Config configures the portal. The zero value of each field but
// Mailroom and Auth means the default given.
type Config struct {
	Mailroom *pipeline.Mailroom
	// Auth checks names and passwords; share the API's, so that the
	// failed-login throttle counts both.
	Auth *auth.Authenticator
	// TrustedProxies may serve the portal over the plain listener (with
	// X-Forwarded-Proto: https); their X-Forwarded-For names the client
	// failed sign-ins are counted under.
	TrustedProxies []netip.Prefix
	IdleTimeout    time.Duration // default 30 minutes
	MaxAge         time.Duration // default 12 hours
	MaxSessions    int           // default 100,000; past it the session idle longest ends
	// Sessions keeps the sessions; nil: in this process's memory (one
	// node; a restart signs everyone out). NewPostgresSessions shares
	// them among the nodes on one database.
	Sessions SessionStore
	// Prices gives the usage page the account's currency (the price
	// table's, as lodge invoice takes it); nil: billing.DefaultTable's.
	Prices *billing.Prices
	// Preview makes a letter's preview PDF (production.Producer.PreviewPDF):
	// an open, unlinked file and its size. Nil: no previews. PreviewBusy
	// is the error it gives when making as many as it may (answered 503),
	// DocumentError tells a problem of the customer's documents.
	Preview       func(ctx context.Context, m *pipeline.Mailing, l *pipeline.Letter) (*os.File, int64, error)
	PreviewBusy   error
	DocumentError func(error) bool
	// Batches reads print batches' files for the operator view
	// (production.Producer.Batches, from the object store several nodes
	// share); nil: from the batch's folder in this node's hot folder.
	Batches BatchFiles
	// Library is the accounts' documents libraries (/portal/documents);
	// nil: no documents pages.
	Library *library.Library
	// Uploads lodges the letters uploaded on /portal/auto as the upload
	// interface lodges an mpf_upload (the server's upload.Handler); nil:
	// no upload page. MaxUploadFiles (default 20) and MaxUploadBytes
	// (default 20 MiB, the form in all) bound one upload.
	Uploads        *upload.Handler
	MaxUploadFiles int
	MaxUploadBytes int64
	Now            func() time.Time
	Log            *slog.Logger
}

// Handler serves the portal. Its Match and Serve make it a
// server.PublicHandler: it does its own authentication.
type Handler struct {
	cfg      Config
	mr       *pipeline.Mailroom
	sessions *sessions
	pages    *pages
}

// New returns the portal's handler.
func New(cfg Config) *Handler {
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = 30 * time.Minute
	}
	if cfg.MaxAge <= 0 {
		cfg.MaxAge = 12 * time.Hour
	}
	if cfg.MaxSessions <= 0 {
		cfg.MaxSessions = 100_000
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	return &Handler{cfg: cfg, mr: cfg.Mailroom,
		sessions: newSessions(cfg.Sessions, cfg.IdleTimeout, cfg.MaxAge, cfg.MaxSessions, cfg.Now, cfg.Log),
		pages:    mustParsePages()}
}

// Prefix is where the portal lives.
const Prefix = "/portal/"

// CookieName is the session cookie's name.
const CookieName = "lodge_portal"

// Match says whether a path is the portal's.
func (h *Handler) Match(path []byte) bool {
	return bytes.HasPrefix(path, []byte(Prefix)) || string(path) == "/portal"
}

// Public is what server.Config.Public takes: a handler for a set of paths.
type Public interface {
	Match(path []byte) bool
	Serve(ctx *fasthttp.RequestCtx)
}

// Mux serves each path with the first of its handlers that matches it,
// so that the portal and delivery's links share server.Config.Public.
type Mux []Public

// Match says whether one of the handlers takes the path.
func (m Mux) Match(path []byte) bool {
	for _, h := range m {
		if h.Match(path) {
			return true
		}
	}
	return false
}

// Serve serves the request with the first handler that matches.
func (m Mux) Serve(ctx *fasthttp.RequestCtx) {
	for _, h := range m {
		if h.Match(ctx.Path()) {
			h.Serve(ctx)
			return
		}
	}
	ctx.Error("not found\n", fasthttp.StatusNotFound)
}

func (h *Handler) secureHeaders(ctx *fasthttp.RequestCtx) {
	hd := &ctx.Response.Header
	hd.Set("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'; form-action 'self'")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "same-origin")
	hd.Set("X-Frame-Options", "DENY")
}

// overHTTPS says whether the request came over TLS, here or at a trusted
// proxy.
func (h *Handler) overHTTPS(ctx *fasthttp.RequestCtx) bool {
	if ctx.IsTLS() {
		return true
	}
	if len(h.cfg.TrustedProxies) == 0 || !bytes.EqualFold(ctx.Request.Header.Peek("X-Forwarded-Proto"), []byte("https")) {
		return false
	}
	ip, ok := netip.AddrFromSlice(ctx.RemoteIP())
	return ok && auth.TrustedPeer(ip, h.cfg.TrustedProxies)
}

// clientAddr is the client failed sign-ins are counted under.
func (h *Handler) clientAddr(ctx *fasthttp.RequestCtx) string {
	ip, ok := netip.AddrFromSlice(ctx.RemoteIP())
	if !ok {
		return ctx.RemoteIP().String()
	}
	var xff [][]byte
	if auth.TrustedPeer(ip, h.cfg.TrustedProxies) {
		for k, v := range ctx.Request.Header.AllInOrder() {
			if bytes.EqualFold(k, []byte("X-Forwarded-For")) {
				xff = append(xff, v)
			}
		}
	}
	return auth.ClientAddr(ip, xff, h.cfg.TrustedProxies)
}

// Serve answers one portal request.
func (h *Handler) Serve(ctx *fasthttp.RequestCtx) {
	h.secureHeaders(ctx)
	if !h.overHTTPS(ctx) {
		ctx.Error("the portal is served over HTTPS only: connect to lodge's HTTPS port\n", fasthttp.StatusForbidden)
		return
	}
	h.sessions.sweepIfDue()
	path := string(ctx.Path())
	if path == "/portal" {
		ctx.Redirect(Prefix, fasthttp.StatusFound)
		return
	}
	rest := strings.TrimPrefix(path, Prefix)
	post := ctx.IsPost()
	if !post && !ctx.IsGet() && !ctx.IsHead() {
		ctx.Response.Header.Set("Allow", "GET, HEAD, POST")
		ctx.Error("method not allowed\n", fasthttp.StatusMethodNotAllowed)
		return
	}
	if post && !selfCheckedCSRF[rest] && !boundForm(ctx) {
		return
	}
	switch rest {
	case "style.css":
		serveStatic(ctx, "static/style.css", "text/css; charset=utf-8")
		return
	case "app.js":
		serveStatic(ctx, "static/app.js", "text/javascript; charset=utf-8")
		return
	case "signin":
		if post {
			h.signIn(ctx)
		} else {
			h.signInPage(ctx, "", "", fasthttp.StatusOK)
		}
		return
	}
	id := string(ctx.Request.Header.Cookie(CookieName))
	se, ok, err := h.sessions.get(id)
	if err != nil {
		h.sessionsUnavailable(ctx)
		return
	}
	if !ok || se.Account == "" {
		if post {
			ctx.Error("your session has ended: sign in again\n", fasthttp.StatusForbidden)
			return
		}
		ctx.Redirect(Prefix+"signin", fasthttp.StatusSeeOther)
		return
	}
	if post && !selfCheckedCSRF[rest] && !csrfOK(se, ctx.PostArgs().Peek("csrf")) {
		ctx.Error(csrfRefused, fasthttp.StatusForbidden)
		return
	}
	ctx.Response.Header.Set("Cache-Control", "no-store")
	r := &request{ctx: ctx, id: id, se: se, flash: h.sessions.takeFlash(id)}
	switch {
	case rest == "" && !post:
		ctx.Redirect(Prefix+"mailings", fasthttp.StatusSeeOther)
	case rest == "signout" && post:
		h.sessions.end(id)
		expireCookie(ctx)
		ctx.Redirect(Prefix+"signin", fasthttp.StatusSeeOther)
	case rest == "mailings" && !post:
		h.mailingsPage(r)
	case rest == "failovers" && !post:
		h.failoversPage(r)
	case rest == "suggest" && !post:
		h.suggest(r)
	case rest == "check":
		h.checkPage(r, post)
	case rest == "auto":
		h.autoPage(r, post)
	case strings.HasPrefix(rest, "auto/") && !post:
		h.reviewPage(r, strings.TrimPrefix(rest, "auto/"))
	case rest == "usage" || strings.HasPrefix(rest, "usage/"):
		h.usageRoutes(r, strings.TrimPrefix(strings.TrimPrefix(rest, "usage"), "/"), post)
	case rest == "operator" || strings.HasPrefix(rest, "operator/"):
		h.operatorRoutes(r, strings.Split(strings.TrimPrefix(strings.TrimPrefix(rest, "operator"), "/"), "/"), post)
	case rest == "documents" || strings.HasPrefix(rest, "documents/"):
		h.documentRoutes(r, strings.TrimPrefix(strings.TrimPrefix(rest, "documents"), "/"), post)
	case strings.HasPrefix(rest, "mailings/"):
		h.mailingRoutes(r, strings.Split(strings.TrimPrefix(rest, "mailings/"), "/"), post)
	default:
		h.notFound(r)
	}
}

// unread closes the connection after the answer to a request whose body
// was not read whole, draining what the client still sends (up to 4 MiB)
// so that it reads the answer instead of a reset.
func unread(ctx *fasthttp.RequestCtx) {
	ctx.SetConnectionClose()
	server.LingerOnClose(ctx)
}

// maxFormBytes bounds the body of an ordinary (urlencoded) form: the
// largest, the address check's 256 KiB of text, is at most three times
// that encoded. Upload forms (selfCheckedCSRF) have their own limits.
const maxFormBytes = 1 << 20

// boundForm reads an ordinary form's body, refusing (413, and the
// connection closed) one larger than maxFormBytes before PostArgs would
// read it whole: the server streams bodies past its first 64 KiB, and a
// chunked body declares no length the server could refuse it by.
func boundForm(ctx *fasthttp.RequestCtx) bool {
	tooLarge := func() bool {
		unread(ctx)
		ctx.Error("the form is larger than 1 MiB\n", fasthttp.StatusRequestEntityTooLarge)
		return false
	}
	if ctx.Request.Header.ContentLength() > maxFormBytes {
		return tooLarge()
	}
	stream := ctx.RequestBodyStream()
	if stream == nil {
		return len(ctx.PostBody()) <= maxFormBytes || tooLarge()
	}
	body, err := io.ReadAll(io.LimitReader(stream, maxFormBytes+1))
	if err != nil {
		unread(ctx)
		ctx.Error("the form could not be read\n", fasthttp.StatusBadRequest)
		return false
	}
	if len(body) > maxFormBytes {
		return tooLarge()
	}
	ctx.Request.SetBody(body) // read whole: PostArgs parses it from here
	return true
}

func setCookie(ctx *fasthttp.RequestCtx, id string) {
	c := fasthttp.AcquireCookie()
	defer fasthttp.ReleaseCookie(c)
	c.SetKey(CookieName)
	c.SetValue(id)
	c.SetPath(Prefix)
	c.SetSecure(true)
	c.SetHTTPOnly(true)
	c.SetSameSite(fasthttp.CookieSameSiteStrictMode)
	ctx.Response.Header.SetCookie(c)
}

func expireCookie(ctx *fasthttp.RequestCtx) {
	c := fasthttp.AcquireCookie()
	defer fasthttp.ReleaseCookie(c)
	c.SetKey(CookieName)
	c.SetValue("")
	c.SetPath(Prefix)
	c.SetSecure(true)
	c.SetHTTPOnly(true)
	c.SetSameSite(fasthttp.CookieSameSiteStrictMode)
	c.SetMaxAge(-1)
	ctx.Response.Header.SetCookie(c)
}
