package stats

import "testing"

func TestRound(t *testing.T) {
	f := func(x float64, places int, want float64) {
		t.Helper()
		if got := Round(x, places); got != want {
			t.Errorf("Round(%v, %d) = %v, want %v", x, places, got, want)
		}
	}
	f(1.2345, 3, 1.235)
	f(-1.2345, 3, -1.235)
	f(2.5, 0, 3)
	f(0.04, 1, 0)
}

func TestMedian(t *testing.T) {
	f := func(xs []float64, want float64) {
		t.Helper()
		if got := Median(xs); got != want {
			t.Errorf("Median(%v) = %v, want %v", xs, got, want)
		}
	}
	f(nil, 0)
	f([]float64{3, 1, 2}, 2)
	f([]float64{4, 1, 3, 2}, 2.5)
	f([]float64{0.1, 0.2}, 0.15)
	xs := []float64{3, 1}
	Median(xs)
	if xs[0] != 3 {
		t.Error("Median sorted its argument")
	}
}
