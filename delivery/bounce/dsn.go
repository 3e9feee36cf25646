package bounce

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"net/textproto"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ErrNotDSN is wrapped by ParseDSN's error for a message that is not a
// delivery status notification (an auto-reply, a read receipt, a
// message without the multipart/report structure).
var ErrNotDSN = errors.New("not a delivery status notification")

// DSN is a delivery status notification (RFC 3464) as read.
type DSN struct {
	// ReportingMTA names the system that wrote the report ("dns;" and
	// the like removed).
	ReportingMTA string
	// MessageID is the Message-ID of the returned message, without angle
	// brackets, when the report returns its headers; else "".
	MessageID string
	// Recipients are the report's per-recipient sections, in order.
	Recipients []Recipient
}

// Recipient is one recipient's section of a DSN. Every string is valid
// UTF-8 without control characters.
type Recipient struct {
	// FinalRecipient is the address the report is about (the
	// address-type, "rfc822;", removed); OriginalRecipient the one the
	// sender gave, when reported.
	FinalRecipient    string
	OriginalRecipient string
	// Action is failed, delayed, delivered, relayed or expanded (lower
	// case), or "" when the report has none or another word.
	Action string
	// Status is the status code, class.subject.detail ("5.1.1"), or ""
	// when missing or malformed.
	Status string
	// Diagnostic is the remote server's answer (Diagnostic-Code, its
	// type removed), at most 1,000 bytes.
	Diagnostic string
	// RemoteMTA is the server that gave it, when reported.
	RemoteMTA string
}

// Failed reports whether the section tells of a failure, and whether it
// is permanent: Action failed (the reporting system gave up, whatever the
// status class: 4.4.7, expired, is final too), or without an Action a
// 5.x.x status, is permanent; Action delayed, or without an Action a
// 4.x.x status, is a failure not (yet) permanent. Anything else
// (delivered, relayed, expanded, nothing readable) is no failure.
func (r Recipient) Failed() (failed, permanent bool) {
	switch r.Action {
	case "failed":
		return true, true
	case "delayed":
		return true, false
	case "":
		switch {
		case strings.HasPrefix(r.Status, "5."):
			return true, true
		case strings.HasPrefix(r.Status, "4."):
			return true, false
		}
	}
	return false, false
}

// Limits of ParseDSN.
const (
	// MaxDSNSize is the most ParseDSN reads; a longer message is an
	// error (the listener refuses it earlier, at the same size).
	MaxDSNSize = 10 << 20
	maxParts   = 100     // parts of the multipart/report
	maxStatus  = 1 << 20 // bytes of the delivery-status part
	maxHeaders = 256 << 10
	maxRcpts   = 1000 // recipient sections
	maxField   = 1000 // bytes of a field value kept
)

var statusCode = regexp.MustCompile(`^[245]\.[0-9]{1,3}\.[0-9]{1,3}$`)

// ParseDSN reads a delivery status notification: a multipart/report
// message with report-type delivery-status (RFC 3464; also its UTF-8
// form, RFC 6533) whose message/delivery-status part holds the
// per-recipient sections, and whose returned message or headers, when
// present, give the original Message-ID. Only the top level is read:
// parts are not searched for nested reports. A message that is not a
// report is an error wrapping ErrNotDSN; a report that breaks the
// format (no boundary, no status part, more than MaxDSNSize bytes, 100
// parts or 1,000 recipients) is an error saying what; fields that are
// missing or malformed are left empty.
func ParseDSN(r io.Reader) (DSN, error) {
	var d DSN
	lr := &io.LimitedReader{R: r, N: MaxDSNSize + 1}
	msg, err := mail.ReadMessage(bufio.NewReader(lr))
	if lr.N <= 0 {
		return d, fmt.Errorf("bounce: longer than %d bytes", MaxDSNSize)
	}
	if err != nil {
		// net/mail's error quotes the bad line, which may be megabytes.
		return d, fmt.Errorf("bounce: reading the message's header: %q: %w", clip(err.Error()), ErrNotDSN)
	}
	mt, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/report" {
		return d, fmt.Errorf("bounce: Content-Type %q is not multipart/report: %w", clip(msg.Header.Get("Content-Type")), ErrNotDSN)
	}
	if rt := strings.ToLower(params["report-type"]); rt != "delivery-status" && rt != "global-delivery-status" {
		return d, fmt.Errorf("bounce: report-type %q is not delivery-status: %w", clip(params["report-type"]), ErrNotDSN)
	}
	boundary := params["boundary"]
	if boundary == "" {
		return d, fmt.Errorf("bounce: multipart/report without a boundary")
	}
	mr := multipart.NewReader(msg.Body, boundary)
	statusSeen := false
	for n := 0; ; n++ {
		if n == maxParts {
			return d, fmt.Errorf("bounce: more than %d parts", maxParts)
		}
		p, err := mr.NextRawPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			if lr.N <= 0 {
				return d, fmt.Errorf("bounce: longer than %d bytes", MaxDSNSize)
			}
			if n == 0 {
				return d, fmt.Errorf("bounce: no part with the boundary %q: %v", clip(boundary), err)
			}
			return d, fmt.Errorf("bounce: part %d: %v", n+1, err)
		}
		pt, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
		switch pt {
		case "message/delivery-status", "message/global-delivery-status":
			if statusSeen {
				continue // one status part per report; a second is ignored
			}
			statusSeen = true
			body, err := readLimited(decode(p), maxStatus)
			if lr.N <= 0 {
				return d, fmt.Errorf("bounce: longer than %d bytes", MaxDSNSize)
			}
			if err != nil {
				return d, fmt.Errorf("bounce: delivery-status part: %v", err)
			}
			if err := d.readStatus(body); err != nil {
				return d, err
			}
		case "message/rfc822", "text/rfc822-headers", "message/global", "message/global-headers":
			if d.MessageID == "" {
				d.MessageID = returnedMessageID(decode(p))
			}
		}
	}
	if lr.N <= 0 {
		return d, fmt.Errorf("bounce: longer than %d bytes", MaxDSNSize)
	}
	if !statusSeen {
		return d, fmt.Errorf("bounce: multipart/report without a message/delivery-status part")
	}
	return d, nil
}

// decode undoes a part's transfer encoding (NextRawPart leaves it).
func decode(p *multipart.Part) io.Reader {
	switch strings.ToLower(strings.TrimSpace(p.Header.Get("Content-Transfer-Encoding"))) {
	case "base64":
		return base64.NewDecoder(base64.StdEncoding, p)
	case "quoted-printable":
		return quotedprintable.NewReader(p)
	}
	return p
}

func readLimited(r io.Reader, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("longer than %d bytes", max)
	}
	return b, nil
}

// readStatus reads the delivery-status fields: groups of header fields
// separated by blank lines, the per-message group first. A group
// without Final-Recipient or Original-Recipient is taken for the
// per-message one.
func (d *DSN) readStatus(body []byte) error {
	for _, group := range fieldGroups(body) {
		if group["final-recipient"] == "" && group["original-recipient"] == "" {
			if d.ReportingMTA == "" {
				d.ReportingMTA = clean(stripType(group["reporting-mta"]))
			}
			continue
		}
		if len(d.Recipients) == maxRcpts {
			return fmt.Errorf("bounce: more than %d recipients", maxRcpts)
		}
		r := Recipient{
			FinalRecipient:    address(group["final-recipient"]),
			OriginalRecipient: address(group["original-recipient"]),
			Diagnostic:        clean(stripType(group["diagnostic-code"])),
			RemoteMTA:         clean(stripType(group["remote-mta"])),
		}
		if r.FinalRecipient == "" {
			r.FinalRecipient = r.OriginalRecipient
		}
		switch a, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(group["action"])), " "); a {
		case "failed", "delayed", "delivered", "relayed", "expanded":
			r.Action = a
		}
		if s, _, _ := strings.Cut(strings.TrimSpace(group["status"]), " "); statusCode.MatchString(s) {
			r.Status = s
		}
		d.Recipients = append(d.Recipients, r)
	}
	return nil
}

// fieldGroups splits a delivery-status body into its groups of fields:
// names lower-cased, continuation lines joined, the first of a repeated
// field kept, lines that are no field skipped.
func fieldGroups(body []byte) []map[string]string {
	var groups []map[string]string
	cur := map[string]string{}
	last := ""
	flush := func() {
		if len(cur) > 0 {
			groups = append(groups, cur)
		}
		cur, last = map[string]string{}, ""
	}
	for _, line := range bytes.Split(body, []byte("\n")) {
		line = bytes.TrimRight(line, "\r")
		switch {
		case len(bytes.TrimSpace(line)) == 0:
			flush()
		case line[0] == ' ' || line[0] == '\t':
			if last != "" && len(cur[last]) < maxField {
				cur[last] += " " + string(bytes.TrimSpace(line))
			}
		default:
			name, value, ok := bytes.Cut(line, []byte(":"))
			if !ok {
				last = ""
				continue
			}
			last = strings.ToLower(string(bytes.TrimSpace(name)))
			if _, seen := cur[last]; seen {
				last = "" // keep the first; skip this one's continuations
				continue
			}
			cur[last] = string(bytes.TrimSpace(value))
		}
	}
	flush()
	return groups
}

// stripType removes a field's type ("rfc822;", "smtp;", "dns;").
func stripType(v string) string {
	if t, rest, ok := strings.Cut(v, ";"); ok && !strings.ContainsAny(t, " <@") {
		return strings.TrimSpace(rest)
	}
	return strings.TrimSpace(v)
}

// address reads an address field: its type removed, angle brackets too.
func address(v string) string {
	a := clean(stripType(v))
	a = strings.TrimSuffix(strings.TrimPrefix(a, "<"), ">")
	if strings.ContainsAny(a, " <>") {
		return ""
	}
	return a
}

// clean makes a field value safe to keep and show: valid UTF-8, control
// characters as spaces, runs of spaces as one, at most maxField bytes.
func clean(v string) string {
	v = strings.ToValidUTF8(v, "\uFFFD")
	var b strings.Builder
	space := false
	for _, r := range v {
		if unicode.IsControl(r) || unicode.IsSpace(r) {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		if b.Len()+utf8.RuneLen(r) > maxField {
			break
		}
		b.WriteRune(r)
	}
	return b.String()
}

// returnedMessageID reads the Message-ID of a returned message or its
// headers; "" when there is none or it is not a plausible id.
func returnedMessageID(r io.Reader) string {
	tp := textproto.NewReader(bufio.NewReader(io.LimitReader(r, maxHeaders)))
	h, _ := tp.ReadMIMEHeader() // a cut-short header still has its fields
	id := strings.TrimSpace(h.Get("Message-Id"))
	id = strings.TrimSuffix(strings.TrimPrefix(id, "<"), ">")
	if id == "" || len(id) > 250 || clean(id) != id || strings.ContainsAny(id, " <>") {
		return ""
	}
	return id
}
