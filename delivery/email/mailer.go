package email

import (
	"bytes"
	"context"
	"crypto"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/wneessen/go-mail/smtp"

	"github.com/lodge-mail/lodge/internal/dnsname"
)

// ErrClosed is returned by Send after Close (temporary: a later Mailer
// may send the message).
var ErrClosed = errors.New("email: mailer closed")

// Mailer sends Messages to one SMTP server over a pool of connections.
type Mailer struct {
	srv     server
	hello   string
	timeout time.Duration
	tls     *tls.Config
	dkim    DKIM
	signer  crypto.Signer
	log     *slog.Logger

	// slots holds a token per Send talking to the server: at most Pool.
	slots chan struct{}
	// idle holds the connections kept open between messages. A Send
	// dials only when it is empty, so slots and idle together bound the
	// connections to Pool.
	idle chan *conn

	mu     sync.Mutex // guards closed against put
	closed bool
	done   chan struct{}

	sent, temporary, permanent, opened *metrics.Counter
	duration                           *metrics.Histogram
}

// conn is one SMTP connection, past EHLO, STARTTLS and AUTH.
type conn struct {
	c        *smtp.Client
	nc       net.Conn // what c talks over (before STARTTLS wraps it)
	lastUsed time.Time
}

// bufs recycles message buffers: 100,000 messages need not make 100,000
// buffers of garbage. Buffers grown past maxKeptBuf are dropped.
var bufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxKeptBuf = 1 << 20

// New checks cfg and returns a Mailer. It does not connect: the first
// Send does, so a server that is down at start costs retries, not the
// start.
func New(cfg Config) (*Mailer, error) {
	srv, err := parseURL(cfg.URL)
	if err != nil {
		return nil, err
	}
	if cfg.Pool < 0 || cfg.Timeout < 0 {
		return nil, fmt.Errorf("email: negative pool size or timeout")
	}
	if cfg.Pool == 0 {
		cfg.Pool = DefaultPool
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.HelloName == "" {
		cfg.HelloName = helloName()
	} else if !dnsname.Valid(strings.ToLower(cfg.HelloName)) {
		return nil, fmt.Errorf("email: hello name %q is not a domain name", cfg.HelloName)
	}
	signer, err := loadDKIM(cfg.DKIM)
	if err != nil {
		return nil, err
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	set := cfg.Metrics
	if set == nil {
		set = metrics.NewSet()
	}
	return &Mailer{
		srv:       srv,
		hello:     cfg.HelloName,
		timeout:   cfg.Timeout,
		tls:       &tls.Config{ServerName: srv.host, RootCAs: cfg.RootCAs, MinVersion: tls.VersionTLS12},
		dkim:      cfg.DKIM,
		signer:    signer,
		log:       cfg.Log.With("smtp", srv.redacted),
		slots:     make(chan struct{}, cfg.Pool),
		idle:      make(chan *conn, cfg.Pool),
		done:      make(chan struct{}),
		sent:      set.GetOrCreateCounter("lodge_email_sent_total"),
		temporary: set.GetOrCreateCounter(`lodge_email_failed_total{kind="temporary"}`),
		permanent: set.GetOrCreateCounter(`lodge_email_failed_total{kind="permanent"}`),
		opened:    set.GetOrCreateCounter("lodge_email_connections_opened_total"),
		duration:  set.GetOrCreateHistogram("lodge_email_send_duration_seconds"),
	}, nil
}

// Send sends m and returns when the server has taken it (its 250 reply
// to the end of DATA) or it failed: IsPermanent tells whether trying
// again can help. It is safe for concurrent use; it waits for one of the
// pool's connections, or gives up when ctx ends.
func (mr *Mailer) Send(ctx context.Context, m Message) error {
	start := time.Now()
	err := mr.send(ctx, &m)
	switch {
	case err == nil:
		mr.sent.Inc()
		mr.duration.UpdateDuration(start)
	case IsPermanent(err):
		mr.permanent.Inc()
	default:
		mr.temporary.Inc()
	}
	return err
}

func (mr *Mailer) send(ctx context.Context, m *Message) error {
	select {
	case <-mr.done:
		return ErrClosed
	default:
	}
	buf := bufs.Get().(*bytes.Buffer)
	buf.Reset()
	defer func() {
		if buf.Cap() <= maxKeptBuf {
			bufs.Put(buf)
		}
	}()
	env, err := compose(m, mr.signer, mr.dkim, buf)
	if err != nil {
		return err
	}

	select {
	case mr.slots <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("email: waiting for a connection: %w", context.Cause(ctx))
	case <-mr.done:
		return ErrClosed
	}
	defer func() { <-mr.slots }()
	select {
	case <-mr.done: // closed while this Send waited for its slot
		return ErrClosed
	default:
	}

	deadline := time.Now().Add(mr.timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	c, reused, err := mr.take(ctx, deadline)
	if err != nil {
		return mr.explain(ctx, err)
	}
	err = mr.transact(ctx, c, deadline, env, buf.Bytes())
	if reused && stale(err) {
		// The server closed the kept connection (idle timeout, restart,
		// 421) before this message's MAIL FROM was accepted: nothing of
		// it was taken, so a new connection may carry it.
		mr.log.Debug("email: kept connection was closed by the server; reconnecting", "err", err)
		c.close()
		c, err = mr.dial(ctx, deadline)
		if err != nil {
			return mr.explain(ctx, err)
		}
		err = mr.transact(ctx, c, deadline, env, buf.Bytes())
	}
	mr.put(c, err)
	return mr.explain(ctx, err)
}

// stale reports whether err says the connection was dead when MAIL FROM
// was sent: an I/O error other than a timeout, or 421 (closing).
func stale(err error) bool {
	var e *Error
	if !errors.As(err, &e) || e.Stage != "MAIL" {
		return false
	}
	return e.Code == 421 || (e.Code == 0 && !isTimeout(e.Err))
}

// explain makes a timeout or a cancellation say so.
func (mr *Mailer) explain(ctx context.Context, err error) error {
	var e *Error
	if err == nil || !errors.As(err, &e) || e.Code != 0 {
		return err
	}
	if ctx.Err() != nil {
		e.Err = fmt.Errorf("%w (%v)", context.Cause(ctx), e.Err)
	} else if isTimeout(e.Err) {
		e.Err = fmt.Errorf("no answer within the time limit (%v): %w", mr.timeout, e.Err)
	}
	return err
}

// take returns a kept connection, or a new one when none is kept.
func (mr *Mailer) take(ctx context.Context, deadline time.Time) (*conn, bool, error) {
	for {
		select {
		case c := <-mr.idle:
			if time.Since(c.lastUsed) > maxIdle {
				c.close()
				continue
			}
			if err := c.nc.SetDeadline(deadline); err != nil {
				c.close()
				continue
			}
			return c, true, nil
		default:
			c, err := mr.dial(ctx, deadline)
			return c, false, err
		}
	}
}

// put keeps c for the next message when it is still in step with the
// server (no error, or a refusal after which RSET succeeded); else it
// closes it.
func (mr *Mailer) put(c *conn, err error) {
	if err != nil {
		if !isReply(err) || c.c.Reset() != nil {
			c.close()
			return
		}
	}
	c.lastUsed = time.Now()
	mr.mu.Lock()
	defer mr.mu.Unlock()
	if mr.closed {
		c.close()
		return
	}
	select {
	case mr.idle <- c:
	default:
		c.close()
	}
}

// aLongTimeAgo, as a deadline, makes blocked I/O return at once.
var aLongTimeAgo = time.Unix(1, 0)

// dial connects, reads the greeting, says EHLO, secures the connection
// and authenticates, all before deadline.
func (mr *Mailer) dial(ctx context.Context, deadline time.Time) (*conn, error) {
	d := &net.Dialer{Deadline: deadline}
	var nc net.Conn
	var err error
	if mr.srv.implicitTLS {
		nc, err = (&tls.Dialer{NetDialer: d, Config: mr.tls}).DialContext(ctx, "tcp", mr.srv.addr)
	} else {
		nc, err = d.DialContext(ctx, "tcp", mr.srv.addr)
	}
	if err != nil {
		return nil, &Error{Stage: "connect", Err: err}
	}
	mr.opened.Inc()
	if err := nc.SetDeadline(deadline); err != nil {
		nc.Close()
		return nil, &Error{Stage: "connect", Err: err}
	}
	stop := context.AfterFunc(ctx, func() { nc.SetDeadline(aLongTimeAgo) })
	defer stop()

	c, err := smtp.NewClient(nc, mr.srv.host)
	if err != nil {
		nc.Close()
		return nil, stageError("connect", err)
	}
	cn := &conn{c: c, nc: nc}
	fail := func(stage string, err error) (*conn, error) {
		cn.close()
		return nil, stageError(stage, err)
	}
	if err := c.Hello(mr.hello); err != nil {
		return fail("connect", err)
	}
	// Extension sends EHLO; its error is the EHLO's.
	startTLS, _ := c.Extension("STARTTLS")
	secure := mr.srv.implicitTLS
	if !secure && startTLS {
		if err := c.StartTLS(mr.tls); err != nil {
			return fail("tls", err)
		}
		secure = true
	}
	if !secure && mr.srv.requireTLS {
		return fail("tls", errors.New("the server offers no STARTTLS and the URL says tls=required"))
	}
	if mr.srv.auth {
		if !secure && !mr.srv.insecure {
			return fail("auth", errors.New("credentials are sent only over TLS and the server offers none (insecure_auth=1 allows it for loopback tests)"))
		}
		ok, mechs := c.Extension("AUTH")
		if !ok {
			return fail("auth", errors.New("the server offers no AUTH"))
		}
		list := strings.Fields(strings.ToUpper(mechs))
		var a smtp.Auth
		switch {
		case slices.Contains(list, "PLAIN"):
			a = smtp.PlainAuth("", mr.srv.user, mr.srv.pass, mr.srv.host, true)
		case slices.Contains(list, "LOGIN"):
			a = smtp.LoginAuth(mr.srv.user, mr.srv.pass, mr.srv.host, true)
		default:
			return fail("auth", fmt.Errorf("the server offers neither PLAIN nor LOGIN (%s)", mechs))
		}
		if err := c.Auth(a); err != nil {
			return fail("auth", err)
		}
	}
	mr.log.Debug("email: connected", "tls", secure)
	return cn, nil
}

// transact sends one message over c: MAIL, RCPT, DATA.
func (mr *Mailer) transact(ctx context.Context, c *conn, deadline time.Time, env envelope, body []byte) error {
	stop := context.AfterFunc(ctx, func() { c.nc.SetDeadline(aLongTimeAgo) })
	defer stop()
	if err := c.c.Mail("<" + env.from + ">"); err != nil {
		return stageError("MAIL", err)
	}
	if err := c.c.Rcpt("<" + env.to + ">"); err != nil {
		return stageError("RCPT", err)
	}
	// DATA is spoken here rather than through go-mail's Data, whose
	// writer dot-stuffs byte by byte through a 4 KB buffer: a message
	// already in memory goes out in one write (two fifths of the
	// sender's time with a 50 KB PDF was that writer and its syscalls).
	t := c.c.Text
	id, err := t.Cmd("DATA")
	if err != nil {
		return stageError("DATA", err)
	}
	t.StartResponse(id)
	_, _, err = t.ReadResponse(354)
	t.EndResponse(id)
	if err != nil {
		return stageError("DATA", err)
	}
	t.W.WriteString(env.signature)
	writeData(t.W, body)
	if err := t.W.Flush(); err != nil {
		return stageError("DATA", err)
	}
	if _, _, err := t.ReadResponse(250); err != nil {
		return stageError("DATA", err)
	}
	return nil
}

var crlf = []byte("\r\n")

// writeData writes body as DATA carries it, the final ".\r\n" included:
// every line ending in CRLF, a dot doubled at the start of a line (RFC
// 5321 4.5.2), the same bytes textproto's DotWriter writes. A body
// that needs neither (go-mail writes CRLF lines and encodes bodies, so
// nearly all) is written as it is.
func writeData(w io.Writer, body []byte) {
	if needsStuffing(body) {
		stuffed := bufs.Get().(*bytes.Buffer)
		defer func() {
			if stuffed.Cap() <= maxKeptBuf {
				bufs.Put(stuffed)
			}
		}()
		stuffed.Reset()
		dotStuff(stuffed, body)
		body = stuffed.Bytes()
	}
	w.Write(body)
	switch {
	case len(body) == 0 || bytes.HasSuffix(body, crlf):
	case body[len(body)-1] == '\r':
		w.Write(crlf[1:])
	default:
		w.Write(crlf)
	}
	io.WriteString(w, ".\r\n")
}

// needsStuffing reports whether body has a line starting with a dot or
// a line feed without its carriage return.
func needsStuffing(body []byte) bool {
	if len(body) > 0 && body[0] == '.' {
		return true
	}
	for i := 0; ; {
		j := bytes.IndexByte(body[i:], '\n')
		if j < 0 {
			return false
		}
		i += j
		if i == 0 || body[i-1] != '\r' || (i+1 < len(body) && body[i+1] == '.') {
			return true
		}
		i++
	}
}

// dotStuff writes body to out with CRLF line ends and leading dots
// doubled.
func dotStuff(out *bytes.Buffer, body []byte) {
	out.Grow(len(body) + len(body)/64)
	for len(body) > 0 {
		if body[0] == '.' {
			out.WriteByte('.')
		}
		j := bytes.IndexByte(body, '\n')
		if j < 0 {
			out.Write(body)
			return
		}
		out.Write(bytes.TrimSuffix(body[:j], []byte{'\r'}))
		out.Write(crlf)
		body = body[j+1:]
	}
}
func (c *conn) close() { c.c.Close() }

// Close says QUIT on the kept connections and closes them; Sends in
// flight finish, and their connections are closed after. Send fails with
// ErrClosed after Close.
func (mr *Mailer) Close() error {
	mr.mu.Lock()
	if mr.closed {
		mr.mu.Unlock()
		return nil
	}
	mr.closed = true
	close(mr.done)
	mr.mu.Unlock()
	for {
		select {
		case c := <-mr.idle:
			c.nc.SetDeadline(time.Now().Add(5 * time.Second))
			if err := c.c.Quit(); err != nil {
				c.close()
			}
		default:
			return nil
		}
	}
}
