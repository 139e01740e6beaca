//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package rawconn

import "net"

// CanPeek is false: idle connections cannot be checked here.
const CanPeek = false

// Wrap returns c: raw system calls are made on Linux only.
func Wrap(c net.Conn) net.Conn { return c }

// IdleAlive cannot check a connection here: false.
func IdleAlive(net.Conn) bool { return false }
