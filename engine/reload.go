package engine

import (
	"errors"
	"runtime"
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
// The count is kept in slots, each on a cache line of its own, a check
// taking the slot of a token from a sync.Pool (so, mostly, its
// processor's): with one counter for all checks, its cache line would
// move between the cores on every check, a cost that grows with the
// cores (on the 2-core development machine both ways measured alike,
// BenchmarkCheckLive). A check adds one to its slot when it starts and
// takes it off when it ends; only a replaced generation's slots are
// summed, by the check that ends on it and by Swap. An engine made by New
// has no generations and pays nothing.

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
	// slots count the checks running against the generation; retired
	// is set once it is no longer current, and it is released when
	// retired and the slots add up to 0.
	slots   []slot
	retired atomic.Bool
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
	return &generation{eng: e, n: n, release: release, owner: l, slots: make([]slot, slotCount)}, nil
}

// slot is a count of checks, alone on its cache line (two counters are
// 64 bytes apart, so never on one line).
type slot struct {
	n atomic.Int64
	_ [56]byte
}

// slotCount is a power of two, twice the processors at start (at least
// 8): tokens are numbered in turn, so the few tokens each processor's
// pool holds mostly fall in different slots.
var slotCount = func() int {
	n := 8
	for n < 2*runtime.GOMAXPROCS(0) && n < 1024 {
		n *= 2
	}
	return n
}()

// slotToken is what a check takes from slotTokens: a slot number.
type slotToken struct{ i int }

var (
	nextToken  atomic.Uint64
	slotTokens = sync.Pool{New: func() any { return &slotToken{i: int(nextToken.Add(1) % uint64(slotCount))} }}
)

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
	old.retired.Store(true)
	old.maybeRelease() // outside mu: releasing takes it
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

// check judges against the current generation, counted in its slot.
func (l *live) check(lines []string, detail bool) Result {
	t := slotTokens.Get().(*slotToken)
	g, s := l.acquire(t.i)
	defer func() {
		g.leave(s)
		slotTokens.Put(t)
	}()
	return g.eng.Check(lines, detail)
}

// acquire counts a check in slot i of the current generation. The count
// is taken before the generation is confirmed current, so a generation
// that Swap replaced in between is let go again and never used.
//
// Why no check runs on a released generation: a check's add comes before
// its confirming load of cur, which comes before Swap stores the next
// generation, which comes before retired is set; a sum of the slots
// read after retired is set therefore includes the add (Go's atomics are
// sequentially consistent). And why the last one out releases it: of
// the takings-off and the setting of retired, whichever comes last reads
// every slot after all of them, and finds 0.
func (l *live) acquire(i int) (*generation, *atomic.Int64) {
	for {
		g := l.cur.Load()
		s := &g.slots[i&(len(g.slots)-1)].n
		s.Add(1)
		if l.cur.Load() == g {
			return g, s
		}
		s.Add(-1)
		g.maybeRelease()
	}
}

// leave takes a check's count off its slot.
func (g *generation) leave(s *atomic.Int64) {
	s.Add(-1)
	if g.retired.Load() {
		g.maybeRelease()
	}
}

// maybeRelease releases a retired generation that no check uses (at most
// once, whoever finds it so).
func (g *generation) maybeRelease() {
	if !g.retired.Load() {
		return
	}
	for i := range g.slots {
		if g.slots[i].n.Load() != 0 {
			return
		}
	}
	g.once.Do(g.retire)
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
	g.retired.Store(true)
	g.maybeRelease()
}
