// Package server is lodge's HTTP front: it serves the address check
// (JSON-RPC over HTTPS) and the health, readiness and metrics endpoints on
// fasthttp, with TLS, authentication, limits and graceful shutdown. The
// mail upload endpoints join it in their own package; this one owns the
// listeners and the order in which things start and stop.
//
// Promises:
//   - addr_check is served over TLS 1.2 or newer only. On the optional plain
//     listener it is refused with a clear message, unless the connection
//     comes from a trusted proxy (Config.TrustedProxies) that says, with
//     X-Forwarded-Proto: https, that it terminated TLS.
//   - Every address check request is authenticated before any JSON-RPC
//     processing: missing or wrong credentials get 401 with
//     WWW-Authenticate, repeated failures 429 with Retry-After; credentials
//     in the URL get 400. A connection's Bearer or Basic header is verified
//     once and remembered by the connection (auth.ConnCache) until the
//     auth store changes: a revoked key, a disabled account or user, a new
//     password apply to the next request of open connections too.
//   - Limits are explicit: body size (413), header size (431), read, write
//     and idle timeouts for slow clients (kept by each connection without
//     touching its socket per request: lazyDeadlines), connections per
//     client IP and in all (Config.MaxConns, under the open file limit:
//     past it a connection is closed at once). Running out of descriptors
//     does not stop the server: accept is retried with backoff. JSON-RPC
//     requests whose bodies are over 64 KiB are bounded by the bytes they
//     hold (in all: 503, per account: 429, with Retry-After) and by the
//     work done at once (a core is left to the small ones), and their
//     answers are streamed; a request carries at most
//     rpc.Config.MaxRequestAddresses addresses.
//   - Shutdown: readiness turns 503 first, in-flight requests drain, then
//     Run returns so the caller closes its stores in reverse order.
//   - Nothing of a fasthttp RequestCtx is kept past its handler.
package server

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/segmentio/encoding/json"
	"github.com/valyala/fasthttp"

	"github.com/lodge-mail/lodge/auth"
	"github.com/lodge-mail/lodge/engine"
	"github.com/lodge-mail/lodge/index"
	"github.com/lodge-mail/lodge/rpc"
	"github.com/lodge-mail/lodge/upload"
)

// Config configures the server. The zero value means the documented
// defaults.
type Config struct {
	Addr      string // HTTPS listen address; default ":8443"
	PlainAddr string // plain HTTP listen address; "" for none
	TLSCert   string // PEM certificate; with TLSKey empty too, a self-signed one is made in DataDir/tls
	TLSKey    string
	DataDir   string
	// TrustedProxies may send X-Forwarded-Proto: https on the plain
	// listener for a connection whose TLS they terminated; the
	// X-Forwarded-For they send names the client failed logins are
	// counted under (auth.ClientAddr).
	TrustedProxies []netip.Prefix
	MaxBodyBytes   int           // default 32 MiB; larger bodies get 413
	MaxHeaderBytes int           // default 16 KiB; larger headers get 431
	ReadTimeout    time.Duration // default 30s: a request must arrive within it
	WriteTimeout   time.Duration // default 60s
	IdleTimeout    time.Duration // default 120s between keep-alive requests
	MaxConnsPerIP  int           // default 512
	// MaxConns bounds the open connections of both listeners together, so
	// that the process keeps descriptors for its files: default 3/4 of
	// the open file limit (RLIMIT_NOFILE) less 256, at least half of it.
	// Connections past it, or past MaxConnsPerIP, are accepted and closed
	// at once.
	MaxConns int
	// Large JSON-RPC requests (bodies over 64 KiB, or chunked) are bounded
	// by the memory of their bodies and by the work done at once; their
	// answers are streamed. LargeRPCBytes is the most body bytes they hold
	// at once (a chunked body counts MaxBodyBytes), default 4 times
	// MaxBodyBytes (128 MiB); past it a request gets 503 with Retry-After,
	// its body unread. LargeRPCBytesPerAccount is the same for one
	// account, default MaxBodyBytes; past it, 429 with Retry-After.
	LargeRPCBytes           int
	LargeRPCBytesPerAccount int
	// LargeRPCWorkers is how many large requests are worked on at once,
	// default GOMAXPROCS less one (at least one), so that a core is left
	// for the small requests; the others wait their turn up to
	// LargeRPCWait (default 5 s), then get 503 with Retry-After.
	LargeRPCWorkers int
	LargeRPCWait    time.Duration
	// DrainDelay is how long readiness reports 503 before the listeners
	// close, so load balancers stop sending; default 0.
	DrainDelay      time.Duration
	ShutdownTimeout time.Duration // default 30s
	// ReadyChecks are asked by /readyz, each with a 2 s deadline: the
	// shared database and object store of a node of several (lodge serve
	// -db, -blob). A failing one makes /readyz 503 with its name and
	// error, so a load balancer stops sending to a node that cannot
	// reach them. Nil for none (a single node's stores are its own).
	ReadyChecks map[string]func(context.Context) error
	RPC         rpc.Config
	// Upload serves the mail upload endpoints; nil for none. They are
	// served on both listeners, with Bearer, Basic or Digest credentials.
	Upload *upload.Handler
	// Methods are further JSON-RPC methods (the upload interface's status
	// queries) served beside addr_check.
	Methods map[string]rpc.Documented
	// Public serves paths that need no credentials because their URL is
	// one (the signed links to letters' PDFs and the tracking image of
	// emails, delivery/links): Match says which. nil for none.
	Public PublicHandler
}

// PublicHandler serves paths whose URL carries its own authority.
type PublicHandler interface {
	Match(path []byte) bool
	Serve(ctx *fasthttp.RequestCtx)
}

func (c Config) withDefaults() Config {
	if c.Addr == "" {
		c.Addr = ":8443"
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = 32 << 20
	}
	if c.LargeRPCBytesPerAccount <= 0 {
		c.LargeRPCBytesPerAccount = c.MaxBodyBytes
	}
	if c.LargeRPCBytes <= 0 {
		c.LargeRPCBytes = 4 * c.MaxBodyBytes
	}
	if c.LargeRPCWorkers <= 0 {
		c.LargeRPCWorkers = max(1, runtime.GOMAXPROCS(0)-1)
	}
	if c.LargeRPCWait <= 0 {
		c.LargeRPCWait = 5 * time.Second
	}
	if c.MaxHeaderBytes <= 0 {
		c.MaxHeaderBytes = 16 << 10
	}
	if c.ReadTimeout <= 0 {
		c.ReadTimeout = 30 * time.Second
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = 60 * time.Second
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = 120 * time.Second
	}
	if c.MaxConnsPerIP <= 0 {
		c.MaxConnsPerIP = 512
	}
	if c.MaxConns <= 0 {
		c.MaxConns = defaultMaxConns(openFiles())
	}
	if c.ShutdownTimeout <= 0 {
		c.ShutdownTimeout = 30 * time.Second
	}
	return c
}

// Server is the running HTTP front.
type Server struct {
	cfg Config
	log *slog.Logger
	eng *engine.Engine
	ix  *index.Index
	// authn checks both JSON-RPC (Authenticate: Bearer, Basic) and upload
	// requests (AuthenticateRequest: Digest too), so one throttle counts
	// the failed logins of both.
	authn   *auth.Authenticator
	rpc     *rpc.Server
	metrics *metrics.Set
	ready   atomic.Bool
	fast    *fasthttp.Server
	tls     *tls.Config
	cert    tls.Certificate
	certNew bool

	ln, plainLn net.Listener
	conns       *connLimits
	large       *largeLimits
	challenge   []string

	requests  *metrics.Counter
	latency   *metrics.Summary
	refusals  *metrics.Counter
	authFails *metrics.Counter
}

// New prepares a server: it loads or makes the TLS certificate and opens
// the listeners, so that ports are known (and errors reported) before Run.
// authn should offer Digest (auth.Config.Digest) for the upload endpoints;
// JSON-RPC never takes it.
func New(cfg Config, eng *engine.Engine, ix *index.Index, authn *auth.Authenticator, log *slog.Logger) (*Server, error) {
	cfg = cfg.withDefaults()
	if log == nil {
		log = slog.Default()
	}
	s := &Server{cfg: cfg, log: log, eng: eng, ix: ix, authn: authn, metrics: metrics.NewSet(), challenge: authn.ChallengeHeaders()}
	s.rpc = rpc.New(eng, cfg.RPC, s.metrics)
	s.large = newLargeLimits(cfg, s.metrics)
	for name, m := range cfg.Methods {
		if err := s.rpc.Register(name, m.Handle, m.Doc); err != nil {
			return nil, err
		}
	}
	s.requests = s.metrics.NewCounter(`lodge_http_requests_total`)
	s.latency = s.metrics.NewSummary(`lodge_jsonrpc_request_duration_seconds`)
	s.refusals = s.metrics.NewCounter(`lodge_jsonrpc_plain_refusals_total`)
	s.authFails = s.metrics.NewCounter(`lodge_auth_failures_total`)
	// credentials checked, not taken from their connection's cache
	s.metrics.NewGauge(`lodge_auth_checks_total`, func() float64 { return float64(authn.Checks()) })
	s.metrics.NewGauge(`lodge_verdict_cache_hit_ratio`, func() float64 {
		h, m := eng.CacheStats()
		if h+m == 0 {
			return 0
		}
		return float64(h) / float64(h+m)
	})
	s.metrics.NewGauge(`lodge_verdict_cache_hits_total`, func() float64 { h, _ := eng.CacheStats(); return float64(h) })
	s.metrics.NewGauge(`lodge_verdict_cache_misses_total`, func() float64 { _, m := eng.CacheStats(); return float64(m) })
	if ix != nil {
		// the engine's reference, not ix's: a live engine's changes
		// (indexsync) while the server runs
		f := func() engine.Facts { return eng.Reference().Facts() }
		s.metrics.NewGauge(`lodge_index_localities`, func() float64 { return float64(f().Localities) })
		s.metrics.NewGauge(`lodge_index_postcodes`, func() float64 { return float64(f().Postcodes) })
		s.metrics.NewGauge(`lodge_index_countries`, func() float64 { return float64(f().Countries) })
		s.metrics.NewGauge(`lodge_index_streets`, func() float64 { return float64(f().Streets) })
		s.metrics.NewGauge(`lodge_index_address_points`, func() float64 { return float64(f().Points) })
		load := ix.LoadTime.Seconds()
		s.metrics.NewGauge(`lodge_index_load_seconds`, func() float64 { return load })
	}
	var err error
	if s.tls, s.cert, s.certNew, err = loadTLS(cfg.TLSCert, cfg.TLSKey, cfg.DataDir); err != nil {
		return nil, err
	}
	s.fast = &fasthttp.Server{
		Handler:               s.handle,
		Name:                  "lodge",
		ReadTimeout:           cfg.ReadTimeout,
		WriteTimeout:          cfg.WriteTimeout,
		IdleTimeout:           cfg.IdleTimeout,
		MaxRequestBodySize:    cfg.MaxBodyBytes,
		ReadBufferSize:        cfg.MaxHeaderBytes,
		NoDefaultServerHeader: true,
		NoDefaultDate:         false,
		CloseOnShutdown:       true,
		Logger:                fastLogger{log},
		ErrorHandler:          s.transportError,
		// Bodies beyond a path's limit arrive as a stream: uploads are
		// written to disk as they come, JSON-RPC refuses them (413).
		StreamRequestBody:            true,
		DisablePreParseMultipartForm: true,
		HeaderReceived:               s.requestConfig,
		ExpectHandler:                s.expectContinue,
	}
	// The listeners count connections (in all and per client address),
	// both together: fasthttp's MaxConnsPerIP is left unset.
	s.conns = newConnLimits(cfg.MaxConns, cfg.MaxConnsPerIP, s.metrics, log)
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, err
	}
	s.ln = newLimitListener(ln, s.conns)
	if cfg.PlainAddr != "" {
		if ln, err = net.Listen("tcp", cfg.PlainAddr); err != nil {
			s.ln.Close()
			return nil, err
		}
		s.plainLn = newLimitListener(ln, s.conns)
	}
	return s, nil
}

// prefetchBytes is how much of a body fasthttp reads before the handler
// runs; the handler reads the rest, so that it can refuse a body by its
// declared size before reading it (413), and uploads stream to disk.
const prefetchBytes = 64 << 10

// requestConfig sets per-path read settings: uploads may take longer to
// arrive than other requests.
func (s *Server) requestConfig(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
	if s.cfg.Upload != nil && upload.IsStreamingPath(h.RequestURI()) {
		return fasthttp.RequestConfig{MaxRequestBodySize: prefetchBytes, ReadTimeout: 10 * time.Minute}
	}
	if h.ContentLength() > s.cfg.MaxBodyBytes {
		// refused by its declared size: answer before waiting for any of it
		return fasthttp.RequestConfig{MaxRequestBodySize: 1}
	}
	return fasthttp.RequestConfig{MaxRequestBodySize: prefetchBytes}
}

// expectContinue answers "Expect: 100-continue": a body declared larger
// than its path accepts is refused with 413, and an upload without
// credentials with the 401 challenge, before the client sends the body.
func (s *Server) expectContinue(ctx *fasthttp.RequestCtx) int {
	h := &ctx.Request.Header
	// A refusal's answer is set on ctx.Response here: fasthttp sends it as
	// it stands (the handler does not run). The connection then closes; a
	// client that sends the body anyway finds it drained (lingerOnClose).
	if s.cfg.Upload != nil && upload.IsStreamingPath(h.RequestURI()) {
		if s.cfg.Upload.RefuseDeclaredTooLarge(ctx) {
			LingerOnClose(ctx)
			return fasthttp.StatusRequestEntityTooLarge
		}
		if len(h.Peek(fasthttp.HeaderAuthorization)) == 0 {
			// no credentials: the challenge before the body, so that a
			// Digest client (which learns the nonce from it) sends the
			// body once, authenticated
			ctx.Error(authMessage(auth.ErrMissing, true)+"\n", fasthttp.StatusUnauthorized)
			for _, c := range s.authn.UploadChallengeHeaders(false) {
				ctx.Response.Header.Add("WWW-Authenticate", c)
			}
			LingerOnClose(ctx)
			return fasthttp.StatusUnauthorized
		}
		return fasthttp.StatusContinue
	}
	if h.ContentLength() > s.cfg.MaxBodyBytes {
		rpcHTTPError(ctx, fasthttp.StatusRequestEntityTooLarge, rpc.CodeInvalidRequest,
			fmt.Sprintf("request body larger than %d bytes", s.cfg.MaxBodyBytes))
		LingerOnClose(ctx)
		return fasthttp.StatusRequestEntityTooLarge
	}
	return fasthttp.StatusContinue
}

// LingerOnClose has the connection of ctx drain what the client still
// sends (up to 4 MiB) before it closes (conn.lingerOnClose), so that a
// client sending a body the answer refused reads that answer instead of
// a reset. Handlers that refuse a body they have not read whole (the
// portal's forms) call it with SetConnectionClose.
func LingerOnClose(ctx *fasthttp.RequestCtx) {
	c := ctx.Conn()
	if tc, ok := c.(interface{ NetConn() net.Conn }); ok { // TLS
		c = tc.NetConn()
	}
	if lc, ok := c.(*conn); ok {
		lc.lingerOnClose()
	}
}

// drainBytes is how much of a refused body is read and dropped so that the
// client, still sending, sees the answer and keeps its connection; larger
// bodies get the answer and a closed connection.
const drainBytes = 4 << 20

// Addr returns the HTTPS listener's address.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// PlainAddr returns the plain listener's address, or nil.
func (s *Server) PlainAddr() net.Addr {
	if s.plainLn == nil {
		return nil
	}
	return s.plainLn.Addr()
}

// Certificate returns the serving certificate and whether it was made now.
func (s *Server) Certificate() (tls.Certificate, bool) { return s.cert, s.certNew }

// Metrics returns the server's metric set, for other packages' metrics.
func (s *Server) Metrics() *metrics.Set { return s.metrics }

// Run serves until ctx is done, then shuts down gracefully: readiness
// turns 503, after DrainDelay the listeners close and in-flight requests
// finish (up to ShutdownTimeout).
func (s *Server) Run(ctx context.Context) error {
	errc := make(chan error, 2)
	go func() { errc <- s.fast.Serve(tls.NewListener(s.ln, s.tls)) }()
	if s.plainLn != nil {
		go func() { errc <- s.fast.Serve(s.plainLn) }()
	}
	s.ready.Store(true)
	s.log.Info("serving", "https", s.ln.Addr().String(), "plain", addrString(s.plainLn))
	s.log.Info("connection limits", "max_conns", s.cfg.MaxConns, "max_conns_per_ip", s.cfg.MaxConnsPerIP, "open_files", openFiles())
	select {
	case err := <-errc:
		s.ready.Store(false)
		return fmt.Errorf("listener: %w", err)
	case <-ctx.Done():
	}
	s.ready.Store(false)
	s.log.Info("shutting down: readiness is 503, draining")
	if s.cfg.DrainDelay > 0 {
		time.Sleep(s.cfg.DrainDelay)
	}
	sctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	defer cancel()
	if err := s.fast.ShutdownWithContext(sctx); err != nil {
		// Connections still open now are clients that did not finish a
		// request in time (slow or stalled); they are dropped at exit.
		s.log.Warn("shutdown timeout: dropping connections still open", "after", s.cfg.ShutdownTimeout, "err", err)
	}
	s.log.Info("stopped serving")
	return nil
}

func addrString(ln net.Listener) string {
	if ln == nil {
		return ""
	}
	return ln.Addr().String()
}

var (
	pathRPC       = []byte("/apiv2/jsonrpc")
	pathRPCPublic = []byte("/publicinterface/jsonrpc")
	ctJSON        = []byte("application/json")
	ctTextJSON    = []byte("text/json")
)

func (s *Server) handle(ctx *fasthttp.RequestCtx) {
	s.requests.Inc()
	path := ctx.Path()
	switch string(path) {
	case "/healthz":
		ctx.SetContentType("text/plain; charset=utf-8")
		ctx.WriteString("ok\n")
		return
	case "/readyz":
		ctx.SetContentType("text/plain; charset=utf-8")
		if !s.ready.Load() {
			ctx.SetStatusCode(fasthttp.StatusServiceUnavailable)
			ctx.WriteString("shutting down\n")
			return
		}
		if msg := s.readyChecks(); msg != "" {
			ctx.SetStatusCode(fasthttp.StatusServiceUnavailable)
			ctx.WriteString(msg)
			return
		}
		ctx.WriteString("ready\n")
		return
	case "/metrics":
		ctx.SetContentType("text/plain; version=0.0.4; charset=utf-8")
		s.metrics.WritePrometheus(ctx)
		metrics.WriteProcessMetrics(ctx)
		return
	}
	switch {
	case bytes.Equal(path, pathRPC) || bytes.Equal(path, pathRPCPublic):
		s.handleRPC(ctx)
	case s.cfg.Upload != nil && upload.IsUploadPath(path):
		s.handleUpload(ctx)
	case s.cfg.Public != nil && s.cfg.Public.Match(path):
		s.cfg.Public.Serve(ctx)
	default:
		ctx.Error("not found\n", fasthttp.StatusNotFound)
	}
	if ctx.Response.ConnectionClose() && ctx.Request.Header.ContentLength() != 0 {
		// the answer closes the connection with the body perhaps unread
		LingerOnClose(ctx)
	}
}

// readyChecks runs Config.ReadyChecks in name order and returns what
// failed, one line each; "" when all passed.
func (s *Server) readyChecks() string {
	if len(s.cfg.ReadyChecks) == 0 {
		return ""
	}
	names := make([]string, 0, len(s.cfg.ReadyChecks))
	for name := range s.cfg.ReadyChecks {
		names = append(names, name)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, name := range names {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err := s.cfg.ReadyChecks[name](ctx)
		cancel()
		if err != nil {
			fmt.Fprintf(&b, "%s: %v\n", name, err)
		}
	}
	return b.String()
}

// handleRPC serves the JSON-RPC endpoint.
func (s *Server) handleRPC(ctx *fasthttp.RequestCtx) {
	// fasthttp took the time as it called the handler: reading the clock
	// again cost 2% of a single address's time
	defer s.latency.UpdateDuration(ctx.Time())
	if auth.URLHasCredentials(ctx.RequestURI()) {
		rpcHTTPError(ctx, fasthttp.StatusBadRequest, rpc.CodeInvalidRequest, "credentials must not appear in the URL: send them in the Authorization header")
		return
	}
	if !ctx.IsTLS() && !s.viaTrustedProxy(ctx) {
		s.refusals.Inc()
		rpcHTTPError(ctx, fasthttp.StatusForbidden, rpc.CodeInvalidRequest,
			"JSON-RPC must use HTTPS: this is the plain listener; connect to the HTTPS port "+portOf(s.ln.Addr())+" instead")
		return
	}
	if !ctx.IsPost() {
		ctx.Response.Header.Set("Allow", "POST")
		rpcHTTPError(ctx, fasthttp.StatusMethodNotAllowed, rpc.CodeInvalidRequest, "JSON-RPC requests are POSTed")
		return
	}
	// Verified once per connection and header while the auth store does
	// not change (auth.ConnCache): the hashing and look-ups were a fifth
	// of this handler's time.
	p, err := s.authn.AuthenticateConn(connAuth(ctx), ctx.Request.Header.Peek("Authorization"), func() string { return s.clientAddr(ctx) })
	if err != nil {
		s.authFails.Inc()
		var th *auth.ThrottledError
		if errors.As(err, &th) {
			ctx.Response.Header.Set("Retry-After", strconv.Itoa(int(th.RetryAfter.Seconds()+0.999)))
			rpcHTTPError(ctx, fasthttp.StatusTooManyRequests, rpc.CodeInvalidRequest, "too many failed attempts: retry later")
			return
		}
		for _, c := range s.challenge {
			ctx.Response.Header.Add("WWW-Authenticate", c)
		}
		rpcHTTPError(ctx, fasthttp.StatusUnauthorized, rpc.CodeInvalidRequest, authMessage(err, false))
		return
	}
	if ct := ctx.Request.Header.ContentType(); !isJSONType(ct) {
		rpcHTTPError(ctx, fasthttp.StatusUnsupportedMediaType, rpc.CodeInvalidRequest, "Content-Type must be application/json or text/json")
		return
	}
	principal := rpc.Principal{Account: p.Account, User: p.User}
	switch cl := ctx.Request.Header.ContentLength(); {
	case cl > s.cfg.MaxBodyBytes:
		s.discardBody(ctx)
		rpcHTTPError(ctx, fasthttp.StatusRequestEntityTooLarge, rpc.CodeInvalidRequest,
			fmt.Sprintf("request body larger than %d bytes", s.cfg.MaxBodyBytes))
		return
	case cl < 0 || cl > prefetchBytes:
		s.handleLargeRPC(ctx, principal)
		return
	}
	// small: fasthttp has read the body whole
	bp := bufPool.Get().(*[]byte)
	out, respond := s.rpc.Handle((*bp)[:0], ctx.PostBody(), principal)
	if respond {
		ctx.SetContentType("application/json")
		ctx.Response.AppendBody(out) // a copy: nothing of ours outlives the handler in fasthttp's buffers
	} else {
		ctx.SetStatusCode(fasthttp.StatusNoContent)
	}
	if cap(out) <= 1<<20 {
		*bp = out[:0]
		bufPool.Put(bp)
	}
}

// bufPool holds response buffers; large ones are let go.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// handleUpload authenticates an upload request and hands it to the upload
// handler. Uploads are accepted on both listeners, as the specification's
// standard method allows HTTP or HTTPS.
func (s *Server) handleUpload(ctx *fasthttp.RequestCtx) {
	if auth.URLHasCredentials(ctx.RequestURI()) {
		ctx.SetConnectionClose()
		ctx.Error("credentials must not appear in the URL: send them in the Authorization header\n", fasthttp.StatusBadRequest)
		return
	}
	p, err := s.authn.AuthenticateRequest(ctx.Request.Header.Peek("Authorization"), ctx.Method(), ctx.RequestURI(), s.clientAddr(ctx))
	if err != nil {
		if !errors.Is(err, auth.ErrMissing) && !errors.Is(err, auth.ErrStaleNonce) {
			s.authFails.Inc()
		}
		ctx.SetConnectionClose() // the body, if any, is not read
		var th *auth.ThrottledError
		// ctx.Error resets the response: headers are set after it.
		if errors.As(err, &th) {
			ctx.Error("too many failed attempts: retry later\n", fasthttp.StatusTooManyRequests)
			ctx.Response.Header.Set("Retry-After", strconv.Itoa(int(th.RetryAfter.Seconds()+0.999)))
			return
		}
		msg := authMessage(err, true)
		if errors.Is(err, auth.ErrStaleNonce) {
			msg = "the Digest nonce is stale (expired, or issued before the server restarted): retry with the new one"
		}
		ctx.Error(msg+"\n", fasthttp.StatusUnauthorized)
		for _, c := range s.authn.UploadChallengeHeaders(errors.Is(err, auth.ErrStaleNonce)) {
			ctx.Response.Header.Add("WWW-Authenticate", c)
		}
		return
	}
	user := p.User
	if user == "" {
		user = p.KeyID
	}
	s.cfg.Upload.Serve(ctx, upload.Principal{Account: p.Account, User: user})
}

// authMessage says why authentication failed without helping a guesser.
// It names the schemes the endpoint takes: Digest too when digest is set
// (the upload endpoints), Bearer and Basic only otherwise (JSON-RPC).
func authMessage(err error, digest bool) string {
	switch {
	case errors.Is(err, auth.ErrMissing) && digest:
		return "authentication required: send an API key (Authorization: Bearer KEY), Basic or Digest credentials"
	case errors.Is(err, auth.ErrMissing):
		return "authentication required: send an API key (Authorization: Bearer KEY) or Basic credentials"
	case (errors.Is(err, auth.ErrMalformed) || errors.Is(err, auth.ErrUnsupported)) && digest:
		return "malformed Authorization header: use one of Bearer, Basic or Digest"
	case errors.Is(err, auth.ErrMalformed), errors.Is(err, auth.ErrUnsupported):
		return "malformed Authorization header: use one of Bearer or Basic"
	default:
		return "invalid credentials"
	}
}

func isJSONType(ct []byte) bool {
	if i := bytes.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	ct = bytes.TrimSpace(ct)
	return bytes.EqualFold(ct, ctJSON) || bytes.EqualFold(ct, ctTextJSON)
}

// viaTrustedProxy reports whether a plain connection comes from a trusted
// proxy that terminated TLS.
func (s *Server) viaTrustedProxy(ctx *fasthttp.RequestCtx) bool {
	if len(s.cfg.TrustedProxies) == 0 {
		return false
	}
	if !bytes.EqualFold(ctx.Request.Header.Peek("X-Forwarded-Proto"), []byte("https")) {
		return false
	}
	ip, ok := netip.AddrFromSlice(ctx.RemoteIP())
	return ok && auth.TrustedPeer(ip, s.cfg.TrustedProxies)
}

// clientAddr is the client failed logins are counted under: the peer, or
// for a trusted proxy the client X-Forwarded-For names.
func (s *Server) clientAddr(ctx *fasthttp.RequestCtx) string {
	ip, ok := netip.AddrFromSlice(ctx.RemoteIP())
	if !ok {
		return ctx.RemoteIP().String()
	}
	if !auth.TrustedPeer(ip, s.cfg.TrustedProxies) {
		return ip.Unmap().String()
	}
	// The header section as received: PeekAll would add trailer fields,
	// which a client may append after the proxy's header.
	var xff [][]byte
	for k, v := range ctx.Request.Header.AllInOrder() {
		if bytes.EqualFold(k, hdrForwardedFor) {
			xff = append(xff, v)
		}
	}
	return auth.ClientAddr(ip, xff, s.cfg.TrustedProxies)
}

var hdrForwardedFor = []byte("X-Forwarded-For")

func portOf(a net.Addr) string {
	if t, ok := a.(*net.TCPAddr); ok {
		return strconv.Itoa(t.Port)
	}
	return a.String()
}

// rpcHTTPError answers with an HTTP status and a JSON-RPC error body, so a
// JSON-RPC client can read the reason whatever the status.
func rpcHTTPError(ctx *fasthttp.RequestCtx, status, code int, msg string) {
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	b := make([]byte, 0, 96+len(msg))
	b = append(b, `{"jsonrpc":"2.0","id":null,"error":{"code":`...)
	b = strconv.AppendInt(b, int64(code), 10)
	b = append(b, `,"message":`...)
	b = json.AppendEscape(b, msg, 0)
	b = append(b, "}}"...)
	ctx.SetBody(b)
}

// transportError answers requests fasthttp could not read: too large,
// too slow, malformed.
func (s *Server) transportError(ctx *fasthttp.RequestCtx, err error) {
	var small *fasthttp.ErrSmallBuffer
	switch {
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		rpcHTTPError(ctx, fasthttp.StatusRequestEntityTooLarge, rpc.CodeInvalidRequest,
			fmt.Sprintf("request body larger than %d bytes", s.cfg.MaxBodyBytes))
		LingerOnClose(ctx)
	case errors.As(err, &small):
		ctx.Error("request header fields too large\n", fasthttp.StatusRequestHeaderFieldsTooLarge)
	default:
		var te interface{ Timeout() bool }
		if errors.As(err, &te) && te.Timeout() {
			ctx.Error("request timeout\n", fasthttp.StatusRequestTimeout)
			return
		}
		ctx.Error("bad request\n", fasthttp.StatusBadRequest)
	}
}

type fastLogger struct{ l *slog.Logger }

// Printf formats only when debug logging is on: fasthttp calls it for
// every JSON-RPC request (Request.Body warns that a streamed body is read
// whole; a small one was read ahead already), and the message it made cost
// an allocation a request.
func (f fastLogger) Printf(format string, args ...any) {
	if f.l.Enabled(context.Background(), slog.LevelDebug) {
		f.l.Debug(fmt.Sprintf(format, args...))
	}
}
