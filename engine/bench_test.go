package engine_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/lodge-mail/lodge/engine"
	"github.com/lodge-mail/lodge/internal/testref"
)

func mix(tb testing.TB, n int) [][]string {
	tb.Helper()
	m, err := testref.Mix(n, 1)
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// BenchmarkCheckNoCache: verdicts in process, cache off, realistic mix.
// Reported as addresses/s (one op = one address).
func BenchmarkCheckNoCache(b *testing.B) {
	e := newEngine(b, false)
	addrs := mix(b, 100_000)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e.Check(addrs[i%len(addrs)], false)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "addr/s")
}

// BenchmarkCheckRepeats: cache on, 90% of addresses seen before.
func BenchmarkCheckRepeats(b *testing.B) {
	e := newEngine(b, true)
	addrs := mix(b, 100_000)
	hot := addrs[:10_000]
	for _, a := range hot {
		e.Check(a, false)
	}
	rng := rand.New(rand.NewPCG(2, 3))
	order := make([][]string, 1<<16)
	for i := range order {
		if rng.IntN(10) == 0 {
			order[i] = addrs[10_000+rng.IntN(90_000)]
		} else {
			order[i] = hot[rng.IntN(len(hot))]
		}
	}
	// lay the stream out in order, as a decoded request body is
	for i, a := range order {
		order[i] = cloneLines(a)
	}
	for _, a := range order { // warm: ristretto admits on the second sight
		e.Check(a, false)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e.Check(order[i&(len(order)-1)], false)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "addr/s")
}

func cloneLines(a []string) []string {
	c := make([]string, len(a))
	for i, l := range a {
		c[i] = strings.Clone(l)
	}
	return c
}

// BenchmarkCheckParallel: cache off, every core.
func BenchmarkCheckParallel(b *testing.B) {
	e := newEngine(b, false)
	addrs := mix(b, 100_000)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := rand.IntN(len(addrs))
		for pb.Next() {
			e.Check(addrs[i%len(addrs)], false)
			i++
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "addr/s")
}

// waitCached waits until the engine's cache answers for lines: ristretto
// admits new entries asynchronously.
func waitCached(e *engine.Engine, lines []string) {
	for i := 0; i < 200; i++ {
		h, _ := e.CacheStats()
		e.Check(lines, false)
		if h2, _ := e.CacheStats(); h2 > h {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestHotPathAllocations: judging a matched, unmatched or international
// address allocates nothing; an invalid one allocates only its message.
func TestHotPathAllocations(t *testing.T) {
	if testref.RaceEnabled {
		t.Skip("the race detector allocates; scripts/test runs this without it")
	}
	e := newEngine(t, false)
	ec := newEngine(t, true)
	f := func(maxAllocs float64, lines ...string) {
		t.Helper()
		for _, eng := range []*engine.Engine{e, ec} {
			eng.Check(lines, false)
			waitCached(eng, lines)
			if n := testing.AllocsPerRun(200, func() { eng.Check(lines, false) }); n > maxAllocs {
				t.Errorf("%q: %.1f allocations per check, want at most %.0f", lines, n, maxAllocs)
			}
		}
	}
	f(0, "Joe Blogs", "10 Jones St", "Melbourne VIC 3000")
	f(0, "Joe Blogs", "Unit 5", "3/72 Charles St", "St Kilda", "VIC 3182")
	f(0, "Joe Blogs", "PO Box 12", "Melbourne VIC 3000")
	f(0, "Joe Blogs", "10 Jones St", "Smithville NSW 2987")
	f(0, "Joe Blogs", "10 Jones St", "Melborne VIC 3000")
	f(0, "10 Downing St", "London SW1A 2AA", "United Kingdom")
	f(0, "Jo", "1 Queen St", "Blockhouse Bay", "Auckland 0600")
	f(0, "Jo", "Acme Pty Ltd", "Acme House", "Level 2", "100 George St", "Sydney NSW 2000", "Australia")
	f(0, "Jo", "Davis Station", "AAT 7151")
	// issue 13's classes: street and locality on one line, glued postal
	// words, a corner, a country in another language or after a region
	f(0, "Jo", "Acme", "Unit 2 10 Jones St Melbourne VIC 3000")
	f(0, "Jo", "Acme", "Unit 2 10 Jones St Melborne VIC 3000")
	f(0, "Jo", "10 Jones St Melbourne", "VIC 3000")
	f(0, "Jo", "Acme", "431 St Kilda Road Melbourne VIC 3004")
	f(0, "Jo", "POBOX123", "Sydney NSW 2000")
	f(0, "Jo", "Cnr George and Market Streets", "Sydney NSW 2000")
	f(0, "Jo", "Damrak 1", "1012 LG Amsterdam", "Nederland")
	f(0, "Jo", "Marienplatz 1", "80331 München", "Bavaria, Germany")
	f(0, "Jo", "1 Bay St", "Nassau", "The Bahamas")
	// issue 13's leftovers: the state ending the street's line above the
	// postcode, the state and postcode above the street, a misspelt
	// locality after a street without a type
	f(0, "Jo", "10 Jones St Melbourne VIC", "3000")
	f(0, "Jo", "NSW 2000", "12 George St", "Sydney")
	f(0, "Jo", "ACT 2600", "Parliament Drive", "Canberra")
	f(0, "Jo", "Acme", "1 Kingsway Glen Waverly VIC 3150")
	if n := testing.AllocsPerRun(200, func() { e.CheckString("Jo, Flat 2, 10 Main St, Sydney, NSW, 2000, Australia", false) }); n > 0 {
		t.Errorf("CheckString with a seventh line Australia: %.1f allocations", n)
	}
	if n := testing.AllocsPerRun(200, func() { e.CheckString("Joe Blogs, 10 Jones St, Melbourne VIC 3000", false) }); n > 0 {
		t.Errorf("CheckString: %.1f allocations", n)
	}
	// invalid: the message (and the formatting behind it)
	f(4, "Joe Blogs", "10 Jones St", "Melbourne NSW 3000")
}

// BenchmarkCheckRepeatShare: a stream where a share of the addresses
// repeat (drawn from 1,000 hot ones) and the rest are each seen once (a
// recipient line of their own), with the cache off and on. The cache must
// never be much slower than none: below minHitRatio it steps aside.
func BenchmarkCheckRepeatShare(b *testing.B) {
	addrs := mix(b, 20_000)
	hot, cold := addrs[:1000], addrs[1000:]
	names := make([]string, 1<<20)
	for i := range names {
		names[i] = fmt.Sprintf("JO CITIZEN %d", i)
	}
	type turn struct {
		lines []string
		cold  bool
	}
	for _, share := range []float64{0, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 0.9} {
		rng := rand.New(rand.NewPCG(4, 5))
		order := make([]turn, 1<<16)
		for i := range order {
			if rng.Float64() < share {
				order[i] = turn{lines: hot[rng.IntN(len(hot))]}
			} else {
				order[i] = turn{lines: cold[rng.IntN(len(cold))], cold: true}
			}
		}
		for _, cache := range []bool{false, true} {
			b.Run(fmt.Sprintf("share=%.2f/cache=%v", share, cache), func(b *testing.B) {
				cfg := engine.Config{CacheEntries: 10_000}
				if !cache {
					cfg.CacheEntries = -1
				}
				e, err := engine.New(testref.Index(b).Ref, cfg)
				if err != nil {
					b.Fatal(err)
				}
				defer e.Close()
				lines := make([]string, 0, engine.MaxComponents+2)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					t := order[i&(len(order)-1)]
					lines = append(lines[:0], t.lines...)
					if t.cold {
						lines[0] = names[i&(len(names)-1)]
					}
					e.Check(lines, false)
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "addr/s")
			})
		}
	}
}
