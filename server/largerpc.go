package server

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/valyala/fasthttp"

	"github.com/lodge-mail/lodge/rpc"
)

// A large JSON-RPC request is one whose body is larger than prefetchBytes
// (fasthttp has not read it before the handler runs) or chunked. Large
// requests are bounded twice: by the memory their bodies take (body bytes
// held at once, in all and per account; past either they are refused at
// once with the body unread: 503 or 429, Retry-After), and by the work
// done at once (a few workers; the others wait their turn, up to
// LargeRPCWait, then 503). Their answers are streamed (chunked) as they are
// made. Small requests, the many, take none of this: they are answered
// from pooled buffers, without allocating.

// codeServerBusy is the JSON-RPC error code (implementation-defined
// server error range) of the 429 and 503 answers to large requests.
const codeServerBusy = -32000

// largeLimits holds the bounds on large JSON-RPC requests.
type largeLimits struct {
	maxBytes, maxBytesPerAccount int
	wait                         time.Duration
	workers                      chan struct{} // a token per request worked on

	mu        sync.Mutex
	bytes     int            // body bytes held by large requests
	byAccount map[string]int // the same per account

	busy, overShare, timedOut *metrics.Counter
}

func newLargeLimits(cfg Config, set *metrics.Set) *largeLimits {
	l := &largeLimits{
		maxBytes: cfg.LargeRPCBytes, maxBytesPerAccount: cfg.LargeRPCBytesPerAccount,
		wait: cfg.LargeRPCWait, workers: make(chan struct{}, cfg.LargeRPCWorkers), byAccount: map[string]int{},
	}
	l.busy = set.NewCounter(`lodge_jsonrpc_large_refused_total{reason="bytes"}`)
	l.overShare = set.NewCounter(`lodge_jsonrpc_large_refused_total{reason="account_bytes"}`)
	l.timedOut = set.NewCounter(`lodge_jsonrpc_large_refused_total{reason="wait"}`)
	set.NewGauge(`lodge_jsonrpc_large_body_bytes`, func() float64 {
		l.mu.Lock()
		defer l.mu.Unlock()
		return float64(l.bytes)
	})
	set.NewGauge(`lodge_jsonrpc_large_working`, func() float64 { return float64(len(l.workers)) })
	return l
}

// hold counts n body bytes for account, or says why it may not: 429 when
// the account holds its share, 503 when all are held.
func (l *largeLimits) hold(account string, n int) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.byAccount[account]+n > l.maxBytesPerAccount:
		l.overShare.Inc()
		return fasthttp.StatusTooManyRequests
	case l.bytes+n > l.maxBytes:
		l.busy.Inc()
		return fasthttp.StatusServiceUnavailable
	}
	l.bytes += n
	l.byAccount[account] += n
	return 0
}

func (l *largeLimits) release(account string, n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.bytes -= n
	if l.byAccount[account] -= n; l.byAccount[account] <= 0 {
		delete(l.byAccount, account)
	}
}

// work waits for a worker, first come first served, up to l.wait.
func (l *largeLimits) work() bool {
	select {
	case l.workers <- struct{}{}:
		return true
	default:
	}
	t := time.NewTimer(l.wait)
	defer t.Stop()
	select {
	case l.workers <- struct{}{}:
		return true
	case <-t.C:
		l.timedOut.Inc()
		return false
	}
}

func (l *largeLimits) done() { <-l.workers }

// handleLargeRPC answers an authenticated large JSON-RPC request.
func (s *Server) handleLargeRPC(ctx *fasthttp.RequestCtx, p rpc.Principal) {
	cl := ctx.Request.Header.ContentLength()
	size := cl
	if size < 0 {
		size = s.cfg.MaxBodyBytes // chunked: it may be as large as allowed
	}
	lim := s.large
	if status := lim.hold(p.Account, size); status != 0 {
		s.discardBody(ctx)
		ctx.Response.Header.Set("Retry-After", "1")
		msg := "the server is busy with large requests: retry in a second, or send smaller requests"
		if status == fasthttp.StatusTooManyRequests {
			msg = fmt.Sprintf("this account's large requests in progress (bodies over %d bytes) would hold more than %d bytes with this one: wait for their answers, or send smaller requests",
				prefetchBytes, lim.maxBytesPerAccount)
		}
		rpcHTTPError(ctx, status, codeServerBusy, msg)
		return
	}
	held := true
	defer func() {
		if held {
			lim.release(p.Account, size)
		}
	}()
	body, err := s.readLargeBody(ctx)
	switch {
	case errors.Is(err, errBodyTooLarge):
		s.discardBody(ctx)
		rpcHTTPError(ctx, fasthttp.StatusRequestEntityTooLarge, rpc.CodeInvalidRequest,
			fmt.Sprintf("request body larger than %d bytes", s.cfg.MaxBodyBytes))
		return
	case err != nil:
		ctx.SetConnectionClose()
		rpcHTTPError(ctx, fasthttp.StatusBadRequest, rpc.CodeInvalidRequest, "the request body could not be read whole: "+err.Error())
		return
	}
	if !lim.work() {
		ctx.Response.Header.Set("Retry-After", "1")
		rpcHTTPError(ctx, fasthttp.StatusServiceUnavailable, codeServerBusy, "the server is busy with large requests: retry in a second, or send smaller requests")
		return
	}
	// The work goes on in a goroutine of its own, which writes the answer
	// into a pipe that fasthttp copies to the client (chunked) once this
	// handler has returned. The goroutine holds only memory of its own
	// (the body was read into it), never the RequestCtx's.
	held = false
	pr, pw := io.Pipe()
	w := &answerWriter{pw: pw, started: make(chan struct{})}
	nothing := make(chan struct{})
	go func() {
		defer lim.release(p.Account, size)
		defer lim.done()
		bp := bufPool.Get().(*[]byte)
		out, _, err := s.rpc.HandleTo(w, (*bp)[:0], body, p)
		if cap(out) <= 1<<20 {
			*bp = out[:0]
			bufPool.Put(bp)
		}
		if !w.wrote {
			// nothing written: nothing to send (only notifications)
			pw.Close()
			close(nothing)
			return
		}
		// nil ends the chunked body; an error cuts it short, so that the
		// client does not take a part for the whole
		pw.CloseWithError(err)
	}()
	select {
	case <-w.started:
		ctx.SetContentType("application/json")
		ctx.SetBodyStream(pr, -1)
	case <-nothing:
		pr.Close()
		ctx.SetStatusCode(fasthttp.StatusNoContent)
	}
}

// answerWriter passes the answer to fasthttp; its first Write tells the
// handler that there is an answer to stream.
type answerWriter struct {
	pw      *io.PipeWriter
	started chan struct{}
	wrote   bool
}

func (w *answerWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.wrote = true
		close(w.started)
	}
	return w.pw.Write(b)
}

var errBodyTooLarge = errors.New("request body too large")

// readLargeBody reads a large request's body into memory of its own, not
// the RequestCtx's, so that it can be worked on after the handler returns.
func (s *Server) readLargeBody(ctx *fasthttp.RequestCtx) ([]byte, error) {
	max := s.cfg.MaxBodyBytes
	cl := ctx.Request.Header.ContentLength()
	if cl > max {
		return nil, errBodyTooLarge
	}
	r := ctx.RequestBodyStream()
	if r == nil { // fasthttp read it whole
		b := ctx.PostBody()
		if len(b) > max {
			return nil, errBodyTooLarge
		}
		return bytes.Clone(b), nil
	}
	if cl >= 0 {
		b := make([]byte, cl)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, err
		}
		return b, nil
	}
	var buf bytes.Buffer // chunked
	if _, err := buf.ReadFrom(io.LimitReader(r, int64(max)+1)); err != nil {
		return nil, err
	}
	if buf.Len() > max {
		return nil, errBodyTooLarge
	}
	return buf.Bytes(), nil
}

// discardBody reads and drops the rest of a body that is refused, so that
// the client, still sending, reads the answer on a connection it can keep;
// a body too large for that is left unread and the connection closed
// (after a bounded drain: conn.lingerOnClose).
func (s *Server) discardBody(ctx *fasthttp.RequestCtx) {
	if cl := ctx.Request.Header.ContentLength(); cl >= 0 && cl <= s.cfg.MaxBodyBytes+drainBytes {
		if r := ctx.RequestBodyStream(); r != nil {
			if _, err := io.Copy(io.Discard, io.LimitReader(r, int64(cl))); err == nil {
				return
			}
		} else {
			return
		}
	}
	ctx.SetConnectionClose()
}
