package bulk

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/lodge-mail/lodge/engine"
	"github.com/lodge-mail/lodge/progress"
)

// MaxRowBytes is the longest row read: a CSV record or a JSON line.
const MaxRowBytes = 1 << 20

const (
	chunkRows  = 512       // rows per chunk at most
	chunkBytes = 256 << 10 // input bytes per chunk before it is sent on
	readBuffer = 64 << 10  // input buffer
	maxDepth   = 64        // JSON nesting
)

// Config tunes Run. Its zero value is the documented default.
type Config struct {
	// Format is "csv" or "jsonl"; "" detects it: a first non-blank byte
	// '{' or '[' means jsonl, anything else csv.
	Format string
	// Columns are the columns forming the address, in order: header names
	// or 1-based indexes ("2", "3", "4") for CSV, field names for JSON
	// lines. Empty means every column (CSV), or the field "address" (a
	// string or an array of strings) or, when absent, every string field in
	// order (JSON lines).
	Columns []string
	// NoHeader says the CSV has no header row (by default the first row is
	// one). No header is written then either.
	NoHeader bool
	// Comma is the CSV separator, for input and output; 0 means ','.
	Comma rune
	// Detail adds the parsed components: detail_* columns or a "detail"
	// object.
	Detail bool
	// Workers is how many goroutines judge addresses; 0 means
	// runtime.GOMAXPROCS(0).
	Workers int
	// Progress tunes the progress bar.
	Progress progress.Options
	// Total is the expected number of rows for the progress bar; 0 if
	// unknown.
	Total int64
}

// Summary counts what a run wrote.
type Summary struct {
	Rows     int64
	ByStatus map[string]int64 // "matched", "unmatched", "invalid", "international"
	// Errors counts rows that could not be read as an address: written
	// with status "error".
	Errors  int64
	Elapsed time.Duration
}

// String returns a human summary: rows, time and rate, then the count and
// share of each status, one a line.
func (s Summary) String() string {
	var b strings.Builder
	rate := 0.0
	if sec := s.Elapsed.Seconds(); sec > 0 {
		rate = float64(s.Rows) / sec
	}
	fmt.Fprintf(&b, "checked %d rows in %s (%.0f rows/s)", s.Rows, s.Elapsed.Round(time.Millisecond), rate)
	line := func(name string, n int64) {
		pct := 0.0
		if s.Rows > 0 {
			pct = 100 * float64(n) / float64(s.Rows)
		}
		fmt.Fprintf(&b, "\n  %-14s %10d %6.1f%%", name, n, pct)
	}
	for _, st := range engine.Statuses {
		line(st.String(), s.ByStatus[st.String()])
	}
	line(statusError, s.Errors)
	return b.String()
}

const statusError = "error"

// counts are indexed by engine.Status; index 0 counts errors.
type counts [8]int64

// row is one input row as read.
type row struct {
	fields []string // CSV: the record (the fields before the fault for an error row)
	pad    int      // CSV: empty fields to write before the verdict
	lo, hi int      // JSON lines: the line in chunk.arena
	line   int64    // input line number where the row starts
	err    string   // why the row could not be read, "" when it could
}

// chunk is the unit of work: rows read in order, judged by one worker,
// written by the writer in sequence order.
type chunk struct {
	seq      int64
	rows     []row
	arena    []byte
	size     int
	out      bytes.Buffer
	n        int  // rows formatted into out
	complete bool // every row formatted
	counts   counts
}

func (c *chunk) reset() {
	clear(c.rows) // hold no record of an earlier chunk
	c.rows = c.rows[:0]
	c.arena = c.arena[:0]
	c.size = 0
	c.out.Reset()
	c.n = 0
	c.complete = false
	c.counts = counts{}
}

// source reads rows. next returns io.EOF at the end; any other error stops
// the run. raw (JSON lines) is valid until the next call.
type source interface {
	next() (r row, raw []byte, err error)
}

// judge formats the rows of a chunk. One per worker.
type judge interface {
	process(ctx context.Context, c *chunk)
}

// setup is what reading the start of the input settles.
type setup struct {
	src    source
	header []byte // output header, CSV only
	newJ   func(*engine.Engine) judge
	err    error
}

// Run reads addresses from in, judges each with e and writes each row with
// its verdict to out, in input order. See the package documentation for
// formats, errors and limits.
func Run(ctx context.Context, e *engine.Engine, in io.Reader, out io.Writer, cfg Config) (Summary, error) {
	start := time.Now()
	sum := Summary{ByStatus: map[string]int64{}}
	for _, st := range engine.Statuses {
		sum.ByStatus[st.String()] = 0
	}
	if e == nil {
		return sum, errors.New("bulk: nil engine")
	}
	if err := cfg.check(); err != nil {
		return sum, err
	}
	if err := ctx.Err(); err != nil {
		return sum, err
	}
	workers := cfg.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	inflight := 2*workers + 2

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	bar := progress.Start("check", "addresses", cfg.Total, cfg.Progress)
	defer bar.Finish()

	pool := make(chan *chunk, inflight)
	for range inflight {
		pool <- &chunk{}
	}
	jobs := make(chan *chunk, inflight)
	done := make(chan *chunk, inflight)
	setupc := make(chan setup, 1)
	readDone := make(chan struct{})
	var readErr error
	var sent int64 // chunks sent to the workers, set when readDone closes

	// the reader: settles the format and header, then reads rows into
	// chunks, sending a chunk on when it is full or the input pauses
	go func() {
		var c *chunk
		var seq int64
		// readDone closes before jobs: a run whose workers saw the end of
		// jobs finds the reader done
		defer close(jobs)
		defer close(readDone)
		defer func() { sent = seq }()
		send := func() bool {
			if c == nil || len(c.rows) == 0 {
				return true
			}
			c.seq = seq
			select {
			case jobs <- c:
				seq++
				c = nil
				return true
			case <-ctx.Done():
				return false
			}
		}
		br := bufio.NewReaderSize(ctxReader{ctx, in}, readBuffer)
		su := open(br, cfg, func() { send() })
		setupc <- su
		if su.err != nil {
			return
		}
		for {
			if err := ctx.Err(); err != nil {
				readErr = err
				return
			}
			if c == nil {
				select {
				case c = <-pool:
					c.reset()
				case <-ctx.Done():
					readErr = ctx.Err()
					return
				}
			}
			r, raw, err := su.src.next()
			if err == io.EOF {
				break
			}
			if err != nil {
				readErr = err
				break
			}
			if ctx.Err() != nil {
				readErr = ctx.Err()
				return
			}
			if c == nil { // the stall hook sent it on
				select {
				case c = <-pool:
					c.reset()
				case <-ctx.Done():
					readErr = ctx.Err()
					return
				}
			}
			if raw != nil {
				r.lo = len(c.arena)
				c.arena = append(c.arena, raw...)
				r.hi = len(c.arena)
				c.size += len(raw)
			}
			for _, f := range r.fields {
				c.size += len(f) + 1
			}
			c.rows = append(c.rows, r)
			if len(c.rows) >= chunkRows || c.size >= chunkBytes {
				if !send() {
					readErr = ctx.Err()
					return
				}
			}
		}
		if !send() && readErr == nil {
			readErr = ctx.Err()
		}
	}()

	var su setup
	select {
	case su = <-setupc:
	case <-ctx.Done():
		return sum, ctx.Err()
	}
	if su.err != nil {
		return sum, su.err
	}
	if len(su.header) > 0 {
		if _, err := out.Write(su.header); err != nil {
			cancel()
			return sum, fmt.Errorf("bulk: writing output: %w", err)
		}
	}

	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			j := su.newJ(e)
			for {
				select {
				case c, ok := <-jobs:
					if !ok {
						return
					}
					j.process(ctx, c)
					done <- c // never blocks: done holds every chunk there is
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	go func() { wg.Wait(); close(done) }()

	// the writer: chunks in sequence order; a chunk cut short by
	// cancellation is written up to its last judged row and ends the output
	var werr error
	var next int64
	stopped := false
	pending := map[int64]*chunk{}
	var all counts
	for c := range done {
		if stopped || werr != nil {
			continue
		}
		pending[c.seq] = c
		for {
			c, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			if _, err := out.Write(c.out.Bytes()); err != nil {
				werr = fmt.Errorf("bulk: writing output: %w", err)
				cancel()
				break
			}
			for i, n := range c.counts {
				all[i] += n
			}
			bar.Add(int64(c.n))
			if !c.complete {
				stopped = true
				break
			}
			next++
			pool <- c
		}
	}
	sum.Errors = all[0]
	sum.Rows = all[0]
	for _, st := range engine.Statuses {
		sum.ByStatus[st.String()] = all[st]
		sum.Rows += all[st]
	}
	sum.Elapsed = time.Since(start)
	if werr != nil {
		return sum, werr
	}
	select {
	case <-readDone:
		if readErr == nil && !stopped && next == sent {
			return sum, nil // every row written, whatever happened since
		}
		if err := ctx.Err(); err != nil {
			return sum, err
		}
		if readErr != nil {
			return sum, readErr
		}
		return sum, errors.New("bulk: internal error: rows lost")
	default:
		// the reader is still reading: only cancellation ends the workers
		// before it has done
		if err := ctx.Err(); err != nil {
			return sum, err
		}
		return sum, errors.New("bulk: internal error: workers ended before the input")
	}
}

// ctxReader stops reading once ctx is done: after a cancellation the
// reader reads no further, even when Run has returned.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (r ctxReader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	return r.r.Read(p)
}

// check validates the parts of cfg that need no input.
func (cfg *Config) check() error {
	switch cfg.Format {
	case "", "csv", "jsonl":
	default:
		return fmt.Errorf("bulk: unknown format %q: use csv or jsonl (or leave it empty to detect)", cfg.Format)
	}
	if c := cfg.Comma; c != 0 && (c == '"' || c == '\r' || c == '\n' || c == utf8.RuneError || !utf8.ValidRune(c)) {
		return fmt.Errorf("bulk: %q cannot separate CSV fields", c)
	}
	for _, c := range cfg.Columns {
		if strings.TrimSpace(c) == "" {
			return errors.New("bulk: an empty column name in Columns")
		}
	}
	return nil
}

// open detects the format, reads the CSV header and resolves the columns.
func open(br *bufio.Reader, cfg Config, stall func()) setup {
	if b, _ := br.Peek(3); bytes.Equal(b, []byte("\xef\xbb\xbf")) {
		br.Discard(3)
	}
	format := cfg.Format
	if format == "" {
		format = detect(br)
	}
	if format == "jsonl" {
		return openJSONL(br, cfg, stall)
	}
	return openCSV(br, cfg, stall)
}

// detect returns "jsonl" when the first non-blank byte within the input
// buffer is '{' or '[', else "csv".
func detect(br *bufio.Reader) string {
	for n := 1; ; n *= 2 {
		if n > br.Size() {
			n = br.Size()
		}
		b, err := br.Peek(n)
		for _, c := range b {
			switch c {
			case ' ', '\t', '\r', '\n':
				continue
			case '{', '[':
				return "jsonl"
			default:
				return "csv"
			}
		}
		if err != nil || n == br.Size() {
			return "csv"
		}
	}
}

// statusIndex is the index into counts of a verdict.
func statusIndex(r engine.Result) int {
	if int(r.Status) < len(counts{}) {
		return int(r.Status)
	}
	return 0
}

// splitNewlines appends the lines of field s, split at newlines.
func splitNewlines(dst []string, s string) []string {
	for {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			return append(dst, strings.TrimSuffix(s, "\r"))
		}
		dst = append(dst, strings.TrimSuffix(s[:i], "\r"))
		s = s[i+1:]
	}
}
