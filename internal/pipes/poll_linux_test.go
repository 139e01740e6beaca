package pipes

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestPollable: a blocking pipe (as a process inherits its stdin) is read
// through the poller (deadlines work, which they do only for pollable
// files) by a duplicate; done puts the pipe back in blocking mode and
// leaves the original open. Files and non-blocking pipes are left alone.
func TestPollable(t *testing.T) {
	var fds [2]int
	if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	r, w := os.NewFile(uintptr(fds[0]), "r"), os.NewFile(uintptr(fds[1]), "w")
	defer r.Close()
	defer w.Close()
	if err := r.SetReadDeadline(time.Now()); !errors.Is(err, os.ErrNoDeadline) {
		t.Fatalf("a blocking pipe took a deadline: %v", err)
	}
	pr, done := Pollable(r)
	if pr == r {
		t.Fatal("Pollable returned the blocking pipe itself")
	}
	if err := pr.SetReadDeadline(time.Now().Add(10 * time.Millisecond)); err != nil {
		t.Fatalf("the pollable pipe refused a deadline: %v", err)
	}
	if _, err := pr.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read with nothing written: %v, want the deadline", err)
	}
	_ = pr.SetReadDeadline(time.Time{})
	if _, err := w.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if b := make([]byte, 4); func() bool { n, err := pr.Read(b); return err != nil || string(b[:n]) != "x" }() {
		t.Fatal("the pollable pipe did not read what was written")
	}
	done()
	if flags := fcntlFlags(t, fds[0]); flags&syscall.O_NONBLOCK != 0 {
		t.Fatal("done left the pipe non-blocking")
	}
	if _, err := w.Write([]byte("y")); err != nil {
		t.Fatal(err)
	}
	if n, err := r.Read(make([]byte, 4)); err != nil || n != 1 {
		t.Fatalf("the original after done: %d, %v", n, err)
	}

	nr, nw, err := os.Pipe() // non-blocking already
	if err != nil {
		t.Fatal(err)
	}
	defer nr.Close()
	defer nw.Close()
	f, err := os.Create(filepath.Join(t.TempDir(), "file"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, g := range []*os.File{nr, f} {
		if p, done := Pollable(g); p != g {
			t.Errorf("Pollable(%s) made a new file", g.Name())
		} else {
			done()
		}
	}
}

func fcntlFlags(t *testing.T, fd int) uintptr {
	t.Helper()
	flags, _, e := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFL, 0)
	if e != 0 {
		t.Fatal(e)
	}
	return flags
}
