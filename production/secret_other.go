//go:build !linux

package production

import "os"

// secretFile returns a file holding data, at its start, for a child's
// standard input: without memfd, a temporary file of dir (mode 0600)
// removed before it is filled.
func secretFile(dir string, data []byte) (*os.File, error) { return secretTemp(dir, data) }
