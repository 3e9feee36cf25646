//go:build unix

package server

import (
	"sync"
	"syscall"
)

// openFiles is openFileLimit as it was the first time it was asked: the
// raise is made once, at start (later, an operator's prlimit stands).
var openFiles = sync.OnceValue(openFileLimit)

// openFileLimit returns the process's limit on open descriptors
// (RLIMIT_NOFILE), raising its soft limit to the hard one first. Go's
// runtime already makes that raise at start on Linux since Go 1.19 (and
// gives the child processes it starts the original soft limit back); this
// covers systems where it did not. 0 when unknown.
func openFileLimit() uint64 {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0
	}
	if r.Cur < r.Max {
		up := r
		up.Cur = r.Max
		if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &up) == nil {
			r = up
		}
	}
	return r.Cur
}
