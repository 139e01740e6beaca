package pipes

import (
	"os"
	"syscall"
)

// Pollable returns a file that reads the pipe or socket behind f through
// the Go runtime's poller, and a function to call once reading is over. A
// file a process inherits as its standard input is in blocking mode, and
// Go reads such a file with a system call that holds an OS thread and its
// scheduler slot until data comes; a relay's reads then wait on the
// runtime's hand-off of that slot (see METHODOLOGY.md, large requests).
// The new file is a duplicate of f's descriptor, marked close-on-exec,
// with the open file's O_NONBLOCK set; done closes it and clears the flag
// again. f is returned unchanged (and done does nothing) when it is not a
// pipe or socket or is non-blocking already.
func Pollable(f *os.File) (pf *os.File, done func()) {
	pf, done = f, func() {}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) == 0 {
		return
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Control(func(u uintptr) {
		flags, _, e := syscall.Syscall(syscall.SYS_FCNTL, u, syscall.F_GETFL, 0)
		if e != 0 || flags&syscall.O_NONBLOCK != 0 {
			return
		}
		syscall.ForkLock.RLock() // no child inherits the duplicate
		fd, err := syscall.Dup(int(u))
		if err == nil {
			syscall.CloseOnExec(fd)
		}
		syscall.ForkLock.RUnlock()
		if err != nil {
			return
		}
		if err := syscall.SetNonblock(fd, true); err != nil {
			syscall.Close(fd)
			return
		}
		nf := os.NewFile(uintptr(fd), f.Name()) // non-blocking: pollable
		pf, done = nf, func() {
			_ = syscall.SetNonblock(fd, false)
			_ = nf.Close()
		}
	})
	return
}
