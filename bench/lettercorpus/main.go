// Command lettercorpus writes the auto processor's test corpus (package
// internal/testdoc/corpus): letters in PDF, PostScript and XPS from several
// producers, and manifest.json with what a correct reader finds in each.
//
//	go run ./bench/lettercorpus -out DIR [-letters 2000] [-seed 1]
//
// It needs Ghostscript, Chromium and qpdf (scripts/test installs them) and
// prints the time it took and what it wrote.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/lodge-mail/lodge/internal/testdoc/corpus"
)

func main() {
	out := flag.String("out", "", "directory to write the corpus into (created; must be empty)")
	letters := flag.Int("letters", corpus.Full, fmt.Sprintf("distinct letters (at least %d)", corpus.Small))
	seed := flag.Uint64("seed", 1, "seed of the addresses, layouts and texts")
	flag.Parse()
	if *out == "" || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	start := time.Now()
	m, err := corpus.Generate(ctx, *out, corpus.Options{Letters: *letters, Seed: *seed})
	if err != nil {
		fmt.Fprintln(os.Stderr, "lettercorpus:", err)
		os.Exit(1)
	}
	took := time.Since(start)
	formats := map[string]int{}
	layouts := map[string]int{}
	pages := 0
	for _, d := range m.Documents {
		formats[d.Format]++
		pages += d.Pages
		if d.CopyOf == "" {
			layouts[d.Layout] += len(d.Letters)
		}
	}
	fmt.Printf("%d letters in %d documents (%d pdf, %d ps, %d xps; %d pages with copies) in %s\n",
		m.Letters, len(m.Documents), formats["pdf"], formats["ps"], formats["xps"], pages, took.Round(time.Millisecond))
	for _, l := range corpus.Layouts {
		fmt.Printf("  %-14s %5d letters\n", l, layouts[l])
	}
}
