//go:build !unix

package inspect

import "os/exec"

// killGroup: outside Unix only the process itself is killed.
func killGroup(*exec.Cmd) {}
