package pipes

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

func TestGrow(t *testing.T) {
	if runtime.GOOS != "linux" {
		if Grow(os.Stdin, 1<<20) != 0 {
			t.Fatal("Grow did something on a system without pipe sizes")
		}
		t.Skip("pipe sizes are Linux's")
	}
	limit := 1 << 20
	if b, err := os.ReadFile("/proc/sys/fs/pipe-max-size"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			limit = min(limit, n)
		}
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if got := Grow(w, limit); got < limit {
		t.Fatalf("Grow(pipe, %d) = %d", limit, got)
	}
	// The other end shares the buffer, and a smaller request never shrinks it.
	if got := Grow(r, 4096); got < limit {
		t.Fatalf("Grow(other end, 4096) = %d, want the pipe left at %d or more", got, limit)
	}
	// Reads and writes still work, without blocking mode changes.
	if _, err := w.Write([]byte("x\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	if n, err := r.Read(buf); err != nil || string(buf[:n]) != "x\n" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "file"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := Grow(f, limit); got != 0 {
		t.Fatalf("Grow(regular file) = %d, want 0", got)
	}
	if got := Grow(strings.NewReader(""), limit); got != 0 {
		t.Fatalf("Grow(non-file) = %d, want 0", got)
	}
}
