package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// JobSend is the send stage: a mailing's electronic letters (email, SMS,
// fax) handed to their gateways after the cancellation window.
const JobSend = "send"

// Electronic delivery statuses, beside the postal ones (records.go).
const (
	// Delivered: the gateway reported the message delivered (an SMS
	// delivery receipt).
	Delivered = "Delivered"
	// Failover: sending failed for good; the letter goes by post
	// instead (Letter.Failover says why), through the postal stages.
	Failover = "Failover"
)

// Sender hands letters to one delivery channel's gateway (package
// delivery implements email, SMS and fax).
type Sender interface {
	// Send hands one letter to the gateway. id is the letter's dedup key
	// for this channel, the same on every attempt (a Message-ID, an SMS
	// message reference): a send resumed after a crash carries it again,
	// so the receiver can tell a repeat. detail says what the gateway
	// answered (message ids); aliases are ids the gateway will report
	// the letter by later (SMS message ids for delivery receipts). A
	// *SendError says whether a failure is permanent.
	Send(ctx context.Context, m *Mailing, l *Letter, id string) (detail string, aliases []string, err error)
}

// SendError is a Sender's failure: Permanent when sending again cannot
// succeed (an address the gateway refuses, SMTP 5xx).
type SendError struct {
	Permanent bool
	Err       error
}

func (e *SendError) Error() string { return e.Err.Error() }
func (e *SendError) Unwrap() error { return e.Err }

// IsPermanent reports whether err is a permanent SendError.
func IsPermanent(err error) bool {
	var se *SendError
	return errors.As(err, &se) && se.Permanent
}

// Send is a letter's electronic send: recorded as started before the
// gateway is called and as done after, so that a restart resumes a
// started send with the same ID (at least once, never silently twice).
type Send struct {
	Channel  string    `json:"channel"`
	ID       string    `json:"id"`
	Attempts int       `json:"attempts"`
	Started  time.Time `json:"started"`
	Done     time.Time `json:"done,omitempty"`
	Detail   string    `json:"detail,omitempty"`
}

// FailoverInfo says why a letter left its electronic channel for post.
type FailoverInfo struct {
	From   string    `json:"from"` // the channel that failed
	Reason string    `json:"reason"`
	Time   time.Time `json:"time"`
}

// waiting reports whether a letter in status s waits for production:
// Received, or failed over to post.
func waiting(s string) bool { return s == Received || s == Failover }

// electronic reports whether the letter goes by a channel other than
// post and this mailroom has a sender for it.
func (mr *Mailroom) electronic(l *Letter) bool {
	return len(l.Channels) > 0 && l.Channels[0] != "postal" && mr.cfg.Senders[l.Channels[0]] != nil
}

// sendID is a letter's dedup key on its current channel: the mailing,
// the letter, and how many channels it has left (a failover starts a new
// key).
func sendID(l *Letter) string {
	n := 0
	if l.Failover != nil {
		n = 1
	}
	return fmt.Sprintf("%s-%d-%d", l.EPID, l.Idx, n)
}

// sendChunk is how many letters one pair of transactions starts and
// finishes: a 100,000-letter mailing is sent in bounded memory.
const sendChunk = 256

// sendPage is how many letter records the send stage reads at a time.
const sendPage = 1000

type sendResult struct {
	idx     int
	detail  string
	aliases []string
	err     error
}

// send is the send stage of a mailing: its electronic letters past the
// cancellation window, in chunks: each letter's send recorded as started
// (one commit), handed to the gateways by SendWorkers at once, and the
// outcomes recorded (one commit): Lodged (handed over), a failover to
// post or Failed for a permanent failure, and for a temporary one the
// send stays started and the stage runs again later with the same IDs.
func (mr *Mailroom) send(ctx context.Context, job Job) error {
	epid := job.Key
	m, err := mr.store.Mailing(epid)
	if errors.Is(err, ErrNotFound) {
		return mr.store.Update(nil, func(tx Tx) error { tx.DoneJob(job); return nil })
	}
	if err != nil {
		return err
	}
	now := mr.cfg.Now().UTC()
	if now.Before(m.ReleaseAt) {
		return mr.store.Update([]string{epid}, func(tx Tx) error { tx.Retry(job, m.ReleaseAt, ""); return nil })
	}
	// the letters to send, read a page at a time: a mailing of 100,000
	// holds their indexes, not their records
	var todo []int
	for from := 0; ; {
		page, err := mr.store.Letters(epid, from, sendPage)
		if err != nil {
			return err
		}
		for i := range page {
			if l := &page[i]; l.Status == Received && mr.electronic(l) || l.Status == Processing && l.Send != nil && l.Send.Done.IsZero() {
				todo = append(todo, l.Idx)
			}
		}
		if len(page) < sendPage {
			break
		}
		from += len(page)
	}
	temporary := 0
	for len(todo) > 0 {
		chunk := todo[:min(sendChunk, len(todo))]
		todo = todo[len(chunk):]
		n, err := mr.sendChunk(ctx, epid, chunk)
		if err != nil {
			return err
		}
		temporary += n
	}
	return mr.store.Update([]string{epid}, func(tx Tx) error {
		m, err := tx.Mailing(epid)
		if err != nil {
			return err
		}
		if err := mr.settle(tx, &m, mr.cfg.Now().UTC()); err != nil { // documents purged once all is sent
			return err
		}
		if temporary > 0 {
			tx.Retry(job, mr.cfg.Now().Add(mr.cfg.SendRetry), fmt.Sprintf("%d letters to send again", temporary))
			return nil
		}
		tx.DoneJob(job)
		return nil
	})
}

// sendChunk sends some letters of a mailing and returns how many failed
// for now.
func (mr *Mailroom) sendChunk(ctx context.Context, epid string, idxs []int) (int, error) {
	var m Mailing
	var started []Letter
	now := mr.cfg.Now().UTC()
	err := mr.store.Update([]string{epid}, func(tx Tx) error {
		var err error
		if m, err = tx.Mailing(epid); err != nil {
			return err
		}
		started = started[:0]
		for _, idx := range idxs {
			l, err := tx.Letter(epid, idx)
			if err != nil {
				return err
			}
			switch {
			case l.Status == Received && mr.electronic(&l):
				l.Send = &Send{Channel: l.Channels[0], ID: sendID(&l)}
			case l.Status == Processing && l.Send != nil && l.Send.Done.IsZero() && mr.cfg.Senders[l.Send.Channel] != nil:
				// resumed: the same ID again
			default:
				continue // cancelled, or done meanwhile
			}
			l.Send.Attempts++
			l.Send.Started = now
			if l.Status != Processing {
				l.SetStatus(now, Processing, "sending by "+l.Send.Channel)
			} else {
				l.Add(now, "Sending", fmt.Sprintf("by %s again (attempt %d, %s)", l.Send.Channel, l.Send.Attempts, l.Send.ID))
			}
			tx.PutLetter(l)
			started = append(started, l)
		}
		return nil
	})
	if err != nil || len(started) == 0 {
		return 0, err
	}
	results := make([]sendResult, len(started))
	var wg sync.WaitGroup
	work := make(chan int)
	for range min(mr.cfg.SendWorkers, len(started)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				l := &started[i]
				detail, aliases, err := mr.cfg.Senders[l.Send.Channel].Send(ctx, &m, l, l.Send.ID)
				results[i] = sendResult{idx: l.Idx, detail: detail, aliases: aliases, err: err}
			}
		}()
	}
	for i := range started {
		work <- i
	}
	close(work)
	wg.Wait()
	temporary := 0
	now = mr.cfg.Now().UTC()
	err = mr.store.Update([]string{epid}, func(tx Tx) error {
		temporary = 0
		m, err := tx.Mailing(epid)
		if err != nil {
			return err
		}
		for _, r := range results {
			l, err := tx.Letter(epid, r.idx)
			if err != nil {
				return err
			}
			if l.Status != Processing || l.Send == nil || !l.Send.Done.IsZero() {
				continue
			}
			switch {
			case r.err == nil:
				l.Send.Done, l.Send.Detail = now, r.detail
				delete(l.CustomData, "password") // in the sent PDF only
				l.SetStatus(now, Lodged, fmt.Sprintf("handed to the %s gateway: %s", l.Send.Channel, r.detail))
				for _, a := range r.aliases {
					tx.PutAlias(a, epid, l.Idx)
				}
			case IsPermanent(r.err):
				l.Send.Done, l.Send.Detail = now, r.err.Error()
				mr.fail(tx, &m, &l, now, fmt.Sprintf("%s refused: %v", l.Send.Channel, r.err))
			default:
				temporary++
				l.Add(now, "SendFailed", fmt.Sprintf("%s: %v (sent again later with the same id)", l.Send.Channel, r.err))
			}
			tx.PutLetter(l)
		}
		return nil
	})
	return temporary, err
}

// fail ends a letter's electronic channel for good: it fails over to
// post when it has a postal address (status Failover, then produced as
// a postal letter), else it is Failed with the reason.
func (mr *Mailroom) fail(tx Tx, m *Mailing, l *Letter, now time.Time, reason string) {
	delete(l.CustomData, "password")
	if len(l.Postal) == 0 || !slices.Contains(mr.cfg.Channels, "postal") {
		l.SetStatus(now, Failed, reason)
		return
	}
	from := l.Channels[0]
	l.Failover = &FailoverInfo{From: from, Reason: reason, Time: now}
	l.Channels = append([]string{"postal"}, slices.DeleteFunc(slices.Clone(l.Channels), func(c string) bool { return c == "postal" })...)
	l.Checked, l.Batch = false, ""
	l.SetStatus(now, Failover, reason+": sent by post instead")
	if l.Address != nil && l.Address.Status == "invalid" {
		l.HoldFor(now, HoldAddress, "invalid postal address: "+l.Address.Message+" (correct it with correct_letter or in the portal)")
		return
	}
	tx.AddJob(Job{Kind: JobCheck, Key: l.EPID, Due: now})
}
