// Command heavyload puts lodge's JSON-RPC address check under heavy
// requests: -conns connections each send, one after another, addr_check
// calls of -addresses long addresses (six lines of close to 100
// characters: the most the documented limits allow per address), and it
// samples the server's resident memory meanwhile. bench/heavy-bench.sh runs
// it beside bench/loadgen (a small client at a fixed rate) to see what the
// heavy load does to the small client's latency.
//
// Addresses are testref.Mix's realistic ones, each line padded with words
// to about 100 characters and numbered so that no two are alike (the
// verdict cache does not help). Every connection cycles through -bodies
// bodies of its own, built before the load starts.
//
// With -pid it reads VmRSS of that process from /proc every 50 ms and
// reports the largest. It prints one JSON object on stdout:
//
//	{"conns","addresses","body_bytes","duration_s","requests","by_status",
//	 "errors","p50_ms","p99_ms","max_ms","rss_start_mb","rss_peak_mb"}
//
// where by_status counts answers by HTTP status, errors counts transport
// failures, and latencies are of answered requests whatever their status.
package main

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lodge-mail/lodge/internal/testref"
)

type result struct {
	Conns      int            `json:"conns"`
	Addresses  int            `json:"addresses"`
	BodyBytes  int            `json:"body_bytes"`
	DurationS  float64        `json:"duration_s"`
	Requests   int            `json:"requests"`
	ByStatus   map[string]int `json:"by_status"`
	Errors     int            `json:"errors"`
	P50ms      float64        `json:"p50_ms"`
	P99ms      float64        `json:"p99_ms"`
	MaxMs      float64        `json:"max_ms"`
	RSSStartMB float64        `json:"rss_start_mb"`
	RSSPeakMB  float64        `json:"rss_peak_mb"`
}

func main() {
	url := flag.String("url", "https://127.0.0.1:8443/apiv2/jsonrpc", "JSON-RPC endpoint")
	auth := flag.String("auth", "", "Authorization header value, e.g. 'Bearer lk_...'")
	conns := flag.Int("conns", 24, "connections, each with one request in flight")
	n := flag.Int("addresses", 10_000, "addresses per request")
	bodies := flag.Int("bodies", 2, "distinct bodies per connection")
	duration := flag.Duration("duration", 20*time.Second, "how long to send")
	pid := flag.Int("pid", 0, "process whose resident memory is sampled; 0 for none")
	flag.Parse()

	mix, err := testref.Mix(4096, 7)
	if err != nil {
		fmt.Fprintln(os.Stderr, "heavyload:", err)
		os.Exit(2)
	}
	made := make([][][]byte, *conns)
	serial := 0
	for c := range made {
		for range *bodies {
			made[c] = append(made[c], body(mix, *n, &serial))
		}
	}
	res := result{Conns: *conns, Addresses: *n, BodyBytes: len(made[0][0]), ByStatus: map[string]int{}}
	hc := &http.Client{Transport: &http.Transport{
		TLSClientConfig:     &tls.Config{InsecureSkipVerify: true},
		MaxIdleConnsPerHost: *conns,
		DisableCompression:  true,
	}, Timeout: 5 * time.Minute}

	stop := make(chan struct{})
	var peak, start float64
	var sampler sync.WaitGroup
	if *pid > 0 {
		start = rssMB(*pid)
		peak = start
		sampler.Add(1)
		go func() {
			defer sampler.Done()
			t := time.NewTicker(50 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
					peak = max(peak, rssMB(*pid))
				}
			}
		}()
	}
	var mu sync.Mutex
	var lat []time.Duration
	var wg sync.WaitGroup
	began := time.Now()
	end := began.Add(*duration)
	for c := 0; c < *conns; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(end); i++ {
				req, _ := http.NewRequest("POST", *url, bytes.NewReader(made[c][i%len(made[c])]))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", *auth)
				t0 := time.Now()
				resp, err := hc.Do(req)
				if err == nil {
					_, err = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				d := time.Since(t0)
				mu.Lock()
				if err != nil {
					res.Errors++
				} else {
					res.Requests++
					res.ByStatus[strconv.Itoa(resp.StatusCode)]++
					lat = append(lat, d)
				}
				mu.Unlock()
				if err == nil && resp.StatusCode != 200 {
					// as a client honouring Retry-After would
					if s, _ := strconv.Atoi(resp.Header.Get("Retry-After")); s > 0 {
						time.Sleep(time.Duration(s) * time.Second)
					}
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	sampler.Wait()
	res.DurationS = time.Since(began).Seconds()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	q := func(p float64) float64 {
		if len(lat) == 0 {
			return 0
		}
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	res.P50ms, res.P99ms, res.MaxMs = q(0.5), q(0.99), q(1)
	res.RSSStartMB, res.RSSPeakMB = start, peak
	out, _ := json.Marshal(res)
	fmt.Printf("%s\n", out)
}

// body is one addr_check request of n long addresses, numbered from
// *serial on.
func body(mix [][]string, n int, serial *int) []byte {
	pad := []string{"ATTENTION", "ACCOUNTS", "PAYABLE", "DEPARTMENT", "BUILDING", "LEVEL", "SUITE", "CARE", "OF", "RECEPTION", "NORTH", "WING", "MANAGER"}
	long := func(s string, i int) string {
		var b strings.Builder
		b.WriteString(s)
		for j := 0; b.Len() < 92; j++ {
			b.WriteByte(' ')
			b.WriteString(pad[(i+j)%len(pad)])
		}
		return b.String()[:min(b.Len(), 100)]
	}
	addrs := make([][]string, n)
	for i := range addrs {
		*serial++
		a := mix[i%len(mix)]
		if len(a) < 2 || len(a) > 6 {
			a = []string{"JO CITIZEN", "MELBOURNE VIC 3000"}
		}
		lines := []string{long(fmt.Sprintf("%s %d", a[0], *serial), i)}
		for len(lines)+len(a)-1 < 6 {
			lines = append(lines, long(fmt.Sprintf("UNIT %d", *serial%997), i+len(lines)))
		}
		for _, l := range a[1 : len(a)-1] {
			lines = append(lines, long(l, i))
		}
		lines = append(lines, a[len(a)-1]) // the locality line as it was
		addrs[i] = lines
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "addr_check", "params": map[string]any{"addresses": addrs}})
	return b
}

// rssMB is the resident memory of process pid in MB, 0 if unknown.
func rssMB(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}
