package e2e

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/lodge-mail/lodge/internal/testdoc/mailpdf"
	"github.com/lodge-mail/lodge/internal/testenv"
)

// portalBrowser is a headless Chromium signed in (or not) to an instance's
// portal, one tab, with where its screenshots go.
type portalBrowser struct {
	t         *testing.T
	in        *instance
	ctx       context.Context // the tab's chromedp context; no timeout of its own
	artifacts string
	shot      int
	axe       string // axe.min.js
}

// newPortalBrowser starts Debian's Chromium headless with a fresh profile.
// It trusts the instance's self-signed certificate by its public key
// (--ignore-certificate-errors-spki-list), not every certificate: a
// loopback server with any other key still fails the TLS handshake.
func newPortalBrowser(t *testing.T, in *instance) *portalBrowser {
	t.Helper()
	exe := testenv.Tool(t, "chromium")
	raw, err := os.ReadFile(in.cert)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(raw)
	if block == nil {
		t.Fatalf("%s: no PEM block", in.cert)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	spki := sha256.Sum256(cert.RawSubjectPublicKeyInfo)

	artifacts := t.TempDir()
	if dir := os.Getenv("LODGE_TEST_ARTIFACTS"); dir != "" {
		artifacts = filepath.Join(dir, t.Name())
		if err := os.MkdirAll(artifacts, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(exe),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("ignore-certificate-errors-spki-list", base64.StdEncoding.EncodeToString(spki[:])),
	)
	ctx, cancelTab := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc() // waits for Chromium to exit
	})
	// The first Run starts the browser and lives as long as its context:
	// no timeout on it (Allocate gives Chromium 20 s to answer).
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	if in.shared() {
		// Chromium keeps a connection for the next requests, which would
		// keep a session on one node: asked to close each, it opens a
		// new one, which the balancer gives the next node.
		if _, err := chromedp.Call(ctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{"Connection": "close"}}); err != nil {
			t.Fatal(err)
		}
	}
	axe, err := os.ReadFile(filepath.Join(testenv.NpmCI(t, filepath.Join("testdata", "axe"), "axe", filepath.Join("axe-core", "axe.min.js")), "axe-core", "axe.min.js"))
	if err != nil {
		t.Fatal(err)
	}
	return &portalBrowser{t: t, in: in, ctx: ctx, artifacts: artifacts, axe: string(axe)}
}

// axeViolation is one rule axe-core finds broken, with where.
type axeViolation struct {
	ID     string   `json:"id"`
	Impact string   `json:"impact"`
	Help   string   `json:"help"`
	Nodes  []string `json:"nodes"`
}

// checkAccessibility runs axe-core in the page (injected through the
// DevTools protocol, which the page's CSP does not govern) and fails on
// every serious or critical violation.
func (b *portalBrowser) checkAccessibility(page string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](b.axe)); err != nil {
		b.t.Fatalf("%s: loading axe-core: %v", page, err)
	}
	found, err := chromedp.Run(ctx, chromedp.Evaluate[[]axeViolation](`axe.run(document, {resultTypes: ["violations"]}).then(r =>
		r.violations.filter(v => v.impact === "serious" || v.impact === "critical").map(v => ({
			id: v.id, impact: v.impact, help: v.help,
			nodes: v.nodes.map(n => n.target.join(" ") + ": " + n.failureSummary)})))`, chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("%s: axe.run: %v", page, err)
	}
	for _, v := range found {
		b.t.Errorf("%s: accessibility: %s (%s): %s\n\t%s", page, v.ID, v.Impact, v.Help, strings.Join(v.Nodes, "\n\t"))
	}
}

// do runs the steps with a 30 s bound.
func (b *portalBrowser) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.t.Fatalf("%s: %v\nthe page:\n%s", what, err, b.textNoFail())
	}
}

// load runs the steps, which navigate (a click on a link or a submit
// button, or Navigate), and waits for the new page to load; the page's
// HTTP status must be want.
func (b *portalBrowser) load(what string, want int64, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	resp, err := chromedp.RunResponse(ctx, steps...)
	if err != nil {
		b.t.Fatalf("%s: %v\nthe page:\n%s", what, err, b.textNoFail())
	}
	if resp.Status != want {
		b.t.Fatalf("%s: HTTP %d (%s), want %d\nthe page:\n%s", what, resp.Status, resp.URL, want, b.textNoFail())
	}
}

// text is what the page shows (its body's innerText).
func (b *portalBrowser) text() string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
	if err != nil {
		b.t.Fatalf("reading the page: %v", err)
	}
	return s
}

func (b *portalBrowser) textNoFail() string {
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	if err != nil {
		return "(unreadable: " + err.Error() + ")"
	}
	return s
}

// expect checks that the page shows every string of want and none of
// notWant (a nil or empty list checks nothing).
func (b *portalBrowser) expect(step string, want []string, notWant ...string) {
	b.t.Helper()
	got := b.text()
	for _, w := range want {
		if !strings.Contains(got, w) {
			b.t.Fatalf("%s: the page does not show %q:\n%s", step, w, got)
		}
	}
	for _, w := range notWant {
		if strings.Contains(got, w) {
			b.t.Fatalf("%s: the page shows %q:\n%s", step, w, got)
		}
	}
}

// location is the page's URL.
func (b *portalBrowser) location() string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	u, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		b.t.Fatal(err)
	}
	return u
}

// screenshot saves a full-page PNG of the page as NN-name.png, then checks
// the page's accessibility.
func (b *portalBrowser) screenshot(name string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	b.shot++
	path := filepath.Join(b.artifacts, fmt.Sprintf("%02d-%s.png", b.shot, name))
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot: %s", path)
	b.checkAccessibility(name)
}

// signIn opens the sign-in page, signs in with the name and password and
// checks that the portal then shows the account's mailings.
func (b *portalBrowser) signIn(name, password string) {
	b.t.Helper()
	b.load("open the sign-in page", 200, chromedp.Navigate(b.in.url+"/portal/signin"))
	b.do("type "+name+"'s name and password",
		chromedp.SendKeys(chromedp.ID("name"), name),
		chromedp.SendKeys(chromedp.ID("password"), password))
	b.load("sign in as "+name, 200, chromedp.Click(chromedp.CSS(`main form button[type=submit]`)))
	if u := b.location(); u != b.in.url+"/portal/mailings" {
		b.t.Fatalf("after signing in as %s at %s, want the mailings", name, u)
	}
}

// waitLetters waits until get_letter_status says each reference has the
// status (and hold, after a space) given.
func waitLetters(t *testing.T, in *instance, want map[string]string) {
	t.Helper()
	var refs []string
	for ref := range want {
		refs = append(refs, ref)
	}
	var got []map[string]any
	testenv.WaitFor(t, func() bool {
		got = letterStatuses(t, in, refs...)
		if len(got) != len(refs) {
			return false
		}
		for i, l := range got {
			st := fmt.Sprint(l["status"])
			if h, ok := l["hold"]; ok && st == "Held" {
				st += " " + fmt.Sprint(h)
			}
			if st != want[refs[i]] {
				return false
			}
		}
		return true
	}, func() string { return fmt.Sprintf("letters %v, got %v", want, got) })
}

// TestPortalBrowser drives the customer portal in a real browser (Debian
// Chromium through the DevTools protocol) against the real binary: a
// clerk of the demo account signs in, finds a mailing on customer hold by
// its EPID, releases it, corrects the invalid address of the letter that
// stays held, cancels another letter, looks at the failovers and signs
// out. After each step the page must show the new state and the mailroom
// (get_letter_status, another client) must have it too. Every page is
// saved as a full-page screenshot ($LODGE_TEST_ARTIFACTS/TestPortalBrowser/
// single and three_nodes when set, else the test's temporary folder).
func TestPortalBrowser(t *testing.T) { eachSetup(t, testPortalBrowser) }

func testPortalBrowser(t *testing.T, start startFunc) {
	testenv.Tool(t, "chromium") // skip before starting lodge when there is none
	const clerkPass = "clerk's long password 7"
	in := start(t, map[string]string{"clerk": clerkPass}, "-cancel-window", "1h")
	doc := mailDoc(t, mailpdf.Page{Text: "Portal letter one"}, mailpdf.Page{Text: "Portal letter two"}, mailpdf.Page{Text: "Portal letter three"})
	epid, res := sendMailing(t, in, "letters.pdf", doc, "m.json", `{"cust_hold":true,"title":"Browser test mailing","letters":[
		{"postal":["Jo Citizen","10 Jones St","Ultimo NSW 2007"],"page_start":0,"page_end":0,"reference":"PB-1"},
		{"postal":["Jo Citizen","1 Nowhere Rd","Atlantis VIC 2999"],"page_start":1,"page_end":1,"reference":"PB-2"},
		{"postal":["Jo Citizen","10 Jones St","Ultimo NSW 2007"],"page_start":2,"page_end":2,"reference":"PB-3"}]}`)
	if !strings.Contains(fmt.Sprint(res["warnings"]), "invalid postal address") {
		t.Fatalf("end_session does not warn of the invalid address: %v", res)
	}
	waitLetters(t, in, map[string]string{"PB-1": "Held customer", "PB-2": "Held address", "PB-3": "Held customer"})

	b := newPortalBrowser(t, in)
	mailingURL := in.url + "/portal/mailings/" + epid

	// not signed in: the portal leads to the sign-in form
	b.load("open the portal", 200, chromedp.Navigate(in.url+"/portal/"))
	if u := b.location(); u != in.url+"/portal/signin" {
		t.Fatalf("the portal before sign-in is at %s, want the sign-in page", u)
	}
	b.expect("before sign-in", []string{"Sign in", "User name", "Password"}, epid)
	b.screenshot("signin")

	// sign in
	b.do("type the name and password",
		chromedp.SendKeys(chromedp.ID("name"), "clerk"),
		chromedp.SendKeys(chromedp.ID("password"), clerkPass))
	b.load("sign in", 200, chromedp.Click(chromedp.CSS(`main form button[type=submit]`)))
	if u := b.location(); u != in.url+"/portal/mailings" {
		t.Fatalf("after sign-in at %s, want the mailings", u)
	}
	b.expect("signed in", []string{"clerk · DEM00001", "Sign out", epid, "Browser test mailing", "on hold"})
	b.screenshot("mailings")

	// find the mailing by its EPID: its page
	b.do("type the EPID", chromedp.SendKeys(chromedp.ID("q"), strings.ToLower(epid)))
	b.load("search", 200, chromedp.Click(chromedp.CSS(`form.search button[type=submit]`)))
	b.expect("the mailing found", []string{"Mailing " + epid, "on hold", "This mailing is on hold until you release it.",
		"letters.pdf", "PB-1", "PB-2", "PB-3", "invalid", "Letters 1–3 of 3"})
	if u := b.location(); u != mailingURL {
		t.Fatalf("the search for %s led to %s, want %s", epid, u, mailingURL)
	}
	b.screenshot("mailing-on-hold")

	// release the whole mailing: the customer's holds end, the letter
	// held for its address stays held
	b.load("release", 200, chromedp.Click(chromedp.CSS(`form.bar button[type=submit]`)))
	b.expect("released", []string{"2 letters released.", "Not released: letter 2"}, "This mailing is on hold")
	waitLetters(t, in, map[string]string{"PB-1": "Received", "PB-2": "Held address", "PB-3": "Received"})
	b.screenshot("mailing-released")

	// open the held letter and correct its address
	b.load("open letter 2", 200, chromedp.Click(chromedp.CSS(`a[href="/portal/mailings/`+epid+`/letters/1"]`)))
	b.expect("letter 2", []string{"Letter 2", "Held", "1 Nowhere Rd", "Correct the address", "invalid"})
	b.screenshot("letter-held")
	b.do("type the corrected address",
		chromedp.Clear(chromedp.ID("address")),
		chromedp.SendKeys(chromedp.ID("address"), "Jo Citizen\n10 Jones St\nMelbourne VIC 3000"))
	b.load("correct", 200, chromedp.Click(chromedp.CSS(`form[action$="/correct"] button[type=submit]`)))
	b.expect("corrected", []string{"Letter 2 corrected", "Received", "Melbourne VIC 3000"}, "Correct the address")
	waitLetters(t, in, map[string]string{"PB-1": "Received", "PB-2": "Received", "PB-3": "Received"})
	b.screenshot("letter-corrected")

	// cancel letter 1 from the mailing's page
	b.load("back to the mailing", 200, chromedp.Click(chromedp.CSS(`p.crumbs a[href="/portal/mailings/`+epid+`"]`)))
	b.do("tick letter 1", chromedp.Click(chromedp.ID("l0")))
	b.load("cancel", 200, chromedp.Click(chromedp.CSS(`button.danger`)))
	b.expect("cancelled", []string{"1 letter cancelled.", "Cancelled"})
	waitLetters(t, in, map[string]string{"PB-1": "Cancelled", "PB-2": "Received", "PB-3": "Received"})
	b.screenshot("letter-cancelled")

	// the failovers: none for a postal mailing
	b.load("failovers", 200, chromedp.Click(chromedp.CSS(`nav a[href="/portal/failovers"]`)))
	b.expect("failovers", []string{"Failovers", "No letter of your account has failed over to post."})
	b.screenshot("failovers")

	// sign out: the mailings page leads to the sign-in form again
	b.load("sign out", 200, chromedp.Click(chromedp.CSS(`form.signout button[type=submit]`)))
	b.expect("signed out", []string{"Sign in", "User name"}, "Sign out", "clerk · DEM00001")
	b.screenshot("signed-out")
	for _, u := range []string{in.url + "/portal/mailings", mailingURL} {
		b.load("open "+u+" after sign-out", 200, chromedp.Navigate(u))
		if at := b.location(); at != in.url+"/portal/signin" {
			t.Fatalf("after sign-out %s leads to %s, want the sign-in page", u, at)
		}
	}
	b.expect("after sign-out", []string{"Sign in"}, epid, "PB-2")
	waitLetters(t, in, map[string]string{"PB-1": "Cancelled", "PB-2": "Received", "PB-3": "Received"})
}
