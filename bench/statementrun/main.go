// Command statementrun measures production on a statement run: one PDF
// of -letters letters of -pages pages each (20,000 pages by default),
// every letter addressed in its window, a letterhead behind every page,
// duplex, mono, a Data Matrix on every sheet. It times what production
// does between end_session and the print room: Inspect (the window of
// every letter's first page read by pdftotext in the sandbox, the facts
// and prices) and Compose (the batch PDF, manifests and lodgement summary
// written and renamed into the hot folder), and reports composed pages per
// second and the growth of the process's resident memory (VmHWM, reset
// before the run, less VmRSS at its start). With -baseline it also times
// qpdf copying the same pages into a new file (qpdf --empty --pages), the
// floor of copying pages with a mature C++ library, and prints the ratio.
//
// The documents are made (by internal/testdoc/mailpdf) in -dir once and
// reused; the run itself is in a fresh data directory there. It prints
// one JSON object:
//
//	{"letters","pages","sheets","batch_bytes","inspect_s","compose_s",
//	 "total_s","pages_per_s","compose_pages_per_s","rss_start_mb",
//	 "rss_peak_mb","rss_growth_mb","qpdf_s","qpdf_pages_per_s","ratio_to_qpdf"}
//
// pages_per_s is the run's pages over Inspect and Compose together;
// ratio_to_qpdf compares it with qpdf's pages per second.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/lodge-mail/lodge/internal/testdoc/mailpdf"
	"github.com/lodge-mail/lodge/pipeline"
	"github.com/lodge-mail/lodge/production"
)

type result struct {
	Letters       int     `json:"letters"`
	Pages         int     `json:"pages"`
	Sheets        int     `json:"sheets"`
	BatchBytes    int64   `json:"batch_bytes"`
	InspectS      float64 `json:"inspect_s"`
	ComposeS      float64 `json:"compose_s"`
	TotalS        float64 `json:"total_s"`
	PagesPerS     float64 `json:"pages_per_s"`
	ComposePerS   float64 `json:"compose_pages_per_s"`
	RSSStartMB    float64 `json:"rss_start_mb"`
	RSSPeakMB     float64 `json:"rss_peak_mb"`
	RSSGrowthMB   float64 `json:"rss_growth_mb"`
	QpdfS         float64 `json:"qpdf_s,omitempty"`
	QpdfPagesPerS float64 `json:"qpdf_pages_per_s,omitempty"`
	RatioToQpdf   float64 `json:"ratio_to_qpdf,omitempty"`
}

func main() {
	dir := flag.String("dir", filepath.Join(os.TempDir(), "lodge-statementrun"), "folder for the documents (kept) and the run's data directory (made afresh)")
	letters := flag.Int("letters", 10000, "letters in the run")
	pages := flag.Int("pages", 2, "pages per letter")
	baseline := flag.Bool("baseline", false, "also time qpdf copying the same pages")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the run")
	flag.Parse()
	if err := run(*dir, *letters, *pages, *baseline, *cpuprofile); err != nil {
		log.Fatal(err)
	}
}

func run(dir string, letters, pagesPer int, baseline bool, cpuprofile string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	stmt := filepath.Join(dir, fmt.Sprintf("statements-%dx%d.pdf", letters, pagesPer))
	lh := filepath.Join(dir, "letterhead.pdf")
	if err := made(stmt, func(w io.Writer) error { return mailpdf.Statement(w, letters, pagesPer) }); err != nil {
		return err
	}
	if err := made(lh, mailpdf.Letterhead); err != nil {
		return err
	}
	data := filepath.Join(dir, "data")
	if err := os.RemoveAll(data); err != nil {
		return err
	}
	p, err := production.New(production.Config{DataDir: data}, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	m := &pipeline.Mailing{EPID: "BENCHSTATEMENTRUN", Account: "ABC12345", Created: time.Now(), Letters: letters,
		Production: pipeline.Production{Duplex: true, Background: "letterhead.pdf", BackgroundPages: "all", Postage: "regular"},
		Files: []pipeline.File{
			{Name: "statements.pdf", Kind: "pdf", Path: stmt, Pages: letters * pagesPer},
			{Name: "letterhead.pdf", Kind: "pdf", Path: lh, Pages: 1},
		}}
	ls := make([]*pipeline.Letter, letters)
	for i := range ls {
		ls[i] = &pipeline.Letter{EPID: m.EPID, Account: m.Account, Idx: i, Status: pipeline.Received, Channels: []string{"postal"},
			Postal: mailpdf.Address(i), Received: m.Created,
			Documents: []pipeline.DocPart{{File: "statements.pdf", PageStart: i * pagesPer, PageEnd: i*pagesPer + pagesPer - 1}}}
	}

	runtime.GC()
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		return fmt.Errorf("resetting VmHWM: %w", err)
	}
	res := result{Letters: letters, Pages: letters * pagesPer}
	res.RSSStartMB, _ = memory()
	if cpuprofile != "" {
		f, err := os.Create(cpuprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	ctx := context.Background()
	start := time.Now()
	if err := p.Inspect(ctx, m, ls); err != nil {
		return err
	}
	inspected := time.Now()
	// one batch, sorted by postcode, as the mailroom's batch stage makes it
	var batch []pipeline.Letter
	for _, l := range ls {
		if l.Status != pipeline.Received {
			return fmt.Errorf("letter %d: %s: %s", l.Idx, l.Status, l.HoldReason)
		}
		batch = append(batch, *l)
	}
	sort.SliceStable(batch, func(i, j int) bool { return batch[i].Postcode < batch[j].Postcode })
	b := &pipeline.Batch{ID: "20250101-BENCHSTATEMENTRUN-01", EPID: m.EPID, Account: m.Account, Created: time.Now(), State: pipeline.BatchComposing,
		Envelope: "DL", Postage: "regular", Duplex: true}
	for _, l := range batch {
		b.Letters = append(b.Letters, l.Idx)
		b.Sheets += l.Sheets
		b.Pages += l.Pages
	}
	out, err := p.Compose(ctx, m, b, batch)
	if err != nil {
		return err
	}
	end := time.Now()
	pprof.StopCPUProfile()
	_, res.RSSPeakMB = memory()
	res.RSSGrowthMB = res.RSSPeakMB - res.RSSStartMB
	res.Sheets = b.Sheets
	if fi, err := os.Stat(filepath.Join(out, production.BatchPDF)); err == nil {
		res.BatchBytes = fi.Size()
	}
	res.InspectS = inspected.Sub(start).Seconds()
	res.ComposeS = end.Sub(inspected).Seconds()
	res.TotalS = end.Sub(start).Seconds()
	res.PagesPerS = float64(res.Pages) / res.TotalS
	res.ComposePerS = float64(res.Pages) / res.ComposeS
	if baseline {
		copyOut := filepath.Join(dir, "qpdf-copy.pdf")
		t0 := time.Now()
		if b, err := exec.Command("qpdf", "--empty", "--pages", stmt, "--", copyOut).CombinedOutput(); err != nil {
			return fmt.Errorf("qpdf: %v\n%s", err, b)
		}
		res.QpdfS = time.Since(t0).Seconds()
		res.QpdfPagesPerS = float64(res.Pages) / res.QpdfS
		res.RatioToQpdf = res.PagesPerS / res.QpdfPagesPerS
		os.Remove(copyOut)
	}
	enc := json.NewEncoder(os.Stdout)
	return enc.Encode(res)
}

// made writes a document to path unless it is there already.
func made(path string, write func(io.Writer) error) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	f, err := os.Create(path + ".tmp")
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	if err := write(w); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(path+".tmp", path)
}

// memory returns this process's VmRSS and VmHWM in MB (10^6 bytes).
func memory() (rss, hwm float64) {
	b, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && (k == "VmRSS" || k == "VmHWM") {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			if k == "VmRSS" {
				rss = kb * 1024 / 1e6
			} else {
				hwm = kb * 1024 / 1e6
			}
		}
	}
	return rss, hwm
}
