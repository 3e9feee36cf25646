package inspect

import (
	"context"
	"runtime"
	"sync"
	"time"
)

// The processes this package starts (PagesIsolated's children and
// Ghostscript) each cost up to Limits.MaxMemory, so a burst of uploads
// must not start one per request: every process holds a slot of one
// process-wide pool while it runs. A caller past Limits.MaxChildren waits
// up to Limits.ChildWait (or until its context is done) and then gets
// ErrBusy, which a server answers with 503 and Retry-After.

type childPool struct {
	mu       sync.Mutex
	running  int           // slots held
	waiting  int           // callers waiting for one
	released chan struct{} // closed (and replaced) when a slot is released
	// observe, when set (by tests), is told every change, with mu held.
	observe func(running, waiting int)
}

var children = &childPool{released: make(chan struct{})}

// AcquireChild takes one of the process-wide slots for a process started
// to inspect a document, waiting while lim.MaxChildren are held (by any
// caller, whatever its own limit) for at most lim.ChildWait and while ctx
// is not done. The package's own processes take one each; a caller that
// starts a heavy process of its own can share the bound through it.
// release gives the slot back; calling it more than once is harmless.
//
// After lim.ChildWait the error matches ErrBusy; when ctx is done first
// it is ctx.Err().
func AcquireChild(ctx context.Context, lim Limits) (release func(), err error) {
	lim = lim.WithDefaults()
	p := children
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	waiting := false
	p.mu.Lock()
	defer func() {
		if waiting {
			p.waiting--
			p.changed()
		}
		p.mu.Unlock()
	}()
	for {
		if p.running < lim.MaxChildren {
			p.running++
			if waiting {
				waiting = false
				p.waiting--
			}
			p.changed()
			var once sync.Once
			return func() { once.Do(p.release) }, nil
		}
		if !waiting {
			waiting = true
			p.waiting++
			p.changed()
		}
		released := p.released
		p.mu.Unlock()
		if timer == nil {
			timer = time.NewTimer(lim.ChildWait)
		}
		var err error
		select {
		case <-released:
		case <-ctx.Done():
			err = ctx.Err()
		case <-timer.C:
			err = newErr([]error{ErrBusy}, "the server is busy inspecting other documents (%d at once) and none finished within %v: retry later",
				lim.MaxChildren, lim.ChildWait)
		}
		p.mu.Lock()
		if err != nil {
			return nil, err
		}
	}
}

func (p *childPool) release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.running--
	close(p.released)
	p.released = make(chan struct{})
	p.changed()
}

func (p *childPool) changed() {
	if p.observe != nil {
		p.observe(p.running, p.waiting)
	}
}

// Children tells how many inspection processes are running now and how
// many callers wait for a slot (for metrics).
func Children() (running, waiting int) {
	children.mu.Lock()
	defer children.mu.Unlock()
	return children.running, children.waiting
}

// defaultMaxChildren: one process per CPU the Go runtime uses; counting
// pages is CPU-bound.
func defaultMaxChildren() int { return max(1, runtime.GOMAXPROCS(0)) }
