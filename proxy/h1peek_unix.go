//go:build linux || darwin || freebsd || netbsd || openbsd

package proxy

import (
	"net"
	"syscall"
)

const canPeek = true

// idleAlive reports whether an idle connection is still open with nothing
// unread: the server has neither closed it nor sent anything since.
func idleAlive(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	alive := false
	var b [1]byte
	cerr := rc.Read(func(fd uintptr) bool {
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		_ = n
		alive = err == syscall.EAGAIN || err == syscall.EWOULDBLOCK
		return true // never wait
	})
	return cerr == nil && alive
}
