// Package mailpittest runs Mailpit (github.com/axllent/mailpit, MIT), a
// real SMTP server that keeps what it receives, for tests: the email
// sender and the pipeline's end-to-end tests send to it and read back,
// through its HTTP API, what arrived (headers, text, HTML, attachment
// bytes, the raw message), and make it refuse with its chaos triggers.
//
// # The binary
//
// Mailpit is built once per machine with the Go toolchain the tests
// already have (go install github.com/axllent/mailpit@v1.27.11, about a
// minute the first time) into the user's cache directory,
// $XDG_CACHE_HOME/lodge/mailpit-v1.27.11/mailpit or
// ~/.cache/lodge/mailpit-v1.27.11/mailpit (beside Go's own build cache,
// ~/.cache/go-build), under a file lock so that test binaries running at
// the same time build it once; later runs find it there. $LODGE_MAILPIT
// names another binary. When it cannot be built the test is skipped, or
// fails under LODGE_REQUIRE_TOOLS (scripts/test).
//
// # Ports
//
// Each Start (Launch, for programs such as bench/emailbench) runs its
// own Mailpit with a database in a temporary folder of its own, removed
// when it stops, SMTP and HTTP on 127.0.0.1 port 0: the kernel picks
// free ports. Mailpit logs the address it was given (":0"), not the
// port it got, and cannot take a listening socket from its parent, so
// Start reads the ports from the kernel: the listening TCP sockets among
// the process's file descriptors (/proc/PID/fd and /proc/PID/net/tcp;
// Linux only, other systems skip). The HTTP one is the one answering
// an HTTP request with HTTP (the SMTP port greets or, with TLS, hangs
// up at once). No port is ever chosen by listening and closing.
//
// # Reading back and chaos
//
// Messages, Count, WaitCount, Message, Headers, Raw and Part read what
// arrived through Mailpit's API; DeleteAll empties it. Mailpit's chaos
// triggers act at MAIL FROM (Sender), RCPT TO (Recipient) and AUTH, not
// at DATA: a server that refuses a message's content is another test
// server's (delivery/email's tests use go-smtp's).
//
// # Options
//
// TLS gives the SMTP port a certificate for 127.0.0.1 and localhost made
// for the test (Server.RootCAs trusts it) and offers STARTTLS;
// ImplicitTLS makes it speak TLS from the first byte (smtps). User and
// Password require AUTH (PLAIN or LOGIN; allowed without TLS too, which
// Server.URL then says with insecure_auth=1). Chaos enables the chaos
// API (SetChaos): MAIL FROM, RCPT TO and AUTH can be made to fail with
// a given code.
package mailpittest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lodge-mail/lodge/internal/testenv"
)

// Version is the Mailpit release the tests run.
const Version = "v1.27.11"

// Options configure a Mailpit (package doc).
type Options struct {
	TLS         bool
	ImplicitTLS bool
	User        string
	Password    string
	Chaos       bool
	// Max is the number of messages Mailpit keeps (older ones are
	// pruned); 0: 500, Mailpit's default; -1: no limit.
	Max int
}

// Server is a running Mailpit.
type Server struct {
	// SMTPAddr is the SMTP listener, 127.0.0.1:port.
	SMTPAddr string
	// API is the HTTP base URL, http://127.0.0.1:port.
	API string
	// RootCAs trusts the SMTP certificate (with TLS or ImplicitTLS).
	RootCAs *x509.CertPool
	// Pid is Mailpit's process id (for its resident memory, say).
	Pid int

	opts    Options
	client  *http.Client
	dir     string
	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error
}

// Start runs a Mailpit for t, stopped at t's cleanup. Its log is shown
// when t fails.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	s, err := Launch(Binary(t), opts)
	if err != nil {
		if errors.Is(err, errNoPorts) && os.Getenv("LODGE_REQUIRE_TOOLS") == "" {
			// a system without /proc: say why, unless CI requires it
			t.Skipf("mailpittest: %v", err)
		}
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Close()
		if t.Failed() {
			t.Logf("mailpit log:\n%s", tail(s.Log(), 4000))
		}
	})
	return s
}

// Launch runs the Mailpit binary bin with opts, in a temporary folder of
// its own, and returns when both its ports answer. Close stops it.
// Programs that are not tests (bench/emailbench) use it; tests use
// Start.
func Launch(bin string, opts Options) (*Server, error) {
	dir, err := os.MkdirTemp("", "mailpittest-")
	if err != nil {
		return nil, err
	}
	s := &Server{opts: opts, client: &http.Client{Timeout: time.Minute}, dir: dir, exited: make(chan struct{})}
	if err := s.launch(bin); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *Server) launch(bin string) error {
	opts := s.opts
	args := []string{
		"--smtp", "127.0.0.1:0",
		"--listen", "127.0.0.1:0",
		"--database", filepath.Join(s.dir, "mailpit.db"),
		"--disable-version-check",
		"--smtp-disable-rdns",
	}
	switch {
	case opts.Max < 0:
		args = append(args, "--max", "0")
	case opts.Max > 0:
		args = append(args, "--max", strconv.Itoa(opts.Max))
	}
	if opts.TLS || opts.ImplicitTLS {
		cert, key, pool, err := testCert(s.dir)
		if err != nil {
			return err
		}
		s.RootCAs = pool
		args = append(args, "--smtp-tls-cert", cert, "--smtp-tls-key", key)
		if opts.ImplicitTLS {
			args = append(args, "--smtp-require-tls")
		}
	}
	if opts.User != "" {
		auth := filepath.Join(s.dir, "smtp-auth")
		if err := os.WriteFile(auth, []byte(opts.User+":"+opts.Password+"\n"), 0o600); err != nil {
			return err
		}
		args = append(args, "--smtp-auth-file", auth)
		if !opts.TLS && !opts.ImplicitTLS {
			args = append(args, "--smtp-auth-allow-insecure")
		}
	}
	if opts.Chaos {
		args = append(args, "--enable-chaos")
	}
	logFile, err := os.Create(s.logPath())
	if err != nil {
		return err
	}
	s.cmd = exec.Command(bin, args...)
	s.cmd.Stdout, s.cmd.Stderr = logFile, logFile
	s.cmd.Dir = s.dir
	stopWithTest(s.cmd)
	if err := s.cmd.Start(); err != nil {
		logFile.Close()
		close(s.exited)
		return fmt.Errorf("mailpit: %w", err)
	}
	s.Pid = s.cmd.Process.Pid
	go func() {
		s.waitErr = s.cmd.Wait()
		logFile.Close()
		close(s.exited)
	}()

	// Wait for its two listening sockets (a condition polled, as
	// testenv.WaitFor does), then tell them apart.
	var ports []int
	for deadline := time.Now().Add(time.Minute); ; {
		select {
		case <-s.exited:
			return fmt.Errorf("mailpit exited before listening (%v):\n%s", s.waitErr, tail(s.Log(), 4000))
		default:
		}
		ports, err = listeningPorts(s.Pid)
		if err != nil {
			return fmt.Errorf("%w: %v", errNoPorts, err)
		}
		if len(ports) >= 2 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("waited a minute for mailpit to listen on two ports (has %v):\n%s", ports, tail(s.Log(), 4000))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(ports) != 2 {
		return fmt.Errorf("mailpit listens on %v, want 2 ports (SMTP, HTTP)", ports)
	}
	for i, p := range ports {
		if s.isHTTP(p) {
			s.API = fmt.Sprintf("http://127.0.0.1:%d", p)
			s.SMTPAddr = fmt.Sprintf("127.0.0.1:%d", ports[1-i])
		}
	}
	if s.API == "" {
		return fmt.Errorf("neither of mailpit's ports %v answers HTTP", ports)
	}
	return nil
}

// errNoPorts: this system cannot tell which ports a process listens on.
var errNoPorts = errors.New("cannot read Mailpit's ports")

func (s *Server) logPath() string { return filepath.Join(s.dir, "mailpit.log") }

// Log returns what Mailpit has logged.
func (s *Server) Log() []byte {
	b, _ := os.ReadFile(s.logPath())
	return b
}

// Close stops Mailpit (SIGINT, then SIGKILL after 10 s) and removes its
// folder.
func (s *Server) Close() {
	if s.cmd != nil && s.cmd.Process != nil {
		s.cmd.Process.Signal(os.Interrupt)
		select {
		case <-s.exited:
		case <-time.After(10 * time.Second):
			s.cmd.Process.Kill()
			<-s.exited
		}
	}
	os.RemoveAll(s.dir)
}

// isHTTP reports whether the port answers an HTTP request with HTTP.
// The SMTP port answers with its greeting, or (TLS) closes the
// connection: either at once, so no timeout decides.
func (s *Server) isHTTP(port int) bool {
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Minute)
	if err != nil {
		return false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Minute))
	if _, err := io.WriteString(c, "GET /livez HTTP/1.0\r\n\r\n"); err != nil {
		return false
	}
	line, _ := bufio.NewReader(c).ReadString('\n')
	return strings.HasPrefix(line, "HTTP/")
}

// URL is the server as lodge's -smtp flag and email.Config.URL take it:
// smtp:// (or smtps:// with ImplicitTLS), the credentials, and
// insecure_auth=1 when there are credentials and no TLS.
func (s *Server) URL() string {
	u := url.URL{Scheme: "smtp", Host: s.SMTPAddr}
	if s.opts.ImplicitTLS {
		u.Scheme = "smtps"
	}
	if s.opts.User != "" {
		u.User = url.UserPassword(s.opts.User, s.opts.Password)
		if !s.opts.TLS && !s.opts.ImplicitTLS {
			u.RawQuery = "insecure_auth=1"
		}
	}
	return u.String()
}

// Address is a name and an address as Mailpit reports them.
type Address struct {
	Name    string
	Address string
}

// Summary is a message in the list.
type Summary struct {
	ID          string // Mailpit's id, for Message, Raw and Part
	MessageID   string // the Message-ID header, without brackets
	From        *Address
	To          []Address
	Subject     string
	Created     time.Time
	Size        int
	Attachments int
}

// Attachment is a part Mailpit reads as an attachment.
type Attachment struct {
	PartID      string
	FileName    string
	ContentType string
	Size        int
}

// Message is one message in full.
type Message struct {
	ID          string
	MessageID   string
	From        *Address
	To          []Address
	ReturnPath  string
	Subject     string
	Date        time.Time
	Text        string
	HTML        string
	Size        int
	Attachments []Attachment
	Inline      []Attachment
}

// Messages returns every message kept, newest first.
func (s *Server) Messages(t testing.TB) []Summary {
	t.Helper()
	var all []Summary
	for {
		var page struct {
			Total    int
			Messages []Summary
		}
		s.getJSON(t, fmt.Sprintf("/api/v1/messages?start=%d&limit=500", len(all)), &page)
		all = append(all, page.Messages...)
		if len(page.Messages) == 0 || len(all) >= page.Total {
			return all
		}
	}
}

// Count returns the number of messages kept.
func (s *Server) Count(t testing.TB) int {
	t.Helper()
	var page struct{ Total int }
	s.getJSON(t, "/api/v1/messages?limit=1", &page)
	return page.Total
}

// WaitCount waits until at least n messages are kept and returns them.
func (s *Server) WaitCount(t testing.TB, n int) []Summary {
	t.Helper()
	var got int
	testenv.WaitFor(t, func() bool { got = s.Count(t); return got >= n },
		func() string { return fmt.Sprintf("%d messages in mailpit (has %d)", n, got) })
	return s.Messages(t)
}

// Message returns message id (a Summary's ID) in full.
func (s *Server) Message(t testing.TB, id string) Message {
	t.Helper()
	var m Message
	s.getJSON(t, "/api/v1/message/"+url.PathEscape(id), &m)
	return m
}

// Headers returns the header fields of message id, values in order.
func (s *Server) Headers(t testing.TB, id string) map[string][]string {
	t.Helper()
	var h map[string][]string
	s.getJSON(t, "/api/v1/message/"+url.PathEscape(id)+"/headers", &h)
	return h
}

// Raw returns message id as received.
func (s *Server) Raw(t testing.TB, id string) []byte {
	t.Helper()
	return s.get(t, "/api/v1/message/"+url.PathEscape(id)+"/raw")
}

// Part returns the decoded bytes of a part (an Attachment's PartID).
func (s *Server) Part(t testing.TB, id, partID string) []byte {
	t.Helper()
	return s.get(t, "/api/v1/message/"+url.PathEscape(id)+"/part/"+url.PathEscape(partID))
}

// DeleteAll deletes every message.
func (s *Server) DeleteAll(t testing.TB) {
	t.Helper()
	s.do(t, http.MethodDelete, "/api/v1/messages", nil, nil)
}

// Trigger makes an SMTP stage fail with Code (400 to 599) in Probability
// percent of the cases (0 to 100; 0 turns it off).
type Trigger struct {
	ErrorCode   int
	Probability int
}

// Chaos is the set of triggers: MAIL FROM (Sender), RCPT TO (Recipient),
// AUTH (Authentication).
type Chaos struct {
	Sender         Trigger
	Recipient      Trigger
	Authentication Trigger
}

// SetChaos sets the triggers (Options.Chaos must be set). Mailpit needs
// a code even for a trigger that is off: a zero one gets 451.
func (s *Server) SetChaos(t testing.TB, c Chaos) {
	t.Helper()
	for _, tr := range []*Trigger{&c.Sender, &c.Recipient, &c.Authentication} {
		if tr.ErrorCode == 0 {
			tr.ErrorCode = 451
		}
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	s.do(t, http.MethodPut, "/api/v1/chaos", bytes.NewReader(b), nil)
}

func (s *Server) get(t testing.TB, path string) []byte {
	t.Helper()
	var b bytes.Buffer
	s.do(t, http.MethodGet, path, nil, &b)
	return b.Bytes()
}

func (s *Server) getJSON(t testing.TB, path string, v any) {
	t.Helper()
	if err := json.Unmarshal(s.get(t, path), v); err != nil {
		t.Fatalf("mailpit %s: %v", path, err)
	}
}

func (s *Server) do(t testing.TB, method, path string, body io.Reader, out io.Writer) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), method, s.API+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatalf("mailpit %s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("mailpit %s %s: %v", method, path, err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("mailpit %s %s: %s: %s", method, path, resp.Status, tail(b, 500))
	}
	if out != nil {
		out.Write(b)
	}
}

// Binary returns the Mailpit binary: $LODGE_MAILPIT, or the one built in
// the cache directory (package doc), building it if needed. When it
// cannot, t is skipped, or fails under LODGE_REQUIRE_TOOLS.
func Binary(t testing.TB) string {
	t.Helper()
	bin, err := BinaryPath(t.Logf)
	if err != nil {
		if os.Getenv("LODGE_REQUIRE_TOOLS") != "" {
			t.Fatalf("mailpit is needed and could not be built: %v", err)
		}
		t.Skipf("mailpit could not be built: %v", err)
	}
	return bin
}

// BinaryPath is Binary for programs: it returns an error instead.
// logf (may be nil) is told when a build starts.
func BinaryPath(logf func(string, ...any)) (string, error) {
	if p := os.Getenv("LODGE_MAILPIT"); p != "" {
		return p, nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory: %w", err)
	}
	dir := filepath.Join(cache, "lodge", "mailpit-"+Version)
	bin := filepath.Join(dir, "mailpit")
	if isExecutable(bin) {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	unlock, err := lockFile(filepath.Join(dir, ".lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	if isExecutable(bin) { // built by another test binary meanwhile
		return bin, nil
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("no go command: %w", err)
	}
	tmp, err := os.MkdirTemp(dir, "build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	if logf != nil {
		logf("building mailpit %s into %s (once per machine)", Version, dir)
	}
	cmd := exec.Command(goTool, "install", "github.com/axllent/mailpit@"+Version)
	// The test's own GOFLAGS (-race, tags) are not Mailpit's; the module
	// cache and proxy settings are kept.
	cmd.Env = append(os.Environ(), "GOBIN="+tmp, "GOFLAGS=", "CGO_ENABLED=0", "GOOS=", "GOARCH=")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go install github.com/axllent/mailpit@%s: %v\n%s", Version, err, tail(out, 2000))
	}
	if err := os.Rename(filepath.Join(tmp, "mailpit"), bin); err != nil {
		return "", err
	}
	return bin, nil
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// testCert writes a self-signed certificate for 127.0.0.1 and localhost
// (and its key) into dir, and returns their paths and a pool trusting it.
func testCert(dir string) (certPath, keyPath string, pool *x509.CertPool, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "mailpittest"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return "", "", nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return "", "", nil, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return "", "", nil, err
	}
	certPath, keyPath = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		return "", "", nil, err
	}
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return "", "", nil, err
	}
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certPath, keyPath, pool, nil
}

// listeningTCP reads the listening TCP sockets (state 0A) of a
// /proc/net/tcp table: inode to port.
func listeningTCP(table []byte) map[string]int {
	out := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(table))
	sc.Scan() // the column titles
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 10 || f[3] != "0A" {
			continue
		}
		_, portHex, ok := strings.Cut(f[1], ":")
		if !ok {
			continue
		}
		port, err := strconv.ParseUint(portHex, 16, 16)
		if err != nil {
			continue
		}
		out[f[9]] = int(port)
	}
	return out
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
