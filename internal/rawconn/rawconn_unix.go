//go:build linux || darwin || freebsd || netbsd || openbsd

package rawconn

import "net"

// CanPeek reports whether [IdleAlive] can check a connection here.
const CanPeek = true

// IdleAlive reports whether an idle connection is still open with nothing
// unread: its peer has neither closed it nor sent anything since. It never
// waits.
func IdleAlive(c net.Conn) bool {
	rc := rawOf(c)
	if rc == nil {
		return false
	}
	alive := false
	err := rc.Read(func(fd uintptr) bool {
		alive = peekEmpty(fd)
		return true
	})
	return err == nil && alive
}
