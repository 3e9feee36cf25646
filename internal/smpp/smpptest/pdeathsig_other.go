//go:build !linux

package smpptest

import "os/exec"

// stopWithTest: only Linux can stop a child when its parent dies; the
// test's cleanup stops it elsewhere.
func stopWithTest(*exec.Cmd) {}
