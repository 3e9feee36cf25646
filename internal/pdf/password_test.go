package pdf

import (
	"strings"
	"testing"
)

// TestCheckPassword: the passwords a PDF for people can take.
func TestCheckPassword(t *testing.T) {
	f := func(pw, want string) {
		t.Helper()
		if got := CheckPassword(pw); !strings.Contains(got, want) || (want == "") != (got == "") {
			t.Errorf("%q: %q, want %q", pw, got, want)
		}
	}
	f("a", "")
	f(" spaces inside and around ", "")
	f("ünïcödé ✓", "")
	f(strings.Repeat("x", 127), "")
	f(strings.Repeat("ü", 63), "")
	f(strings.Repeat("ü", 64), "128 bytes")
	f(strings.Repeat("p", 1<<20), "1048576 bytes")
	f("", "empty")
	f("tab\there", "control")
	f("line\nbreak", "control")
	f("del\x7f", "control")
	f("nul\x00", "control")
	f("\xc3", "UTF-8")
}
