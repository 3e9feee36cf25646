package email

import (
	"bufio"
	"bytes"
	"errors"
	"mime"
	"net/mail"
	"net/textproto"
	"strings"
	"testing"

	"github.com/lodge-mail/lodge/internal/testenv"
)

// FuzzCompose: whatever the caller's text, a Message is either refused
// (ErrInvalid) or written with exactly the header fields it should have,
// the subject, addresses and extra header reading back as given: no
// input adds a field, a recipient or a part of its own.
func FuzzCompose(f *testing.F) {
	testenv.LimitMinimization(f, "5s")
	f.Add("id@lodge.example", "Acme <billing@acme.example>", "jane@example.com", "Your statement", "X-Note", "hello", "text")
	f.Add("id@x", "billing@acme.example", "Jane <jane@example.com>", "Statement\r\nBcc: x@evil.example", "X-Note", "a\r\nBcc: y", "body\r\n.\r\nMAIL FROM:<x>")
	f.Add("a@b", "Société <s@x.example>", "\"Q, R\" <q@x.example>", "日本語 "+strings.Repeat("long ", 40), "List-Unsubscribe", "<https://x.example/u>", "")
	f.Add("a@b", "=?UTF-8?Q?x?= <a@b.example>", "a@b.example", "=?UTF-8?B?QmNjOiB4?=", "X-A", "=?UTF-8?Q?=0D=0ABcc:_x?=", "")
	f.Fuzz(func(t *testing.T, id, from, to, subject, hname, hvalue, text string) {
		m := Message{MessageID: id, From: from, To: to, Subject: subject, Text: text,
			Headers: map[string]string{hname: hvalue}}
		var buf bytes.Buffer
		env, err := compose(&m, nil, DKIM{}, &buf)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("compose: %v is not ErrInvalid", err)
			}
			return
		}
		msg, err := mail.ReadMessage(&buf)
		if err != nil {
			t.Fatalf("the message written does not parse: %v\n%s", err, buf.String())
		}
		allowed := map[string]bool{"From": true, "To": true, "Subject": true, "Date": true, "Message-Id": true,
			"Mime-Version": true, "Content-Type": true, "Content-Transfer-Encoding": true}
		allowed[textproto.CanonicalMIMEHeaderKey(hname)] = true
		for k, v := range msg.Header {
			if !allowed[k] {
				t.Fatalf("unexpected header field %s: %q", k, v)
			}
			if len(v) != 1 {
				t.Fatalf("header field %s %d times: %q", k, len(v), v)
			}
		}
		var dec mime.WordDecoder
		// A header's leading and trailing white space is not part of its
		// value (RFC 5322 unfolding); the rest must read back.
		if got, err := dec.DecodeHeader(msg.Header.Get("Subject")); err != nil || strings.TrimSpace(got) != strings.TrimSpace(subject) {
			t.Fatalf("Subject reads back %q (%v), want %q", got, err, subject)
		}
		if got, err := dec.DecodeHeader(msg.Header.Get(hname)); err != nil || strings.TrimSpace(got) != strings.TrimSpace(hvalue) {
			t.Fatalf("%s reads back %q (%v), want %q", hname, got, err, hvalue)
		}
		if got := msg.Header.Get("Message-Id"); got != "<"+id+">" {
			t.Fatalf("Message-ID %q, want <%s>", got, id)
		}
		tos, err := msg.Header.AddressList("To")
		if err != nil || len(tos) != 1 || tos[0].Address != env.to {
			t.Fatalf("To %q reads as %v (%v), want only %s", msg.Header.Get("To"), tos, err, env.to)
		}
		froms, err := msg.Header.AddressList("From")
		if err != nil || len(froms) != 1 || froms[0].Address != env.from {
			t.Fatalf("From %q reads as %v (%v), want only %s", msg.Header.Get("From"), froms, err, env.from)
		}
	})
}

// FuzzFaxTo: an address FaxTo makes is E.164 digits at the domain.
func FuzzFaxTo(f *testing.F) {
	for _, s := range []string{"+61 2 9374 4000", "(02) 9374-4000", "0011 44 20 7946 0958", "61293744000", "+", "0", "0011"} {
		f.Add(s, "fax.example.net")
	}
	f.Fuzz(func(t *testing.T, number, domain string) {
		addr, err := FaxTo(number, domain)
		if err != nil {
			return
		}
		local, d, ok := strings.Cut(addr, "@")
		if !ok || d != strings.ToLower(strings.TrimSpace(domain)) || len(local) < 8 || len(local) > 15 || local[0] == '0' {
			t.Fatalf("FaxTo(%q, %q) = %q", number, domain, addr)
		}
		for _, c := range local {
			if c < '0' || c > '9' {
				t.Fatalf("FaxTo(%q, %q) = %q", number, domain, addr)
			}
		}
	})
}

// FuzzWriteData: the DATA bytes written end with the terminating line,
// have CRLF line ends and no other line that is a lone dot; and they are
// the ones textproto's DotWriter (what go-mail's Data uses) writes for
// the same message, unless the message has a CR CR sequence, where
// DotWriter adds a CR by the parity of the CRs (go-mail writes none).
func FuzzWriteData(f *testing.F) {
	for _, s := range []string{"a\r\nb\r\n", ".\r\n", "a\n.b\n", "..\r\n.\r\n", "x\r", "x\r\r\n", "\n", "a\r\n\r\n.", "no end"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if len(body) == 0 {
			return // never sent: a message has a header
		}
		var got bytes.Buffer
		writeData(&got, body)
		out := got.Bytes()
		if !bytes.HasSuffix(out, []byte("\r\n.\r\n")) {
			t.Fatalf("writeData(%q) = %q: no terminating line", body, out)
		}
		for i, c := range out {
			if c == '\n' && (i == 0 || out[i-1] != '\r') {
				t.Fatalf("writeData(%q) = %q: a bare LF at %d", body, out, i)
			}
		}
		lines := bytes.Split(out[:len(out)-len("\r\n.\r\n")], []byte("\r\n"))
		for _, l := range lines {
			if bytes.Equal(l, []byte(".")) {
				t.Fatalf("writeData(%q) = %q: a lone dot ends the message early", body, out)
			}
		}
		if bytes.Contains(body, []byte("\r\r")) {
			return
		}
		var want bytes.Buffer
		bw := bufio.NewWriter(&want)
		dw := textproto.NewWriter(bw).DotWriter()
		dw.Write(body)
		dw.Close()
		if !bytes.Equal(out, want.Bytes()) {
			t.Fatalf("writeData(%q) = %q, DotWriter writes %q", body, out, want.Bytes())
		}
	})
}
