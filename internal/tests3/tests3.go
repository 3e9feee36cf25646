// Package tests3 starts a real S3-compatible server for tests: versitygw
// (Apache-2.0; scripts/test installs v1.8.0 with go install) with its
// posix backend in a temporary directory, listening on a Unix socket in
// that directory only (no TCP port, so no port can be taken by another
// test), with random root keys.
//
// One server is started per test binary, on first use, with the bucket
// DefaultBucket; a test that wants a bucket of its own calls NewBucket.
// The package's TestMain calls Stop (or uses Main) so the server ends
// with the binary; the server also gets SIGKILL if the test binary dies
// first (Pdeathsig).
//
// Failure tests make the store refuse writes with SetReadOnly(true): the
// server is restarted on the same directory and socket with --readonly,
// so every PUT, multipart upload, copy and DELETE is answered 403
// AccessDenied while reads still work; SetReadOnly(false) restarts it
// writable. Down and Up stop the server and start it again (every
// request then fails to connect).
//
// A lodge binary started by an end-to-end test reaches the server with
// -blob URL(bucket) and the environment Env() (the keys are never in the
// URL).
//
// Without versitygw the test is skipped, unless LODGE_REQUIRE_TOOLS is
// set (scripts/test sets it), where it fails.
package tests3

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/lodge-mail/lodge/internal/testenv"
)

// DefaultBucket is made when the server starts.
const DefaultBucket = "lodge"

// TB is the part of testing.TB the harness uses.
type TB interface {
	Helper()
	Skipf(string, ...any)
	Fatalf(string, ...any)
	Cleanup(func())
}

// Server is a running versitygw.
type Server struct {
	dir     string // the server's temporary directory
	root    string // the posix backend's top directory: one directory per bucket
	sock    string
	bin     string
	access  string
	secret  string
	logPath string

	mu       sync.Mutex
	cmd      *exec.Cmd
	exited   chan struct{}
	readOnly bool
}

// shared is the test binary's server.
var shared = testenv.SharedServer[*Server]{Name: "tests3", Install: "scripts/test installs versitygw", Start: Start}

// Main runs the tests of a package that uses the shared server and stops
// it after them: func TestMain(m *testing.M) { tests3.Main(m) }.
func Main(m *testing.M) {
	code := m.Run()
	Stop()
	os.Exit(code)
}

// Stop stops the shared server, if one was started, and removes its
// files.
func Stop() { shared.Stop() }

// Shared returns the test binary's server, starting it on first use.
func Shared(t TB) *Server {
	t.Helper()
	return shared.Get(t)
}

// NewBucket makes an empty bucket on the shared server for this test,
// removed with its objects when the test ends, and returns its name.
func NewBucket(t TB) string {
	t.Helper()
	s := Shared(t)
	name, err := s.MakeBucket()
	if err != nil {
		t.Fatalf("tests3: %v", err)
	}
	t.Cleanup(func() { s.RemoveBucket(name) })
	return name
}

var errNotInstalled = testenv.NotInstalled("versitygw")

// binary finds versitygw on PATH, else in GOPATH/bin or ~/go/bin, where
// go install puts it.
func binary() (string, error) {
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p, nil
	}
	var dirs []string
	if gp := os.Getenv("GOPATH"); gp != "" {
		dirs = append(dirs, filepath.Join(gp, "bin"))
	}
	if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(home, "go", "bin"))
	}
	for _, d := range dirs {
		p := filepath.Join(d, "versitygw")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p, nil
		}
	}
	return "", errNotInstalled
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// Start starts a new server in a temporary directory, with the bucket
// DefaultBucket.
func Start() (*Server, error) {
	bin, err := binary()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "lodge-tests3-")
	if err != nil {
		return nil, err
	}
	s := &Server{
		dir: dir, root: filepath.Join(dir, "root"), sock: filepath.Join(dir, "s3.sock"), bin: bin,
		access: "AK" + randomHex(9), secret: randomHex(20), logPath: filepath.Join(dir, "versitygw.log"),
	}
	if err := os.Mkdir(s.root, 0o700); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := s.start(); err != nil {
		s.Close()
		return nil, err
	}
	if err := s.makeBucket(DefaultBucket); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// start starts versitygw and waits until it answers a signed request.
func (s *Server) start() error {
	// a server killed outright leaves its socket file, which would stop
	// the new one from listening
	os.Remove(s.sock)
	logf, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	s.mu.Lock()
	args := []string{"--port", s.sock, "--access", s.access, "--secret", s.secret, "--quiet",
		// versitygw closes every connection after one request unless told
		// (a new connection a PUT: socket, connect, accept and close on
		// both sides); a deployment enables it too (docs/scale-out.md)
		"--keep-alive"}
	if s.readOnly {
		args = append(args, "--readonly")
	}
	s.mu.Unlock()
	args = append(args, "posix", s.root)
	cmd := exec.Command(s.bin, args...)
	cmd.Dir = s.dir
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("versitygw: %w", err)
	}
	logf.Close()
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	s.mu.Lock()
	s.cmd, s.exited = cmd, exited
	s.mu.Unlock()

	c, err := s.client(1)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := c.ListBuckets(ctx)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			log, _ := os.ReadFile(s.logPath)
			return fmt.Errorf("versitygw exited at start: %s", log)
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("versitygw did not answer in a minute: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Endpoint is the endpoint lodge's -blob URL takes: "unix:" and the
// socket's path.
func (s *Server) Endpoint() string { return "unix:" + s.sock }

// Socket is the path of the server's Unix socket.
func (s *Server) Socket() string { return s.sock }

// URL is lodge's -blob URL for bucket.
func (s *Server) URL(bucket string) string {
	return "s3://" + bucket + "?endpoint=" + s.Endpoint()
}

// AccessKey and SecretKey are the server's root keys.
func (s *Server) AccessKey() string { return s.access }
func (s *Server) SecretKey() string { return s.secret }

// Env is the environment that gives lodge the keys.
func (s *Server) Env() []string {
	return []string{"AWS_ACCESS_KEY_ID=" + s.access, "AWS_SECRET_ACCESS_KEY=" + s.secret}
}

// Root is the posix backend's directory: Root()/bucket/key is an
// object's file.
func (s *Server) Root() string { return s.root }

// Transport dials the server's socket whatever the URL's host: a plain
// net/http client with it fetches presigned URLs.
func (s *Server) Transport() *http.Transport {
	return &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", s.sock)
		},
		MaxIdleConnsPerHost: 16,
	}
}

// Client is a client of the server, for what tests check beside lodge's
// store (incomplete multipart uploads, say).
func (s *Server) Client() (*minio.Core, error) {
	c, err := s.client(0)
	if err != nil {
		return nil, err
	}
	return &minio.Core{Client: c}, nil
}

func (s *Server) client(retries int) (*minio.Client, error) {
	return minio.New("localhost", &minio.Options{
		Creds:        credentials.NewStaticV4(s.access, s.secret, ""),
		Transport:    s.Transport(),
		BucketLookup: minio.BucketLookupPath,
		Region:       "us-east-1",
		MaxRetries:   retries,
	})
}

// MakeBucket makes a bucket with a new random name.
func (s *Server) MakeBucket() (string, error) {
	name := "t-" + randomHex(8)
	return name, s.makeBucket(name)
}

func (s *Server) makeBucket(name string) error {
	c, err := s.client(0)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return c.MakeBucket(ctx, name, minio.MakeBucketOptions{Region: "us-east-1"})
}

// RemoveBucket removes a bucket and everything in it: the posix
// backend's directory of the bucket, whatever state the server is in.
func (s *Server) RemoveBucket(name string) error {
	if name == "" || name != filepath.Base(name) {
		return fmt.Errorf("tests3: bad bucket name %q", name)
	}
	return os.RemoveAll(filepath.Join(s.root, name))
}

// SetReadOnly restarts the server on the same directory and socket,
// refusing every write (403 AccessDenied) when on, and writable again
// when off. Requests in flight at the restart fail.
func (s *Server) SetReadOnly(on bool) error {
	s.mu.Lock()
	s.readOnly = on
	s.mu.Unlock()
	return s.Restart()
}

// Restart stops the server (SIGTERM) and starts it again on the same
// directory, socket and keys.
func (s *Server) Restart() error {
	s.stop(syscall.SIGTERM)
	return s.start()
}

// PID is the process ID of the server's last start (0 before one), for
// measuring its CPU.
func (s *Server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// Down stops the server (SIGKILL, as a crash would): every request fails
// until Up.
func (s *Server) Down() { s.stop(syscall.SIGKILL) }

// Up starts the server again after Down.
func (s *Server) Up() error { return s.start() }

func (s *Server) stop(sig syscall.Signal) {
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	syscall.Kill(-cmd.Process.Pid, sig)
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	}
}

// Close stops the server and removes its files.
func (s *Server) Close() {
	s.stop(syscall.SIGTERM)
	os.RemoveAll(s.dir)
}
