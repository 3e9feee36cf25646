package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lodge-mail/lodge/internal/testpg"
	"github.com/lodge-mail/lodge/internal/testref"
	"github.com/lodge-mail/lodge/internal/tests3"
)

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "lodge-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "lodge")
	root, err := testref.RepoRoot()
	if err == nil {
		// -trimpath: the compiled packages do not depend on where the
		// source is, so TestREADMECommands' go run, in a temporary tree
		// of links to the source, finds them in the build cache.
		cmd := exec.Command("go", "build", "-trimpath", "-o", binary, "./cmd/lodge")
		cmd.Dir = root
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		err = cmd.Run()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "building lodge:", err)
		os.Exit(1)
	}
	code := m.Run()
	testpg.Stop() // the cluster tests' PostgreSQL and object store
	tests3.Stop()
	os.RemoveAll(dir)
	os.Exit(code)
}

// instance is a running lodge serve.
type instance struct {
	*proc
	t        *testing.T
	dataDir  string
	url      string   // https://127.0.0.1:PORT
	plainURL string   // http://127.0.0.1:PORT, when started with -plain-addr
	key      string   // the demo API key
	cert     string   // the self-signed certificate
	dbURL    string   // the database a node of several shares (-db)
	cluster  *cluster // the nodes behind url, when it is a balancer's (startShared)
}

// lodge runs a lodge command to completion and returns its output.
func lodge(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = sharedDir(t)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// sharedDir is a working directory from which ../shared/data is the
// reference (the repository root).
func sharedDir(t *testing.T) string {
	root, err := testref.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// start runs `lodge serve -demo` with extra flags and waits until ready.
func start(t *testing.T, extra ...string) *instance {
	t.Helper()
	return startWithUsers(t, nil, extra...)
}

// startWithUsers adds the demo account and the given users (name →
// password) before starting the server: the account store belongs to one
// process at a time.
func startWithUsers(t *testing.T, users map[string]string, extra ...string) *instance {
	t.Helper()
	return startWithDirUsers(t, t.TempDir(), users, extra...)
}

// startWithDir starts lodge serve -demo on an existing data directory.
func startWithDir(t *testing.T, dataDir string, extra ...string) *instance {
	t.Helper()
	return startWithDirUsers(t, dataDir, nil, extra...)
}

// servingRE matches the line lodge serve logs once its listeners serve,
// with the addresses they are bound to: a server started on port 0 (the
// kernel picks a port nobody holds) tells us there where it is.
var servingRE = regexp.MustCompile(`msg=serving https=(\S+) plain=(\S+)`)

var keyRE = regexp.MustCompile(`Bearer (lk_[A-Za-z0-9_\-]+)`)

// startWithDirUsers starts lodge serve -demo with both listeners on port 0
// (callers ask for a plain listener with "-plain-addr", "127.0.0.1:0") and
// reads the addresses it got from its "serving" log line. Picking a "free"
// port by listening and closing races with every other socket on the
// machine; port 0 cannot. If the process exits before it serves, the test
// fails at once with its last log lines.
func startWithDirUsers(t *testing.T, dataDir string, users map[string]string, extra ...string) *instance {
	t.Helper()
	in := &instance{t: t, dataDir: dataDir, cert: filepath.Join(dataDir, "tls", "cert.pem")}
	if len(users) > 0 {
		if out, err := lodge(t, "", "account", "add", "-data-dir", in.dataDir, "-name", "Demo account", "DEM00001"); err != nil {
			t.Fatalf("account add: %v\n%s", err, out)
		}
		for name, pw := range users {
			if out, err := lodge(t, pw+"\n", "user", "add", "-data-dir", in.dataDir, "-account", "DEM00001", "-password-stdin", name); err != nil {
				t.Fatalf("user add: %v\n%s", err, out)
			}
		}
	}
	args := []string{"serve", "-demo", "-quiet", "-data-dir", in.dataDir, "-addr", "127.0.0.1:0"}
	cmd := exec.Command(binary, append(args, extra...)...)
	cmd.Dir = sharedDir(t)
	p, err := launch(t, cmd, func(line string) bool {
		if m := keyRE.FindStringSubmatch(line); m != nil {
			in.key = m[1]
		}
		m := servingRE.FindStringSubmatch(line)
		if m == nil {
			return false
		}
		in.url = "https://" + m[1]
		if m[2] != `""` {
			in.plainURL = "http://" + m[2]
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	in.proc = p
	if in.key == "" {
		t.Fatalf("no demo key printed:\n%s", in.logs())
	}
	return in
}

// proc is a started process whose output (stdout and stderr) is kept.
type proc struct {
	cmd     *exec.Cmd
	group   bool          // cmd runs in its own process group: signals go to the group
	exited  chan struct{} // closed when the process has exited and its output is read
	waitErr error         // cmd.Wait's answer, set before exited closes
	mu      sync.Mutex
	out     bytes.Buffer
}

// launch starts cmd, calls ready with each line of its output (until it
// returns true) and returns once ready is true. It returns an error with
// the last lines of output as soon as the process exits without being
// ready, and after 2 minutes if it neither exits nor gets ready. A
// cleanup of t kills what is left (its process group with Setpgid).
func launch(t *testing.T, cmd *exec.Cmd, ready func(line string) bool) (*proc, error) {
	p := &proc{cmd: cmd, exited: make(chan struct{})}
	p.group = cmd.SysProcAttr != nil && cmd.SysProcAttr.Setpgid
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	readDone := make(chan struct{})
	// Wait in the background and close the pipe when the process exits, so
	// the reader sees the end of the output instead of waiting for a line
	// that will never come.
	go func() {
		p.waitErr = cmd.Wait()
		pw.Close()
		<-readDone
		close(p.exited)
	}()
	t.Cleanup(func() { p.stop(syscall.SIGKILL) })
	isReady := make(chan struct{})
	go func() {
		defer close(readDone)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		waiting := true
		for sc.Scan() {
			p.mu.Lock()
			p.out.WriteString(sc.Text() + "\n")
			if waiting && ready(sc.Text()) {
				waiting = false
				close(isReady)
			}
			p.mu.Unlock()
		}
		io.Copy(io.Discard, pr) // a line over 1 MiB must not block the process
	}()
	select {
	case <-isReady:
		return p, nil
	case <-p.exited:
		select {
		case <-isReady: // ready, then gone: the caller will notice
			return p, nil
		default:
		}
		return nil, fmt.Errorf("%s exited before it was ready (%v); its last lines:\n%s", strings.Join(cmd.Args, " "), p.waitErr, lastLines(p.logs(), 30))
	case <-time.After(2 * time.Minute):
		return nil, fmt.Errorf("%s not ready after 2 minutes; its last lines:\n%s", strings.Join(cmd.Args, " "), lastLines(p.logs(), 30))
	}
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.SplitAfter(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "")
}

// logs returns the process's output so far.
func (p *proc) logs() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// stop sends sig and waits for the process to exit (killing it after 40
// s); nil if it had exited already.
func (p *proc) stop(sig syscall.Signal) error {
	select {
	case <-p.exited:
		return nil
	default:
	}
	p.signal(sig)
	select {
	case <-p.exited:
		return p.waitErr
	case <-time.After(40 * time.Second):
		p.signal(syscall.SIGKILL)
		<-p.exited
		return fmt.Errorf("did not stop")
	}
}

func (p *proc) signal(sig syscall.Signal) {
	if p.group {
		syscall.Kill(-p.cmd.Process.Pid, sig)
		return
	}
	p.cmd.Process.Signal(sig)
}

// TestServeExitBeforeReady: a server that cannot start (its address is
// taken) is reported as soon as it exits, with the error it printed, not
// after a timeout.
func TestServeExitBeforeReady(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	cmd := exec.Command(binary, "serve", "-quiet", "-data-dir", t.TempDir(), "-addr", held.Addr().String())
	cmd.Dir = sharedDir(t)
	_, err = launch(t, cmd, servingRE.MatchString)
	if err == nil || !strings.Contains(err.Error(), "exited before it was ready (exit status 1)") || !strings.Contains(err.Error(), "address already in use") {
		t.Errorf("launch on a taken address: %v", err)
	}
}

// curl runs curl against the instance and returns status and body.
func (in *instance) curl(args ...string) (int, string) {
	in.t.Helper()
	full := append([]string{"-sS", "--cacert", in.cert, "-o", "-", "-w", "\n%{http_code}"}, args...)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "curl", full...).CombinedOutput()
	if err != nil {
		in.t.Fatalf("curl %q: %v\n%s", args, err, out)
	}
	s := strings.TrimRight(string(out), "\n")
	i := strings.LastIndexByte(s, '\n')
	code := 0
	fmt.Sscanf(s[i+1:], "%d", &code)
	if i < 0 {
		return code, ""
	}
	return code, s[:i]
}

func (in *instance) rpc(body string, hdr ...string) (int, string) {
	in.t.Helper()
	args := []string{in.url + "/apiv2/jsonrpc", "-H", "Content-Type: application/json", "--data-binary", body}
	if len(hdr) == 0 {
		hdr = []string{"Authorization: Bearer " + in.key}
	}
	for _, h := range hdr {
		args = append(args, "-H", h)
	}
	return in.curl(args...)
}

func TestCurlAddrCheck(t *testing.T) {
	in := start(t)
	f := func(body string, wantCode int, want ...string) {
		t.Helper()
		code, got := in.rpc(body)
		if code != wantCode {
			t.Errorf("%s: HTTP %d, want %d: %s", body, code, wantCode, got)
		}
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: response lacks %s:\n%s", body, w, got)
			}
		}
	}
	f(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":["Joe Blogs","10 Jones St","Melbourne VIC 3000"]}}`, 200,
		`{"jsonrpc":"2.0","id":1,"result":{"status":"matched","nation":"AUS","address":["Joe Blogs","10 Jones St","Melbourne VIC 3000"]}}`)
	f(`{"jsonrpc":"2.0","id":2,"method":"addr_check","params":{"addresses":[["Joe Blogs","10 Jones St","Smithville NSW 2987"],"Jo\n3/72 Charles St\nSt Kilda VIC 3182","10 Downing St, London SW1A 2AA, UK","a,b"]}}`, 200,
		`"status":"unmatched"`, `"address":"Jo\n3/72 Charles St\nSt Kilda VIC 3182"`, `"nation":"GBR"`, `"message":"an address needs 3 to 6 lines, this one has 2"`)
	f(`[{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":"a,b,c"}},{"jsonrpc":"2.0","method":"addr_check","params":{"address":"a,b,c"}},{"jsonrpc":"2.0","id":3,"method":"rpc.discover"}]`, 200,
		`[{"jsonrpc":"2.0","id":1,"result":`, `{"jsonrpc":"2.0","id":3,"result":{"openrpc"`)
	f(`{"jsonrpc":"2.0","method":"addr_check","params":{"address":"a,b,c"}}`, 204)
	f(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":[}`, 200, `"code":-32700`)
	f(`{"jsonrpc":"1.0","id":1,"method":"addr_check"}`, 200, `"code":-32600`)
	f(`{"jsonrpc":"2.0","id":1,"method":"addr_chek"}`, 200, `"code":-32601`)
	f(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{}}`, 200, `"code":-32602`)
	// text/json as documented clients send it; other types refused
	code, got := in.rpc(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":"a,b,c"}}`, "Authorization: Bearer "+in.key, "Content-Type: text/json")
	if code != 200 || !strings.Contains(got, `"status":"invalid"`) {
		t.Errorf("text/json: %d %s", code, got)
	}
	code, _ = in.rpc(`{}`, "Authorization: Bearer "+in.key, "Content-Type: text/plain")
	if code != 415 {
		t.Errorf("text/plain: %d, want 415", code)
	}
	// the public path serves the same method
	code, got = in.curl(in.url+"/publicinterface/jsonrpc", "-H", "Authorization: Bearer "+in.key, "-H", "Content-Type: application/json",
		"--data-binary", `{"jsonrpc":"2.0","id":9,"method":"addr_check","params":{"address":"Jo, PO Box 5, Sydney NSW 2001"}}`)
	if code != 200 || !strings.Contains(got, `"status":"matched"`) {
		t.Errorf("/publicinterface/jsonrpc: %d %s", code, got)
	}
	// health, readiness, metrics
	for path, want := range map[string]string{"/healthz": "ok", "/readyz": "ready", "/metrics": "lodge_addr_check_verdicts_total{status=\"matched\"}"} {
		if code, got := in.curl(in.url + path); code != 200 || !strings.Contains(got, want) {
			t.Errorf("%s: %d %s", path, code, got)
		}
	}
}

func TestAuthenticationFailures(t *testing.T) {
	in := startWithUsers(t, map[string]string{"alice": "correct horse battery"})
	body := `{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":"a,b,c"}}`
	f := func(wantCode int, hdr ...string) {
		t.Helper()
		args := []string{in.url + "/apiv2/jsonrpc", "-H", "Content-Type: application/json", "--data-binary", body, "-D", "-"}
		for _, h := range hdr {
			args = append(args, "-H", h)
		}
		code, got := in.curl(args...)
		if code != wantCode {
			t.Errorf("%q: HTTP %d, want %d\n%s", hdr, code, wantCode, got)
		}
		if wantCode == 401 && !strings.Contains(strings.ToLower(got), "www-authenticate: bearer") {
			t.Errorf("%q: 401 without a WWW-Authenticate challenge:\n%s", hdr, got)
		}
	}
	f(200, "Authorization: Bearer "+in.key)
	f(200, "Authorization: Basic "+basic("alice", "correct horse battery"))
	f(401)                                                     // no credentials
	f(401, "Authorization: Bearer lk_nope_nope")               // unknown key
	f(401, "Authorization: Bearer "+in.key+"x")                // wrong secret
	f(401, "Authorization: Basic "+basic("alice", "wrong"))    // wrong password
	f(401, "Authorization: Basic "+basic("mallory", "secret")) // unknown user
	f(401, "Authorization: Basic !!!")                         // not base64
	f(401, "Authorization: Negotiate abc")                     // unsupported scheme
	// credentials in the URL are refused
	code, _ := in.curl(in.url+"/apiv2/jsonrpc?api_key="+in.key, "-H", "Content-Type: application/json", "--data-binary", body)
	if code != 400 {
		t.Errorf("key in URL: %d, want 400", code)
	}
	// repeated failures are throttled
	throttled := false
	for i := 0; i < 15 && !throttled; i++ {
		code, _ := in.rpc(body, "Authorization: Basic "+basic("alice", fmt.Sprint("guess", i)))
		throttled = code == 429
	}
	if !throttled {
		t.Errorf("15 failures in a row were not throttled")
	}
}

func basic(user, pass string) string {
	return encodeBase64(user + ":" + pass)
}

// TestAuthFailuresPerUserAndClient: failed logins throttle the user or key
// they name from the client that sent them, not the client's other users
// and keys; behind a trusted proxy the client is the X-Forwarded-For one,
// and nobody else can choose theirs with it.
func TestAuthFailuresPerUserAndClient(t *testing.T) {
	const proxy = "127.0.0.2" // curl --interface: loopback sources other than 127.0.0.1 reach the server too
	in := startWithUsers(t, map[string]string{"alice": "correct horse battery", "bob": "battery staple"},
		"-plain-addr", "127.0.0.1:0", "-trusted-proxy", proxy+"/32")
	body := `{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":"a,b,c"}}`
	alice, bob := basic("alice", "correct horse battery"), basic("bob", "battery staple")
	// f sends from the proxy (to the plain listener, as a TLS-terminating
	// proxy would) when viaProxy is set, else straight to HTTPS from
	// 127.0.0.1, where X-Forwarded-For is forged.
	f := func(viaProxy bool, xff, authorization string, wantCode int) {
		t.Helper()
		args := []string{in.url + "/apiv2/jsonrpc"}
		if viaProxy {
			args = []string{"--interface", proxy, in.plainURL + "/apiv2/jsonrpc", "-H", "X-Forwarded-Proto: https"}
		}
		args = append(args, "-H", "Content-Type: application/json", "--data-binary", body, "-D", "-",
			"-H", "X-Forwarded-For: "+xff, "-H", "Authorization: "+authorization)
		code, got := in.curl(args...)
		if code != wantCode {
			t.Errorf("proxy %v, X-Forwarded-For %s, %.20s: HTTP %d, want %d\n%s", viaProxy, xff, authorization, code, wantCode, got)
		}
		if code == 429 && !strings.Contains(strings.ToLower(got), "retry-after:") {
			t.Errorf("429 without Retry-After:\n%s", got)
		}
	}
	for i := range 10 {
		f(true, "203.0.113.1", "Basic "+basic("alice", fmt.Sprint("guess", i)), 401)
	}
	f(true, "203.0.113.1", "Basic "+alice, 429)   // alice from that caller
	f(true, "203.0.113.2", "Basic "+alice, 200)   // not from the proxy's other callers
	f(true, "203.0.113.1", "Bearer "+in.key, 200) // nor that caller's valid key
	f(true, "203.0.113.1", "Basic "+bob, 200)     // nor its other users
	// A direct caller's forged X-Forwarded-For is not believed.
	for i := range 10 {
		f(false, fmt.Sprint("198.51.100.", i), "Basic "+basic("bob", fmt.Sprint("guess", i)), 401)
	}
	f(false, "198.51.100.99", "Basic "+bob, 429)
	f(false, "198.51.100.99", "Bearer "+in.key, 200)
	f(false, "198.51.100.99", "Basic "+alice, 200)
	f(true, "203.0.113.3", "Basic "+bob, 200)
}

func TestPlainListenerRefusesAddrCheck(t *testing.T) {
	in := start(t, "-plain-addr", "127.0.0.1:0", "-trusted-proxy", "10.0.0.0/8")
	plain := in.plainURL + "/apiv2/jsonrpc"
	body := `{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":"a,b,c"}}`
	code, got := in.curl(plain, "-H", "Authorization: Bearer "+in.key, "-H", "Content-Type: application/json", "--data-binary", body)
	if code != 403 || !strings.Contains(got, "must use HTTPS") {
		t.Errorf("plain listener: %d %s", code, got)
	}
	// loopback is not a trusted proxy here, so the forwarded header alone does not help
	code, _ = in.curl(plain, "-H", "X-Forwarded-Proto: https", "-H", "Authorization: Bearer "+in.key, "-H", "Content-Type: application/json", "--data-binary", body)
	if code != 403 {
		t.Errorf("untrusted X-Forwarded-Proto: %d", code)
	}
	in2 := start(t, "-plain-addr", "127.0.0.1:0", "-trusted-proxy", "127.0.0.0/8")
	code, got = in2.curl(in2.plainURL+"/apiv2/jsonrpc", "-H", "X-Forwarded-Proto: https", "-H", "Authorization: Bearer "+in2.key, "-H", "Content-Type: application/json", "--data-binary", body)
	if code != 200 || !strings.Contains(got, `"result"`) {
		t.Errorf("trusted proxy: %d %s", code, got)
	}
}

func TestLimitsAndGracefulShutdown(t *testing.T) {
	in := start(t, "-max-body-bytes", "100000", "-max-addresses", "5", "-shutdown-timeout", "3s")
	big := filepath.Join(t.TempDir(), "big.json")
	os.WriteFile(big, []byte(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":"`+strings.Repeat("x", 200000)+`"}}`), 0o644)
	if code, _ := in.rpc("@" + big); code != 413 {
		t.Errorf("large body: %d, want 413", code)
	}
	many := `{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"addresses":["a","b","c","d","e","f"]}}`
	if code, got := in.rpc(many); code != 200 || !strings.Contains(got, "-32602") {
		t.Errorf("too many addresses: %d %s", code, got)
	}
	deep := filepath.Join(t.TempDir(), "deep.json")
	os.WriteFile(deep, []byte(strings.Repeat("[", 10000)+strings.Repeat("]", 10000)), 0o644)
	if code, got := in.rpc("@" + deep); code != 200 || !strings.Contains(got, "-32700") {
		t.Errorf("deep nesting: %d %s", code, got)
	}
	// a slow client holding a connection open does not block others
	conn, err := tls.Dial("tcp", strings.TrimPrefix(in.url, "https://"), &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.Write([]byte("POST /apiv2/jsonrpc HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{"))
	if code, _ := in.rpc(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":"a,b,c"}}`); code != 200 {
		t.Errorf("while a slow client waits: %d", code)
	}
	// SIGTERM: the server stops cleanly
	if err := in.stop(syscall.SIGTERM); err != nil {
		t.Errorf("graceful stop: %v\n%s", err, in.logs())
	}
	if !strings.Contains(in.logs(), "stopped serving") {
		t.Errorf("no clean shutdown in the logs:\n%s", in.logs())
	}
}

func TestPythonRequests(t *testing.T) {
	in := startWithUsers(t, map[string]string{"bob": "correct horse battery"})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "python3", "testdata/client.py", in.url, in.cert, in.key, "bob", "correct horse battery")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python client: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "ALL OK") {
		t.Errorf("python client:\n%s", out)
	}
}

// rawHTTPS sends raw bytes on a TLS connection and returns the first
// response line (or the error that ended the read).
func rawHTTPS(t *testing.T, in *instance, req string) string {
	t.Helper()
	conn, err := tls.Dial("tcp", strings.TrimPrefix(in.url, "https://"), &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(20 * time.Second))
	// write while reading: a server may answer (and close) before the
	// request is all sent, as it should for a header flood
	go conn.Write([]byte(req))
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return "read: " + err.Error()
	}
	return strings.TrimSpace(line)
}

// TestHostileHTTP: a 1 GB body announced, a header flood, malformed
// requests: clear answers, and the server keeps serving everyone else.
func TestHostileHTTP(t *testing.T) {
	in := start(t)
	f := func(name, req, wantLine string) {
		t.Helper()
		if got := rawHTTPS(t, in, req); !strings.Contains(got, wantLine) {
			t.Errorf("%s: got %q, want %q", name, got, wantLine)
		}
	}
	auth := "Authorization: Bearer " + in.key + "\r\n"
	f("1 GB body announced", "POST /apiv2/jsonrpc HTTP/1.1\r\nHost: x\r\n"+auth+"Content-Type: application/json\r\nContent-Length: 1073741824\r\n\r\n{", "413")
	f("header flood", "POST /apiv2/jsonrpc HTTP/1.1\r\nHost: x\r\n"+strings.Repeat("X-Flood: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n", 2000)+"\r\n", "431")
	f("garbage request line", "\x00\x01\x02 nonsense\r\n\r\n", "400")
	f("unknown path", "GET /nope HTTP/1.1\r\nHost: x\r\n\r\n", "404")
	f("GET on the endpoint", "GET /apiv2/jsonrpc HTTP/1.1\r\nHost: x\r\n"+auth+"\r\n", "405")
	// a 1 GB chunked body is cut off at the limit
	pr, pw := io.Pipe()
	go func() {
		chunk := bytes.Repeat([]byte("x"), 1<<20)
		for i := 0; i < 1024; i++ {
			if _, err := pw.Write(chunk); err != nil {
				return
			}
		}
		pw.Close()
	}()
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	req, _ := http.NewRequest("POST", in.url+"/apiv2/jsonrpc", pr)
	req.Header.Set("Authorization", "Bearer "+in.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Transport: tr, Timeout: 60 * time.Second}).Do(req)
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode != 413 {
			t.Errorf("1 GB chunked body: %d, want 413", resp.StatusCode)
		}
	} // a reset connection is an acceptable answer too
	pr.CloseWithError(io.ErrClosedPipe)
	// everyone else is still served
	if code, got := in.rpc(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":"Jo, 1 Smith St, Melbourne VIC 3000"}}`); code != 200 || !strings.Contains(got, "matched") {
		t.Errorf("after hostile requests: %d %s", code, got)
	}
}
