package portal_test

import (
	"html"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/lodge-mail/lodge/billing"
	"github.com/lodge-mail/lodge/pipeline"
	"github.com/lodge-mail/lodge/printroom"
)

// TestUsage: the usage page shows an account's invoices for a period,
// one per purchase order, with the figures billing.Invoices (lodge
// invoice's computation) gives for the same records; each downloads as
// billing writes it; another account's purchase orders never appear or
// download; a bad period is refused.
func TestUsage(t *testing.T) {
	f := newPrintFixture(t)
	jo := f.browser()
	jo.signIn("jo", joPass).expect(200, "JOPO1")
	jo.get("/portal/usage").expect(200, "Usage and invoices", "no invoice") // nothing printed yet

	room := printroom.Local(f.mr)
	for _, epid := range []string{"JOPO1", "JOPO2", "EVEPO"} {
		if _, err := room.MarkBatch(f.batch[epid].ID, pipeline.BatchPrinted, time.Time{}, "op"); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	from := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.Local)
	to := from.AddDate(0, 1, 0)
	table, err := f.prices.For("ABC00001")
	if err != nil {
		t.Fatal(err)
	}
	want, err := billing.Invoices(f.mr.Store(), billing.InvoiceRequest{Account: "ABC00001", From: from, To: to, Currency: table.Currency})
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != 2 || want[0].PurchaseOrder != "PO-JO-1" || len(want[0].Lines) != 2 || want[1].PurchaseOrder != "PO-JO-2" || len(want[1].Lines) != 1 {
		t.Fatalf("billing's invoices: %+v", want)
	}
	var sheets int
	var total int64
	for _, inv := range want {
		for _, l := range inv.Lines {
			sheets += l.Sheets
		}
		total += inv.Total()
	}
	// the default period is this month
	jo.get("/portal/usage").expect(200, "PO-JO-1", "PO-JO-2", "2 invoices · 3 letters · ",
		billing.Cents(want[0].Total()), billing.Cents(want[1].Total()), table.Currency+" "+billing.Cents(total),
		`value="`+from.Format("2006-01-02")+`"`, `value="`+to.AddDate(0, 0, -1).Format("2006-01-02")+`"`)
	if strings.Contains(jo.body, "PO-EVE") {
		t.Fatal("another account's purchase order on the usage page")
	}
	if sheets == 0 || !strings.Contains(jo.body, " 3 letters · ") {
		t.Fatalf("sheets %d", sheets)
	}
	// the same period given by dates; each invoice as billing writes it
	q := url.Values{"from": {from.Format("2006-01-02")}, "to": {to.AddDate(0, 0, -1).Format("2006-01-02")}}
	jo.get("/portal/usage?"+q.Encode()).expect(200, "PO-JO-1", "PO-JO-2")
	for _, inv := range want {
		q.Set("po", inv.PurchaseOrder)
		jo.get("/portal/usage/invoice.csv?" + q.Encode()).expect(200)
		if jo.body != string(inv.CSV()) {
			t.Fatalf("invoice %s CSV:\n%s\nbilling's:\n%s", inv.PurchaseOrder, jo.body, inv.CSV())
		}
		if cd := jo.header.Get("Content-Disposition"); cd != `attachment; filename="`+inv.Name()+`.csv"` {
			t.Fatalf("Content-Disposition %q", cd)
		}
		jo.get("/portal/usage/invoice.pdf?"+q.Encode()).expect(200, "%PDF-")
		if ct := jo.header.Get("Content-Type"); ct != "application/pdf" {
			t.Fatalf("PDF served as %q", ct)
		}
	}
	// the links on the page lead there
	jo.get("/portal/usage").expect(200, html.EscapeString("/portal/usage/invoice.pdf?from="+q.Get("from")+"&to="+q.Get("to")+"&po=PO-JO-1"))

	// eve's purchase order is not jo's to download, nor a made-up one
	q.Set("po", "PO-EVE-<script>")
	jo.get("/portal/usage/invoice.csv?" + q.Encode()).expect(404)
	q.Set("po", "")
	jo.get("/portal/usage/invoice.pdf?" + q.Encode()).expect(404)

	eve := f.browser()
	eve.signIn("eve", evePass).expect(200, "EVEPO")
	eve.get("/portal/usage").expect(200, "PO-EVE-&lt;script&gt;", "1 invoice · 1 letter · ")
	if strings.Contains(eve.body, "PO-JO") || strings.Contains(eve.body, "PO-EVE-<script>") {
		t.Fatal("eve's usage page shows jo's purchase orders, or eve's unescaped")
	}
	q.Set("po", "PO-EVE-<script>")
	eve.get("/portal/usage/invoice.csv?"+q.Encode()).expect(200, "EVEPO")

	// a period later than the printing: nothing
	jo.get("/portal/usage?from=2099-01-01&to=2099-01-31").expect(200, "no invoice")
	// bad periods
	bad := func(query, msg string) {
		t.Helper()
		jo.get("/portal/usage?"+query).expect(400, msg)
		jo.get("/portal/usage/invoice.csv?"+query+"&po=PO-JO-1").expect(400, msg)
	}
	bad("from=2026-11-01", "both dates")
	bad("from=2026-11-01&to=yesterday", "both dates")
	bad("from=2026-11-30&to=2026-11-01", "before its first")
	bad("from=2020-01-01&to=2026-01-01", "at most three years")
	bad("from=%3Cscript%3E&to=2026-01-01", "both dates")
	if strings.Contains(jo.body, "<script>") {
		t.Fatal("a bad date shown unescaped")
	}
	jo.post("/portal/usage", url.Values{"csrf": {jo.csrf()}}).expect(404)
}
