package smpptest

import (
	"os/exec"
	"syscall"
)

// stopWithTest has the kernel stop the server when the test process
// dies without its cleanup (a test binary killed at its timeout).
func stopWithTest(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
