// Package testcups runs a private CUPS scheduler for tests, with PDF
// printers (Debian's cups and printer-driver-cups-pdf): the print stage
// and the IPP client are tested against the real thing.
//
// The scheduler runs as root (cups-pdf, like every backend of mode 0700,
// is run as root) with a configuration, spool, cache, state and logs of
// its own in a temporary folder; nothing of the machine's CUPS is used.
// Its address is 127.0.0.1 and a port the kernel chose: the test binds
// port 0 and hands the listening socket to cupsd as systemd would (file
// descriptor 3, LISTEN_FDS=1, LISTEN_PID=its pid, cupsd -l), because
// cupsd cannot report a port it chose and a port picked by listening and
// closing could be taken meanwhile. As the socket exists before cupsd
// does, a client's connection made before Start is accepted by the
// kernel and answered once cupsd runs (Listen alone is a printer that
// does not answer), and nothing needs to wait for cupsd to be ready.
//
// cups-pdf reads its configuration only from /etc/cups: each queue's
// device is cups-pdf:/INSTANCE, configured by /etc/cups/cups-pdf-
// INSTANCE.conf (a unique name, removed at cleanup), which sends its PDFs
// to the queue's own folder (Queue.Out). In on-demand mode cupsd also
// writes /var/cache/cups/org.cups.cupsd while it runs (compiled in;
// removed when it stops).
//
// Every program it needs is looked up with testenv.Tool: missing, the
// test is skipped, or fails under LODGE_REQUIRE_TOOLS (scripts/test
// installs them); so does a test not run as root.
package testcups

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lodge-mail/lodge/internal/ipp"
	"github.com/lodge-mail/lodge/internal/testenv"
)

// The programs and files a scheduler with PDF printers needs (Debian's
// paths).
const (
	cupsd      = "/usr/sbin/cupsd"
	lpadmin    = "/usr/sbin/lpadmin"
	cupsaccept = "/usr/sbin/cupsaccept"
	cupsreject = "/usr/sbin/cupsreject"
	backend    = "/usr/lib/cups/backend/cups-pdf"
	ppd        = "/usr/share/ppd/cups-pdf/CUPS-PDF_opt.ppd"
	etcCUPS    = "/etc/cups"
)

// CUPS is a private scheduler.
type CUPS struct {
	// Addr is where it listens: 127.0.0.1:PORT.
	Addr string
	dir  string
	ln   *net.TCPListener
	cmd  *exec.Cmd
	// exited is closed when cupsd has exited.
	exited chan struct{}
}

// Queue is a cups-pdf printer of a scheduler.
type Queue struct {
	Name string
	URI  string // ipp://127.0.0.1:PORT/printers/NAME
	Out  string // the folder its PDFs are written in
}

// New starts a scheduler (Listen, then Start).
func New(t testing.TB) *CUPS {
	c := Listen(t)
	c.Start(t)
	return c
}

// Listen makes the scheduler's folder and binds its address, without
// starting it.
func Listen(t testing.TB) *CUPS {
	t.Helper()
	need(t)
	// its own folder, not t.TempDir's (0700): the filters run as lp and
	// read the spool in it
	dir, err := os.MkdirTemp("", "lodge-cups-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"etc", "spool", "cache", "state", "log", "out"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return &CUPS{Addr: ln.Addr().String(), dir: dir, ln: ln}
}

func need(t testing.TB) {
	t.Helper()
	for _, p := range []string{cupsd, lpadmin, cupsaccept, cupsreject, backend, "gs", "pdfinfo"} {
		testenv.Tool(t, p)
	}
	if _, err := os.Stat(ppd); err != nil {
		testenv.Tool(t, ppd) // reports it missing
	}
	if os.Geteuid() != 0 {
		if os.Getenv("LODGE_REQUIRE_TOOLS") != "" {
			t.Fatalf("a CUPS scheduler with cups-pdf printers needs root (cupsd runs the cups-pdf backend as root): run the tests as root")
		}
		t.Skip("a CUPS scheduler with cups-pdf printers needs root")
	}
}

const cupsdConf = `# a private scheduler for tests: loopback only, no authentication
LogLevel info
IdleExitTimeout 0
Browsing No
WebInterface No
DefaultAuthType None
<Location />
  Order allow,deny
  Allow all
</Location>
<Policy default>
  <Limit All>
    Order deny,allow
  </Limit>
</Policy>
`

// Start starts cupsd on the address Listen bound; it is stopped at the
// test's cleanup.
func (c *CUPS) Start(t testing.TB) {
	t.Helper()
	files := fmt.Sprintf(`ServerRoot %[1]s/etc
RequestRoot %[1]s/spool
CacheDir %[1]s/cache
StateDir %[1]s/state
ErrorLog %[1]s/log/error_log
AccessLog %[1]s/log/access_log
PageLog %[1]s/log/page_log
Printcap %[1]s/printcap
ServerBin /usr/lib/cups
DataDir /usr/share/cups
FileDevice No
User lp
Group lp
SystemGroup root
`, c.dir)
	conf, filesConf := filepath.Join(c.dir, "etc", "cupsd.conf"), filepath.Join(c.dir, "etc", "cups-files.conf")
	if err := os.WriteFile(conf, []byte(cupsdConf), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filesConf, []byte(files), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := c.ln.File()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// sh's exec keeps its pid, which LISTEN_PID must name
	c.cmd = exec.Command("/bin/sh", "-c", `LISTEN_PID=$$ exec "$0" "$@"`, cupsd, "-f", "-l", "-c", conf, "-s", filesConf)
	c.cmd.Env = append(slices.DeleteFunc(os.Environ(), func(e string) bool { return strings.HasPrefix(e, "LISTEN_") }), "LISTEN_FDS=1")
	c.cmd.ExtraFiles = []*os.File{f} // descriptor 3
	stopWithTest(c.cmd)
	var stderr strings.Builder
	c.cmd.Stderr = &stderr
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c.exited = make(chan struct{})
	go func() { c.cmd.Wait(); close(c.exited) }()
	t.Cleanup(func() {
		c.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-c.exited:
		case <-time.After(20 * time.Second):
			c.cmd.Process.Kill()
			<-c.exited
		}
		if t.Failed() {
			log, _ := os.ReadFile(filepath.Join(c.dir, "log", "error_log"))
			t.Logf("cupsd stderr:\n%s\ncupsd error_log:\n%s", stderr.String(), log)
		}
	})
}

// run runs a CUPS command against the scheduler, failing the test when
// it fails or cupsd exits meanwhile.
func (c *CUPS) run(t testing.TB, name string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	go func() {
		select {
		case <-c.exited:
			cancel()
		case <-ctx.Done():
		}
	}()
	out, err := exec.CommandContext(ctx, name, append([]string{"-h", c.Addr}, args...)...).CombinedOutput()
	if err != nil {
		select {
		case <-c.exited:
			t.Fatalf("%s: cupsd exited (%v): %s", name, c.cmd.ProcessState, out)
		default:
		}
		t.Fatalf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
	}
}

// AddPDFQueue adds a cups-pdf printer named name, accepting jobs, whose
// PDFs go to a folder of its own.
func (c *CUPS) AddPDFQueue(t testing.TB, name string) Queue {
	t.Helper()
	var rnd [6]byte
	rand.Read(rnd[:])
	instance := "lodgetest" + hex.EncodeToString(rnd[:])
	q := Queue{Name: name, URI: "ipp://" + c.Addr + "/printers/" + name, Out: filepath.Join(c.dir, "out", name)}
	// cups-pdf makes Out itself (for the job's user, or nobody for an
	// unknown one: lodge)
	conf := fmt.Sprintf("Out %[1]s\nAnonDirName %[1]s\nSpool %[2]s/spool-%[3]s\nLog %[2]s/log\nLogType 3\n", q.Out, c.dir, name)
	path := filepath.Join(etcCUPS, "cups-pdf-"+instance+".conf")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(path) })
	c.run(t, lpadmin, "-p", name, "-E", "-v", "cups-pdf:/"+instance, "-P", ppd)
	return q
}

// Reject makes a queue refuse new jobs (cupsreject), Accept take them
// again (cupsaccept).
func (c *CUPS) Reject(t testing.TB, q Queue) {
	t.Helper()
	c.run(t, cupsreject, q.Name)
}
func (c *CUPS) Accept(t testing.TB, q Queue) { t.Helper(); c.run(t, cupsaccept, q.Name) }

// PDFs returns the PDFs the queue has written.
func (q Queue) PDFs(t testing.TB) []string {
	t.Helper()
	ms, err := filepath.Glob(filepath.Join(q.Out, "*.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// WaitJob waits until a job of the queue has ended (completed, canceled
// or aborted) and returns it; it fails the test after two minutes.
func (q Queue) WaitJob(t testing.TB, id int) ipp.Job {
	t.Helper()
	c, err := ipp.New(q.URI, ipp.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		j, err := c.GetJob(ctx, id)
		if err != nil {
			t.Fatalf("job %d of %s: %v", id, q.Name, err)
		}
		if j.Done() {
			return j
		}
		select {
		case <-ctx.Done():
			t.Fatalf("job %d of %s has not ended: state %d %v", id, q.Name, j.State, j.StateReasons)
		case <-tick.C:
		}
	}
}
