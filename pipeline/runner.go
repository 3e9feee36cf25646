package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/VictoriaMetrics/metrics"
)

// Handler does one job. It commits its results together with
// tx.DoneJob(job) (or tx.Retry) in one Store.Update, so that the results
// and the job's end are one durable fact; a crash before that commit
// leaves the job queued and it runs again, so a handler must find its
// work where a previous attempt left it (the records say how far it got).
// An error gives the job back to the queue, due again after a backoff.
type Handler func(ctx context.Context, job Job) error

// RunnerConfig tunes a Runner. The zero value means the documented
// defaults.
type RunnerConfig struct {
	// Workers is how many jobs run at once (default GOMAXPROCS).
	Workers int
	// Poll is how often an idle worker looks at the queue without being
	// woken (default 5 s); Runner.Wake and due times wake it sooner.
	Poll time.Duration
	// Backoff is the delay before a failed job's attempt n+1 (default 1 s
	// doubling to 10 minutes).
	Backoff func(attempt int) time.Duration
	Now     func() time.Time
	// Metrics receives lodge_mailroom_jobs_total{kind,result}; nil for
	// none.
	Metrics *metrics.Set
}

func (c RunnerConfig) withDefaults() RunnerConfig {
	if c.Workers <= 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	if c.Poll <= 0 {
		c.Poll = 5 * time.Second
	}
	if c.Backoff == nil {
		c.Backoff = func(n int) time.Duration {
			d := time.Second << min(n, 10)
			return min(d, 10*time.Minute)
		}
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// Runner hands queued jobs to their handlers on a pool of workers.
type Runner struct {
	store    Store
	cfg      RunnerConfig
	log      *slog.Logger
	handlers map[string]Handler
	kinds    []string

	mu   sync.Mutex
	wake chan struct{} // closed and replaced by Wake
}

// NewRunner returns a runner over store.
func NewRunner(store Store, cfg RunnerConfig, log *slog.Logger) *Runner {
	if log == nil {
		log = slog.Default()
	}
	r := &Runner{store: store, cfg: cfg.withDefaults(), log: log, handlers: map[string]Handler{}, wake: make(chan struct{})}
	if n, ok := store.(jobsNotifier); ok {
		// jobs queued by other nodes wake this runner too, not only its
		// poll
		n.OnJobs(r.Wake)
	}
	return r
}

// jobsNotifier is a store shared by several nodes that tells when any of
// them queued jobs (PostgresStore).
type jobsNotifier interface{ OnJobs(wake func()) }

// Handle registers the handler of a job kind. It is called before Run.
func (r *Runner) Handle(kind string, h Handler) {
	r.handlers[kind] = h
	r.kinds = append(r.kinds, kind)
	sort.Strings(r.kinds)
}

// Wake tells idle workers to look at the queue now (a job was added).
func (r *Runner) Wake() {
	r.mu.Lock()
	close(r.wake)
	r.wake = make(chan struct{})
	r.mu.Unlock()
}

func (r *Runner) woken() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.wake
}

// Run works the queue until ctx is done and the jobs under way have
// ended.
func (r *Runner) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for range r.cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.work(ctx)
		}()
	}
	wg.Wait()
}

// RunDue does every job due now, one at a time, and returns how many it
// did: for tools and tests that drive the queue by hand.
func (r *Runner) RunDue(ctx context.Context) (int, error) {
	n := 0
	for {
		j, ok, err := r.store.Claim(r.kinds, r.cfg.Now())
		if err != nil || !ok {
			return n, err
		}
		if err := r.do(ctx, j); err != nil {
			return n, err
		}
		n++
	}
}

func (r *Runner) work(ctx context.Context) {
	for ctx.Err() == nil {
		wake := r.woken()
		j, ok, err := r.store.Claim(r.kinds, r.cfg.Now())
		if err != nil {
			r.log.Error("mailroom queue", "err", err)
		}
		if ok {
			if err := r.do(ctx, j); err != nil {
				r.log.Warn("mailroom job failed", "kind", j.Kind, "key", j.Key, "attempt", j.Attempts+1, "err", err)
			}
			continue
		}
		wait := r.cfg.Poll
		if due, ok, err := r.store.NextDue(r.kinds); err == nil && ok {
			wait = min(wait, max(due.Sub(r.cfg.Now()), time.Millisecond))
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
		case <-wake:
		case <-t.C:
		}
		t.Stop()
	}
}

// do runs one claimed job; a failure is queued again after the backoff.
func (r *Runner) do(ctx context.Context, j Job) error {
	h := r.handlers[j.Kind]
	err := func() (err error) {
		defer func() {
			if p := recover(); p != nil {
				buf := make([]byte, 8<<10)
				buf = buf[:runtime.Stack(buf, false)]
				err = fmt.Errorf("panic: %v\n%s", p, buf)
			}
		}()
		return h(ctx, j)
	}()
	due := r.cfg.Now().Add(r.cfg.Backoff(j.Attempts))
	if err == nil {
		// The handler ended its job (DoneJob or Retry), so this retry
		// finds its lease gone and commits nothing. A handler that did
		// not (a bug) has its job queued again after the backoff rather
		// than lost or spun on.
		const bug = "the handler returned without ending the job"
		switch uerr := r.store.Update(nil, func(tx Tx) error { tx.Retry(j, due, bug); return nil }); {
		case errors.Is(uerr, ErrLeaseLost):
			r.count(j.Kind, "done")
			return nil
		case uerr != nil:
			return uerr
		}
		r.count(j.Kind, "failed")
		return fmt.Errorf("%s: %s", j.Kind, bug)
	}
	r.count(j.Kind, "failed")
	if errors.Is(err, ErrLeaseLost) {
		return err
	}
	if uerr := r.store.Update(nil, func(tx Tx) error { tx.Retry(j, due, err.Error()); return nil }); uerr != nil {
		r.store.Unclaim(j)
		return errors.Join(err, uerr)
	}
	return err
}

func (r *Runner) count(kind, result string) {
	if r.cfg.Metrics != nil {
		r.cfg.Metrics.GetOrCreateCounter(fmt.Sprintf(`lodge_mailroom_jobs_total{kind=%q,result=%q}`, kind, result)).Inc()
	}
}
