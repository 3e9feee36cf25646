package email

import (
	"bytes"
	"crypto"
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"net/mail"
	"os"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/emersion/go-msgauth/dkim"
	gomail "github.com/wneessen/go-mail"
)

// Message is one email. Every field is checked by Send before anything
// is sent (package doc, "Messages and what is refused").
type Message struct {
	// MessageID is the caller's dedup key, the same on every attempt:
	// local@domain without angle brackets; it becomes the Message-ID
	// header <MessageID>. Required.
	MessageID string
	// From and To are single addresses, with or without a display name
	// ("Acme Billing <billing@acme.example>"). Required.
	From string
	To   string
	// Subject may be any text without control characters; non-ASCII is
	// encoded (RFC 2047).
	Subject string
	// Text is the plain-text body; HTML, when set, an alternative the
	// reader may show instead (multipart/alternative).
	Text string
	HTML string
	// ReturnPath is the envelope sender (MAIL FROM), where bounces go: a
	// VERP address names the letter. Empty: the From address.
	ReturnPath string
	// Headers are extra header fields (List-Unsubscribe ...), written in
	// name order. Names are letters, digits and hyphens; the fields this
	// package writes itself cannot be given.
	Headers map[string]string
	// Attachments follow the body, in order.
	Attachments []Attachment
}

// Attachment is a file attached to a Message: its bytes from Path, read
// when the message is sent, or Data.
type Attachment struct {
	// Name is the file name the reader sees. Required.
	Name string
	// ContentType is a MIME type ("application/pdf"); default
	// application/octet-stream.
	ContentType string
	// Exactly one of Path and Data.
	Path string
	Data []byte
}

// Limits of a Message (package doc).
const (
	maxSubject     = 1000 // characters
	maxHeaderValue = 998  // bytes, a line's limit in RFC 5322
	maxHeaders     = 50
	maxMessageID   = 250
	maxAttachments = 100
	maxName        = 255 // an attachment's name, bytes
)

// reserved are the header fields this package writes (lower case).
var reserved = map[string]bool{
	"from": true, "to": true, "cc": true, "bcc": true, "subject": true, "date": true,
	"message-id": true, "mime-version": true, "content-type": true,
	"content-transfer-encoding": true, "content-disposition": true, "content-id": true,
	"content-description": true, "dkim-signature": true, "sender": true,
	"return-path": true, "received": true,
}

// envelope is a checked Message's SMTP side.
type envelope struct {
	from, to  string // bare addresses for MAIL FROM and RCPT TO
	signature string // the DKIM-Signature field, CRLF-terminated, or ""
}

// noControl refuses control characters (C0, DEL and C1) and invalid
// UTF-8 in a header's text: a CR or LF would start a new header field.
func noControl(field, s string) error {
	if !utf8.ValidString(s) {
		return invalid(field, "not valid UTF-8")
	}
	for i, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
			return invalid(field, "control character %U at byte %d", r, i)
		}
	}
	return nil
}

func parseAddress(field, s string) (*mail.Address, error) {
	if err := noControl(field, s); err != nil {
		return nil, err
	}
	if strings.TrimSpace(s) == "" {
		return nil, invalid(field, "empty")
	}
	a, err := mail.ParseAddress(s)
	if err != nil {
		return nil, invalid(field, "%q is not one address: %v", truncate(s, 100), err)
	}
	at := strings.LastIndexByte(a.Address, '@')
	if at <= 0 || at == len(a.Address)-1 {
		return nil, invalid(field, "%q has no domain", truncate(s, 100))
	}
	// The bare address goes into MAIL FROM:<…> and RCPT TO:<…>: a quoted
	// local part with spaces or brackets would break the command.
	if strings.ContainsAny(a.Address, " <>") {
		return nil, invalid(field, "%q: the address has a space or an angle bracket", truncate(s, 100))
	}
	return a, nil
}

func checkMessageID(id string) error {
	if id == "" {
		return invalid("Message-ID", "empty (it is the caller's dedup key)")
	}
	if len(id) > maxMessageID {
		return invalid("Message-ID", "longer than %d bytes", maxMessageID)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`<>()[]\,;:"`, c) >= 0 {
			return invalid("Message-ID", "%q: byte %d (%q) is not allowed", truncate(id, 100), i, c)
		}
	}
	at := strings.IndexByte(id, '@')
	if at <= 0 || at == len(id)-1 || strings.Count(id, "@") != 1 {
		return invalid("Message-ID", "%q is not local@domain", truncate(id, 100))
	}
	return nil
}

func checkHeaderName(name string) error {
	if name == "" || len(name) > 76 {
		return invalid("header name", "%q: 1 to 76 characters", truncate(name, 100))
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			return invalid("header name", "%q: byte %d (%q) is not a letter, digit or hyphen", truncate(name, 100), i, c)
		}
	}
	if reserved[strings.ToLower(name)] {
		return invalid("header name", "%s is written by the mailer", name)
	}
	return nil
}

// check validates m and returns its envelope.
func (m *Message) check() (envelope, *mail.Address, *mail.Address, error) {
	var env envelope
	if err := checkMessageID(m.MessageID); err != nil {
		return env, nil, nil, err
	}
	from, err := parseAddress("From", m.From)
	if err != nil {
		return env, nil, nil, err
	}
	to, err := parseAddress("To", m.To)
	if err != nil {
		return env, nil, nil, err
	}
	env.from, env.to = from.Address, to.Address
	if m.ReturnPath != "" {
		rp, err := parseAddress("ReturnPath", m.ReturnPath)
		if err != nil {
			return env, nil, nil, err
		}
		env.from = rp.Address
	}
	if err := noControl("Subject", m.Subject); err != nil {
		return env, nil, nil, err
	}
	if n := utf8.RuneCountInString(m.Subject); n > maxSubject {
		return env, nil, nil, invalid("Subject", "%d characters, at most %d", n, maxSubject)
	}
	if len(m.Headers) > maxHeaders {
		return env, nil, nil, invalid("Headers", "%d fields, at most %d", len(m.Headers), maxHeaders)
	}
	for name, value := range m.Headers {
		if err := checkHeaderName(name); err != nil {
			return env, nil, nil, err
		}
		if err := noControl("header "+name, value); err != nil {
			return env, nil, nil, err
		}
		if len(value) > maxHeaderValue {
			return env, nil, nil, invalid("header "+name, "%d bytes, at most %d", len(value), maxHeaderValue)
		}
	}
	for _, s := range []struct{ field, text string }{{"Text", m.Text}, {"HTML", m.HTML}} {
		if !utf8.ValidString(s.text) {
			return env, nil, nil, invalid(s.field, "not valid UTF-8")
		}
	}
	if len(m.Attachments) > maxAttachments {
		return env, nil, nil, invalid("Attachments", "%d, at most %d", len(m.Attachments), maxAttachments)
	}
	for i, a := range m.Attachments {
		field := fmt.Sprintf("attachment %d", i+1)
		if a.Name == "" || len(a.Name) > maxName || strings.ContainsAny(a.Name, `/\`) {
			return env, nil, nil, invalid(field, "name %q: 1 to %d bytes, no slash", truncate(a.Name, 100), maxName)
		}
		if err := noControl(field+" name", a.Name); err != nil {
			return env, nil, nil, err
		}
		if a.ContentType != "" {
			if err := noControl(field+" content type", a.ContentType); err != nil {
				return env, nil, nil, err
			}
			mt, _, err := mime.ParseMediaType(a.ContentType)
			if err == nil && strings.Count(mt, "/") != 1 {
				err = fmt.Errorf("not type/subtype")
			}
			if err != nil {
				return env, nil, nil, invalid(field, "content type %q: %v", truncate(a.ContentType, 100), err)
			}
		}
		if (a.Path == "") == (a.Data == nil) {
			return env, nil, nil, invalid(field, "%s: give exactly one of Path and Data", a.Name)
		}
	}
	return env, from, to, nil
}

// compose checks m and writes it to out. When signer is set, the
// DKIM-Signature field is returned in env.signature, to be sent before
// out (so that the message is not copied to prepend it). Attachment
// files are opened here: a missing one is an error, not a message
// without it.
func compose(m *Message, signer crypto.Signer, d DKIM, out *bytes.Buffer) (envelope, error) {
	env, from, to, err := m.check()
	if err != nil {
		return env, err
	}
	msg := gomail.NewMsg(gomail.WithNoDefaultUserAgent())
	from.Name, to.Name = literal(from.Name), literal(to.Name)
	msg.FromMailAddress(from)
	msg.ToMailAddress(to)
	msg.Subject(literal(m.Subject))
	msg.SetMessageIDWithValue(m.MessageID)
	msg.SetDate()
	names := make([]string, 0, len(m.Headers))
	for name := range m.Headers {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		msg.SetGenHeader(gomail.Header(name), literal(m.Headers[name]))
	}
	msg.SetBodyString(gomail.TypeTextPlain, m.Text)
	if m.HTML != "" {
		msg.AddAlternativeString(gomail.TypeTextHTML, m.HTML)
	}
	for _, a := range m.Attachments {
		ct := a.ContentType
		if ct == "" {
			ct = "application/octet-stream"
		}
		opts := []gomail.FileOption{gomail.WithFileContentType(gomail.ContentType(ct))}
		if a.Data != nil {
			msg.AttachReadSeeker(a.Name, bytes.NewReader(a.Data), opts...)
			continue
		}
		f, err := os.Open(a.Path)
		if err != nil {
			return env, fmt.Errorf("email: attachment %s: %w", a.Name, err)
		}
		defer f.Close()
		msg.AttachReadSeeker(a.Name, f, opts...)
	}

	if signer == nil {
		if _, err := msg.WriteTo(out); err != nil {
			return env, fmt.Errorf("email: composing the message: %w", err)
		}
		return env, nil
	}
	s, err := dkim.NewSigner(&dkim.SignOptions{
		Domain:                 d.Domain,
		Selector:               d.Selector,
		Signer:                 signer,
		HeaderCanonicalization: dkim.CanonicalizationRelaxed,
		BodyCanonicalization:   dkim.CanonicalizationRelaxed,
	})
	if err != nil {
		return env, fmt.Errorf("email: DKIM: %w", err)
	}
	defer s.Close()
	if _, err := msg.WriteTo(io.MultiWriter(out, s)); err != nil {
		return env, fmt.Errorf("email: composing the message: %w", err)
	}
	if err := s.Close(); err != nil {
		return env, fmt.Errorf("email: DKIM signing: %w", err)
	}
	env.signature = s.Signature()
	return env, nil
}

// literal keeps text that looks like an RFC 2047 encoded word ("=?"),
// which a reader would decode, as the caller wrote it: it is encoded
// itself, in base64 words of at most 75 characters. Other text is left
// to go-mail, which encodes non-ASCII.
func literal(s string) string {
	if !strings.Contains(s, "=?") {
		return s
	}
	var b strings.Builder
	for len(s) > 0 {
		n := 0 // bytes of whole runes, at most 45 (60 base64 characters)
		for n < len(s) {
			_, size := utf8.DecodeRuneInString(s[n:])
			if n+size > 45 {
				break
			}
			n += size
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString("=?UTF-8?B?" + base64.StdEncoding.EncodeToString([]byte(s[:n])) + "?=")
		s = s[n:]
	}
	return b.String()
}
