package bounce

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/smtp"
	"net/textproto"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"
)

const domain = "bounces.lodge.example"

// collector is a Handler that keeps what it gets, failing while fail is
// set.
type collector struct {
	mu   sync.Mutex
	got  []Bounce
	fail error
}

func (c *collector) handle(b Bounce) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fail != nil {
		return c.fail
	}
	c.got = append(c.got, b)
	return nil
}

func (c *collector) take() []Bounce {
	c.mu.Lock()
	defer c.mu.Unlock()
	got := c.got
	c.got = nil
	return got
}

func (c *collector) setFail(err error) {
	c.mu.Lock()
	c.fail = err
	c.mu.Unlock()
}

// start serves cfg on 127.0.0.1, port 0.
func start(t *testing.T, cfg Config) string {
	t.Helper()
	s, err := NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	t.Cleanup(func() {
		s.Close()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return ln.Addr().String()
}

// send delivers data with the standard library's SMTP client, as a
// reporting mail system would: MAIL FROM:<> and the VERP recipients. It
// returns the first refusal.
func send(t *testing.T, addr string, rcpts []string, data []byte) error {
	t.Helper()
	c, err := smtp.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Mail(""); err != nil {
		return err
	}
	for _, r := range rcpts {
		if err := c.Rcpt(r); err != nil {
			return err
		}
	}
	w, err := c.Data()
	if err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	return c.Quit()
}

func code(err error) int {
	var tp *textproto.Error
	if errors.As(err, &tp) {
		return tp.Code
	}
	return 0
}

func testdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestServer sends real reports over SMTP to the listener and checks
// what its Handler gets.
func TestServer(t *testing.T) {
	var c collector
	set := metrics.NewSet()
	addr := start(t, Config{Domain: domain, Handler: c.handle, Metrics: set})

	// Postfix's report of an unknown user.
	if err := send(t, addr, []string{"bounce+ABC.7@" + domain}, testdata(t, "postfix-user-unknown.eml")); err != nil {
		t.Fatal(err)
	}
	want := Bounce{Token: "ABC.7", Permanent: true, Action: "failed", Status: "5.1.1",
		Diagnostic:   "550 5.1.1 <jane@example.com>: Recipient address rejected: User unknown in virtual mailbox table",
		Recipient:    "jane@example.com",
		MessageID:    "L123.7@lodge.example",
		ReportingMTA: "mx.example.com"}
	if got := c.take(); len(got) != 1 || got[0] != want {
		t.Errorf("got %+v, want [%+v]", got, want)
	}

	// A report of two recipients, one failed for good, one delayed.
	if err := send(t, addr, []string{"Bounce+MULTI.3@BOUNCES.lodge.example"}, testdata(t, "two-recipients-full-and-delayed.eml")); err != nil {
		t.Fatal(err)
	}
	got := c.take()
	if len(got) != 2 || got[0].Recipient != "full@example.net" || !got[0].Permanent || got[0].Status != "5.2.2" ||
		got[1].Recipient != "slow@example.net" || got[1].Permanent || got[1].Status != "4.4.1" || got[1].Token != "MULTI.3" {
		t.Errorf("got %+v", got)
	}

	// A success report, an auto-reply and a read receipt are taken (250)
	// and call nothing.
	for _, name := range []string{"delivered.eml", "auto-reply.eml", "read-receipt.eml"} {
		if err := send(t, addr, []string{"bounce+X.1@" + domain}, testdata(t, name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if got := c.take(); len(got) != 0 {
		t.Errorf("no failure reported, handler got %+v", got)
	}

	// Two VERP recipients of one report: one call each.
	if err := send(t, addr, []string{"bounce+A.1@" + domain, "bounce+B.2@" + domain}, testdata(t, "exim-failed.eml")); err != nil {
		t.Fatal(err)
	}
	if got := c.take(); len(got) != 2 || got[0].Token != "A.1" || got[1].Token != "B.2" {
		t.Errorf("got %+v", got)
	}

	// Other recipients are refused at RCPT, and nothing is called.
	for _, rcpt := range []string{"postmaster@" + domain, "bounce+X@other.example", "jane@example.com", "bounce+a..b@" + domain} {
		err := send(t, addr, []string{rcpt}, testdata(t, "exim-failed.eml"))
		if code(err) != 550 {
			t.Errorf("RCPT %s: %v, want 550", rcpt, err)
		}
	}
	if got := c.take(); len(got) != 0 {
		t.Errorf("refused recipients called the handler: %+v", got)
	}

	// A handler that cannot record makes the server answer 451; the
	// report sent again is taken.
	c.setFail(errors.New("disk full"))
	err := send(t, addr, []string{"bounce+R.1@" + domain}, testdata(t, "exim-failed.eml"))
	if code(err) != 451 {
		t.Errorf("handler failing: %v, want 451", err)
	}
	c.setFail(nil)
	if err := send(t, addr, []string{"bounce+R.1@" + domain}, testdata(t, "exim-failed.eml")); err != nil {
		t.Fatal(err)
	}
	if got := c.take(); len(got) != 1 || got[0].Token != "R.1" {
		t.Errorf("after the retry: %+v", got)
	}

	var b strings.Builder
	set.WritePrometheus(&b)
	for _, line := range []string{
		`lodge_bounce_reports_total{kind="permanent"} 5`,
		`lodge_bounce_reports_total{kind="temporary"} 1`,
		`lodge_bounce_ignored_total 2`,
		`lodge_bounce_refused_recipients_total 4`,
		`lodge_bounce_handler_errors_total 1`,
	} {
		if !strings.Contains(b.String(), line+"\n") {
			t.Errorf("metrics lack %q:\n%s", line, b.String())
		}
	}
}

// TestServerLimits: too big, too many recipients, too slow.
func TestServerLimits(t *testing.T) {
	var c collector
	addr := start(t, Config{Domain: domain, Handler: c.handle, MaxSize: 4096, SessionTimeout: 500 * time.Millisecond, Timeout: time.Hour})

	big := append(testdata(t, "exim-failed.eml"), []byte(strings.Repeat("padding line\r\n", 1000))...)
	if err := send(t, addr, []string{"bounce+BIG.1@" + domain}, big); code(err) != 552 {
		t.Errorf("a message over MaxSize: %v, want 552", err)
	}
	var rcpts []string
	for i := range 11 {
		rcpts = append(rcpts, fmt.Sprintf("bounce+R.%d@%s", i, domain))
	}
	if err := send(t, addr, rcpts, testdata(t, "exim-failed.eml")); code(err) != 452 {
		t.Errorf("11 recipients: %v, want 452", err)
	}
	if got := c.take(); len(got) != 0 {
		t.Errorf("handler got %+v", got)
	}

	// A client that says nothing: the per-line Timeout is an hour, the
	// session's half a second ends it. (Without the session limit this
	// read would wait an hour and the test binary would time out.)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	if line, err := r.ReadString('\n'); err != nil || !strings.HasPrefix(line, "220 ") {
		t.Fatalf("greeting %q, %v", line, err)
	}
	if _, err := io.Copy(io.Discard, r); err != nil && !errors.Is(err, net.ErrClosed) && !strings.Contains(err.Error(), "reset") {
		t.Errorf("reading until the server closes: %v", err)
	}
}

// TestServerMaxConns: connections past MaxConns wait until one ends.
func TestServerMaxConns(t *testing.T) {
	var c collector
	addr := start(t, Config{Domain: domain, Handler: c.handle, MaxConns: 1})
	first, err := smtp.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	// The second connection is accepted by the kernel but not served:
	// its greeting comes only after the first connection ends.
	second, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	greeted := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(second).ReadString('\n')
		greeted <- line
	}()
	if err := first.Noop(); err != nil { // the first is served meanwhile
		t.Fatal(err)
	}
	select {
	case line := <-greeted:
		t.Fatalf("second connection greeted (%q) while the first is open", line)
	default:
	}
	first.Quit()
	if line := <-greeted; !strings.HasPrefix(line, "220 ") {
		t.Errorf("second connection's greeting %q", line)
	}
}

func TestNewServerRefuses(t *testing.T) {
	h := func(Bounce) error { return nil }
	f := func(cfg Config, wantInErr string) {
		t.Helper()
		_, err := NewServer(cfg)
		if err == nil || !strings.Contains(err.Error(), wantInErr) {
			t.Errorf("NewServer(%+v) = %v, want an error saying %q", cfg, err, wantInErr)
		}
	}
	f(Config{Handler: h}, "not a domain name")
	f(Config{Domain: "bad domain", Handler: h}, "not a domain name")
	f(Config{Domain: domain}, "no handler")
	f(Config{Domain: domain, Handler: h, MaxSize: -1}, "negative")
}
