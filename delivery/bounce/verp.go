package bounce

import (
	"errors"
	"fmt"
	"strings"

	"github.com/lodge-mail/lodge/internal/dnsname"
)

// ErrNotVERP is wrapped by ParseVERP's errors: the address is not one of
// this listener's VERP addresses.
var ErrNotVERP = errors.New("not a VERP address")

// verpPrefix starts every VERP local part.
const verpPrefix = "bounce+"

// MaxToken is the longest token: a local part has at most 64 octets
// (RFC 5321) and "bounce+" takes 7.
const MaxToken = 64 - len(verpPrefix)

// VERP returns the return path that names token: bounce+<token>@<domain>.
// A token is 1 to MaxToken letters, digits and . _ = - (no dot first,
// last or twice in a row, so that the local part is a dot-atom that
// needs no quoting). Mail systems keep a local part's case, but a few
// fold it: a token that means the same in any case is safest.
func VERP(token, domain string) (string, error) {
	if err := checkToken(token); err != nil {
		return "", err
	}
	d := strings.ToLower(domain)
	if !dnsname.Valid(d) {
		return "", fmt.Errorf("bounce: VERP domain %q is not a domain name", domain)
	}
	return verpPrefix + token + "@" + d, nil
}

// ParseVERP returns the token of addr when it is a VERP address at
// domain: bounce+<token>@<domain>, angle brackets allowed, the prefix and
// the domain in any case, the token as it was written. Anything else is
// an error wrapping ErrNotVERP.
func ParseVERP(addr, domain string) (string, error) {
	a := strings.TrimSpace(addr)
	if strings.HasPrefix(a, "<") && strings.HasSuffix(a, ">") {
		a = a[1 : len(a)-1]
	}
	at := strings.LastIndexByte(a, '@')
	if at < 0 {
		return "", fmt.Errorf("bounce: %q has no domain: %w", clip(addr), ErrNotVERP)
	}
	local, d := a[:at], a[at+1:]
	if !dnsname.Valid(strings.ToLower(domain)) {
		return "", fmt.Errorf("bounce: VERP domain %q is not a domain name: %w", clip(domain), ErrNotVERP)
	}
	if !strings.EqualFold(d, domain) {
		return "", fmt.Errorf("bounce: %q is not at %s: %w", clip(addr), domain, ErrNotVERP)
	}
	if len(local) < len(verpPrefix) || !strings.EqualFold(local[:len(verpPrefix)], verpPrefix) {
		return "", fmt.Errorf("bounce: %q does not start with %s: %w", clip(addr), verpPrefix, ErrNotVERP)
	}
	token := local[len(verpPrefix):]
	if err := checkToken(token); err != nil {
		return "", fmt.Errorf("%v: %w", err, ErrNotVERP)
	}
	return token, nil
}

func checkToken(t string) error {
	if t == "" || len(t) > MaxToken {
		return fmt.Errorf("bounce: VERP token %q: 1 to %d characters", clip(t), MaxToken)
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._=-", c) >= 0) {
			return fmt.Errorf("bounce: VERP token %q: byte %d (%q) is not a letter, digit or . _ = -", clip(t), i, c)
		}
	}
	if t[0] == '.' || t[len(t)-1] == '.' || strings.Contains(t, "..") {
		return fmt.Errorf("bounce: VERP token %q: a dot first, last or twice in a row", clip(t))
	}
	return nil
}

// clip shortens s for an error message.
func clip(s string) string {
	if len(s) > 100 {
		return s[:100] + "…"
	}
	return s
}
