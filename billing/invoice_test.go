package billing_test

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lodge-mail/lodge/billing"
	"github.com/lodge-mail/lodge/internal/testenv"
	"github.com/lodge-mail/lodge/internal/testmailroom"
	"github.com/lodge-mail/lodge/pipeline"
)

var aedt = time.FixedZone("AEDT", 11*3600)

func mustNil(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func letters(n int, refs ...string) []pipeline.Letter {
	ls := make([]pipeline.Letter, n)
	for i := range ls {
		ref := fmt.Sprintf("r%d", i)
		if i < len(refs) {
			ref = refs[i]
		}
		ls[i] = testmailroom.Letter(i, ref, fmt.Sprintf("%04d", 2000+i))
	}
	return ls
}

// period is November 2026 in Sydney's summer time.
var (
	novFrom = time.Date(2026, 11, 1, 0, 0, 0, 0, aedt)
	novTo   = time.Date(2026, 12, 1, 0, 0, 0, 0, aedt)
)

// invoiceFixture is a mailroom whose letters were produced around
// November 2026: some in the period, some before, at its end, not at all.
type invoiceFixture struct {
	*testmailroom.Fixture
	printedE2 time.Time
}

func newInvoiceFixture(t *testing.T) *invoiceFixture {
	t.Helper()
	f := &invoiceFixture{Fixture: testmailroom.New(t, t.TempDir(), time.Date(2026, 10, 30, 9, 0, 0, 0, aedt))}
	mark := func(id, state string, at time.Time) {
		t.Helper()
		_, err := f.MR.MarkBatch(id, state, at, "test")
		mustNil(t, err)
	}
	// E1 (PO-1): its DL batch printed before the period, its C4 batch
	// (letter 6) in it.
	b1 := f.Produce(t, pipeline.Mailing{EPID: "E1", Account: "ABC12345", Title: "Statements", PurchaseOrder: "PO-1"}, letters(8))
	mark(b1[0], pipeline.BatchPrinted, time.Date(2026, 10, 31, 23, 59, 59, 0, aedt))
	mark(b1[1], pipeline.BatchPrinted, time.Date(2026, 11, 1, 0, 0, 0, 0, aedt)) // the period's first instant
	mark(b1[0], pipeline.BatchLodged, time.Date(2026, 11, 2, 10, 0, 0, 0, aedt)) // lodged in it, printed before: not billed again
	f.Advance(24 * time.Hour)
	// E2 (no purchase order): five letters, one cancelled in its window;
	// printed and lodged in the period.
	f.Submit(t, pipeline.Mailing{EPID: "E2", Account: "ABC12345", Title: "Notices"}, letters(5, "n0", "n1", "n2", "n3", "n4"))
	if _, err := f.MR.Cancel("ABC12345", pipeline.Selector{Refs: []string{"n3"}}, "test"); err != nil {
		t.Fatal(err)
	}
	f.Run(t)
	f.printedE2 = time.Date(2026, 11, 10, 14, 30, 0, 0, aedt)
	for _, id := range f.Batches(t, "E2") {
		mark(id, pipeline.BatchLodged, f.printedE2)
	}
	// E3 (PO-1): printed at the period's end: the next period's.
	b3 := f.Produce(t, pipeline.Mailing{EPID: "E3", Account: "ABC12345", Title: "Reminders", PurchaseOrder: "PO-1"}, letters(2))
	mark(b3[0], pipeline.BatchPrinted, novTo)
	// E4: a hostile purchase order and title; printed in the period.
	b4 := f.Produce(t, pipeline.Mailing{EPID: "E4", Account: "ABC12345", Title: "=HYPERLINK(\"http://x\") 売上 report",
		PurchaseOrder: "=cmd|' /C calc'!A0/../x"}, letters(1, "@SUM(1)"))
	mark(b4[0], pipeline.BatchPrinted, time.Date(2026, 11, 20, 9, 0, 0, 0, aedt))
	// E5: another account's, printed in the period.
	b5 := f.Produce(t, pipeline.Mailing{EPID: "E5", Account: "XYZ00001", Title: "Other", PurchaseOrder: "PO-1"}, letters(3))
	mark(b5[0], pipeline.BatchPrinted, time.Date(2026, 11, 20, 9, 0, 0, 0, aedt))
	// E6 (PO-1): ready, never printed.
	f.Produce(t, pipeline.Mailing{EPID: "E6", Account: "ABC12345", Title: "Waiting", PurchaseOrder: "PO-1"}, letters(2))
	return f
}

func TestProduced(t *testing.T) {
	t1 := time.Date(2026, 11, 5, 9, 0, 0, 0, time.UTC)
	t2 := t1.Add(time.Hour)
	f := func(status string, events []pipeline.Event, want time.Time) {
		t.Helper()
		l := pipeline.Letter{Status: status, Events: events}
		got, ok := billing.Produced(&l)
		if ok != !want.IsZero() || !got.Equal(want) {
			t.Errorf("%s %v: %v %v, want %v", status, events, got, ok, want)
		}
	}
	printed := []pipeline.Event{{Time: t1, Event: pipeline.Printed}}
	both := []pipeline.Event{{Time: t1, Event: pipeline.Printed}, {Time: t2, Event: pipeline.Lodged}}
	f(pipeline.Printed, printed, t1)
	f(pipeline.Lodged, both, t1)
	f(pipeline.Lodged, []pipeline.Event{{Time: t2, Event: pipeline.Lodged}}, t2)
	f(pipeline.Returned, append(both, pipeline.Event{Time: t2.Add(time.Hour), Event: pipeline.Returned}), t1)
	f(pipeline.Processing, nil, time.Time{})
	f(pipeline.Cancelled, nil, time.Time{})
	f(pipeline.Failed, printed, time.Time{})
	f(pipeline.Printed, nil, time.Time{}) // no event to date it: not billed
}

func TestInvoices(t *testing.T) {
	f := newInvoiceFixture(t)
	issued := time.Date(2026, 12, 1, 9, 0, 0, 0, aedt)
	invs, err := billing.Invoices(f.Store, billing.InvoiceRequest{Account: "ABC12345", From: novFrom, To: novTo, Currency: "AUD", Issued: issued})
	mustNil(t, err)
	var pos []string
	for _, inv := range invs {
		pos = append(pos, inv.PurchaseOrder)
	}
	if strings.Join(pos, "|") != "|=cmd|' /C calc'!A0/../x|PO-1" {
		t.Fatalf("invoices for %q", pos)
	}
	none, hostile, po1 := invs[0], invs[1], invs[2]

	// No purchase order: E2's four letters not cancelled, 1 to 3 sheets
	// each at 12 cents, a DL envelope (6) and regular DL postage (170).
	var got []string
	for _, l := range none.Lines {
		got = append(got, fmt.Sprintf("%s %d %s %d %s %s %d", l.EPID, l.Letter, l.Reference, l.Sheets, l.Envelope, l.Postage, l.Price))
		if !l.Produced.Equal(f.printedE2) || l.Mailing != "Notices" {
			t.Errorf("line %+v", l)
		}
	}
	if want := "E2 0 n0 1 DL regular 188|E2 1 n1 2 DL regular 200|E2 2 n2 3 DL regular 212|E2 4 n4 2 DL regular 200"; strings.Join(got, "|") != want {
		t.Errorf("lines without purchase order:\n%s\nwant\n%s", strings.Join(got, "|"), want)
	}
	if none.Total() != 800 {
		t.Errorf("total without purchase order %d, want 800", none.Total())
	}
	// PO-1: only E1's letter 6 (6 sheets in a C4: 72 + 20 + 350).
	if len(po1.Lines) != 1 || po1.Lines[0].EPID != "E1" || po1.Lines[0].Letter != 6 || po1.Lines[0].Envelope != "C4" || po1.Total() != 442 {
		t.Errorf("PO-1: %+v total %d", po1.Lines, po1.Total())
	}
	if len(hostile.Lines) != 1 || hostile.Total() != 188 {
		t.Errorf("hostile: %+v", hostile.Lines)
	}

	// The next period bills E3 (printed at its first instant), not E1's
	// letter 6 again.
	next, err := billing.Invoices(f.Store, billing.InvoiceRequest{Account: "ABC12345", From: novTo, To: novTo.AddDate(0, 1, 0), Currency: "AUD"})
	mustNil(t, err)
	if len(next) != 1 || next[0].PurchaseOrder != "PO-1" || len(next[0].Lines) != 2 || next[0].Lines[0].EPID != "E3" {
		t.Errorf("December: %+v", next)
	}
	// October bills E1's DL batch (printed in its last second).
	oct, err := billing.Invoices(f.Store, billing.InvoiceRequest{Account: "ABC12345", From: novFrom.AddDate(0, -1, 0), To: novFrom, Currency: "AUD"})
	mustNil(t, err)
	if len(oct) != 1 || len(oct[0].Lines) != 7 {
		t.Errorf("October: %+v", oct)
	}
	// Nothing produced: no invoice. A period that is not one: an error.
	if invs, err := billing.Invoices(f.Store, billing.InvoiceRequest{Account: "NOP00000", From: novFrom, To: novTo}); err != nil || len(invs) != 0 {
		t.Errorf("an account without letters: %+v %v", invs, err)
	}
	if _, err := billing.Invoices(f.Store, billing.InvoiceRequest{Account: "ABC12345", From: novTo, To: novTo}); err == nil {
		t.Error("an empty period gave no error")
	}

	// Written: CSV and PDF each, under names that tell them apart.
	dir := filepath.Join(t.TempDir(), "out")
	paths, err := billing.WriteInvoices(dir, invs)
	mustNil(t, err)
	var names []string
	for _, p := range paths {
		names = append(names, filepath.Base(p))
	}
	want := []string{
		"invoice_ABC12345_2026-11-01_2026-12-01_no-PO.csv", "invoice_ABC12345_2026-11-01_2026-12-01_no-PO.pdf",
		"invoice_ABC12345_2026-11-01_2026-12-01_PO-_cmd____C_calc__A0_.._x-" + hash8("=cmd|' /C calc'!A0/../x") + ".csv",
		"invoice_ABC12345_2026-11-01_2026-12-01_PO-_cmd____C_calc__A0_.._x-" + hash8("=cmd|' /C calc'!A0/../x") + ".pdf",
		"invoice_ABC12345_2026-11-01_2026-12-01_PO-PO-1.csv", "invoice_ABC12345_2026-11-01_2026-12-01_PO-PO-1.pdf",
	}
	if strings.Join(names, "\n") != strings.Join(want, "\n") {
		t.Errorf("files:\n%s\nwant\n%s", strings.Join(names, "\n"), strings.Join(want, "\n"))
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 6 {
		t.Errorf("%d files in the folder (a temporary left?)", len(entries))
	}

	for i, inv := range invs {
		csvPath, pdfPath := paths[2*i], paths[2*i+1]
		rows := readCSV(t, csvPath)
		if strings.Join(rows[0], ",") != "date,epid,mailing,letter,reference,envelope,postage,sheets,price (AUD)" {
			t.Errorf("%s: header %q", csvPath, rows[0])
		}
		if len(rows)-1 != len(inv.Lines) {
			t.Errorf("%s: %d lines, want %d", csvPath, len(rows)-1, len(inv.Lines))
		}
		var sum int64
		for _, r := range rows[1:] {
			sum += cents(t, r[8])
		}
		text := pdfText(t, pdfPath)
		total := pdfTotals(t, text, "AUD")
		if sum != inv.Total() || total != sum {
			t.Errorf("%s: CSV sums to %d, PDF says %d, invoice %d", inv.Name(), sum, total, inv.Total())
		}
		po := inv.PurchaseOrder
		if po == "" {
			po = "no purchase order"
		}
		for _, want := range []string{"Invoice", "ABC12345", po, "1 November 2026 to 30 November 2026", "issued 1 December 2026", "page 1 of 1"} {
			if !strings.Contains(text, want) {
				t.Errorf("%s: the PDF lacks %q:\n%s", inv.Name(), want, text)
			}
		}
	}
	// The customer's text cannot start a formula in the CSV.
	rows := readCSV(t, paths[2])
	if rows[1][2] != "'=HYPERLINK(\"http://x\") 売上 report" || rows[1][4] != "'@SUM(1)" || rows[1][0] != "2026-11-20" {
		t.Errorf("hostile CSV line %q", rows[1])
	}
	// The lines of the invoice without purchase order, as written.
	got = got[:0]
	for _, r := range readCSV(t, paths[0])[1:] {
		got = append(got, strings.Join(r, ","))
	}
	if want := "2026-11-10,E2,Notices,0,n0,DL,regular,1,1.88|2026-11-10,E2,Notices,1,n1,DL,regular,2,2.00|" +
		"2026-11-10,E2,Notices,2,n2,DL,regular,3,2.12|2026-11-10,E2,Notices,4,n4,DL,regular,2,2.00"; strings.Join(got, "|") != want {
		t.Errorf("CSV:\n%s\nwant\n%s", strings.Join(got, "|"), want)
	}
}

// TestInvoiceLong: an invoice of many mailings runs over pages, each
// numbered, the table's heading repeated; amounts are right-aligned on
// the column's edge; the totals add up.
func TestInvoiceLong(t *testing.T) {
	inv := billing.Invoice{InvoiceRequest: billing.InvoiceRequest{Account: "ABC12345", From: novFrom, To: novTo, Currency: "AUD", Issued: novTo},
		PurchaseOrder: "4500012345"}
	var total int64
	for i := range 180 {
		for j := range 1 + i%4 {
			price := int64(150 + 37*i + 1000*j)
			if i == 4 && j == 0 {
				price = 123456789 // 1,234,567.89: a wide amount
			}
			inv.Lines = append(inv.Lines, billing.InvoiceLine{Produced: novFrom.Add(time.Duration(i) * time.Hour), EPID: fmt.Sprintf("%028d", i),
				Mailing: fmt.Sprintf("Mailing %d with a title much too long to fit in its column of the table", i), Letter: j,
				Envelope: []string{"DL", "C4"}[j%2], Postage: []string{"regular", "priority"}[i%2], Sheets: 1 + j, Price: price})
			total += price
		}
	}
	if inv.Total() != total {
		t.Fatalf("Total %d, want %d", inv.Total(), total)
	}
	doc, err := inv.PDF()
	mustNil(t, err)
	path := filepath.Join(t.TempDir(), "long.pdf")
	mustNil(t, os.WriteFile(path, doc, 0o644))
	text := pdfText(t, path)
	pages := strings.Split(strings.TrimRight(text, "\f"), "\f")
	if len(pages) < 4 {
		t.Fatalf("%d pages for 180 mailings", len(pages))
	}
	for i, p := range pages {
		if !strings.Contains(p, fmt.Sprintf("page %d of %d", i+1, len(pages))) {
			t.Errorf("page %d lacks its number:\n%s", i+1, p)
		}
		if i > 0 && i < len(pages)-1 && !strings.Contains(p, "By mailing (continued)") {
			t.Errorf("page %d lacks the repeated heading", i+1)
		}
	}
	if got := pdfTotals(t, text, "AUD"); got != total {
		t.Errorf("the PDF's totals say %d, want %d", got, total)
	}
	if !strings.Contains(text, "1,234,567.89") || !strings.Contains(text, "Mailing 5 with a title much too long") || strings.Contains(text, "column of the table") {
		t.Errorf("wide amount or cut title wrong:\n%s", pages[0])
	}

	// Right-aligned: every amount ends at the right margin (545.28).
	bbox, err := exec.Command(testenv.Tool(t, "pdftotext"), "-bbox", path, "-").Output()
	mustNil(t, err)
	word := regexp.MustCompile(`<word xMin="([\d.]+)" yMin="[\d.]+" xMax="([\d.]+)" yMax="[\d.]+">([^<]*)</word>`)
	amount := regexp.MustCompile(`^\d{1,3}(,\d{3})*\.\d\d$`)
	n := 0
	for _, m := range word.FindAllStringSubmatch(string(bbox), -1) {
		if !amount.MatchString(m[3]) {
			continue
		}
		n++
		if xMax, _ := strconv.ParseFloat(m[2], 64); math.Abs(xMax-545.28) > 1 {
			t.Errorf("amount %s ends at %.2f, not at the margin 545.28", m[3], xMax)
		}
	}
	if n < 180 {
		t.Errorf("found %d amounts", n)
	}
}

func hash8(s string) string {
	inv := billing.Invoice{InvoiceRequest: billing.InvoiceRequest{Account: "A", From: novFrom, To: novTo}, PurchaseOrder: s}
	name := inv.Name()
	return name[strings.LastIndexByte(name, '-')+1:]
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	b, err := os.ReadFile(path)
	mustNil(t, err)
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	mustNil(t, err)
	return rows
}

// cents reads "12.34" as 1234.
func cents(t *testing.T, s string) int64 {
	t.Helper()
	units, dec, ok := strings.Cut(strings.ReplaceAll(s, ",", ""), ".")
	u, err1 := strconv.ParseInt(units, 10, 64)
	d, err2 := strconv.ParseInt(dec, 10, 64)
	if !ok || len(dec) != 2 || err1 != nil || err2 != nil {
		t.Fatalf("amount %q", s)
	}
	return u*100 + d
}

func pdfText(t *testing.T, path string) string {
	t.Helper()
	out, err := exec.Command(testenv.Tool(t, "pdftotext"), "-layout", path, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext %s: %v", path, err)
	}
	return string(out)
}

// pdfTotals reads the totals of an invoice's text (the one in its header
// and each table's) and returns it, failing when they differ.
func pdfTotals(t *testing.T, text, currency string) int64 {
	t.Helper()
	head := regexp.MustCompile(`(?m)^\s*Total\s+`+currency+` ([\d,]+\.\d\d)\s*$`).FindAllStringSubmatch(text, -1)
	rows := regexp.MustCompile(`(?m)^\s*Total\s+(\d+)\s+(\d+)\s+([\d,]+\.\d\d)\s*$`).FindAllStringSubmatch(text, -1)
	if len(head) != 1 || len(rows) != 2 {
		t.Fatalf("want one header total and two table totals, got %q and %q in:\n%s", head, rows, text)
	}
	total := cents(t, head[0][1])
	for _, r := range rows {
		if cents(t, r[3]) != total || r[1] != rows[0][1] || r[2] != rows[0][2] {
			t.Errorf("totals differ: %q, header %d", rows, total)
		}
	}
	return total
}

// BenchmarkInvoices: the invoices of a period for an account with a
// 10,000-letter statement run printed in it, read from the store (every
// letter of the account's mailings is read: see Invoices).
func BenchmarkInvoices(b *testing.B) {
	f := testmailroom.New(b, b.TempDir(), time.Now().Add(-72*time.Hour))
	ids := f.Produce(b, pipeline.Mailing{EPID: "E1", Account: "ABC12345", Title: "Statements", PurchaseOrder: "PO-1"}, letters(10000))
	at := time.Now().Add(-time.Hour)
	for _, id := range ids {
		if _, err := f.MR.MarkBatch(id, pipeline.BatchPrinted, at, "bench"); err != nil {
			b.Fatal(err)
		}
	}
	dir := b.TempDir()
	b.ResetTimer()
	for range b.N {
		invs, err := billing.Invoices(f.Store, billing.InvoiceRequest{Account: "ABC12345", From: at.Add(-time.Hour), To: at.Add(time.Hour), Currency: "AUD"})
		if err != nil || len(invs) != 1 || len(invs[0].Lines) != 10000 {
			b.Fatalf("%d invoices, %v", len(invs), err)
		}
		if _, err := billing.WriteInvoices(dir, invs); err != nil {
			b.Fatal(err)
		}
	}
}
