//go:build darwin || freebsd

package adminsock

import (
	"net"

	"golang.org/x/sys/unix"
)

// PeerUID is the effective user id of the process at the other end of c
// when it connected (LOCAL_PEERCRED).
func PeerUID(c *net.UnixConn) (uid int, known bool, err error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return 0, false, err
	}
	var cred *unix.Xucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptXucred(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	}); err != nil {
		return 0, false, err
	}
	if cerr != nil {
		return 0, false, cerr
	}
	return int(cred.Uid), true, nil
}
