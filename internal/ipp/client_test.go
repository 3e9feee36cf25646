package ipp_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/lodge-mail/lodge/internal/ipp"
	"github.com/lodge-mail/lodge/internal/testcups"
	"github.com/lodge-mail/lodge/internal/testdoc"
	"github.com/lodge-mail/lodge/internal/testdoc/readback"
)

// TestCUPS prints through a real CUPS scheduler with a cups-pdf printer:
// Print-Job makes a job that Get-Jobs lists by name to its owner (only:
// CUPS hides job names from other users), Get-Job-Attributes follows it
// to completed, and the PDF the printer wrote has the document's pages.
func TestCUPS(t *testing.T) {
	cups := testcups.New(t)
	q := cups.AddPDFQueue(t, "pdf")
	ctx := context.Background()
	c, err := ipp.New(q.URI, ipp.Config{})
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := c.GetJobs(ctx, "all", true)
	if err != nil || len(jobs) != 0 {
		t.Fatalf("a new printer's jobs: %v, %v", jobs, err)
	}

	doc := testdoc.PDF(3, 0)
	j, err := c.PrintJob(ctx, "B-20261123-01", "application/pdf",
		[]ipp.Attribute{{Name: "sides", Values: []ipp.Value{ipp.Keyword("one-sided")}}}, bytes.NewReader(doc), int64(len(doc)))
	if err != nil {
		t.Fatal(err)
	}
	if j.ID <= 0 || !strings.HasSuffix(j.URI, "/jobs/"+strconv.Itoa(j.ID)) || j.Name != "B-20261123-01" {
		t.Fatalf("Print-Job gave %+v", j)
	}
	if len(j.Ignored) != 0 {
		t.Errorf("the printer ignored %v", j.Ignored)
	}

	jobs, err = c.GetJobs(ctx, "all", true)
	if err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(jobs, func(x ipp.Job) bool { return x.Name == "B-20261123-01" }); i < 0 || jobs[i].ID != j.ID || jobs[i].URI != j.URI {
		t.Fatalf("Get-Jobs: %+v, want job %d named B-20261123-01", jobs, j.ID)
	}
	// another user sees the job, not its name
	other, err := ipp.New(q.URI, ipp.Config{User: "someone-else"})
	if err != nil {
		t.Fatal(err)
	}
	others, err := other.GetJobs(ctx, "all", false)
	if err != nil {
		t.Fatal(err)
	}
	if len(others) != 1 || others[0].ID != j.ID || others[0].Name == "B-20261123-01" {
		t.Errorf("another user's Get-Jobs: %+v", others)
	}

	done := q.WaitJob(t, j.ID)
	if done.State != ipp.JobCompleted {
		t.Fatalf("job %d ended %d %v", j.ID, done.State, done.StateReasons)
	}
	pdfs := q.PDFs(t)
	if len(pdfs) != 1 {
		t.Fatalf("the printer wrote %v", pdfs)
	}
	if n := len(readback.Sizes(t, pdfs[0])); n != 3 {
		t.Errorf("the printed PDF has %d pages, want 3", n)
	}

	// errors: a job or a printer that does not exist
	var se *ipp.StatusError
	if _, err := c.GetJob(ctx, j.ID+100); !errors.As(err, &se) || se.Status != 0x0406 {
		t.Errorf("Get-Job-Attributes of no job: %v", err)
	}
	none, err := ipp.New("ipp://"+cups.Addr+"/printers/none", ipp.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := none.PrintJob(ctx, "x", "application/pdf", nil, bytes.NewReader(doc), int64(len(doc))); !errors.As(err, &se) || se.Status != 0x0406 || se.Message == "" {
		t.Errorf("Print-Job to no printer: %v", err)
	}
}
