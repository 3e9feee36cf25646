package server

import (
	"net"
	"sync"
	"time"
)

// lazyDeadlines keeps a connection's read and write deadlines without
// changing the socket's on every request.
//
// Why: fasthttp sets up to three deadlines a keep-alive request (the idle
// wait, the request's read, the answer's write). On a socket each is a
// change of a runtime timer under the poller's lock. In CPU profiles of
// single-address calls at 20,000 requests/s, deadlines took 2.1% of
// lodge's CPU set on the socket and 0.7% set here; the handler's whole
// work was 10-11% (BenchmarkConnDeadlines, alone: 125 vs 76 ns a
// deadline).
//
// How: a deadline set in the future is only stored, and one timer per
// connection fires at the earliest stored deadline. When it fires, a
// deadline that has passed is put on the socket (as the time it was: in
// the past, so that a blocked or later Read or Write fails with
// os.ErrDeadlineExceeded, as it would have), and the timer is set for the
// next deadline, if any. From then on, that direction's deadlines go to
// the socket directly: a connection whose deadline has passed is about to
// be closed, and the socket then holds exactly what was asked for. A
// deadline moved later (every request's) costs a lock and a store; one
// moved earlier than the timer (a request's read deadline after a longer
// idle one) resets the timer; on a busy connection the timer fires and is
// reset about once per shortest timeout. A deadline at or before now, or
// on a connection whose timer has stopped, goes to the socket at once, so
// that "fail now" keeps its meaning.
//
// A deadline is therefore enforced when it passes, give or take the
// timer's latency: never before it.
type lazyDeadlines struct {
	mu     sync.Mutex
	socket net.Conn
	// the stored deadlines (Unix nanoseconds; 0 none), each unless its
	// direction is direct
	read, write int64
	// directions whose deadlines go to the socket as they are set
	directRead, directWrite bool
	armed                   int64 // when the timer fires (Unix ns); 0 not set
	timer                   *time.Timer
	stopped                 bool
}

// SetReadDeadline and SetWriteDeadline are net.Conn's.
func (l *lazyDeadlines) SetReadDeadline(t time.Time) error {
	return l.set(t, &l.read, &l.directRead, l.socket.SetReadDeadline)
}

func (l *lazyDeadlines) SetWriteDeadline(t time.Time) error {
	return l.set(t, &l.write, &l.directWrite, l.socket.SetWriteDeadline)
}

func (l *lazyDeadlines) SetDeadline(t time.Time) error {
	if err := l.SetReadDeadline(t); err != nil {
		return err
	}
	return l.SetWriteDeadline(t)
}

func (l *lazyDeadlines) set(t time.Time, stored *int64, direct *bool, apply func(time.Time) error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if *direct || l.stopped {
		return apply(t)
	}
	if t.IsZero() {
		*stored = 0 // the timer, if set, finds nothing to do
		return nil
	}
	d := t.UnixNano()
	if d <= time.Now().UnixNano() {
		*stored = 0
		*direct = true
		return apply(t)
	}
	*stored = d
	if l.armed == 0 || d < l.armed {
		l.arm(d)
	}
	return nil
}

// arm sets the timer to fire at d; l.mu is held.
func (l *lazyDeadlines) arm(d int64) {
	l.armed = d
	wait := time.Until(time.Unix(0, d))
	if l.timer == nil {
		l.timer = time.AfterFunc(wait, l.fire)
	} else {
		l.timer.Reset(wait)
	}
}

// fire puts the deadlines that have passed on the socket and sets the
// timer for the next.
func (l *lazyDeadlines) fire() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.armed = 0
	if l.stopped {
		return
	}
	now := time.Now().UnixNano()
	if l.read != 0 && l.read <= now {
		l.socket.SetReadDeadline(time.Unix(0, l.read))
		l.read, l.directRead = 0, true
	}
	if l.write != 0 && l.write <= now {
		l.socket.SetWriteDeadline(time.Unix(0, l.write))
		l.write, l.directWrite = 0, true
	}
	next := l.read
	if l.write != 0 && (next == 0 || l.write < next) {
		next = l.write
	}
	if next != 0 {
		l.arm(next)
	}
}

// stop ends the timer: the connection is closing, and what it does to its
// socket from now on (a lingering drain, say) is not to be cut short by a
// deadline stored before.
func (l *lazyDeadlines) stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stopped = true
	l.armed = 0
	if l.timer != nil {
		l.timer.Stop()
	}
}
