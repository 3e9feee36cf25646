package engine

import (
	"fmt"
	"hash/maphash"
	"testing"
)

// TestWorthCaching is the step-aside rule: the cache is used while at
// least minHitRatio (0.4) of a window's lookups hit.
func TestWorthCaching(t *testing.T) {
	f := func(hits, lookups uint32, want bool) {
		t.Helper()
		if got := worthCaching(hits, lookups); got != want {
			t.Errorf("worthCaching(%d, %d) = %v, want %v", hits, lookups, got, want)
		}
	}
	f(0, 256, false)   // distinct addresses
	f(1, 256, false)   // a rare repeat
	f(25, 256, false)  // 10%
	f(102, 256, false) // just under 40%
	f(103, 256, true)  // just over
	f(2, 5, true)      // exactly 40%
	f(128, 256, true)  // half
	f(230, 256, true)  // 90% repeats
	f(256, 256, true)  // all hits
	f(0, 0, false)     // nothing measured
}

// TestAdmission is the doorkeeper: a verdict is admitted on the second
// sighting of its key, unless another key took its slot in between.
func TestAdmission(t *testing.T) {
	// slot = low bits, fingerprint = high 32 bits
	key := func(slot, fp uint64) uint64 { return fp<<32 | slot }
	f := func(entries int64, hashes []uint64, want ...bool) {
		t.Helper()
		v, err := newVerdictCache(entries)
		if err != nil {
			t.Fatal(err)
		}
		defer v.close()
		for i, h := range hashes {
			if got := v.admit(h); got != want[i] {
				t.Errorf("entries %d, hashes %x: sighting %d (%x) admitted %v, want %v", entries, hashes, i, h, got, want[i])
			}
		}
	}
	a, b, c := key(1, 7), key(2, 7), key(1, 9)
	f(100, []uint64{a}, false)                     // first sighting
	f(100, []uint64{a, a}, false, true)            // second: admitted
	f(100, []uint64{a, a, a}, false, true, true)   // and after
	f(100, []uint64{a, b, a}, false, false, true)  // another slot leaves it
	f(100, []uint64{a, c, a}, false, false, false) // another key in its slot evicts it
	f(100, []uint64{a, c, a, a}, false, false, false, true)
	f(100, []uint64{key(3, 0), key(3, 0)}, false, true) // fingerprint 0 is not the empty slot
	f(100, []uint64{key(3, 1), key(4, 0)}, false, false)
	// the doorkeeper has a power of two of slots, at least one per entry:
	// slots 1 and 1+64 differ with 100 entries (128 slots), not with 3 (64,
	// the least)
	f(100, []uint64{key(1, 5), key(65, 5)}, false, false)
	f(3, []uint64{key(1, 5), key(65, 5)}, false, true)
}

// TestStepAside: on distinct keys the cache stops being consulted for
// unsampled keys after one window, and comes back once sampled keys
// repeat again; sampled keys are always consulted.
func TestStepAside(t *testing.T) {
	v, err := newVerdictCache(1000)
	if err != nil {
		t.Fatal(err)
	}
	defer v.close()
	// keys whose hash is sampled, and keys whose hash is not
	var sampled, other [][]byte
	for i := 0; len(sampled) < 2*windowLookups || len(other) < 10; i++ {
		k := []byte(fmt.Sprintf("KEY %d\n", i))
		if isSampled(maphash.Bytes(v.seed, k)) {
			sampled = append(sampled, k)
		} else {
			other = append(other, k)
		}
	}
	r := Result{Status: StatusMatched, Nation: "AUS"}
	check := func(k []byte) lookup {
		l, _, ok := v.get(k)
		if !ok {
			v.set(l, k, r)
		}
		return l
	}
	f := func(k []byte, wantUse bool) {
		t.Helper()
		if l := check(k); l.use != wantUse {
			t.Errorf("%q: consulted %v, want %v (off %v)", k, l.use, wantUse, v.off.Load())
		}
	}
	f(other[0], true) // a new cache is used
	for _, k := range sampled[:windowLookups] {
		f(k, true) // a window of distinct sampled keys
	}
	f(other[1], false) // steps aside
	f(sampled[0], true)
	// the stream turns repetitive: one sampled key, cached (ristretto
	// inserts asynchronously: Wait for it), then looked up for two windows
	for tries := 0; ; tries++ {
		if _, _, ok := v.get(sampled[1]); ok {
			break
		}
		if tries == 100 {
			t.Fatal("the repeated key was never cached")
		}
		l, _, _ := v.get(sampled[1])
		v.set(l, sampled[1], r)
		v.c.Wait()
	}
	for range 2 * windowLookups {
		v.get(sampled[1])
	}
	f(other[2], true)
}

// TestHotFront: keys that share a slot of the hot table each get their
// own verdict, whichever was stored last, and a verdict found there is a
// hit like one found in ristretto.
func TestHotFront(t *testing.T) {
	f := func(entries int64, want int) {
		t.Helper()
		if got := hotSlots(entries); got != want {
			t.Errorf("hotSlots(%d) = %d, want %d", entries, got, want)
		}
	}
	f(1, 64)
	f(512, 64)
	f(1000, 128)
	f(500_000, 65536)
	f(1<<40, 65536)

	v, err := newVerdictCache(100) // 64 hot slots: 200 keys share them
	if err != nil {
		t.Fatal(err)
	}
	defer v.close()
	verdict := func(i int) Result {
		return Result{Status: Status(i % 4), Nation: fmt.Sprint("N", i), Message: fmt.Sprint("key ", i)}
	}
	key := func(i int) []byte { return []byte(fmt.Sprintf("KEY %d\n", i)) }
	for round := range 3 {
		for i := range 200 {
			l, r, ok := v.get(key(i))
			if ok && r != verdict(i) {
				t.Fatalf("round %d: key %d got %+v, want %+v", round, i, r, verdict(i))
			}
			if !ok {
				v.set(l, key(i), verdict(i))
			}
		}
	}
	hits, _ := v.stats()
	if hits == 0 {
		t.Error("no hits in three rounds of the same keys")
	}
	// a key just found is in its hot slot: found again with ristretto
	// emptied
	for i := range 200 {
		if _, _, ok := v.get(key(i)); !ok {
			continue
		}
		v.c.Clear()
		if _, r, ok := v.get(key(i)); !ok || r != verdict(i) {
			t.Errorf("key %d, ristretto emptied: %+v, %v", i, r, ok)
		}
		return
	}
	t.Error("no key found")
}
