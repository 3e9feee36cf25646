//go:build unix

package isolate

import (
	"os/exec"
	"syscall"
)

// KillGroup makes cmd a process group of its own and has its cancellation
// kill the whole group, so that the processes it started (Ghostscript)
// die with it instead of running on as orphans.
func KillGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
