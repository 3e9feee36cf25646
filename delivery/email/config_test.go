package email

import (
	"strings"
	"testing"
)

func TestParseURL(t *testing.T) {
	ok := func(raw string, want server) {
		t.Helper()
		got, err := parseURL(raw)
		if err != nil {
			t.Errorf("parseURL(%q): %v", raw, err)
			return
		}
		got.redacted = ""
		if got != want {
			t.Errorf("parseURL(%q) = %+v, want %+v", raw, got, want)
		}
	}
	ok("smtp://mail.example.com", server{addr: "mail.example.com:587", host: "mail.example.com"})
	ok("smtps://mail.example.com", server{addr: "mail.example.com:465", host: "mail.example.com", implicitTLS: true})
	ok("smtp://u%40x:p%3Aw%2F@mail.example.com:2525?tls=required",
		server{addr: "mail.example.com:2525", host: "mail.example.com", requireTLS: true, user: "u@x", pass: "p:w/", auth: true})
	ok("smtp://u:p@127.0.0.1:1025?insecure_auth=1",
		server{addr: "127.0.0.1:1025", host: "127.0.0.1", user: "u", pass: "p", auth: true, insecure: true})
	ok("smtp://[::1]:25/", server{addr: "[::1]:25", host: "::1"})

	bad := func(raw, wantInErr string) {
		t.Helper()
		_, err := parseURL(raw)
		if err == nil || !strings.Contains(err.Error(), wantInErr) {
			t.Errorf("parseURL(%q) = %v, want an error saying %q", raw, err, wantInErr)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("parseURL(%q)'s error shows the password: %v", raw, err)
		}
	}
	bad("", "no server URL")
	bad("http://u:secret@mail.example.com", `scheme "http"`)
	bad("mail.example.com:25", "scheme")
	bad("smtp://u:secret@", "no host")
	bad("smtp://u:secret@mail.example.com/path", "only scheme")
	bad("smtp://u:secret@mail.example.com?tls=yes", `tls="yes"`)
	bad("smtp://u:secret@mail.example.com?insecure_auth=maybe", "insecure_auth")
	bad("smtp://u:secret@mail.example.com?pool=9", `unknown parameter "pool"`)
	bad("smtp://u:secret@mail.example.com:99999999999", "not 1 to 65535")
	bad("smtp://u:secret@mail.example.com:0", "not 1 to 65535")
	bad("smtp://u:secret@mail.example.com\r\n", "not a URL")
}
