package engine

import (
	"hash/maphash"
	"math/bits"
	"sync/atomic"

	"github.com/dgraph-io/ristretto/v2"
)

// verdictCache holds verdicts keyed by the normalised address. Ristretto
// stores only a key hash; a second, independent hash kept in the value
// guards against collisions, so a cached verdict is never another
// address's. Values hold only strings the engine made, never input memory.
//
// A cache costs something on every lookup (hashing, ristretto's sharded
// map and access buffers: on the development machine about 100 ns a miss
// and 300 ns a hit, against 0.6 to 2 µs a verdict) and much more on every
// insertion (ristretto's policy goroutine: on a stream of distinct
// addresses it kept a second core busy and made "lodge check" three times
// slower). So that it never costs more than it saves, it does two things:
//
//   - Admission: a verdict is inserted only when its address is seen for
//     the second time. A doorkeeper (one 32-bit fingerprint per slot, a
//     slot per cache entry) remembers the last address of each slot; a
//     miss whose fingerprint is already in its slot is a repeat and is
//     inserted, any other miss only writes its fingerprint. Distinct
//     addresses are never inserted.
//   - Stepping aside: the addresses whose hash falls in a fixed 1/64 of
//     the hash space (sampled) always use the cache, and their hit ratio
//     is measured over windows of windowLookups lookups. While the last
//     window's ratio is below minHitRatio, the other addresses skip the
//     cache: no lookup, no insertion. Sampling by hash, not by turn, keeps
//     every sighting of a sampled address in the sample, so the sample
//     repeats as the whole stream does (the SHARDS technique).
//
// In front of ristretto sits hot, a direct-mapped table of verdicts (one
// per slot, indexed by the key's hash, read with one atomic load), filled
// by ristretto's hits and by admissions. Ristretto's Get, under load on
// two cores, cost about 0.4 µs a request (its access buffers, the policy
// goroutine counting every access, a sharded lock), a quarter of the
// JSON-RPC handler; the hot table costs two hashes and a load. What hot
// holds is never stale: a generation's verdict on a key never changes,
// and each generation has its own cache. Ristretto does not see the hits
// served by hot, so it may evict those verdicts: they stay in hot until
// another key takes their slot, and are then checked and admitted again.
//
// The cache starts in use; on distinct addresses it steps aside after the
// first window (about 16,000 checks), and comes back within a window of
// the stream turning repetitive.
type verdictCache struct {
	c *ristretto.Cache[uint64, cachedVerdict]
	// seed hashes the key for ristretto, check for the guard: two
	// independent hashes
	seed, check  maphash.Seed
	hits, misses atomic.Uint64

	// seen is the doorkeeper: fingerprints, a power of two of them.
	seen []atomic.Uint32
	// window counts the current window's sampled lookups (high 32 bits)
	// and hits (low 32 bits), in one word so that a window closes once.
	window atomic.Uint64
	// off is set while the last window's hit ratio was below minHitRatio.
	off atomic.Bool
	// hot is the direct-mapped front, a power of two of slots.
	hot []atomic.Pointer[cachedVerdict]
}

const (
	// sampleBits: addresses whose hash has this many leading zero bits
	// (1 in 64) always use the cache.
	sampleBits = 6
	// windowLookups sampled lookups (about 16,000 checks) settle whether
	// the others use the cache.
	windowLookups = 256
	// minHitRatio is the hit ratio below which the cache costs more than
	// it saves on the cheapest verdicts (BenchmarkCheckRepeatShare: the
	// realistic mix on the fixture reference, about 0.7 µs a verdict, the
	// cache forced on broke even between 30% and 50% repeats). On a full
	// G-NAF index verdicts cost two to three times as much, so the cache
	// would pay from a lower ratio (not measured): below 40% it is left
	// unused there too, saving less than it could but never costing.
	minHitRatio = 0.4
)

type cachedVerdict struct {
	h      uint64 // the key's hash (hot compares it before check)
	check  uint64
	status Status
	nation string
	msg    string
}

func newVerdictCache(entries int64) (*verdictCache, error) {
	c, err := ristretto.NewCache(&ristretto.Config[uint64, cachedVerdict]{
		NumCounters:        entries * 10,
		MaxCost:            entries,
		BufferItems:        64,
		IgnoreInternalCost: true,
	})
	if err != nil {
		return nil, err
	}
	slots := 1 << bits.Len64(uint64(max(entries, 64)-1))
	return &verdictCache{c: c, seed: maphash.MakeSeed(), check: maphash.MakeSeed(), seen: make([]atomic.Uint32, slots),
		hot: make([]atomic.Pointer[cachedVerdict], hotSlots(entries))}, nil
}

// hotSlots sizes the hot table for a cache of entries verdicts: an eighth
// of them, a power of two from 64 to 65,536 slots (512 KiB of pointers).
func hotSlots(entries int64) int {
	return 1 << min(16, max(6, bits.Len64(uint64(max(entries/8, 1)-1))))
}

// lookup is one check's use of the cache: its key's hash, and whether the
// cache was consulted (then set is to be called after a miss).
type lookup struct {
	h   uint64
	use bool
}

// get looks key up. When the cache steps aside for key it reports a miss
// with l.use false.
func (v *verdictCache) get(key []byte) (l lookup, r Result, ok bool) {
	l.h = maphash.Bytes(v.seed, key)
	sampled := isSampled(l.h)
	if !sampled && v.off.Load() {
		return l, Result{}, false
	}
	l.use = true
	slot := &v.hot[l.h&uint64(len(v.hot)-1)]
	if cv := slot.Load(); cv != nil && cv.h == l.h && cv.check == maphash.Bytes(v.check, key) {
		if sampled {
			v.count(true)
		}
		v.hits.Add(1)
		return l, Result{Status: cv.status, Nation: cv.nation, Message: cv.msg}, true
	}
	cv, found := v.c.Get(l.h)
	ok = found && cv.check == maphash.Bytes(v.check, key)
	if ok {
		slot.Store(&cv)
	}
	if sampled {
		v.count(ok)
	}
	if !ok {
		v.misses.Add(1)
		return l, Result{}, false
	}
	v.hits.Add(1)
	return l, Result{Status: cv.status, Nation: cv.nation, Message: cv.msg}, true
}

// set offers the verdict on key after a miss; the doorkeeper decides
// whether it goes in.
func (v *verdictCache) set(l lookup, key []byte, r Result) {
	if !l.use || !v.admit(l.h) {
		return
	}
	cv := cachedVerdict{h: l.h, check: maphash.Bytes(v.check, key), status: r.Status, nation: r.Nation, msg: r.Message}
	v.c.Set(l.h, cv, 1)
	v.hot[l.h&uint64(len(v.hot)-1)].Store(&cv)
}

// admit reports whether the key with hash h was the last one seen in its
// doorkeeper slot, and records it there.
func (v *verdictCache) admit(h uint64) bool {
	slot := &v.seen[h&uint64(len(v.seen)-1)]
	fp := uint32(h>>32) | 1 // never 0, the empty slot
	if slot.Load() == fp {
		return true
	}
	slot.Store(fp)
	return false
}

func isSampled(h uint64) bool { return h>>(64-sampleBits) == 0 }

// count adds a sampled lookup to the window and, when that completes it,
// decides whether the other addresses use the cache.
func (v *verdictCache) count(hit bool) {
	d := uint64(1) << 32
	if hit {
		d++
	}
	w := v.window.Add(d)
	if w>>32 != windowLookups {
		return
	}
	// exactly one lookup completes the window; lookups counted since
	// stay in the next one
	v.window.Add(-w)
	v.off.Store(!worthCaching(uint32(w), windowLookups))
}

// worthCaching is the rule: the cache pays when at least minHitRatio of
// the lookups hit.
func worthCaching(hits, lookups uint32) bool {
	return lookups > 0 && float64(hits) >= minHitRatio*float64(lookups)
}

func (v *verdictCache) stats() (uint64, uint64) { return v.hits.Load(), v.misses.Load() }

func (v *verdictCache) close() { v.c.Close() }
