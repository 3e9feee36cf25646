package upload

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"
)

// logRecorder keeps every log record as "LEVEL message key=value ...".
type logRecorder struct {
	mu   sync.Mutex
	recs []string
}

func (r *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *logRecorder) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *logRecorder) WithGroup(string) slog.Handler            { return r }

func (r *logRecorder) Handle(_ context.Context, rec slog.Record) error {
	s := rec.Level.String() + " " + rec.Message
	rec.Attrs(func(a slog.Attr) bool { s += " " + a.String(); return true })
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, s)
	return nil
}

func (r *logRecorder) lines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string{}, r.recs...)
}

// instrument reopens the rig's store with its counters on set and its
// handler and Lodger logging to the returned recorder.
func (r *rig) instrument(set *metrics.Set) *logRecorder {
	r.t.Helper()
	closeStore(r.s)
	rec := &logRecorder{}
	log := slog.New(rec)
	r.s = openStore(r.t, r.dir, Options{Now: r.c.Now, Metrics: set})
	r.l = NewLodger(r.s, r.eng, r.mr, LodgerConfig{InProcess: true, Host: "test-host"}, log)
	r.h = NewHandler(r.s, r.l, Config{Host: "test-host"}, log)
	return rec
}

// series reads the metric set as Prometheus text: name{labels} → value.
func series(set *metrics.Set) map[string]float64 {
	var b bytes.Buffer
	set.WritePrometheus(&b)
	out := map[string]float64{}
	for _, line := range strings.Split(b.String(), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err == nil {
			out[line[:i]] = v
		}
	}
	return out
}

// TestUploadMetrics: the upload counters on the store's metric set count
// sessions opened, ended, expired and abandoned, files and bytes received,
// mailings, letters by status and rejected requests by reason, and every
// labelled series exists from the start.
func TestUploadMetrics(t *testing.T) {
	w := newWeb(t)
	set := metrics.NewSet()
	rec := w.instrument(set)
	w.s.opt.MaxFileBytes = 1 << 20
	got := series(set)
	for _, want := range []string{`lodge_upload_rejections_total{reason="too_large"}`, `lodge_upload_letters_total{status="Held"}`,
		`lodge_upload_mailings_total{status="queued_auto"}`, `lodge_upload_sessions_abandoned_total`} {
		if v, ok := got[want]; !ok || v != 0 {
			t.Errorf("before any upload: %s = %v, %v; want 0", want, v, ok)
		}
	}

	// a mailing of two letters: one received, one held; then another
	epid := w.newSession()
	pdf := pdfPages(2)
	m := meta("", melbourne, wrongPC)
	w.putFile(epid, "letter.pdf", pdf)
	w.putFile(epid, "m.json", m)
	if a := w.do("GET", "/publicinterface/end_session.json?session_id="+epid, "ABC12345", nil); a.status != 200 {
		t.Fatalf("end_session: %d %s", a.status, a.body)
	}
	w.mailing("a.pdf", pdfPages(1), "m.json", meta("", ref(melbourne, "R-1")))
	w.mailing("auto.pdf", pdfPages(1))
	// refused requests
	w.putFile(epid, "late.pdf", pdfPages(1))                // session_ended
	w.putFile("ZZZZZZZZZZZZZZZZZZZZZZZZZZZZ", "a.pdf", pdf) // no_session
	open := w.newSession()
	w.putFile(open, "C:a.pdf", pdf)                               // file_name
	w.putFile(open, "a.doc", pdf)                                 // file_type (by its extension)
	w.putFile(open, "a.pdf", []byte("{}"))                        // file_type
	w.do("PUT", "/direct_upload/"+open+"/a.pdf", "XYZ99999", pdf) // forbidden
	body, ctype := multipartBody(t, "a.pdf", pdf, "a.pdf", pdf)
	w.do("POST", mpfPath, "ABC12345", body, "Content-Type", ctype) // duplicate_name, abandoned
	bad, ctype2 := multipartBody(t, "a.pdf", pdf, "m.json", `{"letters":[{"postal":["x"],"file_name":"nope.pdf"}]}`)
	w.do("POST", mpfPath, "ABC12345", bad, "Content-Type", ctype2)                       // mailing, abandoned
	w.putFile(open, "big.pdf", append(pdfPages(1), bytes.Repeat([]byte("%"), 1<<20)...)) // too_large (the rig's limit: 1 MiB)
	// an open session that expires
	w.c.Add(25 * time.Hour)
	if _, _, err := w.s.Sweep(); err != nil {
		t.Fatal(err)
	}

	got = series(set)
	want := map[string]float64{
		"lodge_upload_sessions_opened_total":                     6, // 2 by HTTP, 2 by the rig, 2 by mpf_upload
		"lodge_upload_sessions_ended_total":                      3,
		"lodge_upload_sessions_expired_total":                    1,
		"lodge_upload_sessions_abandoned_total":                  2,
		"lodge_upload_files_received_total":                      9, // 2 + 2 + 1 by mailings, 1 + 1 + 2 by mpf_upload ... see below
		`lodge_upload_mailings_total{status="received"}`:         2,
		`lodge_upload_mailings_total{status="queued_auto"}`:      1,
		`lodge_upload_letters_total{status="Received"}`:          2, // as accepted: the mailroom moves them on
		`lodge_upload_letters_total{status="Held"}`:              1,
		`lodge_upload_rejections_total{reason="session_ended"}`:  1,
		`lodge_upload_rejections_total{reason="no_session"}`:     1,
		`lodge_upload_rejections_total{reason="file_name"}`:      1,
		`lodge_upload_rejections_total{reason="file_type"}`:      2,
		`lodge_upload_rejections_total{reason="forbidden"}`:      1,
		`lodge_upload_rejections_total{reason="duplicate_name"}`: 1,
		`lodge_upload_rejections_total{reason="mailing"}`:        1,
		`lodge_upload_rejections_total{reason="too_large"}`:      1,
		`lodge_upload_rejections_total{reason="server_error"}`:   0,
	}
	// files: letter.pdf, m.json (HTTP); a.pdf, m.json, auto.pdf (rig);
	// a.pdf (mpf with the duplicate: the first part stored); a.pdf, m.json
	// (the rejected mpf_upload)
	want["lodge_upload_files_received_total"] = 8
	for name, v := range want {
		if got[name] != v {
			t.Errorf("%s = %v, want %v", name, got[name], v)
		}
	}
	var bytesWant float64
	for _, n := range []int{len(pdf), len(m), len(pdfPages(1)), len(meta("", ref(melbourne, "R-1"))), len(pdfPages(1)), len(pdf), len(pdf), len(`{"letters":[{"postal":["x"],"file_name":"nope.pdf"}]}`)} {
		bytesWant += float64(n)
	}
	if got["lodge_upload_bytes_received_total"] != bytesWant {
		t.Errorf("bytes %v, want %v", got["lodge_upload_bytes_received_total"], bytesWant)
	}
	// every name is one of ours, and no label value outside the lists
	for name := range got {
		if strings.HasPrefix(name, "lodge_upload_rejections_total{") {
			reason := regexp.MustCompile(`reason="([^"]*)"`).FindStringSubmatch(name)[1]
			if !contains(rejectReasons, reason) {
				t.Errorf("reason %q not in the list", reason)
			}
		}
	}
	// the accepted mailings are logged at INFO with what they hold
	var accepted []string
	for _, l := range rec.lines() {
		if strings.Contains(l, "mailing accepted") {
			accepted = append(accepted, l)
		}
	}
	wantLog := fmt.Sprintf("INFO mailing accepted epid=%s account=ABC12345 user=clerk status=received letters=2 held=1 files=2 bytes=%d", epid, len(pdf)+len(m))
	if len(accepted) != 3 || accepted[0] != wantLog {
		t.Errorf("accepted mailings logged %q, want 3, the first %q", accepted, wantLog)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// TestClientErrorsNotLoggedAsErrors: what a client does wrong (a
// multipart request over its limit in a later part, a file too large, a
// body cut short) is answered and not logged at ERROR, which is for the
// server's own failures.
func TestClientErrorsNotLoggedAsErrors(t *testing.T) {
	w := newWeb(t)
	rec := w.instrument(nil)
	w.s.opt.MaxFileBytes = 1 << 20
	const limit = 20 << 20
	var parts []any
	for i := 0; i < 25; i++ {
		parts = append(parts, fmt.Sprintf("p%d.pdf", i), append(pdfPages(1), bytes.Repeat([]byte("%"), 1<<20-1000)...))
	}
	many, ctype := multipartBody(t, parts...)
	if a := w.do("POST", mpfPath, "ABC12345", bytes.NewReader(many), "Content-Type", ctype); a.status != 413 {
		t.Errorf("many parts: %d %s", a.status, a.body)
	}
	over, ctype2 := multipartBody(t, "big.pdf", append(pdfPages(1), bytes.Repeat([]byte("%"), limit)...))
	if a := w.do("POST", mpfPath, "ABC12345", bytes.NewReader(over), "Content-Type", ctype2); a.status != 413 {
		t.Errorf("one part: %d %s", a.status, a.body)
	}
	epid := w.newSession()
	huge := append(pdfPages(1), bytes.Repeat([]byte("%"), 2<<20)...)
	if a := w.putFile(epid, "huge.pdf", bytes.NewReader(huge)); a.status != 413 {
		t.Errorf("PUT chunked: %d %s", a.status, a.body)
	}
	testCutOff(t, w, "declared", func(body []byte) string {
		return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body[:200<<10])
	})
	for _, l := range rec.lines() {
		if strings.HasPrefix(l, "ERROR") {
			t.Errorf("logged %s", l)
		}
	}
}
