package rawconn

import (
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"unsafe"
)

// Conn is a connection whose Read and Write are raw system calls; every
// other method is the wrapped connection's. A read or write allocates
// nothing.
type Conn struct {
	net.Conn
	rc          syscall.RawConn
	read, write half
}

// half is the state of one direction's call in progress, under its lock
// (concurrent reads, or writes, take turns, as the descriptor's own lock
// would make them), with the callbacks that use it, made once.
type half struct {
	mu    sync.Mutex
	p     []byte
	n     int
	errno syscall.Errno
	wait  func(func(uintptr) bool) error // the raw connection's Read or Write
	fn    func(uintptr) bool             // readOnce or writeAll
}

// do runs one call on p.
func (h *half) do(p []byte) (int, syscall.Errno, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.p, h.n, h.errno = p, 0, 0
	err := h.wait(h.fn)
	n, errno := h.n, h.errno
	h.p = nil
	return n, errno, err
}

// Wrap returns c with raw reads and writes where c has a descriptor (a
// [syscall.Conn]), or c itself.
func Wrap(c net.Conn) net.Conn {
	rc := rawOf(c)
	if rc == nil {
		return c
	}
	w := &Conn{Conn: c, rc: rc}
	w.read.wait, w.read.fn = rc.Read, w.read.readOnce
	w.write.wait, w.write.fn = rc.Write, w.write.writeAll
	return w
}

// SyscallConn returns the wrapped connection's raw connection.
func (c *Conn) SyscallConn() (syscall.RawConn, error) { return c.rc, nil }

// Unwrap returns the wrapped connection.
func (c *Conn) Unwrap() net.Conn { return c.Conn }

// Read reads into p once the socket is readable (io.EOF at its end).
func (c *Conn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, errno, err := c.read.do(p)
	switch {
	case err != nil:
		return 0, err
	case errno != 0:
		return 0, c.opError("read", errno)
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// readOnce is Read's callback: false (wait) while the socket has nothing.
func (h *half) readOnce(fd uintptr) bool {
	for {
		r, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&h.p[0])), uintptr(len(h.p)))
		switch e {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false // the poller waits for the socket
		}
		h.n, h.errno = int(r), e
		return true
	}
}

// Write writes all of p, waiting for the socket to take more as it must;
// on an error it reports how much was written.
func (c *Conn) Write(p []byte) (int, error) {
	n, errno, err := c.write.do(p)
	if err == nil && errno != 0 {
		err = c.opError("write", errno)
	}
	return n, err
}

// writeAll is Write's callback: false (wait) while the socket takes no
// more and some of p is left.
func (h *half) writeAll(fd uintptr) bool {
	for h.n < len(h.p) {
		r, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&h.p[h.n])), uintptr(len(h.p)-h.n))
		switch e {
		case 0:
			h.n += int(r)
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false
		default:
			h.errno = e
			return true
		}
	}
	return true
}

func (c *Conn) opError(op string, errno syscall.Errno) error {
	return &net.OpError{Op: op, Net: c.LocalAddr().Network(), Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: os.NewSyscallError(op, errno)}
}

// peekEmpty reports whether the socket fd is open with nothing to read.
func peekEmpty(fd uintptr) bool {
	var b [1]byte
	_, _, e := syscall.RawSyscall6(syscall.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&b[0])), 1, syscall.MSG_PEEK|syscall.MSG_DONTWAIT, 0, 0)
	return e == syscall.EAGAIN
}
