package pipeline

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/lodge-mail/lodge/internal/testenv"
	"github.com/lodge-mail/lodge/internal/testpg"
)

// What only sharing adds: two PostgresStore values on one database act as
// two lodge nodes. TestStore and the mailroom tests cover what every
// store does.

// claimUntil claims on s until a job comes (a lease of another node must
// expire first), for at most a minute.
func claimUntil(t *testing.T, s Store, kinds []string) Job {
	t.Helper()
	var j Job
	testenv.WaitFor(t, func() bool {
		got, ok, err := s.Claim(kinds, t0)
		if err != nil {
			t.Fatal(err)
		}
		j = got
		return ok
	}, func() string { return "a job to claim (another node's lease expiring)" })
	return j
}

func doneJob(s Store, j Job) error {
	return s.Update(nil, func(tx Tx) error { tx.DoneJob(j); return nil })
}

// Updates of one mailing on two nodes serialise: none is lost. Updates
// of two mailings named in opposite orders neither deadlock nor lose.
func TestPostgresNodesUpdatesSerialise(t *testing.T) {
	url := testpg.NewDatabase(t)
	a := openPostgresNode(t, url, PostgresOptions{Node: "a"})
	b := openPostgresNode(t, url, PostgresOptions{Node: "b"})
	for _, e := range []string{"E1", "E2"} {
		if err := a.Submit(mailing(e, "A", t0), letters(e, "A", 1), nil); err != nil {
			t.Fatal(err)
		}
	}
	const per = 10
	tick := func(s Store, epids []string) error {
		return s.Update(epids, func(tx Tx) error {
			for _, e := range epids {
				l, err := tx.Letter(e, 0)
				if err != nil {
					return err
				}
				l.Add(t0, "tick", "")
				tx.PutLetter(l)
			}
			return nil
		})
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4*per)
	for i := 0; i < per; i++ {
		for _, w := range []struct {
			s     Store
			epids []string
		}{{a, []string{"E1"}}, {b, []string{"E1"}}, {a, []string{"E1", "E2"}}, {b, []string{"E2", "E1"}}} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- tick(w.s, w.epids)
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for e, want := range map[string]int{"E1": 4 * per, "E2": 2 * per} {
		ls, err := b.Letters(e, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(ls[0].Events); got != want {
			t.Fatalf("%s: %d events, want %d: an update was lost", e, got, want)
		}
	}
}

// One mailing submitted by two nodes at once is recorded once.
func TestPostgresNodesSubmitOnce(t *testing.T) {
	url := testpg.NewDatabase(t)
	nodes := []Store{openPostgresNode(t, url, PostgresOptions{Node: "a"}), openPostgresNode(t, url, PostgresOptions{Node: "b"})}
	for round := 0; round < 10; round++ {
		epid := fmt.Sprintf("E%d", round)
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = nodes[i%2].Submit(mailing(epid, "A", t0), letters(epid, "A", i+1), []Job{{Kind: "check", Key: epid, Due: t0}})
			}()
		}
		wg.Wait()
		ok := 0
		for _, err := range errs {
			switch {
			case err == nil:
				ok++
			case !errors.Is(err, ErrExists):
				t.Fatal(err)
			}
		}
		m, err := nodes[0].Mailing(epid)
		ls, _ := nodes[1].Letters(epid, 0, 0)
		c, _ := nodes[0].Counts(epid)
		if ok != 1 || err != nil || len(ls) != m.Letters || c[Received] != m.Letters {
			t.Fatalf("%s: %d submits took, mailing %+v %v, %d letters, counts %v", epid, ok, m, err, len(ls), c)
		}
	}
}

// TestPostgresJobsWakeOtherNodes: jobs queued on node A wake the runners
// of node B at A's commit (LISTEN/NOTIFY), not at B's next poll; an
// Update that queues none does not.
func TestPostgresJobsWakeOtherNodes(t *testing.T) {
	url := testpg.NewDatabase(t)
	a := openPostgresNode(t, url, PostgresOptions{Node: "a"})
	b := openPostgresNode(t, url, PostgresOptions{Node: "b"})
	woken := make(chan struct{}, 16)
	b.OnJobs(func() { woken <- struct{}{} })
	// the guard ends a test whose wake never comes; it decides nothing
	wait := func(what string) {
		t.Helper()
		select {
		case <-woken:
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: node b was not woken", what)
		}
	}
	testenv.WaitFor(t, b.listening.Load, func() string { return "node b to listen" })
	// the wake made when it started listening, if OnJobs came before it:
	// made before listening turned true, so none comes after this
	for len(woken) > 0 {
		<-woken
	}
	if err := a.Submit(mailing("E1", "A", t0), nil, []Job{{Kind: "check", Key: "E1", Due: t0}}); err != nil {
		t.Fatal(err)
	}
	wait("a submit with a job")
	j, ok, err := a.Claim([]string{"check"}, t0)
	if !ok || err != nil {
		t.Fatalf("claim %v %v", ok, err)
	}
	// an update that queues nothing notifies nothing: its ending of the
	// job, then one that queues a job, whose wake must be the next
	if err := a.Update([]string{"E1"}, func(tx Tx) error { tx.DoneJob(j); return nil }); err != nil {
		t.Fatal(err)
	}
	if err := a.Update([]string{"E1"}, func(tx Tx) error { tx.AddJob(Job{Kind: "batch", Key: "E1", Due: t0}); return nil }); err != nil {
		t.Fatal(err)
	}
	wait("an update queueing a job")
	if n := len(woken); n != 0 {
		t.Fatalf("%d wakes more than the updates that queued jobs", n)
	}
}

// Claims on two nodes, several workers each, never hand out one job
// twice, and every job is done.
func TestPostgresNodesClaimOnce(t *testing.T) {
	url := testpg.NewDatabase(t)
	a := openPostgresNode(t, url, PostgresOptions{Node: "a"})
	b := openPostgresNode(t, url, PostgresOptions{Node: "b"})
	const n = 300
	var jobs []Job
	for i := 0; i < n; i++ {
		jobs = append(jobs, Job{Kind: []string{"k1", "k2"}[i%2], Key: fmt.Sprintf("E%03d", i), Due: t0})
	}
	if err := a.Submit(mailing("E", "A", t0), nil, jobs); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	claimed := map[string]int{}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := 0; w < 8; w++ {
		s := []Store{a, b}[w%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				j, ok, err := s.Claim([]string{"k1", "k2"}, t0)
				if err != nil || !ok {
					errs <- err
					return
				}
				mu.Lock()
				claimed[j.Kind+"/"+j.Key]++
				mu.Unlock()
				if err := doneJob(s, j); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for k, c := range claimed {
		if c != 1 {
			t.Fatalf("job %s handed out %d times", k, c)
		}
	}
	left, _ := a.Jobs()
	if len(claimed) != n || len(left) != 0 {
		t.Fatalf("%d of %d jobs claimed, %d left", len(claimed), n, len(left))
	}
}

// A node that stalls (its lease not renewed) loses its job when the
// lease expires: the other node's claim takes it over, and the first
// node can no longer end it, done or retried.
func TestPostgresLeaseExpiryTakenOver(t *testing.T) {
	url := testpg.NewDatabase(t)
	set := metrics.NewSet()
	a := openPostgresNode(t, url, PostgresOptions{Node: "a", Lease: 100 * time.Millisecond, Renew: -1})
	b := openPostgresNode(t, url, PostgresOptions{Node: "b", Lease: time.Minute, Metrics: set})
	if err := a.Submit(mailing("E1", "A", t0), letters("E1", "A", 1), []Job{{Kind: "check", Key: "E1", Due: t0}}); err != nil {
		t.Fatal(err)
	}
	ja, ok, err := a.Claim([]string{"check"}, t0)
	if !ok || err != nil {
		t.Fatalf("claim on a: %v %v", ok, err)
	}
	jb := claimUntil(t, b, []string{"check"})
	if jb.Kind != ja.Kind || jb.Key != ja.Key {
		t.Fatalf("b took %+v, a held %+v", jb, ja)
	}
	// a's results and the job's end are one commit: refused whole
	err = a.Update([]string{"E1"}, func(tx Tx) error {
		l, _ := tx.Letter("E1", 0)
		l.Add(t0, "by a", "")
		tx.PutLetter(l)
		tx.DoneJob(ja)
		return nil
	})
	if !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("a's done after the takeover: %v, want ErrLeaseLost", err)
	}
	if err := a.Update(nil, func(tx Tx) error { tx.Retry(ja, t0, "x"); return nil }); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("a's retry after the takeover: %v, want ErrLeaseLost", err)
	}
	if a.Unclaim(ja) {
		t.Fatal("a unclaimed a job b holds")
	}
	if err := doneJob(b, jb); err != nil {
		t.Fatal(err)
	}
	if ls, _ := b.Letters("E1", 0, 0); len(ls[0].Events) != 0 {
		t.Fatalf("a's refused commit wrote: %+v", ls[0].Events)
	}
	if jobs, _ := b.Jobs(); len(jobs) != 0 {
		t.Fatalf("jobs left: %+v", jobs)
	}
	if n := set.GetOrCreateCounter(`lodge_queue_lease_expiries_total`).Get(); n != 1 {
		t.Fatalf("lodge_queue_lease_expiries_total %d, want 1", n)
	}
}

// A lease that expired while nobody took the job over still ends it.
func TestPostgresExpiredLeaseNotTakenEnds(t *testing.T) {
	url := testpg.NewDatabase(t)
	a := openPostgresNode(t, url, PostgresOptions{Node: "a", Lease: 50 * time.Millisecond, Renew: -1})
	if err := a.Submit(mailing("E1", "A", t0), nil, []Job{{Kind: "k", Key: "E1", Due: t0}}); err != nil {
		t.Fatal(err)
	}
	j, ok, _ := a.Claim([]string{"k"}, t0)
	if !ok {
		t.Fatal("no claim")
	}
	testenv.WaitFor(t, func() bool { // on the database's clock
		var expired bool
		if err := a.db.Pool.QueryRow(context.Background(), `SELECT lease_expires < now() FROM pipeline_jobs WHERE lease = $1`, int64(j.lease)).Scan(&expired); err != nil {
			t.Fatal(err)
		}
		return expired
	}, func() string { return "the lease to expire" })
	if err := doneJob(a, j); err != nil {
		t.Fatalf("done under an expired lease nobody took: %v", err)
	}
	if jobs, _ := a.Jobs(); len(jobs) != 0 {
		t.Fatalf("jobs left: %+v", jobs)
	}
}

// A node killed mid-job (its store closed, the job not ended) loses it
// at the lease's expiry, and the other node's runner does it. The killed
// node's handler, let go afterwards, cannot complete it a second time.
func TestPostgresKilledNodeJobResumed(t *testing.T) {
	url := testpg.NewDatabase(t)
	a := openPostgresNode(t, url, PostgresOptions{Node: "a", Lease: 150 * time.Millisecond})
	b := openPostgresNode(t, url, PostgresOptions{Node: "b", Lease: 150 * time.Millisecond})
	if err := a.Submit(mailing("E1", "A", t0), nil, []Job{{Kind: "k", Key: "E1", Due: t0}}); err != nil {
		t.Fatal(err)
	}
	var completed atomic.Int32
	handler := func(s Store, started chan<- Job, release <-chan struct{}) Handler {
		return func(ctx context.Context, j Job) error {
			if started != nil {
				started <- j
				<-release
			}
			err := s.Update([]string{j.Key}, func(tx Tx) error {
				m, err := tx.Mailing(j.Key)
				if err != nil {
					return err
				}
				m.Batches++ // the job's result
				tx.PutMailing(m)
				tx.DoneJob(j)
				return nil
			})
			if err == nil {
				completed.Add(1)
			}
			return err
		}
	}
	started, release := make(chan Job), make(chan struct{})
	ra := NewRunner(a, RunnerConfig{Workers: 1, Now: func() time.Time { return t0 }}, nil)
	ra.Handle("k", handler(a, started, release))
	ctxA, stopA := context.WithCancel(context.Background())
	doneA := make(chan struct{})
	go func() { ra.Run(ctxA); close(doneA) }()
	<-started
	a.Close() // killed: no renewal, no end
	stopA()

	rb := NewRunner(b, RunnerConfig{Workers: 1, Poll: 10 * time.Millisecond, Now: func() time.Time { return t0 }}, nil)
	rb.Handle("k", handler(b, nil, nil))
	ctxB, stopB := context.WithCancel(context.Background())
	doneB := make(chan struct{})
	go func() { rb.Run(ctxB); close(doneB) }()
	testenv.WaitFor(t, func() bool { return completed.Load() > 0 },
		func() string { return "b's runner to do the job once a's lease expired" })
	stopB()
	<-doneB
	close(release) // a's handler goes on, on a store that is gone
	<-doneA
	m, err := b.Mailing("E1")
	if err != nil {
		t.Fatal(err)
	}
	jobs, _ := b.Jobs()
	if completed.Load() != 1 || m.Batches != 1 || len(jobs) != 0 {
		t.Fatalf("completed %d times, result applied %d times, jobs left %+v", completed.Load(), m.Batches, jobs)
	}
}

// A store renews the leases it holds: the expiry moves on.
func TestPostgresLeaseRenewed(t *testing.T) {
	url := testpg.NewDatabase(t)
	a := openPostgresNode(t, url, PostgresOptions{Node: "a", Lease: time.Hour, Renew: -1})
	if err := a.Submit(mailing("E1", "A", t0), nil, []Job{{Kind: "k", Key: "E1", Due: t0}}); err != nil {
		t.Fatal(err)
	}
	j, ok, _ := a.Claim([]string{"k"}, t0)
	if !ok {
		t.Fatal("no claim")
	}
	expiry := func() time.Time {
		var e time.Time
		if err := a.db.Pool.QueryRow(context.Background(), `SELECT lease_expires FROM pipeline_jobs WHERE lease = $1`, int64(j.lease)).Scan(&e); err != nil {
			t.Fatal(err)
		}
		return e
	}
	before := expiry()
	// the database's clock moves on between the claim and the renewal
	a.db.Pool.Exec(context.Background(), `SELECT pg_sleep(0.01)`)
	if err := a.renew(); err != nil {
		t.Fatal(err)
	}
	if after := expiry(); !after.After(before) {
		t.Fatalf("lease expiry %v after renewal, was %v", after, before)
	}
	if err := doneJob(a, j); err != nil {
		t.Fatal(err)
	}
	if len(a.held) != 0 {
		t.Fatalf("leases still held after the job ended: %v", a.held)
	}
}

// A node restarted under its name frees its previous run's leases; a
// node under another name does not.
func TestPostgresRestartFreesOwnLeases(t *testing.T) {
	url := testpg.NewDatabase(t)
	a := openPostgresNode(t, url, PostgresOptions{Node: "a"})
	if err := a.Submit(mailing("E1", "A", t0), nil, []Job{{Kind: "k", Key: "E1", Due: t0}}); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := a.Claim([]string{"k"}, t0); !ok {
		t.Fatal("no claim")
	}
	a.Close()
	b := openPostgresNode(t, url, PostgresOptions{Node: "b"})
	if _, ok, _ := b.Claim([]string{"k"}, t0); ok {
		t.Fatal("another node took a job whose lease holds")
	}
	a2 := openPostgresNode(t, url, PostgresOptions{Node: "a"})
	if _, ok, _ := a2.Claim([]string{"k"}, t0); !ok {
		t.Fatal("a restarted did not get back its previous run's job")
	}
}

// The queue depth gauge reads the database.
func TestPostgresQueueDepthGauge(t *testing.T) {
	url := testpg.NewDatabase(t)
	set := metrics.NewSet()
	a := openPostgresNode(t, url, PostgresOptions{Node: "a"})
	if err := a.Submit(mailing("E1", "A", t0), nil, []Job{{Kind: "check", Key: "E1", Due: t0}, {Kind: "batch", Key: "E1", Due: t0}, {Kind: "check", Key: "E2", Due: t0}}); err != nil {
		t.Fatal(err)
	}
	b := openPostgresNode(t, url, PostgresOptions{Node: "b", Metrics: set})
	gauge := func(kind string) float64 {
		return set.GetOrCreateGauge(fmt.Sprintf(`lodge_queue_jobs{kind=%q}`, kind), nil).Get()
	}
	if gauge("check") != 2 || gauge("batch") != 1 {
		t.Fatalf("check %v batch %v, want 2 and 1", gauge("check"), gauge("batch"))
	}
	j, _, _ := a.Claim([]string{"batch"}, t0)
	doneJob(a, j)
	if err := b.readDepth(); err != nil {
		t.Fatal(err)
	}
	if gauge("check") != 2 || gauge("batch") != 0 {
		t.Fatalf("after the batch job: check %v batch %v, want 2 and 0", gauge("check"), gauge("batch"))
	}
}

// TestPostgresRoundTrips counts the statements and batches sent to the
// database per operation (pgdb.DB.RoundTrips):
//
//	go test ./pipeline -run PostgresRoundTrips -v
func TestPostgresRoundTrips(t *testing.T) {
	url := testpg.NewDatabase(t)
	s := openPostgresNode(t, url, PostgresOptions{Node: "a"})
	// its LISTEN, once a connection, is no operation's
	testenv.WaitFor(t, s.listening.Load, func() string { return "the store to listen" })
	trips := func(what string, want int64, fn func() error) {
		t.Helper()
		before := s.db.RoundTrips()
		if err := fn(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		got := s.db.RoundTrips() - before
		t.Logf("%s: %d round trips", what, got)
		if got != want {
			t.Fatalf("%s: %d round trips, want %d", what, got, want)
		}
	}
	trips("Submit (100 letters, 1 job)", 1, func() error {
		return s.Submit(mailing("E1", "A", t0), letters("E1", "A", 100), []Job{{Kind: "check", Key: "E1", Due: t0}})
	})
	trips("Update of one letter (read, put)", 3, func() error {
		return s.Update([]string{"E1"}, func(tx Tx) error {
			l, err := tx.Letter("E1", 7)
			if err != nil {
				return err
			}
			l.HoldFor(t0, HoldAddress, "invalid")
			tx.PutLetter(l)
			return nil
		})
	})
	trips("Update of one letter put unread", 3, func() error {
		l := letters("E1", "A", 9)[8]
		l.SetStatus(t0, Cancelled, "")
		return s.Update([]string{"E1"}, func(tx Tx) error { tx.PutLetter(l); return nil })
	})
	var j Job
	trips("Claim", 1, func() error {
		var ok bool
		var err error
		if j, ok, err = s.Claim([]string{"check"}, t0); !ok && err == nil {
			err = errors.New("nothing claimed")
		}
		return err
	})
	trips("DoneJob (Update without mailings)", 1, func() error { return doneJob(s, j) })
	trips("Update that only reads", 2, func() error {
		return s.Update([]string{"E1"}, func(tx Tx) error { _, err := tx.Mailing("E1"); return err })
	})
	if c, _ := s.Counts("E1"); c[Received] != 98 || c[Held] != 1 || c[Cancelled] != 1 {
		t.Fatalf("counts %v", c)
	}
}

// TestPostgresRoundTripsPerLetter counts the round trips of producing a
// mailing's postal letters (submit, check, batch, compose into the hot
// folder), per letter, for mailings of several sizes:
//
//	go test ./pipeline -run PostgresRoundTripsPerLetter -v
func TestPostgresRoundTripsPerLetter(t *testing.T) {
	for _, n := range []int{1, 100, 2000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			var s *PostgresStore
			mr, p, c, _ := newMailroom(t, func(t *testing.T) (Store, func() Store) {
				st, reopen := openPostgresStore(t)
				s = st.(*PostgresStore)
				return st, reopen
			})
			ls := make([]Letter, n)
			for i := range ls {
				ls[i] = postal(i, fmt.Sprintf("r%d", i), "Jo", fmt.Sprintf("%d Main St", i), fmt.Sprintf("SYDNEY NSW %d", 2000+i%50))
			}
			before := s.db.RoundTrips()
			if err := mr.Submit(Mailing{EPID: "E1", Account: "ABC12345"}, ls); err != nil {
				t.Fatal(err)
			}
			run(t, mr)
			c.Add(time.Hour)
			run(t, mr)
			trips := s.db.RoundTrips() - before
			bs, _ := s.Batches(BatchReady)
			produced := 0
			for _, b := range bs {
				produced += len(b.Letters)
			}
			if produced != n || len(p.composed) != len(bs) {
				t.Fatalf("%d letters in ready batches, want %d; composed %v", produced, n, p.composed)
			}
			t.Logf("%d letters in %d batches: %d round trips, %.2f a letter", n, len(bs), trips, float64(trips)/float64(n))
			// the stages read a mailing's letters a page or a read-ahead
			// at a time, not one by one (which took 2 a letter)
			if n >= 2000 && trips > int64(n/10) {
				t.Fatalf("%d round trips for %d letters", trips, n)
			}
		})
	}
}

// The database restarted (an immediate shutdown: connections cut, the
// last asynchronous commits possibly lost) under a node: the node goes on
// without being reopened, and a job claimed before the restart is done
// once, under its lease if the claim survived, else claimed again.
func TestPostgresDatabaseRestart(t *testing.T) {
	url := testpg.NewDatabase(t)
	s := openPostgresNode(t, url, PostgresOptions{Node: "a"})
	if err := s.Submit(mailing("E1", "A", t0), letters("E1", "A", 2), []Job{{Kind: "k", Key: "E1", Due: t0}}); err != nil {
		t.Fatal(err)
	}
	j, ok, err := s.Claim([]string{"k"}, t0)
	if !ok || err != nil {
		t.Fatalf("claim: %v %v", ok, err)
	}
	if err := testpg.Shared(t).Restart(); err != nil {
		t.Fatal(err)
	}
	// each dead connection of the pool fails one call, at most
	retry := func(what string, fn func() error) error {
		t.Helper()
		var err error
		for i := 0; i < 20; i++ {
			if err = fn(); err == nil || errors.Is(err, ErrLeaseLost) {
				return err
			}
		}
		t.Fatalf("%s after the restart: %v", what, err)
		return err
	}
	err = retry("done", func() error {
		return s.Update([]string{"E1"}, func(tx Tx) error {
			m, err := tx.Mailing("E1")
			if err != nil {
				return err
			}
			m.Batches++
			tx.PutMailing(m)
			tx.DoneJob(j)
			return nil
		})
	})
	if errors.Is(err, ErrLeaseLost) {
		t.Log("the claim was lost with the restart: claimed again")
		j2, ok, err := s.Claim([]string{"k"}, t0)
		if !ok || err != nil {
			t.Fatalf("claim again: %v %v", ok, err)
		}
		if err := doneJob(s, j2); err != nil {
			t.Fatal(err)
		}
	}
	retry("submit", func() error { return s.Submit(mailing("E2", "A", t0), letters("E2", "A", 1), nil) })
	jobs, _ := s.Jobs()
	m, _ := s.Mailing("E1")
	if len(jobs) != 0 || m.Batches > 1 {
		t.Fatalf("jobs left %+v, result applied %d times", jobs, m.Batches)
	}
	if c, _ := s.Counts("E2"); c[Received] != 1 {
		t.Fatalf("E2 counts %v", c)
	}
}
