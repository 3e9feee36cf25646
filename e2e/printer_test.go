package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/lodge-mail/lodge/internal/ipp"
	"github.com/lodge-mail/lodge/internal/testcups"
	"github.com/lodge-mail/lodge/internal/testdoc/mailpdf"
	"github.com/lodge-mail/lodge/internal/testdoc/readback"
	"github.com/lodge-mail/lodge/internal/testenv"
	"github.com/lodge-mail/lodge/production"
)

var printerJobRE = regexp.MustCompile(`(?m)^printer job\s+(\S+)`)

// TestServePrinter: lodge serve -printer sends each print batch to the
// IPP printer named, here a cups-pdf queue of a real CUPS: the batch
// records the printer's job (lodge print show), the printer has one job
// of the batch's name, and the PDF it printed has the batch's pages. A
// printer URI lodge cannot use stops lodge serve with the reason.
func TestServePrinter(t *testing.T) { eachSetup(t, testServePrinter) }

func testServePrinter(t *testing.T, start startFunc) {
	cups := testcups.New(t)
	q := cups.AddPDFQueue(t, "lodge")
	in := start(t, nil, "-cancel-window", "0s", "-printer", q.URI)
	addr := mailpdf.Address
	postal := func(i int) string { b, _ := json.Marshal(addr(i)); return string(b) }
	doc := mailDoc(t, mailpdf.Page{Address: addr(0), Text: "L0 p1"}, mailpdf.Page{Text: "L0 p2"}, mailpdf.Page{Address: addr(1), Text: "L1 p1"})
	epid, _ := sendMailing(t, in, "s.pdf", doc, "m.json", fmt.Sprintf(`{"duplex":true,"letters":[
		{"postal":%s,"page_start":0,"page_end":1,"reference":"PR-0"},
		{"postal":%s,"page_start":2,"page_end":2,"reference":"PR-1"}]}`, postal(0), postal(1)))
	waitProduced(t, in)
	dir, man := batchOf(t, in, epid)
	id := filepath.Base(dir)

	var job, out string
	testenv.WaitFor(t, func() bool {
		var err error
		if out, err = in.admin("", "print", "show", id); err != nil {
			t.Fatalf("lodge print show: %v\n%s", err, out)
		}
		m := printerJobRE.FindStringSubmatch(out)
		if m != nil {
			job = m[1]
		}
		return m != nil
	}, func() string { return "the batch to record its printer job:\n" + out + "\n" + in.logs() })

	c, err := ipp.New(q.URI, ipp.Config{})
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := c.GetJobs(context.Background(), "all", true)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 1 || jobs[0].Name != id || jobs[0].URI != job {
		t.Fatalf("the printer's jobs %+v; the batch %s records %s", jobs, id, job)
	}
	if done := q.WaitJob(t, jobs[0].ID); done.State != ipp.JobCompleted {
		t.Fatalf("job %s ended in state %d %v", job, done.State, done.StateReasons)
	}
	pdfs := q.PDFs(t)
	if len(pdfs) != 1 {
		t.Fatalf("the printer wrote %v", pdfs)
	}
	if n, want := len(readback.Sizes(t, pdfs[0])), len(readback.Sizes(t, filepath.Join(dir, production.BatchPDF))); n != want || n != 2*man.Sheets {
		t.Errorf("the printed PDF has %d pages; the batch %d, %d sheets", n, want, man.Sheets)
	}

	out, err = lodge(t, "", "serve", "-data-dir", t.TempDir(), "-addr", "127.0.0.1:0", "-printer", "http://printhost/printers/lodge")
	if err == nil || !strings.Contains(out, `-printer: printer "http://printhost/printers/lodge": the scheme must be ipp or ipps`) {
		t.Errorf("lodge serve with an http printer URI: %v\n%s", err, out)
	}
}
