// Package testref gives tests the real reference index, built once per test
// binary from the shared reference data (../shared/data beside the
// repository) through the same import path that lodge import uses.
package testref

import (
	"context"
	"io"
	"os"
	"sync"
	"testing"

	"github.com/lodge-mail/lodge/index"
	"github.com/lodge-mail/lodge/internal/testenv"
	"github.com/lodge-mail/lodge/progress"
)

var (
	once   sync.Once
	shared *index.Index
	dir    string
	err    error
)

// RepoRoot returns the repository root (the directory holding go.mod).
func RepoRoot() (string, error) { return testenv.RepoRoot() }

// DataDir returns the shared reference data folder.
func DataDir() (string, error) { return testenv.DataDir() }

// RaceEnabled reports whether the race detector is on.
const RaceEnabled = testenv.RaceEnabled

// Index returns the index built from the shared data, failing the test when
// it cannot be built. It is shared by every test of the binary and must not
// be closed by them.
func Index(tb testing.TB) *index.Index {
	tb.Helper()
	once.Do(func() {
		var data string
		if data, err = DataDir(); err != nil {
			return
		}
		if dir, err = os.MkdirTemp("", "lodge-testref-"); err != nil {
			return
		}
		var src index.Sources
		if src, err = index.FindSources(data); err != nil {
			return
		}
		if _, err = index.Build(context.Background(), src, dir, index.BuildOptions{Progress: progress.Options{Out: io.Discard}}); err != nil {
			return
		}
		shared, err = index.Open(dir)
	})
	if err != nil {
		tb.Fatalf("test reference: %v", err)
	}
	return shared
}

// Cleanup closes the shared index and removes its directory; call it from
// TestMain after m.Run.
func Cleanup() {
	if shared != nil {
		shared.Close()
	}
	if dir != "" {
		os.RemoveAll(dir)
	}
}
