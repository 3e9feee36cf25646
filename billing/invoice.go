package billing

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/lodge-mail/lodge/internal/csvsafe"
	"github.com/lodge-mail/lodge/internal/durable"
	"github.com/lodge-mail/lodge/internal/pdf"
	"github.com/lodge-mail/lodge/pipeline"
	"github.com/lodge-mail/lodge/printroom"
)

// Records is what invoices read: a pipeline.Store, or a printroom.Room
// (the mailroom's store, or lodge serve's admin socket while it holds
// the store).
type Records interface {
	Mailings(account string, before time.Time, limit int) ([]pipeline.Mailing, error)
	Letters(epid string, from, limit int) ([]pipeline.Letter, error)
}

// InvoiceRequest asks for the invoices of an account's letters produced
// in a period.
type InvoiceRequest struct {
	Account string
	// From and To bound the period: letters produced at From or later and
	// before To. Dates are shown in From's location.
	From, To time.Time
	// Currency is the account's price table's (prices are in its cents).
	Currency string
	// Issued is the invoices' date (zero: now).
	Issued time.Time
}

// InvoiceLine is one letter of an invoice.
type InvoiceLine struct {
	Produced  time.Time // when it was printed
	EPID      string
	Mailing   string // the mailing's title
	Letter    int    // its index in the mailing
	Reference string
	Envelope  string
	Postage   string
	Sheets    int
	Price     int64 // cents
}

// Invoice is the letters of one purchase order of an account produced in
// a period.
type Invoice struct {
	InvoiceRequest
	PurchaseOrder string // "" for the mailings that name none
	Lines         []InvoiceLine
}

// Total returns the sum of the invoice's prices, in cents.
func (inv *Invoice) Total() int64 {
	var t int64
	for _, l := range inv.Lines {
		t += l.Price
	}
	return t
}

// lettersPage is how many letters Invoices reads at a time.
const lettersPage = 1000

// Produced returns when a letter was produced for billing: its Printed
// event (a letter lodged without one: its Lodged event); ok is false for
// a letter not produced (or produced and then not sent: only Printed,
// Lodged and Returned letters are billed).
func Produced(l *pipeline.Letter) (at time.Time, ok bool) {
	switch l.Status {
	case pipeline.Printed, pipeline.Lodged, pipeline.Returned:
	default:
		return time.Time{}, false
	}
	if at = l.Time(pipeline.Printed); at.IsZero() {
		at = l.Time(pipeline.Lodged)
	}
	return at, !at.IsZero()
}

// Invoices returns the invoices of the account's postal letters produced
// in [From, To), one per distinct purchase order of their mailings,
// sorted by purchase order ("" first); none when nothing was produced. A
// letter is in the period its Printed event falls in, so that invoices
// of consecutive periods bill each letter once.
//
// It reads every mailing of the account created before To, and their
// letters a page at a time: a mailing made long ago can have letters
// produced in the period (held, then released). The letters kept are the
// invoices' lines; the rest are not kept.
func Invoices(r Records, req InvoiceRequest) ([]Invoice, error) {
	if !req.From.Before(req.To) {
		return nil, fmt.Errorf("invoice period: %s is not before %s", req.From.Format(time.RFC3339), req.To.Format(time.RFC3339))
	}
	if req.Issued.IsZero() {
		req.Issued = time.Now()
	}
	byPO := map[string]*Invoice{}
	err := printroom.EachMailing(r, req.Account, req.To, func(m *pipeline.Mailing) (bool, error) {
		for from := 0; ; {
			ls, err := r.Letters(m.EPID, from, lettersPage)
			if err != nil {
				return false, fmt.Errorf("mailing %s: %w", m.EPID, err)
			}
			for i := range ls {
				l := &ls[i]
				at, ok := Produced(l)
				if !ok || !l.IsPostal() || at.Before(req.From) || !at.Before(req.To) {
					continue
				}
				inv := byPO[m.PurchaseOrder]
				if inv == nil {
					inv = &Invoice{InvoiceRequest: req, PurchaseOrder: m.PurchaseOrder}
					byPO[m.PurchaseOrder] = inv
				}
				inv.Lines = append(inv.Lines, InvoiceLine{Produced: at, EPID: l.EPID, Mailing: m.Title, Letter: l.Idx,
					Reference: l.Reference, Envelope: l.Envelope, Postage: l.Postage, Sheets: l.Sheets, Price: l.Price})
			}
			if len(ls) < lettersPage {
				return true, nil
			}
			from = ls[len(ls)-1].Idx + 1
		}
	})
	if err != nil {
		return nil, err
	}
	out := make([]Invoice, 0, len(byPO))
	for _, inv := range byPO {
		slices.SortFunc(inv.Lines, func(a, b InvoiceLine) int {
			return cmp.Or(a.Produced.Compare(b.Produced), strings.Compare(a.EPID, b.EPID), cmp.Compare(a.Letter, b.Letter))
		})
		out = append(out, *inv)
	}
	slices.SortFunc(out, func(a, b Invoice) int { return strings.Compare(a.PurchaseOrder, b.PurchaseOrder) })
	return out, nil
}

// ---- files

// PONone is how an invoice of the mailings without a purchase order
// names it.
const PONone = "no purchase order"

// Name returns the invoice's file name without extension:
// invoice_ACCOUNT_FROM_TO_PO-<purchase order> (or _no-PO). A purchase
// order is the customer's text: characters other than letters, digits,
// '-', '_' and '.' become '_', it is cut at 40, and a changed one gets a
// hash of the original so that two purchase orders never share a name.
func (inv *Invoice) Name() string {
	po := "no-PO"
	if inv.PurchaseOrder != "" {
		var b strings.Builder
		for _, r := range inv.PurchaseOrder {
			if r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
				b.WriteRune(r)
			} else {
				b.WriteByte('_')
			}
		}
		slug := b.String()
		if len(slug) > 40 {
			slug = slug[:40]
		}
		if slug != inv.PurchaseOrder {
			sum := sha256.Sum256([]byte(inv.PurchaseOrder))
			slug += "-" + hex.EncodeToString(sum[:4])
		}
		po = "PO-" + slug
	}
	return fmt.Sprintf("invoice_%s_%s_%s_%s", inv.Account, stamp(inv.From, inv.loc()), stamp(inv.To, inv.loc()), po)
}

func (inv *Invoice) loc() *time.Location { return inv.From.Location() }

// stamp is a time for a file name: its date when it is a midnight.
func stamp(t time.Time, loc *time.Location) string {
	t = t.In(loc)
	if t.Equal(time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, loc)) {
		return t.Format("2006-01-02")
	}
	return t.Format("20060102T150405")
}

// Cents formats an amount in cents as units with two decimals ("1234.50").
func Cents(c int64) string {
	sign := ""
	if c < 0 {
		sign, c = "-", -c
	}
	return fmt.Sprintf("%s%d.%02d", sign, c/100, c%100)
}

// grouped formats cents with thousands separators ("1,234.50").
func grouped(c int64) string {
	s := Cents(c)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	units, dec, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i, r := range units {
		if i > 0 && (len(units)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	out := b.String() + "." + dec
	if neg {
		out = "-" + out
	}
	return out
}

// CSV returns the invoice as CSV: a header, then a line per letter
// (date, epid, mailing, letter, reference, envelope, postage, sheets,
// price in units of the currency). The customer's text (titles,
// references) cannot start a formula.
func (inv *Invoice) CSV() []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write([]string{"date", "epid", "mailing", "letter", "reference", "envelope", "postage", "sheets", "price (" + inv.Currency + ")"})
	for _, l := range inv.Lines {
		w.Write([]string{l.Produced.In(inv.loc()).Format("2006-01-02"), l.EPID, csvsafe.Cell(l.Mailing), strconv.Itoa(l.Letter),
			csvsafe.Cell(l.Reference), l.Envelope, l.Postage, strconv.Itoa(l.Sheets), Cents(l.Price)})
	}
	w.Flush() // into a bytes.Buffer: cannot fail
	return b.Bytes()
}

// WriteInvoices writes each invoice into dir (made when missing) as
// Name().csv and Name().pdf, each atomically and durably (a file is the
// whole new one or the old one), and returns their paths.
func WriteInvoices(dir string, invs []Invoice) ([]string, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, err
	}
	var paths []string
	for i := range invs {
		inv := &invs[i]
		doc, err := inv.PDF()
		if err != nil {
			return paths, fmt.Errorf("invoice %s: %w", inv.Name(), err)
		}
		for _, f := range []struct {
			ext string
			b   []byte
		}{{".csv", inv.CSV()}, {".pdf", doc}} {
			p := filepath.Join(dir, inv.Name()+f.ext)
			if err := durable.WriteFile(p, f.b, 0o640); err != nil {
				return paths, err
			}
			paths = append(paths, p)
		}
	}
	return paths, nil
}

// ---- the PDF

// summary is a row of a summary table.
type summary struct {
	key     []string
	letters int
	sheets  int
	amount  int64
}

func summarise(lines []InvoiceLine, key func(*InvoiceLine) []string) []summary {
	var rows []summary
	at := map[string]int{}
	for i := range lines {
		k := key(&lines[i])
		j, ok := at[strings.Join(k, "\x00")]
		if !ok {
			j = len(rows)
			at[strings.Join(k, "\x00")] = j
			rows = append(rows, summary{key: k})
		}
		rows[j].letters++
		rows[j].sheets += lines[i].Sheets
		rows[j].amount += lines[i].Price
	}
	return rows
}

// Page geometry, in points: A4 with 50-point margins.
const (
	pageW, pageH = 595.28, 841.89
	left, right  = 50.0, pageW - 50
	top, bottom  = pageH - 56, 64.0
	rowH         = 14.0
)

// column is a table column: text from x (left-aligned) or ending at x
// (right-aligned), at most w wide.
type column struct {
	title string
	x, w  float64
	right bool
	font  pdf.Font
}

// layout is the invoice's pages being drawn.
type layout struct {
	pages []*pdf.Content
	c     *pdf.Content
	y     float64 // the next line's baseline
}

func (l *layout) newPage() {
	l.c = &pdf.Content{}
	l.pages = append(l.pages, l.c)
	l.y = top
}

// need starts a new page unless h points are left on this one, and
// reports whether it did.
func (l *layout) need(h float64) bool {
	if l.y-h < bottom {
		l.newPage()
		return true
	}
	return false
}

func (l *layout) text(f pdf.Font, size, x float64, s string) { l.c.Text(f, size, x, l.y, s) }

func (l *layout) textRight(f pdf.Font, size, x float64, s string) {
	l.c.Text(f, size, x-f.Width(s, size), l.y, s)
}

// fit cuts s to at most w points in f at size, with an ellipsis when cut.
func fit(f pdf.Font, size, w float64, s string) string {
	if f.Width(s, size) <= w {
		return s
	}
	rs := []rune(s)
	for len(rs) > 0 && f.Width(string(rs)+"…", size) > w {
		rs = rs[:len(rs)-1]
	}
	return string(rs) + "…"
}

func (l *layout) cells(cols []column, size float64, bold bool, vals []string) {
	for i, c := range cols {
		f := c.font
		if bold {
			f = pdf.HelveticaBold
		}
		v := fit(f, size, c.w, vals[i])
		if c.right {
			l.textRight(f, size, c.x, v)
		} else {
			l.text(f, size, c.x, v)
		}
	}
}

// table draws a titled table of rows and a total row, repeating its
// heading on each page it runs onto.
func (l *layout) table(title string, cols []column, rows [][]string, total []string) {
	heading := func(cont bool) {
		t := title
		if cont {
			t += " (continued)"
		}
		l.text(pdf.HelveticaBold, 11, left, t)
		l.y -= rowH + 2
		titles := make([]string, len(cols))
		for i, c := range cols {
			titles[i] = c.title
		}
		l.cells(cols, 8.5, true, titles)
		l.c.Line(left, l.y-4, right, l.y-4, 0.5)
		l.y -= rowH + 2
	}
	l.need(4*rowH + 8)
	heading(false)
	for _, r := range rows {
		if l.need(rowH) {
			heading(true)
		}
		l.cells(cols, 9, false, r)
		l.y -= rowH
	}
	if l.need(rowH + 6) {
		heading(true)
	}
	l.c.Line(left, l.y+rowH-4, right, l.y+rowH-4, 0.5)
	l.cells(cols, 9, true, total)
	l.y -= 2*rowH + 6
}

// dateRange says the period for people: whole days when it is made of
// them, else times, with the end not included.
func (inv *Invoice) dateRange() string {
	loc := inv.loc()
	from, to := inv.From.In(loc), inv.To.In(loc)
	midnight := func(t time.Time) bool { return t.Equal(time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, loc)) }
	if midnight(from) && midnight(to) {
		last := to.AddDate(0, 0, -1)
		if last.Equal(from) {
			return from.Format("2 January 2006")
		}
		return from.Format("2 January 2006") + " to " + last.Format("2 January 2006")
	}
	return from.Format("2006-01-02 15:04 MST") + " up to (not including) " + to.Format("2006-01-02 15:04 MST")
}

// PDF returns the invoice as a PDF: the account, purchase order, period
// and date; a table by mailing and one by postage class and envelope,
// each with the total; a page number on every page. Amounts are in the
// currency's units, right-aligned.
func (inv *Invoice) PDF() ([]byte, error) {
	po := inv.PurchaseOrder
	if po == "" {
		po = PONone
	}
	var letters, sheets int
	for _, ln := range inv.Lines {
		letters++
		sheets += ln.Sheets
	}
	total := inv.Total()
	amount := "Amount (" + inv.Currency + ")"

	var l layout
	l.newPage()
	l.text(pdf.HelveticaBold, 20, left, "Invoice")
	l.textRight(pdf.Helvetica, 9, right, "issued "+inv.Issued.In(inv.loc()).Format("2 January 2006"))
	l.y -= 30
	for _, kv := range [][2]string{
		{"Account", inv.Account},
		{"Purchase order", po},
		{"Period", inv.dateRange()},
		{"Letters", fmt.Sprintf("%d printed on %d sheets", letters, sheets)},
	} {
		l.text(pdf.HelveticaBold, 10, left, kv[0])
		l.text(pdf.Helvetica, 10, left+100, fit(pdf.Helvetica, 10, right-left-100, kv[1]))
		l.y -= rowH + 1
	}
	l.y -= 6
	l.text(pdf.HelveticaBold, 12, left, "Total")
	l.textRight(pdf.HelveticaBold, 12, right, inv.Currency+" "+grouped(total))
	l.y -= 2*rowH + 6

	mcols := []column{
		{title: "Mailing", x: left, w: 168, font: pdf.Helvetica},
		{title: "EPID", x: left + 175, w: 155, font: pdf.Courier}, // 28 characters at 9 points
		{title: "Letters", x: left + 375, w: 40, right: true, font: pdf.Helvetica},
		{title: "Sheets", x: left + 425, w: 45, right: true, font: pdf.Helvetica},
		{title: amount, x: right, w: 65, right: true, font: pdf.Helvetica},
	}
	var rows [][]string
	for _, s := range summarise(inv.Lines, func(ln *InvoiceLine) []string { return []string{ln.Mailing, ln.EPID} }) {
		title := s.key[0]
		if title == "" {
			title = "(untitled)"
		}
		rows = append(rows, []string{title, s.key[1], strconv.Itoa(s.letters), strconv.Itoa(s.sheets), grouped(s.amount)})
	}
	totalRow := []string{"Total", "", strconv.Itoa(letters), strconv.Itoa(sheets), grouped(total)}
	l.table("By mailing", mcols, rows, totalRow)

	ccols := []column{
		{title: "Postage", x: left, w: 168, font: pdf.Helvetica},
		{title: "Envelope", x: left + 175, w: 155, font: pdf.Helvetica},
		{title: "Letters", x: left + 375, w: 40, right: true, font: pdf.Helvetica},
		{title: "Sheets", x: left + 425, w: 45, right: true, font: pdf.Helvetica},
		{title: amount, x: right, w: 65, right: true, font: pdf.Helvetica},
	}
	classes := summarise(inv.Lines, func(ln *InvoiceLine) []string { return []string{ln.Postage, ln.Envelope} })
	slices.SortFunc(classes, func(a, b summary) int {
		return cmp.Or(strings.Compare(a.key[0], b.key[0]), -strings.Compare(a.key[1], b.key[1])) // DL before C4
	})
	rows = rows[:0]
	for _, s := range classes {
		rows = append(rows, []string{s.key[0], s.key[1], strconv.Itoa(s.letters), strconv.Itoa(s.sheets), grouped(s.amount)})
	}
	l.table("By postage class and envelope", ccols, rows, totalRow)

	l.need(3 * rowH)
	l.text(pdf.Helvetica, 8, left, "Prices are those of the price table when each letter was checked. Every letter is listed in the CSV file of this invoice.")

	var buf bytes.Buffer
	w := pdf.NewWriter(&buf)
	for i, c := range l.pages {
		foot := fmt.Sprintf("%s · %s · page %d of %d", inv.Account, fit(pdf.Helvetica, 8, 300, po), i+1, len(l.pages))
		c.Text(pdf.Helvetica, 8, right-pdf.Helvetica.Width(foot, 8), 36, foot)
		w.AddPage(pageW, pageH, c)
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
