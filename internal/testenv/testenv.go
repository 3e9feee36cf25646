// Package testenv tells tests where they run: the repository root, the
// shared reference data beside it, and whether the race detector is on.
// It imports nothing of lodge, so that every package's tests can use it
// (internal/testref, which builds the reference index, cannot be imported
// by the packages the index is built from).
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// RepoRoot returns the repository root (the directory holding go.mod).
func RepoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod above %s", wd)
		}
	}
}

// DataDir returns the shared reference data folder.
func DataDir() (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	d := filepath.Join(root, "..", "shared", "data")
	if _, err := os.Stat(d); err != nil {
		return "", fmt.Errorf("shared reference data not found at %s: %w", d, err)
	}
	return d, nil
}

// Tool returns the path of an external program a test needs (qpdf,
// pdftoppm, gs ...). When it is missing the test is skipped with the
// reason, unless LODGE_REQUIRE_TOOLS is set (scripts/test sets it after
// installing them), where it fails: CI never passes by skipping.
func Tool(t interface {
	Helper()
	Skipf(string, ...any)
	Fatalf(string, ...any)
}, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	if os.Getenv("LODGE_REQUIRE_TOOLS") != "" {
		t.Fatalf("%s is needed and not installed (scripts/test installs it): %v", name, err)
	}
	t.Skipf("%s is not installed (scripts/test installs it)", name)
	return ""
}

// WaitFor polls cond every 10 ms until it holds, and fails the test with
// what it waited for after a minute: a wait on a condition, not a sleep
// that guesses how long something takes.
func WaitFor(t interface {
	Helper()
	Fatalf(string, ...any)
}, cond func() bool, what func() string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
