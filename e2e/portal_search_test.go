package e2e

import (
	"net/url"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/lodge-mail/lodge/internal/testdoc/mailpdf"
	"github.com/lodge-mail/lodge/internal/testenv"
)

// TestPortalSearch searches the mailings in a real browser against the
// real binary: three mailings sent through the upload interface with a
// title and department in their metadata; a search by part of a title,
// in another case, finds the two it names and not the third; adding a
// status keeps the one with a held letter; a department finds its
// mailing; a search that matches nothing says so. Each page is saved as
// a screenshot and checked by axe-core, the form at a phone's width too.
func TestPortalSearch(t *testing.T) { eachSetup(t, testPortalSearch) }

func testPortalSearch(t *testing.T, start startFunc) {
	testenv.Tool(t, "chromium") // skip before starting lodge when there is none
	const clerkPass = "clerk's long password 8"
	in := start(t, map[string]string{"clerk": clerkPass}, "-cancel-window", "1h")
	send := func(meta string) string {
		t.Helper()
		doc := mailDoc(t, mailpdf.Page{Text: "Search letter"})
		epid, _ := sendMailing(t, in, "letter.pdf", doc, "m.json", meta)
		return epid
	}
	invoices := send(`{"cust_hold":true,"title":"Quarterly invoices","department":"Accounts receivable","letters":[
		{"postal":["Jo Citizen","10 Jones St","Ultimo NSW 2007"],"page_start":0,"page_end":0,"reference":"PS-1"}]}`)
	reminders := send(`{"title":"Payment reminders","department":"Collections","letters":[
		{"postal":["Jo Citizen","10 Jones St","Ultimo NSW 2007"],"page_start":0,"page_end":0,"reference":"PS-2"}]}`)
	newsletter := send(`{"title":"Quarterly newsletter","department":"Marketing","letters":[
		{"postal":["Jo Citizen","10 Jones St","Ultimo NSW 2007"],"page_start":0,"page_end":0,"reference":"PS-3"}]}`)
	waitLetters(t, in, map[string]string{"PS-1": "Held customer", "PS-2": "Received", "PS-3": "Received"})

	b := newPortalBrowser(t, in)
	b.signIn("clerk", clerkPass)
	b.expect("signed in", []string{invoices, reminders, newsletter, "Quarterly invoices", "Accounts receivable",
		"EPID, reference, title or department", "Letters in status", "Created from", "Created to"})
	b.screenshot("search-form")

	search := func(what, q, status string) {
		t.Helper()
		b.do(what+": fill the form",
			chromedp.Clear(chromedp.ID("q")),
			chromedp.SendKeys(chromedp.ID("q"), q),
			chromedp.SetValue(chromedp.ID("status"), status))
		b.load(what, 200, chromedp.Click(chromedp.CSS(`form.search button[type=submit]`)))
	}

	// part of a title, in another case: the two quarterly mailings
	search("search by title", "QUARTERLY", "")
	b.expect("search by title", []string{"Search", invoices, newsletter, "Quarterly newsletter", "All mailings"}, reminders, "Payment reminders")
	u, err := url.Parse(b.location())
	if err != nil || u.Query().Get("q") != "QUARTERLY" {
		t.Fatalf("the search's address %s does not carry the text", b.location())
	}
	b.screenshot("search-title")

	// and a status: the one whose letter is held
	search("search by title and status", "quarterly", "Held")
	b.expect("search by title and status", []string{invoices, "1 Held"}, newsletter, reminders)
	b.screenshot("search-title-status")

	// a department
	search("search by department", "collect", "")
	b.expect("search by department", []string{reminders, "Collections"}, invoices, newsletter)

	// nothing
	search("search for nothing", "no such title", "")
	b.expect("search for nothing", []string{"No mailing or letter of your account matches"}, invoices, reminders, newsletter)
	b.screenshot("search-none")

	// the form at a phone's width
	b.do("a phone's width", chromedp.EmulateViewport(390, 844))
	search("search on a phone", "quarterly", "")
	b.expect("search on a phone", []string{invoices, newsletter}, reminders)
	b.screenshot("search-phone")
}
