package indexsync

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/lodge-mail/lodge/blob"
	"github.com/lodge-mail/lodge/engine"
	"github.com/lodge-mail/lodge/index"
	"github.com/lodge-mail/lodge/internal/safetar"
)

// Limits bound what extracting a published index may write (see
// safetar.Limits; the zero value means its defaults).
type Limits = safetar.Limits

// Config tunes a Follower. The zero value polls every 30 s with the
// default Limits, logs to slog.Default and exposes no metrics.
type Config struct {
	Interval time.Duration // between polls: 0 means 30 s
	Limits   Limits
	Log      *slog.Logger
	// Metrics, when set, gets the metrics at once (else RegisterMetrics
	// can add them to a set made later, such as the server's)
	Metrics *metrics.Set
	// Polled, when set, is called after each poll with what it did;
	// tests wait on it.
	Polled func(reloaded bool, err error)
}

// Follower keeps a live engine on the newest index: the one published in
// the store (when there is a store) or made current in its data
// directory by an import on this node, whichever is newer. It owns the
// engine and the indexes it judges against.
type Follower struct {
	store   blob.Store
	dataDir string
	eng     *engine.Engine
	cfg     Config
	log     *slog.Logger

	mu      sync.Mutex // one poll at a time
	stamp   string     // of the index in use
	refused string     // a manifest (stamp and SHA-1) refused: not fetched again
	// refusedLocal is a current index of the data directory that did
	// not open: not tried again
	refusedLocal string
	closing      sync.WaitGroup

	reloads, errs atomic.Uint64
}

// NewFollower returns a Follower judging against ix, the index of dataDir
// opened at start (index.Open or index.Ensure), which it now owns: it is
// closed once replaced and unused, or by Close. store may be nil: then
// only dataDir is followed. The engine (Engine) is made with ecfg.
func NewFollower(store blob.Store, dataDir string, ix *index.Index, ecfg engine.Config, cfg Config) (*Follower, error) {
	if cfg.Interval <= 0 {
		cfg.Interval = 30 * time.Second
	}
	f := &Follower{store: store, dataDir: dataDir, cfg: cfg, log: cfg.Log, stamp: ix.Stamp()}
	if f.log == nil {
		f.log = slog.Default()
	}
	eng, err := engine.NewLive(ix.Ref, ecfg, f.release(ix))
	if err != nil {
		return nil, err
	}
	f.eng = eng
	if cfg.Metrics != nil {
		f.RegisterMetrics(cfg.Metrics)
	}
	return f, nil
}

// RegisterMetrics adds lodge_index_generation, lodge_index_reloads_total
// and lodge_index_reload_errors_total to set (once per set).
func (f *Follower) RegisterMetrics(set *metrics.Set) {
	set.GetOrCreateGauge(`lodge_index_generation`, func() float64 { return float64(f.eng.Generation()) })
	// counters read from the follower, as the server's verdict cache
	// figures are: they count from its start, whenever the set was made
	set.GetOrCreateGauge(`lodge_index_reloads_total`, func() float64 { return float64(f.reloads.Load()) })
	set.GetOrCreateGauge(`lodge_index_reload_errors_total`, func() float64 { return float64(f.errs.Load()) })
}

// Engine returns the live engine, to judge addresses with.
func (f *Follower) Engine() *engine.Engine { return f.eng }

// Stamp returns the stamp of the index in use.
func (f *Follower) Stamp() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stamp
}

// Close closes the engine and waits until the indexes it let go are
// closed. Call it once checks have stopped and Run has returned.
func (f *Follower) Close() {
	f.eng.Close()
	f.closing.Wait()
}

// release returns the function the engine calls when ix is no longer
// used: it closes ix and removes its directory unless current. That runs
// in a goroutine of its own, not in the check that happened to end last
// (nor in the poll whose swap released it at once).
func (f *Follower) release(ix *index.Index) func() {
	f.closing.Add(1)
	return func() {
		go func() {
			defer f.closing.Done()
			if err := ix.Close(); err != nil {
				f.log.Warn("closing a replaced index", "dir", ix.Dir, "err", err)
			}
			// after the poll that replaced it: its Install holds the
			// data directory
			f.mu.Lock()
			defer f.mu.Unlock()
			index.RemoveUnused(f.dataDir, ix.Dir)
		}()
	}
}

// Run polls at once and then every Config.Interval until ctx ends.
func (f *Follower) Run(ctx context.Context) {
	t := time.NewTicker(f.cfg.Interval)
	defer t.Stop()
	for {
		f.Poll(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Poll takes into use an index newer than the one in use, if there is
// one: first this node's current index, then the published one. It
// reports whether it did. Errors are logged and counted too.
func (f *Follower) Poll(ctx context.Context) (reloaded bool, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	defer func() {
		if err != nil {
			f.errs.Add(1)
			f.log.Error("index reload failed; the index in use stays", "stamp", f.stamp, "err", err)
		}
		if f.cfg.Polled != nil {
			f.cfg.Polled(reloaded, err)
		}
	}()
	if reloaded, err = f.pollLocal(); reloaded || f.store == nil {
		return reloaded, err
	}
	// a local index that failed to open does not stop the store's
	reloaded, serr := f.pollStore(ctx)
	return reloaded, errors.Join(err, serr)
}

// pollLocal takes into use the data directory's current index when it is
// newer (an import ran on this node).
func (f *Follower) pollLocal() (bool, error) {
	cur, err := index.CurrentStamp(f.dataDir)
	if errors.Is(err, index.ErrNoIndex) || (err == nil && (cur <= f.stamp || cur == f.refusedLocal)) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	start := time.Now()
	ix, err := index.Open(f.dataDir)
	if err != nil {
		f.refusedLocal = cur // until current changes again
		return false, err
	}
	if err := f.swap(ix); err != nil {
		return false, err
	}
	f.log.Info("index reloaded from this node's data directory", "stamp", f.stamp, "dir", ix.Dir,
		"generation", f.eng.Generation(), "took", time.Since(start).Round(time.Millisecond))
	return true, nil
}

// swap makes ix the engine's reference; on failure ix is closed.
func (f *Follower) swap(ix *index.Index) error {
	if _, err := f.eng.Swap(ix.Ref, f.release(ix)); err != nil {
		f.closing.Done() // the release made for it will never run
		ix.Close()
		return err
	}
	f.stamp = ix.Stamp()
	f.reloads.Add(1)
	return nil
}

// pollStore takes into use the published index when it is newer.
func (f *Follower) pollStore(ctx context.Context) (bool, error) {
	m, err := readManifest(ctx, f.store)
	if errors.Is(err, errNoManifest) {
		return false, nil
	}
	id := m.Stamp + " " + m.SHA1
	if err != nil {
		if id == f.refused {
			return false, nil
		}
		f.refused = id
		return false, err
	}
	if m.Stamp <= f.stamp || id == f.refused {
		return false, nil
	}
	if cur, err := index.CurrentStamp(f.dataDir); err == nil && cur == m.Stamp {
		return false, nil // this node's own import, published: pollLocal's to take (or refuse)
	}
	start := time.Now()
	inUse := false
	dir, err := index.Install(f.dataDir, m.Stamp,
		func(dir string) error { return f.fetch(ctx, m, dir) },
		func(dir string) error {
			ix, err := index.OpenDir(dir)
			if err != nil {
				// arrived whole, as published, and does not open
				return &contentError{fmt.Errorf("%s: %w", m.Key, err)}
			}
			if err := f.swap(ix); err != nil {
				return err
			}
			inUse = true
			return nil
		})
	if err != nil {
		var ce *contentError
		if errors.As(err, &ce) {
			f.refused = id // fetching it again would not help
		}
		// in use but current not swapped: a restart would go back;
		// reported as an error
		return inUse, err
	}
	f.log.Info("index reloaded from the store", "stamp", m.Stamp, "key", m.Key, "bytes", m.Size, "dir", dir,
		"generation", f.eng.Generation(), "took", time.Since(start).Round(time.Millisecond))
	return true, nil
}

// contentError is a published index that is not what its manifest says,
// not a tar this lodge takes, or not an index that opens: fetching it
// again would not help.
type contentError struct{ err error }

func (e *contentError) Error() string { return e.err.Error() }
func (e *contentError) Unwrap() error { return e.err }

// fetch streams the published tar of m into dir, checking its size and
// SHA-1 against the manifest as it goes: a mismatch fails the fetch
// (and Install removes what was written) before anything opens it.
func (f *Follower) fetch(ctx context.Context, m Manifest, dir string) error {
	lim := f.cfg.Limits.WithDefaults()
	if m.Size > lim.MaxBytes {
		return &contentError{fmt.Errorf("%s: %d bytes, more than %d", m.Key, m.Size, lim.MaxBytes)}
	}
	rc, info, err := f.store.Open(ctx, m.Key)
	if err != nil {
		return fmt.Errorf("%s: %w", m.Key, err)
	}
	defer rc.Close()
	if info.Size > 0 && info.Size != m.Size {
		return &contentError{fmt.Errorf("%s: the store holds %d bytes, the manifest says %d", m.Key, info.Size, m.Size)}
	}
	h := sha1.New()
	var n int64
	src := &errReader{r: rc}
	body := io.TeeReader(io.LimitReader(src, m.Size+1), &countWriter{w: h, n: &n})
	xerr := safetar.Extract(body, dir, lim)
	if xerr == nil {
		// the tar's end blocks and anything after them count too
		_, xerr = io.Copy(io.Discard, body)
	}
	switch sum := hex.EncodeToString(h.Sum(nil)); {
	case ctx.Err() != nil:
		return ctx.Err()
	case src.err != nil:
		// the store failed (or the connection): worth another try
		return fmt.Errorf("%s: %w", m.Key, src.err)
	case xerr != nil:
		return &contentError{fmt.Errorf("%s: %w", m.Key, xerr)}
	case n > m.Size:
		return &contentError{fmt.Errorf("%s: more than the %d bytes the manifest says", m.Key, m.Size)}
	case n < m.Size:
		return &contentError{fmt.Errorf("%s: %d bytes, the manifest says %d", m.Key, n, m.Size)}
	case sum != m.SHA1:
		return &contentError{fmt.Errorf("%s: SHA-1 %s, the manifest says %s", m.Key, sum, m.SHA1)}
	}
	return nil
}

// errReader remembers the error of the reader it wraps (other than EOF):
// a failed download is told apart from a bad tar.
type errReader struct {
	r   io.Reader
	err error
}

func (e *errReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF && e.err == nil {
		e.err = err
	}
	return n, err
}
