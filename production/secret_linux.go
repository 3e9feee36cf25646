package production

import (
	"os"

	"golang.org/x/sys/unix"
)

// secretFile returns a file holding data that lives in memory only (a
// memfd: never on a disk), at its start, for a child's standard input.
func secretFile(dir string, data []byte) (*os.File, error) {
	fd, err := unix.MemfdCreate("lodge-secret", unix.MFD_CLOEXEC)
	if err != nil {
		return secretTemp(dir, data)
	}
	return fillSecret(os.NewFile(uintptr(fd), "memfd:lodge-secret"), data)
}
