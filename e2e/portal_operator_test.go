package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/lodge-mail/lodge/internal/testdoc/mailpdf"
	"github.com/lodge-mail/lodge/internal/testenv"
)

// TestPortalOperator drives the operator view and the usage page in a
// real browser against the real binary: an operator (made with lodge
// user add -operator through the running server's admin socket) sees the
// ready batch of a customer's mailing among all batches, opens it, marks
// it printed and then lodged, and the customer's letters are Printed,
// then Lodged (get_letter_status, another client); the customer's clerk
// then sees the usage page with the invoice of the mailing's purchase
// order, and the invoice downloaded from it is the one lodge invoice
// writes. Each new page is screenshot and checked with axe-core.
func TestPortalOperator(t *testing.T) { eachSetup(t, testPortalOperator) }

func testPortalOperator(t *testing.T, start startFunc) {
	testenv.Tool(t, "chromium") // skip before starting lodge when there is none
	const clerkPass = "clerk's long password 7"
	const opPass = "operator's long password 9"
	in := start(t, map[string]string{"clerk": clerkPass}, "-cancel-window", "0s")
	// the operator is added while lodge serve holds the store: through
	// its admin socket (several nodes: in the database they share)
	if out, err := in.admin("", "account", "add", "-name", "Print room", "OPS00001"); err != nil {
		t.Fatalf("account add: %v\n%s", err, out)
	}
	if out, err := in.admin(opPass+"\n", "user", "add", "-account", "OPS00001", "-operator", "-password-stdin", "op"); err != nil || !strings.Contains(out, "as operator") {
		t.Fatalf("user add -operator: %v\n%s", err, out)
	}
	if out, err := in.admin("", "user", "list"); err != nil || !strings.Contains(strings.Join(strings.Fields(out), " "), "op OPS00001 operator") {
		t.Fatalf("user list: %v\n%s", err, out)
	}

	doc := mailDoc(t, mailpdf.Page{Text: "Operator letter one"}, mailpdf.Page{Text: "Operator letter two"})
	epid, _ := sendMailing(t, in, "letters.pdf", doc, "m.json", `{"title":"Operator test mailing","purchase_order":"PO-E2E-7","letters":[
		{"postal":["Jo Citizen","10 Jones St","Ultimo NSW 2007"],"page_start":0,"page_end":0,"reference":"OP-1"},
		{"postal":["Al Citizen","10 Jones St","Ultimo NSW 2007"],"page_start":1,"page_end":1,"reference":"OP-2"}]}`)
	waitLetters(t, in, map[string]string{"OP-1": "Processing", "OP-2": "Processing"})
	var list string
	testenv.WaitFor(t, func() bool {
		out, err := in.admin("", "print", "list", "-state", "ready")
		list = out
		return err == nil && strings.Contains(out, epid)
	}, func() string { return "a ready batch of " + epid + ": lodge print list says\n" + list })
	batch := ""
	for _, line := range strings.Split(list, "\n") {
		if f := strings.Fields(line); len(f) > 2 && f[2] == epid {
			batch = f[0]
		}
	}
	if batch == "" {
		t.Fatalf("no batch of %s in\n%s", epid, list)
	}

	// The operator: every account's batches, the mailing's among them.
	b := newPortalBrowser(t, in)
	b.signIn("op", opPass)
	b.expect("operator signed in", []string{"op · OPS00001", "Print room"})
	b.load("the print room", 200, chromedp.Click(chromedp.CSS(`nav a[href="/portal/operator/batches"]`)))
	b.expect("every batch", []string{"Print batches", batch, "DEM00001", epid, "ready"})
	b.do("choose the ready ones", chromedp.SetValue(chromedp.ID("state"), "ready"))
	b.load("filter", 200, chromedp.Click(chromedp.CSS(`form.search button[type=submit]`)))
	if u := b.location(); u != in.url+"/portal/operator/batches?state=ready" {
		t.Fatalf("the filter led to %s", u)
	}
	b.expect("the ready batches", []string{batch, epid})
	b.screenshot("operator-batches")

	b.load("open the batch", 200, chromedp.Click(chromedp.CSS(`a[href="/portal/operator/batches/`+batch+`"]`)))
	b.expect("the batch", []string{"Batch " + batch, "DEM00001", "PO-E2E-7", "OP-1", "OP-2", "Mark printed", "Mark lodged", "Download print PDF"})
	pdf, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`fetch(document.querySelector('a[href$="/batch.pdf"]').href).then(r => r.status + " " + r.headers.get("content-type"))`, chromedp.EvalAwaitPromise))
	if err != nil || pdf != "200 application/pdf" {
		t.Fatalf("the print PDF: %q %v", pdf, err)
	}
	b.screenshot("operator-batch-ready")

	b.load("mark printed", 200, chromedp.Click(chromedp.CSS(`form[action$="/printed"] button`)))
	b.expect("printed", []string{"marked printed", "its 2 letters are Printed"}, "Mark printed")
	waitLetters(t, in, map[string]string{"OP-1": "Printed", "OP-2": "Printed"})
	b.load("mark lodged", 200, chromedp.Click(chromedp.CSS(`form[action$="/lodged"] button`)))
	b.expect("lodged", []string{"marked lodged", "its 2 letters are Lodged"}, "Mark printed", "Mark lodged")
	waitLetters(t, in, map[string]string{"OP-1": "Lodged", "OP-2": "Lodged"})
	b.screenshot("operator-batch-lodged")
	b.load("sign out", 200, chromedp.Click(chromedp.CSS(`form.signout button[type=submit]`)))

	// The customer: no operator view; the usage page has the invoice.
	b.signIn("clerk", clerkPass)
	b.expect("clerk signed in", []string{"clerk · DEM00001", "Usage"}, "Print room")
	b.load("the operator view, as a customer", 404, chromedp.Navigate(in.url+"/portal/operator/batches"))
	b.expect("not found", []string{"There is no such page"}, batch)
	b.load("back", 200, chromedp.Navigate(in.url+"/portal/mailings"))
	b.load("usage", 200, chromedp.Click(chromedp.CSS(`nav a[href="/portal/usage"]`)))
	b.expect("usage", []string{"Usage and invoices", "PO-E2E-7", "1 invoice · 2 letters", "By postage class and envelope"})
	b.screenshot("usage")

	type download struct {
		Status      int    `json:"status"`
		Type        string `json:"type"`
		Disposition string `json:"disposition"`
		Body        string `json:"body"`
	}
	fetch := func(sel string) download {
		t.Helper()
		d, err := chromedp.Run(b.ctx, chromedp.Evaluate[download](`fetch(document.querySelector('`+sel+`').href).then(async r => ({
			status: r.status, type: r.headers.get("content-type"), disposition: r.headers.get("content-disposition"), body: await r.text()}))`, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("downloading %s: %v", sel, err)
		}
		return d
	}
	pdfInv := fetch(`a[href*="invoice.pdf"]`)
	if pdfInv.Status != 200 || pdfInv.Type != "application/pdf" || !strings.HasPrefix(pdfInv.Body, "%PDF-") || !strings.Contains(pdfInv.Disposition, "PO-PO-E2E-7.pdf") {
		t.Fatalf("the invoice PDF: %d %q %q %.20q", pdfInv.Status, pdfInv.Type, pdfInv.Disposition, pdfInv.Body)
	}
	csvInv := fetch(`a[href*="invoice.csv"]`)
	if csvInv.Status != 200 || !strings.HasPrefix(csvInv.Type, "text/csv") || !strings.Contains(csvInv.Body, "OP-1") || !strings.Contains(csvInv.Body, "OP-2") {
		t.Fatalf("the invoice CSV: %d %q\n%s", csvInv.Status, csvInv.Type, csvInv.Body)
	}
	// lodge invoice writes the same invoice (through the admin socket, or
	// from the shared database)
	now := time.Now()
	from := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.Local)
	out := t.TempDir()
	if o, err := in.admin("", "invoice", "-account", "DEM00001",
		"-from", from.Format("2006-01-02"), "-to", from.AddDate(0, 1, 0).Format("2006-01-02"), "-out", out); err != nil {
		t.Fatalf("lodge invoice: %v\n%s", err, o)
	}
	name := strings.TrimSuffix(strings.TrimPrefix(csvInv.Disposition, `attachment; filename="`), `"`)
	want, err := os.ReadFile(filepath.Join(out, name))
	if err != nil || string(want) != csvInv.Body {
		t.Fatalf("lodge invoice's %s (%v):\n%s\nthe portal's:\n%s", name, err, want, csvInv.Body)
	}
}
