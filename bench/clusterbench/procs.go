package main

// The processes the benchmark runs and watches: lodge nodes, and the CPU
// time of every process of a setup (lodge, PostgreSQL, versitygw) read
// from /proc, so that a run can say what one operation cost in CPU
// whatever else the shared machine was doing.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/lodge-mail/lodge/bench/internal/cpuprofile"
)

// node is a running lodge serve.
type node struct {
	name  string
	dir   string // its data directory
	cmd   *exec.Cmd
	exec  time.Time // just before the process was started
	https string    // https://127.0.0.1:PORT
	plain string    // http://127.0.0.1:PORT
	key   string    // the demo key it printed

	ready    chan struct{} // closed at its "serving" line
	readyAt  time.Time
	done     chan struct{} // closed when it has exited and its output is read
	mu       sync.Mutex
	tail     []byte    // the last 64 KiB of its output
	batchAt  time.Time // its first "print batch" log line
	batchSet bool
}

var (
	servingRE = regexp.MustCompile(`msg=serving https=(\S+) plain=(\S+)`)
	keyRE     = regexp.MustCompile(`Bearer (lk_[A-Za-z0-9_\-]+)`)
)

// startNode starts lodge serve on dir with both listeners and pprof on
// port 0 (the addresses are read from its "serving" line), in its own
// process group, and returns once it has started, not waiting for it to
// serve (wait on n.ready).
func startNode(bin, root, name, dir string, env []string, extra ...string) (*node, error) {
	n := &node{name: name, dir: dir, ready: make(chan struct{}), done: make(chan struct{})}
	args := append([]string{"serve", "-demo", "-quiet", "-data-dir", dir,
		"-addr", "127.0.0.1:0", "-plain-addr", "127.0.0.1:0", "-debug-addr", "127.0.0.1:0"}, extra...)
	n.cmd = exec.Command(bin, args...)
	n.cmd.Dir = root // ../shared/data is the reference from there
	n.cmd.Env = append(os.Environ(), env...)
	n.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	// its whole output also goes to DIR.log (kept with -keep)
	logFile, err := os.OpenFile(dir+".log", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	pr, pw := io.Pipe()
	n.cmd.Stdout, n.cmd.Stderr = pw, pw
	n.exec = time.Now()
	if err := n.cmd.Start(); err != nil {
		logFile.Close()
		return nil, err
	}
	readDone := make(chan struct{})
	go func() {
		n.cmd.Wait()
		pw.Close()
		<-readDone
		close(n.done)
	}()
	go func() {
		defer close(readDone)
		defer logFile.Close()
		sc := bufio.NewScanner(io.TeeReader(pr, logFile))
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		serving := false
		for sc.Scan() {
			line := sc.Text()
			now := time.Now()
			n.mu.Lock()
			n.tail = append(n.tail, line...)
			n.tail = append(n.tail, '\n')
			if len(n.tail) > 128<<10 {
				n.tail = append([]byte(nil), n.tail[len(n.tail)-64<<10:]...)
			}
			if m := keyRE.FindStringSubmatch(line); m != nil && n.key == "" {
				n.key = m[1]
			}
			if !n.batchSet && strings.Contains(line, "msg=\"print batch") {
				n.batchAt, n.batchSet = now, true
			}
			if m := servingRE.FindStringSubmatch(line); m != nil && !serving {
				serving = true
				n.https, n.plain, n.readyAt = "https://"+m[1], "http://"+m[2], now
				close(n.ready)
			}
			n.mu.Unlock()
		}
		io.Copy(io.Discard, pr)
	}()
	return n, nil
}

// waitServing waits for the node's "serving" line (and its demo key).
func (n *node) waitServing(ctx context.Context, limit time.Duration) error {
	select {
	case <-n.ready:
		n.mu.Lock()
		defer n.mu.Unlock()
		if n.key == "" {
			return fmt.Errorf("node %s printed no demo key:\n%s", n.name, n.tail)
		}
		return nil
	case <-n.done:
		return fmt.Errorf("node %s exited before serving:\n%s", n.name, n.logTail(30))
	case <-time.After(limit):
		return fmt.Errorf("node %s not serving after %v:\n%s", n.name, limit, n.logTail(30))
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (n *node) pid() int { return n.cmd.Process.Pid }

// logTail is the last lines of the node's output.
func (n *node) logTail(lines int) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	ls := strings.SplitAfter(strings.TrimRight(string(n.tail), "\n"), "\n")
	if len(ls) > lines {
		ls = ls[len(ls)-lines:]
	}
	return strings.Join(ls, "")
}

func (n *node) firstBatch() (time.Time, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.batchAt, n.batchSet
}

// kill sends SIGKILL to the node's process group (its page-counting
// children with it), as a machine dying would, and does not wait.
func (n *node) kill() { syscall.Kill(-n.pid(), syscall.SIGKILL) }

// stop ends the node with SIGTERM (SIGKILL after 40 s) and waits.
func (n *node) stop() {
	select {
	case <-n.done:
		return
	default:
	}
	syscall.Kill(-n.pid(), syscall.SIGTERM)
	select {
	case <-n.done:
	case <-time.After(40 * time.Second):
		n.kill()
		<-n.done
	}
}

// stopAll stops nodes (nil ones skipped) at once: each may take a while
// to finish the mailroom job it is on.
func stopAll(nodes []*node) {
	var wg sync.WaitGroup
	for _, n := range nodes {
		if n != nil {
			wg.Go(n.stop)
		}
	}
	wg.Wait()
}

// debugURL finds the pprof listener the node opened on port 0: its
// listening TCP port that is neither of the two it logged.
func (n *node) debugURL() (string, error) {
	ports, err := listeningPorts(n.pid())
	if err != nil {
		return "", err
	}
	for _, p := range ports {
		if !strings.HasSuffix(n.https, ":"+p) && !strings.HasSuffix(n.plain, ":"+p) {
			return "http://127.0.0.1:" + p, nil
		}
	}
	return "", fmt.Errorf("node %s: no pprof listener among its ports %v", n.name, ports)
}

// listeningPorts are the TCP ports pid listens on: its sockets' inodes
// (/proc/PID/fd) matched with the listening sockets of /proc/net/tcp.
func listeningPorts(pid int) ([]string, error) {
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return nil, err
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if err == nil && strings.HasPrefix(l, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
		}
	}
	var ports []string
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			fs := strings.Fields(line)
			if len(fs) < 10 || fs[3] != "0A" || !inodes[fs[9]] { // 0A: LISTEN
				continue
			}
			_, hexPort, _ := strings.Cut(fs[1], ":")
			p, err := strconv.ParseUint(hexPort, 16, 16)
			if err == nil {
				ports = append(ports, strconv.FormatUint(p, 10))
			}
		}
	}
	return ports, nil
}

// profile takes a CPU profile of the node for secs seconds in the
// background and saves it to path; the returned func waits for it.
func (n *node) profile(ctx context.Context, secs int, path string) func() error {
	base, err := n.debugURL()
	if err != nil {
		return func() error { return err }
	}
	return cpuprofile.Start(ctx, base, secs, path)
}

// ---------------------------------------------------------------------------
// CPU time

// procStat reads /proc/PID/stat: the parent, and the CPU seconds of the
// process and of its children it has waited for.
func procStat(pid int) (ppid int, self, children float64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, 0, err
	}
	// the fields after the command name, which may hold spaces: state is
	// field 3, so field k is f[k-3]
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, 0, fmt.Errorf("/proc/%d/stat: no command", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 15 {
		return 0, 0, 0, fmt.Errorf("/proc/%d/stat: short", pid)
	}
	num := func(k int) float64 { v, _ := strconv.ParseFloat(f[k-3], 64); return v }
	return int(num(4)), (num(14) + num(15)) / 100, (num(16) + num(17)) / 100, nil
}

// treeCPU is the CPU seconds of the processes rooted at each of roots so
// far: each root's own and its reaped children's, and every live
// descendant's (PostgreSQL's backends, which leave the process group,
// and lodge's page counters).
func treeCPU(roots ...int) float64 {
	type proc struct {
		ppid        int
		self, child float64
	}
	procs := map[int]proc{}
	kids := map[int][]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		ppid, self, child, err := procStat(pid)
		if err != nil {
			continue
		}
		procs[pid] = proc{ppid, self, child}
		kids[ppid] = append(kids[ppid], pid)
	}
	total := 0.0
	var walk func(pid int)
	walk = func(pid int) {
		p, ok := procs[pid]
		if !ok {
			return
		}
		total += p.self
		for _, k := range kids[pid] {
			walk(k)
		}
	}
	for _, r := range roots {
		if r <= 0 {
			continue
		}
		total += procs[r].child
		walk(r)
	}
	return total
}

// selfCPU is this process's CPU seconds: the load generator's.
func selfCPU() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// postmasterPID reads the PID PostgreSQL writes first in its socket's
// lock file.
func postmasterPID(sockDir string) int {
	b, err := os.ReadFile(filepath.Join(sockDir, ".s.PGSQL.5432.lock"))
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	pid, _ := strconv.Atoi(strings.TrimSpace(line))
	return pid
}

// pidWithArg finds the process whose command line has arg (versitygw,
// by its socket's path).
func pidWithArg(arg string) int {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err == nil && bytes.Contains(b, []byte("\x00"+arg+"\x00")) {
			return pid
		}
	}
	return 0
}

// loadAvg is the machine's 1-minute load average.
func loadAvg() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return -1
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}
