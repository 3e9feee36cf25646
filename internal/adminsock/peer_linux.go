//go:build linux

package adminsock

import (
	"net"

	"golang.org/x/sys/unix"
)

// PeerUID is the effective user id of the process at the other end of c
// when it connected (SO_PEERCRED).
func PeerUID(c *net.UnixConn) (uid int, known bool, err error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return 0, false, err
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return 0, false, err
	}
	if cerr != nil {
		return 0, false, cerr
	}
	return int(cred.Uid), true, nil
}
