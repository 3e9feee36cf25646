package testenv

import (
	"errors"
	"fmt"
	"os"
	"sync"
)

// ErrNotInstalled marks a start error that means a server's program is not
// on this machine: SharedServer.Get skips the test then, unless
// LODGE_REQUIRE_TOOLS is set (scripts/test sets it), where it fails.
var ErrNotInstalled = errors.New("not installed")

// SharedServer is one real server (PostgreSQL, versitygw ...) for the
// whole test binary: started by the first test that asks, stopped by the
// package's TestMain (Stop), its start error kept so that later tests
// fail or skip at once instead of starting it again.
type SharedServer[S interface{ Close() }] struct {
	Name    string // in messages: "testpg"
	Install string // what installs it: "scripts/test installs postgresql"
	Start   func() (S, error)

	mu      sync.Mutex
	s       S
	started bool
	err     error
}

// Get returns the server, starting it on first use.
func (o *SharedServer[S]) Get(t interface {
	Helper()
	Skipf(string, ...any)
	Fatalf(string, ...any)
}) S {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.started && o.err == nil {
		o.s, o.err = o.Start()
		o.started = o.err == nil
	}
	if o.err != nil {
		if errors.Is(o.err, ErrNotInstalled) && os.Getenv("LODGE_REQUIRE_TOOLS") == "" {
			t.Skipf("%s: %v (%s)", o.Name, o.err, o.Install)
		}
		t.Fatalf("%s: %v", o.Name, o.err)
	}
	return o.s
}

// Stop stops the server if it was started and forgets it.
func (o *SharedServer[S]) Stop() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.started {
		o.s.Close()
		var zero S
		o.s, o.started = zero, false
	}
}

// NotInstalled is an ErrNotInstalled error saying what is missing.
func NotInstalled(what string) error { return fmt.Errorf("%s is %w", what, ErrNotInstalled) }
