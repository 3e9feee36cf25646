// Package sandbox runs the external programs that read customers'
// documents (Ghostscript, xpstopdf, qpdf, pdftotext) with bounds, so that
// a hostile document costs a bounded child, never the server:
//
//   - a wall-clock timeout, after which the child's whole process group is
//     killed;
//   - through util-linux's prlimit(1): an address-space limit (the child
//     fails to allocate instead of growing), a CPU-time limit, a limit on
//     the size of any file it writes, and few open files;
//   - an environment holding only PATH, LANG=C and what the caller adds:
//     nothing secret of the server's reaches it;
//   - standard output and error kept up to a bound; the rest is dropped.
//
// Programs are named, never a shell; arguments are passed as a list.
package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Limits bound one run. The zero value means the documented defaults.
type Limits struct {
	Timeout  time.Duration // default 60 s
	Memory   int64         // address space, default 1 GiB
	FileSize int64         // any file written, default 2 GiB
	Output   int           // stdout kept, default 64 MiB (stderr: 64 KiB)
	// CPU is the processor time the child may use, in whole seconds
	// (default Timeout plus 1 s, rounded down). Past it the kernel sends
	// SIGXCPU, an ErrTimeout; SIGKILL only a second later, should the
	// child survive that. (With both at once, a child whose wall clock
	// ran late on a loaded machine was killed by SIGKILL and reported as
	// ErrLimit, a memory or file limit.)
	CPU time.Duration
	// Env adds variables (KEY=value) to the child's environment.
	Env []string
	// Stdin is the child's standard input (nil: none). An *os.File is
	// handed to the child as it is, so a program can reopen it by name
	// (/dev/stdin) and seek: how secrets reach a program without being
	// on its command line.
	Stdin io.Reader
}

func (l Limits) withDefaults() Limits {
	if l.Timeout <= 0 {
		l.Timeout = 60 * time.Second
	}
	if l.Memory <= 0 {
		l.Memory = 1 << 30
	}
	if l.FileSize <= 0 {
		l.FileSize = 2 << 30
	}
	if l.Output <= 0 {
		l.Output = 64 << 20
	}
	if l.CPU < time.Second {
		l.CPU = l.Timeout + time.Second
	}
	return l
}

// Errors of Run, wrapped with the program's name and its last words.
var (
	ErrTimeout = errors.New("took too long")
	ErrLimit   = errors.New("exceeded its memory or file limits")
	ErrMissing = errors.New("is not installed")
	ErrFailed  = errors.New("failed")
)

// capped keeps the first max bytes written. (Not a bytes.Buffer by
// embedding: io.Copy would use its ReadFrom and pass the cap by.)
type capped struct {
	buf bytes.Buffer
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); room < len(p) {
		if room > 0 {
			c.buf.Write(p[:room])
		}
		return len(p), nil
	}
	return c.buf.Write(p)
}

// Run runs name with args in dir and returns its standard output. A
// program that exits non-zero, is killed by a limit or takes too long
// gives an error wrapping one of the Err values with the end of its
// standard error.
func Run(ctx context.Context, lim Limits, dir, name string, args ...string) ([]byte, error) {
	lim = lim.withDefaults()
	path, err := exec.LookPath(name)
	if err != nil {
		return nil, fmt.Errorf("%s %w (install it with the project's scripts)", name, ErrMissing)
	}
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		return nil, fmt.Errorf("prlimit (util-linux) %w", ErrMissing)
	}
	cpu := int64(lim.CPU / time.Second)
	full := append([]string{
		"--as=" + strconv.FormatInt(lim.Memory, 10),
		"--cpu=" + strconv.FormatInt(cpu, 10) + ":" + strconv.FormatInt(cpu+1, 10), // soft (SIGXCPU):hard (SIGKILL)
		"--fsize=" + strconv.FormatInt(lim.FileSize, 10),
		"--nofile=256",
		"--core=0",
		"--", path}, args...)
	ctx, cancel := context.WithTimeout(ctx, lim.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, prlimit, full...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C", "HOME=" + dir}, lim.Env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	stdout := &capped{max: lim.Output}
	stderr := &capped{max: 64 << 10}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = lim.Stdin, stdout, stderr
	err = cmd.Run()
	if err == nil {
		return stdout.buf.Bytes(), nil
	}
	words := lastLines(stderr.buf.String(), 3)
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		return nil, fmt.Errorf("%s %w (more than %v)%s", name, ErrTimeout, lim.Timeout, words)
	case ctx.Err() != nil:
		return nil, ctx.Err()
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			switch ws.Signal() {
			case syscall.SIGXCPU:
				return nil, fmt.Errorf("%s %w (more than %d s of CPU)%s", name, ErrTimeout, cpu, words)
			case syscall.SIGXFSZ, syscall.SIGSEGV, syscall.SIGABRT, syscall.SIGKILL, syscall.SIGBUS:
				return nil, fmt.Errorf("%s %w (killed by %v)%s", name, ErrLimit, ws.Signal(), words)
			}
		}
		if isMemoryFailure(stderr.buf.String()) {
			return nil, fmt.Errorf("%s %w%s", name, ErrLimit, words)
		}
		return nil, fmt.Errorf("%s %w (exit status %d)%s", name, ErrFailed, ee.ExitCode(), words)
	}
	return nil, fmt.Errorf("%s: %w", name, err)
}

func isMemoryFailure(stderr string) bool {
	s := strings.ToLower(stderr)
	return strings.Contains(s, "vmerror") || strings.Contains(s, "out of memory") || strings.Contains(s, "cannot allocate") || strings.Contains(s, "bad_alloc")
}

// lastLines returns ": " and the last n non-empty lines of s, joined by
// " / ", or "" when there are none.
func lastLines(s string, n int) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			keep = append(keep, l)
		}
	}
	if len(keep) == 0 {
		return ""
	}
	if len(keep) > n {
		keep = keep[len(keep)-n:]
	}
	out := strings.Join(keep, " / ")
	if len(out) > 300 {
		out = out[:300] + "…"
	}
	return ": " + out
}
