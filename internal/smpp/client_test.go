package smpp_test

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lodge-mail/lodge/internal/smpp"
	"github.com/lodge-mail/lodge/internal/smpp/smpptest"
)

// The npm server's destination numbers that fail (testdata/server.js).
const (
	toRefused   = "+61400000001" // ESME_RINVDSTADR
	toThrottled = "+61400000002" // ESME_RTHROTTLED the first time
	toSilent    = "+61400000003" // never answered
	toUndeliv   = "+61400000004" // receipt UNDELIV
	toSysErr    = "+61400000005" // ESME_RSYSERR
	toOK        = "+61412345678"
)

var quiet = slog.New(slog.DiscardHandler)

func dial(t *testing.T, cfg smpp.Config) *smpp.Client {
	t.Helper()
	if cfg.Log == nil {
		cfg.Log = quiet
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := smpp.Dial(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func submit(t *testing.T, c *smpp.Client, m smpp.Message) []string {
	t.Helper()
	ids, err := c.Submit(context.Background(), m)
	if err != nil {
		t.Fatalf("submit to %s: %v", m.To, err)
	}
	return ids
}

func umr(ref string) string {
	h := fnv.New32a()
	h.Write([]byte(ref))
	s := h.Sum32()
	return hex.EncodeToString([]byte{byte(s >> 8), byte(s)})
}

// TestSubmitToServer: bind, then GSM, UCS-2 and long texts as the npm
// server received them, read back from its own bytes.
func TestSubmitToServer(t *testing.T) {
	srv := smpptest.Start(t)
	c := dial(t, srv.Config())
	long := strings.Repeat("Your letter from Lodge Mail is ready: {ref} €5 due. ", 10)[:500]
	longUCS2 := string([]rune(strings.Repeat("Письмо готово 😀 ", 40))[:500]) // 500 characters
	f := func(from string, m smpp.Message, wantParts int, wantCoding byte, srcTON, srcNPI byte, srcAddr string) {
		t.Helper()
		m.From = from
		ids := submit(t, c, m)
		if len(ids) != wantParts {
			t.Fatalf("%.20q: %d ids, want %d", m.Text, len(ids), wantParts)
		}
		var got *smpptest.Message
		for _, msg := range srv.Messages(t) {
			if msg.Parts[0].MessageID == ids[0] {
				got = &msg
			}
		}
		if got == nil {
			t.Fatalf("%.20q: the server has no message with id %s", m.Text, ids[0])
		}
		if got.Text != m.Text || got.DataCoding != wantCoding || len(got.Parts) != wantParts {
			t.Fatalf("server received %q (coding %d, %d parts), want %q (coding %d, %d parts)",
				got.Text, got.DataCoding, len(got.Parts), m.Text, wantCoding, wantParts)
		}
		for i, p := range got.Parts {
			if p.MessageID != ids[i] {
				t.Fatalf("part %d: server id %s, client %s", i+1, p.MessageID, ids[i])
			}
			if p.SourceTON != srcTON || p.SourceNPI != srcNPI || p.Source != srcAddr || p.DestTON != 1 || p.DestNPI != 1 || p.Dest != "61412345678" {
				t.Fatalf("part %d: addresses %d/%d %q to %d/%d %q", i+1, p.SourceTON, p.SourceNPI, p.Source, p.DestTON, p.DestNPI, p.Dest)
			}
			wantESM := byte(0)
			if wantParts > 1 {
				wantESM = 0x40
			}
			if p.ESMClass != wantESM || p.RegisteredDelivery != 0 {
				t.Fatalf("part %d: esm_class 0x%02X, registered_delivery %d", i+1, p.ESMClass, p.RegisteredDelivery)
			}
			if v, ok := p.TLV(smpp.TagUserMessageReference); !ok || hex.EncodeToString(v) != umr(m.Ref) {
				t.Fatalf("part %d: user_message_reference %x, want %s", i+1, v, umr(m.Ref))
			}
		}
	}
	f("+61400000000", smpp.Message{To: toOK, Text: "Hello {world} €5 @home", Ref: "E1-1-0"}, 1, 0, 1, 1, "61400000000")
	f("0400000000", smpp.Message{To: toOK, Text: "Здравствуйте 😀", Ref: "E1-2-0"}, 1, 8, 2, 1, "0400000000")
	f("Lodge Mail", smpp.Message{To: toOK, Text: long, Ref: "E1-3-0"}, 4, 0, 5, 0, "Lodge Mail")
	f("", smpp.Message{To: toOK, Text: longUCS2, Ref: "E1-4-0"}, 8, 8, 0, 0, "") // 531 UTF-16 units: 8 parts

	binds := smpptest.Kind(srv.Records(t), "bind")
	if len(binds) != 1 || binds[0].SystemID != "lodge" || binds[0].InterfaceVersion != 0x34 || binds[0].Status != 0 {
		t.Fatalf("binds: %+v", binds)
	}
	// every part of the long GSM text: the header, then at most 153 septets
	for _, p := range srv.Messages(t)[2].Parts {
		if len(p.ShortMessage) > 6+153 || hex.EncodeToString(p.ShortMessage[:3]) != "050003" || p.ShortMessage[4] != 4 {
			t.Fatalf("part of %d octets starting %x", len(p.ShortMessage), p.ShortMessage[:6])
		}
	}
}

// TestReceipts: delivery receipts come back for the ids Submit gave,
// each acknowledged.
func TestReceipts(t *testing.T) {
	srv := smpptest.Start(t)
	c := dial(t, srv.Config())
	delivered := submit(t, c, smpp.Message{To: toOK, Text: strings.Repeat("x", 200), Ref: "R1", Receipt: true})
	undelivered := submit(t, c, smpp.Message{To: toUndeliv, Text: "hi", Ref: "R2", Receipt: true})
	want := map[string]string{delivered[0]: smpp.StateDelivered, delivered[1]: smpp.StateDelivered, undelivered[0]: smpp.StateUndeliv}
	for range want {
		var r smpp.Receipt
		select {
		case r = <-c.Receipts():
		case <-time.After(time.Minute):
			t.Fatalf("waited a minute for receipts")
		}
		if want[r.MessageID] != r.State || r.Done.IsZero() {
			t.Fatalf("receipt %+v; want one of %v", r, want)
		}
		if r.State == smpp.StateUndeliv && (r.Err != "001" || r.To != "61400000004") {
			t.Fatalf("receipt %+v", r)
		}
		delete(want, r.MessageID)
	}
	rs := srv.WaitFor(t, "3 deliver_sm_resp", func(rs []smpptest.Record) bool { return len(smpptest.Kind(rs, "deliver_sm_resp")) == 3 })
	for _, r := range smpptest.Kind(rs, "deliver_sm_resp") {
		if r.Status != 0 {
			t.Fatalf("deliver_sm_resp %+v", r)
		}
	}
	for _, s := range srv.Submits(t) {
		if s.RegisteredDelivery != 1 {
			t.Fatalf("registered_delivery %d", s.RegisteredDelivery)
		}
	}
}

// TestSubmitErrors: the server's refusals, told permanent or temporary;
// a throttle is retried by the caller with the same Ref.
func TestSubmitErrors(t *testing.T) {
	srv := smpptest.Start(t)
	c := dial(t, smpp.Config{Addr: srv.Addr, SystemID: srv.SystemID, Password: srv.Password, ResponseTimeout: 500 * time.Millisecond})
	f := func(to string, status smpp.Status, permanent bool) {
		t.Helper()
		ids, err := c.Submit(context.Background(), smpp.Message{To: to, Text: "x", Ref: "S-" + to})
		var se *smpp.StatusError
		if !errors.As(err, &se) || se.Status != status || smpp.IsPermanent(err) != permanent {
			t.Fatalf("to %s: %v, %v; want status %s, permanent %v", to, ids, err, status, permanent)
		}
	}
	f(toRefused, smpp.StatusInvDstAddr, true)
	f(toSysErr, smpp.StatusSysErr, false)
	f(toThrottled, smpp.StatusThrottled, false)
	// the caller's retry, the same message and Ref: accepted
	ids := submit(t, c, smpp.Message{To: toThrottled, Text: "x", Ref: "S-" + toThrottled})
	subs := srv.Submits(t)
	var again []smpptest.Record
	for _, s := range subs {
		if s.Dest == "61400000002" {
			again = append(again, s)
		}
	}
	if len(again) != 2 || again[0].Status != 0x58 || again[1].MessageID != ids[0] ||
		hex.EncodeToString(again[0].ShortMessage) != hex.EncodeToString(again[1].ShortMessage) ||
		hex.EncodeToString(again[0].TLVs[0].Value) != hex.EncodeToString(again[1].TLVs[0].Value) {
		t.Fatalf("the throttled message and its retry: %+v", again)
	}
	// never answered: a temporary timeout, and the session goes on
	_, err := c.Submit(context.Background(), smpp.Message{To: toSilent, Text: "x"})
	if !errors.Is(err, smpp.ErrTimeout) || smpp.IsPermanent(err) {
		t.Fatalf("no answer: %v", err)
	}
	submit(t, c, smpp.Message{To: toOK, Text: "after"})
	// refused before sending
	for _, m := range []smpp.Message{{To: "Lodge", Text: "x"}, {From: "+614x", To: toOK}, {To: toOK, Text: "\xff"}} {
		if _, err := c.Submit(context.Background(), m); !errors.Is(err, smpp.ErrInvalidMessage) || !smpp.IsPermanent(err) {
			t.Fatalf("%+v: %v", m, err)
		}
	}
	if n := len(srv.Submits(t)); n != len(subs)+2 {
		t.Fatalf("%d submit_sm, want %d", n, len(subs)+2)
	}
}

// TestBindRefused: wrong credentials are a permanent error at once, not
// retried until the context ends.
func TestBindRefused(t *testing.T) {
	srv := smpptest.Start(t)
	f := func(id, pw string, want smpp.Status) {
		t.Helper()
		_, err := smpp.Dial(context.Background(), smpp.Config{Addr: srv.Addr, SystemID: id, Password: pw, Log: quiet})
		var se *smpp.StatusError
		if !errors.As(err, &se) || se.Status != want || !smpp.IsPermanent(err) || se.Command != smpp.BindTransceiver {
			t.Fatalf("%s/%s: %v, want %s", id, pw, err, want)
		}
	}
	f("lodge", "wrong", smpp.StatusInvPassword)
	f("other", "secret", smpp.StatusInvSystemID)
}

// TestEnquireLinkBothWays: the client's enquire_link reach the server and
// the server's are answered.
func TestEnquireLinkBothWays(t *testing.T) {
	srv := smpptest.StartWith(t, smpptest.Options{EnquireLink: 20 * time.Millisecond})
	dial(t, smpp.Config{Addr: srv.Addr, SystemID: srv.SystemID, Password: srv.Password, EnquireLink: 20 * time.Millisecond})
	rs := srv.WaitFor(t, "3 enquire_link each way", func(rs []smpptest.Record) bool {
		return len(smpptest.Kind(rs, "enquire_link")) >= 3 && len(smpptest.Kind(rs, "enquire_link_resp")) >= 3
	})
	for _, r := range smpptest.Kind(rs, "enquire_link_resp") {
		if r.Status != 0 {
			t.Fatalf("enquire_link_resp %+v", r)
		}
	}
	if n := len(smpptest.Kind(rs, "bind")); n != 1 {
		t.Fatalf("%d binds: the session was dropped", n)
	}
}

// TestClose: Close unbinds and closes Receipts; Submit after is
// ErrClosed.
func TestClose(t *testing.T) {
	srv := smpptest.Start(t)
	c := dial(t, srv.Config())
	submit(t, c, smpp.Message{To: toOK, Text: "x"})
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, ok := <-c.Receipts(); ok {
		t.Fatal("Receipts is open")
	}
	if _, err := c.Submit(context.Background(), smpp.Message{To: toOK, Text: "x"}); !errors.Is(err, smpp.ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
	srv.WaitFor(t, "an unbind", func(rs []smpptest.Record) bool { return len(smpptest.Kind(rs, "unbind")) == 1 })
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// TestServerKilled: submits in flight when the server dies fail
// temporarily; the client binds again once it is back.
func TestServerKilled(t *testing.T) {
	srv := smpptest.Start(t)
	c := dial(t, smpp.Config{Addr: srv.Addr, SystemID: srv.SystemID, Password: srv.Password,
		ReconnectMin: 10 * time.Millisecond, ResponseTimeout: 30 * time.Second})
	errs := make(chan error, 3)
	for i := range 3 {
		go func() {
			_, err := c.Submit(context.Background(), smpp.Message{To: toSilent, Text: fmt.Sprint("in flight ", i)})
			errs <- err
		}()
	}
	srv.WaitFor(t, "3 submit_sm in flight", func(rs []smpptest.Record) bool { return len(smpptest.Kind(rs, "submit_sm")) == 3 })
	srv.Kill(t)
	for range 3 {
		err := <-errs
		if !errors.Is(err, smpp.ErrConnLost) || smpp.IsPermanent(err) {
			t.Fatalf("in flight at the kill: %v", err)
		}
	}
	srv.Restart(t)
	ids := submit(t, c, smpp.Message{To: toOK, Text: "after the restart"})
	srv.WaitFor(t, "the second bind and the message", func(rs []smpptest.Record) bool {
		subs := smpptest.Kind(rs, "submit_sm")
		return len(smpptest.Kind(rs, "bind")) == 2 && subs[len(subs)-1].MessageID == ids[0]
	})
}

// TestServerKilledMidStream: a stream of messages from several
// goroutines, each retried with its Ref while temporary; the server is
// killed and restarted in the middle. Every message arrives at least
// once.
func TestServerKilledMidStream(t *testing.T) {
	srv := smpptest.Start(t)
	c := dial(t, smpp.Config{Addr: srv.Addr, SystemID: srv.SystemID, Password: srv.Password,
		ReconnectMin: 10 * time.Millisecond, ResponseTimeout: 2 * time.Second})
	const n = 300
	var done, temporary atomic.Int64
	killed := make(chan struct{})
	var wg sync.WaitGroup
	work := make(chan int)
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				// one number each: two concatenated messages with the same
				// 8-bit reference to one handset at once would mix
				m := smpp.Message{To: fmt.Sprint("+6141200", 1000+i), Text: fmt.Sprintf("message %d %s", i, strings.Repeat("z", i%200)), Ref: fmt.Sprint("K-", i)}
				for {
					_, err := c.Submit(context.Background(), m)
					if err == nil {
						break
					}
					if smpp.IsPermanent(err) {
						t.Errorf("message %d: %v", i, err)
						break
					}
					temporary.Add(1)
				}
				if done.Add(1) == n/2 {
					close(killed)
				}
			}
		}()
	}
	go func() {
		for i := range n {
			work <- i
		}
		close(work)
	}()
	<-killed
	srv.Kill(t)
	srv.Restart(t)
	wg.Wait()
	got := map[string]int{}
	for _, m := range srv.Messages(t) {
		got[m.Text]++
	}
	for i := range n {
		if text := fmt.Sprintf("message %d %s", i, strings.Repeat("z", i%200)); got[text] == 0 {
			t.Fatalf("message %d never arrived whole", i)
		}
	}
	if binds := len(smpptest.Kind(srv.Records(t), "bind")); binds < 2 {
		t.Fatalf("%d binds", binds)
	}
	t.Logf("%d temporary failures retried", temporary.Load())
}

// BenchmarkSubmit: one-part messages to the npm server from 64
// goroutines, with a window of 1 and of 10 (bench/smsbench reports the
// ratio, and over a simulated network latency).
func BenchmarkSubmit(b *testing.B) {
	srv := smpptest.Start(b)
	for _, window := range []int{1, 10} {
		b.Run(fmt.Sprint("window=", window), func(b *testing.B) {
			cfg := srv.Config()
			cfg.Window, cfg.Log = window, quiet
			c, err := smpp.Dial(context.Background(), cfg)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			b.SetParallelism(64 / max(1, runtime.GOMAXPROCS(0)))
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := c.Submit(context.Background(), smpp.Message{To: toOK, Text: "Your letter is ready."}); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "parts/s")
		})
	}
}

// TestWindowSmallerThanMessages: parts take the window one by one as
// the answers free it, so a message of more parts than the window, and
// many such messages at once, go through (a part's slot freed only by
// its own Submit's later wait would deadlock).
func TestWindowSmallerThanMessages(t *testing.T) {
	srv := smpptest.Start(t)
	f := func(window, messages int) {
		t.Helper()
		cfg := srv.Config()
		cfg.Window = window
		c := dial(t, cfg)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		errs := make(chan error, messages)
		for i := range messages {
			go func() {
				_, err := c.Submit(ctx, smpp.Message{To: toOK, Text: fmt.Sprint(i, strings.Repeat(" three parts", 30))})
				errs <- err
			}()
		}
		for range messages {
			if err := <-errs; err != nil {
				t.Fatalf("window %d, %d messages: %v", window, messages, err)
			}
		}
	}
	f(1, 1)
	f(2, 10)
	f(10, 30)
}
