package server

import (
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/valyala/fasthttp"

	"github.com/lodge-mail/lodge/auth"
)

// defaultMaxConns is the connection limit for an open file limit of n:
// 3/4 of it less 256 descriptors for files, the store and the page
// counters' pipes, and at least half of it. An unknown limit (0) is taken
// as Linux's usual 1024; a huge one is capped at a million.
func defaultMaxConns(n uint64) int {
	if n == 0 {
		n = 1024
	}
	n = min(n, 1<<20)
	return int(max(n*3/4-min(256, n*3/4), n/2))
}

// connLimits counts the open connections of all the server's listeners, in
// all and per client address, and refuses those past the limits. Counting
// both listeners together is what keeps the process under its descriptor
// limit: fasthttp's own limits count each listener apart.
type connLimits struct {
	max, perIP int
	log        *slog.Logger

	mu   sync.Mutex
	open int
	byIP map[netip.Addr]int

	shedAll, shedPerIP, acceptRetries *metrics.Counter
	lastWarn                          atomic.Int64 // unix nanoseconds of the last warning logged
}

func newConnLimits(max, perIP int, set *metrics.Set, log *slog.Logger) *connLimits {
	l := &connLimits{max: max, perIP: perIP, log: log, byIP: map[netip.Addr]int{}}
	l.shedAll = set.NewCounter(`lodge_http_connections_shed_total{reason="max_conns"}`)
	l.shedPerIP = set.NewCounter(`lodge_http_connections_shed_total{reason="max_conns_per_ip"}`)
	l.acceptRetries = set.NewCounter(`lodge_http_accept_retries_total`)
	set.NewGauge(`lodge_http_connections`, func() float64 {
		l.mu.Lock()
		defer l.mu.Unlock()
		return float64(l.open)
	})
	set.NewGauge(`lodge_http_max_connections`, func() float64 { return float64(l.max) })
	return l
}

// acquire counts a new connection from ip, or says which limit it is past.
func (l *connLimits) acquire(ip netip.Addr) (ok bool, reason string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open >= l.max {
		return false, "max_conns"
	}
	if ip.IsValid() {
		if l.byIP[ip] >= l.perIP {
			return false, "max_conns_per_ip"
		}
		l.byIP[ip]++
	}
	l.open++
	return true, ""
}

func (l *connLimits) release(ip netip.Addr) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	if ip.IsValid() {
		if n := l.byIP[ip] - 1; n > 0 {
			l.byIP[ip] = n
		} else {
			delete(l.byIP, ip) // else the map keeps every client ever seen
		}
	}
}

// warn logs at most one warning a minute: under a flood, one line per
// refused connection would be a flood of its own.
func (l *connLimits) warn(msg string, args ...any) {
	now := time.Now().UnixNano()
	last := l.lastWarn.Load()
	if now-last < int64(time.Minute) || !l.lastWarn.CompareAndSwap(last, now) {
		return
	}
	l.log.Warn(msg, args...)
}

// limitListener is a listener whose connections are counted against
// connLimits, and which outlives the errors of running short of
// descriptors or memory: fasthttp's Serve returns on any accept error that
// is not a timeout, which would stop the server.
type limitListener struct {
	net.Listener
	lim *connLimits
	// wait sleeps for d, or returns false at once when the listener is
	// closed; tests replace it.
	wait      func(d time.Duration) bool
	closed    chan struct{}
	closeOnce sync.Once
}

func newLimitListener(ln net.Listener, lim *connLimits) *limitListener {
	l := &limitListener{Listener: ln, lim: lim, closed: make(chan struct{})}
	l.wait = func(d time.Duration) bool {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return true
		case <-l.closed:
			return false
		}
	}
	return l
}

// Accept backs off as net/http does (5 ms, doubling to 1 s) while accept
// fails for want of descriptors, buffers or memory, or because the client
// gave up before it was accepted; the waiting connections stay in the
// kernel's queue meanwhile. A connection past the limits is accepted and
// closed at once, so that it does not wait in that queue for nothing.
func (l *limitListener) Accept() (net.Conn, error) {
	var delay time.Duration
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			if !retryableAccept(err) {
				return nil, err
			}
			l.lim.acceptRetries.Inc()
			delay = min(max(2*delay, 5*time.Millisecond), time.Second)
			l.lim.warn("accept failed: retrying", "err", err, "delay", delay)
			if !l.wait(delay) {
				return nil, net.ErrClosed
			}
			continue
		}
		delay = 0
		ip := peerAddr(c)
		ok, reason := l.lim.acquire(ip)
		if !ok {
			// counted before the close, which the client may see at once
			if reason == "max_conns" {
				l.lim.shedAll.Inc()
				l.lim.warn("connection refused: too many open connections", "max_conns", l.lim.max)
			} else {
				l.lim.shedPerIP.Inc()
				l.lim.warn("connection refused: too many open connections from one address", "client", ip.String(), "max_conns_per_ip", l.lim.perIP)
			}
			c.Close()
			continue
		}
		return newConn(c, l.lim, ip), nil
	}
}

func (l *limitListener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

// retryableAccept reports whether an accept error is one the listener
// recovers from: too many open files (the process's or the system's), no
// buffer space or memory for now, a connection aborted before it was
// accepted, a timeout.
func retryableAccept(err error) bool {
	var te interface{ Timeout() bool }
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) ||
		errors.Is(err, syscall.ENOBUFS) || errors.Is(err, syscall.ENOMEM) ||
		errors.Is(err, syscall.ECONNABORTED) || (errors.As(err, &te) && te.Timeout())
}

func peerAddr(c net.Conn) netip.Addr {
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		return a.AddrPort().Addr().Unmap()
	}
	return netip.Addr{}
}

// conn is a counted connection. When asked to (lingerOnClose), its Close
// first says it will send no more (a TCP FIN: the answer written before it
// stays deliverable) and reads and drops what the client still sends, up
// to lingerBytes or lingerTime, before it closes: closing a socket with
// unread data makes the kernel send a reset, which can destroy the answer
// before the client reads it (a client still sending a refused body reads
// the answer only once its send is done or fails).
type conn struct {
	net.Conn
	lim    *connLimits
	ip     netip.Addr
	once   sync.Once
	linger atomic.Bool
	// auth remembers the credentials this connection's requests proved
	// (connAuth); emptied on Close.
	auth auth.ConnCache
	// deadlines are the socket's, set lazily (lazyDeadlines)
	deadlines lazyDeadlines
}

func newConn(c net.Conn, lim *connLimits, ip netip.Addr) *conn {
	lc := &conn{Conn: c, lim: lim, ip: ip}
	lc.deadlines.socket = c
	return lc
}

func (c *conn) SetDeadline(t time.Time) error      { return c.deadlines.SetDeadline(t) }
func (c *conn) SetReadDeadline(t time.Time) error  { return c.deadlines.SetReadDeadline(t) }
func (c *conn) SetWriteDeadline(t time.Time) error { return c.deadlines.SetWriteDeadline(t) }

// connAuth returns the credentials cache of the connection of ctx, or nil
// when it is not one of the server's listeners' (the cache is then not
// used).
func connAuth(ctx *fasthttp.RequestCtx) *auth.ConnCache {
	c := ctx.Conn()
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	if lc, ok := c.(*conn); ok {
		return &lc.auth
	}
	return nil
}

// Lingering bounds: a refused body up to lingerBytes is read to its end, so
// the client finishes sending and reads the answer; past it, or after
// lingerTime, the connection closes.
const (
	lingerBytes = 64 << 20
	lingerTime  = 10 * time.Second
)

// lingerOnClose asks c to drain before it closes.
func (c *conn) lingerOnClose() { c.linger.Store(true) }

func (c *conn) Close() error {
	var err error
	c.once.Do(func() {
		c.deadlines.stop()
		c.auth.Reset()
		if !c.linger.Load() {
			err = c.Conn.Close()
			c.lim.release(c.ip)
			return
		}
		// The drain runs on its own: the caller (a fasthttp worker, or
		// tls.Conn.Close under it) need not wait. The connection stays
		// counted until it is really closed.
		go func() {
			if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
				cw.CloseWrite()
			}
			c.Conn.SetReadDeadline(time.Now().Add(lingerTime))
			io.Copy(io.Discard, io.LimitReader(c.Conn, lingerBytes))
			c.Conn.Close()
			c.lim.release(c.ip)
		}()
	})
	return err
}
