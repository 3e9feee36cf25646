package bounce

import (
	"errors"
	"strings"
	"testing"
)

func TestVERP(t *testing.T) {
	ok := func(token, domain, want string) {
		t.Helper()
		got, err := VERP(token, domain)
		if err != nil || got != want {
			t.Errorf("VERP(%q, %q) = %q, %v; want %q", token, domain, got, err, want)
			return
		}
		back, err := ParseVERP(got, domain)
		if err != nil || back != token {
			t.Errorf("ParseVERP(%q) = %q, %v; want %q", got, back, err, token)
		}
	}
	ok("ABCDEFGHJKMNPQRSTVWXYZ234567.12", "bounces.lodge.example", "bounce+ABCDEFGHJKMNPQRSTVWXYZ234567.12@bounces.lodge.example")
	ok("a", "Bounces.Lodge.Example", "bounce+a@bounces.lodge.example")
	ok("x_y=z-1", "b.example", "bounce+x_y=z-1@b.example")
	ok(strings.Repeat("t", MaxToken), "b.example", "bounce+"+strings.Repeat("t", MaxToken)+"@b.example")

	bad := func(token, domain, wantInErr string) {
		t.Helper()
		got, err := VERP(token, domain)
		if err == nil || !strings.Contains(err.Error(), wantInErr) {
			t.Errorf("VERP(%q, %q) = %q, %v; want an error saying %q", token, domain, got, err, wantInErr)
		}
	}
	bad("", "b.example", "1 to 57")
	bad(strings.Repeat("t", MaxToken+1), "b.example", "1 to 57")
	bad("a@b", "b.example", `byte 1 ('@')`)
	bad("a+b", "b.example", `byte 1 ('+')`)
	bad("a\r\nRCPT", "b.example", `byte 1 ('\r')`)
	bad("a b", "b.example", "byte 1")
	bad(".a", "b.example", "a dot first")
	bad("a.", "b.example", "a dot first")
	bad("a..b", "b.example", "twice in a row")
	bad("a", "", "not a domain name")
	bad("a", "b example", "not a domain name")
	bad("a", "b.example>", "not a domain name")
}

func TestParseVERP(t *testing.T) {
	ok := func(addr, want string) {
		t.Helper()
		got, err := ParseVERP(addr, "bounces.lodge.example")
		if err != nil || got != want {
			t.Errorf("ParseVERP(%q) = %q, %v; want %q", addr, got, err, want)
		}
	}
	ok("bounce+ABC.7@bounces.lodge.example", "ABC.7")
	ok("<bounce+ABC.7@bounces.lodge.example>", "ABC.7")
	ok(" BOUNCE+ABC.7@BOUNCES.LODGE.EXAMPLE ", "ABC.7")
	ok("Bounce+abc.7@bounces.lodge.example", "abc.7")

	bad := func(addr, domain string) {
		t.Helper()
		got, err := ParseVERP(addr, domain)
		if !errors.Is(err, ErrNotVERP) {
			t.Errorf("ParseVERP(%q, %q) = %q, %v; want ErrNotVERP", addr, domain, got, err)
		}
	}
	d := "bounces.lodge.example"
	bad("", d)
	bad("<>", d)
	bad("postmaster@bounces.lodge.example", d)
	bad("bounce@bounces.lodge.example", d)
	bad("bounce+@bounces.lodge.example", d)
	bad("bounce+ABC@other.example", d)
	bad("bounce+ABC@bounces.lodge.example.evil.example", d)
	bad("bounce+ABC@sub.bounces.lodge.example", d)
	bad("bounce+A@B@bounces.lodge.example", d)
	bad("bounce+A B@bounces.lodge.example", d)
	bad("bounce+A\r\n@bounces.lodge.example", d)
	bad("bounce+"+strings.Repeat("t", MaxToken+1)+"@bounces.lodge.example", d)
	bad("bounce+ABC@", "")
	bad("bounce+ABC", d)
}

// FuzzParseVERP: a token ParseVERP returns makes, with VERP, an address
// that reads back to it.
func FuzzParseVERP(f *testing.F) {
	f.Add("bounce+ABC.7@bounces.lodge.example", "bounces.lodge.example")
	f.Add("<BOUNCE+x@B.example>", "b.example")
	f.Add("bounce+a@b@c", "c")
	f.Fuzz(func(t *testing.T, addr, domain string) {
		tok, err := ParseVERP(addr, domain)
		if err != nil {
			if !errors.Is(err, ErrNotVERP) {
				t.Fatalf("ParseVERP(%q, %q): %v is not ErrNotVERP", addr, domain, err)
			}
			return
		}
		a, err := VERP(tok, domain)
		if err != nil {
			t.Fatalf("ParseVERP(%q, %q) = %q, which VERP refuses: %v", addr, domain, tok, err)
		}
		if back, err := ParseVERP(a, domain); err != nil || back != tok {
			t.Fatalf("round trip of %q: %q, %v", tok, back, err)
		}
	})
}
