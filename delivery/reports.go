package delivery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/valyala/fasthttp"

	"github.com/lodge-mail/lodge/delivery/bounce"
	"github.com/lodge-mail/lodge/delivery/links"
	"github.com/lodge-mail/lodge/internal/smpp"
	"github.com/lodge-mail/lodge/pipeline"
)

// TakeReceipts turns SMS delivery receipts into letter statuses until
// ctx ends or the channel closes: DELIVRD makes a letter Delivered;
// EXPIRED, DELETED, UNDELIV and REJECTD fail it over to post (or fail
// it); other states (ACCEPTD, ENROUTE, UNKNOWN) say nothing final.
//
// An SMSC may send a receipt before the send stage has recorded the
// message ids (right after submit_sm_resp): a receipt for an id not
// known yet is kept and tried again every second for ReceiptWait, at
// most MaxPendingReceipts of them.
func TakeReceipts(ctx context.Context, receipts <-chan smpp.Receipt, mr *pipeline.Mailroom, log *slog.Logger) {
	type pendingReceipt struct {
		r     smpp.Receipt
		since time.Time
	}
	pending := map[string]pendingReceipt{}
	take := func(r smpp.Receipt) (retry bool) {
		var delivered bool
		switch r.State {
		case "DELIVRD":
			delivered = true
		case "EXPIRED", "DELETED", "UNDELIV", "REJECTD":
		default:
			return false
		}
		detail := "SMS " + r.State
		if r.Err != "" && r.Err != "000" {
			detail += " (error " + r.Err + ")"
		}
		err := mr.Receipt(r.MessageID, delivered, detail)
		switch {
		case errors.Is(err, pipeline.ErrNotFound):
			return true
		case err != nil:
			log.Error("SMS receipt not recorded", "message_id", r.MessageID, "state", r.State, "err", err)
		}
		return false
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			for id, p := range pending {
				if !take(p.r) {
					delete(pending, id)
				} else if now.Sub(p.since) > ReceiptWait {
					log.Info("SMS receipt for no message sent", "message_id", id, "state", p.r.State)
					delete(pending, id)
				}
			}
		case r, ok := <-receipts:
			if !ok {
				return
			}
			if take(r) && len(pending) < MaxPendingReceipts {
				pending[r.MessageID] = pendingReceipt{r, time.Now()}
			}
		}
	}
}

// Receipts for message ids not recorded yet wait this long, this many.
const (
	ReceiptWait        = 10 * time.Minute
	MaxPendingReceipts = 100_000
)

// ServeBounces listens for bounces on addr (SMTP) for the VERP domain
// and records each against its letter: a permanent one fails the letter
// over to post (or fails it), a delay is an event. It returns the
// function that stops the listener.
func ServeBounces(addr, domain string, mr *pipeline.Mailroom, set *metrics.Set, log *slog.Logger) (stop func(), err error) {
	srv, err := bounce.NewServer(bounce.Config{Domain: domain, Log: log, Metrics: set, Handler: func(b bounce.Bounce) error {
		epid, idx, err := ParseBounceToken(b.Token)
		if err != nil {
			log.Info("bounce for no letter", "token", b.Token, "err", err)
			return nil
		}
		detail := fmt.Sprintf("%s %s from %s: %s", b.Status, b.Action, b.ReportingMTA, b.Diagnostic)
		if err := mr.Bounced(epid, idx, b.Permanent, detail); err != nil && !errors.Is(err, pipeline.ErrNotFound) {
			return err // 451: the reporting system sends it again
		}
		return nil
	}})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	log.Info("taking bounces", "addr", ln.Addr().String(), "domain", domain)
	go srv.Serve(ln)
	return func() { srv.Close() }, nil
}

// PublicLinks serves the signed links on lodge's listeners
// (server.PublicHandler).
type PublicLinks struct{ Handler *links.Handler }

// Match reports whether a path is a link's.
func (p PublicLinks) Match(path []byte) bool { return links.IsPath(path) }

// Serve answers a link.
func (p PublicLinks) Serve(ctx *fasthttp.RequestCtx) { p.Handler.Serve(ctx) }

// SMSC is an SMPP client that binds in the background: lodge serve
// starts while the SMSC is down, and its SMS letters wait (a send before
// the first bind fails for now and is tried again later, as a lost
// connection does).
type SMSC struct {
	ready  chan struct{}
	client *smpp.Client
	err    error
}

// DialSMSC starts binding to the SMSC in the background until ctx ends
// or the SMSC refuses the bind for good (logged).
func DialSMSC(ctx context.Context, cfg smpp.Config, log *slog.Logger) *SMSC {
	s := &SMSC{ready: make(chan struct{})}
	go func() {
		defer close(s.ready)
		s.client, s.err = smpp.Dial(ctx, cfg)
		if s.err != nil {
			log.Error("SMSC: not bound; SMS letters stay unsent", "err", s.err)
			return
		}
		log.Info("SMSC bound", "addr", cfg.Addr)
	}()
	return s
}

// errNotBound is Submit's answer before the first bind: temporary.
var errNotBound = errors.New("the SMSC is not bound yet")

// Submit submits through the bound client, or fails for now.
func (s *SMSC) Submit(ctx context.Context, m smpp.Message) ([]string, error) {
	select {
	case <-s.ready:
	default:
		return nil, errNotBound
	}
	if s.client == nil {
		return nil, fmt.Errorf("the SMSC refused the bind: %v", s.err) // the server's setup, not the letter's: temporary
	}
	return s.client.Submit(ctx, m)
}

// Client waits for the first bind and returns the bound client (ok
// false when binding ended without one).
func (s *SMSC) Client() (*smpp.Client, bool) {
	<-s.ready
	return s.client, s.client != nil
}

// Close closes the client once bound.
func (s *SMSC) Close() {
	select {
	case <-s.ready:
		if s.client != nil {
			s.client.Close()
		}
	default:
	}
}
