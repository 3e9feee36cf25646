package production

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lodge-mail/lodge/blob"
	"github.com/lodge-mail/lodge/internal/ipp"
	"github.com/lodge-mail/lodge/internal/testcups"
	"github.com/lodge-mail/lodge/internal/testdoc/mailpdf"
	"github.com/lodge-mail/lodge/internal/testdoc/readback"
	"github.com/lodge-mail/lodge/pipeline"
)

// crashAfterSend sends for real, then, while armed, answers as a print
// stage cut between sending and committing would leave things: the
// printer has the job, the mailroom does not know it.
type crashAfterSend struct {
	pipeline.Printer
	armed bool
	sent  []string
}

func (c *crashAfterSend) Send(ctx context.Context, b *pipeline.Batch) (string, error) {
	job, err := c.Printer.Send(ctx, b)
	if err == nil {
		c.sent = append(c.sent, job)
		if c.armed {
			c.armed = false
			return "", fmt.Errorf("crashed after sending %s as %s", b.ID, job)
		}
	}
	return job, err
}

type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *testClock) Add(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

// drain runs the mailroom's stages until none is due, and returns the
// failures on the way (a failed job is due again only after the backoff).
func drain(t *testing.T, mr *pipeline.Mailroom) []error {
	t.Helper()
	var errs []error
	for range 100 {
		n, err := mr.RunDue(context.Background())
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if n == 0 {
			return errs
		}
	}
	t.Fatal("the stages never end")
	return nil
}

// submit records a test mailing in the mailroom.
func submit(t *testing.T, mr *pipeline.Mailroom, ml *mailing, now time.Time) {
	t.Helper()
	ml.m.Letters, ml.m.Created = len(ml.letters), now
	var ls []pipeline.Letter
	for _, l := range ml.letters {
		ls = append(ls, *l)
	}
	if err := mr.Submit(ml.m, ls); err != nil {
		t.Fatal(err)
	}
}

// onlyBatch returns the one batch of a mailing.
func onlyBatch(t *testing.T, s pipeline.Store, epid string) pipeline.Batch {
	t.Helper()
	bs, err := s.Batches("")
	if err != nil {
		t.Fatal(err)
	}
	var out []pipeline.Batch
	for _, b := range bs {
		if b.EPID == epid {
			out = append(out, b)
		}
	}
	if len(out) != 1 {
		t.Fatalf("mailing %s has batches %+v, want one", epid, out)
	}
	return out[0]
}

// printJobs returns the print stage's queued jobs.
func printJobs(t *testing.T, s pipeline.Store) []pipeline.Job {
	t.Helper()
	jobs, err := s.Jobs()
	if err != nil {
		t.Fatal(err)
	}
	var out []pipeline.Job
	for _, j := range jobs {
		if j.Kind == pipeline.JobPrint {
			out = append(out, j)
		}
	}
	return out
}

// printerJobs returns lodge's jobs at the printer named name.
func printerJobs(t *testing.T, q testcups.Queue, name string) []ipp.Job {
	t.Helper()
	c, err := ipp.New(q.URI, ipp.Config{})
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := c.GetJobs(context.Background(), "all", true)
	if err != nil {
		t.Fatal(err)
	}
	var out []ipp.Job
	for _, j := range jobs {
		if j.Name == name {
			out = append(out, j)
		}
	}
	return out
}

// checkPrinted checks that the batch was sent once, as the job it
// records, and that the PDF the printer wrote for it has as many pages
// as the batch's PDF (in the hot folder, or the object store).
func checkPrinted(t *testing.T, s pipeline.Store, q testcups.Queue, b pipeline.Batch, blobs blob.Store) {
	t.Helper()
	jobs := printerJobs(t, q, b.ID)
	if len(jobs) != 1 {
		t.Fatalf("batch %s is %d jobs at the printer: %+v", b.ID, len(jobs), jobs)
	}
	if b.Printer != jobs[0].URI || !strings.HasPrefix(b.Printer, "ipp://") {
		t.Errorf("batch %s records printer job %q, the printer has %q", b.ID, b.Printer, jobs[0].URI)
	}
	if done := q.WaitJob(t, jobs[0].ID); done.State != ipp.JobCompleted {
		t.Fatalf("job %d ended in state %d %v", done.ID, done.State, done.StateReasons)
	}
	want := b.Sheets
	if b.Duplex {
		want *= 2
	}
	batchPDF := filepath.Join(t.TempDir(), BatchPDF)
	if err := os.WriteFile(batchPDF, readBatchFile(t, blobs, b, BatchPDF), 0o600); err != nil {
		t.Fatal(err)
	}
	if n := len(readback.Sizes(t, batchPDF)); n != want {
		t.Fatalf("the batch's %s has %d pages, want %d", BatchPDF, n, want)
	}
	var printed []string
	for _, p := range q.PDFs(t) {
		if strings.HasPrefix(filepath.Base(p), b.ID) && strings.HasSuffix(p, "job_"+strconv.Itoa(jobs[0].ID)+".pdf") {
			printed = append(printed, p)
		}
	}
	if len(printed) != 1 {
		t.Fatalf("the printer wrote %v for job %d", q.PDFs(t), jobs[0].ID)
	}
	if n := len(readback.Sizes(t, printed[0])); n != want {
		t.Errorf("the printer's PDF of batch %s has %d pages, want %d", b.ID, n, want)
	}
	ls, err := s.Letters(b.EPID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range ls {
		if ev := l.Events[len(l.Events)-1]; ev.Event != "Sent" || ev.Detail != "to the printer: "+b.Printer {
			t.Errorf("letter %d's last event is %+v", l.Idx, ev)
		}
	}
}

// TestPrintStage sends batches composed by production through the
// mailroom's print stage to a real CUPS with a cups-pdf printer: a
// printer that does not answer leaves the job queued with its attempts
// and error, and it is sent when the printer is back; a stage cut
// between sending and committing finds the job at the printer and does
// not send it again; a printer refusing jobs is retried, and a batch
// the print room marked printed meanwhile is not sent; each printed PDF
// has its batch's pages.
//
// With an object store the print stage reads the batch from the store:
// the batch's folder is gone from the hot folder (another node composed
// it) before it is sent.
func TestPrintStage(t *testing.T) { eachSetup(t, testPrintStage) }

func testPrintStage(t *testing.T, s setup) {
	p := s.producer(t)
	addr := mailpdf.Address
	cups := testcups.Listen(t) // not started yet: connections are never answered
	printer, err := NewPrinter(PrinterConfig{URI: "ipp://" + cups.Addr + "/printers/lodge", Timeout: time.Second, Batches: p.Batches()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	crash := &crashAfterSend{Printer: printer}
	store, err := pipeline.OpenPebble(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	clock := &testClock{now: time.Now().UTC().Add(-time.Hour)}
	mr := pipeline.New(store, p, pipeline.Config{CancelWindow: -1, Printer: crash, Now: clock.Now,
		Runner: pipeline.RunnerConfig{Backoff: func(int) time.Duration { return time.Minute }}}, slog.New(slog.DiscardHandler))

	// A duplex mailing while the printer does not answer: composed into
	// the hot folder, its print job queued with the failure
	a := newMailing(t, p, "E-PRINTA", pipeline.Production{Duplex: true})
	a.doc("a.pdf", mailpdf.Page{Address: addr(1), Text: "Dear Customer 1"}, mailpdf.Page{Text: "Yours sincerely"},
		mailpdf.Page{Address: addr(2), Text: "Dear Customer 2"})
	a.letter(addr(1), "a.pdf:0-1")
	a.letter(addr(2), "a.pdf:2-2")
	submit(t, mr, a, clock.Now())
	errs := drain(t, mr)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), " to ipp://"+cups.Addr+"/printers/lodge: context deadline exceeded") {
		t.Fatalf("stage failures %v, want the printer's", errs)
	}
	ba := onlyBatch(t, store, "E-PRINTA")
	if ba.State != pipeline.BatchReady || ba.Printer != "" {
		t.Fatalf("batch %+v", ba)
	}
	jobs := printJobs(t, store)
	if len(jobs) != 1 || jobs[0].Kind != pipeline.JobPrint || jobs[0].Key != ba.ID+"@E-PRINTA" || jobs[0].Attempts != 1 || !strings.Contains(jobs[0].Error, cups.Addr) {
		t.Fatalf("queue %+v, want the print job of %s after one failed attempt", jobs, ba.ID)
	}

	if p.cfg.Blobs != nil {
		// the print job runs on another node: the batch's folder is not
		// there
		if err := os.RemoveAll(ba.Dir); err != nil {
			t.Fatal(err)
		}
	}

	// the printer answers: the print job is sent at its next attempt
	cups.Start(t)
	q := cups.AddPDFQueue(t, "lodge")
	if errs := drain(t, mr); len(errs) != 0 {
		t.Fatalf("before its backoff ended: %v", errs)
	}
	if jobs := printerJobs(t, q, ba.ID); len(jobs) != 0 {
		t.Fatalf("sent before its backoff ended: %+v", jobs)
	}
	clock.Add(2 * time.Minute)
	if errs := drain(t, mr); len(errs) != 0 {
		t.Fatal(errs)
	}
	ba = onlyBatch(t, store, "E-PRINTA")
	checkPrinted(t, store, q, ba, p.cfg.Blobs)

	// B: the stage is cut after the printer took the job, before the
	// batch records it; its next attempt finds the job
	b := newMailing(t, p, "E-PRINTB", pipeline.Production{})
	b.doc("b.pdf", mailpdf.Page{Address: addr(3), Text: "Dear Customer 3"}, mailpdf.Page{Address: addr(4), Text: "Dear Customer 4"},
		mailpdf.Page{Text: "page 2 of 2"})
	b.letter(addr(3), "b.pdf:0-0")
	b.letter(addr(4), "b.pdf:1-2")
	crash.armed = true
	submit(t, mr, b, clock.Now())
	if errs := drain(t, mr); len(errs) != 1 || !strings.Contains(errs[0].Error(), "crashed after sending") {
		t.Fatalf("stage failures %v, want the crash", errs)
	}
	bb := onlyBatch(t, store, "E-PRINTB")
	if bb.Printer != "" || len(crash.sent) != 2 {
		t.Fatalf("after the crash: batch %+v, sent %v", bb, crash.sent)
	}
	clock.Add(2 * time.Minute)
	if errs := drain(t, mr); len(errs) != 0 {
		t.Fatal(errs)
	}
	bb = onlyBatch(t, store, "E-PRINTB")
	if len(crash.sent) != 2 || bb.Printer != crash.sent[1] {
		t.Errorf("sent %v; batch records %q", crash.sent, bb.Printer)
	}
	checkPrinted(t, store, q, bb, p.cfg.Blobs)
	if jobs := printJobs(t, store); len(jobs) != 0 {
		t.Errorf("print jobs queued: %+v", jobs)
	}

	// C: the printer refuses jobs; meanwhile the print room prints the
	// batch from the hot folder and marks it printed: it is not sent
	cups.Reject(t, q)
	c := newMailing(t, p, "E-PRINTC", pipeline.Production{})
	c.doc("c.pdf", mailpdf.Page{Address: addr(5), Text: "Dear Customer 5"})
	c.letter(addr(5), "c.pdf")
	submit(t, mr, c, clock.Now())
	if errs := drain(t, mr); len(errs) != 1 || !strings.Contains(errs[0].Error(), "server-error-not-accepting-jobs") {
		t.Fatalf("stage failures %v, want the printer's refusal", errs)
	}
	bc := onlyBatch(t, store, "E-PRINTC")
	if jobs := printJobs(t, store); len(jobs) != 1 || jobs[0].Key != bc.ID+"@E-PRINTC" || jobs[0].Attempts != 1 || !strings.Contains(jobs[0].Error, "not-accepting-jobs") {
		t.Fatalf("print jobs queued: %+v", jobs)
	}
	if _, err := mr.MarkBatch(bc.ID, pipeline.BatchPrinted, clock.Now(), "operator"); err != nil {
		t.Fatal(err)
	}
	cups.Accept(t, q)
	clock.Add(2 * time.Minute)
	if errs := drain(t, mr); len(errs) != 0 {
		t.Fatal(errs)
	}
	if jobs := printJobs(t, store); len(jobs) != 0 {
		t.Errorf("print jobs queued: %+v", jobs)
	}
	if bc = onlyBatch(t, store, "E-PRINTC"); bc.Printer != "" || len(printerJobs(t, q, bc.ID)) != 0 {
		t.Errorf("a batch printed from the hot folder was sent: %+v", bc)
	}
	if pdfs := q.PDFs(t); len(pdfs) != 2 {
		t.Errorf("the printer wrote %v, want one PDF a batch sent", pdfs)
	}
}
