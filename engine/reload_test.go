package engine_test

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/lodge-mail/lodge/engine"
	"github.com/lodge-mail/lodge/internal/testref"
)

// watchedCorrector is the fuzzy candidate source of a test reference: it
// records a use after its reference was released (the index behind it
// closed), and can hold a check inside it.
type watchedCorrector struct {
	released  atomic.Bool
	lateUses  atomic.Int64
	uses      atomic.Int64
	entered   chan struct{} // when not nil, Similar signals here, then waits on proceed
	proceed   chan struct{}
	enterOnce sync.Once
}

func (c *watchedCorrector) Similar(key string, limit int) []uint32 {
	c.uses.Add(1)
	if c.entered != nil {
		c.enterOnce.Do(func() {
			close(c.entered)
			<-c.proceed
		})
	}
	if c.released.Load() {
		c.lateUses.Add(1)
	}
	return nil
}

// smallRef builds a reference of the localities given as "NAME|STATE|PC",
// with a watched corrector.
func smallRef(tb testing.TB, locs ...string) (*engine.Reference, *watchedCorrector) {
	tb.Helper()
	b := engine.NewReferenceBuilder()
	for _, l := range locs {
		parts := strings.Split(l, "|")
		if len(parts) != 3 {
			tb.Fatalf("bad test locality %q", l)
		}
		name, state, pc := parts[0], parts[1], parts[2]
		st, ok := engine.StateByAbbr(state)
		p, ok2 := engine.ParsePostcode(pc)
		if !ok || !ok2 {
			tb.Fatalf("bad test locality %q", l)
		}
		if _, err := b.AddLocality(engine.Locality{Name: name, State: st, Postcode: p, Sources: engine.SourceGNAF}); err != nil {
			tb.Fatal(err)
		}
	}
	ref := b.Build()
	c := &watchedCorrector{}
	ref.SetCorrector(c)
	return ref, c
}

// Two references that judge carltonAddr differently: unknown in refA,
// matched in refB.
var (
	locsA       = []string{"MELBOURNE|VIC|3000"}
	locsB       = []string{"MELBOURNE|VIC|3000", "CARLTON|VIC|3053"}
	carltonAddr = []string{"Jo", "1 Smith St", "Carlton VIC 3053"}
	// misspeltAddr reaches the corrector (no locality of postcode 3000
	// is near the name) when judged with detail
	misspeltAddr = []string{"Jo", "1 Smith St", "Carltn VIC 3000"}
)

// waitHit checks lines until the engine's cache answers for them:
// ristretto admits entries asynchronously, so the test waits on the
// condition (a hit counted), yielding between tries.
func waitHit(e *engine.Engine, lines []string) {
	for {
		h, _ := e.CacheStats()
		e.Check(lines, false)
		if h2, _ := e.CacheStats(); h2 > h {
			return
		}
		runtime.Gosched()
	}
}

// TestSwapVerdicts: after Swap the engine judges against the new
// reference, a verdict cached under the old one included; the old
// reference is released once; the generation and the cache figures move
// on.
func TestSwapVerdicts(t *testing.T) {
	refA, _ := smallRef(t, locsA...)
	refB, _ := smallRef(t, locsB...)
	var releasedA, releasedB atomic.Int32
	e, err := engine.NewLive(refA, engine.Config{}, func() { releasedA.Add(1) })
	if err != nil {
		t.Fatal(err)
	}
	if g := e.Generation(); g != 1 {
		t.Fatalf("generation %d, want 1", g)
	}
	if r := e.Check(carltonAddr, false); r.Status != engine.StatusUnmatched {
		t.Fatalf("under A: %v %q", r.Status, r.Message)
	}
	waitHit(e, carltonAddr) // the unmatched verdict is now cached
	hits, misses := e.CacheStats()

	g, err := e.Swap(refB, func() { releasedB.Add(1) })
	if err != nil {
		t.Fatal(err)
	}
	if g != 2 || e.Generation() != 2 {
		t.Fatalf("Swap gave generation %d, Generation says %d; want 2", g, e.Generation())
	}
	if e.Reference() != refB {
		t.Error("Reference is not the new reference")
	}
	if n := releasedA.Load(); n != 1 {
		t.Errorf("A released %d times once replaced with no check running, want 1", n)
	}
	if r := e.Check(carltonAddr, false); r.Status != engine.StatusMatched {
		t.Errorf("under B: %v %q (a verdict of A's cache?)", r.Status, r.Message)
	}
	if h, m := e.CacheStats(); h < hits || m < misses {
		t.Errorf("cache figures went back from %d/%d to %d/%d", hits, misses, h, m)
	}
	e.Close()
	if n := releasedB.Load(); n != 1 {
		t.Errorf("B released %d times by Close, want 1", n)
	}
	if n := releasedA.Load(); n != 1 {
		t.Errorf("A released %d times in all, want 1", n)
	}
}

// TestSwapWaitsForRunningChecks: a check that began against the old
// reference finishes against it, and the old reference is released only
// when it ends; checks begun after the swap use the new one.
func TestSwapWaitsForRunningChecks(t *testing.T) {
	refA, cA := smallRef(t, locsA...)
	cA.entered, cA.proceed = make(chan struct{}), make(chan struct{})
	refB, cB := smallRef(t, locsB...)
	released := make(chan struct{})
	e, err := engine.NewLive(refA, engine.Config{CacheEntries: -1}, func() { cA.released.Store(true); close(released) })
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	held := make(chan engine.Result)
	go func() { held <- e.Check(misspeltAddr, true) }()
	<-cA.entered // the check is inside A's corrector

	if _, err := e.Swap(refB, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-released:
		t.Fatal("A released while a check was using it")
	default:
	}
	if r := e.Check(carltonAddr, false); r.Status != engine.StatusMatched {
		t.Errorf("a check begun after the swap: %v %q, want B's matched", r.Status, r.Message)
	}
	e.Check(misspeltAddr, true)
	if cB.uses.Load() != 1 {
		t.Errorf("B's corrector used %d times, want 1", cB.uses.Load())
	}
	close(cA.proceed)
	if r := <-held; r.Status != engine.StatusUnmatched {
		t.Errorf("the held check: %v %q, want A's unmatched", r.Status, r.Message)
	}
	<-released // released when the held check ended (the test's deadline catches a release that never comes)
	if n := cA.lateUses.Load(); n != 0 {
		t.Errorf("A's corrector used %d times after release", n)
	}
}

// TestSwapUnderLoad: checks run on every core, with and without detail
// and the cache, while the reference is swapped back and forth. Every
// verdict is one of the two references' verdicts; none uses a released
// reference; after each Swap returns, checks give the new reference's
// verdict; every reference is released exactly once. Run with -race.
func TestSwapUnderLoad(t *testing.T) {
	addrs := [][]string{carltonAddr, misspeltAddr, {"Jo", "1 Smith St", "Melbourne VIC 3000"}, {"Jo", "1 Smith St", "Melborne VIC 3000"}}
	refA0, _ := smallRef(t, locsA...)
	refB0, _ := smallRef(t, locsB...)
	want := func(ref *engine.Reference) []engine.Status {
		f, err := engine.New(ref, engine.Config{CacheEntries: -1})
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		out := make([]engine.Status, len(addrs))
		for i, a := range addrs {
			out[i] = f.Check(a, false).Status
		}
		return out
	}
	wantA, wantB := want(refA0), want(refB0)
	if wantA[0] == wantB[0] {
		t.Fatalf("the two references judge %q alike (%v): the test proves nothing", carltonAddr, wantA[0])
	}

	type made struct {
		c        *watchedCorrector
		released atomic.Int32
	}
	var all []*made
	newRef := func(b bool) (*engine.Reference, func()) {
		locs := locsA
		if b {
			locs = locsB
		}
		ref, c := smallRef(t, locs...)
		m := &made{c: c}
		all = append(all, m)
		return ref, func() { c.released.Store(true); m.released.Add(1) }
	}

	// a small cache: each generation makes its own
	for _, cfg := range []engine.Config{{CacheEntries: 1000}, {CacheEntries: -1}} {
		all = nil
		ref, rel := newRef(false)
		e, err := engine.NewLive(ref, cfg, rel)
		if err != nil {
			t.Fatal(err)
		}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		var checks, bad atomic.Int64
		for w := 0; w < 4; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for i := w; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					k := i % len(addrs)
					r := e.Check(addrs[k], i%3 == 0)
					checks.Add(1)
					if r.Status != wantA[k] && r.Status != wantB[k] {
						if bad.Add(1) == 1 {
							t.Errorf("%q: %v %q, neither reference's verdict", addrs[k], r.Status, r.Message)
						}
					}
				}
			}(w)
		}
		const swaps = 100
		for i := 1; i <= swaps; i++ {
			b := i%2 == 1
			ref, rel := newRef(b)
			// let the checkers run between swaps (a bounded count)
			for start := checks.Load(); checks.Load() < start+20; {
				runtime.Gosched()
			}
			g, err := e.Swap(ref, rel)
			if err != nil {
				t.Fatal(err)
			}
			if g != uint64(i+1) {
				t.Fatalf("swap %d gave generation %d", i, g)
			}
			wantNow := wantA[0]
			if b {
				wantNow = wantB[0]
			}
			if r := e.Check(carltonAddr, false); r.Status != wantNow {
				t.Fatalf("swap %d: %v right after Swap, want %v", i, r.Status, wantNow)
			}
		}
		close(stop)
		wg.Wait()
		e.Close()
		for i, m := range all {
			if n := m.released.Load(); n != 1 {
				t.Errorf("cache %v: reference %d released %d times, want 1", cfg.CacheEntries, i, n)
			}
			if n := m.c.lateUses.Load(); n != 0 {
				t.Errorf("cache %v: reference %d's corrector used %d times after its release", cfg.CacheEntries, i, n)
			}
		}
		t.Logf("cache %v: %d checks across %d swaps", cfg.CacheEntries, checks.Load(), swaps)
	}
}

// TestSwapRefused: an engine made by New keeps its reference; a closed
// live engine takes no new one; a refused Swap never calls release.
func TestSwapRefused(t *testing.T) {
	ref, _ := smallRef(t, locsA...)
	fixed, err := engine.New(ref, engine.Config{CacheEntries: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer fixed.Close()
	called := false
	rel := func() { called = true }
	if _, err := fixed.Swap(ref, rel); !errors.Is(err, engine.ErrFixedReference) {
		t.Errorf("Swap on a fixed engine: %v", err)
	}
	if g := fixed.Generation(); g != 0 {
		t.Errorf("fixed engine generation %d, want 0", g)
	}
	e, err := engine.NewLive(ref, engine.Config{CacheEntries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Swap(nil, rel); err == nil {
		t.Error("Swap to a nil reference accepted")
	}
	e.Close()
	e.Close() // twice is fine
	if _, err := e.Swap(ref, rel); err == nil {
		t.Error("Swap after Close accepted")
	}
	if called {
		t.Error("a refused Swap called release")
	}
	if _, err := engine.NewLive(nil, engine.Config{}, nil); err == nil {
		t.Error("NewLive with a nil reference accepted")
	}
}

// TestLiveHotPathAllocations: a live engine allocates nothing on the hot
// path either (the generation count is two atomic adds).
func TestLiveHotPathAllocations(t *testing.T) {
	if testref.RaceEnabled {
		t.Skip("the race detector allocates; scripts/test runs this without it")
	}
	ref := testref.Index(t).Ref
	for _, cfg := range []engine.Config{{CacheEntries: -1}, {}} {
		e, err := engine.NewLive(ref, cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Swap(ref, nil); err != nil { // a generation after a swap too
			t.Fatal(err)
		}
		for _, lines := range [][]string{
			{"Joe Blogs", "10 Jones St", "Melbourne VIC 3000"},
			{"Joe Blogs", "10 Jones St", "Melborne VIC 3000"},
			{"10 Downing St", "London SW1A 2AA", "United Kingdom"},
		} {
			e.Check(lines, false)
			if cfg.CacheEntries == 0 {
				waitHit(e, lines)
			}
			if n := testing.AllocsPerRun(200, func() { e.Check(lines, false) }); n > 0 {
				t.Errorf("cache %d, %q: %.1f allocations per check", cfg.CacheEntries, lines, n)
			}
		}
		if n := testing.AllocsPerRun(200, func() { e.CheckString("Joe Blogs, 10 Jones St, Melbourne VIC 3000", false) }); n > 0 {
			t.Errorf("cache %d, CheckString: %.1f allocations", cfg.CacheEntries, n)
		}
		e.Close()
	}
}

// BenchmarkCheckLive: the realistic mix on every core, cache off and on,
// through an engine made by New and a live one (what the generation count
// costs). cpu-ns/op is the process's CPU time per check, which other work
// on a shared machine disturbs less than the elapsed time.
func BenchmarkCheckLive(b *testing.B) {
	ref := testref.Index(b).Ref
	addrs := mix(b, 100_000)
	for _, kind := range []string{"fixed", "live"} {
		for _, cache := range []int64{-1, 0} {
			b.Run(fmt.Sprintf("%s/cache=%v", kind, cache == 0), func(b *testing.B) {
				cfg := engine.Config{CacheEntries: cache}
				var e *engine.Engine
				var err error
				if kind == "live" {
					e, err = engine.NewLive(ref, cfg, nil)
				} else {
					e, err = engine.New(ref, cfg)
				}
				if err != nil {
					b.Fatal(err)
				}
				defer e.Close()
				var n atomic.Int64
				b.ReportAllocs()
				cpu0 := cpuTime()
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					// repeats: each worker walks 10,000 addresses, so the
					// cache (when on) answers most
					i := int(n.Add(1)) * 7919
					for pb.Next() {
						e.Check(addrs[i%10_000], false)
						i++
					}
				})
				b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "addr/s")
			})
		}
	}
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
