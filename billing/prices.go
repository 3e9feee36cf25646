// Package billing prices letters and writes invoices.
//
// # Price tables
//
// Prices are whole cents in a JSON file the operator keeps in the data
// directory: <data-dir>/prices.json is every account's, and
// <data-dir>/prices/<ACCOUNT>.json, when present, an account's own (read
// whole: it does not inherit from the default). lodge writes the default
// file with the values of DefaultTable when there is none; they are
// placeholders for the operator to set. The format:
//
//	{
//	  "currency": "AUD",
//	  "sheet":        {"mono": 12, "colour": 40},   a sheet printed on one side
//	  "duplex_sheet": {"mono": 15, "colour": 55},   a sheet printed on both sides
//	  "envelope":     {"DL": 6, "C4": 20},
//	  "postage":      {"regular":  {"DL": 170, "C4": 350},
//	                   "priority": {"DL": 270, "C4": 510}},
//	  "email": 4, "sms_part": 8, "fax_page": 15
//	}
//
// A letter's price is its sheets at the sheet price (duplex or not, mono
// or colour), plus its envelope and its postage; an email, an SMS part and
// a fax page have their own. A table is read when a mailing is checked,
// so an edit applies to the mailings checked after it. With several nodes
// the tables are the shared database's (Prices.Files; lodge settings put
// prices.json FILE -db URL): an edit applies on every node within
// datafiles.DefaultCacheFor.
//
// # Invoices
//
// Invoices makes one invoice per distinct purchase order (specification
// 2.2; the mailings without one share an invoice, "no purchase order") of
// an account's postal letters produced in a period [from, to): a letter
// is billed in the period its Printed event falls in (Printed, Lodged and
// Returned letters; cancelled, held or failed ones never), at the price
// it got when it was checked. WriteInvoices writes each as CSV (a line
// per letter: date, EPID, mailing, letter, reference, envelope, postage,
// sheets, price; customers' text cannot start a spreadsheet formula) and
// PDF (account, purchase order, period; tables by mailing and by postage
// class and envelope with their totals; pages numbered), atomically and
// durably, named invoice_ACCOUNT_FROM_TO_PO-<purchase order>.
package billing

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"regexp"

	"github.com/segmentio/encoding/json"

	"github.com/lodge-mail/lodge/datafiles"
)

// ByColour is a price for mono and for colour printing.
type ByColour struct {
	Mono   int64 `json:"mono"`
	Colour int64 `json:"colour"`
}

// Table is a price table, in cents.
type Table struct {
	Currency    string                      `json:"currency"`
	Sheet       ByColour                    `json:"sheet"`
	DuplexSheet ByColour                    `json:"duplex_sheet"`
	Envelope    map[string]int64            `json:"envelope"`
	Postage     map[string]map[string]int64 `json:"postage"`
	Email       int64                       `json:"email"`
	SMSPart     int64                       `json:"sms_part"`
	FaxPage     int64                       `json:"fax_page"`
}

// DefaultTable is written as <data-dir>/prices.json when there is none.
var DefaultTable = Table{
	Currency:    "AUD",
	Sheet:       ByColour{Mono: 12, Colour: 40},
	DuplexSheet: ByColour{Mono: 15, Colour: 55},
	Envelope:    map[string]int64{"DL": 6, "C4": 20},
	Postage: map[string]map[string]int64{
		"regular":  {"DL": 170, "C4": 350},
		"priority": {"DL": 270, "C4": 510},
	},
	Email: 4, SMSPart: 8, FaxPage: 15,
}

// Postal prices a postal letter.
func (t *Table) Postal(sheets int, duplex, colour bool, envelope, postage string) (int64, error) {
	per := t.Sheet
	if duplex {
		per = t.DuplexSheet
	}
	sheet := per.Mono
	if colour {
		sheet = per.Colour
	}
	env, ok := t.Envelope[envelope]
	if !ok {
		return 0, fmt.Errorf("the price table has no envelope %q", envelope)
	}
	post, ok := t.Postage[postage][envelope]
	if !ok {
		return 0, fmt.Errorf("the price table has no %s postage for %s envelopes", postage, envelope)
	}
	return int64(sheets)*sheet + env + post, nil
}

// Validate checks that a table prices everything production makes.
func (t *Table) Validate() error {
	var errs []error
	for _, env := range []string{"DL", "C4"} {
		if _, ok := t.Envelope[env]; !ok {
			errs = append(errs, fmt.Errorf("envelope.%s is missing", env))
		}
		for _, class := range []string{"regular", "priority"} {
			if _, ok := t.Postage[class][env]; !ok {
				errs = append(errs, fmt.Errorf("postage.%s.%s is missing", class, env))
			}
		}
	}
	neg := func(name string, v int64) {
		if v < 0 {
			errs = append(errs, fmt.Errorf("%s is negative", name))
		}
	}
	neg("sheet.mono", t.Sheet.Mono)
	neg("sheet.colour", t.Sheet.Colour)
	neg("duplex_sheet.mono", t.DuplexSheet.Mono)
	neg("duplex_sheet.colour", t.DuplexSheet.Colour)
	neg("email", t.Email)
	neg("sms_part", t.SMSPart)
	neg("fax_page", t.FaxPage)
	for k, v := range t.Envelope {
		neg("envelope."+k, v)
	}
	for c, m := range t.Postage {
		for k, v := range m {
			neg("postage."+c+"."+k, v)
		}
	}
	return errors.Join(errs...)
}

// Prices reads the price tables of a data directory, or of the database
// several nodes share.
type Prices struct {
	Dir string // the data directory
	// Files, when set, holds the tables instead of Dir: the shared files
	// (datafiles.NewPostgres), prices.json and prices/<ACCOUNT>.json.
	Files datafiles.Files
}

var accountCode = regexp.MustCompile(`^[A-Z0-9]{1,32}$`)

// maxTableBytes bounds a price table file.
const maxTableBytes = 1 << 20

func (p Prices) files() datafiles.Files {
	if p.Files != nil {
		return p.Files
	}
	return datafiles.Dir(p.Dir)
}

// For returns the table of an account: its own file, else the default
// one (written from DefaultTable when missing: made once, whoever asks
// first, however many nodes ask at once).
func (p Prices) For(account string) (Table, error) {
	f := p.files()
	if accountCode.MatchString(account) {
		t, err := readTable(f, "prices/"+account+".json")
		if err == nil || !errors.Is(err, fs.ErrNotExist) {
			return t, err
		}
	}
	const name = "prices.json"
	t, err := readTable(f, name)
	if errors.Is(err, fs.ErrNotExist) {
		b, _ := json.MarshalIndent(DefaultTable, "", "  ")
		b = append(b, '\n')
		got, err := f.Create(name, b, 0o644)
		if err != nil {
			return Table{}, err
		}
		if bytes.Equal(got, b) {
			return DefaultTable, nil
		}
		return parseTable(f.Where(name), got) // the operator's, made meanwhile
	}
	return t, err
}

func readTable(f datafiles.Files, name string) (Table, error) {
	b, err := f.Read(name, maxTableBytes)
	if errors.Is(err, datafiles.ErrNotFile) {
		return Table{}, fmt.Errorf("price table %s: not a file of at most %d bytes", f.Where(name), maxTableBytes)
	}
	if err != nil {
		return Table{}, err
	}
	return parseTable(f.Where(name), b)
}

// ParseTable reads a price table file's bytes and checks it as the server
// does (lodge settings put checks a table before it is stored).
func ParseTable(b []byte) (Table, error) {
	if len(b) > maxTableBytes {
		return Table{}, fmt.Errorf("%d bytes, more than %d", len(b), maxTableBytes)
	}
	var t Table
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields() // a misspelt key would silently price at 0
	if err := dec.Decode(&t); err != nil {
		return Table{}, err
	}
	if err := t.Validate(); err != nil {
		return Table{}, err
	}
	return t, nil
}

func parseTable(where string, b []byte) (Table, error) {
	t, err := ParseTable(b)
	if err != nil {
		return Table{}, fmt.Errorf("price table %s: %w", where, err)
	}
	return t, nil
}
