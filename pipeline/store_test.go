package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/lodge-mail/lodge/internal/testpg"
	"github.com/lodge-mail/lodge/pgdb"
)

var t0 = time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)

func mailing(epid, account string, created time.Time) Mailing {
	return Mailing{EPID: epid, Account: account, Created: created, ReleaseAt: created.Add(time.Hour)}
}

func letters(epid, account string, n int, refs ...string) []Letter {
	out := make([]Letter, n)
	for i := range out {
		out[i] = Letter{EPID: epid, Account: account, Idx: i, Status: Received, Channels: []string{"postal"}, Received: t0}
		if i < len(refs) {
			out[i].Reference = refs[i]
		}
	}
	return out
}

func TestMain(m *testing.M) { testpg.Main(m) }

// storeOpener opens a new, empty store for a test; reopen closes it and
// opens it again on the same data, as a restart of the node would.
type storeOpener func(t *testing.T) (s Store, reopen func() Store)

// storeKinds are the implementations of Store: every test that takes a
// storeOpener runs over each (eachStore).
var storeKinds = []struct {
	name string
	open storeOpener
}{
	{"pebble", openPebbleStore},
	{"postgres", openPostgresStore},
}

func eachStore(t *testing.T, f func(t *testing.T, open storeOpener)) {
	for _, k := range storeKinds {
		t.Run(k.name, func(t *testing.T) { f(t, k.open) })
	}
}

func openPebbleStore(t *testing.T) (Store, func() Store) {
	dir := t.TempDir()
	s, err := OpenPebble(dir)
	if err != nil {
		t.Fatal(err)
	}
	cur := Store(s)
	t.Cleanup(func() { cur.Close() })
	reopen := func() Store {
		cur.Close()
		s, err := OpenPebble(dir)
		if err != nil {
			t.Fatal(err)
		}
		cur = s
		return s
	}
	return s, reopen
}

// openPostgresStore opens a store on a new database of the test's
// PostgreSQL server; reopen restarts the node: a new pool and store
// under the same node name.
func openPostgresStore(t *testing.T) (Store, func() Store) {
	url := testpg.NewDatabase(t)
	s := openPostgresNode(t, url, PostgresOptions{Node: "node-1"})
	return s, func() Store {
		s.Close()
		return openPostgresNode(t, url, PostgresOptions{Node: "node-1"})
	}
}

// openPostgresNode opens one node's store (its own pool) on the database
// at url, closed at the end of the test.
func openPostgresNode(t *testing.T, url string, opt PostgresOptions) *PostgresStore {
	t.Helper()
	db, err := pgdb.Open(context.Background(), pgdb.Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	s, err := OpenPostgres(db, opt)
	if err != nil {
		db.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(); db.Close() })
	return s
}

// TestStore is the conformance test of a Store: every implementation
// passes it.
func TestStore(t *testing.T) { eachStore(t, testStore) }

func testStore(t *testing.T, open storeOpener) {
	t.Run("submit once", func(t *testing.T) {
		s, _ := open(t)
		m := mailing("E1", "ABC12345", t0)
		if err := s.Submit(m, letters("E1", "ABC12345", 3, "r0", "r1"), []Job{{Kind: "check", Key: "E1", Due: t0}}); err != nil {
			t.Fatal(err)
		}
		// a second submit changes nothing, whatever it carries
		err := s.Submit(m, letters("E1", "ABC12345", 5), []Job{{Kind: "other", Key: "E1", Due: t0}})
		if !errors.Is(err, ErrExists) {
			t.Fatalf("second submit: %v, want ErrExists", err)
		}
		got, err := s.Mailing("E1")
		if err != nil || got.Letters != 3 {
			t.Fatalf("mailing: %+v, %v", got, err)
		}
		ls, _ := s.Letters("E1", 0, 0)
		if len(ls) != 3 {
			t.Fatalf("%d letters, want 3", len(ls))
		}
		jobs, _ := s.Jobs()
		if len(jobs) != 1 || jobs[0].Kind != "check" {
			t.Fatalf("jobs %+v", jobs)
		}
		c, _ := s.Counts("E1")
		if c[Received] != 3 || len(c) != 1 {
			t.Fatalf("counts %v", c)
		}
		if _, err := s.Mailing("nope"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("unknown mailing: %v", err)
		}
	})

	t.Run("letters paged, by reference, counts follow status", func(t *testing.T) {
		s, _ := open(t)
		s.Submit(mailing("E1", "ABC12345", t0), letters("E1", "ABC12345", 25, "dup", "x"), nil)
		s.Submit(mailing("E2", "ABC12345", t0.Add(time.Minute)), letters("E2", "ABC12345", 2, "dup"), nil)
		s.Submit(mailing("E3", "XYZ99999", t0.Add(2*time.Minute)), letters("E3", "XYZ99999", 1, "dup"), nil)
		page, _ := s.Letters("E1", 10, 10)
		if len(page) != 10 || page[0].Idx != 10 || page[9].Idx != 19 {
			t.Fatalf("page: %d letters from %d", len(page), page[0].Idx)
		}
		byRef, _ := s.LettersByRef("ABC12345", "dup")
		if len(byRef) != 2 || byRef[0].EPID != "E1" || byRef[1].EPID != "E2" {
			t.Fatalf("by ref: %+v", byRef)
		}
		err := s.Update([]string{"E1"}, func(tx Tx) error {
			l, err := tx.Letter("E1", 3)
			if err != nil {
				return err
			}
			l.HoldFor(t0, HoldAddress, "invalid")
			tx.PutLetter(l)
			l2, _ := tx.Letter("E1", 3) // reads see the transaction's writes
			if l2.Status != Held {
				return fmt.Errorf("read inside tx: %s", l2.Status)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		c, _ := s.Counts("E1")
		if c[Received] != 24 || c[Held] != 1 {
			t.Fatalf("counts %v", c)
		}
		ms, _ := s.Mailings("ABC12345", time.Time{}, 0)
		if len(ms) != 2 || ms[0].EPID != "E2" || ms[1].EPID != "E1" {
			t.Fatalf("mailings newest first: %v", ms)
		}
		ms, _ = s.Mailings("ABC12345", ms[0].Created, 10)
		if len(ms) != 1 || ms[0].EPID != "E1" {
			t.Fatalf("mailings before E2: %v", ms)
		}
	})

	t.Run("a failed update writes nothing", func(t *testing.T) {
		s, _ := open(t)
		s.Submit(mailing("E1", "A", t0), letters("E1", "A", 2), nil)
		boom := errors.New("boom")
		err := s.Update([]string{"E1"}, func(tx Tx) error {
			l, _ := tx.Letter("E1", 0)
			l.SetStatus(t0, Cancelled, "")
			tx.PutLetter(l)
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatal(err)
		}
		l, _ := s.Letters("E1", 0, 1)
		if l[0].Status != Received {
			t.Fatalf("status %s after a failed update", l[0].Status)
		}
		// writing a mailing the transaction was not opened for fails it
		err = s.Update([]string{"E1"}, func(tx Tx) error {
			tx.PutLetter(Letter{EPID: "E2", Idx: 0, Status: Received})
			return nil
		})
		if err == nil {
			t.Fatal("a write outside the transaction's mailings was accepted")
		}
	})

	t.Run("claims: due order, one holder, done, retry, lost lease", func(t *testing.T) {
		s, reopen := open(t)
		s.Submit(mailing("E1", "A", t0), nil, []Job{
			{Kind: "check", Key: "E1", Due: t0.Add(time.Minute)},
			{Kind: "batch", Key: "E1", Due: t0.Add(time.Hour)},
		})
		s.Submit(mailing("E2", "A", t0), nil, []Job{{Kind: "check", Key: "E2", Due: t0}})
		if _, ok, _ := s.Claim([]string{"check"}, t0.Add(-time.Second)); ok {
			t.Fatal("claimed a job before it was due")
		}
		j1, ok, _ := s.Claim([]string{"check", "batch"}, t0.Add(2*time.Minute))
		if !ok || j1.Key != "E2" {
			t.Fatalf("first claim %+v", j1)
		}
		j2, ok, _ := s.Claim([]string{"check", "batch"}, t0.Add(2*time.Minute))
		if !ok || j2.Key != "E1" || j2.Kind != "check" {
			t.Fatalf("second claim %+v", j2)
		}
		if _, ok, _ := s.Claim([]string{"check", "batch"}, t0.Add(2*time.Minute)); ok {
			t.Fatal("a claimed job was handed out twice")
		}
		if due, ok, _ := s.NextDue([]string{"check", "batch"}); !ok || !due.Equal(t0.Add(time.Hour)) {
			t.Fatalf("next due %v %v", due, ok)
		}
		// done
		if err := s.Update([]string{"E2"}, func(tx Tx) error { tx.DoneJob(j1); return nil }); err != nil {
			t.Fatal(err)
		}
		// ending it twice: the lease is gone
		if err := s.Update(nil, func(tx Tx) error { tx.DoneJob(j1); return nil }); !errors.Is(err, ErrLeaseLost) {
			t.Fatalf("second done: %v", err)
		}
		// retry: due again later, attempts counted
		if err := s.Update(nil, func(tx Tx) error { tx.Retry(j2, t0.Add(5*time.Minute), "disk full"); return nil }); err != nil {
			t.Fatal(err)
		}
		jobs, _ := s.Jobs()
		var retried *Job
		for i := range jobs {
			if jobs[i].Kind == "check" {
				retried = &jobs[i]
			}
		}
		if len(jobs) != 2 || retried == nil || retried.Attempts != 1 || retried.Error != "disk full" || !retried.Due.Equal(t0.Add(5*time.Minute)) {
			t.Fatalf("after retry: %+v", jobs)
		}
		// a restart forgets claims: the claimed job is handed out again
		j3, ok, _ := s.Claim([]string{"check"}, t0.Add(time.Hour))
		if !ok {
			t.Fatal("no claim")
		}
		s = reopen()
		j4, ok, _ := s.Claim([]string{"check"}, t0.Add(time.Hour))
		if !ok || j4.Key != j3.Key {
			t.Fatalf("after restart: %+v %v", j4, ok)
		}
		// the old claim cannot end it
		if err := s.Update(nil, func(tx Tx) error { tx.DoneJob(j3); return nil }); !errors.Is(err, ErrLeaseLost) {
			t.Fatalf("done under an old lease: %v", err)
		}
	})

	t.Run("one job per kind and key", func(t *testing.T) {
		s, _ := open(t)
		s.Submit(mailing("E1", "A", t0), nil, []Job{{Kind: "batch", Key: "E1", Due: t0.Add(time.Hour)}})
		s.Update([]string{"E1"}, func(tx Tx) error { tx.AddJob(Job{Kind: "batch", Key: "E1", Due: t0}); return nil })
		jobs, _ := s.Jobs()
		if len(jobs) != 1 || !jobs[0].Due.Equal(t0) {
			t.Fatalf("jobs %+v", jobs)
		}
		// a job queued while one of its kind and key is claimed runs after it
		j, _, _ := s.Claim([]string{"batch"}, t0)
		s.Update([]string{"E1"}, func(tx Tx) error { tx.AddJob(Job{Kind: "batch", Key: "E1", Due: t0.Add(time.Second)}); return nil })
		if err := s.Update(nil, func(tx Tx) error { tx.DoneJob(j); return nil }); err != nil {
			t.Fatal(err)
		}
		jobs, _ = s.Jobs()
		if len(jobs) != 1 || !jobs[0].Due.Equal(t0.Add(time.Second)) {
			t.Fatalf("the job queued during the claim: %+v", jobs)
		}
		// and a retry of the first gives way to it
		j, _, _ = s.Claim([]string{"batch"}, t0.Add(time.Second))
		s.Update([]string{"E1"}, func(tx Tx) error { tx.AddJob(Job{Kind: "batch", Key: "E1", Due: t0.Add(time.Minute)}); return nil })
		s.Update(nil, func(tx Tx) error { tx.Retry(j, t0.Add(time.Hour), "x"); return nil })
		jobs, _ = s.Jobs()
		if len(jobs) != 1 || !jobs[0].Due.Equal(t0.Add(time.Minute)) || jobs[0].Attempts != 0 {
			t.Fatalf("after the retry: %+v", jobs)
		}
		// queued while one of its kind and key, due at the same instant,
		// is claimed: it neither replaces the claimed one nor is removed
		// by its end
		j, _, _ = s.Claim([]string{"batch"}, t0.Add(time.Minute))
		if err := s.Update([]string{"E1"}, func(tx Tx) error { tx.AddJob(Job{Kind: "batch", Key: "E1", Due: j.Due}); return nil }); err != nil {
			t.Fatal(err)
		}
		if err := s.Update(nil, func(tx Tx) error { tx.DoneJob(j); return nil }); err != nil {
			t.Fatalf("done of the claimed job: %v", err)
		}
		jobs, _ = s.Jobs()
		if len(jobs) != 1 || jobs[0].Key != "E1" || jobs[0].Due.Before(j.Due) || jobs[0].Due.After(j.Due.Add(time.Millisecond)) {
			t.Fatalf("the job queued at the claimed one's time: %+v", jobs)
		}
		j2, ok, _ := s.Claim([]string{"batch"}, t0.Add(time.Hour))
		if !ok {
			t.Fatal("the job queued at the claimed one's time cannot be claimed")
		}
		if err := s.Update(nil, func(tx Tx) error { tx.DoneJob(j2); return nil }); err != nil {
			t.Fatal(err)
		}
		if jobs, _ = s.Jobs(); len(jobs) != 0 {
			t.Fatalf("after both: %+v", jobs)
		}
	})

	t.Run("batches by state", func(t *testing.T) {
		s, _ := open(t)
		s.Submit(mailing("E1", "A", t0), letters("E1", "A", 2), nil)
		err := s.Update([]string{"E1"}, func(tx Tx) error {
			tx.PutBatch(Batch{ID: "B2", EPID: "E1", Created: t0.Add(time.Second), State: BatchComposing})
			tx.PutBatch(Batch{ID: "B1", EPID: "E1", Created: t0, State: BatchComposing})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		s.Update([]string{"E1"}, func(tx Tx) error {
			b, _ := tx.Batch("B2")
			b.State = BatchReady
			tx.PutBatch(b)
			return nil
		})
		ids := func(bs []Batch) (out []string) {
			for _, b := range bs {
				out = append(out, b.ID)
			}
			return out
		}
		c, _ := s.Batches(BatchComposing)
		r, _ := s.Batches(BatchReady)
		all, _ := s.Batches("")
		if !slices.Equal(ids(c), []string{"B1"}) || !slices.Equal(ids(r), []string{"B2"}) || !slices.Equal(ids(all), []string{"B1", "B2"}) {
			t.Fatalf("composing %v ready %v all %v", ids(c), ids(r), ids(all))
		}
	})

	t.Run("concurrent updates of one mailing serialise", func(t *testing.T) {
		s, _ := open(t)
		s.Submit(mailing("E1", "A", t0), letters("E1", "A", 1), nil)
		var wg sync.WaitGroup
		for i := 0; i < 20; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.Update([]string{"E1"}, func(tx Tx) error {
					l, err := tx.Letter("E1", 0)
					if err != nil {
						return err
					}
					l.Add(t0, "tick", "")
					tx.PutLetter(l)
					return nil
				})
			}()
		}
		wg.Wait()
		l, _ := s.Letters("E1", 0, 1)
		if len(l[0].Events) != 20 {
			t.Fatalf("%d events, want 20: an update was lost", len(l[0].Events))
		}
	})

	testSearchMailings(t, open)
}

// TestRunner: jobs run once each, failures come back after the backoff, a
// handler that forgets to end its job does not lose it.
// TestPebbleClaimDuringAddJob: a job is queued (AddJob) with the kind,
// key and due time of a queued job, which is claimed before the
// transaction commits. The new job replaces the queued one, so it must
// outlive the claimed one's end, and run after it. (PostgreSQL's Claim
// skips the row the transaction holds locked.)
func TestPebbleClaimDuringAddJob(t *testing.T) {
	s, _ := openPebbleStore(t)
	t0 := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	if err := s.Submit(mailing("E1", "A", t0), nil, []Job{{Kind: "batch", Key: "E1", Due: t0}}); err != nil {
		t.Fatal(err)
	}
	var claimed Job
	err := s.Update([]string{"E1"}, func(tx Tx) error {
		tx.AddJob(Job{Kind: "batch", Key: "E1", Due: t0, Error: "the new one"})
		var ok bool
		claimed, ok, _ = s.Claim([]string{"batch"}, t0)
		if !ok {
			t.Fatal("the queued job was not claimed")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Update(nil, func(tx Tx) error { tx.DoneJob(claimed); return nil }); err != nil {
		t.Fatalf("done of the claimed job: %v", err)
	}
	jobs, _ := s.Jobs()
	if len(jobs) != 1 || jobs[0].Error != "the new one" || !jobs[0].Due.After(t0) {
		t.Fatalf("after the claimed job's end: %+v", jobs)
	}
	next, ok, _ := s.Claim([]string{"batch"}, t0.Add(time.Second))
	if !ok || next.Error != "the new one" {
		t.Fatalf("next claim %+v %v", next, ok)
	}
	if err := s.Update(nil, func(tx Tx) error { tx.DoneJob(next); return nil }); err != nil {
		t.Fatal(err)
	}

	// the same, and the transaction then queues another of the kind and
	// key: that one alone is left, once the claimed one ends
	t1 := t0.Add(time.Hour)
	if err := s.Update([]string{"E1"}, func(tx Tx) error { tx.AddJob(Job{Kind: "batch", Key: "E1", Due: t1}); return nil }); err != nil {
		t.Fatal(err)
	}
	err = s.Update([]string{"E1"}, func(tx Tx) error {
		tx.AddJob(Job{Kind: "batch", Key: "E1", Due: t1, Error: "replaced"})
		claimed, ok, _ = s.Claim([]string{"batch"}, t1)
		if !ok {
			t.Fatal("the queued job was not claimed")
		}
		tx.AddJob(Job{Kind: "batch", Key: "E1", Due: t1.Add(time.Minute), Error: "the last"})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Update(nil, func(tx Tx) error { tx.DoneJob(claimed); return nil }); err != nil {
		t.Fatalf("done of the claimed job: %v", err)
	}
	if jobs, _ = s.Jobs(); len(jobs) != 1 || jobs[0].Error != "the last" {
		t.Fatalf("after the claimed job's end: %+v", jobs)
	}
}

func TestRunner(t *testing.T) { eachStore(t, testRunner) }

func testRunner(t *testing.T, open storeOpener) {
	s, _ := open(t)
	now := t0
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	r := NewRunner(s, RunnerConfig{Workers: 1, Now: clock, Backoff: func(int) time.Duration { return time.Minute }}, nil)
	var ran []string
	fails := 1
	r.Handle("ok", func(ctx context.Context, j Job) error {
		ran = append(ran, "ok:"+j.Key)
		return s.Update([]string{j.Key}, func(tx Tx) error { tx.DoneJob(j); return nil })
	})
	r.Handle("flaky", func(ctx context.Context, j Job) error {
		ran = append(ran, "flaky:"+j.Key)
		if fails > 0 {
			fails--
			return errors.New("printer offline")
		}
		return s.Update([]string{j.Key}, func(tx Tx) error { tx.DoneJob(j); return nil })
	})
	r.Handle("forgetful", func(ctx context.Context, j Job) error {
		ran = append(ran, "forgetful:"+j.Key)
		return nil
	})
	s.Submit(mailing("E1", "A", t0), nil, []Job{{Kind: "ok", Key: "E1", Due: t0}, {Kind: "flaky", Key: "E1", Due: t0}, {Kind: "forgetful", Key: "E1", Due: t0}})
	n, err := r.RunDue(context.Background())
	if err == nil || n != 0 {
		// RunDue stops at the first failure
		t.Logf("first pass: %d, %v", n, err)
	}
	for i := 0; i < 5; i++ {
		r.RunDue(context.Background())
	}
	jobs, _ := s.Jobs()
	if len(jobs) != 2 {
		t.Fatalf("before the backoff: jobs %+v", jobs)
	}
	for _, j := range jobs {
		if j.Attempts != 1 || !j.Due.Equal(t0.Add(time.Minute)) {
			t.Fatalf("job not retried after the backoff: %+v", j)
		}
	}
	mu.Lock()
	now = t0.Add(time.Minute)
	mu.Unlock()
	for i := 0; i < 3; i++ {
		r.RunDue(context.Background())
	}
	jobs, _ = s.Jobs()
	if len(jobs) != 1 || jobs[0].Kind != "forgetful" || jobs[0].Attempts != 2 {
		t.Fatalf("after the backoff: %+v (ran %v)", jobs, ran)
	}
	count := func(k string) (n int) {
		for _, r := range ran {
			if r == k {
				n++
			}
		}
		return n
	}
	if count("ok:E1") != 1 || count("flaky:E1") != 2 {
		t.Fatalf("ran %v", ran)
	}
}

// TestRunnerWorkers: many jobs on several workers each run exactly once.
func TestRunnerWorkers(t *testing.T) { eachStore(t, testRunnerWorkers) }

func testRunnerWorkers(t *testing.T, open storeOpener) {
	s, _ := open(t)
	const n = 200
	var jobs []Job
	for i := 0; i < n; i++ {
		jobs = append(jobs, Job{Kind: "k", Key: fmt.Sprintf("E%03d", i), Due: t0})
	}
	s.Submit(mailing("E", "A", t0), nil, jobs)
	r := NewRunner(s, RunnerConfig{Workers: 4, Poll: time.Hour}, nil)
	var mu sync.Mutex
	seen := map[string]int{}
	done := make(chan struct{})
	r.Handle("k", func(ctx context.Context, j Job) error {
		mu.Lock()
		seen[j.Key]++
		all := len(seen) == n
		mu.Unlock()
		err := s.Update(nil, func(tx Tx) error { tx.DoneJob(j); return nil })
		if all {
			close(done)
		}
		return err
	})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-done; cancel() }()
	r.Run(ctx)
	for k, c := range seen {
		if c != 1 {
			t.Fatalf("job %s ran %d times", k, c)
		}
	}
	if len(seen) != n {
		t.Fatalf("%d of %d jobs ran", len(seen), n)
	}
	left, _ := s.Jobs()
	if len(left) != 0 {
		t.Fatalf("%d jobs left", len(left))
	}
}
