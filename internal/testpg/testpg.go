// Package testpg starts a real PostgreSQL server for tests: Debian's
// postgresql package (scripts/test installs it), a new cluster in a
// temporary directory, listening on a Unix socket only (no TCP port, so
// no port can be taken by another test), run as the postgres user when
// the tests run as root (initdb refuses root).
//
// One server is started per test binary, on first use, and each test
// gets a database of its own (NewDatabase), dropped at its end. The
// package's TestMain calls Stop (or uses Main) so the server ends with
// the binary; the server also gets SIGKILL if the test binary dies first
// (Pdeathsig).
//
// Without PostgreSQL installed the test is skipped, unless
// LODGE_REQUIRE_TOOLS is set (scripts/test sets it), where it fails.
package testpg

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lodge-mail/lodge/internal/testenv"
)

// TB is the part of testing.TB the harness uses.
type TB interface {
	Helper()
	Skipf(string, ...any)
	Fatalf(string, ...any)
	Cleanup(func())
}

// Server is a running PostgreSQL cluster.
type Server struct {
	dir     string // the cluster's temporary directory
	data    string // PGDATA
	sock    string // the Unix socket's directory
	bin     string
	cred    *syscall.Credential
	mu      sync.Mutex
	cmd     *exec.Cmd
	exited  chan struct{}
	logPath string
	// settings are given to the server after the harness's own
	settings []string
}

// shared is the test binary's server.
var shared = testenv.SharedServer[*Server]{Name: "testpg", Install: "scripts/test installs postgresql", Start: Start}

// Main runs the tests of a package that uses the shared server and stops
// it after them: func TestMain(m *testing.M) { testpg.Main(m) }.
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

// NewDatabase creates an empty database on the shared server for this
// test, dropped when the test ends, and returns its connection string.
func NewDatabase(t TB) string {
	t.Helper()
	s := Shared(t)
	name, err := s.CreateDatabase()
	if err != nil {
		t.Fatalf("testpg: %v", err)
	}
	t.Cleanup(func() { s.DropDatabase(name) })
	return s.URL(name)
}

var errNotInstalled = testenv.NotInstalled("PostgreSQL")

// binDir finds the server's programs: pg_config's bindir, else the newest
// /usr/lib/postgresql/*/bin.
func binDir() (string, error) {
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		d := string(trimNL(out))
		if _, err := os.Stat(filepath.Join(d, "postgres")); err == nil {
			return d, nil
		}
	}
	ds, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(ds, func(i, j int) bool { return versionOf(ds[i]) > versionOf(ds[j]) })
	for _, d := range ds {
		if _, err := os.Stat(filepath.Join(d, "postgres")); err == nil {
			return d, nil
		}
	}
	return "", errNotInstalled
}

func versionOf(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

func trimNL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// Start initialises a new cluster in a temporary directory and starts it.
func Start() (*Server, error) { return StartWith() }

// StartWith is Start with server settings ("name=value") over the
// harness's own: benchmarks that compare with a store that fsyncs start
// a server with "fsync=on".
func StartWith(settings ...string) (*Server, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "lodge-testpg-")
	if err != nil {
		return nil, err
	}
	s := &Server{dir: dir, data: filepath.Join(dir, "data"), sock: filepath.Join(dir, "sock"), bin: bin, logPath: filepath.Join(dir, "postgres.log"), settings: settings}
	if err := os.Mkdir(s.sock, 0o700); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if os.Geteuid() == 0 {
		// initdb and postgres refuse to run as root: run them as the
		// postgres user the package made, owning the directory.
		u, err := user.Lookup("postgres")
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("%w (no postgres user: %v)", errNotInstalled, err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		s.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		for _, p := range []string{dir, s.sock} {
			if err := os.Chown(p, uid, gid); err != nil {
				os.RemoveAll(dir)
				return nil, err
			}
		}
	}
	initdb := s.command("initdb", "-D", s.data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale", "C", "--no-sync")
	if out, err := initdb.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v: %s", err, out)
	}
	if err := s.start(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *Server) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(s.bin, name), args...)
	cmd.Dir = s.dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Pdeathsig: syscall.SIGKILL, Setpgid: true}
	return cmd
}

// start starts the postmaster and waits until it accepts connections.
func (s *Server) start() error {
	logf, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	args := []string{"-D", s.data, "-k", s.sock,
		"-c", "listen_addresses=",
		// the OS keeps what a killed server wrote; only a machine crash
		// would need fsync, and tests do not survive one
		"-c", "fsync=off",
		"-c", "max_connections=200",
		"-c", "shared_buffers=32MB"}
	for _, kv := range s.settings {
		args = append(args, "-c", kv) // the last of a name wins
	}
	cmd := s.command("postgres", args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("postgres: %w", err)
	}
	logf.Close()
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	s.mu.Lock()
	s.cmd, s.exited = cmd, exited
	s.mu.Unlock()
	deadline := time.Now().Add(time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		c, err := pgx.Connect(ctx, s.URL("postgres"))
		cancel()
		if err == nil {
			c.Close(context.Background())
			return nil
		}
		select {
		case <-exited:
			log, _ := os.ReadFile(s.logPath)
			return fmt.Errorf("postgres exited at start: %s", log)
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres did not accept connections in a minute: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// URL is the connection string of database name.
func (s *Server) URL(name string) string {
	return fmt.Sprintf("host=%s port=5432 user=postgres dbname=%s sslmode=disable", s.sock, name)
}

// SocketDir is the directory of the server's Unix socket.
func (s *Server) SocketDir() string { return s.sock }

// CreateDatabase creates a database with a new random name.
func (s *Server) CreateDatabase() (string, error) {
	var b [6]byte
	rand.Read(b[:])
	name := "t_" + hex.EncodeToString(b[:])
	return name, s.exec(`CREATE DATABASE ` + name)
}

// DropDatabase drops a database, closing its connections.
func (s *Server) DropDatabase(name string) error {
	return s.exec(`DROP DATABASE IF EXISTS ` + name + ` WITH (FORCE)`)
}

func (s *Server) exec(sql string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	_, err = c.Exec(ctx, sql)
	return err
}

// Restart stops the server as an immediate shutdown would (SIGQUIT:
// connections are cut, nothing is checkpointed) and starts it again on
// the same data: the failure tests' restart of the database.
func (s *Server) Restart() error {
	s.stop(syscall.SIGQUIT)
	return s.start()
}

// Kill stops the server with SIGKILL and does not start it again.
func (s *Server) Kill() { s.stop(syscall.SIGKILL) }

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
	// a postmaster killed outright leaves its children to notice; SIGKILL
	// to the group ends them too before the next start reuses the socket
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}

// Close stops the server (fast shutdown) and removes its files.
func (s *Server) Close() {
	s.stop(syscall.SIGINT)
	os.RemoveAll(s.dir)
}
