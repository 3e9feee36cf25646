package portal_test

import (
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/lodge-mail/lodge/auth"
	"github.com/lodge-mail/lodge/pipeline"
	"github.com/lodge-mail/lodge/portal"
)

// Sizes of the performance targets (README, Performance): an account with
// 100,000 mailings, one of them of 10,000 letters.
const (
	benchMailings = 100_000
	benchBig      = 10_000
	benchAccount  = "ABC00001"
	benchBigEPID  = "BIG00001"
	// every benchRare-th mailing has the rare title: a search for it
	// reads the whole account (its matches do not fill a page)
	benchRare      = 10_000
	benchRareTitle = "Annual shareholder report"
)

// BenchmarkPortal times the portal's handler (routing, session, store
// reads, rendered HTML) on a real Pebble store holding an account of
// 100,000 mailings (2 letters each, statuses mixed) and one mailing of
// 10,000 letters:
//
//	go test ./portal -run '^$' -bench BenchmarkPortal -benchmem -benchtime 200x
//
// Building the store takes a minute or so; each case checks its page
// says what it should.
func BenchmarkPortal(b *testing.B) {
	h, cookie := benchPortal(b)
	get := func(b *testing.B, path string) string {
		b.Helper()
		var req fasthttp.Request
		req.SetRequestURI(path)
		req.Header.Set("X-Forwarded-Proto", "https")
		req.Header.SetCookie(portal.CookieName, cookie)
		var ctx fasthttp.RequestCtx
		ctx.Init(&req, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}, nil)
		h.Serve(&ctx)
		if ctx.Response.StatusCode() != 200 {
			b.Fatalf("%s: %d %s", path, ctx.Response.StatusCode(), ctx.Response.Body())
		}
		return string(ctx.Response.Body())
	}
	run := func(name, path string, want ...string) {
		b.Run(name, func(b *testing.B) {
			body := get(b, path)
			for _, w := range want {
				if !strings.Contains(body, w) {
					b.Skipf("%s does not show %q: not supported by this version", path, w)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				get(b, path)
			}
		})
	}
	first := get(b, "/portal/mailings")
	older := regexp.MustCompile(`href="(/portal/mailings\?[^"]+)"[^>]*>Older`).FindStringSubmatch(first)
	if older == nil {
		b.Fatalf("no link to older mailings on the first page")
	}
	second := strings.ReplaceAll(older[1], "&amp;", "&")
	run("list/first", "/portal/mailings", benchEPID(benchMailings-1))
	run("list/second", second, benchEPID(benchMailings-51))
	run("search/title-rare", "/portal/mailings?q="+url.QueryEscape(strings.ToLower(benchRareTitle)), benchEPID(benchRare-1))
	run("search/title-common", "/portal/mailings?q=statements", benchEPID(benchMailings-2))
	run("mailing/10000-letters", "/portal/mailings/"+benchBigEPID, "Letters 1–100 of 10000")
	run("mailing/10000-letters-last-page", "/portal/mailings/"+benchBigEPID+"?from=9900", "Letters 9901–10000 of 10000")
}

func benchEPID(i int) string { return fmt.Sprintf("E%07d", i) }

var benchStatuses = []string{pipeline.Received, pipeline.Held, pipeline.Processing, pipeline.Lodged, pipeline.Cancelled}

func benchLetter(epid string, idx int, created time.Time, status string) pipeline.Letter {
	l := pipeline.Letter{EPID: epid, Account: benchAccount, Idx: idx, Reference: fmt.Sprintf("R%s-%05d", epid, idx),
		Status: status, Channels: []string{"postal"}, Postal: []string{"Jo Citizen", fmt.Sprintf("%d Jones St", idx+1), "Ultimo NSW 2007"},
		Address: &pipeline.Verdict{Status: "matched", Nation: "AUS"}, Price: 123, Pages: 2, Sheets: 1, Envelope: "DL",
		Postage: "regular", Postcode: "2007", CustomData: map[string]string{"name": "Jo", "account_no": fmt.Sprint(100000 + idx)},
		Received: created}
	l.Add(created, pipeline.Received, "")
	if status != pipeline.Received {
		l.SetStatus(created.Add(time.Hour), status, "")
	}
	return l
}

func benchMailing(epid string, created time.Time, title, dept string, n int) pipeline.Mailing {
	settings := fmt.Sprintf(`{"title":%q,"department":%q,"purchase_order":"PO-7731","duplex":true,"colour":false,"postage":"regular",`+
		`"customer_email":"ops@example.com","profile":"statements","cust_hold":false,"envelope":"DL","stock":"80gsm","insert":"none"}`, title, dept)
	return pipeline.Mailing{EPID: epid, Account: benchAccount, User: "jo", Created: created, Title: title, Department: dept,
		PurchaseOrder: "PO-7731", Settings: []byte(settings), Production: pipeline.Production{Duplex: true, Postage: "regular"},
		Files:   []pipeline.File{{Name: "statements.pdf", Kind: "pdf", Path: "/var/lib/lodge/x/statements.pdf", Pages: 2 * n}},
		Letters: n, ReleaseAt: created.Add(time.Hour)}
}

// benchPortal builds the store (through Store.Update, many mailings a
// commit: the real write path without 100,000 fsyncs) and signs in.
func benchPortal(b *testing.B) (*portal.Handler, string) {
	b.Helper()
	dir := b.TempDir()
	st, err := pipeline.OpenPebble(filepath.Join(dir, "mailroom"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	t0 := time.Date(2020, 1, 1, 9, 0, 0, 0, time.UTC)
	const perTx = 500
	for start := 0; start < benchMailings; start += perTx {
		var epids []string
		for i := start; i < start+perTx && i < benchMailings; i++ {
			epids = append(epids, benchEPID(i))
		}
		err := st.Update(epids, func(tx pipeline.Tx) error {
			for _, epid := range epids {
				var i int
				fmt.Sscanf(epid, "E%d", &i)
				title := fmt.Sprintf("Statements %d", i)
				if i%benchRare == benchRare-1 {
					title = benchRareTitle
				}
				created := t0.Add(time.Duration(i) * time.Minute)
				tx.PutMailing(benchMailing(epid, created, title, []string{"Billing", "Collections", "HR"}[i%3], 2))
				tx.PutLetter(benchLetter(epid, 0, created, benchStatuses[i%len(benchStatuses)]))
				tx.PutLetter(benchLetter(epid, 1, created, pipeline.Received))
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	created := t0.Add(benchMailings / 2 * time.Minute).Add(time.Second)
	err = st.Update([]string{benchBigEPID}, func(tx pipeline.Tx) error {
		tx.PutMailing(benchMailing(benchBigEPID, created, "Big statements", "Billing", benchBig))
		for i := 0; i < benchBig; i++ {
			tx.PutLetter(benchLetter(benchBigEPID, i, created, benchStatuses[i%len(benchStatuses)]))
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}

	as, err := auth.Open(filepath.Join(dir, "auth"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { as.Close() })
	if _, err := as.AddAccount(benchAccount, "bench"); err != nil {
		b.Fatal(err)
	}
	if _, err := as.AddUser(benchAccount, "jo", joPass); err != nil {
		b.Fatal(err)
	}
	mr := pipeline.New(st, nil, pipeline.Config{}, slog.New(slog.DiscardHandler))
	h := portal.New(portal.Config{Mailroom: mr, Auth: auth.NewAuthenticator(as, auth.Config{}),
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, Log: slog.New(slog.DiscardHandler)})

	// sign in: the form's session and token, then the credentials
	do := func(req *fasthttp.Request) *fasthttp.RequestCtx {
		req.Header.Set("X-Forwarded-Proto", "https")
		ctx := new(fasthttp.RequestCtx)
		ctx.Init(req, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}, nil)
		h.Serve(ctx)
		return ctx
	}
	cookieOf := func(ctx *fasthttp.RequestCtx) string {
		var c fasthttp.Cookie
		c.SetKey(portal.CookieName)
		if !ctx.Response.Header.Cookie(&c) {
			b.Fatalf("no session cookie: %d %s", ctx.Response.StatusCode(), ctx.Response.Body())
		}
		return string(c.Value())
	}
	var req fasthttp.Request
	req.SetRequestURI("/portal/signin")
	ctx := do(&req)
	pre := cookieOf(ctx)
	token := csrfRE.FindStringSubmatch(string(ctx.Response.Body()))
	if token == nil {
		b.Fatalf("no CSRF token on the sign-in form")
	}
	req.Reset()
	req.SetRequestURI("/portal/signin")
	req.Header.SetMethod("POST")
	req.Header.SetContentType("application/x-www-form-urlencoded")
	req.Header.SetCookie(portal.CookieName, pre)
	req.SetBodyString(url.Values{"csrf": {token[1]}, "name": {"jo"}, "password": {joPass}}.Encode())
	ctx = do(&req)
	if ctx.Response.StatusCode() != 303 {
		b.Fatalf("sign-in: %d %s", ctx.Response.StatusCode(), ctx.Response.Body())
	}
	return h, cookieOf(ctx)
}
