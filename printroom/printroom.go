// Package printroom is the operators' side of the mailroom (package
// pipeline): print batches listed, shown and marked printed and then
// lodged (handed to the postal service), and the records invoices read.
//
// A Room does that on the mailroom store itself (Local) or, while lodge
// serve holds the store (Pebble lets one process open it), through the
// data directory's admin socket (Dial; package internal/adminsock).
// lodge serve registers AdminOps on that socket beside the accounts'
// operations; Open picks the store or the socket, as auth.OpenAdmin does
// for accounts.
//
// # Operations on the admin socket
//
//	mailroom.batches    {"state":"ready"}                  the batches in a state ("" or absent: all), oldest first
//	mailroom.batch      {"id":"..."}                       one batch
//	mailroom.mark_batch {"id","state","at","by"}           printed or lodged at a time (RFC 3339; absent: now), by an operator
//	mailroom.mailing    {"epid":"..."}                     one mailing
//	mailroom.mailings   {"account","before","limit"}       an account's mailings created before before, newest first
//	mailroom.letters    {"epid","from","limit"}            a mailing's letters from index from on
//
// Every argument is checked: unknown ones, and strings where numbers
// belong, are bad requests; id, state, epid and account are required. A
// call answers at most 100 mailings (without their settings and
// end_session answer, which can be large; invoices do not need them) or
// 500 letters: the client pages for more. Errors of kind notfound wrap
// pipeline.ErrNotFound, of kind invalid ErrInvalid.
//
// # Marks
//
// MarkBatch (either way) refuses a state other than printed or lodged,
// a time in the future or before the batch was released to the printer
// (or, for lodged, printed), and an operator name over 64 bytes or with
// control characters; then pipeline.Mailroom.MarkBatch moves the batch
// and its letters (Printed, then Lodged with the time) in one durable
// commit.
package printroom

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/lodge-mail/lodge/internal/adminsock"
	"github.com/lodge-mail/lodge/pipeline"
)

// Room is what the print room commands and invoices do with the
// mailroom's records.
type Room interface {
	// Batches returns the batches in a state ("" all), oldest first.
	Batches(state string) ([]pipeline.Batch, error)
	Batch(id string) (pipeline.Batch, error)
	// MarkBatch marks a batch printed or lodged (pipeline.BatchPrinted,
	// BatchLodged) at a time (zero: now) by an operator.
	MarkBatch(id, state string, at time.Time, by string) (pipeline.Batch, error)
	Mailing(epid string) (pipeline.Mailing, error)
	// Mailings returns up to limit (<= 0: all) mailings of an account
	// created before before (zero: from the newest), newest first; their
	// Settings and Result may be left out (the socket does).
	Mailings(account string, before time.Time, limit int) ([]pipeline.Mailing, error)
	// Letters returns up to limit (<= 0: all) letters of a mailing from
	// index from on.
	Letters(epid string, from, limit int) ([]pipeline.Letter, error)
}

// ErrInvalid is what a mark with a bad state, time or operator gives.
var ErrInvalid = errors.New("invalid")

// ErrNoMailroom is Open's answer for a data directory without a mailroom
// store: lodge serve has not run there with one.
var ErrNoMailroom = errors.New("no mailroom")

// Bounds of one call over the socket.
const (
	maxMailings = 100
	maxLetters  = 500
	maxBy       = 64
)

// ---- directly

type local struct {
	pipeline.Store
	mr *pipeline.Mailroom
}

// Local returns the Room of a mailroom in this process (lodge serve's
// own, or one a tool made over the store with a nil Producer).
func Local(mr *pipeline.Mailroom) Room { return &local{Store: mr.Store(), mr: mr} }

func (r *local) MarkBatch(id, state string, at time.Time, by string) (pipeline.Batch, error) {
	now := time.Now()
	if at.IsZero() {
		at = now
	}
	if err := checkMark(state, at, by, now); err != nil {
		return pipeline.Batch{}, err
	}
	b, err := r.Store.Batch(id)
	if err != nil {
		return pipeline.Batch{}, fmt.Errorf("batch %s: %w", id, err)
	}
	if !b.Ready.IsZero() && at.Before(b.Ready) {
		return pipeline.Batch{}, fmt.Errorf("%w: batch %s was released to the printer at %s: it cannot be %s before (%s)",
			ErrInvalid, id, b.Ready.Format(time.RFC3339), state, at.Format(time.RFC3339))
	}
	if state == pipeline.BatchLodged && !b.Printed.IsZero() && at.Before(b.Printed) {
		return pipeline.Batch{}, fmt.Errorf("%w: batch %s was printed at %s: it cannot be lodged before (%s)",
			ErrInvalid, id, b.Printed.Format(time.RFC3339), at.Format(time.RFC3339))
	}
	return r.mr.MarkBatch(id, state, at, by)
}

func checkMark(state string, at time.Time, by string, now time.Time) error {
	if state != pipeline.BatchPrinted && state != pipeline.BatchLodged {
		return fmt.Errorf("%w: a batch is marked %s or %s, not %.32q", ErrInvalid, pipeline.BatchPrinted, pipeline.BatchLodged, state)
	}
	// A minute's grace for clocks of the tool and the server apart.
	if at.After(now.Add(time.Minute)) {
		return fmt.Errorf("%w: %s is in the future", ErrInvalid, at.Format(time.RFC3339))
	}
	if by == "" || len(by) > maxBy || strings.IndexFunc(by, unicode.IsControl) >= 0 || !utf8.ValidString(by) {
		return fmt.Errorf("%w: the operator's name %.80q: want 1 to %d bytes of text", ErrInvalid, by, maxBy)
	}
	return nil
}

// ---- over the socket

var kinds = []adminsock.Kind{
	{Name: "notfound", Err: pipeline.ErrNotFound},
	{Name: "invalid", Err: ErrInvalid},
}

type batchesArgs struct {
	State string `json:"state"`
}

type idArgs struct {
	ID *string `json:"id"`
}

type markArgs struct {
	ID    *string   `json:"id"`
	State *string   `json:"state"`
	At    time.Time `json:"at"`
	By    string    `json:"by"`
}

type epidArgs struct {
	EPID *string `json:"epid"`
}

type mailingsArgs struct {
	Account *string   `json:"account"`
	Before  time.Time `json:"before"`
	Limit   int       `json:"limit"`
}

type lettersArgs struct {
	EPID  *string `json:"epid"`
	From  int     `json:"from"`
	Limit int     `json:"limit"`
}

// Op names.
const (
	opBatches  = "mailroom.batches"
	opBatch    = "mailroom.batch"
	opMark     = "mailroom.mark_batch"
	opMailing  = "mailroom.mailing"
	opMailings = "mailroom.mailings"
	opLetters  = "mailroom.letters"
)

// decode decodes the args of op into v and checks that the required
// ones (non-nil pointers) are there.
func decode[T any](op string, raw json.RawMessage, required func(*T) map[string]*string) (T, error) {
	var v T
	if err := adminsock.DecodeArgs(op, raw, &v); err != nil {
		return v, err
	}
	if required != nil {
		for name, p := range required(&v) {
			if p == nil {
				return v, adminsock.BadRequest("args of %s: %s missing", op, name)
			}
		}
	}
	return v, nil
}

// AdminOps returns the mailroom's operations over mr for the admin socket
// (see the package documentation).
func AdminOps(mr *pipeline.Mailroom) adminsock.Ops {
	r := Local(mr)
	return adminsock.Ops{Kinds: kinds, Handlers: map[string]adminsock.Handler{
		opBatches: func(raw json.RawMessage) (any, error) {
			a, err := decode[batchesArgs](opBatches, raw, nil)
			if err != nil {
				return nil, err
			}
			if err := CheckState(a.State); err != nil {
				return nil, err
			}
			return r.Batches(a.State)
		},
		opBatch: func(raw json.RawMessage) (any, error) {
			a, err := decode(opBatch, raw, func(a *idArgs) map[string]*string { return map[string]*string{"id": a.ID} })
			if err != nil {
				return nil, err
			}
			return r.Batch(*a.ID)
		},
		opMark: func(raw json.RawMessage) (any, error) {
			a, err := decode(opMark, raw, func(a *markArgs) map[string]*string { return map[string]*string{"id": a.ID, "state": a.State} })
			if err != nil {
				return nil, err
			}
			return r.MarkBatch(*a.ID, *a.State, a.At, a.By)
		},
		opMailing: func(raw json.RawMessage) (any, error) {
			a, err := decode(opMailing, raw, func(a *epidArgs) map[string]*string { return map[string]*string{"epid": a.EPID} })
			if err != nil {
				return nil, err
			}
			return r.Mailing(*a.EPID)
		},
		opMailings: func(raw json.RawMessage) (any, error) {
			a, err := decode(opMailings, raw, func(a *mailingsArgs) map[string]*string { return map[string]*string{"account": a.Account} })
			if err != nil {
				return nil, err
			}
			if a.Limit <= 0 || a.Limit > maxMailings {
				a.Limit = maxMailings
			}
			ms, err := r.Mailings(*a.Account, a.Before, a.Limit)
			for i := range ms {
				ms[i].Settings, ms[i].Result = nil, nil
			}
			return ms, err
		},
		opLetters: func(raw json.RawMessage) (any, error) {
			a, err := decode(opLetters, raw, func(a *lettersArgs) map[string]*string { return map[string]*string{"epid": a.EPID} })
			if err != nil {
				return nil, err
			}
			if a.From < 0 {
				return nil, fmt.Errorf("%w: letters from %d: letters are numbered from 0", ErrInvalid, a.From)
			}
			if a.Limit <= 0 || a.Limit > maxLetters {
				a.Limit = maxLetters
			}
			return r.Letters(*a.EPID, a.From, a.Limit)
		},
	}}
}

// CheckState checks a batch state a listing asks for ("" all).
func CheckState(state string) error {
	switch state {
	case "", pipeline.BatchComposing, pipeline.BatchReady, pipeline.BatchPrinted, pipeline.BatchLodged:
		return nil
	}
	return fmt.Errorf("%w: a batch is %s, %s, %s or %s, not %.32q", ErrInvalid,
		pipeline.BatchComposing, pipeline.BatchReady, pipeline.BatchPrinted, pipeline.BatchLodged, state)
}

type client struct {
	c adminsock.Client
}

// Dial returns the Room of the lodge serve answering on the admin socket
// at path, after checking that it serves the mailroom's operations.
func Dial(path string) (Room, error) {
	c, p, err := adminsock.Dial(path, kinds...)
	if err != nil {
		return nil, err
	}
	if !p.Serves(opBatches, opBatch, opMark, opMailing, opMailings, opLetters) {
		return nil, fmt.Errorf("admin socket %s: the lodge serve answering there does not serve the mailroom", path)
	}
	return &client{c: *c}, nil
}

func (c *client) Batches(state string) (bs []pipeline.Batch, err error) {
	err = c.c.Call(opBatches, batchesArgs{State: state}, &bs)
	return bs, err
}

func (c *client) Batch(id string) (b pipeline.Batch, err error) {
	err = c.c.Call(opBatch, idArgs{ID: &id}, &b)
	return b, err
}

func (c *client) MarkBatch(id, state string, at time.Time, by string) (b pipeline.Batch, err error) {
	err = c.c.Call(opMark, markArgs{ID: &id, State: &state, At: at, By: by}, &b)
	return b, err
}

func (c *client) Mailing(epid string) (m pipeline.Mailing, err error) {
	err = c.c.Call(opMailing, epidArgs{EPID: &epid}, &m)
	return m, err
}

func (c *client) Mailings(account string, before time.Time, limit int) ([]pipeline.Mailing, error) {
	var out []pipeline.Mailing
	err := EachMailing(pager(func(before time.Time, n int) (ms []pipeline.Mailing, err error) {
		err = c.c.Call(opMailings, mailingsArgs{Account: &account, Before: before, Limit: n}, &ms)
		return ms, err
	}), account, before, func(m *pipeline.Mailing) (bool, error) {
		out = append(out, *m)
		return limit <= 0 || len(out) < limit, nil
	})
	return out, err
}

func (c *client) Letters(epid string, from, limit int) ([]pipeline.Letter, error) {
	var out []pipeline.Letter
	for {
		n := maxLetters
		if limit > 0 {
			n = min(n, limit-len(out))
		}
		var page []pipeline.Letter
		if err := c.c.Call(opLetters, lettersArgs{EPID: &epid, From: from, Limit: n}, &page); err != nil {
			return nil, err
		}
		out = append(out, page...)
		if len(page) < n || limit > 0 && len(out) >= limit {
			return out, nil
		}
		from = page[len(page)-1].Idx + 1
	}
}

// pager adapts a page fetch to MailingLister.
type pager func(before time.Time, limit int) ([]pipeline.Mailing, error)

func (p pager) Mailings(_ string, before time.Time, limit int) ([]pipeline.Mailing, error) {
	return p(before, limit)
}

// MailingLister is what EachMailing pages through (a pipeline.Store, a
// Room).
type MailingLister interface {
	Mailings(account string, before time.Time, limit int) ([]pipeline.Mailing, error)
}

// EachMailing calls fn with each mailing of an account created before
// before (zero: all), newest first, reading them a page at a time, until
// fn says to stop. Mailings created in the same nanosecond on both sides
// of a page's end are each seen once: the next page starts at the last
// one's time again and skips those already seen.
func EachMailing(l MailingLister, account string, before time.Time, fn func(*pipeline.Mailing) (more bool, err error)) error {
	size := maxMailings
	seen := map[string]bool{}
	for {
		page, err := l.Mailings(account, before, size)
		if err != nil {
			return err
		}
		progress := false
		for i := range page {
			m := &page[i]
			if seen[m.EPID] {
				continue
			}
			seen[m.EPID], progress = true, true
			more, err := fn(m)
			if err != nil || !more {
				return err
			}
		}
		if len(page) < size {
			return nil
		}
		if !progress {
			size *= 2 // a page's worth made in one nanosecond: take more at once
			continue
		}
		before = page[len(page)-1].Created.Add(time.Nanosecond)
		// seen needs only the mailings of that last nanosecond
		for _, m := range page {
			if !m.Created.Equal(page[len(page)-1].Created) {
				delete(seen, m.EPID)
			}
		}
	}
}

// ---- choosing

// Open gives the print room commands their Room for the data directory
// dataDir: the mailroom store <dataDir>/mailroom opened directly when no
// other process holds it, else, when <dataDir>/admin.sock exists, the
// admin socket of the lodge serve that holds it. A data directory without
// a mailroom store gives ErrNoMailroom. The returned func closes what was
// opened.
func Open(dataDir string) (Room, func() error, error) {
	dir := filepath.Join(dataDir, "mailroom")
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("%w in %s (lodge serve makes it)", ErrNoMailroom, dataDir)
	}
	s, err := pipeline.OpenPebble(dir)
	if err == nil {
		return Local(pipeline.New(s, nil, pipeline.Config{}, nil)), s.Close, nil
	}
	if !adminsock.Locked(err) {
		return nil, nil, err
	}
	err = fmt.Errorf("mailroom store %s is in use by another process (is lodge serve running? stop it first): %w", dir, err)
	sock := adminsock.Path(dataDir)
	if _, serr := os.Lstat(sock); serr != nil {
		return nil, nil, err
	}
	r, derr := Dial(sock)
	if derr != nil {
		return nil, nil, fmt.Errorf("%w; and its admin socket does not answer: %v", err, derr)
	}
	return r, func() error { return nil }, nil
}
