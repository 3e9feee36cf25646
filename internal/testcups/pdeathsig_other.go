//go:build !linux

package testcups

import "os/exec"

// stopWithTest does nothing here: only Linux stops a child with its
// parent.
func stopWithTest(cmd *exec.Cmd) {}
