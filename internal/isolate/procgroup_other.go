//go:build !unix

package isolate

import "os/exec"

// KillGroup: outside Unix only the process itself is killed.
func KillGroup(*exec.Cmd) {}
