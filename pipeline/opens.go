package pipeline

import (
	"fmt"
	"time"
)

// Kinds of opening: those of delivery/links' tokens.
const (
	OpenEmail = "open" // the email's tracking image was fetched
	OpenDoc   = "doc"  // the link to the letter's PDF was followed
)

// Events of a letter's first openings.
const (
	EventEmailOpened = "EmailOpened"
	EventDocOpened   = "DocOpened"
)

// Opens are the first and last openings of a letter's email (its
// tracking image fetched) and of its document (its link followed), as
// get_letter_status reports them (email_first_opened ...). Zero: never.
type Opens struct {
	EmailFirstOpened time.Time `json:"email_first_opened,omitempty"`
	EmailLastOpened  time.Time `json:"email_last_opened,omitempty"`
	DocFirstOpened   time.Time `json:"doc_first_opened,omitempty"`
	DocLastOpened    time.Time `json:"doc_last_opened,omitempty"`
}

// opened records an opening of kind at at: the first time is set once
// (moved earlier only by an opening recorded out of order), the last
// moved forward. It reports whether anything changed and whether this
// is the first opening of its kind.
func (o *Opens) opened(kind string, at time.Time) (changed, first bool, err error) {
	var f, l *time.Time
	switch kind {
	case OpenEmail:
		f, l = &o.EmailFirstOpened, &o.EmailLastOpened
	case OpenDoc:
		f, l = &o.DocFirstOpened, &o.DocLastOpened
	default:
		return false, false, fmt.Errorf("unknown kind of opening %q", kind)
	}
	first = f.IsZero()
	if first || at.Before(*f) {
		*f, changed = at, true
	}
	if at.After(*l) {
		*l, changed = at, true
	}
	return changed, first, nil
}

// Opened records that a letter's email (kind OpenEmail) or document
// (OpenDoc) was opened at at, in one transaction: the first opening of
// each kind is set once and is an event on the letter's timeline, the
// last is moved forward. An opening that changes nothing writes
// nothing. A letter that does not exist gives ErrNotFound. Callers limit
// how often they record (delivery/links: once a minute per letter and
// kind).
func (mr *Mailroom) Opened(epid string, idx int, kind string, at time.Time) error {
	at = at.UTC()
	return mr.store.Update([]string{epid}, func(tx Tx) error {
		l, err := tx.Letter(epid, idx)
		if err != nil {
			return err
		}
		changed, first, err := l.Opens.opened(kind, at)
		if err != nil || !changed {
			return err
		}
		if first {
			ev := EventEmailOpened
			if kind == OpenDoc {
				ev = EventDocOpened
			}
			l.Add(at, ev, "")
		}
		tx.PutLetter(l)
		return nil
	})
}
