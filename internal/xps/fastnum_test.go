package xps

import (
	"math"
	"strconv"
	"testing"
)

// TestFastNum: fastNum gives strconv.ParseFloat's value or declines.
func TestFastNum(t *testing.T) {
	f := func(s string, fast int) {
		t.Helper()
		v, ok := fastNum(s)
		if (fast == 1) != ok && fast >= 0 {
			t.Fatalf("fastNum(%q) ok = %v, want %v", s, ok, fast == 1)
		}
		if !ok {
			return
		}
		want, err := strconv.ParseFloat(s, 64)
		if err != nil || math.Float64bits(v) != math.Float64bits(want) {
			t.Fatalf("fastNum(%q) = %v, ParseFloat %v (%v)", s, v, want, err)
		}
	}
	f("63.18", 1)
	f("0", 1)
	f("-12", 1)
	f("0.1", 1)
	f("-0.00000000000001", 1)
	f("-0.000000000000001", 0) // 16 digits
	f("999999999999999", 0)    // above maxNumber
	f("123456789.123456", 1)
	f("1234567890123456", 0) // 16 digits
	f("1e3", 0)
	f("+1", 0)
	f(".5", 1)
	f("5.", 1)
	f(".", 0)
	f("-", 0)
	f("", 0)
	f("1.2.3", 0)
	f("NaN", 0)
	for i := 0; i < 100000; i++ {
		f(strconv.FormatFloat(float64(i)*0.0137, 'f', -1, 64), -1) // may decline; a value must be exact
	}
}
