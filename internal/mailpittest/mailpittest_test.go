package mailpittest

import (
	"net/smtp"
	"reflect"
	"strings"
	"testing"
)

func TestListeningTCP(t *testing.T) {
	f := func(table string, want map[string]int) {
		t.Helper()
		if got := listeningTCP([]byte(table)); !reflect.DeepEqual(got, want) {
			t.Errorf("listeningTCP(%q) = %v, want %v", table, got, want)
		}
	}
	head := "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
	f("", map[string]int{})
	f(head, map[string]int{})
	f(head+"   0: 0100007F:9C41 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 123456 1 0000000000000000 100 0 0 10 0\n",
		map[string]int{"123456": 0x9C41})
	// An established connection (01) is not a listener.
	f(head+"   1: 0100007F:9C41 0100007F:D2F0 01 00000000:00000000 00:00000000 00000000     0        0 654321 1 0000000000000000 20 4 30 10 -1\n",
		map[string]int{})
	// Cut short or garbled lines are skipped.
	f(head+"   2: 0100007F 00000000:0000 0A\n   3: 0100007F:ZZZZ 00000000:0000 0A 0 0 0 0 0 77\n", map[string]int{})
}

// TestStart runs a Mailpit, sends it a message with the standard
// library's client and reads it back through the API.
func TestStart(t *testing.T) {
	s := Start(t, Options{})
	if n := s.Count(t); n != 0 {
		t.Fatalf("a new mailpit has %d messages", n)
	}
	msg := "From: a@example.com\r\nTo: b@example.com\r\nSubject: hello\r\nMessage-ID: <m1@example.com>\r\n\r\nbody text\r\n"
	if err := smtp.SendMail(s.SMTPAddr, nil, "bounce@example.com", []string{"b@example.com"}, []byte(msg)); err != nil {
		t.Fatal(err)
	}
	list := s.WaitCount(t, 1)
	m := s.Message(t, list[0].ID)
	if m.Subject != "hello" || m.MessageID != "m1@example.com" || m.ReturnPath != "bounce@example.com" || strings.TrimSpace(m.Text) != "body text" {
		t.Errorf("got %+v", m)
	}
	if raw := string(s.Raw(t, m.ID)); !strings.Contains(raw, "Subject: hello") {
		t.Errorf("raw message:\n%s", raw)
	}
	if h := s.Headers(t, m.ID); h["Message-Id"] == nil && h["Message-ID"] == nil {
		t.Errorf("headers %v have no Message-ID", h)
	}
	s.DeleteAll(t)
	if n := s.Count(t); n != 0 {
		t.Errorf("%d messages after DeleteAll", n)
	}
}
