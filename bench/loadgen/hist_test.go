package main

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

func TestBucketsCoverValues(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	values := []uint64{0, 1, subCount - 1, subCount, subCount + 1, 1000, 1 << 20, math.MaxInt64, math.MaxUint64}
	for range 100_000 {
		values = append(values, rng.Uint64()>>rng.IntN(64))
	}
	for _, v := range values {
		i := bucketOf(v)
		if i < 0 || i >= numBuckets {
			t.Fatalf("bucketOf(%d) = %d, outside [0, %d)", v, i, numBuckets)
		}
		lo, hi := bucketBounds(i)
		if v < lo || v > hi {
			t.Fatalf("bucketOf(%d) = %d, which holds [%d, %d]", v, i, lo, hi)
		}
		if v >= subCount && float64(hi-lo+1) > float64(lo)/halfCount {
			t.Fatalf("bucket %d [%d, %d] is wider than 1/%d of its values", i, lo, hi, halfCount)
		}
	}
	// Buckets are contiguous: each starts just after the one before.
	for i := 1; i < numBuckets; i++ {
		_, prevHi := bucketBounds(i - 1)
		lo, _ := bucketBounds(i)
		if lo != prevHi+1 {
			t.Fatalf("bucket %d starts at %d, bucket %d ends at %d", i, lo, i-1, prevHi)
		}
	}
}

func TestQuantiles(t *testing.T) {
	var h histogram
	if got := h.quantile(0.5); got != 0 {
		t.Errorf("empty histogram: quantile(0.5) = %v, want 0", got)
	}
	// 1µs to 10ms in 1µs steps, recorded into two histograms and merged.
	var a, b histogram
	for v := 1; v <= 10_000; v++ {
		d := time.Duration(v) * time.Microsecond
		if v%2 == 0 {
			a.record(d)
		} else {
			b.record(d)
		}
	}
	h.merge(&a)
	h.merge(&b)
	if h.total != 10_000 || h.min != uint64(time.Microsecond) || h.max != uint64(10*time.Millisecond) {
		t.Fatalf("merged: total %d min %d max %d", h.total, h.min, h.max)
	}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{
		{0, time.Microsecond},
		{0.5, 5 * time.Millisecond},
		{0.9, 9 * time.Millisecond},
		{0.99, 9900 * time.Microsecond},
		{0.999, 9990 * time.Microsecond},
		{1, 10 * time.Millisecond},
	} {
		got := h.quantile(c.q)
		// The answer is the top of the bucket holding the true value, so
		// it is no lower than that value and at most 1/halfCount above it.
		if got < c.want || float64(got) > float64(c.want)*(1+1.0/halfCount) {
			t.Errorf("quantile(%g) = %v, want %v (+%.1f%%)", c.q, got, c.want, 100.0/halfCount)
		}
	}
}

func TestQuantileSingleValue(t *testing.T) {
	var h histogram
	for range 3 {
		h.record(1234567 * time.Nanosecond)
	}
	for _, q := range []float64{0, 0.5, 0.99, 1} {
		if got := h.quantile(q); got != 1234567*time.Nanosecond {
			t.Errorf("quantile(%g) = %v, want the one value recorded, 1.234567ms", q, got)
		}
	}
	h.record(-time.Second) // a clock step back is recorded as 0
	if got := h.quantile(0); got != 0 {
		t.Errorf("after recording a negative duration: quantile(0) = %v, want 0", got)
	}
}
