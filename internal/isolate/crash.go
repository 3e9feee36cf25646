package isolate

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// Child names a child process and its bounds for DescribeCrash.
type Child struct {
	Who    string // "the inspector", "the reader"
	Hint   string // what to check when it gives no answer, e.g. that main calls the RunChildIfRequested
	Stack  int64  // its stack limit, bytes
	Memory int64  // its memory limit, bytes
}

// DescribeCrash says, for people, why a child that gave no answer
// stopped: its stack or memory bound (from what the Go runtime, or the
// race detector, wrote on stderr), a panic or fatal error, how it
// exited, or that it said nothing.
func DescribeCrash(c Child, runErr error, stderr string) string {
	switch {
	case strings.Contains(stderr, "stack overflow") || strings.Contains(stderr, "stack exceeds"):
		return fmt.Sprintf("it overflowed the %d MiB stack", c.Stack>>20)
	case strings.Contains(stderr, "out of memory") || strings.Contains(stderr, "cannot allocate memory") ||
		strings.Contains(stderr, "address space") || strings.Contains(stderr, "failed to allocate"): // the race detector's ways
		return fmt.Sprintf("it needed more than %d MiB of memory", c.Memory>>20)
	}
	for _, line := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(line, "panic: ") || strings.HasPrefix(line, "fatal error: ") {
			return c.Who + " crashed: " + line
		}
	}
	var ee *exec.ExitError
	if errors.As(runErr, &ee) {
		return c.Who + " " + ee.ProcessState.String() + " (" + c.Hint + ")"
	}
	if runErr != nil {
		return runErr.Error()
	}
	return c.Who + " gave no answer (" + c.Hint + ")"
}

// Capped keeps the first Max bytes written to it and drops the rest: a
// child's output, bounded.
type Capped struct {
	bytes.Buffer
	Max int
}

func (c *Capped) Write(p []byte) (int, error) {
	if room := c.Max - c.Len(); room > 0 {
		c.Buffer.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}
