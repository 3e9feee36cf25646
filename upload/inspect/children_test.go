//go:build unix

package inspect

import (
	"github.com/lodge-mail/lodge/internal/testdoc"
	"runtime"

	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestChildrenBounded: however many callers count pages at once, no more
// than Limits.MaxChildren children are alive together; the others wait
// for a slot and then run. The children block until the test lets them
// go, so every caller is either running a child or waiting before any
// child ends: without the bound all of them would be running.
func TestChildrenBounded(t *testing.T) {
	const bound, callers = 2, 6
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		if runtime.GOOS == "linux" {
			t.Fatal(err) // Linux has named pipes: CI must not pass by skipping
		}
		t.Skip("no named pipes:", err)
	}
	doc := filepath.Join(dir, "block.pdf")
	if err := os.WriteFile(doc, []byte("TEST-BLOCK "+fifo), 0o600); err != nil {
		t.Fatal(err)
	}
	type state struct{ running, waiting int }
	states := make(chan state, 1000)
	peak := 0
	children.mu.Lock()
	children.observe = func(running, waiting int) {
		peak = max(peak, running)
		states <- state{running, waiting}
	}
	children.mu.Unlock()
	defer func() {
		children.mu.Lock()
		children.observe = nil
		children.mu.Unlock()
	}()
	lim := Limits{MaxChildren: bound, ChildWait: time.Hour}
	results := make(chan error, callers)
	for range callers {
		go func() {
			n, err := PagesIsolated(context.Background(), PDF, doc, lim)
			if err == nil && n != 1 {
				err = fmt.Errorf("%d pages", n)
			}
			results <- err
		}()
	}
	// every caller is running a child or waiting for a slot
	for s := range states {
		if s.running+s.waiting == callers {
			if s.running != bound {
				t.Errorf("%d children running and %d callers waiting; want %d running", s.running, s.waiting, bound)
			}
			break
		}
	}
	// let them all finish
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Write(make([]byte, callers)); err != nil {
		t.Fatal(err)
	}
	for range callers {
		if err := <-results; err != nil {
			t.Error(err)
		}
	}
	children.mu.Lock()
	defer children.mu.Unlock()
	if peak > bound || children.running != 0 || children.waiting != 0 {
		t.Errorf("peak %d children (bound %d); after: %d running, %d waiting", peak, bound, children.running, children.waiting)
	}
}

// TestChildBusy: a caller that finds every slot taken for longer than
// ChildWait gets ErrBusy, and one whose context ends while it waits gets
// the context's error; a slot given back is taken again.
func TestChildBusy(t *testing.T) {
	ctx := context.Background()
	one := Limits{MaxChildren: 1, ChildWait: time.Millisecond}
	release, err := AcquireChild(ctx, one)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	doc := filepath.Join(dir, "one.pdf")
	if err := os.WriteFile(doc, testdoc.OnePagePDF(), 0o600); err != nil {
		t.Fatal(err)
	}
	n, err := PagesIsolated(ctx, PDF, doc, one)
	if n != 0 || !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "busy inspecting other documents (1 at once)") {
		t.Errorf("all slots taken: %d, %v", n, err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := PagesIsolated(cctx, PDF, doc, Limits{MaxChildren: 1, ChildWait: time.Hour}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled while waiting: %v", err)
	}
	release()
	release() // harmless
	if n, err := PagesIsolated(ctx, PDF, doc, one); n != 1 || err != nil {
		t.Errorf("after the release: %d, %v", n, err)
	}
	if r, w := Children(); r != 0 || w != 0 {
		t.Errorf("after: %d running, %d waiting", r, w)
	}
}
