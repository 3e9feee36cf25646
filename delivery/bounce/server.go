package bounce

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/emersion/go-smtp"

	"github.com/lodge-mail/lodge/internal/dnsname"
)

// Bounce is one failed recipient of a delivery status notification sent
// to a VERP address.
type Bounce struct {
	// Token is the VERP address's token: the caller's name for the
	// letter.
	Token string
	// Permanent: the reporting system gave up (Recipient.Failed).
	// False: delivery is only delayed so far.
	Permanent bool
	// Action, Status and Diagnostic are the report's (Recipient).
	Action     string
	Status     string
	Diagnostic string
	// Recipient is the address that failed.
	Recipient string
	// MessageID is the Message-ID of the returned message, when the
	// report returned its headers (DSN.MessageID).
	MessageID string
	// ReportingMTA names the system that wrote the report.
	ReportingMTA string
}

// Config configures a Server. The zero value of every field but Domain
// and Handler means its documented default.
type Config struct {
	// Domain is the VERP domain: the Server takes mail for
	// bounce+<token>@Domain only. Required.
	Domain string
	// Handler is called for each failed recipient of each report, once
	// per VERP recipient of the message, before the Server answers the
	// message. Its error makes the Server answer 451 (try again later),
	// so that the reporting system sends the report again: Handler must
	// take a Bounce it has already taken (at least once). It may be
	// called from several connections at once. Required.
	Handler func(Bounce) error
	// MaxSize is the largest message taken (the SIZE extension says it;
	// a larger one is refused with 552). Default MaxDSNSize (10 MiB).
	MaxSize int64
	// Timeout bounds the wait for each command or line from the client,
	// and each answer. Default 1 minute.
	Timeout time.Duration
	// SessionTimeout bounds a whole connection. Default 10 minutes.
	SessionTimeout time.Duration
	// MaxConns bounds the connections served at once; more wait in the
	// kernel's backlog. Default 100.
	MaxConns int
	// Hostname is the name in the greeting. Default Domain.
	Hostname string
	// TLS, when set, is offered with STARTTLS.
	TLS *tls.Config
	// Log receives refusals and ignored messages (info) and handler
	// failures (warn); nil: slog.Default().
	Log *slog.Logger
	// Metrics receives the counters (package doc); nil: none.
	Metrics *metrics.Set
}

// Defaults.
const (
	DefaultTimeout        = time.Minute
	DefaultSessionTimeout = 10 * time.Minute
	DefaultMaxConns       = 100
	maxRecipients         = 10 // VERP recipients of one message
)

// Server is the inbound SMTP listener for bounces.
type Server struct {
	cfg  Config
	smtp *smtp.Server
	log  *slog.Logger
	sem  chan struct{}

	reports, ignored, refused          *metrics.Counter
	permanent, temporary, handlerFails *metrics.Counter
}

// NewServer checks cfg and returns a Server; Serve starts it.
func NewServer(cfg Config) (*Server, error) {
	cfg.Domain = strings.ToLower(cfg.Domain)
	if !dnsname.Valid(cfg.Domain) {
		return nil, fmt.Errorf("bounce: domain %q is not a domain name", cfg.Domain)
	}
	if cfg.Handler == nil {
		return nil, errors.New("bounce: no handler")
	}
	if cfg.MaxSize < 0 || cfg.Timeout < 0 || cfg.SessionTimeout < 0 || cfg.MaxConns < 0 {
		return nil, errors.New("bounce: negative limit")
	}
	if cfg.MaxSize == 0 {
		cfg.MaxSize = MaxDSNSize
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.SessionTimeout == 0 {
		cfg.SessionTimeout = DefaultSessionTimeout
	}
	if cfg.MaxConns == 0 {
		cfg.MaxConns = DefaultMaxConns
	}
	if cfg.Hostname == "" {
		cfg.Hostname = cfg.Domain
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	set := cfg.Metrics
	if set == nil {
		set = metrics.NewSet()
	}
	s := &Server{
		cfg:          cfg,
		log:          cfg.Log.With("listener", "bounce"),
		sem:          make(chan struct{}, cfg.MaxConns),
		reports:      set.GetOrCreateCounter("lodge_bounce_messages_total"),
		ignored:      set.GetOrCreateCounter("lodge_bounce_ignored_total"),
		refused:      set.GetOrCreateCounter("lodge_bounce_refused_recipients_total"),
		permanent:    set.GetOrCreateCounter(`lodge_bounce_reports_total{kind="permanent"}`),
		temporary:    set.GetOrCreateCounter(`lodge_bounce_reports_total{kind="temporary"}`),
		handlerFails: set.GetOrCreateCounter("lodge_bounce_handler_errors_total"),
	}
	srv := smtp.NewServer(smtp.BackendFunc(s.newSession))
	srv.Domain = cfg.Hostname
	srv.MaxMessageBytes = cfg.MaxSize
	srv.MaxRecipients = maxRecipients
	srv.MaxLineLength = 2000 // RFC 5321's 1,000 with room for sloppy senders
	srv.ReadTimeout = cfg.Timeout
	srv.WriteTimeout = cfg.Timeout
	srv.TLSConfig = cfg.TLS
	srv.ErrorLog = slogAdapter{s.log}
	s.smtp = srv
	return s, nil
}

// Serve answers connections on ln until Close. Binding the listener is
// the caller's (port 0 in tests; the configured address in lodge).
func (s *Server) Serve(ln net.Listener) error {
	return s.smtp.Serve(&limitListener{Listener: ln, sem: s.sem, session: s.cfg.SessionTimeout})
}

// Close stops accepting and closes every connection.
func (s *Server) Close() error { return s.smtp.Close() }

// Shutdown stops accepting and waits for the connections to end, or ctx.
func (s *Server) Shutdown(ctx context.Context) error { return s.smtp.Shutdown(ctx) }

// session is one SMTP connection's state.
type session struct {
	s      *Server
	remote string
	tokens []string
}

func (s *Server) newSession(c *smtp.Conn) (smtp.Session, error) {
	return &session{s: s, remote: c.Conn().RemoteAddr().String()}, nil
}

func (ss *session) Reset() { ss.tokens = nil }

func (ss *session) Logout() error { return nil }

// Mail takes any sender: reports come from <>, auto-replies from people.
func (ss *session) Mail(from string, _ *smtp.MailOptions) error {
	ss.tokens = nil
	return nil
}

func (ss *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	tok, err := ParseVERP(to, ss.s.cfg.Domain)
	if err != nil {
		ss.s.refused.Inc()
		ss.s.log.Info("bounce: recipient refused", "remote", ss.remote, "rcpt", clip(to))
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1},
			Message: fmt.Sprintf("no such mailbox here: only %s<token>@%s", verpPrefix, ss.s.cfg.Domain)}
	}
	for _, t := range ss.tokens {
		if t == tok {
			return nil
		}
	}
	ss.tokens = append(ss.tokens, tok)
	return nil
}

func (ss *session) Data(r io.Reader) error {
	var buf bytes.Buffer
	if _, err := io.Copy(&buf, r); err != nil {
		return err // go-smtp answers ErrDataTooLarge with 552
	}
	ss.s.reports.Inc()
	d, err := ParseDSN(&buf)
	if err != nil {
		// Not a report, or one that cannot be read: answering 5xx would
		// only bounce the bounce; it is taken and dropped.
		ss.s.ignored.Inc()
		ss.s.log.Info("bounce: message ignored", "remote", ss.remote, "tokens", ss.tokens, "why", err)
		return nil
	}
	for _, tok := range ss.tokens {
		for _, rc := range d.Recipients {
			failed, permanent := rc.Failed()
			if !failed {
				continue
			}
			b := Bounce{Token: tok, Permanent: permanent, Action: rc.Action, Status: rc.Status,
				Diagnostic: rc.Diagnostic, Recipient: rc.FinalRecipient, MessageID: d.MessageID,
				ReportingMTA: d.ReportingMTA}
			if err := ss.s.cfg.Handler(b); err != nil {
				ss.s.handlerFails.Inc()
				ss.s.log.Warn("bounce: handler failed; asking the sender to try again", "token", tok, "err", err)
				return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0},
					Message: "cannot record the report now, try again later"}
			}
			if permanent {
				ss.s.permanent.Inc()
			} else {
				ss.s.temporary.Inc()
			}
		}
	}
	return nil
}

// limitListener makes Accept wait while MaxConns connections are open,
// and closes each connection after the session time limit: the
// per-line Timeout alone lets a client trickle forever. (It is done
// here, not in the SMTP session, which go-smtp starts only at EHLO.)
type limitListener struct {
	net.Listener
	sem     chan struct{}
	session time.Duration
}

func (l *limitListener) Accept() (net.Conn, error) {
	l.sem <- struct{}{}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	lc := &limitConn{Conn: c, release: func() { <-l.sem }}
	lc.timer = time.AfterFunc(l.session, func() { lc.Close() })
	return lc, nil
}

type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
	timer   *time.Timer
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.timer.Stop()
		c.release()
	})
	return err
}

// slogAdapter gives go-smtp's error log to slog.
type slogAdapter struct{ log *slog.Logger }

func (a slogAdapter) Printf(format string, v ...any) {
	a.log.Debug("bounce: " + fmt.Sprintf(format, v...))
}

func (a slogAdapter) Println(v ...any) {
	a.log.Debug("bounce: " + strings.TrimSpace(fmt.Sprintln(v...)))
}
