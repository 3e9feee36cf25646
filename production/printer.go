package production

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/lodge-mail/lodge/internal/ipp"
	"github.com/lodge-mail/lodge/pipeline"
)

// PrinterConfig configures a Printer. The zero value of each field but
// URI means the documented default.
type PrinterConfig struct {
	// URI is the printer's: ipp://host[:631]/printers/NAME (CUPS),
	// ipp://host/ipp/print (an IPP Everywhere printer), or ipps://.
	URI string
	// User is the requesting-user-name of lodge's jobs (default
	// "lodge"): printers show a job's name only to its owner, and the
	// print stage finds a batch sent before by its name.
	User string
	// Timeout bounds each question to the printer (default 30 s);
	// sending a batch may take Timeout plus a second per MiB of its PDF.
	Timeout time.Duration
	// Batches reads the batches' print files (Producer.Batches: from
	// the object store several nodes share, so that any node sends any
	// batch); the zero value reads them from the batch's folder in this
	// node's hot folder.
	Batches Batches
}

// Printer sends print batches to an IPP printer: it implements
// pipeline.Printer. A batch's batch.pdf is sent by Print-Job as a job
// named after the batch (application/pdf; sides two-sided-long-edge for
// a duplex batch, one-sided otherwise); Find asks the printer for the
// jobs of its User (Get-Jobs, which-jobs all) and matches their names.
// The printer must keep its finished jobs long enough for the print
// stage's retries to find them (CUPS keeps the last 500 by default:
// MaxJobs, PreserveJobHistory).
type Printer struct {
	c   *ipp.Client
	cfg PrinterConfig
	log *slog.Logger
}

// NewPrinter returns the Printer at cfg.URI (nothing is sent yet).
func NewPrinter(cfg PrinterConfig, log *slog.Logger) (*Printer, error) {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if log == nil {
		log = slog.Default()
	}
	c, err := ipp.New(cfg.URI, ipp.Config{User: cfg.User})
	if err != nil {
		return nil, err
	}
	return &Printer{c: c, cfg: cfg, log: log}, nil
}

var _ pipeline.Printer = (*Printer)(nil)

// jobName is how a job is recorded: its URI, else the printer's URI and
// its number.
func (p *Printer) jobName(j ipp.Job) string {
	if j.URI != "" {
		return j.URI
	}
	return p.c.Printer() + " job " + strconv.Itoa(j.ID)
}

// Find implements pipeline.Printer.
func (p *Printer) Find(ctx context.Context, batch string) (string, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	jobs, err := p.c.GetJobs(ctx, "all", true)
	if err != nil {
		return "", false, fmt.Errorf("looking for batch %s at the printer: %w", batch, err)
	}
	for _, j := range jobs {
		if j.Name == batch {
			if j.State == ipp.JobCanceled || j.State == ipp.JobAborted {
				p.log.Warn("print batch found at the printer, canceled or aborted: not sent again (it is in the hot folder)", "batch", batch, "job", p.jobName(j), "state", j.State)
			}
			return p.jobName(j), true, nil
		}
	}
	return "", false, nil
}

// Send implements pipeline.Printer.
func (p *Printer) Send(ctx context.Context, b *pipeline.Batch) (string, error) {
	f, size, err := p.cfg.Batches.Open(ctx, *b, BatchPDF)
	if err != nil {
		return "", fmt.Errorf("sending batch %s to %s: %w", b.ID, p.c.Printer(), err)
	}
	defer f.Close()
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout+time.Duration(size>>20)*time.Second)
	defer cancel()
	sides := "one-sided"
	if b.Duplex {
		sides = "two-sided-long-edge"
	}
	j, err := p.c.PrintJob(ctx, b.ID, "application/pdf", []ipp.Attribute{{Name: "sides", Values: []ipp.Value{ipp.Keyword(sides)}}}, f, size)
	if err != nil {
		return "", fmt.Errorf("sending batch %s: %w", b.ID, err)
	}
	if len(j.Ignored) > 0 {
		p.log.Warn("the printer ignored attributes of a print batch", "batch", b.ID, "job", p.jobName(j), "ignored", j.Ignored)
	}
	return p.jobName(j), nil
}
