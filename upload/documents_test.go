package upload

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lodge-mail/lodge/internal/testdoc"
	"github.com/lodge-mail/lodge/internal/testenv"
	"github.com/lodge-mail/lodge/upload/inspect"
)

// TestEndEncrypted: a PDF that needs a user password is refused with a
// located error (nobody could print it); one with an owner password only
// opens for anyone and is accepted.
func TestEndEncrypted(t *testing.T) {
	r := newRig(t)
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("..", "internal", "pdf", "testdata", "encrypted", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	res := r.end(r.session("secret.pdf", read("u256.pdf")))
	if res.Result != "error" || !slices.Contains(res.Errs, "secret.pdf: encrypted: opening it needs a password") {
		t.Errorf("user password: %+v", res)
	}
	res = r.end(r.session("restricted.pdf", read("o128aes.pdf")))
	if res.Result != "ok" {
		t.Errorf("owner password only: %+v", res)
	}
}

// TestEndPostScript: PostScript is counted by what it prints: without DSC
// comments, and with comments that say fewer pages than it prints, its
// letters' pages are there; a program that never ends is stopped and
// refused.
func TestEndPostScript(t *testing.T) {
	testenv.Tool(t, "gs")
	r := newRig(t)
	r.l.cfg.Inspect.Timeout = 2 * time.Second
	letters := `{"letters":[{"postal":["Jo Citizen","10 Jones St","Melbourne VIC 3000"],"page_start":0,"page_end":1},` +
		`{"postal":["Jo Citizen","10 Jones St","Melbourne VIC 3000"],"page_start":2,"page_end":2}]}`
	f := func(name, ps string, wantErr string) {
		t.Helper()
		res := r.end(r.session(name, ps, "m.json", letters))
		if wantErr == "" && res.Result != "ok" || wantErr != "" && (res.Result != "error" || !strings.Contains(strings.Join(res.Errs, "\n"), wantErr)) {
			t.Errorf("%s: %+v", name, res)
		}
	}
	f("nodsc.ps", "%!PS\nshowpage\nshowpage\nshowpage\n", "")
	f("lying.ps", "%!PS-Adobe-3.0\n%%Pages: 1\n%%EndComments\n%%Page: 1 1\nshowpage\nshowpage\nshowpage\n%%EOF\n", "")
	f("bomb.ps", "%!PS\n{ } loop\n", "bomb.ps: PostScript did not finish within 2s: a program that never ends?")
}

// TestEndBusy: when every page-counting slot stays taken, end_session
// answers 503 with Retry-After and leaves the session as it was; once a
// slot is free the same session ends.
func TestEndBusy(t *testing.T) {
	testenv.Tool(t, "gs")
	w := newWeb(t)
	w.l.cfg.Inspect.MaxChildren, w.l.cfg.Inspect.ChildWait = 1, time.Millisecond
	epid := w.newSession()
	w.putFile(epid, "letter.ps", "%!PS\nshowpage\n")
	release, err := inspect.AcquireChild(context.Background(), inspect.Limits{MaxChildren: 1})
	if err != nil {
		t.Fatal(err)
	}
	a := w.do("GET", "/publicinterface/end_session.json?session_id="+epid, "ABC12345", nil)
	if a.status != 503 || a.retryAfter != "30" || !strings.Contains(a.body, "busy inspecting other documents") {
		t.Errorf("all slots taken: %+v", a)
	}
	release()
	if ss, _ := w.s.Session(epid); ss.State == StateEnded {
		t.Errorf("the session ended: %+v", ss)
	}
	if a := w.do("GET", "/publicinterface/end_session.json?session_id="+epid, "ABC12345", nil); a.status != 200 {
		t.Errorf("a slot free: %+v", a)
	}
}

// TestEndNoGhostscript: without Ghostscript, PostScript cannot be counted:
// the client is told to retry (500) and the operator, in the log, to
// install it.
func TestEndNoGhostscript(t *testing.T) {
	w := newWeb(t)
	w.l.cfg.Inspect.Ghostscript = "/nonexistent/gs"
	var log bytes.Buffer
	w.h = NewHandler(w.s, w.l, Config{Host: "test-host"}, slog.New(slog.NewTextHandler(&log, nil)))
	epid := w.newSession()
	w.putFile(epid, "letter.ps", "%!PS\nshowpage\n")
	a := w.do("GET", "/publicinterface/end_session.json?session_id="+epid, "ABC12345", nil)
	if a.status != 500 || !strings.Contains(a.body, "end session failed; retry later") ||
		!strings.Contains(log.String(), "level=ERROR") || !strings.Contains(log.String(), "the operator must install it (Debian package ghostscript") {
		t.Errorf("%+v; log %s", a, log.String())
	}
}

// TestEndPageSizes: pages that are not A4 are warned of, by size, the
// mailing accepted; the warnings come again when the pages were counted
// by an earlier, rejected end_session.
func TestEndPageSizes(t *testing.T) {
	r := newRig(t)
	sized := func(sizes ...string) []byte { // a PDF with one page per size
		b := testdoc.PDF(len(sizes), 0)
		parts := bytes.Split(b, []byte("595 842"))
		var out []byte
		for i, p := range parts[:len(parts)-1] {
			out = append(append(out, p...), sizes[i]...) // same length: offsets kept
		}
		return append(out, parts[len(parts)-1]...)
	}
	res := r.end(r.session("letter.pdf", sized("612 792", "612 792", "612 792")))
	want := []string{"letter.pdf: all 3 pages are US Letter (216 x 279 mm), not A4: they will be scaled to A4"}
	if res.Result != "ok" || !slices.Equal(res.Warnings, want) {
		t.Errorf("US Letter: %+v, want warnings %q", res, want)
	}
	res = r.end(r.session("a4.pdf", sized("595 842", "842 595")))
	if res.Result != "ok" || len(res.Warnings) != 0 {
		t.Errorf("A4, portrait and landscape: %+v", res)
	}
	res = r.end(r.session("one.pdf", sized("420 595")))
	want = []string{"one.pdf: its page is A5 (148 x 210 mm), not A4: it will be scaled to A4"}
	if res.Result != "ok" || !slices.Equal(res.Warnings, want) {
		t.Errorf("one A5 page: %+v, want warnings %q", res, want)
	}

	mixed := sized("595 842", "612 792", "612 792", "595 842", "420 595")
	ss := r.session("mixed.pdf", mixed, "m.json", `{"letters":[{"postal":["Jo Citizen","10 Jones St","Melbourne VIC 3000"],"page_start":7}]}`)
	if res := r.end(ss); res.Result != "error" {
		t.Fatalf("broken metadata: %+v", res)
	}
	r.put(ss, "m.json", `{"letters":[{"postal":["Jo Citizen","10 Jones St","Melbourne VIC 3000"]}]}`)
	res = r.end(ss)
	want = []string{
		"mixed.pdf: pages 1-2 are US Letter (216 x 279 mm), not A4: they will be scaled to A4 (5 pages, numbered 0 to 4, as page_start and page_end)",
		"mixed.pdf: page 4 is A5 (148 x 210 mm), not A4: it will be scaled to A4 (5 pages, numbered 0 to 4, as page_start and page_end)",
	}
	if res.Result != "ok" || !slices.Equal(res.Warnings, want) {
		t.Errorf("mixed sizes, counted by a rejected end_session: %+v, want warnings %q", res, want)
	}
}

// TestPageSizeWarnings: the wording for sizes without a name, and for
// more runs than a document reports.
func TestPageSizeWarnings(t *testing.T) {
	f := func(d inspect.Document, want ...string) {
		t.Helper()
		if got := pageSizeWarnings("d.pdf", d); !slices.Equal(got, want) {
			t.Errorf("%+v: %q, want %q", d, got, want)
		}
	}
	f(inspect.Document{Pages: 3})
	f(inspect.Document{Pages: 9, NotA4: []inspect.PageRun{{First: 0, Last: 0, Width: 100, Height: 150}, {First: 2, Last: 4, Width: 100, Height: 150}}, NotA4Pages: 4},
		"d.pdf: pages 0, 2-4 are 100 x 150 mm, not A4: they will be scaled to A4 (9 pages, numbered 0 to 8, as page_start and page_end)")
	f(inspect.Document{Pages: 100, NotA4: []inspect.PageRun{{First: 0, Last: 0, Width: 216, Height: 279}}, NotA4Pages: 50},
		"d.pdf: page 0 is US Letter (216 x 279 mm), not A4: it will be scaled to A4 (100 pages, numbered 0 to 99, as page_start and page_end)",
		"d.pdf: 49 more pages after page 0 are not A4 either: they will be scaled to A4 (100 pages, numbered 0 to 99, as page_start and page_end)")
}
