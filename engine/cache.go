package engine

import (
	"hash/maphash"
	"sync/atomic"

	"github.com/cespare/xxhash/v2"
	"github.com/dgraph-io/ristretto/v2"
)

// verdictCache holds verdicts keyed by the normalised address. Ristretto
// stores only a key hash; a second, independent hash kept in the value
// guards against collisions, so a cached verdict is never another
// address's. Values hold only strings the engine made, never input memory.
type verdictCache struct {
	c            *ristretto.Cache[uint64, cachedVerdict]
	seed         maphash.Seed
	hits, misses atomic.Uint64
}

type cachedVerdict struct {
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
	return &verdictCache{c: c, seed: maphash.MakeSeed()}, nil
}

func (v *verdictCache) get(key []byte) (Result, bool) {
	cv, ok := v.c.Get(xxhash.Sum64(key))
	if !ok || cv.check != maphash.Bytes(v.seed, key) {
		v.misses.Add(1)
		return Result{}, false
	}
	v.hits.Add(1)
	return Result{Status: cv.status, Nation: cv.nation, Message: cv.msg}, true
}

func (v *verdictCache) set(key []byte, r Result) {
	v.c.Set(xxhash.Sum64(key), cachedVerdict{check: maphash.Bytes(v.seed, key), status: r.Status, nation: r.Nation, msg: r.Message}, 1)
}

func (v *verdictCache) stats() (uint64, uint64) { return v.hits.Load(), v.misses.Load() }

func (v *verdictCache) close() { v.c.Close() }
