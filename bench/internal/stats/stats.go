// Package stats holds the small figures the benchmark programs report:
// medians of rounds and numbers rounded for their JSON.
package stats

import "sort"

// Round rounds x to places decimal places, halves away from zero.
func Round(x float64, places int) float64 {
	p := 1.0
	for range places {
		p *= 10
	}
	if x < 0 {
		return -float64(int64(-x*p+0.5)) / p
	}
	return float64(int64(x*p+0.5)) / p
}

// Median is the middle of xs (the mean of the two middle values of an
// even count, rounded to 3 places); 0 for none. xs is not changed.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return Round((s[len(s)/2-1]+s[len(s)/2])/2, 3)
}
