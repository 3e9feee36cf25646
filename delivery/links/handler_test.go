package links_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image/gif"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/valyala/fasthttp"

	"github.com/lodge-mail/lodge/delivery/links"
	"github.com/lodge-mail/lodge/internal/testdoc/mailpdf"
	"github.com/lodge-mail/lodge/internal/testenv"
	"github.com/lodge-mail/lodge/pipeline"
	"github.com/lodge-mail/lodge/production"
)

// mailroomStore is links.Store over the real parts, as lodge joins them:
// the mailroom's records (Pebble) and production's LetterPDF, with the
// letter's custom_data password.
type mailroomStore struct {
	mr   *pipeline.Mailroom
	prod *production.Producer
}

func (s *mailroomStore) LetterPDF(ctx context.Context, epid string, idx int) (string, error) {
	m, err := s.mr.Store().Mailing(epid)
	if err != nil {
		if errors.Is(err, pipeline.ErrNotFound) {
			return "", fmt.Errorf("%w: %w", links.ErrNotFound, err)
		}
		return "", err
	}
	ls, err := s.mr.Store().Letters(epid, idx, 1)
	if err != nil {
		return "", err
	}
	if len(ls) == 0 || ls[0].Idx != idx {
		return "", fmt.Errorf("%w: mailing %s has no letter %d", links.ErrNotFound, epid, idx)
	}
	path, err := s.prod.LetterPDF(ctx, &m, &ls[0], ls[0].CustomData["password"])
	if production.DocumentError(err) {
		return "", fmt.Errorf("%w: %w", links.ErrNotFound, err)
	}
	return path, err
}

func (s *mailroomStore) Opened(epid string, idx int, kind string, at time.Time) error {
	return s.mr.Opened(epid, idx, kind, at)
}

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

type fixture struct {
	t     *testing.T
	key   []byte
	clock *clock
	mr    *pipeline.Mailroom
	base  string
	store *mailroomStore
	set   *metrics.Set
}

const epid = "ABCDEFGHJKMNPQRSTVWXYZ234567"

// newFixture records a mailing of three email letters (the second with a
// password, the third naming a document that is not there) and serves
// the links on a real fasthttp server on a port of loopback.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	dir := t.TempDir()
	st, err := pipeline.OpenPebble(filepath.Join(dir, "mailroom"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	c := &clock{now: time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)}
	mr := pipeline.New(st, nil, pipeline.Config{Now: c.Now, Channels: []string{"postal", "email"}}, nil)
	prod, err := production.New(production.Config{DataDir: filepath.Join(dir, "data")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	doc := filepath.Join(dir, "letters.pdf")
	fh, err := os.Create(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := mailpdf.Pages(fh, mailpdf.Page{Text: "Your statement, page 1"}, mailpdf.Page{Text: "Page 2"}, mailpdf.Page{Text: "Second letter"}); err != nil {
		t.Fatal(err)
	}
	fh.Close()
	m := pipeline.Mailing{EPID: epid, Account: "ABC12345", Files: []pipeline.File{{Name: "letters.pdf", Kind: "pdf", Path: doc, Pages: 3}}}
	email := func(idx int, part pipeline.DocPart, data map[string]string) pipeline.Letter {
		return pipeline.Letter{Idx: idx, Channels: []string{"email"}, Email: "jo@example.com", Documents: []pipeline.DocPart{part}, CustomData: data}
	}
	if err := mr.Submit(m, []pipeline.Letter{
		email(0, pipeline.DocPart{File: "letters.pdf", PageStart: 0, PageEnd: 1}, nil),
		email(1, pipeline.DocPart{File: "letters.pdf", PageStart: 2, PageEnd: 2}, map[string]string{"password": "s3cret pw"}),
		email(2, pipeline.DocPart{File: "gone.pdf", PageEnd: -1}, nil),
	}); err != nil {
		t.Fatal(err)
	}
	key, err := links.LoadOrCreateKey(filepath.Join(dir, "links.key"))
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, key: key, clock: c, mr: mr, store: &mailroomStore{mr: mr, prod: prod}, set: metrics.NewSet()}
	h, err := links.New(links.Config{Key: key, Store: f.store, Now: c.Now, Metrics: f.set, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		if h.Match(ctx.Path()) {
			h.Serve(ctx)
			return
		}
		ctx.Error("not found\n", fasthttp.StatusNotFound)
	}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Shutdown() })
	f.base = "http://" + ln.Addr().String()
	return f
}

func (f *fixture) get(method, path string) (*http.Response, []byte) {
	f.t.Helper()
	req, err := http.NewRequest(method, f.base+path, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		f.t.Fatal(err)
	}
	return resp, body
}

func (f *fixture) letter(idx int) pipeline.Letter {
	f.t.Helper()
	ls, err := f.mr.Store().Letters(epid, idx, 1)
	if err != nil || len(ls) != 1 {
		f.t.Fatalf("letter %d: %v", idx, err)
	}
	return ls[0]
}

func (f *fixture) link(idx int, kind string, ttl time.Duration) string {
	tok := links.Sign(f.key, epid, idx, kind, f.clock.Now().Add(ttl))
	if kind == links.KindOpen {
		return "/o/" + tok + ".gif"
	}
	return "/l/" + tok
}

// TestServeDocument: a link serves the letter's PDF, byte for byte the
// file production made, as a private inline PDF, and records the opening
// of the document once a minute at most; the password-protected letter's
// PDF opens with its password only.
func TestServeDocument(t *testing.T) {
	f := newFixture(t)
	link := f.link(0, links.KindDoc, time.Hour)
	resp, body := f.get("GET", link)
	if resp.StatusCode != 200 {
		t.Fatalf("%s: %s", resp.Status, body)
	}
	path, err := f.store.LetterPDF(context.Background(), epid, 0)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(path)
	if !bytes.Equal(body, want) || !bytes.HasPrefix(body, []byte("%PDF-")) {
		t.Fatalf("served %d bytes, the letter's PDF has %d", len(body), len(want))
	}
	for h, v := range map[string]string{"Content-Type": "application/pdf", "Content-Disposition": `inline; filename="letter.pdf"`,
		"Cache-Control": "private, no-store, max-age=0", "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
		"Content-Length": fmt.Sprint(len(want))} {
		if got := resp.Header.Get(h); got != v {
			t.Errorf("%s: %q, want %q", h, got, v)
		}
	}
	l := f.letter(0)
	t0 := f.clock.Now()
	if !l.DocFirstOpened.Equal(t0) || !l.DocLastOpened.Equal(t0) || !l.EmailFirstOpened.IsZero() {
		t.Fatalf("opens %+v", l.Opens)
	}
	// again within the minute: served, not recorded; a minute later: the
	// last opening moves
	f.clock.Add(30 * time.Second)
	if resp, _ := f.get("GET", link); resp.StatusCode != 200 {
		t.Fatal(resp.Status)
	}
	if l := f.letter(0); !l.DocLastOpened.Equal(t0) {
		t.Fatalf("recorded within the minute: %+v", l.Opens)
	}
	f.clock.Add(30 * time.Second)
	f.get("GET", link)
	if l := f.letter(0); !l.DocFirstOpened.Equal(t0) || !l.DocLastOpened.Equal(t0.Add(time.Minute)) {
		t.Fatalf("a minute later: %+v", l.Opens)
	}
	// the file is closed after each answer: 50 more leave no descriptors
	fds := func() int { d, _ := os.ReadDir("/proc/self/fd"); return len(d) }
	before := fds()
	for i := 0; i < 50; i++ {
		if resp, _ := f.get("GET", link); resp.StatusCode != 200 {
			t.Fatal(resp.Status)
		}
	}
	if after := fds(); after > before+5 {
		t.Fatalf("%d open descriptors before 50 answers, %d after", before, after)
	}
	// HEAD: the headers, no opening
	f.clock.Add(time.Hour - time.Minute - time.Second)
	resp, body = f.get("HEAD", link)
	if resp.StatusCode != 200 || len(body) != 0 || resp.ContentLength != int64(len(want)) {
		t.Fatalf("HEAD: %s, %d bytes, length %d", resp.Status, len(body), resp.ContentLength)
	}
	if l := f.letter(0); !l.DocLastOpened.Equal(t0.Add(time.Minute)) {
		t.Fatalf("HEAD recorded an opening: %+v", l.Opens)
	}
	// expired now
	f.clock.Add(time.Second)
	if resp, body := f.get("GET", link); resp.StatusCode != 404 || string(body) != "not found\n" {
		t.Fatalf("expired: %s %q", resp.Status, body)
	}

	// the protected letter: qpdf and Ghostscript open it with its
	// password, not without
	resp, body = f.get("GET", f.link(1, links.KindDoc, time.Hour))
	if resp.StatusCode != 200 {
		t.Fatalf("%s: %s", resp.Status, body)
	}
	got := filepath.Join(t.TempDir(), "got.pdf")
	os.WriteFile(got, body, 0o600)
	qpdf := testenv.Tool(t, "qpdf")
	if out, err := exec.Command(qpdf, "--check", "--password=s3cret pw", got).CombinedOutput(); err != nil {
		t.Fatalf("qpdf with the password: %v\n%s", err, out)
	}
	if out, err := exec.Command(qpdf, "--check", got).CombinedOutput(); err == nil {
		t.Fatalf("qpdf opened it without the password:\n%s", out)
	}
	png := filepath.Join(t.TempDir(), "p.png")
	if out, err := exec.Command(testenv.Tool(t, "gs"), "-q", "-dSAFER", "-dBATCH", "-dNOPAUSE", "-sDEVICE=png16m", "-r20", "-sPDFPassword=s3cret pw", "-o", png, got).CombinedOutput(); err != nil {
		t.Fatalf("gs with the password: %v\n%s", err, out)
	}
}

// TestServePixel: the tracking image is a 1x1 transparent GIF that is
// never cached; fetched 100 times in a minute it records one opening.
func TestServePixel(t *testing.T) {
	f := newFixture(t)
	link := f.link(0, links.KindOpen, time.Hour)
	for i := 0; i < 100; i++ {
		resp, body := f.get("GET", link)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/gif" || !strings.Contains(resp.Header.Get("Cache-Control"), "no-store") {
			t.Fatalf("%s %v", resp.Status, resp.Header)
		}
		img, err := gif.Decode(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if b := img.Bounds(); b.Dx() != 1 || b.Dy() != 1 {
			t.Fatalf("%v", b)
		}
		if _, _, _, a := img.At(0, 0).RGBA(); a != 0 {
			t.Fatalf("pixel alpha %d", a)
		}
		f.clock.Add(500 * time.Millisecond)
	}
	l := f.letter(0)
	t0 := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	if !l.EmailFirstOpened.Equal(t0) || !l.EmailLastOpened.Equal(t0) || !l.DocFirstOpened.IsZero() {
		t.Fatalf("opens %+v", l.Opens)
	}
	if n := f.set.GetOrCreateCounter(`lodge_links_openings_recorded_total{kind="open"}`).Get(); n != 1 {
		t.Fatalf("%d openings recorded", n)
	}
	if n := f.set.GetOrCreateCounter(`lodge_links_served_total{kind="open"}`).Get(); n != 100 {
		t.Fatalf("%d served", n)
	}
	f.clock.Add(10 * time.Second) // a minute after the first
	f.get("GET", link)
	if l := f.letter(0); !l.EmailLastOpened.Equal(t0.Add(time.Minute)) {
		t.Fatalf("a minute later: %+v", l.Opens)
	}
}

// TestRefused: every link that is not a valid one of its path's kind is
// 404 as an unknown path is, and records nothing; a letter whose PDF
// cannot be made is 404 too.
func TestRefused(t *testing.T) {
	f := newFixture(t)
	doc := links.Sign(f.key, epid, 0, links.KindDoc, f.clock.Now().Add(time.Hour))
	open := links.Sign(f.key, epid, 0, links.KindOpen, f.clock.Now().Add(time.Hour))
	other := links.Sign(bytes.Repeat([]byte{1}, 32), epid, 0, links.KindDoc, f.clock.Now().Add(time.Hour))
	expired := links.Sign(f.key, epid, 0, links.KindDoc, f.clock.Now())
	check := func(method, path string, status int) {
		t.Helper()
		resp, body := f.get(method, path)
		if resp.StatusCode != status {
			t.Errorf("%s %s: %s %q, want %d", method, path, resp.Status, body, status)
		}
	}
	check("GET", "/l/"+other, 404)            // forged: another key
	check("GET", "/l/"+expired, 404)          // expired
	check("GET", "/l/"+doc[:len(doc)-2], 404) // cut
	check("GET", "/l/"+doc+"x", 404)          // lengthened
	check("GET", "/l/"+open, 404)             // a tracking token as a document link
	check("GET", "/o/"+doc+".gif", 404)       // and the other way round
	check("GET", "/o/"+open, 404)             // no .gif
	check("GET", "/l/", 404)                  // no token
	check("GET", "/l/"+doc+"/x", 404)         // more path
	check("GET", "/l/"+strings.Repeat("A", 1000), 404)
	check("GET", "/l/"+f.link(2, links.KindDoc, time.Hour)[3:], 404) // its document is not there
	check("GET", "/l/"+links.Sign(f.key, epid, 9, links.KindDoc, f.clock.Now().Add(time.Hour)), 404)
	check("GET", "/l/"+links.Sign(f.key, "NOSUCHEPID", 0, links.KindDoc, f.clock.Now().Add(time.Hour)), 404)
	check("POST", "/l/"+doc, 405)
	check("DELETE", "/o/"+open+".gif", 405)
	for i := 0; i < 3; i++ {
		if o := f.letter(i).Opens; o != (pipeline.Opens{}) {
			t.Errorf("letter %d: openings recorded: %+v", i, o)
		}
	}
	// an opening of a letter that is not there is served all the same
	check("GET", "/o/"+links.Sign(f.key, epid, 9, links.KindOpen, f.clock.Now().Add(time.Hour))+".gif", 200)
}

// TestKinds: the pipeline's kinds of opening are the links'.
func TestKinds(t *testing.T) {
	if pipeline.OpenDoc != links.KindDoc || pipeline.OpenEmail != links.KindOpen {
		t.Fatal("pipeline and links name the kinds of opening differently")
	}
}
