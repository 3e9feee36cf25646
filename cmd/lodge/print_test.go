package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lodge-mail/lodge/auth"
	"github.com/lodge-mail/lodge/internal/adminsock"
	"github.com/lodge-mail/lodge/internal/testenv"
	"github.com/lodge-mail/lodge/internal/testmailroom"
	"github.com/lodge-mail/lodge/pipeline"
	"github.com/lodge-mail/lodge/printroom"
)

func mustNil(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// run runs a command function and returns its output.
func run(fn func([]string, *bytes.Buffer, *bytes.Buffer) error, args ...string) (stdout, stderr string, err error) {
	var o, e bytes.Buffer
	err = fn(args, &o, &e)
	return o.String(), e.String(), err
}

func printCmd(args []string, o, e *bytes.Buffer) error   { return runPrint(args, o, e) }
func invoiceCmd(args []string, o, e *bytes.Buffer) error { return runInvoice(args, o, e) }

// TestPrintArgs: wrong arguments get a clear error and change nothing.
func TestPrintArgs(t *testing.T) {
	empty := t.TempDir()
	f := func(wantErr string, args ...string) {
		t.Helper()
		stdout, stderr, err := run(printCmd, args...)
		switch {
		case wantErr == "" && err != nil:
			t.Errorf("print %q: %v\n%s", args, err, stderr)
		case wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)):
			t.Errorf("print %q: %v, want an error saying %q (stdout %q)", args, err, wantErr, stdout)
		}
	}
	f("missing subcommand")
	f(`unknown subcommand "bogus"`, "bogus")
	f(`unknown subcommand "-state"`, "-state", "ready")
	f(`-state: invalid: a batch is composing, ready, printed or lodged, not "done"`, "list", "-state", "done", "-data-dir", empty)
	f(`want 0 argument(s), got ["extra"]`, "list", "extra", "-data-dir", empty)
	f("want 1 argument(s), got []", "show", "-data-dir", empty)
	f(`want 1 argument(s), got ["a" "b"]`, "show", "a", "b", "-data-dir", empty)
	f("want 1 argument(s), got []", "done", "-data-dir", empty)
	f("want 1 argument(s), got []", "lodged", "-at", "2026-11-01 10:00", "-data-dir", empty)
	f(`-at: "yesterday" is not a time`, "lodged", "B1", "-at", "yesterday", "-data-dir", empty)
	f(`-at: "2026-13-01" is not a time`, "done", "B1", "-at", "2026-13-01", "-data-dir", empty)
	f("flag provided but not defined: -at", "show", "B1", "-at", "2026-11-01", "-data-dir", empty)
	f("flag provided but not defined: -state", "done", "B1", "-state", "ready", "-data-dir", empty)
	f("no mailroom in "+empty, "show", "B1", "-data-dir", empty)
	f("no mailroom in "+empty, "done", "B1", "-data-dir", empty)
	f("no mailroom in "+empty, "lodged", "B1", "-at", "2026-11-01T10:00:00+11:00", "-data-dir", empty)
	f("", "list", "-data-dir", empty) // nothing to list
	f("", "-h")
	if entries, _ := os.ReadDir(empty); len(entries) != 0 {
		t.Errorf("the commands wrote into the data directory: %v", entries)
	}
	_, stderr, _ := run(printCmd, "list", "-data-dir", empty)
	if !strings.Contains(stderr, "no print batches") {
		t.Errorf("list of an empty data directory said %q", stderr)
	}
}

// TestInvoiceArgs: wrong arguments get a clear error and change nothing.
func TestInvoiceArgs(t *testing.T) {
	empty := t.TempDir()
	out := filepath.Join(t.TempDir(), "out")
	f := func(wantErr string, args ...string) {
		t.Helper()
		_, _, err := run(invoiceCmd, append(args, "-data-dir", empty, "-out", out)...)
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("invoice %q: %v, want an error saying %q", args, err, wantErr)
		}
	}
	f("-account is required", "-from", "2026-11-01", "-to", "2026-12-01")
	f("-from is required", "-account", "ABC12345", "-to", "2026-12-01")
	f("-to is required", "-account", "ABC12345", "-from", "2026-11-01")
	f("-from is required\n-to is required", "-account", "ABC12345")
	f(`-account "ABC1234": an account code is three letters and five digits`, "-account", "abc1234", "-from", "2026-11-01", "-to", "2026-12-01")
	f(`-account "../../ETC": an account code`, "-account", "../../etc", "-from", "2026-11-01", "-to", "2026-12-01")
	f(`-from: "1/11/2026" is not a time`, "-account", "ABC12345", "-from", "1/11/2026", "-to", "2026-12-01")
	f(`-to: "2026-12-32" is not a time`, "-account", "ABC12345", "-from", "2026-11-01", "-to", "2026-12-32")
	f("-from 2026-12-01 is not before -to 2026-11-01", "-account", "ABC12345", "-from", "2026-12-01", "-to", "2026-11-01")
	f("-from 2026-11-01 is not before -to 2026-11-01", "-account", "ABC12345", "-from", "2026-11-01", "-to", "2026-11-01")
	f(`want 0 argument(s), got ["ABC12345"]`, "ABC12345", "-from", "2026-11-01", "-to", "2026-12-01")
	f("flag provided but not defined: -po", "-account", "ABC12345", "-from", "2026-11-01", "-to", "2026-12-01", "-po", "x")
	f("no mailroom in "+empty, "-account", "ABC12345", "-from", "2026-11-01", "-to", "2026-12-01")
	if entries, _ := os.ReadDir(empty); len(entries) != 0 {
		t.Errorf("the command wrote into the data directory: %v", entries)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("the command made the output folder")
	}
}

// printFixture is a data directory with a mailroom of two mailings in
// ready batches, served (socket) or not (direct) as lodge serve would.
type printFixture struct {
	*testmailroom.Fixture
	e1, e2 []string
}

func newPrintFixture(t *testing.T, socket bool) *printFixture {
	t.Helper()
	fx := &printFixture{Fixture: testmailroom.New(t, t.TempDir(), time.Now().Add(-72*time.Hour))}
	ls := make([]pipeline.Letter, 8)
	for i := range ls {
		ls[i] = testmailroom.Letter(i, "ref-"+strconv.Itoa(i), strconv.Itoa(3000-i*100))
	}
	ls[2].Reference = "evil\x1b[31mred\tref"
	fx.e1 = fx.Produce(t, pipeline.Mailing{EPID: "E1", Account: "ABC12345", Title: "Statements", PurchaseOrder: "PO-1"}, ls)
	fx.e2 = fx.Produce(t, pipeline.Mailing{EPID: "E2", Account: "XYZ00001", Title: "Notices",
		Production: pipeline.Production{Colour: true, Duplex: true, Postage: "priority"}}, ls[:3])
	if !socket {
		mustNil(t, fx.Close())
		return fx
	}
	as, err := auth.Open(filepath.Join(fx.DataDir, "auth"))
	mustNil(t, err)
	t.Cleanup(func() { as.Close() })
	srv := adminsock.NewServer(adminsock.Config{})
	srv.HandleOps(auth.AdminOps(as))
	srv.HandleOps(printroom.AdminOps(fx.MR))
	stop, err := srv.Serve(context.Background(), adminsock.Path(fx.DataDir))
	mustNil(t, err)
	t.Cleanup(func() { stop() })
	return fx
}

// batch reads a batch from the fixture's store, opening it again when the
// fixture closed it.
func (fx *printFixture) batch(t *testing.T, id string) pipeline.Batch {
	t.Helper()
	r, done, err := printroom.Open(fx.DataDir)
	mustNil(t, err)
	defer done()
	b, err := r.Batch(id)
	mustNil(t, err)
	return b
}

// TestPrintCommands: list, show, done and lodged, on the store directly
// and through lodge serve's admin socket.
func TestPrintCommands(t *testing.T) {
	for _, mode := range []string{"direct", "socket"} {
		t.Run(mode, func(t *testing.T) {
			fx := newPrintFixture(t, mode == "socket")
			dd := []string{"-data-dir", fx.DataDir}
			if len(fx.e1) != 2 || len(fx.e2) != 1 {
				t.Fatalf("batches %v %v", fx.e1, fx.e2)
			}
			stdout, _, err := run(printCmd, append([]string{"list"}, dd...)...)
			mustNil(t, err)
			lines := strings.Split(strings.TrimSpace(stdout), "\n")
			if len(lines) != 4 || !regexp.MustCompile(`^BATCH\s+ACCOUNT\s+EPID\s+STATE\s+ENVELOPE\s+POSTAGE\s+COLOUR\s+DUPLEX\s+LETTERS\s+SHEETS\s+CREATED\s+READY\s+PRINTED\s+LODGED\s+FOLDER$`).MatchString(lines[0]) {
				t.Fatalf("list:\n%s", stdout)
			}
			row := regexp.MustCompile(`^(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\d+)\s+(\d+)\s+(\S+ \S+)\s+(\S+ \S+)\s+(-)\s+(-)\s+(\S+)$`)
			want := [][]string{
				{fx.e1[0], "ABC12345", "E1", "ready", "DL", "regular", "mono", "simplex", "7", "14"},
				{fx.e1[1], "ABC12345", "E1", "ready", "C4", "regular", "mono", "simplex", "1", "6"},
				{fx.e2[0], "XYZ00001", "E2", "ready", "DL", "priority", "colour", "duplex", "3", "6"},
			}
			for i, w := range want {
				m := row.FindStringSubmatch(lines[i+1])
				if m == nil || strings.Join(m[1:11], " ") != strings.Join(w, " ") || !strings.HasSuffix(m[15], filepath.Join("print", "outbox", w[0])) {
					t.Errorf("list row %d:\n%s\nwant %q", i, lines[i+1], w)
				}
			}
			stdout, _, err = run(printCmd, append([]string{"list", "-state", "printed"}, dd...)...)
			if err != nil || stdout != "" {
				t.Errorf("list -state printed: %q %v", stdout, err)
			}

			// show: the letters in print order (by postcode), the
			// customer's reference quoted where it holds controls.
			stdout, _, err = run(printCmd, append([]string{"show", fx.e1[0]}, dd...)...)
			mustNil(t, err)
			for _, want := range []string{"batch           " + fx.e1[0], "state           ready", "mailing         E1 Statements", "purchase order  PO-1",
				"production      DL envelope, regular post, mono, simplex, default stock", "letters         7 on 14 sheets (14 pages), price 14.00"} {
				if !strings.Contains(stdout, want) {
					t.Errorf("show lacks %q:\n%s", want, stdout)
				}
			}
			_, table, _ := strings.Cut(stdout, "INDEX")
			var got []string
			for _, l := range strings.Split(strings.TrimSpace(table), "\n")[1:] {
				got = append(got, strings.Join(strings.Fields(l), " "))
			}
			wantRows := "7 ref-7 1 2 Processing|5 ref-5 3 3 Processing|4 ref-4 6 2 Processing|3 ref-3 8 1 Processing|" +
				`2 "evil\x1b[31mred\tref" 9 3 Processing|1 ref-1 12 2 Processing|0 ref-0 14 1 Processing`
			if strings.Join(got, "|") != wantRows {
				t.Errorf("show's letters:\n%s\nwant\n%s", strings.Join(got, "|"), wantRows)
			}
			if strings.Contains(stdout, "\x1b") {
				t.Error("show wrote an escape sequence to the terminal")
			}
			if _, _, err := run(printCmd, append([]string{"show", "nope"}, dd...)...); err == nil || !strings.Contains(err.Error(), "batch nope: not found") {
				t.Errorf("show nope: %v", err)
			}

			// done (now, or at a time), then lodged at a time; refusals
			// change nothing.
			stdout, _, err = run(printCmd, append([]string{"done", fx.e1[1]}, dd...)...)
			mustNil(t, err)
			if !strings.Contains(stdout, "batch "+fx.e1[1]+" marked printed at ") || !strings.Contains(stdout, "its 1 letters are Printed") {
				t.Errorf("done: %q", stdout)
			}
			if b := fx.batch(t, fx.e1[1]); b.State != pipeline.BatchPrinted || time.Since(b.Printed) > time.Hour || b.Printed.After(time.Now()) {
				t.Errorf("after done: %+v", b)
			}
			printed := time.Now().Add(-10 * time.Minute).Truncate(time.Second)
			stdout, _, err = run(printCmd, append([]string{"done", fx.e1[0], "-at", printed.Format(time.RFC3339)}, dd...)...)
			mustNil(t, err)
			if !strings.Contains(stdout, "marked printed at "+when(printed)+": its 7 letters are Printed") {
				t.Errorf("done -at: %q", stdout)
			}
			if b := fx.batch(t, fx.e1[0]); b.State != pipeline.BatchPrinted || !b.Printed.Equal(printed) {
				t.Errorf("after done -at: %+v", b)
			}
			if _, _, err := run(printCmd, append([]string{"done", fx.e1[0]}, dd...)...); err == nil || !strings.Contains(err.Error(), "already printed") {
				t.Errorf("done twice: %v", err)
			}
			if _, _, err := run(printCmd, append([]string{"lodged", fx.e1[0], "-at", printed.Add(-time.Second).Format(time.RFC3339)}, dd...)...); err == nil || !strings.Contains(err.Error(), "cannot be lodged before") {
				t.Errorf("lodged before printed: %v", err)
			}
			future := time.Now().Add(24 * time.Hour).Format(time.RFC3339)
			if _, _, err := run(printCmd, append([]string{"lodged", fx.e1[0], "-at", future}, dd...)...); err == nil || !strings.Contains(err.Error(), "in the future") {
				t.Errorf("lodged in the future: %v", err)
			}
			at := time.Now().Add(-time.Minute).Truncate(time.Second)
			stdout, _, err = run(printCmd, append([]string{"lodged", fx.e1[0], "-at", at.Format(time.RFC3339)}, dd...)...)
			mustNil(t, err)
			if !strings.Contains(stdout, "marked lodged at "+when(at)) {
				t.Errorf("lodged: %q", stdout)
			}
			if b := fx.batch(t, fx.e1[0]); b.State != pipeline.BatchLodged || !b.Lodged.Equal(at) {
				t.Errorf("after lodged: %+v", b)
			}
			// lodged straight from ready: printed at the same time.
			at2 := time.Now().Add(-2 * time.Minute).Truncate(time.Second).In(time.Local)
			_, _, err = run(printCmd, append([]string{"lodged", fx.e2[0], "-at", at2.Format("2006-01-02 15:04:05")}, dd...)...)
			mustNil(t, err)
			if b := fx.batch(t, fx.e2[0]); b.State != pipeline.BatchLodged || !b.Lodged.Equal(at2) || !b.Printed.Equal(at2) {
				t.Errorf("lodged from ready: %+v", b)
			}
			stdout, _, err = run(printCmd, append([]string{"show", fx.e1[0]}, dd...)...)
			mustNil(t, err)
			if strings.Count(stdout, " Lodged\n") != 7 || !strings.Contains(stdout, "lodged          "+when(at)) {
				t.Errorf("show after lodged:\n%s", stdout)
			}
			stdout, _, err = run(printCmd, append([]string{"list", "-state", "lodged"}, dd...)...)
			mustNil(t, err)
			if strings.Count(stdout, "\n") != 3 {
				t.Errorf("list -state lodged:\n%s", stdout)
			}
		})
	}
}

// TestInvoiceCommand: the invoices of a period, read directly and
// through the socket; the CSV adds up to the PDF's total.
func TestInvoiceCommand(t *testing.T) {
	pdftotext := testenv.Tool(t, "pdftotext")
	for _, mode := range []string{"direct", "socket"} {
		t.Run(mode, func(t *testing.T) {
			fx := newPrintFixture(t, false)
			// E1's DL batch printed, its C4 batch not; E2 is another account's.
			at := time.Now().Add(-time.Hour).Truncate(time.Second)
			dd := []string{"-data-dir", fx.DataDir}
			_, _, err := run(printCmd, append([]string{"done", fx.e1[0], "-at", at.Format(time.RFC3339)}, dd...)...)
			mustNil(t, err)
			_, _, err = run(printCmd, append([]string{"lodged", fx.e2[0]}, dd...)...)
			mustNil(t, err)
			if mode == "socket" {
				s, err := pipeline.OpenPebble(filepath.Join(fx.DataDir, "mailroom"))
				mustNil(t, err)
				defer s.Close()
				srv := adminsock.NewServer(adminsock.Config{})
				srv.HandleOps(printroom.AdminOps(pipeline.New(s, nil, pipeline.Config{}, nil)))
				stop, err := srv.Serve(context.Background(), adminsock.Path(fx.DataDir))
				mustNil(t, err)
				defer stop()
			}
			out := filepath.Join(t.TempDir(), "invoices")
			from, to := at.Add(-time.Hour).Format(time.RFC3339), at.Add(time.Second).Format(time.RFC3339)
			stdout, stderr, err := run(invoiceCmd, append([]string{"-account", "abc12345", "-from", from, "-to", to, "-out", out}, dd...)...)
			mustNil(t, err)
			paths := strings.Fields(stdout)
			if len(paths) != 2 || !strings.HasSuffix(paths[0], "_PO-PO-1.csv") || !strings.HasSuffix(paths[1], "_PO-PO-1.pdf") {
				t.Fatalf("invoice wrote %q", paths)
			}
			if !strings.Contains(stderr, "PO-1: 7 letters, AUD 14.00") {
				t.Errorf("invoice said %q", stderr)
			}
			b, err := os.ReadFile(paths[0])
			mustNil(t, err)
			rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
			mustNil(t, err)
			var sum int64
			for _, r := range rows[1:] {
				units, dec, _ := strings.Cut(r[8], ".")
				u, _ := strconv.ParseInt(units, 10, 64)
				d, _ := strconv.ParseInt(dec, 10, 64)
				sum += 100*u + d
			}
			if len(rows) != 8 || sum != 1400 {
				t.Errorf("CSV: %d rows summing to %d", len(rows), sum)
			}
			text, err := exec.Command(pdftotext, "-layout", paths[1], "-").Output()
			mustNil(t, err)
			if !regexp.MustCompile(`(?m)^\s*Total\s+AUD 14\.00$`).Match(text) || !strings.Contains(string(text), "ABC12345") {
				t.Errorf("the PDF:\n%s", text)
			}
			// Nothing in another period.
			_, stderr, err = run(invoiceCmd, append([]string{"-account", "ABC12345", "-from", "2020-01-01", "-to", "2020-02-01", "-out", out}, dd...)...)
			if err != nil || !strings.Contains(stderr, "no invoice") {
				t.Errorf("an empty period: %q %v", stderr, err)
			}
		})
	}
}
