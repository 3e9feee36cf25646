// Command emailbench measures the email sender (delivery/email) against
// the targets, with a real SMTP server on loopback: Mailpit
// (internal/mailpittest builds it once into the user's cache folder and
// runs it with a database in a temporary folder, no message limit, so
// that every message sent is counted at the end).
//
//   - throughput: at least 500 emails per second over pooled
//     connections. For each of -runs runs and each pool size of -pools
//     (1 and 4 by default; their order alternates between runs so that
//     both see the same noise), -n messages (default 5,000) are sent by
//     4 goroutines per connection, each Send waiting for the pool.
//     Reported per pool: messages per second (median of the runs), the
//     sender's CPU time per message (user+system of this process, which
//     is the client only: Mailpit is another process), and the ratio of
//     each pool's rate to pool 1's.
//   - memory: a 100,000-recipient mailing (-memory-n) in bounded memory
//     (at most 256 MB resident growth). The messages are sent over a
//     pool of 4 by 16 goroutines; the process's VmRSS is read before
//     (after a warm-up of 1,000 messages), every 50 ms during, and
//     after, with the Go heap in use and the goroutine count at the end:
//     the Mailer keeps no per-message state, so none of them grows with
//     the number sent.
//
// Each message is a letter as the pipeline sends it: From, To, Subject
// with a non-ASCII character, a List-Unsubscribe header, a VERP return
// path, text and an HTML alternative, and, with -attach N, a PDF of N
// bytes attached from a file (0 by default: the target is emails, the
// PDF's size is the caller's; the figures with -attach 50000 are in the
// README too). At the end, Mailpit's count of messages must equal the
// number sent. Prints one JSON object.
//
//	go run ./bench/emailbench [-n 5000] [-runs 3] [-pools 1,4] [-memory-n 100000] [-attach 0]
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/lodge-mail/lodge/delivery/email"
	"github.com/lodge-mail/lodge/internal/mailpittest"
)

type poolResult struct {
	Pool          int       `json:"pool"`
	MsgsPerSecond []float64 `json:"msgs_per_s"`
	Median        float64   `json:"median_msgs_per_s"`
	CPUMicros     float64   `json:"sender_cpu_us_per_msg"`
	Ratio         float64   `json:"ratio_to_pool_1"`
}

type memoryResult struct {
	Messages      int     `json:"messages"`
	Seconds       float64 `json:"seconds"`
	MsgsPerSecond float64 `json:"msgs_per_s"`
	RSSBeforeMB   float64 `json:"rss_before_mb"`
	RSSPeakMB     float64 `json:"rss_peak_mb"`
	RSSAfterMB    float64 `json:"rss_after_mb"`
	RSSGrowthMB   float64 `json:"rss_growth_mb"`
	HeapInuseMB   float64 `json:"heap_inuse_after_mb"`
	Goroutines    int     `json:"goroutines_after"`
}

func main() {
	n := flag.Int("n", 5000, "messages per throughput run")
	runs := flag.Int("runs", 3, "throughput runs per pool size")
	poolList := flag.String("pools", "1,4", "pool sizes compared")
	memN := flag.Int("memory-n", 100000, "messages of the memory run (0: skip it)")
	attach := flag.Int("attach", 0, "bytes of a PDF attached to every message (0: none)")
	flag.Parse()

	var pools []int
	for _, s := range strings.Split(*poolList, ",") {
		p, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || p < 1 {
			log.Fatalf("-pools %q: %v", *poolList, err)
		}
		pools = append(pools, p)
	}
	bin, err := mailpittest.BinaryPath(log.Printf)
	if err != nil {
		log.Fatal(err)
	}
	mp, err := mailpittest.Launch(bin, mailpittest.Options{Max: -1})
	if err != nil {
		log.Fatal(err)
	}
	defer mp.Close()
	var pdf string
	if *attach > 0 {
		dir, err := os.MkdirTemp("", "emailbench-")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(dir)
		pdf = filepath.Join(dir, "letter.pdf")
		b := append([]byte("%PDF-1.7\n"), bytes.Repeat([]byte{0xe2, 'x', '\n', 0x00}, *attach/4)...)
		if err := os.WriteFile(pdf, b[:*attach], 0o600); err != nil {
			log.Fatal(err)
		}
	}

	sent := 0
	results := map[int]*poolResult{}
	cpu := map[int]float64{}
	for run := range *runs {
		order := slices.Clone(pools)
		if run%2 == 1 {
			slices.Reverse(order)
		}
		for _, p := range order {
			c0 := cpuTime()
			secs := sendMany(mp.URL(), p, 4*p, *n, fmt.Sprintf("r%dp%d", run, p), pdf)
			cpu[p] += cpuTime() - c0
			sent += *n
			r := results[p]
			if r == nil {
				r = &poolResult{Pool: p}
				results[p] = r
			}
			r.MsgsPerSecond = append(r.MsgsPerSecond, float64(*n)/secs)
		}
	}
	out := struct {
		Messages   int           `json:"messages_per_run"`
		Attach     int           `json:"attach_bytes"`
		Pools      []*poolResult `json:"pools"`
		Memory     *memoryResult `json:"memory,omitempty"`
		GOMAXPROCS int           `json:"gomaxprocs"`
		Received   int           `json:"received_by_mailpit"`
		Sent       int           `json:"sent"`
	}{Messages: *n, Attach: *attach, GOMAXPROCS: runtime.GOMAXPROCS(0)}
	for _, p := range pools {
		r := results[p]
		r.Median = median(r.MsgsPerSecond)
		r.CPUMicros = cpu[p] / float64(*runs**n) * 1e6
		out.Pools = append(out.Pools, r)
	}
	for _, r := range out.Pools {
		r.Ratio = r.Median / results[pools[0]].Median
	}

	if *memN > 0 {
		m, err := email.New(email.Config{URL: mp.URL(), Pool: 4})
		if err != nil {
			log.Fatal(err)
		}
		send(m, 16, 1000, "warm", pdf)
		sent += 1000
		runtime.GC()
		before := rss()
		var peak atomic.Int64
		peak.Store(before)
		stop := make(chan struct{})
		sampled := make(chan struct{})
		go func() {
			defer close(sampled)
			t := time.NewTicker(50 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
					if r := rss(); r > peak.Load() {
						peak.Store(r)
					}
				}
			}
		}()
		start := time.Now()
		send(m, 16, *memN, "mem", pdf)
		secs := time.Since(start).Seconds()
		close(stop)
		<-sampled
		sent += *memN
		after := rss()
		if after > peak.Load() {
			peak.Store(after)
		}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		out.Memory = &memoryResult{Messages: *memN, Seconds: secs, MsgsPerSecond: float64(*memN) / secs,
			RSSBeforeMB: mb(before), RSSPeakMB: mb(peak.Load()), RSSAfterMB: mb(after),
			RSSGrowthMB: mb(peak.Load() - before), HeapInuseMB: float64(ms.HeapInuse) / 1e6,
			Goroutines: runtime.NumGoroutine()}
		m.Close()
	}
	out.Sent = sent
	out.Received = count(mp.API)
	if out.Received != sent {
		log.Printf("mailpit received %d messages, %d were sent", out.Received, sent)
		defer os.Exit(1)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	enc.Encode(out)
}

// sendMany sends n messages over a new Mailer with the given pool and
// returns the seconds it took (connecting included).
func sendMany(url string, pool, workers, n int, prefix, pdf string) float64 {
	m, err := email.New(email.Config{URL: url, Pool: pool})
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	start := time.Now()
	send(m, workers, n, prefix, pdf)
	return time.Since(start).Seconds()
}

// send sends n letters from workers goroutines; any error stops the
// program.
func send(m *email.Mailer, workers, n int, prefix, pdf string) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				msg := email.Message{
					MessageID:  fmt.Sprintf("%s.%d@lodge.example", prefix, i),
					From:       "Acme Billing <billing@acme.example>",
					To:         fmt.Sprintf("Customer %d <c%d@example.com>", i, i),
					Subject:    fmt.Sprintf("Your statement %d — November", i),
					Text:       fmt.Sprintf("Dear customer %d,\n\nyour statement for November is ready.\n\nAcme Billing\n", i),
					HTML:       fmt.Sprintf("<p>Dear customer %d,</p><p>your statement for November is ready.</p><p>Acme Billing</p>", i),
					ReturnPath: fmt.Sprintf("bounce+%s.%d@bounces.lodge.example", prefix, i),
					Headers:    map[string]string{"List-Unsubscribe": fmt.Sprintf("<https://lodge.example/u/%s.%d>", prefix, i)},
				}
				if pdf != "" {
					msg.Attachments = []email.Attachment{{Name: "statement.pdf", ContentType: "application/pdf", Path: pdf}}
				}
				if err := m.Send(context.Background(), msg); err != nil {
					log.Fatalf("message %d: %v", i, err)
				}
			}
		}()
	}
	wg.Wait()
}

func count(api string) int {
	resp, err := http.Get(api + "/api/v1/messages?limit=1")
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	var page struct{ Total int }
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil {
		log.Fatal(err)
	}
	return page.Total
}

// rss returns this process's resident set in bytes (VmRSS).
func rss() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	log.Fatal("no VmRSS in /proc/self/status")
	return 0
}

// cpuTime returns this process's user and system CPU seconds.
func cpuTime() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		log.Fatal(err)
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

func mb(b int64) float64 { return float64(b) / 1e6 }

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
