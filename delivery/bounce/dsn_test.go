package bounce

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/lodge-mail/lodge/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/")

// TestParseDSNGolden reads each report of testdata/*.eml (the forms of
// Postfix, Exim, a large mail service, Exchange with a base64 status
// part, RFC 6533's UTF-8 form, a delay, an expiry, a success, and two
// messages that are no reports) and compares what ParseDSN makes of it
// with testdata/NAME.golden.json (go test -update rewrites them).
func TestParseDSNGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.eml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		d, err := ParseDSN(bytes.NewReader(raw))
		type result struct {
			DSN      *DSN    `json:",omitempty"`
			Error    string  `json:",omitempty"`
			NotDSN   bool    `json:",omitempty"`
			Failures [][]any `json:",omitempty"` // recipient, failed, permanent
		}
		res := result{}
		if err != nil {
			res.Error, res.NotDSN = err.Error(), errors.Is(err, ErrNotDSN)
		} else {
			res.DSN = &d
			for _, r := range d.Recipients {
				failed, permanent := r.Failed()
				res.Failures = append(res.Failures, []any{r.FinalRecipient, failed, permanent})
			}
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			t.Fatal(err)
		}
		got := buf.Bytes()
		golden := strings.TrimSuffix(f, ".eml") + ".golden.json"
		if *update {
			if err := os.WriteFile(golden, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (go test -update writes it)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: got\n%s\nwant\n%s", f, got, want)
		}
	}
}

// report wraps a delivery-status body (and more parts) into a report.
func report(status string, more ...string) string {
	var b strings.Builder
	b.WriteString("From: MAILER-DAEMON@mx.example\r\nMIME-Version: 1.0\r\n")
	b.WriteString("Content-Type: multipart/report; report-type=delivery-status; boundary=\"BB\"\r\n\r\n")
	b.WriteString("--BB\r\nContent-Type: text/plain\r\n\r\nfailed\r\n")
	b.WriteString("--BB\r\nContent-Type: message/delivery-status\r\n\r\n" + status + "\r\n")
	for _, p := range more {
		b.WriteString("--BB\r\n" + p + "\r\n")
	}
	b.WriteString("--BB--\r\n")
	return b.String()
}

const oneFailed = "Reporting-MTA: dns; mx.example\r\n\r\nFinal-Recipient: rfc822; a@example.com\r\nAction: failed\r\nStatus: 5.1.1\r\nDiagnostic-Code: smtp; 550 5.1.1 no\r\n"

// TestParseDSNHostile: hostile and broken messages give a clear error or
// a sane reading, never a panic, a hang or unbounded memory.
func TestParseDSNHostile(t *testing.T) {
	bad := func(name, raw, wantInErr string, notDSN bool) {
		t.Helper()
		_, err := ParseDSN(strings.NewReader(raw))
		if err == nil || !strings.Contains(err.Error(), wantInErr) {
			t.Errorf("%s: ParseDSN = %v, want an error saying %q", name, err, wantInErr)
			return
		}
		if errors.Is(err, ErrNotDSN) != notDSN {
			t.Errorf("%s: errors.Is(%v, ErrNotDSN) = %v", name, err, !notDSN)
		}
	}
	bad("empty", "", "reading the message's header", true)
	bad("binary garbage", "\x00\xff\xfe\x01garbage without a header", "reading the message's header", true)
	bad("plain text", "Subject: hi\r\n\r\nhello\r\n", "is not multipart/report", true)
	bad("read receipt", strings.Replace(report(oneFailed), "delivery-status;", "disposition-notification;", 1), "report-type", true)
	bad("no boundary", "Content-Type: multipart/report; report-type=delivery-status\r\n\r\n--BB\r\n", "without a boundary", false)
	bad("boundary never seen", "Content-Type: multipart/report; report-type=delivery-status; boundary=ZZ\r\n\r\n"+oneFailed, `no part with the boundary "ZZ"`, false)
	bad("no status part", strings.Replace(report(oneFailed), "message/delivery-status", "text/plain", 1), "without a message/delivery-status part", false)
	bad("unterminated", strings.TrimSuffix(report(oneFailed), "--BB--\r\n"), "delivery-status part: unexpected EOF", false)
	bad("bad media type", "Content-Type: multipart/report; report-type=delivery-status; boundary=\"BB\r\n\r\n", "is not multipart/report", true)

	// Too big: a header line past MaxDSNSize, a status part past 1 MiB,
	// 101 parts, 1,001 recipients.
	bad("huge header", "X-Junk: "+strings.Repeat("a", MaxDSNSize+10)+"\r\n\r\n", "longer than 10485760 bytes", false)
	bad("huge bad header", "\x00"+strings.Repeat("a", MaxDSNSize-10)+"\r\n\r\n", "reading the message's header", true)
	bad("huge message", report(oneFailed, "Content-Type: text/plain\r\n\r\n"+strings.Repeat("x\r\n", MaxDSNSize/3+10)), "longer than", false)
	bad("huge status part", report(oneFailed+strings.Repeat("X-Pad: "+strings.Repeat("p", 100)+"\r\n", 11000)), "longer than 1048576 bytes", false)
	bad("many parts", report(oneFailed, strings.Repeat("Content-Type: text/plain\r\n\r\nx\r\n--BB\r\n", 200)+"Content-Type: text/plain\r\n\r\nx"), "more than 100 parts", false)
	var many strings.Builder
	for i := range 1001 {
		fmt.Fprintf(&many, "\r\nFinal-Recipient: rfc822; r%d@example.com\r\nAction: failed\r\n", i)
	}
	bad("many recipients", report("Reporting-MTA: dns; x\r\n"+many.String()), "more than 1000 recipients", false)
	bad("broken base64", strings.Replace(report("!!!! not base64 ****"), "Content-Type: message/delivery-status", "Content-Type: message/delivery-status\r\nContent-Transfer-Encoding: base64", 1), "delivery-status part", false)

	// Nested multipart bombs: parts are not searched, so 10,000 levels
	// of nesting cost one pass over the bytes.
	var nest strings.Builder
	for i := range 10000 {
		fmt.Fprintf(&nest, "Content-Type: multipart/mixed; boundary=\"n%d\"\r\n\r\n--n%d\r\n", i, i)
	}
	d, err := ParseDSN(strings.NewReader(report(oneFailed, nest.String())))
	if err != nil || len(d.Recipients) != 1 {
		t.Errorf("nested parts after the report: %+v, %v", d, err)
	}
	bad("nested in place of the status part", "Content-Type: multipart/report; report-type=delivery-status; boundary=BB\r\n\r\n--BB\r\n"+nest.String()+"\r\n--BB--\r\n", "without a message/delivery-status part", false)

	// Readable but odd: fields missing, malformed, repeated, dirty.
	ok := func(name, status string, want Recipient, failed, permanent bool) {
		t.Helper()
		d, err := ParseDSN(strings.NewReader(report(status)))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			return
		}
		if len(d.Recipients) != 1 || d.Recipients[0] != want {
			t.Errorf("%s: recipients %+v, want [%+v]", name, d.Recipients, want)
			return
		}
		if f, p := d.Recipients[0].Failed(); f != failed || p != permanent {
			t.Errorf("%s: Failed() = %v, %v, want %v, %v", name, f, p, failed, permanent)
		}
	}
	ok("only Final-Recipient", "Final-Recipient: rfc822; a@x.example\r\n", Recipient{FinalRecipient: "a@x.example"}, false, false)
	ok("only Original-Recipient", "Original-Recipient: rfc822; <a@x.example>\r\nAction: failed\r\n",
		Recipient{FinalRecipient: "a@x.example", OriginalRecipient: "a@x.example", Action: "failed"}, true, true)
	ok("status without action, 5", "Final-Recipient: rfc822; a@x.example\r\nStatus: 5.2.1\r\n", Recipient{FinalRecipient: "a@x.example", Status: "5.2.1"}, true, true)
	ok("status without action, 4", "Final-Recipient: rfc822; a@x.example\r\nStatus: 4.2.1\r\n", Recipient{FinalRecipient: "a@x.example", Status: "4.2.1"}, true, false)
	ok("malformed status", "Final-Recipient: rfc822; a@x.example\r\nStatus: 5.1.1.1 (x)\r\n", Recipient{FinalRecipient: "a@x.example"}, false, false)
	ok("status with a comment", "Final-Recipient: rfc822; a@x.example\r\nAction: Failed\r\nStatus: 5.1.1 (bad mailbox)\r\n",
		Recipient{FinalRecipient: "a@x.example", Action: "failed", Status: "5.1.1"}, true, true)
	ok("upper-case action with a comment", "Final-Recipient: rfc822; a@x.example\r\nAction: FAILED (permanent)\r\n",
		Recipient{FinalRecipient: "a@x.example", Action: "failed"}, true, true)
	ok("unknown action", "Final-Recipient: rfc822; a@x.example\r\nAction: exploded\r\nStatus: 5.0.0\r\n",
		Recipient{FinalRecipient: "a@x.example", Status: "5.0.0"}, true, true)
	ok("repeated fields: the first counts", "Final-Recipient: rfc822; a@x.example\r\nAction: delayed\r\nAction: failed\r\n",
		Recipient{FinalRecipient: "a@x.example", Action: "delayed"}, true, false)
	ok("no per-message group, LF lines", "Final-Recipient: rfc822; a@x.example\nAction: failed\nStatus: 5.0.0\n",
		Recipient{FinalRecipient: "a@x.example", Action: "failed", Status: "5.0.0"}, true, true)
	ok("junk lines", "this is no field\r\nFinal-Recipient: rfc822; a@x.example\r\n: empty name\r\nAction: failed\r\n",
		Recipient{FinalRecipient: "a@x.example", Action: "failed"}, true, true)
	ok("address with spaces", "Final-Recipient: rfc822; a b@x.example\r\nAction: failed\r\n", Recipient{Action: "failed"}, true, true)
	ok("dirty diagnostic", "Final-Recipient: rfc822; a@x.example\r\nAction: failed\r\nDiagnostic-Code: smtp; 550 \x00bad\x1b[31m \xe9t\xe9\x7f\r\n",
		Recipient{FinalRecipient: "a@x.example", Action: "failed", Diagnostic: "550 bad [31m \uFFFDt\uFFFD"}, true, true)
	long := strings.Repeat("word ", 400)
	d, err = ParseDSN(strings.NewReader(report("Final-Recipient: rfc822; a@x.example\r\nAction: failed\r\nDiagnostic-Code: smtp; " + long + "\r\n" + strings.Repeat(" "+long+"\r\n", 100))))
	if err != nil || len(d.Recipients) != 1 {
		t.Errorf("long diagnostic: %+v, %v", d, err)
	} else if n := len(d.Recipients[0].Diagnostic); n > maxField || n < maxField-10 {
		t.Errorf("long diagnostic: %d bytes kept, want up to %d", n, maxField)
	}
	// A charset the report should not have, on the status part: ignored,
	// the fields are ASCII.
	d, err = ParseDSN(strings.NewReader(strings.Replace(report(oneFailed), "message/delivery-status", "message/delivery-status; charset=x-nonsense", 1)))
	if err != nil || len(d.Recipients) != 1 || d.Recipients[0].Status != "5.1.1" {
		t.Errorf("status part with a charset: %+v, %v", d, err)
	}
	// The returned headers: an injected or malformed Message-ID is none.
	mid := func(headers, want string) {
		t.Helper()
		d, err := ParseDSN(strings.NewReader(report(oneFailed, "Content-Type: text/rfc822-headers\r\n\r\n"+headers)))
		if err != nil || d.MessageID != want {
			t.Errorf("returned headers %q: MessageID %q, %v; want %q", headers, d.MessageID, err, want)
		}
	}
	mid("Message-ID: <a@b>\r\n", "a@b")
	mid("Message-ID:   a@b  \r\n", "a@b")
	mid("Message-ID: <a b@c>\r\n", "")
	mid("Message-ID: <a@b>\x00\r\n", "")
	mid("Message-ID: <"+strings.Repeat("a", 300)+"@b>\r\n", "")
	mid("Subject: none\r\n", "")
	mid("Message-ID: <cut@short", "cut@short")
}

// FuzzParseDSN: whatever the input, ParseDSN returns (no panic, no
// hang) within its bounds, with clean strings.
func FuzzParseDSN(f *testing.F) {
	testenv.LimitMinimization(f, "5s")
	files, _ := filepath.Glob("testdata/*.eml")
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(report(oneFailed)))
	f.Add([]byte(report("Final-Recipient: rfc822; a@x\nAction: delayed\n Status: 4.0.0\n")))
	f.Fuzz(func(t *testing.T, raw []byte) {
		d, err := ParseDSN(bytes.NewReader(raw))
		if err != nil {
			return
		}
		if len(d.Recipients) > maxRcpts {
			t.Fatalf("%d recipients", len(d.Recipients))
		}
		check := func(what, s string) {
			if !utf8.ValidString(s) || len(s) > maxField {
				t.Fatalf("%s %q: invalid UTF-8 or too long", what, s)
			}
			for _, r := range s {
				if unicode.IsControl(r) {
					t.Fatalf("%s %q has a control character", what, s)
				}
			}
		}
		check("ReportingMTA", d.ReportingMTA)
		check("MessageID", d.MessageID)
		for _, r := range d.Recipients {
			check("FinalRecipient", r.FinalRecipient)
			check("OriginalRecipient", r.OriginalRecipient)
			check("Diagnostic", r.Diagnostic)
			check("RemoteMTA", r.RemoteMTA)
			if r.Status != "" && !statusCode.MatchString(r.Status) {
				t.Fatalf("status %q", r.Status)
			}
			switch r.Action {
			case "", "failed", "delayed", "delivered", "relayed", "expanded":
			default:
				t.Fatalf("action %q", r.Action)
			}
		}
	})
}
