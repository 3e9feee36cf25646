package email

import (
	"errors"
	"fmt"
	"strings"

	"github.com/lodge-mail/lodge/internal/dnsname"
)

// ErrFaxNumber is wrapped by FaxTo's errors: the number cannot be dialled
// as given.
var ErrFaxNumber = errors.New("invalid fax number")

// FaxTo returns the address that faxes a letter to number through the
// email-to-fax gateway at gatewayDomain: the number as E.164 digits
// without the plus (the form email-to-fax gateways take as the local
// part) at the domain. The number may be written
//
//	+61 2 9374 4000     international, with the plus (8 to 15 digits)
//	0011 61 2 9374 4000 international, with Australia's exit code
//	(02) 9374-4000      Australian national: 0, an area code 2, 3, 7 or
//	                    8, eight digits; becomes 61 and the nine digits
//	61293744000         already E.164 digits (61 and nine digits)
//
// with spaces, hyphens, dots and parentheses as separators. Anything else
// (letters, an extension, a local number without its area code, a mobile
// number, digits that are no E.164 number) is an error wrapping
// ErrFaxNumber that quotes the number.
func FaxTo(number, gatewayDomain string) (string, error) {
	digits, err := faxDigits(number)
	if err != nil {
		return "", err
	}
	domain := strings.ToLower(strings.TrimSpace(gatewayDomain))
	if !dnsname.Valid(domain) {
		return "", fmt.Errorf("email: fax gateway domain %q is not a domain name", gatewayDomain)
	}
	return digits + "@" + domain, nil
}

func faxDigits(number string) (string, error) {
	bad := func(why string) error {
		return fmt.Errorf("email: fax number %q: %s: %w", truncate(number, 64), why, ErrFaxNumber)
	}
	if len(number) > 64 {
		return "", bad("longer than 64 characters")
	}
	plus := false
	var b strings.Builder
	for i, r := range strings.TrimSpace(number) {
		switch {
		case r >= '0' && r <= '9':
			b.WriteRune(r)
		case r == '+' && i == 0:
			plus = true
		case r == ' ' || r == '-' || r == '.' || r == '(' || r == ')':
		default:
			return "", bad(fmt.Sprintf("%q is not a digit or a separator", r))
		}
	}
	d := b.String()
	var e164 string
	switch {
	case plus:
		e164 = d
	case strings.HasPrefix(d, "0011"):
		e164 = d[4:]
	case strings.HasPrefix(d, "0"):
		if len(d) != 10 || !strings.ContainsRune("2378", rune(d[1])) {
			return "", bad("an Australian national number is 0, an area code 2, 3, 7 or 8 and eight digits")
		}
		e164 = "61" + d[1:]
	case strings.HasPrefix(d, "61") && len(d) == 11:
		e164 = d
	default:
		return "", bad("give it with + and the country code, or in Australian national form (0 and the area code)")
	}
	if len(e164) < 8 || len(e164) > 15 {
		return "", bad(fmt.Sprintf("%d digits after the country code's start; E.164 numbers have 8 to 15", len(e164)))
	}
	if e164[0] == '0' {
		return "", bad("a country code does not start with 0")
	}
	if strings.HasPrefix(e164, "61") && len(e164) == 11 && e164[2] == '4' {
		return "", bad("an Australian mobile number takes no faxes")
	}
	return e164, nil
}

// truncate shortens s for an error message.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
