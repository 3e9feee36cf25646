package server

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"
)

// scriptedListener is a net.Listener whose Accept returns, in turn, the
// errors and connections of its script, then net.ErrClosed. It stands in
// for the kernel's accept queue, whose EMFILE cannot be had on demand.
type scriptedListener struct {
	mu     sync.Mutex
	script []any // error or net.Conn
}

func (l *scriptedListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.script) == 0 {
		return nil, net.ErrClosed
	}
	step := l.script[0]
	l.script = l.script[1:]
	if c, ok := step.(net.Conn); ok {
		return c, nil
	}
	return nil, step.(error)
}

func (l *scriptedListener) Close() error   { return nil }
func (l *scriptedListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }

func acceptErr(errno syscall.Errno) error {
	return &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", errno)}
}

func testLimits(max, perIP int) *connLimits {
	return newConnLimits(max, perIP, metrics.NewSet(), slog.New(slog.DiscardHandler))
}

// TestAcceptRetries: running out of descriptors, buffers or memory, or a
// client giving up before its connection is accepted, is waited out with
// net/http's backoff (5 ms doubling to 1 s, from 5 ms again after a
// success) instead of ending Serve; any other error ends it.
func TestAcceptRetries(t *testing.T) {
	c1, c2 := net.Pipe()
	defer c1.Close()
	defer c2.Close()
	var script []any
	for range 9 {
		script = append(script, acceptErr(syscall.EMFILE))
	}
	script = append(script, acceptErr(syscall.ENFILE), c1,
		acceptErr(syscall.ENOBUFS), acceptErr(syscall.ECONNABORTED), acceptErr(syscall.ENOMEM), c2,
		acceptErr(syscall.EINVAL))
	lim := testLimits(10, 10)
	l := newLimitListener(&scriptedListener{script: script}, lim)
	var waits []time.Duration
	l.wait = func(d time.Duration) bool { waits = append(waits, d); return true }

	ms := time.Millisecond
	f := func(wantWaits []time.Duration) {
		t.Helper()
		waits = nil
		c, err := l.Accept()
		if err != nil {
			t.Fatalf("Accept: %v", err)
		}
		c.Close()
		if !slices.Equal(waits, wantWaits) {
			t.Errorf("waits %v, want %v", waits, wantWaits)
		}
	}
	f([]time.Duration{5 * ms, 10 * ms, 20 * ms, 40 * ms, 80 * ms, 160 * ms, 320 * ms, 640 * ms, time.Second, time.Second})
	f([]time.Duration{5 * ms, 10 * ms, 20 * ms})
	if _, err := l.Accept(); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("a permanent error: got %v", err)
	}
	if n := lim.acceptRetries.Get(); n != 13 {
		t.Errorf("accept retries counted: %d, want 13", n)
	}
}

// erringListener fails every Accept with EMFILE until it is closed.
type erringListener struct {
	scriptedListener
	tried  chan struct{}
	closed chan struct{}
}

func (l *erringListener) Accept() (net.Conn, error) {
	select {
	case <-l.closed:
		return nil, net.ErrClosed
	case l.tried <- struct{}{}:
	default:
	}
	return nil, acceptErr(syscall.EMFILE)
}

func (l *erringListener) Close() error { close(l.closed); return nil }

// TestAcceptBackoffEndsOnClose: closing the listener ends a backoff at
// once, so shutdown is not held up by it.
func TestAcceptBackoffEndsOnClose(t *testing.T) {
	el := &erringListener{tried: make(chan struct{}), closed: make(chan struct{})}
	l := newLimitListener(el, testLimits(10, 10))
	done := make(chan error)
	go func() { _, err := l.Accept(); done <- err }()
	<-el.tried
	l.Close()
	if err := <-done; !errors.Is(err, net.ErrClosed) {
		t.Errorf("Accept after Close: %v", err)
	}
}

// TestConnLimits: connections past the limit of both listeners together,
// or past the limit per client address, are accepted and closed at once
// and counted; closing one makes room for the next.
func TestConnLimits(t *testing.T) {
	lim := testLimits(3, 2)
	listen := func() (*limitListener, chan net.Conn) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		l := newLimitListener(ln, lim)
		t.Cleanup(func() { l.Close() })
		accepted := make(chan net.Conn, 10)
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				accepted <- c
			}
		}()
		return l, accepted
	}
	l1, accepted1 := listen()
	l2, accepted2 := listen()
	dial := func(l net.Listener, from string) net.Conn {
		t.Helper()
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
		c, err := d.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	// refused reports whether the server closed c without a word.
	refused := func(c net.Conn) bool {
		n, err := c.Read(make([]byte, 1))
		return n == 0 && err != nil
	}
	a := dial(l1, "127.0.0.1")
	srvA := <-accepted1
	dial(l2, "127.0.0.1")
	<-accepted2
	if c := dial(l1, "127.0.0.1"); !refused(c) {
		t.Error("a third connection from one address was not refused")
	}
	if n := lim.shedPerIP.Get(); n != 1 {
		t.Errorf("shed per address: %d", n)
	}
	dial(l2, "127.0.0.2") // another client: the third connection in all
	<-accepted2
	if c := dial(l1, "127.0.0.3"); !refused(c) {
		t.Error("a fourth connection in all was not refused")
	}
	if n := lim.shedAll.Get(); n != 1 {
		t.Errorf("shed for the limit in all: %d", n)
	}
	// closing one (as the server does) makes room
	srvA.Close()
	if !refused(a) {
		t.Error("closed connection still open")
	}
	dial(l1, "127.0.0.3")
	c := <-accepted1
	if _, err := c.Write([]byte("x")); err != nil {
		t.Errorf("accepted after room was made: %v", err)
	}
	lim.mu.Lock()
	defer lim.mu.Unlock()
	if lim.open != 3 || len(lim.byIP) != 3 {
		t.Errorf("open %d, by address %v", lim.open, lim.byIP)
	}
}

// TestLingerOnClose: a server that answers before reading a request's
// body and closes makes the kernel reset the connection, which can
// destroy the answer before a client that sends its whole body first
// (Python's requests, curl without Expect) reads it. A connection asked to
// linger drains the body instead, over TLS as over plain TCP, and the
// client reads the answer.
func TestLingerOnClose(t *testing.T) {
	tlsConf, _, _, err := loadTLS("", "", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	const answer = "HTTP/1.1 413 Request Entity Too Large\r\nContent-Length: 9\r\nConnection: close\r\n\r\ntoo large"
	body := make([]byte, 40<<20) // more than the socket buffers can hold (tcp_rmem and tcp_wmem at most), less than lingerBytes
	f := func(useTLS, linger bool) error {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		l := newLimitListener(ln, testLimits(10, 10))
		defer l.Close()
		go func() {
			c, err := l.Accept()
			if err != nil {
				return
			}
			var rw net.Conn = c
			if useTLS {
				rw = tls.Server(c, tlsConf)
			}
			// the request line and headers, not the body
			if _, err := bufio.NewReader(rw).ReadString('\n'); err != nil {
				rw.Close()
				return
			}
			io.WriteString(rw, answer)
			if linger {
				c.(*conn).lingerOnClose()
			}
			rw.Close()
		}()
		var c net.Conn
		if c, err = net.Dial("tcp", ln.Addr().String()); err != nil {
			t.Fatal(err)
		}
		if useTLS {
			c = tls.Client(c, &tls.Config{InsecureSkipVerify: true})
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(time.Minute))
		fmt.Fprintf(c, "PUT /x HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", len(body))
		if _, err := c.Write(body); err != nil {
			return fmt.Errorf("sending the body: %w", err)
		}
		got, err := io.ReadAll(c)
		if string(got) != answer {
			return fmt.Errorf("read %q, %v", got, err)
		}
		return nil
	}
	for _, useTLS := range []bool{false, true} {
		if err := f(useTLS, true); err != nil {
			t.Errorf("TLS %v, lingering: %v", useTLS, err)
		}
		// what it fixes: without it the answer is lost
		if err := f(useTLS, false); err == nil {
			t.Errorf("TLS %v, not lingering: the answer arrived; the test shows nothing", useTLS)
		}
	}
}
