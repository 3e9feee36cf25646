package pipeline

import (
	"context"
	"errors"
	"fmt"
)

// JobExtract is the auto processor's stage: the letters of an auto
// mailing (no metadata letters) are read out of its documents.
const JobExtract = "extract"

// Extractor reads the letters of an auto mailing out of its documents;
// package extraction implements it.
type Extractor interface {
	// Extract returns the letters found in m's documents, indexed from 0
	// in the order of the documents and their pages, each with its
	// Documents (page ranges), Postal, Reference and Channels set, and
	// Masks where the window held lines that are not printed. A letter
	// that cannot be read is returned held (HoldFor) with the reason and
	// its page, so that a person can correct it. An error means the
	// extraction could not run (it is retried); it must give the same
	// answer when called again after a crash.
	Extract(ctx context.Context, m *Mailing) ([]Letter, error)
}

// Area is a rectangle of a page in millimetres from its top-left corner.
type Area struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
	W float64 `json:"w"`
	H float64 `json:"h"`
}

// extract is the extract stage of an auto mailing: the extractor's
// letters are checked by the engine (all of them, in this stage), held
// where Submit would hold them, and recorded with the check stage queued,
// in one commit; from there they go as metadata letters go.
func (mr *Mailroom) extract(ctx context.Context, job Job) error {
	epid := job.Key
	m, err := mr.store.Mailing(epid)
	if errors.Is(err, ErrNotFound) || err == nil && m.Letters > 0 {
		return mr.store.Update(nil, func(tx Tx) error { tx.DoneJob(job); return nil })
	}
	if err != nil {
		return err
	}
	if mr.cfg.Extractor == nil {
		return errors.New("no auto processor is configured")
	}
	letters, err := mr.cfg.Extractor.Extract(ctx, &m)
	if err != nil {
		return err
	}
	for i := range letters {
		l := &letters[i]
		if len(l.Postal) > 0 && l.Address == nil && mr.cfg.CheckAddress != nil {
			v := mr.cfg.CheckAddress(l.Postal)
			l.Address = &v
		}
	}
	now := mr.cfg.Now().UTC()
	err = mr.store.Update([]string{epid}, func(tx Tx) error {
		m, err := tx.Mailing(epid)
		if err != nil {
			return err
		}
		if m.Letters > 0 { // recorded by an earlier attempt
			tx.DoneJob(job)
			return nil
		}
		for i := range letters {
			l := letters[i]
			l.EPID, l.Account, l.Idx, l.Received = m.EPID, m.Account, i, m.Created
			held := l.Status == Held
			hold, reason := l.Hold, l.HoldReason
			l.Status = Received
			l.Hold, l.HoldReason = "", ""
			l.Events = []Event{{Time: m.Created, Event: Received}, {Time: now, Event: "Extracted", Detail: extractedFrom(&l)}}
			switch {
			case held:
				l.HoldFor(now, hold, reason)
			default:
				if kind, reason := mr.initialHold(&m, &l); kind != "" {
					l.HoldFor(now, kind, reason)
				}
			}
			tx.PutLetter(l)
		}
		m.Letters = len(letters)
		tx.PutMailing(m)
		tx.AddJob(Job{Kind: JobCheck, Key: epid, Due: now})
		tx.DoneJob(job)
		return nil
	})
	if err == nil {
		mr.log.Info("letters extracted", "epid", epid, "letters", len(letters))
	}
	return err
}

// extractedFrom says where in the documents a letter was found.
func extractedFrom(l *Letter) string {
	if len(l.Documents) == 0 {
		return "no pages"
	}
	d := l.Documents[0]
	if d.PageStart == d.PageEnd {
		return fmt.Sprintf("page %d of %s", d.PageStart+1, d.File)
	}
	return fmt.Sprintf("pages %d-%d of %s", d.PageStart+1, d.PageEnd+1, d.File)
}
