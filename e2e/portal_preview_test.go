package e2e

import (
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/lodge-mail/lodge/internal/testdoc/mailpdf"
	"github.com/lodge-mail/lodge/internal/testenv"
)

// TestPortalPreviewAndSuggestions: in Chromium against the real binary, a
// letter's preview is its PDF (read back with pdftotext), and the
// correction box of a held letter shows the address check's suggestion
// as the customer types (static/app.js), which one click takes.
func TestPortalPreviewAndSuggestions(t *testing.T) { eachSetup(t, testPortalPreviewAndSuggestions) }

func testPortalPreviewAndSuggestions(t *testing.T, start startFunc) {
	testenv.Tool(t, "chromium")
	pdftotext := testenv.Tool(t, "pdftotext")
	const pass = "previewer's long password 3"
	in := start(t, map[string]string{"previewer": pass}, "-cancel-window", "1h")
	doc := mailDoc(t, mailpdf.Page{Address: []string{"Jo Citizen", "10 Jones St", "ULTIMO NSW 2007"}, Text: "Preview body text"},
		mailpdf.Page{Text: "Letter needing a new address"})
	epid, _ := sendMailing(t, in, "letters.pdf", doc, "m.json", `{"title":"Preview test","letters":[
		{"postal":["Jo Citizen","10 Jones St","Ultimo NSW 2007"],"page_start":0,"page_end":0,"reference":"PV-1"},
		{"postal":["Jo Citizen","1 Nowhere Rd","Atlantis VIC 2999"],"page_start":1,"page_end":1,"reference":"PV-2"}]}`)
	waitLetters(t, in, map[string]string{"PV-1": "Received", "PV-2": "Held address"})

	b := newPortalBrowser(t, in)
	b.signIn("previewer", pass)

	// the preview of letter 1: a PDF of its page as it will print
	letter1 := "/portal/mailings/" + epid + "/letters/0"
	b.load("open letter 1", 200, chromedp.Navigate(in.url+letter1))
	b.expect("letter 1", []string{"Letter 1", "Preview the letter (PDF)"})
	b.screenshot("letter-with-preview")
	type fetched struct {
		Status int    `json:"status"`
		Type   string `json:"type"`
		Body   string `json:"body"` // base64
	}
	ctx := b.ctx
	got, err := chromedp.Run(ctx, chromedp.Evaluate[fetched](`(async () => {
		const r = await fetch(document.querySelector('a[href$="/preview.pdf"]').href, {credentials: "same-origin"});
		const buf = new Uint8Array(await r.arrayBuffer());
		let s = "";
		for (let i = 0; i < buf.length; i += 8192) s += String.fromCharCode.apply(null, buf.subarray(i, i + 8192));
		return {status: r.status, type: r.headers.get("content-type"), body: btoa(s)};
	})()`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != 200 || got.Type != "application/pdf" {
		t.Fatalf("preview: HTTP %d, %s", got.Status, got.Type)
	}
	raw, err := base64.StdEncoding.DecodeString(got.Body)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "preview.pdf")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	text, err := exec.Command(pdftotext, path, "-").Output()
	if err != nil || !strings.Contains(string(text), "Preview body text") || !strings.Contains(string(text), "Jo Citizen") {
		t.Fatalf("the preview reads %q (%v)", text, err)
	}

	// the held letter: typing a misspelt locality shows the suggestion
	b.load("open letter 2", 200, chromedp.Navigate(in.url+"/portal/mailings/"+epid+"/letters/1"))
	b.expect("letter 2", []string{"Correct the address", "invalid"})
	b.do("type a misspelt address",
		chromedp.Clear(chromedp.ID("address")),
		chromedp.SendKeys(chromedp.ID("address"), "Jo Citizen\n10 Jones St\nUltimmo NSW 2007"),
		chromedp.WaitVisible(chromedp.CSS(`#suggestion button.secondary`)))
	b.expect("suggested", []string{"unmatched", "Suggested: JO CITIZEN, 10 JONES ST, ULTIMO NSW 2007", "Use this address"})
	b.screenshot("letter-suggestion")
	b.do("take the suggestion", chromedp.Click(chromedp.CSS(`#suggestion button.secondary`)),
		chromedp.WaitVisible(chromedp.CSS(`#suggestion .v-matched`)))
	value, err := chromedp.Run(ctx, chromedp.Value(chromedp.ID("address")))
	if err != nil {
		t.Fatal(err)
	}
	if value != "JO CITIZEN\n10 JONES ST\nULTIMO NSW 2007" {
		t.Fatalf("the box holds %q after taking the suggestion", value)
	}
	b.load("correct", 200, chromedp.Click(chromedp.CSS(`form[action$="/correct"] button[type=submit]`)))
	b.expect("corrected", []string{"Letter 2 corrected", "matched", "ULTIMO NSW 2007"}, "Correct the address")
	waitLetters(t, in, map[string]string{"PV-1": "Received", "PV-2": "Received"})
}
