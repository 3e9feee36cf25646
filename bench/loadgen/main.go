// Command loadgen measures the throughput and latency of lodge's JSON-RPC
// address check, or of the reference server in bench/baseline, over a fixed
// number of keep-alive HTTPS connections.
//
// Each connection has its own goroutine that sends addr_check requests one
// after another, cycling through bodies built in advance from
// testref.Mix's realistic addresses (so loadgen must run inside the lodge
// repository, next to ../shared/data). With -batch 1 a request checks one
// address (params.address); with -batch N it checks N (params.addresses,
// about a quarter of them given as one newline-separated string).
//
// With -rate 0 (the default) the connections are driven closed-loop, as
// fast as the server answers: that measures the maximum throughput. With
// -rate R the load is open-loop: each connection sends on its own fixed
// schedule of R/conns requests a second, staggered against the others. A
// request that has to wait for the previous one on its connection is timed
// from when it should have been sent, so a slow server cannot hide its
// queueing by slowing the load down (coordinated omission); a request sent
// on time is timed from when it was sent, so the client's own timer
// lateness is not charged to the server.
//
// With -list FILE the addresses come instead from a bench/gnafgen -list CSV
// (the first -pool rows of its ADDRESS column, each "JO CITIZEN" then the
// address split at ", "): distinct addresses that a server which imported
// that release matches at premise level, so that no cache can help.
//
// Requests completing during -warmup are not counted. After it, for
// -duration, a request counts when it completes: as an error unless it got
// HTTP 200 with a body that starts like a JSON-RPC response
// ({"jsonrpc":"2.0" or [) and has no "error" member near its start, else
// as a success whose latency (from send to the end of the response body)
// goes into a log-linear histogram accurate to under 1%. loadgen prints
// one JSON object on stdout:
//
//	{"url","conns","batch","rate","duration_s","requests","errors","rps",
//	 "addresses_per_s","p50_ms","p90_ms","p99_ms","p999_ms","max_ms"}
//
// where requests counts successes only, rps is requests per second of the
// measured window and addresses_per_s is rps times the batch size. A
// summary line and samples of any errors go to stderr. It exits 1 when
// the first request fails or nothing succeeds.
package main

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/lodge-mail/lodge/internal/testref"
)

type config struct {
	url      string
	conns    int
	duration time.Duration
	warmup   time.Duration
	batch    int
	rate     float64
	auth     string
	insecure bool
	seed     uint64
	pool     int
	list     string
	timeout  time.Duration
}

// result is what loadgen prints, in this order.
type result struct {
	URL           string  `json:"url"`
	Conns         int     `json:"conns"`
	Batch         int     `json:"batch"`
	Rate          float64 `json:"rate"`
	DurationS     float64 `json:"duration_s"`
	Requests      uint64  `json:"requests"`
	Errors        uint64  `json:"errors"`
	RPS           float64 `json:"rps"`
	AddressesPerS float64 `json:"addresses_per_s"`
	P50ms         float64 `json:"p50_ms"`
	P90ms         float64 `json:"p90_ms"`
	P99ms         float64 `json:"p99_ms"`
	P999ms        float64 `json:"p999_ms"`
	MaxMs         float64 `json:"max_ms"`
}

func main() {
	var cfg config
	flag.StringVar(&cfg.url, "url", "https://127.0.0.1:8443/apiv2/jsonrpc", "JSON-RPC endpoint")
	flag.IntVar(&cfg.conns, "conns", 64, "keep-alive connections, each with one request in flight")
	flag.DurationVar(&cfg.duration, "duration", 10*time.Second, "how long to measure")
	flag.DurationVar(&cfg.warmup, "warmup", 2*time.Second, "load before measuring, not counted")
	flag.IntVar(&cfg.batch, "batch", 1, "addresses per request: 1 sends params.address, more send params.addresses")
	flag.Float64Var(&cfg.rate, "rate", 0, "target requests per second over all connections, open-loop; 0 for as fast as possible")
	flag.StringVar(&cfg.auth, "auth", "", "Authorization header value, e.g. 'Bearer lk_...'")
	flag.BoolVar(&cfg.insecure, "insecure", false, "skip TLS certificate verification (default true when the URL's host is loopback)")
	flag.Uint64Var(&cfg.seed, "seed", 1, "seed for the generated addresses")
	flag.IntVar(&cfg.pool, "pool", 10_000, "distinct addresses to cycle through")
	flag.StringVar(&cfg.list, "list", "", "draw the addresses from this bench/gnafgen -list CSV (its first -pool rows) instead of the realistic mix")
	flag.DurationVar(&cfg.timeout, "timeout", 30*time.Second, "read and write timeout of each request")
	flag.Parse()
	insecureSet := false
	flag.Visit(func(f *flag.Flag) { insecureSet = insecureSet || f.Name == "insecure" })

	res, err := run(cfg, insecureSet)
	if res != nil {
		out, _ := json.Marshal(res)
		fmt.Printf("%s\n", out)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

func run(cfg config, insecureSet bool) (*result, error) {
	if cfg.conns < 1 || cfg.batch < 1 || cfg.pool < 1 || cfg.rate < 0 || cfg.duration <= 0 || cfg.warmup < 0 {
		return nil, errors.New("-conns, -batch and -pool must be positive, -duration positive, -rate and -warmup not negative")
	}
	u, err := url.Parse(cfg.url)
	if err != nil {
		return nil, fmt.Errorf("-url: %w", err)
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return nil, fmt.Errorf("-url %q: want https:// (or http://)", cfg.url)
	}
	host := u.Hostname()
	if !insecureSet {
		ip := net.ParseIP(host)
		cfg.insecure = host == "localhost" || (ip != nil && ip.IsLoopback())
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(host, map[string]string{"https": "443", "http": "80"}[u.Scheme])
	}

	var addrs [][]string
	if cfg.list != "" {
		if addrs, err = readList(cfg.list, cfg.pool); err != nil {
			return nil, err
		}
	} else if addrs, err = testref.Mix(cfg.pool, cfg.seed); err != nil {
		return nil, fmt.Errorf("generating addresses (run loadgen inside the lodge repository): %w", err)
	}
	bodies, err := buildBodies(addrs, cfg.batch)
	if err != nil {
		return nil, err
	}

	hc := &fasthttp.HostClient{
		Addr:                addr,
		Name:                "lodge-loadgen",
		IsTLS:               u.Scheme == "https",
		TLSConfig:           &tls.Config{InsecureSkipVerify: cfg.insecure, ServerName: host, MinVersion: tls.VersionTLS12},
		MaxConns:            cfg.conns,
		MaxIdleConnDuration: time.Minute,
		ReadTimeout:         cfg.timeout,
		WriteTimeout:        cfg.timeout,
		MaxConnWaitTimeout:  cfg.timeout,
	}
	// One request first, so that a wrong key, URL or certificate is one
	// clear error rather than a run full of them.
	w := newWorker(hc, cfg)
	if err := w.do(bodies[0]); err != nil {
		return nil, fmt.Errorf("first request to %s: %w", cfg.url, err)
	}

	var interval time.Duration
	if cfg.rate > 0 {
		interval = time.Duration(float64(time.Second) * float64(cfg.conns) / cfg.rate)
	}
	start := time.Now()
	measure := start.Add(cfg.warmup)
	end := measure.Add(cfg.duration)
	workers := make([]*worker, cfg.conns)
	var wg sync.WaitGroup
	for i := range workers {
		workers[i] = newWorker(hc, cfg)
		phase := time.Duration(0)
		if interval > 0 {
			phase = interval * time.Duration(i) / time.Duration(cfg.conns)
		}
		// Start each connection at its own place in the bodies, so they
		// are not all checking the same address at the same moment.
		first := i * len(bodies) / cfg.conns
		wg.Add(1)
		go func() {
			defer wg.Done()
			workers[i].run(bodies, first, start.Add(phase), interval, measure, end)
		}()
	}
	wg.Wait()

	var h histogram
	var errs uint64
	samples := map[string]uint64{}
	for _, w := range workers {
		h.merge(&w.hist)
		errs += w.errs
		for k, n := range w.samples {
			samples[k] += n
		}
	}
	ms := func(d time.Duration) float64 { return round(d.Seconds()*1000, 3) }
	secs := cfg.duration.Seconds()
	res := &result{
		URL: cfg.url, Conns: cfg.conns, Batch: cfg.batch, Rate: cfg.rate,
		DurationS:     round(secs, 3),
		Requests:      h.total,
		Errors:        errs,
		RPS:           round(float64(h.total)/secs, 1),
		AddressesPerS: round(float64(h.total)*float64(cfg.batch)/secs, 1),
		P50ms:         ms(h.quantile(0.50)),
		P90ms:         ms(h.quantile(0.90)),
		P99ms:         ms(h.quantile(0.99)),
		P999ms:        ms(h.quantile(0.999)),
		MaxMs:         ms(time.Duration(h.max)),
	}
	fmt.Fprintf(os.Stderr, "loadgen: %s batch %d conns %d rate %g: %d requests in %s (%.0f/s, %.0f addresses/s), %d errors, p50 %.3f p99 %.3f max %.3f ms\n",
		cfg.url, cfg.batch, cfg.conns, cfg.rate, res.Requests, cfg.duration, res.RPS, res.AddressesPerS, res.Errors, res.P50ms, res.P99ms, res.MaxMs)
	keys := make([]string, 0, len(samples))
	for k := range samples {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return samples[keys[i]] > samples[keys[j]] })
	for _, k := range keys {
		fmt.Fprintf(os.Stderr, "  %d x %s\n", samples[k], k)
	}
	if h.total == 0 {
		return res, errors.New("no request succeeded")
	}
	return res, nil
}

func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

// readList reads the first n addresses of a bench/gnafgen -list CSV: its
// ADDRESS column, split at ", ", after a recipient line (the first lines
// dropped when that makes more than six).
func readList(path string, n int) ([][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(bufio.NewReaderSize(f, 1<<20))
	r.ReuseRecord = true
	header, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	col := slices.Index(header, "ADDRESS")
	if col < 0 {
		return nil, fmt.Errorf("%s: no ADDRESS column: not a bench/gnafgen -list file", path)
	}
	var addrs [][]string
	for len(addrs) < n {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if col >= len(rec) {
			return nil, fmt.Errorf("%s: a row without an ADDRESS", path)
		}
		lines := append([]string{"JO CITIZEN"}, strings.Split(rec[col], ", ")...)
		addrs = append(addrs, lines[max(len(lines)-6, 0):])
	}
	if len(addrs) < n {
		return nil, fmt.Errorf("%s: %d addresses, -pool asks for %d", path, len(addrs), n)
	}
	return addrs, nil
}

// buildBodies returns the request bodies to cycle through: one for each
// address with batch 1, else one for each batch-sized run of addresses
// (wrapping round when there are fewer than batch).
func buildBodies(addrs [][]string, batch int) ([][]byte, error) {
	type params struct {
		Address   []string `json:"address,omitempty"`
		Addresses []any    `json:"addresses,omitempty"`
	}
	type request struct {
		JSONRPC string `json:"jsonrpc"`
		ID      int    `json:"id"`
		Method  string `json:"method"`
		Params  params `json:"params"`
	}
	n := max(len(addrs)/batch, 1)
	bodies := make([][]byte, n)
	for k := range bodies {
		req := request{JSONRPC: "2.0", ID: k + 1, Method: "addr_check"}
		if batch == 1 {
			req.Params.Address = addrs[k]
		} else {
			for j := range batch {
				i := (k*batch + j) % len(addrs)
				if i%4 == 3 {
					req.Params.Addresses = append(req.Params.Addresses, strings.Join(addrs[i], "\n"))
				} else {
					req.Params.Addresses = append(req.Params.Addresses, addrs[i])
				}
			}
		}
		b, err := json.Marshal(req)
		if err != nil {
			return nil, err
		}
		bodies[k] = b
	}
	return bodies, nil
}

// A worker drives one connection's worth of requests and keeps its own
// counts, merged when all are done.
type worker struct {
	hc      *fasthttp.HostClient
	req     *fasthttp.Request
	resp    *fasthttp.Response
	hist    histogram
	errs    uint64
	samples map[string]uint64 // error messages, a few kinds
}

func newWorker(hc *fasthttp.HostClient, cfg config) *worker {
	w := &worker{hc: hc, req: new(fasthttp.Request), resp: new(fasthttp.Response), samples: map[string]uint64{}}
	w.req.SetRequestURI(cfg.url)
	w.req.Header.SetMethod(fasthttp.MethodPost)
	w.req.Header.SetContentType("application/json")
	if cfg.auth != "" {
		w.req.Header.Set("Authorization", cfg.auth)
	}
	return w
}

// run sends requests until end: back to back when interval is 0, else one
// every interval from next on.
func (w *worker) run(bodies [][]byte, first int, next time.Time, interval time.Duration, measure, end time.Time) {
	for i := first; ; i++ {
		var sent time.Time
		if interval > 0 {
			if !next.Before(end) {
				return
			}
			if wait := time.Until(next); wait > 0 {
				time.Sleep(wait)
				sent = time.Now()
			} else {
				sent = next // behind schedule: the wait counts
			}
			next = next.Add(interval)
		} else if sent = time.Now(); !sent.Before(end) {
			return
		}
		err := w.do(bodies[i%len(bodies)])
		done := time.Now()
		if done.After(end) {
			return
		}
		if done.Before(measure) {
			continue
		}
		if err != nil {
			w.errs++
			k := err.Error()
			if _, ok := w.samples[k]; !ok && len(w.samples) >= 8 {
				k = "(other errors)"
			}
			w.samples[k]++
			if interval == 0 {
				// Do not spin on a server that is refusing connections.
				time.Sleep(10 * time.Millisecond)
			}
			continue
		}
		w.hist.record(done.Sub(sent))
	}
}

var (
	prefixRPC   = []byte(`{"jsonrpc":"2.0"`)
	memberError = []byte(`"error":`)
)

// do sends one request and checks the response.
func (w *worker) do(body []byte) error {
	w.req.SetBodyRaw(body)
	if err := w.hc.Do(w.req, w.resp); err != nil {
		return err
	}
	return check(w.resp.StatusCode(), w.resp.Body())
}

// check tells, cheaply, whether a response is a successful JSON-RPC
// answer: HTTP 200, a body that starts as one, and no "error" member
// close to its start, where a JSON-RPC error (which comes with HTTP 200)
// has it, after "jsonrpc" and "id".
func check(status int, body []byte) error {
	if status != fasthttp.StatusOK {
		return fmt.Errorf("HTTP %d: %.80q", status, body)
	}
	switch {
	case bytes.HasPrefix(body, prefixRPC):
		head := body[len(prefixRPC):min(len(body), len(prefixRPC)+64)]
		if bytes.Contains(head, memberError) {
			return fmt.Errorf("JSON-RPC error: %.160s", body)
		}
	case bytes.HasPrefix(body, []byte("[")):
	default:
		return fmt.Errorf("not a JSON-RPC response: %.80q", body)
	}
	return nil
}
