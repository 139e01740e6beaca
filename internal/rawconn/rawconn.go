// Package rawconn makes a socket's reads and writes without the Go
// runtime's system-call bookkeeping, and checks an idle connection for
// liveness.
//
// A read or write on a net.Conn enters the runtime as a system call that
// may block (entersyscall), though Go's sockets are non-blocking and the
// poller does the waiting. When every thread of a process has been idle,
// entering such a call wakes the runtime's monitor thread (sysmon) from its
// deep sleep, and the monitor then polls every 20 µs until the process is
// idle again. A proxy idles between short exchanges, so it paid a thread
// wake-up on the critical path and tens of microseconds of CPU per
// exchange. [Wrap] returns a connection whose reads and writes are raw
// non-blocking system calls made through [syscall.RawConn]: the poller
// still waits, deadlines and Close still apply, and the monitor sleeps on.
// Where that is not available (other systems, connections without a
// descriptor) Wrap returns the connection unchanged.
package rawconn

import (
	"net"
	"syscall"
)

// rawOf returns c's raw connection, or nil.
func rawOf(c net.Conn) syscall.RawConn {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return rc
}
