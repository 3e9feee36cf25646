package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/VictoriaMetrics/metrics"
)

// Job kinds of the mailroom's stages.
const (
	JobCheck   = "check"   // a mailing's new letters: production facts, holds
	JobBatch   = "batch"   // a mailing's letters past the cancellation window: into print batches
	JobCompose = "compose" // a batch: its files into the hot folder
	JobPurge   = "purge"   // a mailing's documents, after the retention period
)

// Producer makes postal letters; package production implements it.
type Producer interface {
	// Inspect looks at postal letters of a mailing before production and,
	// for each, sets its production facts (Pages, Sheets, Envelope,
	// Postage, Postcode, Price) or holds it (HoldFor) with the reason. It
	// changes nothing else and is called again for a letter after a crash,
	// so it must give the same answer.
	Inspect(ctx context.Context, m *Mailing, letters []*Letter) error
	// Compose writes a batch's files (the print PDF, its manifest and
	// lodgement summary) into the hot folder, all or nothing, and returns
	// the batch's folder there. A batch already in the hot folder is not
	// written again. A *LetterError says one letter cannot be produced
	// (its document cannot be read): the mailroom holds it and composes
	// the batch again without it.
	Compose(ctx context.Context, m *Mailing, b *Batch, letters []Letter) (dir string, err error)
}

// LetterError is Compose's error for one letter of a batch that cannot
// be produced.
type LetterError struct {
	Idx int // the letter's index in its mailing
	Err error
}

func (e *LetterError) Error() string { return fmt.Sprintf("letter %d: %v", e.Idx, e.Err) }
func (e *LetterError) Unwrap() error { return e.Err }

// Config tunes a Mailroom. The zero value means the documented defaults.
type Config struct {
	// CancelWindow is how long after end_session a letter can still be
	// cancelled: production waits for it (default 1 hour; negative: no
	// window, production starts at once). Window, when set, gives an
	// account's own window (ok false: the default).
	CancelWindow time.Duration
	Window       func(account string) (time.Duration, bool)
	// Retention is how long documents are kept once every letter using
	// them is produced or ended (default 30 days: the preview period).
	Retention time.Duration
	// Purge deletes a mailing's documents (the upload store's files);
	// nil keeps them.
	Purge func(epid string) error
	// CheckAddress judges a corrected postal address (the address check
	// engine).
	CheckAddress func(lines []string) Verdict
	// SuggestAddress returns the address the address check suggests for
	// lines (the engine's detail.suggestion: a corrected locality,
	// street or postcode), nil when it has none; the portal offers it
	// while a customer types a correction. Nil: no suggestions.
	SuggestAddress func(lines []string) (Verdict, []string)
	// Channels are the delivery channels this server can send by; a
	// letter whose primary channel is another is held (default postal).
	Channels []string
	// Senders hand electronic letters to their gateways, by channel
	// (email, sms, fax); SendWorkers of them at once (default 8). A send
	// that failed for now is tried again after SendRetry (default 1
	// minute) with the same dedup key.
	Senders     map[string]Sender
	SendWorkers int
	SendRetry   time.Duration
	// Confirmer sends the confirmation emails of mailings that ask for
	// them (confirmation_email); nil sends none.
	Confirmer Confirmer
	// Extractor reads the letters of auto mailings (no metadata letters)
	// out of their documents; nil leaves such mailings waiting.
	Extractor Extractor
	// Printer, when set, is sent every batch made ready (the print
	// stage, print.go); nil: batches wait in the hot folder only.
	Printer Printer
	Runner  RunnerConfig
	Now     func() time.Time
	Metrics *metrics.Set
}

func (c Config) withDefaults() Config {
	switch {
	case c.CancelWindow == 0:
		c.CancelWindow = time.Hour
	case c.CancelWindow < 0:
		c.CancelWindow = 0
	}
	if c.Retention <= 0 {
		c.Retention = 30 * 24 * time.Hour
	}
	if len(c.Channels) == 0 {
		c.Channels = []string{"postal"}
		for _, ch := range []string{"email", "sms", "fax"} {
			if c.Senders[ch] != nil {
				c.Channels = append(c.Channels, ch)
			}
		}
	}
	if c.SendWorkers <= 0 {
		c.SendWorkers = 8
	}
	if c.SendRetry <= 0 {
		c.SendRetry = time.Minute
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Runner.Now == nil {
		c.Runner.Now = c.Now
	}
	if c.Runner.Metrics == nil {
		c.Runner.Metrics = c.Metrics
	}
	return c
}

// Mailroom runs the stages of every mailing and takes the customers'
// actions on their letters (release, correct, cancel).
type Mailroom struct {
	store  Store
	prod   Producer
	cfg    Config
	log    *slog.Logger
	runner *Runner
}

// New returns a Mailroom over store producing postal letters with prod.
// prod may be nil in a Mailroom that runs no stages (the operator tools:
// MarkBatch and the customers' actions only queue work and touch
// records); Run and RunDue need one.
func New(store Store, prod Producer, cfg Config, log *slog.Logger) *Mailroom {
	if log == nil {
		log = slog.Default()
	}
	cfg = cfg.withDefaults()
	mr := &Mailroom{store: store, prod: prod, cfg: cfg, log: log}
	mr.runner = NewRunner(store, cfg.Runner, log)
	mr.runner.Handle(JobCheck, mr.check)
	mr.runner.Handle(JobBatch, mr.batch)
	mr.runner.Handle(JobCompose, mr.compose)
	mr.runner.Handle(JobPurge, mr.purge)
	if cfg.Extractor != nil {
		mr.runner.Handle(JobExtract, mr.extract)
	}
	if len(cfg.Senders) > 0 {
		mr.runner.Handle(JobSend, mr.send)
	}
	if cfg.Confirmer != nil {
		mr.runner.Handle(JobConfirmAccepted, mr.confirm)
		mr.runner.Handle(JobConfirmDone, mr.confirm)
	}
	if cfg.Printer != nil {
		mr.runner.Handle(JobPrint, mr.print)
	}
	return mr
}

// Store returns the mailroom's store.
func (mr *Mailroom) Store() Store { return mr.store }

// Run works the stages until ctx is done.
func (mr *Mailroom) Run(ctx context.Context) { mr.runner.Run(ctx) }

// RunDue does every stage due now (tools and tests).
func (mr *Mailroom) RunDue(ctx context.Context) (int, error) { return mr.runner.RunDue(ctx) }

func (mr *Mailroom) window(account string) time.Duration {
	if mr.cfg.Window != nil {
		if d, ok := mr.cfg.Window(account); ok && d >= 0 {
			return d
		}
	}
	return mr.cfg.CancelWindow
}

// Holds says which letters Submit will hold and why, without submitting:
// end_session reports them. The map is letter index to reason.
func (mr *Mailroom) Holds(m *Mailing, letters []Letter) map[int]string {
	out := map[int]string{}
	for i := range letters {
		if _, reason := mr.initialHold(m, &letters[i]); reason != "" {
			out[letters[i].Idx] = reason
		}
	}
	return out
}

func (mr *Mailroom) initialHold(m *Mailing, l *Letter) (kind, reason string) {
	switch {
	case len(l.Channels) == 0:
		return HoldDocument, "the letter names no delivery channel"
	case !slices.Contains(mr.cfg.Channels, l.Channels[0]):
		return HoldChannel, fmt.Sprintf("%s delivery is not available on this server: cancel the letter, or send it by post", l.Channels[0])
	case l.IsPostal() && l.Address != nil && l.Address.Status == "invalid":
		return HoldAddress, "invalid postal address: " + l.Address.Message + " (correct it with correct_letter or in the portal)"
	case m.CustHold:
		return HoldCustomer, "the mailing is on customer hold: release it with release_letters or in the portal"
	}
	return "", ""
}

// Submit records an ended session's mailing and letters and queues the
// check stage; letters are held at once where the reason is known (the
// customer's hold, an invalid postal address, a channel this server does
// not send by). ErrExists when the mailing was recorded before (an
// end_session repeated after a crash): nothing changes.
func (mr *Mailroom) Submit(m Mailing, letters []Letter) error {
	now := mr.cfg.Now().UTC()
	if m.Created.IsZero() {
		m.Created = now
	}
	m.ReleaseAt = m.Created.Add(mr.window(m.Account))
	for i := range letters {
		l := &letters[i]
		l.EPID, l.Account, l.Received = m.EPID, m.Account, m.Created
		l.Status = Received
		l.Events = append(l.Events[:0], Event{Time: m.Created, Event: Received})
		if kind, reason := mr.initialHold(&m, l); kind != "" {
			l.HoldFor(m.Created, kind, reason)
		}
	}
	first := Job{Kind: JobCheck, Key: m.EPID, Due: now}
	if m.Auto && len(letters) == 0 {
		first.Kind = JobExtract // the letters are in the documents
	}
	jobs := []Job{first}
	if mr.cfg.Confirmer != nil && confirmTo(&m) != "" {
		jobs = append(jobs, Job{Kind: JobConfirmAccepted, Key: m.EPID, Due: now})
	}
	err := mr.store.Submit(m, letters, jobs)
	if err == nil {
		mr.runner.Wake()
	}
	return err
}

// HoldChannel: the letter's primary channel is not available here.
const HoldChannel = "channel"

// checkPage is how many letter records the check stage reads at a time.
const checkPage = 1000

// check is the check stage of a mailing: production facts for its new
// postal letters, or holds; then the batch stage is queued for the end of
// the cancellation window.
func (mr *Mailroom) check(ctx context.Context, job Job) error {
	epid := job.Key
	m, err := mr.store.Mailing(epid)
	if errors.Is(err, ErrNotFound) {
		return mr.store.Update(nil, func(tx Tx) error { tx.DoneJob(job); return nil })
	}
	if err != nil {
		return err
	}
	// The letters, a page at a time: only the postal ones to inspect are
	// kept (a 100,000-letter email mailing holds one page at a time).
	var todo []*Letter
	sends := false
	for from := 0; ; {
		page, err := mr.store.Letters(epid, from, checkPage)
		if err != nil {
			return err
		}
		for i := range page {
			l := page[i] // a copy: a page is not kept for one of its letters
			if waiting(l.Status) && !l.Checked && l.IsPostal() {
				todo = append(todo, &l)
			}
			sends = sends || l.Status == Received && mr.electronic(&l)
		}
		if len(page) < checkPage {
			break
		}
		from += len(page)
	}
	// Inspection reads documents: it runs outside the transaction, so
	// that cancellations are not held up; its results apply only to
	// letters still waiting for them.
	if len(todo) > 0 {
		if err := mr.prod.Inspect(ctx, &m, todo); err != nil {
			return err
		}
	}
	now := mr.cfg.Now().UTC()
	checked := map[int]*Letter{}
	for _, l := range todo {
		checked[l.Idx] = l
	}
	return mr.store.Update([]string{epid}, func(tx Tx) error {
		for idx, res := range checked {
			l, err := tx.Letter(epid, idx)
			if err != nil {
				return err
			}
			if !waiting(l.Status) || l.Checked {
				continue // cancelled (or held) meanwhile
			}
			l.Checked = true
			l.Pages, l.Sheets, l.Envelope, l.Postage, l.Postcode, l.Price = res.Pages, res.Sheets, res.Envelope, res.Postage, res.Postcode, res.Price
			l.Unaddressed, l.CoverSheet = res.Unaddressed, res.CoverSheet
			if res.Status == Held {
				l.HoldFor(now, res.Hold, res.HoldReason)
			} else {
				l.Add(now, "Checked", fmt.Sprintf("%d pages on %d sheets, %s envelope, %s post", l.Pages, l.Sheets, l.Envelope, l.Postage))
			}
			tx.PutLetter(l)
		}
		due := m.ReleaseAt
		if due.Before(now) {
			due = now
		}
		tx.AddJob(Job{Kind: JobBatch, Key: epid, Due: due})
		mr.queueConfirm(tx, &m, JobConfirmDone, now)
		if sends {
			tx.AddJob(Job{Kind: JobSend, Key: epid, Due: due})
		}
		tx.DoneJob(job)
		return nil
	})
}

// batchKey is what the letters of one batch share.
type batchKey struct {
	envelope, postage, stock string
	colour, duplex           bool
}

// batch puts a mailing's checked postal letters past the cancellation
// window into print batches, one per envelope, postage class, colour,
// duplex and stock, each sorted by postcode, and queues their
// composition, all in one commit.
func (mr *Mailroom) batch(ctx context.Context, job Job) error {
	epid := job.Key
	now := mr.cfg.Now().UTC()
	var made []string
	err := mr.store.Update([]string{epid}, func(tx Tx) error {
		m, err := tx.Mailing(epid)
		if errors.Is(err, ErrNotFound) {
			tx.DoneJob(job)
			return nil
		}
		if err != nil {
			return err
		}
		if now.Before(m.ReleaseAt) {
			// released early by nobody: wait for the window
			tx.Retry(job, m.ReleaseAt, "")
			return nil
		}
		// a page at a time, keeping only the letters to batch
		groups := map[batchKey][]*Letter{}
		var keys []batchKey
		for from := 0; ; {
			page, err := tx.LettersPage(epid, from, checkPage)
			if err != nil {
				return err
			}
			for i := range page {
				l := page[i]
				if !waiting(l.Status) || !l.Checked || !l.IsPostal() || l.Batch != "" {
					continue
				}
				k := batchKey{envelope: l.Envelope, postage: l.Postage, stock: m.Production.Stock, colour: m.Production.Colour, duplex: m.Production.Duplex}
				if groups[k] == nil {
					keys = append(keys, k)
				}
				groups[k] = append(groups[k], &l)
			}
			if len(page) < checkPage {
				break
			}
			from += len(page)
		}
		sort.Slice(keys, func(i, j int) bool {
			a, b := keys[i], keys[j]
			if a.envelope != b.envelope {
				return a.envelope > b.envelope // DL before C4
			}
			return a.postage < b.postage
		})
		for _, k := range keys {
			ls := groups[k]
			sort.SliceStable(ls, func(i, j int) bool { return ls[i].Postcode < ls[j].Postcode })
			m.Batches++
			b := Batch{ID: fmt.Sprintf("%s-%s-%02d", m.Created.Format("20060102"), epid, m.Batches), EPID: epid, Account: m.Account,
				Created: now, State: BatchComposing, Envelope: k.envelope, Postage: k.postage, Colour: k.colour, Duplex: k.duplex, Stock: k.stock}
			sheet := 1
			for _, l := range ls {
				b.Letters = append(b.Letters, l.Idx)
				b.Sheets += l.Sheets
				b.Pages += l.Pages
				b.Price += l.Price
				l.Batch, l.Sheet = b.ID, sheet
				sheet += l.Sheets
				l.SetStatus(now, Processing, "print batch "+b.ID)
				tx.PutLetter(*l)
			}
			tx.PutBatch(b)
			tx.AddJob(Job{Kind: JobCompose, Key: b.ID + "@" + epid, Due: now})
			made = append(made, b.ID)
		}
		tx.PutMailing(m)
		if err := mr.settle(tx, &m, now); err != nil {
			return err
		}
		tx.DoneJob(job)
		return nil
	})
	if err == nil && len(made) > 0 {
		mr.log.Info("print batches made", "epid", epid, "batches", strings.Join(made, ","))
		mr.runner.Wake()
	}
	return err
}

// compose writes a batch into the hot folder and marks it ready.
func (mr *Mailroom) compose(ctx context.Context, job Job) error {
	id, epid, ok := strings.Cut(job.Key, "@")
	if !ok {
		return mr.store.Update(nil, func(tx Tx) error { tx.DoneJob(job); return nil })
	}
	b, err := mr.store.Batch(id)
	if err != nil {
		return err
	}
	m, err := mr.store.Mailing(epid)
	if err != nil {
		return err
	}
	if b.State != BatchComposing {
		return mr.store.Update([]string{epid}, func(tx Tx) error { tx.DoneJob(job); return nil })
	}
	letters := make([]Letter, 0, len(b.Letters))
	all, err := mr.store.Letters(epid, 0, 0)
	if err != nil {
		return err
	}
	for _, idx := range b.Letters {
		if idx < 0 || idx >= len(all) || all[idx].Idx != idx {
			return fmt.Errorf("batch %s: letter %d of %s is missing", id, idx, epid)
		}
		letters = append(letters, all[idx])
	}
	start := time.Now()
	dir, err := mr.prod.Compose(ctx, &m, &b, letters)
	var le *LetterError
	if errors.As(err, &le) {
		return mr.dropLetter(job, id, epid, le)
	}
	if err != nil {
		return err
	}
	now := mr.cfg.Now().UTC()
	err = mr.store.Update([]string{epid}, func(tx Tx) error {
		b, err := tx.Batch(id)
		if err != nil {
			return err
		}
		b.State, b.Dir, b.Ready = BatchReady, dir, now
		tx.PutBatch(b)
		for _, idx := range b.Letters {
			l, err := tx.Letter(epid, idx)
			if err != nil {
				return err
			}
			l.Add(now, "Released", "to the print room: "+b.ID)
			tx.PutLetter(l)
		}
		m, err := tx.Mailing(epid)
		if err != nil {
			return err
		}
		if err := mr.settle(tx, &m, now); err != nil {
			return err
		}
		if mr.cfg.Printer != nil {
			tx.AddJob(Job{Kind: JobPrint, Key: job.Key, Due: now})
		}
		tx.DoneJob(job)
		return nil
	})
	if err == nil {
		mr.log.Info("print batch ready", "batch", id, "letters", len(b.Letters), "pages", b.Pages, "sheets", b.Sheets, "dir", dir, "took", time.Since(start).Round(time.Millisecond))
	}
	return err
}

// dropLetter takes a letter that cannot be produced out of its batch and
// holds it with the reason, in one commit with the batch's new figures;
// the batch is composed again at once without it (or, left without
// letters, is void).
func (mr *Mailroom) dropLetter(job Job, id, epid string, le *LetterError) error {
	now := mr.cfg.Now().UTC()
	err := mr.store.Update([]string{epid}, func(tx Tx) error {
		b, err := tx.Batch(id)
		if err != nil {
			return err
		}
		l, err := tx.Letter(epid, le.Idx)
		if err != nil {
			return err
		}
		l.Batch, l.Sheet = "", 0
		l.HoldFor(now, HoldDocument, "it could not be produced: "+le.Err.Error())
		tx.PutLetter(l)
		kept := b.Letters[:0:0]
		b.Sheets, b.Pages, b.Price = 0, 0, 0
		for _, idx := range b.Letters {
			if idx == le.Idx {
				continue
			}
			o, err := tx.Letter(epid, idx)
			if err != nil {
				return err
			}
			kept = append(kept, idx)
			o.Sheet = b.Sheets + 1
			b.Sheets += o.Sheets
			b.Pages += o.Pages
			b.Price += o.Price
			tx.PutLetter(o)
		}
		b.Letters = kept
		if len(kept) == 0 {
			b.State = BatchVoid
			tx.PutBatch(b)
			tx.DoneJob(job)
			return nil
		}
		tx.PutBatch(b)
		tx.Retry(job, now, fmt.Sprintf("letter %d held: %v", le.Idx, le.Err))
		return nil
	})
	if err == nil {
		mr.log.Warn("a letter could not be produced: held, its batch composed without it", "epid", epid, "letter", le.Idx, "batch", id, "err", le.Err)
		mr.runner.Wake()
	}
	return err
}

// settle queues the deletion of a mailing's documents once none of its
// letters can still be produced: every letter is in a batch that is
// ready, or ended. It reads the letters a page at a time.
func (mr *Mailroom) settle(tx Tx, m *Mailing, now time.Time) error {
	mr.queueConfirm(tx, m, JobConfirmDone, now) // sent when nothing moves any more
	if !m.Expires.IsZero() || m.Auto && m.Letters == 0 {
		return nil
	}
	ready := map[string]bool{} // batches past composing
	for from := 0; ; {
		page, err := tx.LettersPage(m.EPID, from, settlePage)
		if err != nil {
			return err
		}
		for i := range page {
			l := &page[i]
			if Final(l.Status) {
				continue
			}
			if l.Status == Processing && l.Batch != "" && l.Send == nil {
				r, seen := ready[l.Batch]
				if !seen {
					b, err := tx.Batch(l.Batch)
					r = err == nil && b.State != BatchComposing
					ready[l.Batch] = r
				}
				if r {
					continue
				}
			}
			return nil
		}
		if len(page) < settlePage {
			break
		}
		from += len(page)
	}
	m.Expires = now.Add(mr.cfg.Retention)
	tx.PutMailing(*m)
	tx.AddJob(Job{Kind: JobPurge, Key: m.EPID, Due: m.Expires})
	return nil
}

// settlePage is how many letter records settle reads at a time.
const settlePage = 1000

// purge deletes a mailing's documents after the retention period; its
// records stay.
func (mr *Mailroom) purge(ctx context.Context, job Job) error {
	epid := job.Key
	if mr.cfg.Purge != nil {
		if err := mr.cfg.Purge(epid); err != nil {
			return err
		}
	}
	return mr.store.Update([]string{epid}, func(tx Tx) error {
		m, err := tx.Mailing(epid)
		if err == nil {
			m.Purged = true
			tx.PutMailing(m)
		}
		tx.DoneJob(job)
		return nil
	})
}
