package e2e

import (
	"fmt"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// fdCount is how many descriptors process pid has open.
func fdCount(t *testing.T, pid int) int {
	t.Helper()
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return -1 // gone
	}
	return len(ents)
}

// running reports whether process pid is alive (not gone, not a zombie).
func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// pid (comm) state ...: comm may hold spaces and parentheses
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z'
}

// waitFor polls cond until it holds, failing the test after a minute.
func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// metric reads one sample of the server's /metrics.
func (in *instance) metric(t *testing.T, name string) float64 {
	t.Helper()
	code, body := in.curl(in.url + "/metrics")
	if code != 200 {
		t.Fatalf("/metrics: %d", code)
	}
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` (\S+)$`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no %s in /metrics", name)
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}

// TestOpenFileLimit: when the server runs out of descriptors (its open
// file limit lowered under it, then more idle connections than it can
// hold), accept fails with EMFILE; the server waits that out instead of
// exiting, and answers again once the connections are gone.
func TestOpenFileLimit(t *testing.T) {
	in := start(t)
	pid := in.cmd.Process.Pid
	var old unix.Rlimit
	if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, nil, &old); err != nil {
		t.Fatal(err)
	}
	if old.Cur != old.Max {
		t.Errorf("soft open file limit %d, hard %d: the soft one should have been raised", old.Cur, old.Max)
	}
	limit := uint64(fdCount(t, pid) + 30)
	if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: limit, Max: old.Max}, nil); err != nil {
		t.Fatal(err)
	}
	host := strings.TrimPrefix(in.url, "https://")
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range 100 {
		c, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	// the server takes connections until its descriptors are all in use
	// and accept fails (before the fix it exited there)
	waitFor(t, func() bool { return strings.Contains(in.logs(), "too many open files") || !running(pid) }, "accept to fail")
	if !running(pid) {
		t.Fatalf("the server exited:\n%s", in.logs())
	}
	for _, c := range conns {
		c.Close()
	}
	conns = nil
	if code, body := in.rpc(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":"Jo, 10 Jones St, Melbourne VIC 3000"}}`); code != 200 || !strings.Contains(body, `"status":"matched"`) {
		t.Fatalf("after the connections closed: %d %s\n%s", code, body, in.logs())
	}
	if n := in.metric(t, "lodge_http_accept_retries_total"); n == 0 {
		t.Errorf("no accept retries counted:\n%s", in.logs())
	}
}

// TestMaxConns: connections past -max-conns are closed at once and
// counted; once they are gone the server answers as before.
func TestMaxConns(t *testing.T) {
	in := start(t, "-max-conns", "20")
	host := strings.TrimPrefix(in.url, "https://")
	pid := in.cmd.Process.Pid
	before := fdCount(t, pid)
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	closed := make(chan error, 50)
	for range 50 {
		c, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		go func() {
			// the server says nothing first (TLS): a read ends when it closes
			_, err := c.Read(make([]byte, 1))
			closed <- err
		}()
	}
	timeout := time.After(time.Minute)
	for range 30 {
		select {
		case <-closed: // we closed none: the server did
		case <-timeout:
			t.Fatalf("fewer than 30 of 50 connections were refused with -max-conns 20")
		}
	}
	for _, c := range conns {
		c.Close()
	}
	conns = nil
	// the server closes its side as it reads the end of each
	waitFor(t, func() bool { return fdCount(t, pid) <= before }, "the server to close the connections")
	if code, body := in.rpc(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":"Jo, 10 Jones St, Melbourne VIC 3000"}}`); code != 200 || !strings.Contains(body, `"status":"matched"`) {
		t.Fatalf("after the connections closed: %d %s", code, body)
	}
	if n := in.metric(t, `lodge_http_connections_shed_total{reason="max_conns"}`); n < 30 {
		t.Errorf("connections shed: %v, want at least 30", n)
	}
}
