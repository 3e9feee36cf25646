package main

import (
	"math"
	"math/bits"
	"time"
)

// A histogram counts durations in log-linear buckets, in the manner of an
// HDR histogram: values below 2^subBits nanoseconds get a bucket each, and
// every power-of-two range above that is split into 2^(subBits-1) equal
// buckets, so a bucket is never wider than 1/2^(subBits-1) of the values
// in it (0.8% with subBits = 8). Recording is a few instructions and no
// allocation; one histogram per goroutine, merged at the end, needs no
// locking.
type histogram struct {
	counts   [numBuckets]uint64
	total    uint64
	min, max uint64
	sum      float64 // nanoseconds
}

const (
	subBits    = 8
	subCount   = 1 << subBits // linear buckets for the smallest values
	halfCount  = subCount / 2 // buckets per power of two above them
	numBuckets = (64-subBits)*halfCount + subCount
)

// bucketOf returns the bucket holding v.
func bucketOf(v uint64) int {
	if v < subCount {
		return int(v)
	}
	shift := bits.Len64(v) - subBits // >= 1
	// v>>shift keeps v's top subBits bits, so it lies in [halfCount, subCount).
	return shift*halfCount + int(v>>shift)
}

// bucketBounds returns the smallest and largest values bucket i holds.
func bucketBounds(i int) (lo, hi uint64) {
	if i < subCount {
		return uint64(i), uint64(i)
	}
	shift := i/halfCount - 1
	m := uint64(i - shift*halfCount)
	lo = m << shift
	return lo, lo + (1 << shift) - 1
}

func (h *histogram) record(d time.Duration) {
	v := uint64(max(d, 0))
	h.counts[bucketOf(v)]++
	if h.total == 0 || v < h.min {
		h.min = v
	}
	if v > h.max {
		h.max = v
	}
	h.total++
	h.sum += float64(v)
}

func (h *histogram) merge(o *histogram) {
	if o.total == 0 {
		return
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	if h.total == 0 || o.min < h.min {
		h.min = o.min
	}
	h.max = max(h.max, o.max)
	h.total += o.total
	h.sum += o.sum
}

// quantile returns the value at quantile q (0 to 1): the largest value of
// the bucket holding the ceil(q*total)-th smallest recording, so it errs
// high, as HDR histograms do, but never above the largest recording.
func (h *histogram) quantile(q float64) time.Duration {
	if h.total == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(h.total)))
	rank = min(max(rank, 1), h.total)
	var seen uint64
	for i, c := range h.counts {
		if seen += c; seen >= rank {
			_, hi := bucketBounds(i)
			return time.Duration(min(max(hi, h.min), h.max))
		}
	}
	return time.Duration(h.max)
}
