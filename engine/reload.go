package engine

import (
	"errors"
	"sync"
	"sync/atomic"
)

// A live engine (NewLive) judges against a reference that Swap can replace
// while checks run, so that a new index is taken into use without a
// restart:
//
//   - Each check runs wholly against one generation: the reference that
//     was current when it began, with that generation's verdict cache.
//     No check sees a mix of two references or a half-built one (Swap
//     takes a reference that is already built).
//   - Each generation has a verdict cache of its own, empty at the swap:
//     a verdict depends on the reference, so none is carried over.
//   - A replaced generation is released (its cache closed and the release
//     function given with its reference called, which closes the index
//     behind it) once no check that began against it is still running:
//     each check holds a count on its generation.
//
// The count is one atomic add when a check starts and one when it ends;
// an engine made by New has no generations and pays nothing.

// ErrFixedReference is Swap's error on an engine made by New.
var ErrFixedReference = errors.New("engine: the reference of an engine made by New cannot be replaced (use NewLive)")

// errClosed is Swap's error after Close.
var errClosed = errors.New("engine: closed")

// live is a live engine's state.
type live struct {
	cfg Config
	cur atomic.Pointer[generation]

	// mu serialises Swap and Close, and guards what follows.
	mu     sync.Mutex
	closed bool
	// hits and misses of the caches of replaced generations, so that
	// CacheStats keeps counting up across swaps
	hits, misses uint64
}

// generation is one reference in use: an Engine of its own (fixed
// reference, own cache) and the count of the checks using it.
type generation struct {
	eng *Engine
	n   uint64
	// refs is 1 while the generation is current, plus one for each
	// check running against it; the generation is released when it
	// reaches 0.
	refs    atomic.Int64
	release func()
	once    sync.Once
	// what its cache had counted when it was replaced
	hitsAtSwap, missesAtSwap uint64
	owner                    *live
}

// NewLive returns an engine judging against ref whose reference Swap can
// replace. release (which may be nil) is called once ref is no longer
// used: after a Swap replaced it and the checks using it ended, or after
// Close.
func NewLive(ref *Reference, cfg Config, release func()) (*Engine, error) {
	l := &live{cfg: cfg}
	g, err := l.newGeneration(ref, 1, release)
	if err != nil {
		return nil, err
	}
	l.cur.Store(g)
	return &Engine{live: l}, nil
}

func (l *live) newGeneration(ref *Reference, n uint64, release func()) (*generation, error) {
	e, err := New(ref, l.cfg)
	if err != nil {
		return nil, err
	}
	g := &generation{eng: e, n: n, release: release, owner: l}
	g.refs.Store(1)
	return g, nil
}

// Swap makes e judge against ref from the next check on, with an empty
// verdict cache, and returns the new generation number (the first
// reference is generation 1). Checks already running finish against the
// reference they began with; the replaced reference's release function
// is called when the last of them ends (at once when none runs). release
// belongs to ref and is called likewise once ref is replaced in turn or
// e closed. On an error e is unchanged and release is not called.
func (e *Engine) Swap(ref *Reference, release func()) (uint64, error) {
	l := e.live
	if l == nil {
		return 0, ErrFixedReference
	}
	if ref == nil {
		return 0, errors.New("engine: nil reference")
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return 0, errClosed
	}
	old := l.cur.Load()
	g, err := l.newGeneration(ref, old.n+1, release)
	if err != nil {
		l.mu.Unlock()
		return 0, err
	}
	old.hitsAtSwap, old.missesAtSwap = old.eng.CacheStats()
	l.hits += old.hitsAtSwap
	l.misses += old.missesAtSwap
	l.cur.Store(g)
	l.mu.Unlock()
	old.unref() // outside mu: it may release old, which takes mu
	return g.n, nil
}

// Generation returns the number of the reference e judges against now:
// 1 for the reference NewLive was given, one more after each Swap; 0 for
// an engine made by New.
func (e *Engine) Generation() uint64 {
	if e.live == nil {
		return 0
	}
	return e.live.cur.Load().n
}

// check judges against the current generation, holding a count on it.
func (l *live) check(lines []string, detail bool) Result {
	g := l.acquire()
	defer g.unref()
	return g.eng.Check(lines, detail)
}

// acquire counts a check on the current generation. The count is taken
// before the generation is confirmed current, so a generation that Swap
// replaced in between is let go again and never used: its count may
// touch zero twice, and release runs once.
func (l *live) acquire() *generation {
	for {
		g := l.cur.Load()
		g.refs.Add(1)
		if l.cur.Load() == g {
			return g
		}
		g.unref()
	}
}

func (g *generation) unref() {
	if g.refs.Add(-1) == 0 {
		g.once.Do(g.retire)
	}
}

// retire releases a generation no check uses any more.
func (g *generation) retire() {
	h, m := g.eng.CacheStats()
	g.eng.Close()
	l := g.owner
	l.mu.Lock()
	if l.cur.Load() != g { // replaced: count what came after the swap
		l.hits += h - g.hitsAtSwap
		l.misses += m - g.missesAtSwap
	}
	l.mu.Unlock()
	if g.release != nil {
		g.release()
	}
}

func (l *live) reference() *Reference { return l.cur.Load().eng.ref }

// cacheStats adds the current generation's cache figures to those of the
// generations before it.
func (l *live) cacheStats() (hits, misses uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	h, m := l.cur.Load().eng.CacheStats()
	return l.hits + h, l.misses + m
}

// close lets the current generation go: it is released when the checks
// still running end. Swap fails from then on.
func (l *live) close() {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.closed = true
	g := l.cur.Load()
	l.mu.Unlock()
	g.unref()
}
