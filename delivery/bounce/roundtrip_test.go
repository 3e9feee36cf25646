package bounce

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/lodge-mail/lodge/delivery/email"
	"github.com/lodge-mail/lodge/internal/mailpittest"
)

// TestRoundTrip: a letter sent by the Mailer with a VERP return path
// arrives at Mailpit with it; the report a mail system would write about
// it (RFC 3464, the returned headers being the ones Mailpit received),
// sent to that return path, reaches the Handler with the letter's token
// and Message-ID.
func TestRoundTrip(t *testing.T) {
	mp := mailpittest.Start(t, mailpittest.Options{})
	m, err := email.New(email.Config{URL: mp.URL()})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	rp, err := VERP("ABCDEFGHJKMNPQRSTVWXYZ234567.12", domain)
	if err != nil {
		t.Fatal(err)
	}
	err = m.Send(context.Background(), email.Message{MessageID: "L12.ABC@lodge.example", From: "billing@acme.example",
		To: "nobody@example.org", Subject: "Statement", Text: "hello", ReturnPath: rp})
	if err != nil {
		t.Fatal(err)
	}
	got := mp.Message(t, mp.WaitCount(t, 1)[0].ID)
	if got.ReturnPath != rp {
		t.Fatalf("Return-Path %q, want %q", got.ReturnPath, rp)
	}
	raw := mp.Raw(t, got.ID)
	headers, _, _ := bytes.Cut(raw, []byte("\r\n\r\n"))

	var dsn strings.Builder
	fmt.Fprintf(&dsn, "From: Mail Delivery System <MAILER-DAEMON@mx.example.org>\r\nTo: %s\r\n", got.ReturnPath)
	dsn.WriteString("Subject: Undelivered Mail Returned to Sender\r\nAuto-Submitted: auto-replied\r\nMIME-Version: 1.0\r\n")
	dsn.WriteString("Content-Type: multipart/report; report-type=delivery-status; boundary=\"rt\"\r\n\r\n")
	dsn.WriteString("--rt\r\nContent-Type: text/plain\r\n\r\nYour message could not be delivered.\r\n")
	dsn.WriteString("--rt\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; mx.example.org\r\n\r\n")
	dsn.WriteString("Final-Recipient: rfc822; nobody@example.org\r\nAction: failed\r\nStatus: 5.1.1\r\n")
	dsn.WriteString("Diagnostic-Code: smtp; 550 5.1.1 No such user\r\n")
	dsn.WriteString("--rt\r\nContent-Type: text/rfc822-headers\r\n\r\n")
	dsn.Write(headers)
	dsn.WriteString("\r\n--rt--\r\n")

	var c collector
	addr := start(t, Config{Domain: domain, Handler: c.handle})
	if err := send(t, addr, []string{got.ReturnPath}, []byte(dsn.String())); err != nil {
		t.Fatal(err)
	}
	want := Bounce{Token: "ABCDEFGHJKMNPQRSTVWXYZ234567.12", Permanent: true, Action: "failed", Status: "5.1.1",
		Diagnostic: "550 5.1.1 No such user", Recipient: "nobody@example.org", MessageID: "L12.ABC@lodge.example",
		ReportingMTA: "mx.example.org"}
	if b := c.take(); len(b) != 1 || b[0] != want {
		t.Errorf("handler got %+v, want [%+v]", b, want)
	}
}
