package portal

import (
	"bytes"
	"embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/lodge-mail/lodge/auth"
	"github.com/lodge-mail/lodge/pipeline"
)

//go:embed templates/*.html static/*
var files embed.FS

// lettersPerPage is the page size of a mailing's letters (the
// mailings list's is in search.go).
const lettersPerPage = 100

type pages struct {
	t map[string]*template.Template
}

var funcs = template.FuncMap{
	"lower": strings.ToLower,
	"when": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.Local().Format("2 Jan 2006 15:04")
	},
	"dollars": func(cents int64) string { return fmt.Sprintf("$%d.%02d", cents/100, cents%100) },
	"join":    strings.Join,
	"add":     func(a, b int) int { return a + b },
}

func mustParsePages() *pages {
	p := &pages{t: map[string]*template.Template{}}
	for _, name := range []string{"signin", "mailings", "mailing", "letter", "failovers", "check", "error", "auto", "auto_review", "usage", "operator_batches", "operator_batch", "documents", "document_delete"} {
		p.t[name] = template.Must(template.New("layout.html").Funcs(funcs).ParseFS(files, "templates/layout.html", "templates/"+name+".html"))
	}
	return p
}

// request is one signed-in request.
type request struct {
	ctx   *fasthttp.RequestCtx
	id    string
	se    session
	flash string
}

// view is what every page's template gets.
type view struct {
	Title    string
	Account  string
	User     string
	Operator bool // the nav shows the operator view
	CSRF     string
	Flash    string
	Error    string
	Data     any
}

func (h *Handler) render(ctx *fasthttp.RequestCtx, status int, name string, v view) {
	var buf bytes.Buffer
	if err := h.pages.t[name].Execute(&buf, v); err != nil {
		h.cfg.Log.Error("portal: rendering a page", "page", name, "err", err)
		ctx.Error("internal error\n", fasthttp.StatusInternalServerError)
		return
	}
	ctx.SetStatusCode(status)
	ctx.SetContentType("text/html; charset=utf-8")
	ctx.SetBody(buf.Bytes())
}

func (h *Handler) page(r *request, status int, name, title string, data any, errMsg string) {
	h.render(r.ctx, status, name, view{Title: title, Account: r.se.Account, User: r.se.User, Operator: r.se.Operator, CSRF: r.se.CSRF, Flash: r.flash, Error: errMsg, Data: data})
}

func (h *Handler) notFound(r *request) {
	h.page(r, fasthttp.StatusNotFound, "error", "Not found", nil, "There is no such page, mailing or letter in your account.")
}

func (h *Handler) internalError(r *request, err error) {
	h.cfg.Log.Error("portal", "path", string(r.ctx.Path()), "err", err)
	h.page(r, fasthttp.StatusInternalServerError, "error", "Something went wrong", nil, "Something went wrong on our side; please try again.")
}

func serveStatic(ctx *fasthttp.RequestCtx, name, contentType string) {
	b, err := files.ReadFile(name)
	if err != nil {
		ctx.Error("not found\n", fasthttp.StatusNotFound)
		return
	}
	ctx.SetContentType(contentType)
	ctx.Response.Header.Set("Cache-Control", "public, max-age=3600")
	ctx.SetBody(b)
}

// sessionsUnavailable answers a request that needs the session store
// while it cannot be read or written (a shared database down): 503 with
// Retry-After, not the sign-in form, since the browser may well be signed
// in; nothing was done.
func (h *Handler) sessionsUnavailable(ctx *fasthttp.RequestCtx) {
	ctx.Response.Header.Set("Cache-Control", "no-store")
	ctx.Response.Header.Set("Retry-After", "30")
	h.render(ctx, fasthttp.StatusServiceUnavailable, "error", view{Title: "Unavailable",
		Error: "The portal cannot reach its records just now, so nothing was done. Please try again in a minute."})
}

// signInPage shows the sign-in form, with a session not yet signed in
// that carries the form's CSRF token.
func (h *Handler) signInPage(ctx *fasthttp.RequestCtx, name, msg string, status int) {
	id := string(ctx.Request.Header.Cookie(CookieName))
	se, ok, err := h.sessions.get(id)
	if err != nil {
		h.sessionsUnavailable(ctx)
		return
	}
	if !ok {
		var s *session
		if id, s, err = h.sessions.create("", "", false); err != nil {
			h.sessionsUnavailable(ctx)
			return
		}
		se = *s
		setCookie(ctx, id)
	}
	ctx.Response.Header.Set("Cache-Control", "no-store")
	h.render(ctx, status, "signin", view{Title: "Sign in", CSRF: se.CSRF, Error: msg, Data: name})
}

func (h *Handler) signIn(ctx *fasthttp.RequestCtx) {
	id := string(ctx.Request.Header.Cookie(CookieName))
	se, ok, err := h.sessions.get(id)
	if err != nil {
		h.sessionsUnavailable(ctx)
		return
	}
	args := ctx.PostArgs()
	if !ok || !csrfOK(se, args.Peek("csrf")) {
		ctx.Response.Header.Set("Cache-Control", "no-store")
		h.render(ctx, fasthttp.StatusForbidden, "error", view{Title: "Sign in", Error: "The sign-in form had expired. Please sign in again."})
		return
	}
	name, password := string(args.Peek("name")), args.Peek("password")
	if strings.ContainsRune(name, ':') {
		// no user name has one (auth.ValidUserName); as Basic
		// credentials it would move part of the name into the password
		name = "?"
	}
	// The API's Authenticator verifies the password (argon2id) and counts
	// the failure against the same throttle; it takes the credentials as
	// a Basic Authorization value.
	cred := make([]byte, 0, 6+base64.StdEncoding.EncodedLen(len(name)+1+len(password)))
	cred = append(cred, "Basic "...)
	cred = base64.StdEncoding.AppendEncode(cred, append(append([]byte(name), ':'), password...))
	p, err := h.cfg.Auth.Authenticate(cred, h.clientAddr(ctx))
	var th *auth.ThrottledError
	switch {
	case errors.As(err, &th):
		secs := int(th.RetryAfter.Round(time.Second) / time.Second)
		ctx.Response.Header.Set("Retry-After", strconv.Itoa(max(secs, 1)))
		h.signInPage(ctx, name, fmt.Sprintf("Too many failed sign-ins. Try again in %d seconds.", max(secs, 1)), fasthttp.StatusTooManyRequests)
		return
	case errors.Is(err, auth.ErrInvalid), errors.Is(err, auth.ErrMalformed), errors.Is(err, auth.ErrMissing):
		h.signInPage(ctx, name, "The name or password is wrong.", fasthttp.StatusUnauthorized)
		return
	case err != nil:
		h.cfg.Log.Error("portal: sign-in", "err", err)
		h.signInPage(ctx, name, "Sign-in is not available right now; please try again.", fasthttp.StatusInternalServerError)
		return
	case p.User == "":
		h.signInPage(ctx, name, "The name or password is wrong.", fasthttp.StatusUnauthorized)
		return
	}
	// a new id at sign-in: one fixed before cannot be ridden after
	h.sessions.end(id)
	newID, _, err := h.sessions.create(p.Account, p.User, p.Role == auth.RoleOperator)
	if err != nil {
		h.sessionsUnavailable(ctx)
		return
	}
	setCookie(ctx, newID)
	ctx.Redirect(Prefix+"mailings", fasthttp.StatusSeeOther)
}

type statusCount struct {
	Status string
	N      int
}

func countsOf(c map[string]int) []statusCount {
	var out []statusCount
	for _, s := range pipeline.Statuses {
		if c[s] > 0 {
			out = append(out, statusCount{s, c[s]})
		}
	}
	return out
}

// mailingOf reads a mailing of the session's account: another account's
// is not found.
func (h *Handler) mailingOf(r *request, epid string) (pipeline.Mailing, bool) {
	m, err := h.mr.Store().Mailing(epid)
	if errors.Is(err, pipeline.ErrNotFound) || err == nil && m.Account != r.se.Account {
		h.notFound(r)
		return m, false
	}
	if err != nil {
		h.internalError(r, err)
		return m, false
	}
	return m, true
}

func (h *Handler) mailingRoutes(r *request, parts []string, post bool) {
	m, ok := h.mailingOf(r, parts[0])
	if !ok {
		return
	}
	switch {
	case len(parts) == 1 && !post:
		h.mailingPage(r, m)
	case len(parts) == 2 && post && parts[1] == "release":
		h.act(r, m, "released", h.mr.Release)
	case len(parts) == 2 && post && parts[1] == "cancel":
		h.act(r, m, "cancelled", h.mr.Cancel)
	case len(parts) >= 3 && parts[1] == "letters":
		idx, err := strconv.Atoi(parts[2])
		if err != nil || idx < 0 || idx >= m.Letters || strconv.Itoa(idx) != parts[2] {
			h.notFound(r)
			return
		}
		switch {
		case len(parts) == 3 && !post:
			h.letterPage(r, m, idx, "", nil, "")
		case len(parts) == 4 && !post && parts[3] == "preview.pdf":
			h.previewPDF(r, m, idx)
		case len(parts) == 4 && post && parts[3] == "correct":
			h.correct(r, m, idx)
		default:
			h.notFound(r)
		}
	default:
		h.notFound(r)
	}
}

type mailingData struct {
	M        pipeline.Mailing
	Settings string
	Counts   []statusCount
	Letters  []pipeline.Letter
	From     int
	Prev     int
	Next     int // 0: none
	Held     int // customer-held letters on this page
}

// letterPage is a page of a mailing's letters (from the query's from=)
// with the mailing's counts per status.
type letterPage struct {
	Counts  []statusCount
	Letters []pipeline.Letter
	From    int
	Prev    int
	Next    int // 0: none
}

// letterPageOf reads the page of letters the request asks for, answering
// the request itself when it cannot.
func (h *Handler) letterPageOf(r *request, m pipeline.Mailing) (letterPage, bool) {
	st := h.mr.Store()
	from, _ := strconv.Atoi(string(r.ctx.QueryArgs().Peek("from")))
	if from < 0 || from >= max(m.Letters, 1) {
		from = 0
	}
	counts, err := st.Counts(m.EPID)
	if err != nil {
		h.internalError(r, err)
		return letterPage{}, false
	}
	ls, err := st.Letters(m.EPID, from, lettersPerPage)
	if err != nil {
		h.internalError(r, err)
		return letterPage{}, false
	}
	pg := letterPage{Counts: countsOf(counts), Letters: ls, From: from, Prev: max(from-lettersPerPage, 0)}
	if from+lettersPerPage < m.Letters {
		pg.Next = from + lettersPerPage
	}
	return pg, true
}

func (h *Handler) mailingPage(r *request, m pipeline.Mailing) {
	pg, ok := h.letterPageOf(r, m)
	if !ok {
		return
	}
	d := mailingData{M: m, Counts: pg.Counts, Letters: pg.Letters, From: pg.From, Prev: pg.Prev, Next: pg.Next}
	for _, l := range pg.Letters {
		if l.Status == pipeline.Held && l.Hold == pipeline.HoldCustomer {
			d.Held++
		}
	}
	if len(m.Settings) > 0 {
		var buf bytes.Buffer
		if jsonIndent(&buf, m.Settings) == nil {
			d.Settings = buf.String()
		}
	}
	title := "Mailing " + m.EPID
	h.page(r, fasthttp.StatusOK, "mailing", title, d, "")
}

// act releases or cancels the letters ticked on the mailing's page (the
// whole mailing when the form says so), and goes back to the page with
// what happened.
func (h *Handler) act(r *request, m pipeline.Mailing, verb string, do func(string, pipeline.Selector, string) ([]pipeline.Outcome, error)) {
	args := r.ctx.PostArgs()
	sel := pipeline.Selector{EPID: m.EPID}
	whole := string(args.Peek("whole")) == "1"
	for _, v := range args.PeekMulti("letter") {
		i, err := strconv.Atoi(string(v))
		if err != nil || i < 0 || i >= m.Letters {
			h.page(r, fasthttp.StatusBadRequest, "error", "Bad request", nil, "The form named a letter this mailing does not have.")
			return
		}
		sel.Indexes = append(sel.Indexes, i)
	}
	back := Prefix + "mailings/" + m.EPID
	if len(sel.Indexes) == 0 && !whole {
		h.sessions.setFlash(r.id, "Tick the letters first: nothing was "+verb+".")
		r.ctx.Redirect(back, fasthttp.StatusSeeOther)
		return
	}
	out, err := do(r.se.Account, sel, "portal user "+r.se.User)
	if errors.Is(err, pipeline.ErrNotFound) {
		h.notFound(r)
		return
	}
	if err != nil {
		h.internalError(r, err)
		return
	}
	h.sessions.setFlash(r.id, summary(verb, out))
	r.ctx.Redirect(back, fasthttp.StatusSeeOther)
}

// summary tells what an action did: how many letters changed, and why
// the others did not (grouped by reason).
func summary(verb string, out []pipeline.Outcome) string {
	changed := 0
	why := map[string][]string{}
	var reasons []string
	for _, o := range out {
		if o.Changed {
			changed++
			continue
		}
		if _, ok := why[o.Why]; !ok {
			reasons = append(reasons, o.Why)
		}
		why[o.Why] = append(why[o.Why], strconv.Itoa(o.Idx+1))
	}
	s := fmt.Sprintf("%d letter%s %s.", changed, plural(changed), verb)
	for _, w := range reasons {
		n := why[w]
		list := strings.Join(n[:min(len(n), 10)], ", ")
		if len(n) > 10 {
			list += fmt.Sprintf(" and %d more", len(n)-10)
		}
		s += fmt.Sprintf(" Not %s: letter%s %s (%s).", verb, plural(len(n)), list, w)
	}
	return s
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

type letterData struct {
	M       pipeline.Mailing
	L       pipeline.Letter
	Address string // the correction box's text
	Verdict *pipeline.Verdict
	Outcome string
	CanFix  bool
	// Suggestion is the address check's suggestion for the address in
	// the correction box (held letters).
	Suggestion []string
	CanPreview bool
}

// letterOf reads letter idx of a mailing already checked to be the
// session's account's, answering the request itself when it cannot.
func (h *Handler) letterOf(r *request, m pipeline.Mailing, idx int) (pipeline.Letter, bool) {
	ls, err := h.mr.Store().Letters(m.EPID, idx, 1)
	if err != nil {
		h.internalError(r, err)
		return pipeline.Letter{}, false
	}
	if len(ls) != 1 || ls[0].Idx != idx {
		h.notFound(r)
		return pipeline.Letter{}, false
	}
	return ls[0], true
}

func (h *Handler) letterPage(r *request, m pipeline.Mailing, idx int, text string, v *pipeline.Verdict, outcome string) {
	l, ok := h.letterOf(r, m, idx)
	if !ok {
		return
	}
	d := letterData{M: m, L: l, Address: text, Verdict: v, Outcome: outcome,
		CanFix: correctable(l)}
	if text == "" {
		d.Address = strings.Join(l.Postal, "\n")
	}
	d.CanPreview = h.cfg.Preview != nil && len(l.Documents) > 0 && !m.Purged && l.Status != pipeline.Cancelled
	if d.CanFix {
		if lines, ok := pipeline.PostalText(d.Address); ok {
			if v, sug, ok := h.mr.SuggestAddress(lines); ok && len(sug) > 0 && strings.Join(sug, "\n") != strings.Join(lines, "\n") {
				d.Suggestion = sug
				if d.Verdict == nil {
					d.Verdict = &v
				}
			}
		}
	}
	status := fasthttp.StatusOK
	if outcome != "" {
		status = fasthttp.StatusUnprocessableEntity
	}
	h.page(r, status, "letter", fmt.Sprintf("Letter %d of %s", idx+1, m.EPID), d, "")
}

// correct replaces a held letter's address: the engine's verdict is shown
// either way; an address that passes sends the letter on.
func (h *Handler) correct(r *request, m pipeline.Mailing, idx int) {
	text := string(r.ctx.PostArgs().Peek("address"))
	lines, ok := pipeline.PostalText(text)
	if !ok {
		h.letterPage(r, m, idx, text, nil, "Type the address on 1 to 7 lines.")
		return
	}
	out, v, err := h.mr.Correct(r.se.Account, pipeline.Selector{EPID: m.EPID, Indexes: []int{idx}}, lines, "portal user "+r.se.User)
	if errors.Is(err, pipeline.ErrNotFound) {
		h.notFound(r)
		return
	}
	if err != nil {
		h.internalError(r, err)
		return
	}
	if len(out) != 1 || !out[0].Changed {
		why := "the address was not changed"
		if len(out) == 1 && out[0].Why != "" {
			why = out[0].Why
		}
		h.letterPage(r, m, idx, text, &v, "Not corrected: "+why+".")
		return
	}
	msg := fmt.Sprintf("Letter %d corrected: the address check says %s", idx+1, v.Status)
	if v.Message != "" {
		msg += " (" + v.Message + ")"
	}
	h.sessions.setFlash(r.id, msg+"; it is now "+out[0].Status+".")
	r.ctx.Redirect(fmt.Sprintf("%smailings/%s/letters/%d", Prefix, m.EPID, idx), fasthttp.StatusSeeOther)
}

func (h *Handler) failoversPage(r *request) {
	ls, err := h.mr.Store().Failovers(r.se.Account, 500)
	if err != nil {
		h.internalError(r, err)
		return
	}
	h.page(r, fasthttp.StatusOK, "failovers", "Failovers", ls, "")
}

// jsonIndent lays out a mailing's settings for reading: indented, and
// with the characters the store escapes for HTML (\u003c for <, \u003e,
// \u0026) written as themselves, since the page escapes them its own way
// (html/template) and a customer reads "<b>" better than "\u003cb\u003e".
func jsonIndent(dst *bytes.Buffer, src []byte) error {
	var ind bytes.Buffer
	if err := json.Indent(&ind, src, "", "  "); err != nil {
		return err
	}
	b := ind.Bytes()
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' || i+1 >= len(b) {
			dst.WriteByte(b[i])
			continue
		}
		if b[i+1] == 'u' && i+6 <= len(b) {
			switch string(b[i+2 : i+6]) {
			case "003c", "003C":
				dst.WriteByte('<')
				i += 5
				continue
			case "003e", "003E":
				dst.WriteByte('>')
				i += 5
				continue
			case "0026":
				dst.WriteByte('&')
				i += 5
				continue
			}
		}
		// any other escape, \\ included, stays as it is, whole
		dst.Write(b[i : i+2])
		i++
	}
	return nil
}
