// Package progress reports how far a long job (an import, a bulk check) has
// come: a redrawn bar when the output is a terminal, plain lines otherwise
// (logs, CI), at most one line every Interval.
//
// A Bar is safe for concurrent use: workers call Add, one goroutine draws.
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/term"
)

// Bar shows progress of one job on an output.
type Bar struct {
	w        io.Writer
	label    string
	unit     string
	total    atomic.Int64 // 0 when unknown
	done     atomic.Int64
	tty      bool
	interval time.Duration
	start    time.Time
	stop     chan struct{}
	wg       sync.WaitGroup
	mu       sync.Mutex
	finished bool
}

// Options tune a Bar. The zero value draws to os.Stderr every second (every
// 200ms on a terminal).
type Options struct {
	Out      io.Writer     // default os.Stderr
	Interval time.Duration // default 1s, 200ms on a terminal
	// Quiet suppresses all output (the counters still run).
	Quiet bool
}

// Start begins reporting a job called label counting unit ("rows",
// "addresses") towards total (0 if unknown).
func Start(label, unit string, total int64, o Options) *Bar {
	if o.Out == nil {
		o.Out = os.Stderr
	}
	if o.Quiet {
		o.Out = io.Discard
	}
	b := &Bar{w: o.Out, label: label, unit: unit, start: time.Now(), stop: make(chan struct{})}
	b.total.Store(total)
	if f, ok := o.Out.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		b.tty = true
	}
	b.interval = o.Interval
	if b.interval <= 0 {
		b.interval = time.Second
		if b.tty {
			b.interval = 200 * time.Millisecond
		}
	}
	if o.Out != io.Discard {
		b.wg.Add(1)
		go b.loop()
	}
	return b
}

// Add counts n more units done.
func (b *Bar) Add(n int64) { b.done.Add(n) }

// SetTotal changes the expected total.
func (b *Bar) SetTotal(n int64) { b.total.Store(n) }

// Done returns the units counted so far.
func (b *Bar) Done() int64 { return b.done.Load() }

func (b *Bar) loop() {
	defer b.wg.Done()
	t := time.NewTicker(b.interval)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
			b.draw(false)
		}
	}
}

func (b *Bar) draw(final bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	done, total := b.done.Load(), b.total.Load()
	el := time.Since(b.start)
	rate := 0.0
	if s := el.Seconds(); s > 0 {
		rate = float64(done) / s
	}
	var line string
	if total > 0 {
		frac := float64(done) / float64(total)
		if frac > 1 {
			frac = 1
		}
		eta := ""
		if rate > 0 && done < total && !final {
			eta = fmt.Sprintf(" eta %s", time.Duration(float64(total-done)/rate*float64(time.Second)).Round(time.Second))
		}
		if b.tty {
			const width = 30
			full := int(frac * width)
			line = fmt.Sprintf("\r%s [%s%s] %5.1f%% %d/%d %s %.0f/s%s\x1b[K", b.label, strings.Repeat("=", full), strings.Repeat(" ", width-full), frac*100, done, total, b.unit, rate, eta)
		} else {
			line = fmt.Sprintf("%s: %d/%d %s (%.1f%%) %.0f/s%s\n", b.label, done, total, b.unit, frac*100, rate, eta)
		}
	} else if b.tty {
		line = fmt.Sprintf("\r%s: %d %s %.0f/s\x1b[K", b.label, done, b.unit, rate)
	} else {
		line = fmt.Sprintf("%s: %d %s %.0f/s\n", b.label, done, b.unit, rate)
	}
	if final {
		if b.tty {
			line += "\n"
		}
		line += fmt.Sprintf("%s: done, %d %s in %s\n", b.label, done, b.unit, el.Round(time.Millisecond))
	}
	io.WriteString(b.w, line)
}

// Finish stops reporting and prints a final line. It is idempotent.
func (b *Bar) Finish() {
	b.mu.Lock()
	if b.finished {
		b.mu.Unlock()
		return
	}
	b.finished = true
	b.mu.Unlock()
	close(b.stop)
	b.wg.Wait()
	if b.w != io.Discard {
		b.draw(true)
	}
}
