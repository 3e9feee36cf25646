package main

// The load generator: clients with keep-alive connections sending the
// upload interface's requests, each request to the next node of a
// rotation (a round-robin load balancer), counting per node what it sent,
// what is in flight and what failed, and keeping what was acknowledged
// for the checks after a kill.

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lodge-mail/lodge/bench/internal/stats"
	"github.com/lodge-mail/lodge/internal/testdoc"
)

// target is one node as the load balancer sees it.
type target struct {
	name     string
	base     string // http://127.0.0.1:PORT, the plain listener
	inflight atomic.Int64
	ok       atomic.Int64 // answered as expected
	failed   atomic.Int64 // no answer, or a 5xx
	odd      atomic.Int64 // answered, but not as expected (4xx, a bad body)
	firstOK  atomic.Int64 // Unix ns of its first expected answer, 0 before
}

// rotation is the load balancer: each request goes to the next node in
// service. A node is added (when its /readyz says 200) and taken out
// (when it is killed) under the lock, so that a request counted in
// flight on a node was really sent to it.
type rotation struct {
	mu   sync.RWMutex
	up   []*target
	next atomic.Uint64
}

func newRotation(ts ...*target) *rotation { return &rotation{up: ts} }

// pick chooses the node for a request and counts the request in flight
// there; nil when no node is in service.
func (r *rotation) pick() *target {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if len(r.up) == 0 {
		return nil
	}
	t := r.up[(r.next.Add(1)-1)%uint64(len(r.up))]
	t.inflight.Add(1)
	return t
}

func (r *rotation) add(t *target) {
	r.mu.Lock()
	r.up = append(r.up, t)
	r.mu.Unlock()
}

// removeAndKill takes t out of service, kills its node while no request
// can be sent to it, and returns the requests in flight to it then.
func (r *rotation) removeAndKill(t *target, kill func()) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, u := range r.up {
		if u == t {
			r.up = append(r.up[:i:i], r.up[i+1:]...)
			break
		}
	}
	kill()
	return t.inflight.Load()
}

// acked is what the nodes acknowledged: files by session and name with
// their SHA-1 (201), and sessions ended (end_session 200 "ok").
type acked struct {
	mu    sync.Mutex
	files map[string]map[string]string
	ended map[string]bool
}

func newAcked() *acked {
	return &acked{files: map[string]map[string]string{}, ended: map[string]bool{}}
}

func (a *acked) file(epid, name, sum string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.files[epid] == nil {
		a.files[epid] = map[string]string{}
	}
	a.files[epid][name] = sum
}

func (a *acked) end(epid string) {
	a.mu.Lock()
	a.ended[epid] = true
	a.mu.Unlock()
}

// workload is what each client does in a loop.
type workload string

const (
	// wlPut: open a session, PUT perSession PDFs under distinct names,
	// then a new session.
	wlPut workload = "put"
	// wlEnd: open a session, PUT one PDF and metadata naming its
	// letters, end_session.
	wlEnd workload = "end_session"
)

// gen is one run of load.
type gen struct {
	rot     *rotation
	hc      *http.Client
	key     string
	pdf     []byte
	pdfSum  string
	letters int
	ack     *acked // nil: not kept

	measuring atomic.Bool
	puts      atomic.Int64 // PUTs answered 201
	ends      atomic.Int64 // end_session answered 200 "ok"
	sessions  atomic.Int64
	failures  atomic.Int64 // no answer or a 5xx
	oddities  atomic.Int64 // another answer than expected
	latMu     sync.Mutex
	latPut    []float64 // ms, while measuring
	latEnd    []float64
	errMu     sync.Mutex
	errs      []string // the first few failures, for the report

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func newGen(rot *rotation, key string, pdfBytes, letters, clients int, ack *acked) *gen {
	pdf := testdoc.PDF(letters, 0)
	if pad := pdfBytes - len(pdf) - 2; pad > 0 {
		pdf = testdoc.PDF(letters, pad)
	}
	sum := sha1.Sum(pdf)
	tr := &http.Transport{MaxIdleConnsPerHost: 2 * clients, IdleConnTimeout: time.Minute, DisableCompression: true}
	return &gen{rot: rot, hc: &http.Client{Transport: tr, Timeout: 2 * time.Minute}, key: key,
		pdf: pdf, pdfSum: hex.EncodeToString(sum[:]), letters: letters, ack: ack}
}

var errStopped = errors.New("load stopped")

// start runs clients clients of wl until stop.
func (g *gen) start(wl workload, clients, perSession int) {
	ctx, cancel := context.WithCancel(context.Background())
	g.cancel = cancel
	for range clients {
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			for ctx.Err() == nil {
				switch wl {
				case wlPut:
					g.putSession(ctx, perSession)
				case wlEnd:
					g.endSession(ctx)
				}
			}
		}()
	}
}

// stop ends the clients, cutting their requests short (those are not
// counted), and closes the connections.
func (g *gen) stop() {
	g.cancel()
	g.wg.Wait()
	g.hc.CloseIdleConnections()
}

func (g *gen) fail(t *target, format string, args ...any) {
	if t != nil {
		t.failed.Add(1)
	}
	g.failures.Add(1)
	g.note(format, args...)
}

func (g *gen) odd(t *target, format string, args ...any) {
	t.odd.Add(1)
	g.oddities.Add(1)
	g.note(format, args...)
}

func (g *gen) note(format string, args ...any) {
	g.errMu.Lock()
	if len(g.errs) < 20 {
		g.errs = append(g.errs, time.Now().Format("15:04:05.000 ")+fmt.Sprintf(format, args...))
	}
	g.errMu.Unlock()
}

// do sends one request to the next node: its status and body, and the
// node; errStopped when the load was stopped under it, another error
// (counted as a failure) when no answer came or it was a 5xx.
func (g *gen) do(ctx context.Context, method, path string, body []byte) (int, []byte, *target, error) {
	t := g.rot.pick()
	if t == nil {
		g.fail(nil, "%s %s: no node in service", method, path)
		return 0, nil, nil, errors.New("no node in service")
	}
	defer t.inflight.Add(-1)
	req, err := http.NewRequestWithContext(ctx, method, t.base+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, t, err
	}
	req.Header.Set("Authorization", "Bearer "+g.key)
	resp, err := g.hc.Do(req)
	var b []byte
	if err == nil {
		b, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	if ctx.Err() != nil {
		return 0, nil, t, errStopped
	}
	if err != nil {
		g.fail(t, "%s %s on %s: %v", method, path, t.name, err)
		return 0, nil, t, err
	}
	if resp.StatusCode >= 500 {
		g.fail(t, "%s %s on %s: %d %.200s", method, path, t.name, resp.StatusCode, b)
		return resp.StatusCode, b, t, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return resp.StatusCode, b, t, nil
}

func (g *gen) good(t *target) {
	t.ok.Add(1)
	t.firstOK.CompareAndSwap(0, time.Now().UnixNano())
}

// session opens a session: its EPID, "" when that failed.
func (g *gen) session(ctx context.Context) string {
	code, b, t, err := g.do(ctx, "GET", "/publicinterface/get_session_id.text?account=DEM00001", nil)
	if err != nil {
		return ""
	}
	epid := strings.TrimSpace(string(b))
	if code != 200 || len(epid) != 28 {
		g.odd(t, "get_session_id on %s: %d %.200s", t.name, code, b)
		return ""
	}
	g.good(t)
	g.sessions.Add(1)
	return epid
}

// put uploads body as name: whether it was acknowledged (201 with the
// SHA-1 of what was sent).
func (g *gen) put(ctx context.Context, epid, name string, body []byte, sum string) bool {
	t0 := time.Now()
	code, b, t, err := g.do(ctx, "PUT", "/direct_upload/"+epid+"/"+name, body)
	if err != nil {
		return false
	}
	if f := strings.Fields(string(b)); code != 201 || len(f) != 3 || f[2] != sum {
		g.odd(t, "PUT %s/%s on %s: %d %.200s", epid, name, t.name, code, b)
		return false
	}
	g.good(t)
	if g.ack != nil {
		g.ack.file(epid, name, sum)
	}
	if g.measuring.Load() {
		g.latMu.Lock()
		g.latPut = append(g.latPut, float64(time.Since(t0).Microseconds())/1000)
		g.latMu.Unlock()
	}
	return true
}

func (g *gen) putSession(ctx context.Context, perSession int) {
	epid := g.session(ctx)
	if epid == "" {
		return
	}
	for i := range perSession {
		if !g.put(ctx, epid, fmt.Sprintf("doc%04d.pdf", i), g.pdf, g.pdfSum) {
			return
		}
		g.puts.Add(1)
	}
}

type letter struct {
	Postal    []string `json:"postal"`
	FileName  string   `json:"file_name"`
	PageStart int      `json:"page_start"`
	PageEnd   int      `json:"page_end"`
	Reference string   `json:"reference"`
}

func (g *gen) endSession(ctx context.Context) {
	epid := g.session(ctx)
	if epid == "" {
		return
	}
	if !g.put(ctx, epid, "letter.pdf", g.pdf, g.pdfSum) {
		return
	}
	var m struct {
		Letters []letter `json:"letters"`
	}
	for i := range g.letters {
		m.Letters = append(m.Letters, letter{Postal: []string{fmt.Sprintf("Jo Citizen %d", i), "10 Jones St", "Melbourne VIC 3000"},
			FileName: "letter.pdf", PageStart: i, PageEnd: i, Reference: fmt.Sprintf("%s-%d", epid, i)})
	}
	meta, _ := json.Marshal(m)
	sum := sha1.Sum(meta)
	if !g.put(ctx, epid, "m.json", meta, hex.EncodeToString(sum[:])) {
		return
	}
	t0 := time.Now()
	code, b, t, err := g.do(ctx, "GET", "/publicinterface/end_session.json?session_id="+epid, nil)
	if err != nil {
		return
	}
	var res struct{ Result string }
	if code != 200 || json.Unmarshal(b, &res) != nil || res.Result != "ok" {
		g.odd(t, "end_session %s on %s: %d %.300s", epid, t.name, code, b)
		return
	}
	g.good(t)
	if g.ack != nil {
		g.ack.end(epid)
	}
	g.ends.Add(1)
	if g.measuring.Load() {
		g.latMu.Lock()
		g.latEnd = append(g.latEnd, float64(time.Since(t0).Microseconds())/1000)
		g.latMu.Unlock()
	}
}

func (g *gen) failureNotes() []string {
	g.errMu.Lock()
	defer g.errMu.Unlock()
	return append([]string(nil), g.errs...)
}

// percentile of xs (sorted in place), p in [0, 100].
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	sort.Float64s(xs)
	i := int(p / 100 * float64(len(xs)-1))
	return stats.Round(xs[i], 2)
}
