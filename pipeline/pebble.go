package pipeline

import (
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/segmentio/encoding/json"

	"github.com/lodge-mail/lodge/internal/pebblelog"
)

// Pebble keys, prefix "mail/v1/", JSON values unless said otherwise:
//
//	m/<epid>                                        Mailing
//	l/<epid>/<idx:%08d>                             Letter
//	c/<epid>                                        letters per status: {"Received": n, ...}
//	r/<account>/<hex(ref)>/<created:%016x>/<epid>/<idx:%08d>   "" : letters by reference, oldest mailing first
//	a/<account>/<^created:%016x>/<epid>             MailingSummary (summary.go's encoding): mailings of an account, newest first
//	b/<id>                                          Batch
//	s/<state>/<created:%016x>/<id>                  "" : batches by state, oldest first
//	j/<kind>/<due:%016x>/<key>                      Job
//	k/<kind>/<key>                                  the j/ key of the job of that kind and key
//	f/<account>/<^failover:%016x>/<epid>/<idx:%08d>     "" : letters failed over to post, newest first
//	x/<hex(alias)>                                  {"epid","idx"}: a letter by a gateway's id for it (SMS message ids)
//
// created and due are Unix nanoseconds; ^created is its bitwise NOT. The
// index keys are written in the same batch as the record they index. An
// a/ key's summary is rewritten by every commit that puts its mailing or
// changes its counts; an empty one (written before summaries were kept)
// is read as the mailing and its counts say.
const (
	pfx         = "mail/v1/"
	pfxMailing  = pfx + "m/"
	pfxLetter   = pfx + "l/"
	pfxCounts   = pfx + "c/"
	pfxRef      = pfx + "r/"
	pfxAccount  = pfx + "a/"
	pfxBatch    = pfx + "b/"
	pfxBatchIdx = pfx + "s/"
	pfxJob      = pfx + "j/"
	pfxJobKey   = pfx + "k/"
	pfxAlias    = pfx + "x/"
	pfxFailover = pfx + "f/"
)

func failoverKey(l *Letter) string {
	return fmt.Sprintf("%s%s/%016x/%s/%08d", pfxFailover, l.Account, ^uint64(l.Failover.Time.UnixNano()), l.EPID, l.Idx)
}

// Failovers returns up to limit letters of an account that failed over
// to post, newest failover first.
func (s *PebbleStore) Failovers(account string, limit int) ([]Letter, error) {
	var out []Letter
	prefix := pfxFailover + account + "/"
	err := s.scan(prefix, func(k, _ []byte) (bool, error) {
		parts := strings.Split(strings.TrimPrefix(string(k), prefix), "/")
		if len(parts) != 3 {
			return true, nil
		}
		idx, err := strconv.Atoi(parts[2])
		if err != nil {
			return true, nil
		}
		var l Letter
		if err := s.get(letterKey(parts[1], idx), &l); err != nil {
			return false, err
		}
		out = append(out, l)
		return limit <= 0 || len(out) < limit, nil
	})
	return out, err
}

// aliasRec is the value of an alias key.
type aliasRec struct {
	EPID string `json:"epid"`
	Idx  int    `json:"idx"`
}

func aliasKey(alias string) string { return pfxAlias + hex.EncodeToString([]byte(alias)) }

// Alias returns the letter a gateway's id names.
func (s *PebbleStore) Alias(alias string) (epid string, idx int, err error) {
	var a aliasRec
	if err := s.get(aliasKey(alias), &a); err != nil {
		return "", 0, err
	}
	return a.EPID, a.Idx, nil
}

func (t *pebbleTx) PutAlias(alias, epid string, idx int) {
	if t.owns(epid) {
		t.set(aliasKey(alias), aliasRec{EPID: epid, Idx: idx})
	}
}

// PebbleStore is the embedded Store: one node, records and queue in a
// Pebble database. Claims are leases held in memory: a restart forgets
// them, so every job not completed is handed out again.
type PebbleStore struct {
	db     *pebble.DB
	own    bool // db opened by OpenPebble: closed by Close
	closed atomic.Bool
	locks  [256]sync.Mutex
	mu     sync.Mutex        // guards leases and next
	leases map[string]uint64 // job key → lease
	next   uint64
}

// OpenPebble opens (creating) a store in dir.
func OpenPebble(dir string) (*PebbleStore, error) {
	db, err := pebble.Open(dir, &pebble.Options{Logger: pebblelog.Quiet{}})
	if err != nil {
		return nil, fmt.Errorf("mailroom store %s: %w", dir, err)
	}
	s := NewPebble(db)
	s.own = true
	return s, nil
}

// NewPebble returns a store kept in db (under its own key prefix), which
// the caller closes after the store's last use.
func NewPebble(db *pebble.DB) *PebbleStore {
	return &PebbleStore{db: db, leases: map[string]uint64{}}
}

// Close closes the database when the store opened it; closing again does
// nothing.
func (s *PebbleStore) Close() error {
	if !s.own || s.closed.Swap(true) {
		return nil
	}
	return s.db.Close()
}

func letterKey(epid string, idx int) string { return fmt.Sprintf("%s%s/%08d", pfxLetter, epid, idx) }

func refKey(l *Letter, created time.Time) string {
	return fmt.Sprintf("%s%s/%s/%016x/%s/%08d", pfxRef, l.Account, hex.EncodeToString([]byte(l.Reference)), uint64(created.UnixNano()), l.EPID, l.Idx)
}

func accountKey(m *Mailing) string {
	return fmt.Sprintf("%s%s/%016x/%s", pfxAccount, m.Account, ^uint64(m.Created.UnixNano()), m.EPID)
}

func batchIdxKey(b *Batch) string {
	return fmt.Sprintf("%s%s/%016x/%s", pfxBatchIdx, b.State, uint64(b.Created.UnixNano()), b.ID)
}

func jobKey(j Job) string {
	return fmt.Sprintf("%s%s/%016x/%s", pfxJob, j.Kind, uint64(j.Due.UnixNano()), j.Key)
}

func jobIndexKey(kind, key string) string { return pfxJobKey + kind + "/" + key }

// lockAll takes the locks of several mailings in index order, each once,
// and returns their release.
func (s *PebbleStore) lockAll(epids []string) func() {
	idx := make([]int, 0, len(epids))
	for _, e := range epids {
		h := fnv.New32a()
		h.Write([]byte(e))
		idx = append(idx, int(h.Sum32()%uint32(len(s.locks))))
	}
	sort.Ints(idx)
	idx = slices.Compact(idx)
	for _, i := range idx {
		s.locks[i].Lock()
	}
	return func() {
		for j := len(idx) - 1; j >= 0; j-- {
			s.locks[idx[j]].Unlock()
		}
	}
}

// Submit implements Store.
func (s *PebbleStore) Submit(m Mailing, letters []Letter, jobs []Job) error {
	return s.Update([]string{m.EPID}, func(tx Tx) error {
		if _, err := tx.Mailing(m.EPID); err == nil {
			return ErrExists
		} else if !errors.Is(err, ErrNotFound) {
			return err
		}
		m.Letters = len(letters)
		tx.PutMailing(m)
		for _, l := range letters {
			tx.PutLetter(l)
		}
		for _, j := range jobs {
			tx.AddJob(j)
		}
		return nil
	})
}

// Update implements Store.
func (s *PebbleStore) Update(epids []string, fn func(Tx) error) error {
	unlock := s.lockAll(epids)
	defer unlock()
	tx := &pebbleTx{s: s, b: s.db.NewIndexedBatch(), epids: epids, counts: map[string]map[string]int{}, summaries: map[string]bool{}}
	defer tx.b.Close()
	if err := fn(tx); err != nil {
		return err
	}
	if tx.err != nil {
		return tx.err
	}
	if err := tx.flushCounts(); err != nil {
		return err
	}
	if err := tx.flushSummaries(); err != nil {
		return err
	}
	// The leases of the jobs this transaction ends are checked and
	// dropped under s.mu around the commit: a job cannot be handed out
	// again between the check and the commit.
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range tx.done {
		if s.leases[d.key] != d.lease || d.lease == 0 {
			return fmt.Errorf("%w: %s", ErrLeaseLost, d.key)
		}
	}
	if err := tx.moveClaimedOver(); err != nil {
		return err
	}
	if err := tx.b.Commit(pebble.Sync); err != nil {
		return err
	}
	for _, d := range tx.done {
		delete(s.leases, d.key)
	}
	return nil
}

// Claim implements Store.
func (s *PebbleStore) Claim(kinds []string, now time.Time) (Job, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var best Job
	var bestKey string
	found := false
	for _, kind := range kinds {
		err := s.scan(pfxJob+kind+"/", func(k, v []byte) (bool, error) {
			var j Job
			if err := json.Unmarshal(v, &j); err != nil {
				return false, fmt.Errorf("job %s: %w", k, err)
			}
			if j.Due.After(now) {
				return false, nil
			}
			if _, leased := s.leases[string(k)]; leased {
				return true, nil
			}
			if !found || j.Due.Before(best.Due) {
				best, bestKey, found = j, string(k), true
			}
			return false, nil
		})
		if err != nil {
			return Job{}, false, err
		}
	}
	if !found {
		return Job{}, false, nil
	}
	s.next++
	best.lease = s.next
	s.leases[bestKey] = best.lease
	return best, true, nil
}

// Unclaim implements Store.
func (s *PebbleStore) Unclaim(j Job) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if k := jobKey(j); j.lease != 0 && s.leases[k] == j.lease {
		delete(s.leases, k)
		return true
	}
	return false
}

// NextDue implements Store.
func (s *PebbleStore) NextDue(kinds []string) (time.Time, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var due time.Time
	found := false
	for _, kind := range kinds {
		err := s.scan(pfxJob+kind+"/", func(k, v []byte) (bool, error) {
			if _, leased := s.leases[string(k)]; leased {
				return true, nil
			}
			var j Job
			if err := json.Unmarshal(v, &j); err != nil {
				return false, err
			}
			if !found || j.Due.Before(due) {
				due, found = j.Due, true
			}
			return false, nil
		})
		if err != nil {
			return time.Time{}, false, err
		}
	}
	return due, found, nil
}

// scan calls fn for the keys of prefix in order while it returns true.
func (s *PebbleStore) scan(prefix string, fn func(k, v []byte) (bool, error)) error {
	return scanReader(s.db, prefix, prefix, fn)
}

type iterable interface {
	NewIter(*pebble.IterOptions) (*pebble.Iterator, error)
}

func scanReader(r iterable, prefix, from string, fn func(k, v []byte) (bool, error)) error {
	end := []byte(prefix)
	end[len(end)-1]++
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: []byte(from), UpperBound: end})
	if err != nil {
		return err
	}
	for it.First(); it.Valid(); it.Next() {
		more, err := fn(it.Key(), it.Value())
		if err != nil {
			it.Close()
			return err
		}
		if !more {
			break
		}
	}
	if err := it.Error(); err != nil {
		it.Close()
		return err
	}
	return it.Close()
}

func getJSON(get func([]byte) ([]byte, func() error, error), key string, v any) error {
	b, closer, err := get([]byte(key))
	if errors.Is(err, pebble.ErrNotFound) {
		return ErrNotFound
	}
	if err != nil {
		return err
	}
	defer closer()
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	return nil
}

func (s *PebbleStore) get(key string, v any) error {
	return getJSON(func(k []byte) ([]byte, func() error, error) {
		b, c, err := s.db.Get(k)
		if err != nil {
			return nil, nil, err
		}
		return b, c.Close, nil
	}, key, v)
}

// Mailing implements Store.
func (s *PebbleStore) Mailing(epid string) (Mailing, error) {
	var m Mailing
	err := s.get(pfxMailing+epid, &m)
	return m, err
}

// Letters implements Store.
func (s *PebbleStore) Letters(epid string, from, limit int) ([]Letter, error) {
	return lettersFrom(s.db, epid, from, limit)
}

func lettersFrom(r iterable, epid string, from, limit int) ([]Letter, error) {
	var out []Letter
	prefix := pfxLetter + epid + "/"
	err := scanReader(r, prefix, letterKey(epid, max(from, 0)), func(k, v []byte) (bool, error) {
		var l Letter
		if err := json.Unmarshal(v, &l); err != nil {
			return false, fmt.Errorf("%s: %w", k, err)
		}
		out = append(out, l)
		return limit <= 0 || len(out) < limit, nil
	})
	return out, err
}

// Counts implements Store.
func (s *PebbleStore) Counts(epid string) (map[string]int, error) {
	c := map[string]int{}
	err := s.get(pfxCounts+epid, &c)
	if errors.Is(err, ErrNotFound) {
		err = nil
	}
	return c, err
}

// LettersByRef implements Store.
func (s *PebbleStore) LettersByRef(account, ref string) ([]Letter, error) {
	var out []Letter
	prefix := pfxRef + account + "/" + hex.EncodeToString([]byte(ref)) + "/"
	err := s.scan(prefix, func(k, _ []byte) (bool, error) {
		parts := strings.Split(strings.TrimPrefix(string(k), prefix), "/")
		if len(parts) != 3 {
			return false, fmt.Errorf("bad reference key %q", k)
		}
		idx, err := strconv.Atoi(parts[2])
		if err != nil {
			return false, fmt.Errorf("bad reference key %q", k)
		}
		var l Letter
		if err := s.get(letterKey(parts[1], idx), &l); err != nil {
			return false, err
		}
		out = append(out, l)
		return true, nil
	})
	return out, err
}

// Mailings implements Store.
func (s *PebbleStore) Mailings(account string, before time.Time, limit int) ([]Mailing, error) {
	prefix := pfxAccount + account + "/"
	from := prefix
	if !before.IsZero() {
		// keys hold ^created: those after ^before were created before it
		from = fmt.Sprintf("%s%016x", prefix, ^uint64(before.UnixNano())+1)
	}
	var out []Mailing
	err := scanReader(s.db, prefix, from, func(k, _ []byte) (bool, error) {
		epid := string(k[strings.LastIndexByte(string(k), '/')+1:])
		m, err := s.Mailing(epid)
		if err != nil {
			return false, err
		}
		out = append(out, m)
		return limit <= 0 || len(out) < limit, nil
	})
	return out, err
}

// SearchMailings implements Store: it reads the account's index from
// the query's place on, its summaries in place, and stops at a full page
// (one more match found), the end of the account or From, or MaxScan.
func (s *PebbleStore) SearchMailings(q MailingQuery) (MailingPage, error) {
	var page MailingPage
	if err := q.validate(); err != nil {
		return page, err
	}
	prefix := pfxAccount + q.Account + "/"
	from := prefix
	if !q.Before.IsZero() {
		// keys hold ^created: those after ^before were created before it
		from = fmt.Sprintf("%s%016x", prefix, ^uint64(q.Before.UnixNano())+1)
	}
	if !q.After.IsZero() {
		if after := accountKey(&Mailing{Account: q.Account, Created: q.After.Created, EPID: q.After.EPID}) + "\x00"; after > from {
			from = after
		}
	}
	f := newSummaryFilter(&q)
	var (
		v       summaryView
		lastKey []byte
		more    bool // a match past the page's last
	)
	cursorOf := func(k []byte) MailingCursor {
		inv, _ := parseHex16(k[len(prefix):])
		return MailingCursor{Created: time.Unix(0, int64(^inv)).UTC(), EPID: string(k[len(prefix)+17:])}
	}
	err := scanReader(s.db, prefix, from, func(k, val []byte) (bool, error) {
		rest := k[len(prefix):]
		inv, ok := parseHex16(rest)
		if !ok || len(rest) < 18 || rest[16] != '/' {
			return false, fmt.Errorf("bad account key %q", k)
		}
		if !q.From.IsZero() && int64(^inv) < q.From.UnixNano() {
			return false, nil
		}
		if q.MaxScan > 0 && page.Scanned >= q.MaxScan {
			page.Bounded = true
			return false, nil
		}
		page.Scanned++
		lastKey = append(lastKey[:0], k...)
		epid := rest[17:]
		if len(val) == 0 {
			// written before summaries were kept
			m, err := s.Mailing(string(epid))
			if err != nil {
				return false, fmt.Errorf("mailing of %q: %w", k, err)
			}
			c, err := s.Counts(m.EPID)
			if err != nil {
				return false, err
			}
			val = encodeSummary(&m, c)
		}
		if err := v.decode(val); err != nil {
			return false, fmt.Errorf("%q: %w", k, err)
		}
		if !f.match(&v) {
			return true, nil
		}
		if q.Limit > 0 && len(page.Mailings) == q.Limit {
			more = true
			return false, nil
		}
		page.Mailings = append(page.Mailings, v.summary(q.Account, string(epid), time.Unix(0, int64(^inv)).UTC()))
		return true, nil
	})
	if err != nil {
		return MailingPage{}, err
	}
	page.finish(q.Limit, more, func() MailingCursor { return cursorOf(lastKey) })
	return page, nil
}

// parseHex16 reads 16 lower-case hex digits.
func parseHex16(b []byte) (uint64, bool) {
	if len(b) < 16 {
		return 0, false
	}
	var x uint64
	for _, c := range b[:16] {
		switch {
		case '0' <= c && c <= '9':
			x = x<<4 | uint64(c-'0')
		case 'a' <= c && c <= 'f':
			x = x<<4 | uint64(c-'a'+10)
		default:
			return 0, false
		}
	}
	return x, true
}

// Batch implements Store.
func (s *PebbleStore) Batch(id string) (Batch, error) {
	var b Batch
	err := s.get(pfxBatch+id, &b)
	return b, err
}

// Batches implements Store.
func (s *PebbleStore) Batches(state string) ([]Batch, error) {
	var out []Batch
	if state == "" {
		err := s.scan(pfxBatch, func(_, v []byte) (bool, error) {
			var b Batch
			if err := json.Unmarshal(v, &b); err != nil {
				return false, err
			}
			out = append(out, b)
			return true, nil
		})
		slices.SortStableFunc(out, func(a, b Batch) int { return a.Created.Compare(b.Created) })
		return out, err
	}
	err := s.scan(pfxBatchIdx+state+"/", func(k, _ []byte) (bool, error) {
		id := string(k[strings.LastIndexByte(string(k), '/')+1:])
		b, err := s.Batch(id)
		if err != nil {
			return false, err
		}
		out = append(out, b)
		return true, nil
	})
	return out, err
}

// Jobs implements Store.
func (s *PebbleStore) Jobs() ([]Job, error) {
	var out []Job
	err := s.scan(pfxJob, func(_, v []byte) (bool, error) {
		var j Job
		if err := json.Unmarshal(v, &j); err != nil {
			return false, err
		}
		out = append(out, j)
		return true, nil
	})
	return out, err
}

// pebbleTx is a transaction of PebbleStore.Update.
type pebbleTx struct {
	s      *PebbleStore
	b      *pebble.Batch
	epids  []string
	counts map[string]map[string]int // epid → status → change
	// summaries are the mailings whose summary (a/ key) is rewritten at
	// commit: the mailing was put or its counts changed.
	summaries map[string]bool
	done      []leaseRef
	// added are the jobs AddJob queued, by key (moveClaimedOver)
	added map[string]Job
	err   error
}

type leaseRef struct {
	key   string
	lease uint64
}

func (t *pebbleTx) get(key string, v any) error {
	return getJSON(func(k []byte) ([]byte, func() error, error) {
		b, c, err := t.b.Get(k)
		if err != nil {
			return nil, nil, err
		}
		return b, c.Close, nil
	}, key, v)
}

func (t *pebbleTx) fail(err error) {
	if t.err == nil {
		t.err = err
	}
}

func (t *pebbleTx) set(key string, v any) {
	if t.err != nil {
		return
	}
	var b []byte
	if v != nil {
		var err error
		if b, err = json.Marshal(v); err != nil {
			t.fail(err)
			return
		}
	}
	t.fail(t.b.Set([]byte(key), b, nil))
}

func (t *pebbleTx) del(key string) {
	if t.err == nil {
		t.fail(t.b.Delete([]byte(key), nil))
	}
}

// owns checks that the transaction may write the mailing's records.
func (t *pebbleTx) owns(epid string) bool {
	if !slices.Contains(t.epids, epid) {
		t.fail(fmt.Errorf("pipeline: transaction over %v writes mailing %s", t.epids, epid))
		return false
	}
	return true
}

func (t *pebbleTx) Mailing(epid string) (Mailing, error) {
	var m Mailing
	err := t.get(pfxMailing+epid, &m)
	return m, err
}

func (t *pebbleTx) Letter(epid string, idx int) (Letter, error) {
	var l Letter
	err := t.get(letterKey(epid, idx), &l)
	return l, err
}

func (t *pebbleTx) Letters(epid string) ([]Letter, error) { return lettersFrom(t.b, epid, 0, 0) }

func (t *pebbleTx) LettersPage(epid string, from, limit int) ([]Letter, error) {
	return lettersFrom(t.b, epid, from, limit)
}

func (t *pebbleTx) Batch(id string) (Batch, error) {
	var b Batch
	err := t.get(pfxBatch+id, &b)
	return b, err
}

func (t *pebbleTx) PutMailing(m Mailing) {
	if !t.owns(m.EPID) {
		return
	}
	old, err := t.Mailing(m.EPID)
	switch {
	case err == nil:
		if !old.Created.Equal(m.Created) || old.Account != m.Account {
			t.del(accountKey(&old))
		}
	case !errors.Is(err, ErrNotFound):
		t.fail(err)
		return
	}
	t.set(pfxMailing+m.EPID, m)
	t.summaries[m.EPID] = true // the a/ key, written by flushSummaries
}

func (t *pebbleTx) PutLetter(l Letter) {
	if !t.owns(l.EPID) {
		return
	}
	m, err := t.Mailing(l.EPID)
	if err != nil {
		t.fail(fmt.Errorf("letter %s/%d: its mailing: %w", l.EPID, l.Idx, err))
		return
	}
	c := t.counts[l.EPID]
	if c == nil {
		c = map[string]int{}
		t.counts[l.EPID] = c
	}
	old, err := t.Letter(l.EPID, l.Idx)
	switch {
	case err == nil:
		c[old.Status]--
		if old.Reference != l.Reference && old.Reference != "" {
			t.del(refKey(&old, m.Created))
		}
	case !errors.Is(err, ErrNotFound):
		t.fail(err)
		return
	}
	c[l.Status]++
	t.set(letterKey(l.EPID, l.Idx), l)
	if l.Reference != "" {
		t.set(refKey(&l, m.Created), nil)
	}
	if l.Failover != nil {
		t.set(failoverKey(&l), nil) // the same key each time: its failover time
	}
}

// flushCounts adds the transaction's status changes to the stored counts.
func (t *pebbleTx) flushCounts() error {
	for epid, delta := range t.counts {
		c := map[string]int{}
		if err := t.get(pfxCounts+epid, &c); err != nil && !errors.Is(err, ErrNotFound) {
			return err
		}
		changed := false
		for st, d := range delta {
			if d != 0 {
				changed = true
			}
			if c[st] += d; c[st] == 0 {
				delete(c, st)
			}
		}
		if changed {
			t.set(pfxCounts+epid, c)
			t.summaries[epid] = true
		}
	}
	return t.err
}

// flushSummaries writes the summaries of the mailings put or whose
// counts changed, after flushCounts: the same commit carries them.
func (t *pebbleTx) flushSummaries() error {
	for epid := range t.summaries {
		m, err := t.Mailing(epid)
		if err != nil {
			return fmt.Errorf("summary of mailing %s: %w", epid, err)
		}
		c := map[string]int{}
		if err := t.get(pfxCounts+epid, &c); err != nil && !errors.Is(err, ErrNotFound) {
			return err
		}
		t.fail(t.b.Set([]byte(accountKey(&m)), encodeSummary(&m, c), nil))
	}
	return t.err
}

func (t *pebbleTx) PutBatch(b Batch) {
	if !t.owns(b.EPID) {
		return
	}
	old, err := t.Batch(b.ID)
	switch {
	case err == nil:
		t.del(batchIdxKey(&old))
	case !errors.Is(err, ErrNotFound):
		t.fail(err)
		return
	}
	t.set(pfxBatch+b.ID, b)
	t.set(batchIdxKey(&b), nil)
}

func (t *pebbleTx) AddJob(j Job) {
	idx := jobIndexKey(j.Kind, j.Key)
	var prev string
	switch err := t.get(idx, &prev); {
	case err == nil:
		if prev != jobKey(j) {
			t.s.mu.Lock()
			_, leased := t.s.leases[prev]
			t.s.mu.Unlock()
			if !leased {
				t.del(prev)
				delete(t.added, prev)
			}
			// A claimed job of the same kind and key is being worked on:
			// it is left to finish (its DoneJob removes it) and this one
			// runs after it.
		}
	case !errors.Is(err, ErrNotFound):
		t.fail(err)
		return
	}
	j.lease = 0
	// A claimed job's record must not be overwritten: one of the same
	// kind, key and due time would share its key, and the claimed job's
	// DoneJob would then delete this one. Such a job is queued a
	// nanosecond later instead (and runs after it). Update checks again
	// at commit, for a claim made after this.
	t.s.mu.Lock()
	j = t.s.unleased(j, t.ended())
	t.s.mu.Unlock()
	t.set(jobKey(j), j)
	t.set(idx, jobKey(j))
	if t.err == nil {
		if t.added == nil {
			t.added = map[string]Job{}
		}
		t.added[jobKey(j)] = j
	}
}

// unleased returns j, its due time moved on by a nanosecond at a time
// while its key is that of a claimed job other than those the
// transaction ends (a Retry at the claimed job's own due time keeps its
// key: the DoneJob's deletion comes first in the batch); s.mu is held.
func (s *PebbleStore) unleased(j Job, ended map[string]bool) Job {
	for {
		k := jobKey(j)
		if _, leased := s.leases[k]; !leased || ended[k] {
			return j
		}
		j.Due = j.Due.Add(time.Nanosecond)
	}
}

// ended are the keys of the claimed jobs the transaction ends (DoneJob).
func (t *pebbleTx) ended() map[string]bool {
	ended := make(map[string]bool, len(t.done))
	for _, d := range t.done {
		ended[d.key] = true
	}
	return ended
}

// moveClaimedOver moves the jobs this transaction queued whose keys were
// claimed since AddJob (a job of the same kind, key and due time) to the
// next free key, as AddJob would have; s.mu is held.
func (t *pebbleTx) moveClaimedOver() error {
	ended := t.ended()
	for k, j := range t.added {
		if _, leased := t.s.leases[k]; !leased || ended[k] {
			continue
		}
		// The record under k is now the claimed job's, overwritten by
		// this one: the claimed job runs as claimed (its record is not
		// needed for that), and this one, which replaces it, after it;
		// unless a later AddJob of the transaction replaced this one too.
		var cur string
		if err := t.get(jobIndexKey(j.Kind, j.Key), &cur); err == nil && cur != k {
			t.del(k)
			continue
		}
		moved := t.s.unleased(j, ended)
		t.del(k)
		t.set(jobKey(moved), moved)
		t.set(jobIndexKey(j.Kind, j.Key), jobKey(moved))
	}
	return t.err
}

func (t *pebbleTx) DoneJob(j Job) {
	k := jobKey(j)
	t.done = append(t.done, leaseRef{key: k, lease: j.lease})
	t.del(k)
	idx := jobIndexKey(j.Kind, j.Key)
	var cur string
	if err := t.get(idx, &cur); err == nil && cur == k {
		t.del(idx)
	}
}

func (t *pebbleTx) Retry(j Job, due time.Time, reason string) {
	t.DoneJob(j)
	// A job of the same kind and key queued while this one ran stays,
	// and the retry gives way to it.
	var newer string
	if err := t.get(jobIndexKey(j.Kind, j.Key), &newer); err == nil {
		return
	}
	j.Due, j.Attempts, j.Error = due, j.Attempts+1, reason
	t.AddJob(j)
}
