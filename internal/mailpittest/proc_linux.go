package mailpittest

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// listeningPorts returns the ports of the TCP sockets pid listens on:
// its socket descriptors (/proc/PID/fd, "socket:[inode]") matched with
// the listening sockets of its network namespace (/proc/PID/net/tcp).
func listeningPorts(pid int) ([]int, error) {
	proc := filepath.Join("/proc", strconv.Itoa(pid))
	table, err := os.ReadFile(filepath.Join(proc, "net", "tcp"))
	if err != nil {
		return nil, err
	}
	listening := listeningTCP(table)
	fds, err := os.ReadDir(filepath.Join(proc, "fd"))
	if err != nil {
		return nil, err
	}
	var ports []int
	for _, fd := range fds {
		link, err := os.Readlink(filepath.Join(proc, "fd", fd.Name()))
		if err != nil {
			continue // closed meanwhile
		}
		inode, ok := strings.CutPrefix(link, "socket:[")
		if !ok {
			continue
		}
		if port, ok := listening[strings.TrimSuffix(inode, "]")]; ok && !slices.Contains(ports, port) {
			ports = append(ports, port)
		}
	}
	slices.Sort(ports)
	return ports, nil
}

// lockFile takes an exclusive lock on path (created if needed), held
// until the returned func is called or the process ends.
func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}

// stopWithTest has the kernel stop Mailpit when the test process dies
// without its cleanup (a test binary killed at its timeout).
func stopWithTest(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
