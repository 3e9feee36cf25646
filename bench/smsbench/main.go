// Command smsbench measures SMS submission over SMPP: parts per second
// from internal/smpp's client to the npm smpp server of the tests
// (internal/smpp/smpptest, installed with npm on first use), with the
// window of outstanding submit_sm at -window (10 by default) and at 1,
// and their ratio: what pipelining buys. It does so for each SMSC
// latency of -latency (the server delays each answer by it): 0 is
// loopback, where a round trip costs almost nothing; a few milliseconds
// is an SMSC across a network, where the window matters. -senders
// goroutines call Submit at once for -duration, each message of -text
// GSM characters (160 or less: one part; more: concatenated parts, each
// counted); -rounds rounds, the median reported. The server's own count
// of submit_sm is checked against the client's. Prints one JSON object.
//
//	go run ./bench/smsbench [-window 10] [-latency 0s,5ms] [-senders 64] [-text 120] [-duration 3s] [-rounds 3]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lodge-mail/lodge/internal/smpp"
	"github.com/lodge-mail/lodge/internal/smpp/smpptest"
)

func main() {
	window := flag.Int("window", 10, "the window measured against 1")
	latencies := flag.String("latency", "0s,5ms", "SMSC answer delays to measure, comma-separated")
	senders := flag.Int("senders", 64, "goroutines calling Submit at once")
	textLen := flag.Int("text", 120, "characters per message (GSM)")
	duration := flag.Duration("duration", 3*time.Second, "how long a round submits")
	rounds := flag.Int("rounds", 3, "rounds per configuration (the median is reported)")
	flag.Parse()

	t := &runT{}
	defer t.cleanup()
	text := strings.Repeat("Your letter is ready. ", 1+*textLen/22)[:*textLen]
	_, split, err := smpp.Split(text, 0)
	if err != nil {
		log.Fatal(err)
	}
	perMsg := len(split)

	type result struct {
		Latency          string    `json:"latency"`
		PartsPerS        float64   `json:"parts_per_s"`
		Rounds           []float64 `json:"parts_per_s_rounds"`
		Window1PartsPerS float64   `json:"window_1_parts_per_s"`
		Window1Rounds    []float64 `json:"window_1_rounds"`
		Ratio            float64   `json:"ratio"`
	}
	var results []result
	for _, l := range strings.Split(*latencies, ",") {
		latency, err := time.ParseDuration(strings.TrimSpace(l))
		if err != nil {
			log.Fatalf("-latency: %v", err)
		}
		srv := smpptest.StartWith(t, smpptest.Options{SubmitDelay: latency})
		sent := 0
		measure := func(w int) (median float64, all []float64) {
			for range *rounds {
				cfg := srv.Config()
				cfg.Window = w
				cfg.Log = slog.New(slog.DiscardHandler)
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				c, err := smpp.Dial(ctx, cfg)
				cancel()
				if err != nil {
					log.Fatal(err)
				}
				var done atomic.Int64
				var wg sync.WaitGroup
				start := time.Now()
				end := start.Add(*duration)
				for range *senders {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for time.Now().Before(end) {
							if _, err := c.Submit(context.Background(), smpp.Message{To: "+61412345678", Text: text}); err != nil {
								log.Fatal(err)
							}
							done.Add(int64(perMsg))
						}
					}()
				}
				wg.Wait()
				all = append(all, float64(done.Load())/time.Since(start).Seconds())
				sent += int(done.Load())
				c.Close()
			}
			sorted := slices.Clone(all)
			slices.Sort(sorted)
			return sorted[len(sorted)/2], all
		}
		r := result{Latency: latency.String()}
		r.PartsPerS, r.Rounds = measure(*window)
		r.Window1PartsPerS, r.Window1Rounds = measure(1)
		if n := len(srv.Submits(t)); n != sent {
			log.Fatalf("latency %s: the server received %d submit_sm, the client sent %d", latency, n, sent)
		}
		r.Ratio = round(r.PartsPerS/r.Window1PartsPerS*100) / 100
		r.PartsPerS, r.Window1PartsPerS = round(r.PartsPerS), round(r.Window1PartsPerS)
		r.Rounds, r.Window1Rounds = roundAll(r.Rounds), roundAll(r.Window1Rounds)
		results = append(results, r)
	}
	b, _ := json.MarshalIndent(map[string]any{
		"window":            *window,
		"senders":           *senders,
		"parts_per_message": perMsg,
		"duration":          duration.String(),
		"results":           results,
	}, "", "  ")
	fmt.Println(string(b))
}

func round(f float64) float64 { return float64(int64(f + 0.5)) }

func roundAll(fs []float64) []float64 {
	out := make([]float64, len(fs))
	for i, f := range fs {
		out[i] = round(f)
	}
	return out
}

// runT is smpptest.T for a program: failures end it, cleanups run at
// the end of main.
type runT struct {
	cleanups []func()
	dirs     []string
	failed   bool
}

func (t *runT) Helper()                     {}
func (t *runT) Logf(f string, args ...any)  { log.Printf(f, args...) }
func (t *runT) Skipf(f string, args ...any) { t.Fatalf("cannot run: "+f, args...) }
func (t *runT) Fatal(args ...any)           { t.Fatalf("%s", fmt.Sprint(args...)) }
func (t *runT) Failed() bool                { return t.failed }
func (t *runT) Cleanup(f func())            { t.cleanups = append(t.cleanups, f) }
func (t *runT) Fatalf(f string, args ...any) {
	t.failed = true
	log.Printf(f, args...)
	t.cleanup()
	os.Exit(1)
}

func (t *runT) TempDir() string {
	d, err := os.MkdirTemp("", "smsbench-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

func (t *runT) cleanup() {
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		t.cleanups[i]()
	}
	t.cleanups = nil
}
