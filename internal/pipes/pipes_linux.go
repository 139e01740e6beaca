//go:build linux

package pipes

import "syscall"

const (
	fSetPipeSz = 1031 // F_SETPIPE_SZ
	fGetPipeSz = 1032 // F_GETPIPE_SZ
)

// Grow asks the kernel to let the pipe behind f (an *os.File, or anything
// with SyscallConn) hold at least size bytes, without changing the file's
// blocking mode. A pipe already that large is left as it is. It returns
// the pipe's capacity afterwards, or 0 when f is not a pipe or its size
// could not be read; a refused request (the user's pipe-size limits)
// leaves the pipe as it was.
func Grow(f any, size int) int {
	sc, ok := f.(syscall.Conn)
	if !ok {
		return 0
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return 0
	}
	got := 0
	_ = rc.Control(func(fd uintptr) {
		n, _, e := syscall.Syscall(syscall.SYS_FCNTL, fd, fGetPipeSz, 0)
		if e != 0 {
			return
		}
		got = int(n)
		if got >= size {
			return
		}
		if n, _, e := syscall.Syscall(syscall.SYS_FCNTL, fd, fSetPipeSz, uintptr(size)); e == 0 {
			got = int(n)
		}
	})
	return got
}
