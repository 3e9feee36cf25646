//go:build !linux && !darwin && !freebsd

package auth

import "net"

// peerUID cannot tell who connects here: the socket file's mode 0600 is
// the guard.
func peerUID(c *net.UnixConn) (uid int, known bool, err error) {
	return 0, false, nil
}
