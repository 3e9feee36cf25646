// Command extractbench measures the auto processor on a statement run:
// one PDF of -pages pages (5,000 by default), letters of 1 to 8 pages,
// each first page addressed in the envelope window with a hidden ref:
// line, every page with a letterhead line and 40 lines of body text. It
// reads the run as the server does (extraction.Extractor: a bounded
// child process) and reports pages per second and the child's peak
// resident memory; side by side on the same file it times the other
// readers that were measured for the choice: poppler's pdftotext
// -bbox-layout (every word with its box, as XHTML) and Ghostscript's
// txtwrite device (every character, as XML; over -gs-pages pages, as it
// is slow), and prints the ratios. Prints one JSON object.
//
//	go run ./bench/extractbench [-pages 5000] [-rounds 3] [-dir DIR]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/lodge-mail/lodge/extraction"
	"github.com/lodge-mail/lodge/internal/pdf"
	"github.com/lodge-mail/lodge/pipeline"
)

const mm = 72 / 25.4

func main() {
	extraction.RunChildIfRequested()
	pages := flag.Int("pages", 5000, "pages in the statement run")
	rounds := flag.Int("rounds", 3, "rounds of each reader (the median is reported)")
	gsPages := flag.Int("gs-pages", 300, "pages Ghostscript's txtwrite reads (it is slow)")
	dir := flag.String("dir", "", "work folder (default a temporary one)")
	flag.Parse()
	if *dir == "" {
		d, err := os.MkdirTemp("", "extractbench-")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(d)
		*dir = d
	}
	path := filepath.Join(*dir, "run.pdf")
	letters, err := writeRun(path, *pages)
	if err != nil {
		log.Fatal(err)
	}
	x := extraction.New(extraction.Config{}, slog.New(slog.DiscardHandler))
	m := &pipeline.Mailing{EPID: "BENCH", Auto: true, Files: []pipeline.File{{Name: "run.pdf", Kind: "pdf", Path: path, Pages: *pages}}}
	var ours []float64
	for range *rounds {
		start := time.Now()
		ls, err := x.Extract(context.Background(), m)
		if err != nil {
			log.Fatal(err)
		}
		ours = append(ours, time.Since(start).Seconds())
		if len(ls) != letters {
			log.Fatalf("read %d letters, wrote %d", len(ls), letters)
		}
		for _, l := range ls {
			if l.Status == pipeline.Held {
				log.Fatalf("letter held: %s", l.HoldReason)
			}
		}
	}
	time1 := func(name string, args ...string) float64 {
		start := time.Now()
		cmd := exec.Command(name, args...)
		cmd.Stdout, cmd.Stderr = nil, os.Stderr
		if err := cmd.Run(); err != nil {
			log.Fatalf("%s: %v", name, err)
		}
		return time.Since(start).Seconds()
	}
	var poppler, gs []float64
	for range *rounds {
		poppler = append(poppler, time1("pdftotext", "-q", "-bbox-layout", path, filepath.Join(*dir, "out.html")))
		gs = append(gs, time1("gs", "-q", "-dSAFER", "-dBATCH", "-dNOPAUSE", "-sDEVICE=txtwrite", "-dTextFormat=1",
			"-dFirstPage=1", "-dLastPage="+strconv.Itoa(*gsPages), "-o", filepath.Join(*dir, "out.xml"), path))
	}
	med := func(v []float64) float64 { slices.Sort(v); return v[len(v)/2] }
	o, p, g := med(ours), med(poppler), med(gs)
	out := map[string]any{
		"pages": *pages, "letters": letters, "rounds": *rounds,
		"lodge_s": round(o), "lodge_pages_per_s": round(float64(*pages) / o),
		"reader_peak_rss_mb":      x.PeakRSS() >> 20,
		"pdftotext_bbox_s":        round(p),
		"pdftotext_pages_per_s":   round(float64(*pages) / p),
		"gs_txtwrite_pages":       *gsPages,
		"gs_txtwrite_pages_per_s": round(float64(*gsPages) / g),
		"ratio_to_pdftotext":      round(p / o),
		"ratio_to_gs_txtwrite":    round((float64(*pages) / o) / (float64(*gsPages) / g)),
	}
	b, _ := json.Marshal(out)
	fmt.Println(string(b))
}

func round(f float64) float64 { return float64(int(f*100+0.5)) / 100 }

// writeRun writes the statement run and returns its number of letters.
func writeRun(path string, pages int) (int, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	w := pdf.NewWriter(f)
	var c pdf.Content
	letters, left := 0, 0
	for i := range pages {
		c.Reset()
		c.Text(pdf.HelveticaBold, 14, 20*mm, 297*mm-20*mm, "Bluegum Energy Pty Ltd")
		if left == 0 {
			letters++
			left = 1 + (letters*7)%8
			y := 297*mm - 56*mm
			c.Gray(1)
			c.Text(pdf.Helvetica, 10, 25*mm, y, fmt.Sprintf("ref:ACC-%06d", letters))
			c.Gray(0)
			for _, line := range []string{fmt.Sprintf("MR CUSTOMER %d", letters), fmt.Sprintf("%d SMITH STREET", 1+letters%200), "KINGSTON ACT 2604"} {
				y -= 12.5
				c.Text(pdf.Helvetica, 10, 25*mm, y, line)
			}
		}
		left--
		for l := range 40 {
			c.Text(pdf.Helvetica, 9, 20*mm, 297*mm-110*mm-float64(l)*11, fmt.Sprintf("%02d/03/2026  Usage charge, period %d, meter %08d      %8.2f", 1+l%28, i, l*7919, float64(l)*3.17))
		}
		w.AddPage(210*mm, 297*mm, &c)
	}
	if err := w.Close(); err != nil {
		return 0, err
	}
	return letters, f.Sync()
}
