package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lodge-mail/lodge/internal/testenv"
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
	testenv.WaitFor(t, func() bool { return strings.Contains(in.logs(), "too many open files") || !running(pid) },
		func() string {
			lim, _ := os.ReadFile(fmt.Sprintf("/proc/%d/limits", pid))
			return fmt.Sprintf("accept to fail (%d descriptors open, limit set %d):\n%s\n%s", fdCount(t, pid), limit, lim, in.logs())
		})
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
	testenv.WaitFor(t, func() bool { return fdCount(t, pid) <= before }, func() string { return "the server to close the connections" })
	if code, body := in.rpc(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":"Jo, 10 Jones St, Melbourne VIC 3000"}}`); code != 200 || !strings.Contains(body, `"status":"matched"`) {
		t.Fatalf("after the connections closed: %d %s", code, body)
	}
	if n := in.metric(t, `lodge_http_connections_shed_total{reason="max_conns"}`); n < 30 {
		t.Errorf("connections shed: %v, want at least 30", n)
	}
}

// refusedUpload is a session, and files over the limits of TestRefused*:
// one over -max-upload-bytes 1 MiB for PUT, one over the 20 MiB of a
// multipart request.
type refusedUpload struct {
	in              *instance
	epid            string
	putFile, mpFile string
	putMsg, mpMsg   string
}

func newRefusedUpload(t *testing.T) *refusedUpload {
	in := start(t, "-max-upload-bytes", "1048576")
	code, epid := in.curl("-H", "Authorization: Bearer "+in.key, in.url+"/publicinterface/get_session_id.text?account=DEM00001")
	if epid = strings.TrimSpace(epid); code != 200 || epid == "" {
		t.Fatalf("get_session_id: %d %q", code, epid)
	}
	dir := t.TempDir()
	file := func(name string, size int) string {
		b := make([]byte, size)
		copy(b, "%PDF-1.4\n")
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	return &refusedUpload{in: in, epid: epid,
		putFile: file("big.pdf", 8<<20), mpFile: file("huge.pdf", 24<<20),
		putMsg: "big.pdf is larger than 1048576 bytes",
		mpMsg:  "multipart uploads are limited to 20971520 bytes in all"}
}

// curl runs curl with args and returns the status and body, or the
// error that ended it (a reset connection, say).
func (r *refusedUpload) curl(args ...string) (int, string, error) {
	full := append([]string{"-sS", "--cacert", r.in.cert, "-H", "Authorization: Bearer " + r.in.key, "-o", "-", "-w", "\n%{http_code}"}, args...)
	out, err := exec.Command("curl", full...).CombinedOutput()
	s := strings.TrimRight(string(out), "\n")
	i := strings.LastIndexByte(s, '\n')
	code, _ := strconv.Atoi(s[i+1:])
	if err != nil {
		return code, s, err
	}
	return code, s[:max(i, 0)], nil
}

// TestRefusedUploadCurl: a PUT over -max-upload-bytes and a multipart
// request over 20 MiB, sent over HTTPS by curl without waiting for
// 100 Continue (Expect: turned off), get their 413 and its message every
// time: the server drains the body it refused before it closes, instead
// of resetting the connection under the answer. With Expect: 100-continue
// the 413 comes before the body, with the same message.
//
// One node only, as the other tests of this file: how one server
// answers and closes a connection; behind a balancer that would test
// the balancer's relay as much as lodge.
func TestRefusedUploadCurl(t *testing.T) {
	r := newRefusedUpload(t)
	put := r.in.url + "/direct_upload/" + r.epid + "/big.pdf"
	mp := r.in.url + "/publicinterface/mpf_upload?account=DEM00001"
	f := func(name, msg string, args ...string) {
		t.Helper()
		failed := 0
		for i := range 20 {
			code, body, err := r.curl(args...)
			if code != 413 || !strings.Contains(body, msg) || err != nil {
				failed++
				t.Errorf("%s, run %d: %d %q %v", name, i, code, body, err)
			}
		}
		if failed > 0 {
			t.Errorf("%s: %d of 20 runs without the 413 and its message", name, failed)
		}
	}
	f("PUT without Expect", r.putMsg, "-H", "Expect:", "-T", r.putFile, put)
	f("multipart without Expect", r.mpMsg, "-H", "Expect:", "-F", "file=@"+r.mpFile, mp)
	f("PUT with Expect", r.putMsg, "-H", "Expect: 100-continue", "-T", r.putFile, put)
	f("multipart with Expect", r.mpMsg, "-H", "Expect: 100-continue", "-F", "file=@"+r.mpFile, mp)
}

// TestRefusedUploadPythonRequests: the same with Python's requests, which
// sends the whole body before it reads the answer.
func TestRefusedUploadPythonRequests(t *testing.T) {
	r := newRefusedUpload(t)
	script := `
import sys, requests
url, key, epid, put_file, mp_file, put_msg, mp_msg = sys.argv[1:8]
auth = {"Authorization": "Bearer " + key}
put_body = open(put_file, "rb").read()
mp_body = open(mp_file, "rb").read()
failed = 0
for name, send, msg in [
    ("PUT", lambda: requests.put(url + "/direct_upload/" + epid + "/big.pdf", data=put_body, headers=auth), put_msg),
    ("multipart", lambda: requests.post(url + "/publicinterface/mpf_upload", params={"account": "DEM00001"},
                                        files={"file": ("huge.pdf", mp_body, "application/pdf")}, headers=auth), mp_msg),
]:
    for i in range(20):
        try:
            r = send()
            ok = r.status_code == 413 and msg in r.text
            got = (r.status_code, r.text[:200])
        except Exception as e:
            ok, got = False, repr(e)
        if not ok:
            failed += 1
            print(name, "run", i, got)
print("FAILED", failed)
`
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "python3", "-c", script, r.in.url, r.in.key, r.epid, r.putFile, r.mpFile, r.putMsg, r.mpMsg)
	cmd.Env = append(os.Environ(), "REQUESTS_CA_BUNDLE="+r.in.cert)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "FAILED 0\n") {
		t.Errorf("python: %v\n%s", err, out)
	}
}
