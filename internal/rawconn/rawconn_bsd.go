//go:build darwin || freebsd || netbsd || openbsd

package rawconn

import (
	"net"
	"syscall"
)

// Wrap returns c: raw system calls are made on Linux only.
func Wrap(c net.Conn) net.Conn { return c }

// peekEmpty reports whether the socket fd is open with nothing to read.
func peekEmpty(fd uintptr) bool {
	var b [1]byte
	_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	return err == syscall.EAGAIN || err == syscall.EWOULDBLOCK
}
