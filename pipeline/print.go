package pipeline

import (
	"context"
	"errors"
	"strings"
)

// JobPrint is the print stage of a ready batch: sending it to the printer
// (Config.Printer). It is queued with the batch's release to the hot
// folder, only while a printer is configured, and worked only then: a
// print job queued before a restart without a printer waits for one.
const JobPrint = "print"

// Printer sends ready print batches to a printer; package production
// implements it over IPP.
//
// The print stage is at least once with a dedup key: the batch's ID is
// the name of its printer job, and before sending the stage asks the
// printer for a job of that name. A batch sent just before a crash, or
// whose answer was lost, is found there and recorded instead of being
// sent again; a failure (the printer unreachable, refusing) leaves the
// job queued, retried after the Runner's backoff.
type Printer interface {
	// Find returns the printer's job (its URI) named after a batch;
	// ok is false when the printer has none.
	Find(ctx context.Context, batch string) (job string, ok bool, err error)
	// Send sends a ready batch's print file as a job named after the
	// batch and returns the job (its URI).
	Send(ctx context.Context, b *Batch) (job string, err error)
}

// print sends a ready batch to the printer, unless the printer has it
// already, and records the printer's job on the batch (Batch.Printer) and
// on its letters' timelines. A batch the print room has already marked
// printed or lodged (printed from the hot folder) is not sent.
func (mr *Mailroom) print(ctx context.Context, job Job) error {
	id, epid, ok := strings.Cut(job.Key, "@")
	b, err := mr.store.Batch(id)
	if !ok || errors.Is(err, ErrNotFound) {
		return mr.store.Update(nil, func(tx Tx) error { tx.DoneJob(job); return nil })
	}
	if err != nil {
		return err
	}
	if b.Printer != "" || b.State != BatchReady {
		if b.Printer == "" {
			mr.log.Info("print batch not sent: the print room has it", "batch", id, "state", b.State)
		}
		return mr.store.Update([]string{epid}, func(tx Tx) error { tx.DoneJob(job); return nil })
	}
	pj, found, err := mr.cfg.Printer.Find(ctx, id)
	if err != nil {
		return err
	}
	if !found {
		if pj, err = mr.cfg.Printer.Send(ctx, &b); err != nil {
			return err
		}
	}
	now := mr.cfg.Now().UTC()
	err = mr.store.Update([]string{epid}, func(tx Tx) error {
		b, err := tx.Batch(id)
		if err != nil {
			return err
		}
		b.Printer = pj
		tx.PutBatch(b)
		for _, idx := range b.Letters {
			l, err := tx.Letter(epid, idx)
			if err != nil {
				return err
			}
			l.Add(now, "Sent", "to the printer: "+pj)
			tx.PutLetter(l)
		}
		tx.DoneJob(job)
		return nil
	})
	if err == nil {
		mr.log.Info("print batch sent", "batch", id, "job", pj, "found_at_printer", found)
	}
	return err
}
