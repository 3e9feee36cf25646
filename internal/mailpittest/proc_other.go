//go:build !linux

package mailpittest

import (
	"errors"
	"os/exec"
)

var errNotLinux = errors.New("finding Mailpit's ports needs Linux's /proc")

func listeningPorts(pid int) ([]int, error) { return nil, errNotLinux }
func lockFile(path string) (func(), error)  { return nil, errNotLinux }
func stopWithTest(cmd *exec.Cmd)            {}
