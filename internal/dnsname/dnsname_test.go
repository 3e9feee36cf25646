package dnsname

import "testing"

func TestValid(t *testing.T) {
	f := func(s string, want bool) {
		t.Helper()
		if got := Valid(s); got != want {
			t.Errorf("Valid(%q) = %v, want %v", s, got, want)
		}
	}
	f("example.com.au", true)
	f("fax-gw.example.com", true)
	f("localhost", true)
	f("x1.b2", true)
	f("", false)
	f(".example.com", false)
	f("example..com", false)
	f("example.com.", false)
	f("-a.example.com", false)
	f("a-.example.com", false)
	f("Example.com", false) // callers lower-case first
	f("exa_mple.com", false)
	f("exa mple.com", false)
	f(string(make([]byte, 64))+".com", false)
}
