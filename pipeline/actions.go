package pipeline

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// Selector picks letters of an account: the letters of a mailing (EPID)
// with the given indexes (none: all), and the letters with the given
// references.
type Selector struct {
	EPID    string
	Indexes []int
	Refs    []string
}

// Outcome is what an action did to one letter. A reference that matches
// no letter gives an outcome with Status Unknown.
type Outcome struct {
	EPID    string `json:"epid,omitempty"`
	Ref     string `json:"ref,omitempty"`
	Idx     int    `json:"idx"`
	Status  string `json:"status"` // after the action
	Changed bool   `json:"changed"`
	// Why says why an action did not apply to the letter.
	Why string `json:"why,omitempty"`
}

// ErrNotYours is the answer for a mailing of another account (reported as
// not found: an EPID of another account is never confirmed).
var ErrNotYours = fmt.Errorf("%w: no such mailing for this account", ErrNotFound)

// ErrNoSuchLetter is the answer for a letter index a mailing does not
// have.
var ErrNoSuchLetter = errors.New("no such letter")

// selected resolves a selector to letter addresses (epid, idx) in order,
// and the references that matched nothing.
func (mr *Mailroom) selected(account string, sel Selector) (keys []letterAddr, unknown []string, err error) {
	if sel.EPID != "" {
		m, err := mr.store.Mailing(sel.EPID)
		if errors.Is(err, ErrNotFound) || err == nil && m.Account != account {
			return nil, nil, ErrNotYours
		}
		if err != nil {
			return nil, nil, err
		}
		if len(sel.Indexes) == 0 {
			for i := 0; i < m.Letters; i++ {
				keys = append(keys, letterAddr{sel.EPID, i})
			}
		}
		for _, i := range sel.Indexes {
			if i < 0 || i >= m.Letters {
				return nil, nil, fmt.Errorf("%w: mailing %s has no letter %d (its letters are numbered 0 to %d)", ErrNoSuchLetter, sel.EPID, i, m.Letters-1)
			}
			keys = append(keys, letterAddr{sel.EPID, i})
		}
	}
	for _, ref := range sel.Refs {
		ls, err := mr.store.LettersByRef(account, ref)
		if err != nil {
			return nil, nil, err
		}
		if len(ls) == 0 {
			unknown = append(unknown, ref)
		}
		for _, l := range ls {
			keys = append(keys, letterAddr{l.EPID, l.Idx})
		}
	}
	// each letter once, in the order first named
	seen := map[letterAddr]bool{}
	out := keys[:0]
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out, unknown, nil
}

type letterAddr struct {
	epid string
	idx  int
}

func epidsOf(keys []letterAddr) []string {
	var out []string
	for _, k := range keys {
		if !slices.Contains(out, k.epid) {
			out = append(out, k.epid)
		}
	}
	return out
}

// act applies fn to each selected letter in one transaction and reports
// the outcomes; fn returns whether it changed the letter, or why not.
func (mr *Mailroom) act(account string, sel Selector, fn func(tx Tx, m *Mailing, l *Letter, now time.Time) (bool, string)) ([]Outcome, error) {
	keys, unknown, err := mr.selected(account, sel)
	if err != nil {
		return nil, err
	}
	var out []Outcome
	now := mr.cfg.Now().UTC()
	err = mr.store.Update(epidsOf(keys), func(tx Tx) error {
		out = out[:0]
		mailings := map[string]*Mailing{}
		wasHeld := map[string]bool{} // the mailings' cust_hold before fn
		changed := map[string]bool{}
		for _, k := range keys {
			m := mailings[k.epid]
			if m == nil {
				mm, err := tx.Mailing(k.epid)
				if err != nil {
					return err
				}
				m = &mm
				mailings[k.epid] = m
				wasHeld[k.epid] = m.CustHold
			}
			l, err := tx.Letter(k.epid, k.idx)
			if err != nil {
				return err
			}
			ok, why := fn(tx, m, &l, now)
			if ok {
				tx.PutLetter(l)
				changed[k.epid] = true
			}
			out = append(out, Outcome{EPID: l.EPID, Ref: l.Reference, Idx: l.Idx, Status: l.Status, Changed: ok, Why: why})
		}
		for epid, m := range mailings {
			if m.CustHold != wasHeld[epid] {
				changed[epid] = true // a mailing released whole, whatever its letters
			}
		}
		for epid := range changed {
			m := mailings[epid]
			tx.PutMailing(*m)
			if err := mr.settle(tx, m, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, ref := range unknown {
		out = append(out, Outcome{Ref: ref, Idx: -1, Status: Unknown, Why: "no letter of the account has this reference"})
	}
	mr.runner.Wake()
	return out, nil
}

// requeue sends a letter that may go ahead again back through the check
// stage (or straight to batching when it was checked), honouring the
// cancellation window.
func (mr *Mailroom) requeue(tx Tx, m *Mailing, l *Letter, now time.Time) {
	if !l.Checked {
		tx.AddJob(Job{Kind: JobCheck, Key: l.EPID, Due: now})
		return
	}
	due := m.ReleaseAt
	if due.Before(now) {
		due = now
	}
	tx.AddJob(Job{Kind: JobBatch, Key: l.EPID, Due: due})
}

// Release lifts the customer's hold of the selected letters (a whole
// mailing on cust_hold, or some of its letters). Letters held for another
// reason are reported with it and left held. Releasing a whole mailing
// also clears its cust_hold, so that letters held for another reason go
// ahead once that reason is mended.
func (mr *Mailroom) Release(account string, sel Selector, by string) ([]Outcome, error) {
	whole := sel.EPID != "" && len(sel.Indexes) == 0
	return mr.act(account, sel, func(tx Tx, m *Mailing, l *Letter, now time.Time) (bool, string) {
		if whole {
			m.CustHold = false
		}
		if l.Status != Held {
			return false, "not held"
		}
		if l.Hold != HoldCustomer {
			return false, "held for another reason: " + l.HoldReason
		}
		l.SetStatus(now, Received, "")
		l.Add(now, "Released", "by "+by)
		mr.requeue(tx, m, l, now)
		return true, ""
	})
}

// Correct replaces the postal address of a letter held for its address
// (invalid, or not the one in the envelope window), checks the new one
// with the address check and, when it passes, sends the letter on (back
// through the check stage, which looks at the window again). The verdict
// is returned either way; a failing address changes nothing.
func (mr *Mailroom) Correct(account string, sel Selector, postal []string, by string) ([]Outcome, Verdict, error) {
	if mr.cfg.CheckAddress == nil {
		return nil, Verdict{}, errors.New("no address check configured")
	}
	v := mr.cfg.CheckAddress(postal)
	out, err := mr.act(account, sel, func(tx Tx, m *Mailing, l *Letter, now time.Time) (bool, string) {
		if l.Status != Held || (l.Hold != HoldAddress && l.Hold != HoldWindow) {
			return false, "only a letter held for its address can be corrected"
		}
		if v.Status == "invalid" {
			return false, "the corrected address is invalid: " + v.Message
		}
		old := l.Postal
		l.Postal, l.Address, l.Checked = append([]string(nil), postal...), &v, false
		// What the document's window shows is not the corrected address
		// (an invalid one, or one the auto processor could not read):
		// production masks the window and sets the corrected address in
		// it, as for a letter whose document carries none.
		l.Unaddressed = true
		l.SetStatus(now, Received, "")
		l.Add(now, "Corrected", fmt.Sprintf("by %s: %q, was %q (%s)", by, postal, old, v.Status))
		if m.CustHold {
			l.HoldFor(now, HoldCustomer, "the mailing is on customer hold: release it with release_letters or in the portal")
			return true, ""
		}
		mr.requeue(tx, m, l, now)
		return true, ""
	})
	return out, v, err
}

// Cancel cancels the selected letters that are not yet in a print batch
// (Received or Held). Others are reported with their status.
func (mr *Mailroom) Cancel(account string, sel Selector, by string) ([]Outcome, error) {
	return mr.act(account, sel, func(tx Tx, m *Mailing, l *Letter, now time.Time) (bool, string) {
		switch l.Status {
		case Received, Held, Failover:
			l.SetStatus(now, Cancelled, "by "+by)
			return true, ""
		case Cancelled:
			return false, "already cancelled"
		case Processing:
			return false, "too late: in print batch " + l.Batch
		}
		return false, "too late: " + l.Status
	})
}

// MarkBatch records the print room's progress on a ready batch: printed,
// then lodged (handed to the postal service at the time given). Each of
// its letters that is not cancelled moves to Printed, then Lodged.
func (mr *Mailroom) MarkBatch(id, state string, at time.Time, by string) (Batch, error) {
	b, err := mr.store.Batch(id)
	if err != nil {
		return Batch{}, err
	}
	var status string
	switch state {
	case BatchPrinted:
		status = Printed
	case BatchLodged:
		status = Lodged
	default:
		return Batch{}, fmt.Errorf("a batch is marked %s or %s, not %q", BatchPrinted, BatchLodged, state)
	}
	err = mr.store.Update([]string{b.EPID}, func(tx Tx) error {
		if b, err = tx.Batch(id); err != nil {
			return err
		}
		switch {
		case b.State == BatchComposing:
			return fmt.Errorf("batch %s is still being composed", id)
		case b.State == state:
			return fmt.Errorf("batch %s is already %s", id, state)
		case state == BatchPrinted && b.State != BatchReady, state == BatchLodged && b.State == BatchLodged:
			return fmt.Errorf("batch %s is %s", id, b.State)
		}
		at := at.UTC()
		if state == BatchPrinted {
			b.Printed = at
		} else {
			if b.Printed.IsZero() {
				b.Printed = at
			}
			b.Lodged = at
		}
		b.State = state
		tx.PutBatch(b)
		for _, idx := range b.Letters {
			l, err := tx.Letter(b.EPID, idx)
			if err != nil {
				return err
			}
			if l.Status != Processing && l.Status != Printed {
				continue
			}
			if state == BatchLodged && l.Status == Processing {
				l.SetStatus(at, Printed, "batch "+b.ID)
			}
			detail := "batch " + b.ID + ", by " + by
			if state == BatchLodged {
				detail = "handed to the postal service at " + at.Format(time.RFC3339) + ", batch " + b.ID + ", by " + by
			}
			l.SetStatus(at, status, detail)
			tx.PutLetter(l)
		}
		return nil
	})
	return b, err
}

// CheckAddress judges an address with the mailroom's address check (the
// portal's address check page); ok is false when none is configured.
func (mr *Mailroom) CheckAddress(lines []string) (v Verdict, ok bool) {
	if mr.cfg.CheckAddress == nil {
		return Verdict{}, false
	}
	return mr.cfg.CheckAddress(lines), true
}

// SuggestAddress judges an address and returns the corrected address the
// address check suggests for it, if any; ok is false when no suggestions
// are configured.
func (mr *Mailroom) SuggestAddress(lines []string) (v Verdict, suggestion []string, ok bool) {
	if mr.cfg.SuggestAddress == nil {
		return Verdict{}, nil, false
	}
	v, suggestion = mr.cfg.SuggestAddress(lines)
	return v, suggestion, true
}
