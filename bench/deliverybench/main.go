// Command deliverybench measures the mailroom's email delivery end to
// end: one mailing of -letters text-only email letters (a template
// filled from each letter's custom_data) sent by the send stage through
// delivery's email sender and a pooled SMTP client to a local Mailpit,
// every send recorded as started and done in the mailroom's Pebble
// store as the server does. It reports emails per second and the growth
// of this process's resident memory (VmHWM reset before the mailing,
// less VmRSS before it), with -pool connections (and, with -baseline,
// the same with one connection, and the ratio). Prints one JSON object.
//
//	go run ./bench/deliverybench [-letters 100000] [-pool 4] [-baseline]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	sjson "github.com/segmentio/encoding/json"

	"github.com/lodge-mail/lodge/delivery"
	"github.com/lodge-mail/lodge/delivery/email"
	"github.com/lodge-mail/lodge/internal/mailpittest"
	"github.com/lodge-mail/lodge/pipeline"
)

func main() {
	letters := flag.Int("letters", 100_000, "letters in the mailing")
	pool := flag.Int("pool", 4, "SMTP connections")
	baseline := flag.Bool("baseline", false, "also run with one connection and report the ratio")
	memprofile := flag.String("memprofile", "", "write the allocation profile of the run here")
	flag.Parse()
	if *memprofile != "" {
		runtime.MemProfileRate = 64 << 10
		defer func() {
			f, err := os.Create(*memprofile)
			if err == nil {
				pprof.Lookup("allocs").WriteTo(f, 0)
				f.Close()
			}
		}()
	}
	bin, err := mailpittest.BinaryPath(func(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) })
	if err != nil {
		log.Fatal(err)
	}
	mp, err := mailpittest.Launch(bin, mailpittest.Options{Max: -1})
	if err != nil {
		log.Fatal(err)
	}
	defer mp.Close()
	out := map[string]any{"letters": *letters, "pool": *pool}
	rate, growth, err := run(mp.URL(), *letters, *pool)
	if err != nil {
		log.Fatal(err)
	}
	out["emails_per_s"], out["rss_growth_mb"] = round(rate), growth
	if *baseline {
		r1, _, err := run(mp.URL(), min(*letters, 20_000), 1)
		if err != nil {
			log.Fatal(err)
		}
		out["pool1_emails_per_s"], out["ratio_to_pool1"] = round(r1), round(rate/r1)
	}
	b, _ := json.Marshal(out)
	fmt.Println(string(b))
}

func round(f float64) float64 { return float64(int(f*100+0.5)) / 100 }

func run(smtpURL string, n, pool int) (rate float64, growthMB int, err error) {
	dir, err := os.MkdirTemp("", "deliverybench-")
	if err != nil {
		return 0, 0, err
	}
	defer os.RemoveAll(dir)
	quiet := slog.New(slog.DiscardHandler)
	store, err := pipeline.OpenPebble(dir)
	if err != nil {
		return 0, 0, err
	}
	defer store.Close()
	mailer, err := email.New(email.Config{URL: smtpURL, Pool: pool, Log: quiet})
	if err != nil {
		return 0, 0, err
	}
	defer mailer.Close()
	senders := delivery.Senders(delivery.Config{Mailer: mailer, From: "Bench <bench@lodge.example>"})
	mr := pipeline.New(store, nil, pipeline.Config{CancelWindow: -1, Senders: senders, SendWorkers: pool * 2}, quiet)
	settings, _ := sjson.Marshal(map[string]any{"template": "Dear {{name}},\nyour account {{account}} is due on {{due}}.", "email_subj": "Your statement"})
	ls := make([]pipeline.Letter, n)
	for i := range ls {
		ls[i] = pipeline.Letter{Idx: i, Reference: "r" + strconv.Itoa(i), Channels: []string{"email"}, Email: fmt.Sprintf("customer%d@example.net", i),
			CustomData: map[string]string{"name": fmt.Sprintf("Customer %d", i), "account": strconv.Itoa(100000 + i), "due": "1 April"}}
	}
	epid := fmt.Sprintf("BENCH%dX%d", n, pool)
	os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	before, _ := memory()
	start := time.Now() // from the mailing's submission to its last email handed over
	if err := mr.Submit(pipeline.Mailing{EPID: epid, Account: "BENCH1", Settings: settings}, ls); err != nil {
		return 0, 0, err
	}
	ls = nil
	if os.Getenv("DELIVERYBENCH_PHASES") != "" {
		_, h := memory()
		fmt.Fprintf(os.Stderr, "after submit: peak %d MB (+%d)\n", h, h-before)
	}
	for {
		if _, err := mr.RunDue(context.Background()); err != nil {
			return 0, 0, err
		}
		if os.Getenv("DELIVERYBENCH_PHASES") != "" {
			_, h := memory()
			fmt.Fprintf(os.Stderr, "after a round: peak %d MB (+%d)\n", h, h-before)
		}
		c, err := store.Counts(epid)
		if err != nil {
			return 0, 0, err
		}
		if c[pipeline.Lodged] == n {
			break
		}
		if c[pipeline.Failed] > 0 {
			return 0, 0, fmt.Errorf("failed letters: %v", c)
		}
	}
	took := time.Since(start)
	_, peak := memory()
	return float64(n) / took.Seconds(), peak - before, nil
}

// memory returns this process's VmRSS and VmHWM in MB.
func memory() (rss, hwm int) {
	b, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || k != "VmRSS" && k != "VmHWM" {
			continue
		}
		kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
		if k == "VmRSS" {
			rss = kb / 1000
		} else {
			hwm = kb / 1000
		}
	}
	return rss, hwm
}
