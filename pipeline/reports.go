package pipeline

import (
	"errors"
	"fmt"
	"time"
)

// Receipt records what a gateway later reports about a sent letter,
// named by an id the gateway gave it (an SMS message id, Tx.PutAlias):
// delivered, or failed for good (the letter then fails over to post, or
// is Failed). A report on a letter that is no longer Lodged (already
// delivered, failed over, or another part's report came first) changes
// nothing. ErrNotFound when no letter has the id.
func (mr *Mailroom) Receipt(alias string, delivered bool, detail string) error {
	epid, idx, err := mr.store.Alias(alias)
	if err != nil {
		return err
	}
	return mr.report(epid, idx, func(tx Tx, m *Mailing, l *Letter, now time.Time) {
		if delivered {
			l.SetStatus(now, Delivered, detail)
			return
		}
		mr.fail(tx, m, l, now, fmt.Sprintf("%s not delivered: %s", l.Send.Channel, detail))
	})
}

// Bounced records a bounce of a sent email (a delivery status
// notification to its return path): a permanent one fails the letter
// over to post (or Failed); a delay is an event.
func (mr *Mailroom) Bounced(epid string, idx int, permanent bool, detail string) error {
	return mr.report(epid, idx, func(tx Tx, m *Mailing, l *Letter, now time.Time) {
		if !permanent {
			l.Add(now, "Delayed", detail)
			return
		}
		mr.fail(tx, m, l, now, fmt.Sprintf("%s bounced: %s", l.Send.Channel, detail))
	})
}

// report applies a gateway's report to a Lodged electronic letter.
func (mr *Mailroom) report(epid string, idx int, fn func(tx Tx, m *Mailing, l *Letter, now time.Time)) error {
	now := mr.cfg.Now().UTC()
	err := mr.store.Update([]string{epid}, func(tx Tx) error {
		m, err := tx.Mailing(epid)
		if err != nil {
			return err
		}
		l, err := tx.Letter(epid, idx)
		if err != nil {
			return err
		}
		if l.Status != Lodged || l.Send == nil {
			return nil
		}
		fn(tx, &m, &l, now)
		tx.PutLetter(l)
		return nil
	})
	if err == nil {
		mr.runner.Wake()
	}
	if errors.Is(err, ErrNotFound) {
		return fmt.Errorf("letter %d of %s: %w", idx, epid, err)
	}
	return err
}
