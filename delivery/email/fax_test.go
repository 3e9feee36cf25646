package email_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/lodge-mail/lodge/delivery/email"
)

func TestFaxTo(t *testing.T) {
	ok := func(number, domain, want string) {
		t.Helper()
		got, err := email.FaxTo(number, domain)
		if err != nil || got != want {
			t.Errorf("FaxTo(%q, %q) = %q, %v; want %q", number, domain, got, err, want)
		}
	}
	ok("+61 2 9374 4000", "fax.example.net", "61293744000@fax.example.net")
	ok("(02) 9374-4000", "fax.example.net", "61293744000@fax.example.net")
	ok("02 9374 4000", "FAX.Example.NET", "61293744000@fax.example.net")
	ok("03.9123.4567", "fax.example.net", "61391234567@fax.example.net")
	ok("0011 44 20 7946 0958", "fax.example.net", "442079460958@fax.example.net")
	ok("+44 20 7946 0958", "fax.example.net", "442079460958@fax.example.net")
	ok("61293744000", "fax.example.net", "61293744000@fax.example.net")
	ok(" +1 (212) 555-0100 ", "f.example", "12125550100@f.example")

	bad := func(number, domain, wantInErr string) {
		t.Helper()
		got, err := email.FaxTo(number, domain)
		if err == nil || !strings.Contains(err.Error(), wantInErr) {
			t.Errorf("FaxTo(%q, %q) = %q, %v; want an error saying %q", number, domain, got, err, wantInErr)
		}
	}
	bad("", "fax.example.net", "give it with +")
	bad("9374 4000", "fax.example.net", "give it with +")            // no area code
	bad("0412 345 678", "fax.example.net", "area code 2, 3, 7 or 8") // a mobile
	bad("+61 412 345 678", "fax.example.net", "mobile")
	bad("02 9374 400", "fax.example.net", "eight digits")
	bad("+61 2 9374 4000 ext 12", "fax.example.net", "not a digit")
	bad("+61 2 9374\r\n4000", "fax.example.net", "not a digit")
	bad("61+293744000", "fax.example.net", "not a digit")
	bad("+0 2 9374 4000", "fax.example.net", "start with 0")
	bad("+1234567", "fax.example.net", "8 to 15")
	bad("+1234567890123456", "fax.example.net", "8 to 15")
	bad(strings.Repeat("1", 65), "fax.example.net", "longer than 64")
	bad("02 9374 4000", "", "not a domain name")
	bad("02 9374 4000", "fax example.net", "not a domain name")
	bad("02 9374 4000", "fax.example.net>\r\nBcc: x", "not a domain name")
	bad("02 9374 4000", "-fax.example.net", "not a domain name")

	if _, err := email.FaxTo("not a number", "fax.example.net"); !errors.Is(err, email.ErrFaxNumber) {
		t.Errorf("error %v does not wrap ErrFaxNumber", err)
	}
}
