package isolate

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// LimitAddressSpace caps this process's address space at what it has now
// plus extra bytes. Relative, because the Go runtime (and far more the
// race detector) reserves address space it never touches.
func LimitAddressSpace(extra int64) error {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return err
	}
	f := bytes.Fields(b)
	if len(f) == 0 {
		return syscall.EINVAL
	}
	pages, err := strconv.ParseUint(string(f[0]), 10, 64)
	if err != nil {
		return err
	}
	lim := pages*uint64(os.Getpagesize()) + uint64(extra)
	var cur syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &cur); err == nil && cur.Max < lim {
		lim = cur.Max
	}
	return syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: lim, Max: lim})
}
