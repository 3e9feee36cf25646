// The invoice command: an account's invoices for a period, one per
// purchase order, from the mailroom's records (directly or through lodge
// serve's admin socket) and the account's price table's currency.

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/lodge-mail/lodge/auth"
	"github.com/lodge-mail/lodge/billing"
	"github.com/lodge-mail/lodge/datafiles"
	"github.com/lodge-mail/lodge/pgdb"
)

const invoiceUsage = `usage:
  lodge invoice -account CODE -from DATE -to DATE [-out DIR]
Writes one invoice per purchase order of the account's mailings (CSV and
PDF) for the postal letters printed from -from up to, not including, -to.
DATE is a local date (2026-11-01: its midnight), a local date and time
(2026-11-01 08:00) or RFC 3339 (2026-11-01T00:00:00+11:00).
`

func runInvoice(args []string, stdout, stderr io.Writer) error {
	var account, fromFlag, toFlag, out string
	c := &authCommand{fs: flag.NewFlagSet("invoice", flag.ContinueOnError)}
	c.fs.SetOutput(stderr)
	c.fs.StringVar(&c.dataDir, "data-dir", "lodge-data", "directory holding lodge's state (the mailroom and the price tables)")
	c.fs.StringVar(&c.dbURL, "db", "", "the PostgreSQL database nodes share (as lodge serve -db): the mailroom lives there, not in -data-dir")
	c.fs.StringVar(&account, "account", "", "the account invoiced (required)")
	c.fs.StringVar(&fromFlag, "from", "", "the period's first day or instant (required)")
	c.fs.StringVar(&toFlag, "to", "", "the period's end, not included (required)")
	c.fs.StringVar(&out, "out", ".", "the folder the invoices are written to (made when missing)")
	c.fs.Usage = func() {
		fmt.Fprint(c.fs.Output(), invoiceUsage+"\nflags:\n")
		c.fs.PrintDefaults()
	}
	if err := c.parse(args, 0); err != nil {
		return err
	}
	account = auth.NormalizeAccountCode(account)
	var errs []error
	if account == "" {
		errs = append(errs, errors.New("-account is required"))
	} else if !auth.ValidAccountCode(account) {
		errs = append(errs, fmt.Errorf("-account %q: an account code is three letters and five digits (ABC12345)", account))
	}
	var from, to time.Time
	for _, f := range []struct {
		name, v string
		t       *time.Time
	}{{"-from", fromFlag, &from}, {"-to", toFlag, &to}} {
		if f.v == "" {
			errs = append(errs, fmt.Errorf("%s is required", f.name))
			continue
		}
		t, err := parseTime(f.v, time.Local)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", f.name, err))
		}
		*f.t = t
	}
	if !from.IsZero() && !to.IsZero() && !from.Before(to) {
		errs = append(errs, fmt.Errorf("-from %s is not before -to %s", fromFlag, toFlag))
	}
	if out == "" {
		errs = append(errs, errors.New("-out is empty"))
	}
	if err := errors.Join(errs...); err != nil {
		c.fs.Usage()
		return fmt.Errorf("invoice: %w", err)
	}

	r, done, err := c.openRoom()
	if err != nil {
		return err
	}
	defer done()
	prices := billing.Prices{Dir: c.dataDir}
	if c.dbURL != "" {
		// the price tables several nodes share (lodge settings put)
		db, err := pgdb.Open(context.Background(), pgdb.Config{URL: c.dbURL})
		if err != nil {
			return fmt.Errorf("-db: %w", err)
		}
		defer db.Close()
		if prices.Files, err = datafiles.NewPostgres(db, datafiles.Options{}); err != nil {
			return err
		}
	}
	table, err := prices.For(account)
	if err != nil {
		return err
	}
	invs, err := billing.Invoices(r, billing.InvoiceRequest{Account: account, From: from, To: to, Currency: table.Currency})
	if err != nil {
		return err
	}
	if len(invs) == 0 {
		fmt.Fprintf(stderr, "no letters of %s were printed from %s up to %s: no invoice\n", account, from.Format(time.RFC3339), to.Format(time.RFC3339))
		return nil
	}
	paths, err := billing.WriteInvoices(out, invs)
	for _, p := range paths {
		fmt.Fprintln(stdout, p)
	}
	if err != nil {
		return err
	}
	for _, inv := range invs {
		po := inv.PurchaseOrder
		if po == "" {
			po = billing.PONone
		}
		fmt.Fprintf(stderr, "%s: %d letters, %s %s\n", cell(po), len(inv.Lines), inv.Currency, billing.Cents(inv.Total()))
	}
	return nil
}
