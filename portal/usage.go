package portal

// The usage page: the signed-in account's invoices for a period, one per
// purchase order, made by billing.Invoices exactly as lodge invoice makes
// them (the same records, the price table's currency), with their
// letters, sheets and amounts, a table by postage class and envelope, and
// each invoice as CSV and PDF. Only the session's account is ever read.

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/lodge-mail/lodge/billing"
)

// dateLayout is a date input's value.
const dateLayout = "2006-01-02"

type usageRow struct {
	Key     []string // purchase order; or postage class and envelope
	Letters int
	Sheets  int
	Amount  int64
}

// AmountText is the amount in the currency's units ("1234.50").
func (u usageRow) AmountText() string { return billing.Cents(u.Amount) }

type usageData struct {
	From, To  string // the date inputs, To included
	Currency  string
	ByPO      []usageRow
	ByClass   []usageRow
	Total     usageRow
	Invoices  int
	PeriodErr string
}

// usagePeriod reads from= and to= (local dates, to included) into the
// period [from, to+1 day); both absent: this month.
func (h *Handler) usagePeriod(r *request) (from, to time.Time, fromS, toS string, msg string) {
	now := h.cfg.Now().In(time.Local)
	args := r.ctx.QueryArgs()
	fromS, toS = string(args.Peek("from")), string(args.Peek("to"))
	if fromS == "" && toS == "" {
		from = time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.Local)
		to = from.AddDate(0, 1, 0)
		return from, to, from.Format(dateLayout), to.AddDate(0, 0, -1).Format(dateLayout), ""
	}
	var err1, err2 error
	from, err1 = time.ParseInLocation(dateLayout, fromS, time.Local)
	last, err2 := time.ParseInLocation(dateLayout, toS, time.Local)
	switch {
	case err1 != nil || err2 != nil:
		return time.Time{}, time.Time{}, fromS, toS, "Give both dates of the period as dates (2026-11-01)."
	case last.Before(from):
		return time.Time{}, time.Time{}, fromS, toS, "The period's last day is before its first."
	case last.Sub(from) > 3*366*24*time.Hour:
		return time.Time{}, time.Time{}, fromS, toS, "A period is at most three years."
	}
	return from, last.AddDate(0, 0, 1), fromS, toS, ""
}

// invoices are the account's invoices of a period, as lodge invoice makes
// them.
func (h *Handler) invoices(account string, from, to time.Time) ([]billing.Invoice, error) {
	currency := billing.DefaultTable.Currency
	if h.cfg.Prices != nil {
		t, err := h.cfg.Prices.For(account)
		if err != nil {
			return nil, err
		}
		currency = t.Currency
	}
	return billing.Invoices(h.mr.Store(), billing.InvoiceRequest{Account: account, From: from, To: to, Currency: currency, Issued: h.cfg.Now()})
}

func (h *Handler) usageRoutes(r *request, rest string, post bool) {
	if post {
		h.notFound(r)
		return
	}
	switch rest {
	case "":
		h.usagePage(r)
	case "invoice.csv", "invoice.pdf":
		h.invoiceFile(r, strings.TrimPrefix(rest, "invoice."))
	default:
		h.notFound(r)
	}
}

func (h *Handler) usagePage(r *request) {
	from, to, fromS, toS, msg := h.usagePeriod(r)
	d := usageData{From: fromS, To: toS}
	if msg != "" {
		d.PeriodErr = msg
		h.page(r, fasthttp.StatusBadRequest, "usage", "Usage and invoices", d, msg)
		return
	}
	invs, err := h.invoices(r.se.Account, from, to)
	if err != nil {
		h.internalError(r, err)
		return
	}
	d.Invoices = len(invs)
	d.Currency = billing.DefaultTable.Currency
	classes := map[[2]string]*usageRow{}
	for i := range invs {
		inv := &invs[i]
		d.Currency = inv.Currency
		po := inv.PurchaseOrder
		row := usageRow{Key: []string{po}, Amount: inv.Total()}
		for _, l := range inv.Lines {
			row.Letters++
			row.Sheets += l.Sheets
			c := classes[[2]string{l.Postage, l.Envelope}]
			if c == nil {
				c = &usageRow{Key: []string{l.Postage, l.Envelope}}
				classes[[2]string{l.Postage, l.Envelope}] = c
			}
			c.Letters++
			c.Sheets += l.Sheets
			c.Amount += l.Price
		}
		d.ByPO = append(d.ByPO, row)
		d.Total.Letters += row.Letters
		d.Total.Sheets += row.Sheets
		d.Total.Amount += row.Amount
	}
	for _, c := range classes {
		d.ByClass = append(d.ByClass, *c)
	}
	slices.SortFunc(d.ByClass, func(a, b usageRow) int {
		return cmp.Or(strings.Compare(a.Key[0], b.Key[0]), -strings.Compare(a.Key[1], b.Key[1])) // DL before C4, as the PDF
	})
	h.page(r, fasthttp.StatusOK, "usage", "Usage and invoices", d, "")
}

// invoiceFile sends one invoice of the period (po= names its purchase
// order, empty: the mailings without one) as CSV or PDF, named as lodge
// invoice names its files.
func (h *Handler) invoiceFile(r *request, ext string) {
	from, to, _, _, msg := h.usagePeriod(r)
	if msg != "" {
		h.page(r, fasthttp.StatusBadRequest, "error", "Bad request", nil, msg)
		return
	}
	po := string(r.ctx.QueryArgs().Peek("po"))
	invs, err := h.invoices(r.se.Account, from, to)
	if err != nil {
		h.internalError(r, err)
		return
	}
	for i := range invs {
		inv := &invs[i]
		if inv.PurchaseOrder != po {
			continue
		}
		body, ctype := inv.CSV(), "text/csv; charset=utf-8"
		if ext == "pdf" {
			if body, err = inv.PDF(); err != nil {
				h.internalError(r, err)
				return
			}
			ctype = "application/pdf"
		}
		r.ctx.SetContentType(ctype)
		// Name is made of the account, dates and a slug of the
		// purchase order: letters, digits, - _ . only
		r.ctx.Response.Header.Set("Content-Disposition", `attachment; filename="`+inv.Name()+"."+ext+`"`)
		r.ctx.SetBody(body)
		return
	}
	h.notFound(r)
}
