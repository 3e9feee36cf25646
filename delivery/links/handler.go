package links

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/valyala/fasthttp"
)

// ErrNotFound is what a Store's LetterPDF wraps when the letter, or its
// PDF, cannot be had any more (no such letter, its documents purged, a
// document that cannot be read): the link answers 404. Any other error
// answers 503 with Retry-After.
var ErrNotFound = errors.New("no such letter or document")

// Store is what the links serve and record: the pipeline implements it.
type Store interface {
	// LetterPDF returns the path of a letter's PDF (made once, encrypted
	// when the letter has a password: production.Producer.LetterPDF).
	LetterPDF(ctx context.Context, epid string, idx int) (path string, err error)
	// Opened records an opening of kind (KindDoc: the PDF; KindOpen: the
	// email's tracking image) of a letter at at.
	Opened(epid string, idx int, kind string, at time.Time) error
}

// Config sets up a Handler. Key and Store are needed; the zero value of
// the others means the documented defaults.
type Config struct {
	Key   []byte // at least MinKeySize bytes (LoadOrCreateKey)
	Store Store
	// Timeout bounds the making of a letter's PDF for one request
	// (default 60 s).
	Timeout time.Duration
	// Every is how often an opening of one letter and kind is recorded
	// at most (default a minute).
	Every   time.Duration
	Now     func() time.Time
	Log     *slog.Logger
	Metrics *metrics.Set // default a set of its own
}

// Handler serves GET (and HEAD) /l/<token> and /o/<token>.gif on lodge's
// fasthttp server. It is safe for concurrent use and keeps nothing of a
// request after it returns.
type Handler struct {
	cfg              Config
	seen             limiter
	bad, fails       *metrics.Counter
	served, recorded map[string]*metrics.Counter // by kind
}

// New returns a Handler.
func New(cfg Config) (*Handler, error) {
	if len(cfg.Key) < MinKeySize {
		return nil, fmt.Errorf("links: a key of at least %d bytes is needed, got %d", MinKeySize, len(cfg.Key))
	}
	if cfg.Store == nil {
		return nil, errors.New("links: no store")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 60 * time.Second
	}
	if cfg.Every <= 0 {
		cfg.Every = time.Minute
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Metrics == nil {
		cfg.Metrics = metrics.NewSet()
	}
	h := &Handler{cfg: cfg, seen: limiter{every: cfg.Every, last: map[letterKind]time.Time{}},
		bad:    cfg.Metrics.GetOrCreateCounter("lodge_links_refused_total"),
		fails:  cfg.Metrics.GetOrCreateCounter("lodge_links_failed_total"),
		served: map[string]*metrics.Counter{}, recorded: map[string]*metrics.Counter{}}
	for _, k := range []string{KindDoc, KindOpen} {
		h.served[k] = cfg.Metrics.GetOrCreateCounter(`lodge_links_served_total{kind="` + k + `"}`)
		h.recorded[k] = cfg.Metrics.GetOrCreateCounter(`lodge_links_openings_recorded_total{kind="` + k + `"}`)
	}
	return h, nil
}

var (
	prefixDoc  = []byte("/l/")
	prefixOpen = []byte("/o/")
	suffixGIF  = []byte(".gif")
)

// IsPath reports whether a request path is one the Handler serves.
func IsPath(path []byte) bool {
	return bytes.HasPrefix(path, prefixDoc) || bytes.HasPrefix(path, prefixOpen)
}

// Match is IsPath, as a method (the server's PublicHandler).
func (h *Handler) Match(path []byte) bool { return IsPath(path) }

// pixel is a 1x1 transparent GIF.
var pixel = []byte("GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff!\xf9\x04\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;")

// Serve answers a request whose path IsPath. Any token that is not a
// valid one of the path's kind is 404.
func (h *Handler) Serve(ctx *fasthttp.RequestCtx) {
	path := ctx.Path()
	var token []byte
	want := KindDoc
	switch {
	case bytes.HasPrefix(path, prefixDoc):
		token = path[len(prefixDoc):]
	case bytes.HasPrefix(path, prefixOpen) && bytes.HasSuffix(path, suffixGIF):
		token, want = path[len(prefixOpen):len(path)-len(suffixGIF)], KindOpen
	}
	now := h.cfg.Now()
	epid, idx, kind, err := Verify(h.cfg.Key, string(token), now)
	if err != nil || kind != want {
		h.bad.Inc()
		ctx.Error("not found\n", fasthttp.StatusNotFound)
		return
	}
	if !ctx.IsGet() && !ctx.IsHead() {
		ctx.Response.Header.Set("Allow", "GET, HEAD")
		ctx.Error("method not allowed\n", fasthttp.StatusMethodNotAllowed)
		return
	}
	h.private(ctx)
	if kind == KindOpen {
		ctx.SetContentType("image/gif")
		ctx.SetBody(pixel)
	} else if !h.servePDF(ctx, epid, idx) {
		return
	}
	h.served[kind].Inc()
	if ctx.IsGet() {
		h.record(epid, idx, kind, now)
	}
}

// private sets the headers of an answer that is the recipient's alone.
func (h *Handler) private(ctx *fasthttp.RequestCtx) {
	hd := &ctx.Response.Header
	hd.Set("Cache-Control", "private, no-store, max-age=0")
	hd.Set("Pragma", "no-cache")
	hd.Set("Expires", "0")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Robots-Tag", "noindex, nofollow")
}

// servePDF answers with the letter's PDF, streamed from its file; false
// when it could not (the answer is then the error).
func (h *Handler) servePDF(ctx *fasthttp.RequestCtx, epid string, idx int) bool {
	c, cancel := context.WithTimeout(context.Background(), h.cfg.Timeout)
	path, err := h.cfg.Store.LetterPDF(c, epid, idx)
	cancel()
	var f *os.File
	var fi os.FileInfo
	if err == nil {
		if f, err = os.Open(path); err == nil {
			if fi, err = f.Stat(); err != nil {
				f.Close()
			}
		}
		if errors.Is(err, os.ErrNotExist) {
			err = fmt.Errorf("%w: %w", ErrNotFound, err)
		}
	}
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			h.cfg.Log.Info("links: a letter's PDF is gone", "epid", epid, "letter", idx, "err", err)
			ctx.Error("not found\n", fasthttp.StatusNotFound)
			return false
		}
		h.fails.Inc()
		h.cfg.Log.Error("links: a letter's PDF could not be made", "epid", epid, "letter", idx, "err", err)
		ctx.Response.Header.Set("Retry-After", "60")
		ctx.Error("the document cannot be served now; try again in a minute\n", fasthttp.StatusServiceUnavailable)
		return false
	}
	ctx.SetContentType("application/pdf")
	ctx.Response.Header.Set("Content-Disposition", `inline; filename="letter.pdf"`)
	if ctx.IsHead() {
		f.Close()
		ctx.Response.Header.SetContentLength(int(fi.Size()))
		return true
	}
	ctx.SetBodyStream(f, int(fi.Size())) // fasthttp closes f once sent
	return true
}

// record records an opening unless one of the letter and kind was
// recorded in the last cfg.Every.
func (h *Handler) record(epid string, idx int, kind string, now time.Time) {
	k := letterKind{epid, idx, kind}
	if !h.seen.allow(k, now) {
		return
	}
	if err := h.cfg.Store.Opened(epid, idx, kind, now); err != nil {
		h.seen.forget(k) // the next fetch tries again
		h.cfg.Log.Warn("links: an opening could not be recorded", "epid", epid, "letter", idx, "kind", kind, "err", err)
		return
	}
	h.recorded[kind].Inc()
}

type letterKind struct {
	epid string
	idx  int
	kind string
}

// limiter remembers when an opening of each letter and kind was last
// recorded, for every; entries older than that are swept out once per
// every, so it holds the letters opened in the last two periods at most.
type limiter struct {
	mu    sync.Mutex
	every time.Duration
	last  map[letterKind]time.Time
	swept time.Time
}

func (l *limiter) allow(k letterKind, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.swept) >= l.every {
		for key, t := range l.last {
			if now.Sub(t) >= l.every {
				delete(l.last, key)
			}
		}
		l.swept = now
	}
	if t, ok := l.last[k]; ok && now.Sub(t) < l.every && !now.Before(t) {
		return false
	}
	l.last[k] = now
	return true
}

func (l *limiter) forget(k letterKind) {
	l.mu.Lock()
	delete(l.last, k)
	l.mu.Unlock()
}
