package smpp_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lodge-mail/lodge/internal/smpp"
	"github.com/lodge-mail/lodge/internal/testenv"
)

// fakeSMSC is a TCP server of the test's own that behaves as told, badly
// included. Each connection runs handle with its number (1, 2, …).
type fakeSMSC struct {
	addr  string
	conns atomic.Int32
}

type fakeConn struct {
	net.Conn
	br *bufio.Reader
}

func (c *fakeConn) read() (*smpp.PDU, error) { return smpp.ReadPDU(c.br) }

func (c *fakeConn) send(p *smpp.PDU) error {
	b, err := p.Append(nil)
	if err != nil {
		return err
	}
	_, err = c.Write(b)
	return err
}

// bind reads bind_transceiver and accepts it.
func (c *fakeConn) bind() error {
	p, err := c.read()
	if err != nil {
		return err
	}
	if p.ID != smpp.BindTransceiver {
		return fmt.Errorf("%s before bind", p.ID)
	}
	return c.send(&smpp.PDU{ID: smpp.BindTransceiverResp, Seq: p.Seq, Body: &smpp.BindResp{SystemID: "fake"}})
}

// serve answers like a plain SMSC: submit_sm with "ok-SEQ", enquire_link,
// unbind; until the connection ends.
func (c *fakeConn) serve() {
	for {
		p, err := c.read()
		if err != nil {
			return
		}
		switch p.ID {
		case smpp.SubmitSM:
			c.send(&smpp.PDU{ID: smpp.SubmitSMResp, Seq: p.Seq, Body: &smpp.SMResp{MessageID: fmt.Sprint("ok-", p.Seq)}})
		case smpp.EnquireLink:
			c.send(&smpp.PDU{ID: smpp.EnquireLinkResp, Seq: p.Seq})
		case smpp.Unbind:
			c.send(&smpp.PDU{ID: smpp.UnbindResp, Seq: p.Seq})
			return
		}
	}
}

func startFake(t *testing.T, handle func(n int, c *fakeConn)) *fakeSMSC {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeSMSC{addr: ln.Addr().String()}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var open []net.Conn
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			open = append(open, conn)
			mu.Unlock()
			n := int(f.conns.Add(1))
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer conn.Close()
				handle(n, &fakeConn{Conn: conn, br: bufio.NewReader(conn)})
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range open {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return f
}

// fakeConfig: short waits, so that the hostile cases end soon, and no
// enquire_link (a test that needs them sets EnquireLink): on a loaded
// machine an answer late by the ResponseTimeout would drop a session the
// test means to keep.
func fakeConfig(f *fakeSMSC) smpp.Config {
	return smpp.Config{Addr: f.addr, SystemID: "lodge", Password: "pw", Log: quiet,
		ResponseTimeout: time.Second, EnquireLink: time.Hour, ReconnectMin: 10 * time.Millisecond}
}

// sendUntilAccepted retries a temporary failure, as the pipeline does,
// each attempt being bounded by the client.
func sendUntilAccepted(t *testing.T, c *smpp.Client, m smpp.Message) []string {
	t.Helper()
	var err error
	for range 100 {
		var ids []string
		if ids, err = c.Submit(context.Background(), m); err == nil {
			return ids
		}
		if smpp.IsPermanent(err) {
			break
		}
	}
	t.Fatalf("never accepted in 100 attempts: %v", err)
	return nil
}

// TestHostileAnswers: a server that answers a submit_sm badly, on the
// first connection: the Submit fails temporarily with a clear error, the
// session is dropped and bound again, and the message sent again is
// accepted.
func TestHostileAnswers(t *testing.T) {
	f := func(name string, misbehave func(c *fakeConn, req *smpp.PDU), want ...error) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fake := startFake(t, func(n int, c *fakeConn) {
				if c.bind() != nil {
					return
				}
				if n > 1 {
					c.serve()
					return
				}
				for {
					p, err := c.read()
					if err != nil {
						return
					}
					if p.ID == smpp.SubmitSM {
						misbehave(c, p)
						break
					}
				}
				// keep the connection, answering nothing, until the client drops it
				for {
					if _, err := c.read(); err != nil {
						return
					}
				}
			})
			cfg := fakeConfig(fake)
			// an unanswered enquire_link is what drops a session that
			// went silent
			cfg.EnquireLink = 100 * time.Millisecond
			c, err := smpp.Dial(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			m := smpp.Message{To: "+61412345678", Text: "hello"}
			_, err = c.Submit(context.Background(), m)
			if err == nil || smpp.IsPermanent(err) {
				t.Fatalf("%v, want a temporary error", err)
			}
			for _, w := range want {
				if !errors.Is(err, w) {
					t.Fatalf("%v is not %v", err, w)
				}
			}
			if ids := sendUntilAccepted(t, c, m); !strings.HasPrefix(ids[0], "ok-") {
				t.Fatalf("ids %v", ids)
			}
			if n := fake.conns.Load(); n < 2 {
				t.Fatalf("%d connections: the session was not bound again", n)
			}
		})
	}
	raw := func(b []byte) func(c *fakeConn, req *smpp.PDU) {
		return func(c *fakeConn, req *smpp.PDU) { c.Write(b) }
	}
	header := func(length, id uint32, seq uint32) []byte {
		b := make([]byte, 16)
		binary.BigEndian.PutUint32(b, length)
		binary.BigEndian.PutUint32(b[4:], id)
		binary.BigEndian.PutUint32(b[12:], seq)
		return b
	}
	f("text instead of PDUs", raw([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")), smpp.ErrConnLost, smpp.ErrMalformed)
	f("a huge command_length", raw(header(0xFFFFFFFF, 0x80000004, 2)), smpp.ErrConnLost, smpp.ErrMalformed)
	f("a zero command_length", raw(header(0, 0x80000004, 2)), smpp.ErrConnLost, smpp.ErrMalformed)
	f("a message_id without NUL", func(c *fakeConn, req *smpp.PDU) {
		c.Write(append(header(16+70, 0x80000004, req.Seq), strings.Repeat("9", 70)...))
	}, smpp.ErrConnLost, smpp.ErrMalformed)
	f("a length longer than what follows, then silence", func(c *fakeConn, req *smpp.PDU) {
		c.Write(header(1000, 0x80000004, req.Seq)) // 16 of 1,000 octets
	}, smpp.ErrTimeout)
	f("no answer at all", func(c *fakeConn, req *smpp.PDU) {}, smpp.ErrTimeout)
	f("the connection closed", func(c *fakeConn, req *smpp.PDU) { c.Close() }, smpp.ErrConnLost)
	f("the wrong response", func(c *fakeConn, req *smpp.PDU) {
		c.send(&smpp.PDU{ID: smpp.DeliverSMResp, Seq: req.Seq, Body: &smpp.SMResp{}})
	}, smpp.ErrConnLost)
	f("the server unbinds", func(c *fakeConn, req *smpp.PDU) {
		c.send(&smpp.PDU{ID: smpp.Unbind, Seq: 1})
	}, smpp.ErrConnLost)
	f("a temporary generic_nack", func(c *fakeConn, req *smpp.PDU) {
		c.send(&smpp.PDU{ID: smpp.GenericNack, Status: smpp.StatusSysErr, Seq: req.Seq})
		c.Close()
	})
}

// errLog keeps the errors a client logs.
type errLog struct {
	mu   sync.Mutex
	errs []error
}

func (l *errLog) Enabled(context.Context, slog.Level) bool { return true }
func (l *errLog) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *errLog) WithGroup(string) slog.Handler            { return l }
func (l *errLog) Handle(_ context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if err, ok := a.Value.Any().(error); ok && a.Key == "err" {
			l.mu.Lock()
			l.errs = append(l.errs, err)
			l.mu.Unlock()
		}
		return true
	})
	return nil
}

func (l *errLog) first() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.errs) == 0 {
		return nil
	}
	return l.errs[0]
}

// TestHostileBind: a server that never binds makes Dial try again, and
// fail with the reason once its context ends. Each attempt's error is
// logged; the first one (not slowed by the context's end) is checked.
func TestHostileBind(t *testing.T) {
	is := func(target error) func(error) bool { return func(err error) bool { return errors.Is(err, target) } }
	f := func(name string, handle func(c *fakeConn), want func(error) bool) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fake := startFake(t, func(n int, c *fakeConn) { handle(c) })
			ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
			defer cancel()
			cfg := fakeConfig(fake)
			cfg.ResponseTimeout = 500 * time.Millisecond
			log := &errLog{}
			cfg.Log = slog.New(log)
			c, err := smpp.Dial(ctx, cfg)
			if err == nil {
				c.Close()
				t.Fatal("bound")
			}
			if !errors.Is(err, context.DeadlineExceeded) || smpp.IsPermanent(err) || !strings.Contains(err.Error(), "attempts") {
				t.Fatal(err)
			}
			if first := log.first(); !want(first) {
				t.Fatalf("the first attempt's error is %v", first)
			}
			if n := fake.conns.Load(); n < 2 {
				t.Fatalf("%d attempts", n)
			}
		})
	}
	silent := func(c *fakeConn) {
		for {
			if _, err := c.read(); err != nil {
				return
			}
		}
	}
	f("bind never answered", silent, is(smpp.ErrTimeout))
	f("connection closed at once", func(c *fakeConn) { c.Close() }, is(smpp.ErrConnLost))
	f("garbage for a bind_resp", func(c *fakeConn) {
		c.read()
		c.Write([]byte("220 smtp.example ESMTP\r\n"))
		silent(c)
	}, is(smpp.ErrMalformed))
	f("a response to another request", func(c *fakeConn) {
		p, _ := c.read()
		c.send(&smpp.PDU{ID: smpp.BindTransceiverResp, Seq: p.Seq + 1, Body: &smpp.BindResp{}})
		silent(c)
	}, is(smpp.ErrConnLost))
	f("a temporary refusal", func(c *fakeConn) {
		p, _ := c.read()
		c.send(&smpp.PDU{ID: smpp.BindTransceiverResp, Status: smpp.StatusSysErr, Seq: p.Seq})
		silent(c)
	}, func(err error) bool {
		var se *smpp.StatusError
		return errors.As(err, &se) && se.Status == smpp.StatusSysErr && se.Command == smpp.BindTransceiver
	})
}

// TestHostileRequests: what the server may ask, sensible or not, is
// answered and the session goes on.
func TestHostileRequests(t *testing.T) {
	checked := make(chan error, 1)
	fake := startFake(t, func(n int, c *fakeConn) {
		if c.bind() != nil {
			return
		}
		if n > 1 {
			c.serve()
			return
		}
		expect := func(send *smpp.PDU, id smpp.CommandID, st smpp.Status) error {
			if err := c.send(send); err != nil {
				return err
			}
			for {
				p, err := c.read()
				if err != nil {
					return err
				}
				if p.ID == smpp.EnquireLink {
					c.send(&smpp.PDU{ID: smpp.EnquireLinkResp, Seq: p.Seq})
					continue
				}
				if p.ID != id || p.Status != st || p.Seq != send.Seq {
					return fmt.Errorf("%s answered %s %s seq %d, want %s %s seq %d", send.ID, p.ID, p.Status, p.Seq, id, st, send.Seq)
				}
				return nil
			}
		}
		sm := func(esm byte, text string, tlvs ...smpp.TLV) *smpp.ShortMessage {
			return &smpp.ShortMessage{Source: smpp.Address{TON: 1, NPI: 1, Addr: "61412345678"}, ESMClass: esm, Message: []byte(text), TLVs: tlvs}
		}
		err := errors.Join(
			expect(&smpp.PDU{ID: 0x00000099, Seq: 70, Body: &smpp.Raw{Bytes: []byte("?")}}, smpp.GenericNack, smpp.StatusInvCmdID),
			expect(&smpp.PDU{ID: smpp.SubmitSM, Seq: 71, Body: sm(0, "a submit to an ESME")}, smpp.GenericNack, smpp.StatusInvCmdID),
			c.send(&smpp.PDU{ID: smpp.SubmitSMResp, Seq: 99999, Body: &smpp.SMResp{MessageID: "stray"}}), // answers nothing: ignored
			expect(&smpp.PDU{ID: smpp.DeliverSM, Seq: 72, Body: sm(0, "a reply from a handset")}, smpp.DeliverSMResp, smpp.StatusOK),
			expect(&smpp.PDU{ID: smpp.DeliverSM, Seq: 73, Body: sm(0x04, "no id here")}, smpp.DeliverSMResp, smpp.StatusRxPermanent),
			expect(&smpp.PDU{ID: smpp.DeliverSM, Seq: 74, Body: sm(0x04, "id:r1 stat:DELIVRD")}, smpp.DeliverSMResp, smpp.StatusOK),
			expect(&smpp.PDU{ID: smpp.EnquireLink, Seq: 75}, smpp.EnquireLinkResp, smpp.StatusOK),
		)
		checked <- err
		c.serve()
	})
	c, err := smpp.Dial(context.Background(), fakeConfig(fake))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := <-checked; err != nil {
		t.Fatal(err)
	}
	if r := <-c.Receipts(); r.MessageID != "r1" || r.State != smpp.StateDelivered {
		t.Fatalf("receipt %+v", r)
	}
	if ids, err := c.Submit(context.Background(), smpp.Message{To: "+61412345678", Text: "x"}); err != nil || !strings.HasPrefix(ids[0], "ok-") {
		t.Fatalf("after: %v %v", ids, err)
	}
	if n := fake.conns.Load(); n != 1 {
		t.Fatalf("%d connections: the session was dropped", n)
	}
}

// TestReceiptsUnread: receipts nobody reads are refused for now
// (ESME_RX_T_APPN) past the buffer, not lost and not blocking the
// session.
func TestReceiptsUnread(t *testing.T) {
	const buffered = 1024
	statuses := make(chan smpp.Status, buffered+2)
	more := make(chan struct{})
	fake := startFake(t, func(n int, c *fakeConn) {
		if c.bind() != nil {
			return
		}
		receipt := func(seq uint32) {
			c.send(&smpp.PDU{ID: smpp.DeliverSM, Seq: seq, Body: &smpp.ShortMessage{ESMClass: 0x04,
				Message: []byte(fmt.Sprintf("id:m%d stat:DELIVRD", seq))}})
		}
		go func() {
			for i := range buffered + 1 {
				receipt(uint32(1000 + i))
			}
			<-more
			receipt(5000)
		}()
		for {
			p, err := c.read()
			if err != nil {
				return
			}
			switch p.ID {
			case smpp.DeliverSMResp:
				statuses <- p.Status
			case smpp.Unbind:
				c.send(&smpp.PDU{ID: smpp.UnbindResp, Seq: p.Seq})
				return
			}
		}
	})
	c, err := smpp.Dial(context.Background(), fakeConfig(fake))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	count := map[smpp.Status]int{}
	for range buffered + 1 {
		count[<-statuses]++
	}
	if count[smpp.StatusOK] != buffered || count[smpp.StatusRxTemporary] != 1 {
		t.Fatalf("answers %v", count)
	}
	if r := <-c.Receipts(); r.MessageID != "m1000" {
		t.Fatalf("first receipt %+v", r)
	}
	close(more)
	if st := <-statuses; st != smpp.StatusOK {
		t.Fatalf("with room again: %s", st)
	}
}

// TestWindow: the server holds its answers until Window submit_sm are
// outstanding, then answers the oldest: the client fills the window and
// never exceeds it.
func TestWindow(t *testing.T) {
	f := func(window, messages int) {
		t.Helper()
		var mu sync.Mutex
		maxOut := 0
		fake := startFake(t, func(n int, c *fakeConn) {
			if c.bind() != nil {
				return
			}
			var out []uint32
			received := 0
			for {
				p, err := c.read()
				if err != nil {
					return
				}
				switch p.ID {
				case smpp.EnquireLink:
					c.send(&smpp.PDU{ID: smpp.EnquireLinkResp, Seq: p.Seq})
					continue
				case smpp.Unbind:
					c.send(&smpp.PDU{ID: smpp.UnbindResp, Seq: p.Seq})
					return
				case smpp.SubmitSM:
				default:
					continue
				}
				received++
				out = append(out, p.Seq)
				mu.Lock()
				maxOut = max(maxOut, len(out))
				mu.Unlock()
				for len(out) == window || received == messages && len(out) > 0 {
					c.send(&smpp.PDU{ID: smpp.SubmitSMResp, Seq: out[0], Body: &smpp.SMResp{MessageID: "x"}})
					out = out[1:]
				}
			}
		})
		cfg := fakeConfig(fake)
		cfg.Window, cfg.ResponseTimeout, cfg.EnquireLink = window, time.Minute, time.Hour
		c, err := smpp.Dial(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var wg sync.WaitGroup
		for i := range messages {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := c.Submit(context.Background(), smpp.Message{To: "+61412345678", Text: fmt.Sprint(i)}); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if maxOut != window {
			t.Fatalf("window %d: at most %d outstanding", window, maxOut)
		}
	}
	f(10, 35)
	f(3, 10)
	f(1, 4)
}

// TestSubmitCancelled: a Submit whose context ends while its submit_sm
// is in flight fails temporarily, and its window slot comes back.
func TestSubmitCancelled(t *testing.T) {
	var received atomic.Int32
	fake := startFake(t, func(n int, c *fakeConn) {
		if c.bind() != nil {
			return
		}
		for { // takes everything, answers only enquire_link
			p, err := c.read()
			if err != nil {
				return
			}
			switch p.ID {
			case smpp.EnquireLink:
				c.send(&smpp.PDU{ID: smpp.EnquireLinkResp, Seq: p.Seq})
			case smpp.SubmitSM:
				received.Add(1)
			case smpp.Unbind:
				c.send(&smpp.PDU{ID: smpp.UnbindResp, Seq: p.Seq})
				return
			}
		}
	})
	cfg := fakeConfig(fake)
	cfg.Window, cfg.ResponseTimeout = 1, time.Minute
	c, err := smpp.Dial(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// with a window of 1, a slot not given back would keep the next
	// submit_sm from being sent
	for i := range int32(4) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := c.Submit(ctx, smpp.Message{To: "+61412345678", Text: "x"})
			done <- err
		}()
		testenv.WaitFor(t, func() bool { return received.Load() == i+1 }, func() string { return fmt.Sprintf("submit_sm %d", i+1) })
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) || smpp.IsPermanent(err) {
			t.Fatalf("cancelled: %v", err)
		}
	}
}

// TestSubmitNotBound: while the SMSC refuses to bind again (its
// password changed), Submit fails with ErrNotBound, temporary: the
// message itself was never refused.
func TestSubmitNotBound(t *testing.T) {
	fake := startFake(t, func(n int, c *fakeConn) {
		if n == 1 {
			c.bind()
			return // the connection closes
		}
		p, err := c.read()
		if err == nil {
			c.send(&smpp.PDU{ID: smpp.BindTransceiverResp, Status: smpp.StatusInvPassword, Seq: p.Seq})
		}
	})
	c, err := smpp.Dial(context.Background(), fakeConfig(fake))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	testenv.WaitFor(t, func() bool { return fake.conns.Load() >= 3 }, func() string { return "two refused binds" })
	_, err = c.Submit(context.Background(), smpp.Message{To: "+61412345678", Text: "x"})
	if !errors.Is(err, smpp.ErrNotBound) || smpp.IsPermanent(err) || !strings.Contains(err.Error(), "ESME_RINVPASWD") {
		t.Fatalf("%v: want a temporary ErrNotBound naming the refusal", err)
	}
}
