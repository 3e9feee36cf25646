package jsondepth

import (
	"strings"
	"testing"
)

func TestExceeds(t *testing.T) {
	f := func(in string, max, want int) {
		t.Helper()
		if got := Exceeds([]byte(in), max); got != want {
			t.Errorf("Exceeds(%.40q, %d) = %d, want %d", in, max, got, want)
		}
	}
	f(``, 1, -1)
	f(`{}`, 1, -1)
	f(`{}`, 0, 0)
	f(`[[1]]`, 2, -1)
	f(`[[1]]`, 1, 1)
	f(`{"a":[{"b":1}]}`, 2, 6)
	f(`["[[[[", "{{{{"]`, 1, -1)          // brackets in strings do not count
	f(`["\"[[[["]`, 1, -1)                // nor after an escaped quote
	f(`["\\", [[1]]]`, 2, 8)              // an escaped backslash ends the escape
	f(`]]]]][[`, 1, 6)                    // unbalanced closing brackets only lower the depth
	f(strings.Repeat("[", 10000), 32, 32) // deep input: the first bracket too deep
	f(`"unterminated [[[`, 0, -1)
}

func FuzzExceeds(f *testing.F) {
	f.Add([]byte(`{"a":[1,{"b":"[["}]}`), 2)
	f.Add([]byte(strings.Repeat("{", 100)), 10)
	f.Fuzz(func(t *testing.T, b []byte, max int) {
		if off := Exceeds(b, max); off >= len(b) || off < -1 || (off >= 0 && b[off] != '[' && b[off] != '{') {
			t.Fatalf("offset %d of %d bytes", off, len(b))
		}
	})
}
