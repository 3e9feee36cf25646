package sandbox

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lodge-mail/lodge/internal/testenv"
)

// TestRun: each bound stops its kind of runaway child with its error; a
// good run returns the output.
func TestRun(t *testing.T) {
	testenv.Tool(t, "prlimit")
	dir := t.TempDir()
	ctx := context.Background()
	out, err := Run(ctx, Limits{}, dir, "sh", "-c", "echo hello; echo $SECRET_KEY")
	if err != nil || strings.TrimSpace(string(out)) != "hello" {
		t.Fatalf("good run: %q %v (an environment variable leaked?)", out, err)
	}
	f := func(name string, lim Limits, script string, want error, words string) {
		t.Helper()
		_, err := Run(ctx, lim, dir, "sh", "-c", script)
		if !errors.Is(err, want) || !strings.Contains(err.Error(), words) {
			t.Fatalf("%s: %v, want %v with %q", name, err, want, words)
		}
	}
	f("exit status", Limits{}, "echo first >&2; echo broken file >&2; exit 3", ErrFailed, "broken file")
	f("wall clock", Limits{Timeout: 300 * time.Millisecond}, "sleep 30", ErrTimeout, "more than 300ms")
	f("a child of the child dies too", Limits{Timeout: 300 * time.Millisecond}, "sleep 30 & wait", ErrTimeout, "more than")
	// the CPU limit is a time limit too, however late the wall clock runs:
	// SIGXCPU before SIGKILL
	f("CPU time", Limits{Timeout: time.Hour, CPU: time.Second}, "while :; do :; done", ErrTimeout, "more than 1 s of CPU")
	f("file size", Limits{FileSize: 4096}, "exec head -c 100000 /dev/zero > big", ErrLimit, "killed by")
	f("memory", Limits{Memory: 64 << 20}, "x=$(head -c 200000000 /dev/zero | tr '\\0' a); echo ${#x}", ErrLimit, "")
	if _, err := Run(ctx, Limits{}, dir, "no-such-program-here"); !errors.Is(err, ErrMissing) {
		t.Fatalf("missing program: %v", err)
	}
	// the output is capped, not unbounded
	out, err = Run(ctx, Limits{Output: 1000}, dir, "head", "-c", "100000", "/dev/zero")
	if err != nil || len(out) != 1000 {
		t.Fatalf("capped output: %d bytes, %v", len(out), err)
	}
}

// TestStdin: a reader is the child's standard input; a file is handed
// over as it is, so the child can open /dev/stdin again from its start.
func TestStdin(t *testing.T) {
	testenv.Tool(t, "prlimit")
	dir := t.TempDir()
	ctx := context.Background()
	out, err := Run(ctx, Limits{Stdin: strings.NewReader("piped")}, dir, "cat")
	if err != nil || string(out) != "piped" {
		t.Fatalf("reader: %q %v", out, err)
	}
	f, err := os.CreateTemp(dir, "in")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.WriteString("file;")
	f.Seek(0, 0)
	out, err = Run(ctx, Limits{Stdin: f}, dir, "sh", "-c", "cat /dev/stdin; cat /dev/stdin")
	if err != nil || string(out) != "file;file;" {
		t.Fatalf("file: %q %v", out, err)
	}
	out, err = Run(ctx, Limits{}, dir, "cat")
	if err != nil || len(out) != 0 {
		t.Fatalf("no stdin: %q %v", out, err)
	}
}

func init() { os.Setenv("SECRET_KEY", "lk_should_not_leak") }
