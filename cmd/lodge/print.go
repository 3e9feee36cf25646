// The print room commands: list, show and mark print batches. They work
// on the mailroom store (<data-dir>/mailroom) directly, or through lodge
// serve's admin socket while it holds the store; printroom.Open picks.

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/user"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/lodge-mail/lodge/billing"
	"github.com/lodge-mail/lodge/pgdb"
	"github.com/lodge-mail/lodge/pipeline"
	"github.com/lodge-mail/lodge/printroom"
)

const printUsage = `usage:
  lodge print list [-state composing|ready|printed|lodged]   list print batches, oldest first
  lodge print show BATCH                                     a batch and its letters in print order
  lodge print done BATCH [-at TIME]                          mark a batch printed (default now)
  lodge print lodged BATCH [-at TIME]                        mark a batch handed to the postal service (default now)
TIME is RFC 3339 (2026-11-23T16:30:00+11:00) or local time (2026-11-23 16:30).
Every command takes -data-dir (default lodge-data), or -db for the database several nodes share.
`

// newPrintCommand makes the flag set of "lodge print <sub>".
func newPrintCommand(sub string, stderr io.Writer, register func(fs *flag.FlagSet)) *authCommand {
	c := &authCommand{fs: flag.NewFlagSet("print "+sub, flag.ContinueOnError)}
	c.fs.SetOutput(stderr)
	c.fs.StringVar(&c.dataDir, "data-dir", "lodge-data", "directory holding lodge's state; the mailroom lives in its mailroom folder")
	c.fs.StringVar(&c.dbURL, "db", "", "the PostgreSQL database nodes share (as lodge serve -db): the mailroom lives there, not in -data-dir")
	if register != nil {
		register(c.fs)
	}
	c.fs.Usage = func() {
		fmt.Fprint(c.fs.Output(), printUsage+"\nflags of print "+sub+":\n")
		c.fs.PrintDefaults()
	}
	return c
}

// openRoom opens the print room: the shared database's mailroom with -db,
// else the data directory's (or its lodge serve's admin socket).
func (c *authCommand) openRoom() (printroom.Room, func() error, error) {
	if c.dbURL == "" {
		return printroom.Open(c.dataDir)
	}
	db, err := pgdb.Open(context.Background(), pgdb.Config{URL: c.dbURL})
	if err != nil {
		return nil, nil, fmt.Errorf("-db: %w", err)
	}
	// a store that claims no jobs: its leases are never used
	st, err := pipeline.OpenPostgres(db, pipeline.PostgresOptions{Renew: -1})
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return printroom.Local(pipeline.New(st, nil, pipeline.Config{}, nil)), func() error { err := st.Close(); db.Close(); return err }, nil
}

func runPrint(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, printUsage)
		return errors.New("print: missing subcommand")
	}
	switch sub := args[0]; sub {
	case "list":
		var state string
		c := newPrintCommand(sub, stderr, func(fs *flag.FlagSet) {
			fs.StringVar(&state, "state", "", "only batches in this state: composing, ready, printed or lodged")
		})
		if err := c.parse(args[1:], 0); err != nil {
			return err
		}
		if err := printroom.CheckState(state); err != nil {
			return fmt.Errorf("print list: -state: %w", err)
		}
		r, done, err := c.openRoom()
		if errors.Is(err, printroom.ErrNoMailroom) {
			fmt.Fprintln(stderr, "no print batches:", err)
			return nil
		}
		if err != nil {
			return err
		}
		defer done()
		bs, err := r.Batches(state)
		if err != nil {
			return err
		}
		if len(bs) == 0 {
			fmt.Fprintln(stderr, strings.TrimSpace("no print batches "+state))
			return nil
		}
		w := tabwriter.NewWriter(stdout, 0, 8, 2, ' ', 0)
		fmt.Fprintln(w, "BATCH\tACCOUNT\tEPID\tSTATE\tENVELOPE\tPOSTAGE\tCOLOUR\tDUPLEX\tLETTERS\tSHEETS\tCREATED\tREADY\tPRINTED\tLODGED\tFOLDER")
		for _, b := range bs {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\n", cell(b.ID), cell(b.Account), cell(b.EPID), b.State,
				cell(b.Envelope), cell(b.Postage), colour(b.Colour), duplex(b.Duplex), len(b.Letters), b.Sheets,
				when(b.Created), when(b.Ready), when(b.Printed), when(b.Lodged), cell(b.Dir))
		}
		return w.Flush()
	case "show":
		c := newPrintCommand(sub, stderr, nil)
		if err := c.parse(args[1:], 1); err != nil {
			return err
		}
		r, done, err := c.openRoom()
		if err != nil {
			return err
		}
		defer done()
		return showBatch(r, c.args[0], stdout)
	case "done", "lodged":
		var atFlag string
		c := newPrintCommand(sub, stderr, func(fs *flag.FlagSet) {
			what := "printed"
			if sub == "lodged" {
				what = "handed to the postal service"
			}
			fs.StringVar(&atFlag, "at", "", "when it was "+what+" (default now)")
		})
		if err := c.parse(args[1:], 1); err != nil {
			return err
		}
		var at time.Time
		if atFlag != "" {
			var err error
			if at, err = parseTime(atFlag, time.Local); err != nil {
				return fmt.Errorf("print %s: -at: %w", sub, err)
			}
		}
		state := pipeline.BatchPrinted
		if sub == "lodged" {
			state = pipeline.BatchLodged
		}
		r, done, err := c.openRoom()
		if err != nil {
			return err
		}
		defer done()
		b, err := r.MarkBatch(c.args[0], state, at, operator())
		if err != nil {
			return err
		}
		t, status := b.Printed, pipeline.Printed
		if state == pipeline.BatchLodged {
			t, status = b.Lodged, pipeline.Lodged
		}
		fmt.Fprintf(stdout, "batch %s marked %s at %s: its %d letters are %s\n", b.ID, state, when(t), len(b.Letters), status)
		return nil
	case "-h", "--help", "help":
		fmt.Fprint(stdout, printUsage)
		return nil
	}
	fmt.Fprint(stderr, printUsage)
	return fmt.Errorf("print: unknown subcommand %q", args[0])
}

// showBatch prints a batch and its letters in print order.
func showBatch(r printroom.Room, id string, out io.Writer) error {
	b, err := r.Batch(id)
	if err != nil {
		return fmt.Errorf("batch %s: %w", id, err)
	}
	m, err := r.Mailing(b.EPID)
	if err != nil {
		return fmt.Errorf("batch %s: mailing %s: %w", id, b.EPID, err)
	}
	stock := b.Stock
	if stock == "" {
		stock = "default"
	}
	w := tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)
	for _, kv := range [][2]string{
		{"batch", cell(b.ID)},
		{"state", b.State},
		{"account", cell(b.Account)},
		{"mailing", cell(b.EPID) + " " + cell(m.Title)},
		{"purchase order", cell(m.PurchaseOrder)},
		{"production", fmt.Sprintf("%s envelope, %s post, %s, %s, %s stock", cell(b.Envelope), cell(b.Postage), colour(b.Colour), duplex(b.Duplex), cell(stock))},
		{"letters", fmt.Sprintf("%d on %d sheets (%d pages), price %s", len(b.Letters), b.Sheets, b.Pages, billing.Cents(b.Price))},
		{"created", when(b.Created)},
		{"ready", when(b.Ready)},
		{"printed", when(b.Printed)},
		{"lodged", when(b.Lodged)},
		{"folder", cell(b.Dir)},
	} {
		fmt.Fprintf(w, "%s\t%s\n", kv[0], kv[1])
	}
	if b.Printer != "" {
		fmt.Fprintf(w, "printer job\t%s\n", cell(b.Printer))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if len(b.Letters) == 0 {
		return nil
	}
	// The batch's letters are some of its mailing's: read the range they
	// span.
	lo, hi := b.Letters[0], b.Letters[0]
	for _, idx := range b.Letters {
		lo, hi = min(lo, idx), max(hi, idx)
	}
	ls, err := r.Letters(b.EPID, lo, hi-lo+1)
	if err != nil {
		return fmt.Errorf("batch %s: letters of %s: %w", id, b.EPID, err)
	}
	byIdx := make(map[int]*pipeline.Letter, len(ls))
	for i := range ls {
		byIdx[ls[i].Idx] = &ls[i]
	}
	fmt.Fprintln(out)
	w = tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)
	fmt.Fprintln(w, "INDEX\tREFERENCE\tFIRST SHEET\tSHEETS\tSTATUS")
	for _, idx := range b.Letters {
		l := byIdx[idx]
		if l == nil {
			fmt.Fprintf(w, "%d\t-\t-\t-\tmissing from the mailing\n", idx)
			continue
		}
		fmt.Fprintf(w, "%d\t%s\t%d\t%d\t%s\n", l.Idx, cell(l.Reference), l.Sheet, l.Sheets, l.Status)
	}
	return w.Flush()
}

// unsafeRune is a character a table cell does not show as it is.
func unsafeRune(r rune) bool {
	return unicode.IsControl(r) || r == unicode.ReplacementChar || unicode.IsSpace(r) && r != ' '
}

// cell shows text from records (customers' references, titles) in a
// table: quoted when it holds white space other than a space, controls
// (a terminal's escape sequences) or bytes that are not UTF-8; "-" when
// empty.
func cell(s string) string {
	if s == "" {
		return "-"
	}
	if strings.IndexFunc(s, unsafeRune) >= 0 || !utf8.ValidString(s) {
		return strconv.QuoteToGraphic(s)
	}
	return s
}

func colour(c bool) string {
	if c {
		return "colour"
	}
	return "mono"
}

func duplex(d bool) string {
	if d {
		return "duplex"
	}
	return "simplex"
}

// operator names who runs the command, for the letters' timelines.
func operator() string {
	name := ""
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	if name == "" {
		name = os.Getenv("USER")
	}
	if name == "" || len(name) > 64 || strings.IndexFunc(name, unicode.IsControl) >= 0 || !utf8.ValidString(name) {
		name = fmt.Sprintf("uid %d", os.Getuid())
	}
	return name
}

// timeLayouts are the local-time forms parseTime takes besides RFC 3339.
var timeLayouts = []string{"2006-01-02 15:04:05", "2006-01-02T15:04:05", "2006-01-02 15:04", "2006-01-02T15:04", "2006-01-02"}

// parseTime reads a time given on the command line: RFC 3339, or a date
// and time (or a date: its midnight) in loc.
func parseTime(s string, loc *time.Location) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	for _, layout := range timeLayouts {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a time: want RFC 3339 (2026-11-23T16:30:00+11:00), or a local date and time (2026-11-23 16:30, 2026-11-23)", s)
}
