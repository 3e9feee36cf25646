package email_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/emersion/go-msgauth/dkim"
	gosmtp "github.com/emersion/go-smtp"

	"github.com/lodge-mail/lodge/delivery/email"
	"github.com/lodge-mail/lodge/internal/mailpittest"
)

func newMailer(t *testing.T, cfg email.Config) *email.Mailer {
	t.Helper()
	m, err := email.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func message(id string) email.Message {
	return email.Message{
		MessageID: id + "@lodge.example",
		From:      "Acme Billing <billing@acme.example>",
		To:        "Jane Citizen <jane@example.com>",
		Subject:   "Your statement",
		Text:      "Dear Jane,\n\nyour statement is attached.\n",
	}
}

// only returns the one message Mailpit holds, in full.
func only(t *testing.T, mp *mailpittest.Server) mailpittest.Message {
	t.Helper()
	list := mp.WaitCount(t, 1)
	if len(list) != 1 {
		t.Fatalf("mailpit holds %d messages, want 1", len(list))
	}
	return mp.Message(t, list[0].ID)
}

func TestSendPlain(t *testing.T) {
	mp := mailpittest.Start(t, mailpittest.Options{})
	m := newMailer(t, email.Config{URL: mp.URL()})
	msg := message("plain-1")
	msg.ReturnPath = "bounce+L42.7@bounces.lodge.example"
	msg.Headers = map[string]string{
		"List-Unsubscribe":      "<https://lodge.example/unsub/L42>",
		"List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
	}
	if err := m.Send(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
	got := only(t, mp)
	if got.MessageID != "plain-1@lodge.example" {
		t.Errorf("Message-ID %q", got.MessageID)
	}
	if got.ReturnPath != "bounce+L42.7@bounces.lodge.example" {
		t.Errorf("Return-Path %q, want the VERP address", got.ReturnPath)
	}
	if got.From == nil || got.From.Address != "billing@acme.example" || got.From.Name != "Acme Billing" {
		t.Errorf("From %+v", got.From)
	}
	if len(got.To) != 1 || got.To[0].Address != "jane@example.com" || got.To[0].Name != "Jane Citizen" {
		t.Errorf("To %+v", got.To)
	}
	if got.Subject != "Your statement" {
		t.Errorf("Subject %q", got.Subject)
	}
	if strings.ReplaceAll(got.Text, "\r\n", "\n") != msg.Text {
		t.Errorf("Text %q, want %q", got.Text, msg.Text)
	}
	if got.HTML != "" || len(got.Attachments) != 0 {
		t.Errorf("a plain message came with HTML %q or attachments %v", got.HTML, got.Attachments)
	}
	h := mp.Headers(t, got.ID)
	if v := h["List-Unsubscribe"]; len(v) != 1 || v[0] != "<https://lodge.example/unsub/L42>" {
		t.Errorf("List-Unsubscribe %q", v)
	}
	if v := h["List-Unsubscribe-Post"]; len(v) != 1 || v[0] != "List-Unsubscribe=One-Click" {
		t.Errorf("List-Unsubscribe-Post %q", v)
	}
	if len(h["Date"]) != 1 {
		t.Errorf("Date %q", h["Date"])
	}
	if ct := strings.Join(h["Content-Type"], ""); !strings.HasPrefix(ct, "text/plain") || !strings.Contains(strings.ToLower(ct), "utf-8") {
		t.Errorf("Content-Type %q", ct)
	}
}

// TestDotLines: lines that are or start with a dot, which SMTP's DATA
// doubles, arrive as written, in the text and in the HTML.
func TestDotLines(t *testing.T) {
	mp := mailpittest.Start(t, mailpittest.Options{})
	m := newMailer(t, email.Config{URL: mp.URL()})
	msg := message("dots")
	msg.Text = ".\n..\n.leading dot\nmiddle . dot\n.\n"
	msg.HTML = ".<p>x</p>\n.\n"
	if err := m.Send(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
	got := only(t, mp)
	if text := strings.ReplaceAll(got.Text, "\r\n", "\n"); text != msg.Text {
		t.Errorf("Text %q, want %q", text, msg.Text)
	}
	if html := strings.ReplaceAll(got.HTML, "\r\n", "\n"); html != msg.HTML {
		t.Errorf("HTML %q, want %q", html, msg.HTML)
	}
}

func TestSendHTMLAndAttachments(t *testing.T) {
	mp := mailpittest.Start(t, mailpittest.Options{})
	m := newMailer(t, email.Config{URL: mp.URL()})

	// Every byte value, and a PDF-like file, so that a transfer encoding
	// that loses or changes a byte is seen.
	all := make([]byte, 256*4)
	for i := range all {
		all[i] = byte(i)
	}
	pdf := append([]byte("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n"), bytes.Repeat([]byte("stream\r\n\x00\xff.\r\n.\n"), 5000)...)
	path := filepath.Join(t.TempDir(), "letter.pdf")
	if err := os.WriteFile(path, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	msg := message("html-1")
	msg.HTML = "<p>Dear Jane,</p><p>your <b>statement</b> is attached.</p>"
	msg.Attachments = []email.Attachment{
		{Name: "statement.pdf", ContentType: "application/pdf", Path: path},
		{Name: "bytes.bin", Data: all},
	}
	if err := m.Send(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
	got := only(t, mp)
	if !strings.Contains(got.HTML, "your <b>statement</b> is attached.") {
		t.Errorf("HTML %q", got.HTML)
	}
	if strings.ReplaceAll(got.Text, "\r\n", "\n") != msg.Text {
		t.Errorf("Text %q", got.Text)
	}
	if len(got.Attachments) != 2 {
		t.Fatalf("attachments %+v", got.Attachments)
	}
	want := []struct {
		name, ct string
		data     []byte
	}{{"statement.pdf", "application/pdf", pdf}, {"bytes.bin", "application/octet-stream", all}}
	for i, a := range got.Attachments {
		if a.FileName != want[i].name || a.ContentType != want[i].ct {
			t.Errorf("attachment %d: %s %s, want %s %s", i, a.FileName, a.ContentType, want[i].name, want[i].ct)
		}
		if b := mp.Part(t, got.ID, a.PartID); !bytes.Equal(b, want[i].data) {
			t.Errorf("attachment %s: %d bytes differ from the %d sent", a.FileName, len(b), len(want[i].data))
		}
	}
	raw := string(mp.Raw(t, got.ID))
	if !strings.Contains(raw, "multipart/alternative") || !strings.Contains(raw, "multipart/mixed") {
		t.Errorf("the message is not multipart/mixed with a multipart/alternative body:\n%s", raw[:min(len(raw), 2000)])
	}
}

func TestNonASCII(t *testing.T) {
	mp := mailpittest.Start(t, mailpittest.Options{})
	m := newMailer(t, email.Config{URL: mp.URL()})
	msg := message("utf8-1")
	msg.From = "Société Générale <billing@acme.example>"
	msg.Subject = "Relevé de compte — März 2026 — 日本語の件名 " + strings.Repeat("é", 100)
	msg.Text = "Grüße, 日本\n"
	msg.Headers = map[string]string{"X-Letter-Note": "Müller"}
	if err := m.Send(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
	got := only(t, mp)
	if got.Subject != msg.Subject {
		t.Errorf("Subject %q, want %q", got.Subject, msg.Subject)
	}
	if got.From == nil || got.From.Name != "Société Générale" {
		t.Errorf("From %+v", got.From)
	}
	if strings.ReplaceAll(got.Text, "\r\n", "\n") != msg.Text {
		t.Errorf("Text %q", got.Text)
	}
	raw := mp.Raw(t, got.ID)
	head, _, _ := bytes.Cut(raw, []byte("\r\n\r\n"))
	for i, c := range head {
		if c >= 0x80 {
			t.Fatalf("header byte %d is not ASCII (RFC 2047 encoding expected):\n%s", i, head)
		}
	}
	if !bytes.Contains(head, []byte("=?UTF-8?")) {
		t.Errorf("no encoded word in the header:\n%s", head)
	}

	// Text that looks like an encoded word is shown as written, not
	// decoded by the reader.
	mp.DeleteAll(t)
	msg = message("utf8-2")
	msg.Subject = "=?UTF-8?B?QmNjOiB4?= is how Bcc: x is encoded"
	if err := m.Send(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
	if got := only(t, mp); got.Subject != msg.Subject {
		t.Errorf("Subject %q, want %q", got.Subject, msg.Subject)
	}
}

// TestRefused: header injection and other invalid messages are refused
// before anything is sent, with an error naming the field.
func TestRefused(t *testing.T) {
	mp := mailpittest.Start(t, mailpittest.Options{})
	m := newMailer(t, email.Config{URL: mp.URL()})
	f := func(change func(*email.Message), wantInErr string) {
		t.Helper()
		msg := message("refused")
		change(&msg)
		err := m.Send(context.Background(), msg)
		if err == nil || !strings.Contains(err.Error(), wantInErr) {
			t.Errorf("Send = %v, want an error saying %q", err, wantInErr)
			return
		}
		if !errors.Is(err, email.ErrInvalid) || !email.IsPermanent(err) {
			t.Errorf("error %v: not ErrInvalid or not permanent", err)
		}
	}
	f(func(m *email.Message) { m.Subject = "Statement\r\nBcc: x@evil.example" }, "Subject: control character U+000D")
	f(func(m *email.Message) { m.Subject = "Statement\nBcc: x@evil.example" }, "Subject: control character U+000A")
	f(func(m *email.Message) { m.Subject = "a\x00b" }, "Subject: control character U+0000")
	f(func(m *email.Message) { m.Subject = "a\tb" }, "Subject: control character U+0009")
	f(func(m *email.Message) { m.Subject = "a\u0085b" }, "Subject: control character U+0085")
	f(func(m *email.Message) { m.Subject = "a\xffb" }, "Subject: not valid UTF-8")
	f(func(m *email.Message) { m.Subject = strings.Repeat("x", 1001) }, "Subject: 1001 characters")
	f(func(m *email.Message) { m.From = "billing@acme.example\r\nBcc: x@evil.example" }, "From: control character")
	f(func(m *email.Message) { m.From = "Acme\r\n <billing@acme.example>" }, "From: control character")
	f(func(m *email.Message) { m.To = "jane@example.com\nBcc: x@evil.example" }, "To: control character")
	f(func(m *email.Message) { m.To = "jane@example.com, x@evil.example" }, "To: ")
	f(func(m *email.Message) { m.To = "" }, "To: empty")
	f(func(m *email.Message) { m.To = "jane" }, "To: ")
	f(func(m *email.Message) { m.To = "jane@" }, "To: ")
	f(func(m *email.Message) { m.To = `"jane doe"@example.com` }, "To: ")
	f(func(m *email.Message) { m.ReturnPath = "bounce@x\r\nRCPT TO:<x@evil.example>" }, "ReturnPath: control character")
	f(func(m *email.Message) { m.MessageID = "" }, "Message-ID: empty")
	f(func(m *email.Message) { m.MessageID = "a@b>\r\nBcc: x" }, "Message-ID")
	f(func(m *email.Message) { m.MessageID = "<a@b>" }, "Message-ID")
	f(func(m *email.Message) { m.MessageID = "no-at-sign" }, "not local@domain")
	f(func(m *email.Message) { m.MessageID = "a b@c" }, "Message-ID")
	f(func(m *email.Message) { m.MessageID = strings.Repeat("a", 250) + "@b" }, "longer than 250")
	f(func(m *email.Message) { m.Headers = map[string]string{"X-Note": "a\r\nBcc: x@evil.example"} }, "header X-Note: control character")
	f(func(m *email.Message) { m.Headers = map[string]string{"X-Note\r\nBcc": "x"} }, "header name")
	f(func(m *email.Message) { m.Headers = map[string]string{"X Note": "x"} }, "header name")
	f(func(m *email.Message) { m.Headers = map[string]string{"X-Note:": "x"} }, "header name")
	f(func(m *email.Message) { m.Headers = map[string]string{"": "x"} }, "header name")
	f(func(m *email.Message) { m.Headers = map[string]string{"bcc": "x@evil.example"} }, "bcc is written by the mailer")
	f(func(m *email.Message) { m.Headers = map[string]string{"Content-Type": "text/html"} }, "Content-Type is written by the mailer")
	f(func(m *email.Message) { m.Headers = map[string]string{"X-Long": strings.Repeat("a", 999)} }, "999 bytes")
	f(func(m *email.Message) {
		m.Headers = map[string]string{}
		for i := range 51 {
			m.Headers[fmt.Sprintf("X-H%d", i)] = "v"
		}
	}, "51 fields")
	f(func(m *email.Message) { m.Text = "a\xffb" }, "Text: not valid UTF-8")
	f(func(m *email.Message) { m.HTML = "a\xffb" }, "HTML: not valid UTF-8")
	f(func(m *email.Message) { m.Attachments = []email.Attachment{{Name: "a\r\n.pdf", Data: []byte("x")}} }, "attachment 1 name: control character")
	f(func(m *email.Message) { m.Attachments = []email.Attachment{{Name: "../a.pdf", Data: []byte("x")}} }, "no slash")
	f(func(m *email.Message) { m.Attachments = []email.Attachment{{Name: "", Data: []byte("x")}} }, "attachment 1: name")
	f(func(m *email.Message) { m.Attachments = []email.Attachment{{Name: "a.pdf"}} }, "exactly one of Path and Data")
	f(func(m *email.Message) {
		m.Attachments = []email.Attachment{{Name: "a.pdf", Data: []byte("x"), Path: "/etc/hostname"}}
	}, "exactly one of Path and Data")
	f(func(m *email.Message) {
		m.Attachments = []email.Attachment{{Name: "a.pdf", ContentType: "application/pdf\r\nBcc: x", Data: []byte("x")}}
	}, "content type: control character")
	f(func(m *email.Message) {
		m.Attachments = []email.Attachment{{Name: "a.pdf", ContentType: "pdf", Data: []byte("x")}}
	}, "content type")
	f(func(m *email.Message) { m.Attachments = make([]email.Attachment, 101) }, "101, at most 100")

	// A missing attachment file is an error (not a letter sent without
	// its PDF), and not a permanent one: the file may be restored.
	msg := message("missing")
	msg.Attachments = []email.Attachment{{Name: "a.pdf", Path: filepath.Join(t.TempDir(), "gone.pdf")}}
	if err := m.Send(context.Background(), msg); err == nil || !errors.Is(err, os.ErrNotExist) || email.IsPermanent(err) {
		t.Errorf("missing attachment: %v", err)
	}

	// A valid message goes through the same Mailer: the refusals were
	// refusals, not a broken Mailer. Then nothing but it arrived.
	if err := m.Send(context.Background(), message("valid")); err != nil {
		t.Fatal(err)
	}
	if got := only(t, mp); got.MessageID != "valid@lodge.example" {
		t.Errorf("mailpit holds %q", got.MessageID)
	}
}

func TestSTARTTLSAndAuth(t *testing.T) {
	mp := mailpittest.Start(t, mailpittest.Options{TLS: true, User: "lodge", Password: "p@ss:w/rd"})
	url := "smtp://lodge:p%40ss%3Aw%2Frd@" + mp.SMTPAddr + "?tls=required"
	m := newMailer(t, email.Config{URL: url, RootCAs: mp.RootCAs})
	if err := m.Send(context.Background(), message("tls-1")); err != nil {
		t.Fatal(err)
	}
	if got := only(t, mp); got.MessageID != "tls-1@lodge.example" {
		t.Errorf("Message-ID %q", got.MessageID)
	}

	f := func(cfg email.Config, stage, wantInErr string) {
		t.Helper()
		err := newMailer(t, cfg).Send(context.Background(), message("refused"))
		var e *email.Error
		if !errors.As(err, &e) || e.Stage != stage || !strings.Contains(err.Error(), wantInErr) {
			t.Errorf("Send = %v, want a %s error saying %q", err, stage, wantInErr)
		}
		if email.IsPermanent(err) {
			t.Errorf("%v is permanent; a server's configuration is not the letter's fault", err)
		}
	}
	// A wrong password.
	f(email.Config{URL: "smtp://lodge:wrong@" + mp.SMTPAddr, RootCAs: mp.RootCAs}, "auth", "535")
	// A certificate nobody vouches for.
	f(email.Config{URL: url}, "tls", "certificate")
	// The server's AUTH without TLS is refused by the Mailer unless the
	// URL allows it: the password never goes out in clear.
	plain := mailpittest.Start(t, mailpittest.Options{User: "lodge", Password: "secret"})
	f(email.Config{URL: "smtp://lodge:secret@" + plain.SMTPAddr}, "auth", "only over TLS")
	f(email.Config{URL: "smtp://lodge:secret@" + plain.SMTPAddr + "?tls=required"}, "tls", "offers no STARTTLS")
	if n := plain.Count(t); n != 0 {
		t.Errorf("%d messages went through without TLS", n)
	}
	if err := newMailer(t, email.Config{URL: plain.URL()}).Send(context.Background(), message("insecure")); err != nil {
		t.Errorf("with insecure_auth=1: %v", err)
	}
	if n := mp.Count(t); n != 1 {
		t.Errorf("the TLS server holds %d messages, want 1", n)
	}
}

func TestImplicitTLS(t *testing.T) {
	mp := mailpittest.Start(t, mailpittest.Options{ImplicitTLS: true, User: "lodge", Password: "secret"})
	if !strings.HasPrefix(mp.URL(), "smtps://") {
		t.Fatalf("URL %s", mp.URL())
	}
	m := newMailer(t, email.Config{URL: mp.URL(), RootCAs: mp.RootCAs})
	if err := m.Send(context.Background(), message("smtps-1")); err != nil {
		t.Fatal(err)
	}
	if got := only(t, mp); got.MessageID != "smtps-1@lodge.example" {
		t.Errorf("Message-ID %q", got.MessageID)
	}
	// The same port spoken to in plain SMTP does not work: it is TLS.
	err := newMailer(t, email.Config{URL: "smtp://" + mp.SMTPAddr, Timeout: 300 * time.Millisecond}).Send(context.Background(), message("plain"))
	if err == nil {
		t.Error("plain SMTP to the smtps port succeeded")
	}
}

// TestDKIM signs with an RSA and an Ed25519 key and verifies what
// Mailpit received with go-msgauth's verifier, the public keys given as
// their DNS records would be.
func TestDKIM(t *testing.T) {
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	edPub, edKey, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	rsaPub, err := x509.MarshalPKIXPublicKey(&rsaKey.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	records := map[string]string{
		"rsa2026._domainkey.acme.example": "v=DKIM1; k=rsa; p=" + base64.StdEncoding.EncodeToString(rsaPub),
		"ed2026._domainkey.acme.example":  "v=DKIM1; k=ed25519; p=" + base64.StdEncoding.EncodeToString(edPub),
	}
	lookup := func(domain string) ([]string, error) {
		if r, ok := records[domain]; ok {
			return []string{r}, nil
		}
		return nil, fmt.Errorf("no TXT record for %s", domain)
	}
	mp := mailpittest.Start(t, mailpittest.Options{})
	for _, k := range []struct {
		selector string
		key      crypto.Signer
	}{{"rsa2026", rsaKey}, {"ed2026", edKey}} {
		der, err := x509.MarshalPKCS8PrivateKey(k.key)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "key.pem")
		if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		m := newMailer(t, email.Config{URL: mp.URL(), DKIM: email.DKIM{Domain: "acme.example", Selector: k.selector, KeyPath: path}})
		msg := message("dkim-" + k.selector)
		msg.HTML = "<p>signed</p>"
		msg.Subject = "Signé"
		msg.Attachments = []email.Attachment{{Name: "a.pdf", ContentType: "application/pdf", Data: []byte("%PDF-1.4\n.\n..\n")}}
		if err := m.Send(context.Background(), msg); err != nil {
			t.Fatal(err)
		}
		mp.WaitCount(t, 1)
		list := mp.Messages(t)
		raw := mp.Raw(t, list[0].ID)
		mp.DeleteAll(t)

		verify := func(raw []byte) error {
			vs, err := dkim.VerifyWithOptions(bytes.NewReader(raw), &dkim.VerifyOptions{LookupTXT: lookup})
			if err != nil {
				return err
			}
			if len(vs) != 1 {
				return fmt.Errorf("%d signatures", len(vs))
			}
			if vs[0].Domain != "acme.example" {
				return fmt.Errorf("signed by %s", vs[0].Domain)
			}
			return vs[0].Err
		}
		if err := verify(raw); err != nil {
			t.Errorf("%s: %v\n%s", k.selector, err, raw)
		}
		// The check can fail: a changed body or subject does not verify.
		for _, change := range [][2]string{{"signed", "signeD"}, {"Subject: ", "Subject: x"}} {
			if !bytes.Contains(raw, []byte(change[0])) {
				t.Fatalf("%q not in the message", change[0])
			}
			if err := verify(bytes.Replace(raw, []byte(change[0]), []byte(change[1]), 1)); err == nil {
				t.Errorf("%s: the message with %q changed still verifies", k.selector, change[0])
			}
		}
	}

	// Configuration errors are New's.
	f := func(d email.DKIM, wantInErr string) {
		t.Helper()
		_, err := email.New(email.Config{URL: mp.URL(), DKIM: d})
		if err == nil || !strings.Contains(err.Error(), wantInErr) {
			t.Errorf("New with DKIM %+v = %v, want an error saying %q", d, err, wantInErr)
		}
	}
	garbage := filepath.Join(t.TempDir(), "garbage.pem")
	os.WriteFile(garbage, []byte("not a key"), 0o600)
	f(email.DKIM{Domain: "acme.example", Selector: "s", KeyPath: garbage}, "no valid PEM")
	f(email.DKIM{Domain: "acme.example", Selector: "s", KeyPath: filepath.Join(t.TempDir(), "none.pem")}, "no such file")
	f(email.DKIM{Domain: "acme.example", KeyPath: garbage}, "selector")
	f(email.DKIM{Domain: "acme example", Selector: "s", KeyPath: garbage}, "not a domain name")
	f(email.DKIM{Selector: "s"}, "without a domain")
}

// TestChaos has Mailpit refuse MAIL FROM or RCPT TO: 4xx is temporary,
// 5xx permanent, and the connection serves the next message.
func TestChaos(t *testing.T) {
	mp := mailpittest.Start(t, mailpittest.Options{Chaos: true})
	set := metrics.NewSet()
	m := newMailer(t, email.Config{URL: mp.URL(), Pool: 1, Metrics: set})
	f := func(c mailpittest.Chaos, stage string, code int, permanent bool) {
		t.Helper()
		mp.SetChaos(t, c)
		err := m.Send(context.Background(), message("chaos"))
		var e *email.Error
		if !errors.As(err, &e) || e.Stage != stage || e.Code != code {
			t.Errorf("Send = %v, want %s %d", err, stage, code)
		}
		if email.IsPermanent(err) != permanent {
			t.Errorf("IsPermanent(%v) = %v", err, !permanent)
		}
	}
	always := func(code int) mailpittest.Trigger { return mailpittest.Trigger{ErrorCode: code, Probability: 100} }
	f(mailpittest.Chaos{Recipient: always(451)}, "RCPT", 451, false)
	f(mailpittest.Chaos{Recipient: always(452)}, "RCPT", 452, false)
	f(mailpittest.Chaos{Recipient: always(550)}, "RCPT", 550, true)
	f(mailpittest.Chaos{Recipient: always(553)}, "RCPT", 553, true)
	f(mailpittest.Chaos{Sender: always(451)}, "MAIL", 451, false)
	f(mailpittest.Chaos{Sender: always(550)}, "MAIL", 550, true)
	f(mailpittest.Chaos{Sender: always(530)}, "MAIL", 530, false)
	// 421 closes the connection: the Mailer tries a new one, which is
	// refused the same way, and says so (temporary).
	f(mailpittest.Chaos{Sender: always(421)}, "MAIL", 421, false)

	mp.SetChaos(t, mailpittest.Chaos{})
	if err := m.Send(context.Background(), message("after")); err != nil {
		t.Fatalf("after the refusals: %v", err)
	}
	if got := only(t, mp); got.MessageID != "after@lodge.example" {
		t.Errorf("mailpit holds %q", got.MessageID)
	}
	var b strings.Builder
	set.WritePrometheus(&b)
	for _, line := range []string{
		"lodge_email_sent_total 1",
		`lodge_email_failed_total{kind="permanent"} 3`,
		`lodge_email_failed_total{kind="temporary"} 5`,
		// One for the first message, one for the retry after 421 (which
		// says the server closes the connection).
		"lodge_email_connections_opened_total 2",
	} {
		if !strings.Contains(b.String(), line+"\n") {
			t.Errorf("metrics lack %q:\n%s", line, b.String())
		}
	}
}

// dataServer is a go-smtp server that refuses every message's content
// at the end of DATA with code, as a content filter does.
func dataServer(t *testing.T, code int) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := gosmtp.NewServer(gosmtp.BackendFunc(func(*gosmtp.Conn) (gosmtp.Session, error) {
		return &refusingSession{code: code}, nil
	}))
	s.Domain = "refuse.test"
	s.ReadTimeout, s.WriteTimeout = time.Minute, time.Minute
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	return ln.Addr().String()
}

type refusingSession struct{ code int }

func (s *refusingSession) Reset()                                 {}
func (s *refusingSession) Logout() error                          { return nil }
func (s *refusingSession) Mail(string, *gosmtp.MailOptions) error { return nil }
func (s *refusingSession) Rcpt(string, *gosmtp.RcptOptions) error { return nil }
func (s *refusingSession) Data(r io.Reader) error {
	io.Copy(io.Discard, r)
	return &gosmtp.SMTPError{Code: s.code, EnhancedCode: gosmtp.EnhancedCode{s.code / 100, 7, 1}, Message: "content refused"}
}

func TestDataRefused(t *testing.T) {
	f := func(code int, permanent bool) {
		t.Helper()
		m := newMailer(t, email.Config{URL: "smtp://" + dataServer(t, code)})
		for range 2 { // the second over the kept connection, after RSET
			err := m.Send(context.Background(), message("data"))
			var e *email.Error
			if !errors.As(err, &e) || e.Stage != "DATA" || e.Code != code || !strings.Contains(e.Reply, "content refused") {
				t.Errorf("Send = %v, want DATA %d", err, code)
			}
			if email.IsPermanent(err) != permanent {
				t.Errorf("IsPermanent(%v) = %v", err, !permanent)
			}
		}
	}
	f(554, true)
	f(552, true)
	f(451, false)
}

// rawServer accepts connections on loopback and hands each to serve.
func rawServer(t *testing.T, serve func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() { defer wg.Done(); serve(c) }()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}

// smtpUntil answers like a server up to the command for which stop
// returns true, then calls then (which hangs or drops the connection).
func smtpUntil(stop func(line string) bool, then func(net.Conn, *bufio.Reader)) func(net.Conn) {
	return func(c net.Conn) {
		r := bufio.NewReader(c)
		fmt.Fprintf(c, "220 raw.test ESMTP\r\n")
		inData := false
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			if stop(line) {
				then(c, r)
				return
			}
			switch cmd := strings.ToUpper(strings.TrimSpace(line)); {
			case inData:
				inData = line != ".\r\n"
				if !inData {
					fmt.Fprintf(c, "250 queued\r\n")
				}
			case strings.HasPrefix(cmd, "EHLO"):
				fmt.Fprintf(c, "250-raw.test\r\n250 8BITMIME\r\n")
			case cmd == "DATA":
				inData = true
				fmt.Fprintf(c, "354 go on\r\n")
			default:
				fmt.Fprintf(c, "250 ok\r\n")
			}
		}
	}
}

// hang keeps the connection open without a word until the client goes.
func hang(c net.Conn, r *bufio.Reader) { io.Copy(io.Discard, r) }

// TestServerHangs: a server that never answers, at any stage, costs a
// timeout, not a hang; so does one whose answer the context's deadline
// or cancellation stops waiting for. All are temporary.
func TestServerHangs(t *testing.T) {
	f := func(name string, serve func(net.Conn), stage string) {
		t.Helper()
		addr := rawServer(t, serve)
		m := newMailer(t, email.Config{URL: "smtp://" + addr, Timeout: 500 * time.Millisecond})
		err := m.Send(context.Background(), message("hang"))
		var e *email.Error
		if !errors.As(err, &e) || e.Stage != stage || !errors.Is(err, os.ErrDeadlineExceeded) || !strings.Contains(err.Error(), "time limit") {
			t.Errorf("%s: Send = %v, want a %s timeout", name, err, stage)
		}
		if email.IsPermanent(err) {
			t.Errorf("%s: a timeout is permanent", name)
		}
	}
	f("no greeting", func(c net.Conn) { io.Copy(io.Discard, c) }, "connect")
	f("no answer to EHLO", smtpUntil(func(l string) bool { return strings.HasPrefix(l, "EHLO") }, hang), "connect")
	f("no answer to MAIL", smtpUntil(func(l string) bool { return strings.HasPrefix(l, "MAIL") }, hang), "MAIL")
	f("no answer to RCPT", smtpUntil(func(l string) bool { return strings.HasPrefix(l, "RCPT") }, hang), "RCPT")
	f("no answer after the dot", smtpUntil(func(l string) bool { return l == ".\r\n" }, hang), "DATA")

	// The context's cancellation ends the wait at once, whatever the
	// Timeout.
	addr := rawServer(t, smtpUntil(func(l string) bool { return strings.HasPrefix(l, "MAIL") }, hang))
	m := newMailer(t, email.Config{URL: "smtp://" + addr, Timeout: time.Hour})
	ctx, cancel := context.WithCancelCause(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Send(ctx, message("cancel")) }()
	cancel(errors.New("shutting down"))
	err := <-done
	if err == nil || !strings.Contains(err.Error(), "shutting down") || email.IsPermanent(err) {
		t.Errorf("cancelled Send = %v", err)
	}
}

// TestServerDrops: a server that closes the connection mid-message, or
// refuses connections, gives a temporary error.
func TestServerDrops(t *testing.T) {
	f := func(name string, serve func(net.Conn), stage string, code int) {
		t.Helper()
		addr := rawServer(t, serve)
		m := newMailer(t, email.Config{URL: "smtp://" + addr})
		msg := message("drop")
		msg.Attachments = []email.Attachment{{Name: "big.bin", Data: bytes.Repeat([]byte("0123456789"), 100<<10)}}
		err := m.Send(context.Background(), msg)
		var e *email.Error
		if !errors.As(err, &e) || e.Stage != stage || e.Code != code {
			t.Errorf("%s: Send = %v, want a %s error with code %d", name, err, stage, code)
		}
		if email.IsPermanent(err) {
			t.Errorf("%s: %v is permanent", name, err)
		}
	}
	drop := func(c net.Conn, r *bufio.Reader) { c.Close() }
	// Mid-DATA: after some of the message, with most of 10 MB unsent.
	f("mid-DATA", smtpUntil(func(l string) bool { return strings.HasPrefix(l, "Content-Type") }, drop), "DATA", 0)
	f("after the dot", smtpUntil(func(l string) bool { return l == ".\r\n" }, drop), "DATA", 0)
	f("at RCPT", smtpUntil(func(l string) bool { return strings.HasPrefix(l, "RCPT") }, drop), "RCPT", 0)
	f("at the greeting", func(c net.Conn) { c.Close() }, "connect", 0)
	// A server refusing service: its code, and not the letter's fault.
	f("with a 554 greeting", func(c net.Conn) { fmt.Fprintf(c, "554 go away\r\n"); c.Close() }, "connect", 554)

	// Nobody listening: a port held by a socket that is bound and does
	// not listen, so that the kernel refuses connections to it and no
	// other program can take it meanwhile.
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
	err = newMailer(t, email.Config{URL: "smtp://" + addr}).Send(context.Background(), message("refused"))
	var e *email.Error
	if !errors.As(err, &e) || e.Stage != "connect" || email.IsPermanent(err) {
		t.Errorf("connection refused: %v", err)
	}
}

// proxy relays TCP connections to target, counting them, and can cut
// them all (what a server's idle timeout or restart does to a kept
// connection).
type proxy struct {
	addr              string
	mu                sync.Mutex
	conns             []net.Conn
	accepted, current atomic.Int64
	maxCurrent        atomic.Int64
}

func newProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{addr: ln.Addr().String()}
	var wg sync.WaitGroup
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.accepted.Add(1)
			n := p.current.Add(1)
			for {
				old := p.maxCurrent.Load()
				if n <= old || p.maxCurrent.CompareAndSwap(old, n) {
					break
				}
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			wg.Add(2)
			var once sync.Once
			end := func() { once.Do(func() { p.current.Add(-1) }); c.Close(); up.Close() }
			go func() { defer wg.Done(); io.Copy(up, c); end() }()
			go func() { defer wg.Done(); io.Copy(c, up); end() }()
		}
	}()
	t.Cleanup(func() { ln.Close(); p.cut(); wg.Wait() })
	return p
}

func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// TestDroppedConnectionReplaced: a kept connection the server closed is
// replaced for the next message without an error.
func TestDroppedConnectionReplaced(t *testing.T) {
	mp := mailpittest.Start(t, mailpittest.Options{})
	p := newProxy(t, mp.SMTPAddr)
	m := newMailer(t, email.Config{URL: "smtp://" + p.addr, Pool: 1})
	if err := m.Send(context.Background(), message("before")); err != nil {
		t.Fatal(err)
	}
	if err := m.Send(context.Background(), message("kept")); err != nil {
		t.Fatal(err)
	}
	if n := p.accepted.Load(); n != 1 {
		t.Fatalf("%d connections for two messages, want 1 kept", n)
	}
	p.cut()
	if err := m.Send(context.Background(), message("after")); err != nil {
		t.Fatalf("after the server dropped the kept connection: %v", err)
	}
	if n := p.accepted.Load(); n != 2 {
		t.Errorf("%d connections, want 2", n)
	}
	ids := map[string]bool{}
	for _, s := range mp.WaitCount(t, 3) {
		ids[s.MessageID] = true
	}
	for _, id := range []string{"before", "kept", "after"} {
		if !ids[id+"@lodge.example"] {
			t.Errorf("%s did not arrive (%v)", id, ids)
		}
	}
}

// TestConcurrentSends: many goroutines share the Mailer; the pool bounds
// the connections and every message arrives once.
func TestConcurrentSends(t *testing.T) {
	mp := mailpittest.Start(t, mailpittest.Options{})
	p := newProxy(t, mp.SMTPAddr)
	m := newMailer(t, email.Config{URL: "smtp://" + p.addr, Pool: 3})
	const n = 60
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- m.Send(context.Background(), message(fmt.Sprintf("c%d", i)))
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if c := p.maxCurrent.Load(); c > 3 {
		t.Errorf("%d connections at once with Pool 3", c)
	}
	if a := p.accepted.Load(); a > 3 {
		t.Errorf("%d connections opened with Pool 3 and none dropped", a)
	}
	ids := map[string]int{}
	for _, s := range mp.WaitCount(t, n) {
		ids[s.MessageID]++
	}
	for i := range n {
		if id := fmt.Sprintf("c%d@lodge.example", i); ids[id] != 1 {
			t.Errorf("%s arrived %d times", id, ids[id])
		}
	}
}

func TestClose(t *testing.T) {
	mp := mailpittest.Start(t, mailpittest.Options{})
	m := newMailer(t, email.Config{URL: mp.URL()})
	if err := m.Send(context.Background(), message("open")); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := m.Send(context.Background(), message("closed")); !errors.Is(err, email.ErrClosed) || email.IsPermanent(err) {
		t.Errorf("Send after Close = %v", err)
	}
}

func TestNewRefuses(t *testing.T) {
	f := func(cfg email.Config, wantInErr string) {
		t.Helper()
		_, err := email.New(cfg)
		if err == nil || !strings.Contains(err.Error(), wantInErr) {
			t.Errorf("New(%+v) = %v, want an error saying %q", cfg, err, wantInErr)
		}
	}
	f(email.Config{}, "no server URL")
	f(email.Config{URL: "smtp://h", Pool: -1}, "negative")
	f(email.Config{URL: "smtp://h", Timeout: -time.Second}, "negative")
	f(email.Config{URL: "smtp://h", HelloName: "bad name\r\nMAIL FROM"}, "hello name")
}
