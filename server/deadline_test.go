package server

import (
	"errors"
	"net"
	"os"
	"testing"
	"time"

	"github.com/lodge-mail/lodge/internal/testenv"
)

// tcpPair is a connected loopback pair: ours with lazy deadlines, and the
// peer's plain socket. The peer closes after a guard time, so that a
// deadline that never fires ends the test with EOF instead of a hang.
func tcpPair(t testing.TB) (*lazyDeadlines, net.Conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	ours, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	peer := <-accepted
	if peer == nil {
		t.Fatal("accept failed")
	}
	guard := time.AfterFunc(10*time.Second, func() { peer.Close() })
	t.Cleanup(func() { guard.Stop(); ours.Close(); peer.Close() })
	return &lazyDeadlines{socket: ours}, ours, peer
}

func TestLazyDeadlines(t *testing.T) {
	const soon = 50 * time.Millisecond
	// f runs steps on a fresh pair, then a Read from the peer's "x": it
	// must fail with the deadline error not before failAfter when
	// wantTimeout, else read the "x".
	f := func(name string, steps func(l *lazyDeadlines), wantTimeout bool, failAfter time.Duration) {
		t.Helper()
		l, ours, peer := tcpPair(t)
		start := time.Now()
		steps(l)
		if !wantTimeout {
			// past every deadline the steps stored, and every fire of
			// the timer due by then run: then the byte
			settled(t, l, start.Add(soon/5))
			if _, err := peer.Write([]byte("x")); err != nil {
				t.Fatalf("%s: peer write: %v", name, err)
			}
		}
		buf := make([]byte, 1)
		_, err := ours.Read(buf)
		took := time.Since(start)
		if wantTimeout {
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("%s: read: %v, want the deadline error", name, err)
			}
			if took < failAfter {
				t.Fatalf("%s: read failed after %v, before its deadline (%v)", name, took, failAfter)
			}
			return
		}
		if err != nil || buf[0] != 'x' {
			t.Fatalf("%s: read %q, %v; want x", name, buf, err)
		}
	}
	f("past deadline fails at once", func(l *lazyDeadlines) {
		l.SetReadDeadline(time.Now().Add(-time.Second))
	}, true, 0)
	f("deadline fails when it passes, not before", func(l *lazyDeadlines) {
		l.SetReadDeadline(time.Now().Add(soon))
	}, true, soon)
	f("an earlier deadline replaces a later one", func(l *lazyDeadlines) {
		l.SetReadDeadline(time.Now().Add(time.Hour))
		l.SetReadDeadline(time.Now().Add(soon))
	}, true, soon)
	f("SetDeadline sets the read deadline", func(l *lazyDeadlines) {
		l.SetDeadline(time.Now().Add(soon))
	}, true, soon)
	f("a write deadline does not end reads", func(l *lazyDeadlines) {
		l.SetWriteDeadline(time.Now().Add(soon / 5))
	}, false, 0)
	f("a cleared deadline does not fire", func(l *lazyDeadlines) {
		l.SetReadDeadline(time.Now().Add(soon / 5))
		l.SetReadDeadline(time.Time{})
	}, false, 0)
	f("a later deadline replaces an earlier one", func(l *lazyDeadlines) {
		l.SetReadDeadline(time.Now().Add(soon / 5))
		l.SetReadDeadline(time.Now().Add(time.Hour))
	}, false, 0)
	f("a deadline after one that passed is the socket's", func(l *lazyDeadlines) {
		l.SetReadDeadline(time.Now().Add(-time.Second))
		l.SetReadDeadline(time.Now().Add(time.Hour))
	}, false, 0)
	f("a deadline that passed while no read waited fails the next", func(l *lazyDeadlines) {
		l.SetReadDeadline(time.Now().Add(soon / 5))
		// until the timer has put it on the socket
		testenv.WaitFor(t, func() bool { l.mu.Lock(); defer l.mu.Unlock(); return l.directRead },
			func() string { return "the passed deadline on the socket" })
	}, true, soon/5)
	f("a stopped connection's stored deadline leaves the socket alone", func(l *lazyDeadlines) {
		l.SetReadDeadline(time.Now().Add(soon / 5))
		l.stop()
	}, false, 0)
	f("a stopped connection's deadlines go to the socket", func(l *lazyDeadlines) {
		l.stop()
		l.SetReadDeadline(time.Now().Add(soon))
	}, true, soon)
}

// settled waits until the clock is past at and no fire of l's timer due
// by now is still to run.
func settled(t *testing.T, l *lazyDeadlines, at time.Time) {
	t.Helper()
	testenv.WaitFor(t, func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		now := time.Now()
		return now.After(at) && (l.armed == 0 || l.armed > now.UnixNano())
	}, func() string { return "the timer's fires due by now" })
}

// A blocked write fails at its deadline too: the peer never reads, so the
// socket's buffers fill.
func TestLazyWriteDeadline(t *testing.T) {
	const soon = 50 * time.Millisecond
	l, ours, _ := tcpPair(t)
	start := time.Now()
	l.SetReadDeadline(time.Now().Add(time.Hour))
	l.SetWriteDeadline(time.Now().Add(soon))
	chunk := make([]byte, 1<<20)
	var err error
	for err == nil {
		_, err = ours.Write(chunk)
	}
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("write: %v, want the deadline error", err)
	}
	if took := time.Since(start); took < soon {
		t.Fatalf("write failed after %v, before its deadline (%v)", took, soon)
	}
	// the read deadline is still the stored one, not the socket's
	if l.directRead || l.read == 0 {
		t.Fatalf("read deadline: direct %v, stored %d; want it still stored", l.directRead, l.read)
	}
}

// BenchmarkConnDeadlines sets a keep-alive request's three deadlines as
// fasthttp does (idle, read, write), on the socket and lazily.
func BenchmarkConnDeadlines(b *testing.B) {
	l, ours, _ := tcpPair(b)
	run := func(b *testing.B, c interface {
		SetReadDeadline(time.Time) error
		SetWriteDeadline(time.Time) error
	}) {
		for b.Loop() {
			c.SetReadDeadline(time.Now().Add(120 * time.Second))
			c.SetReadDeadline(time.Now().Add(30 * time.Second))
			c.SetWriteDeadline(time.Now().Add(60 * time.Second))
		}
	}
	b.Run("socket", func(b *testing.B) { run(b, ours) })
	b.Run("lazy", func(b *testing.B) { run(b, l) })
}
