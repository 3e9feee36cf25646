package pipeline

import (
	"context"
	"errors"
	"time"

	"github.com/segmentio/encoding/json"
)

// Confirmation emails (spec 2.2 confirmation_email): one when a mailing
// is accepted, one when it is produced or sent, to its customer_email.
const (
	JobConfirmAccepted = "confirm-accepted"
	JobConfirmDone     = "confirm-done"
)

// Confirmer sends a confirmation email (package delivery implements it).
type Confirmer interface {
	// Confirm tells to the mailing's customer_email that it was accepted
	// ("accepted") or produced and sent ("done"), with its letters
	// counted by status and the reasons of its holds (reason → letters).
	// id is the email's dedup key. detail says what was sent.
	Confirm(ctx context.Context, m *Mailing, kind, to, id string, counts map[string]int, holds map[string]int) (detail string, err error)
}

// Confirmation records a confirmation email of a mailing.
type Confirmation struct {
	Kind   string    `json:"kind"` // accepted or done
	To     string    `json:"to"`
	Time   time.Time `json:"time"`
	Detail string    `json:"detail,omitempty"`
	Error  string    `json:"error,omitempty"` // why it could not be sent
}

// confirmTo returns the customer_email of a mailing that asked for
// confirmations ("" when it did not).
func confirmTo(m *Mailing) string {
	var s struct {
		To   string `json:"customer_email"`
		Want bool   `json:"confirmation_email"`
	}
	if len(m.Settings) == 0 || json.Unmarshal(m.Settings, &s) != nil || !s.Want {
		return ""
	}
	return s.To
}

// confirmed reports whether the confirmation of a job kind was sent.
func (m *Mailing) confirmed(jobKind string) bool {
	kind := "accepted"
	if jobKind == JobConfirmDone {
		kind = "done"
	}
	for _, c := range m.Confirmations {
		if c.Kind == kind {
			return true
		}
	}
	return false
}

// queueConfirm queues a confirmation of kind when the mailing asked for
// them and has not had it.
func (mr *Mailroom) queueConfirm(tx Tx, m *Mailing, kind string, now time.Time) {
	if mr.cfg.Confirmer == nil || confirmTo(m) == "" || m.confirmed(kind) {
		return
	}
	tx.AddJob(Job{Kind: kind, Key: m.EPID, Due: now})
}

// busy reports whether a letter still moves without anyone acting:
// waiting for a stage, being sent, or in a batch being composed.
func busy(l *Letter) bool {
	switch l.Status {
	case Received, Failover:
		return true
	case Processing:
		return l.Send != nil && l.Send.Done.IsZero()
	}
	return false
}

// confirm sends a confirmation (the job's kind) once: "done" waits until
// no letter of the mailing still moves (the stages queue it again).
func (mr *Mailroom) confirm(ctx context.Context, job Job) error {
	epid := job.Key
	m, err := mr.store.Mailing(epid)
	if errors.Is(err, ErrNotFound) || err == nil && m.confirmed(job.Kind) {
		return mr.store.Update(nil, func(tx Tx) error { tx.DoneJob(job); return nil })
	}
	if err != nil {
		return err
	}
	letters, err := mr.store.Letters(epid, 0, 0)
	if err != nil {
		return err
	}
	kind := "accepted"
	if job.Kind == JobConfirmDone {
		kind = "done"
		for i := range letters {
			if busy(&letters[i]) || letters[i].Status == Processing && mr.composing(letters[i].Batch) {
				// not yet: a later stage queues it again
				return mr.store.Update(nil, func(tx Tx) error { tx.DoneJob(job); return nil })
			}
		}
	}
	counts, holds := map[string]int{}, map[string]int{}
	for _, l := range letters {
		counts[l.Status]++
		if l.Status == Held {
			holds[l.HoldReason]++
		}
	}
	to := confirmTo(&m)
	detail, sendErr := mr.cfg.Confirmer.Confirm(ctx, &m, kind, to, epid+"-"+kind, counts, holds)
	if sendErr != nil && !IsPermanent(sendErr) {
		return sendErr // tried again with backoff
	}
	now := mr.cfg.Now().UTC()
	return mr.store.Update([]string{epid}, func(tx Tx) error {
		m, err := tx.Mailing(epid)
		if err != nil {
			return err
		}
		c := Confirmation{Kind: kind, To: to, Time: now, Detail: detail}
		if sendErr != nil {
			c.Error = sendErr.Error()
		}
		m.Confirmations = append(m.Confirmations, c)
		tx.PutMailing(m)
		tx.DoneJob(job)
		return nil
	})
}

// composing reports whether a batch is still being composed.
func (mr *Mailroom) composing(id string) bool {
	if id == "" {
		return false
	}
	b, err := mr.store.Batch(id)
	return err == nil && b.State == BatchComposing
}
