//go:build unix

package outfile

import (
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
)

// TestWriteFIFO writes into a FIFO that a goroutine reads: the reader gets
// the data and the FIFO is still a FIFO.
func TestWriteFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// Reached through a link too: the link is followed to the FIFO.
	symlink(t, "fifo", filepath.Join(dir, "link"))
	for _, path := range []string{fifo, filepath.Join(dir, "link")} {
		got := readAll(t, func() (io.ReadCloser, error) { return os.Open(fifo) }, func() error {
			return Write(path, []byte(payload), 0o644)
		})
		if got != payload {
			t.Errorf("%s: the reader got %q, want %q", filepath.Base(path), got, payload)
		}
		if fi, err := os.Lstat(fifo); err != nil || fi.Mode().Type() != fs.ModeNamedPipe {
			t.Fatalf("after the write: %v, %v; want a FIFO", fi, err)
		}
	}
	wantOnly(t, dir, "fifo", "link")
}

// TestWriteSocket sends the data to a listening Unix socket.
func TestWriteSocket(t *testing.T) {
	dir, err := os.MkdirTemp("", "of") // short: socket paths are limited to ~100 bytes
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "s")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Skipf("no Unix sockets: %v", err)
	}
	defer l.Close()
	got := readAll(t, func() (io.ReadCloser, error) { return l.Accept() }, func() error {
		return Write(sock, []byte(payload), 0o644)
	})
	if got != payload {
		t.Errorf("the listener got %q, want %q", got, payload)
	}
	if fi, err := os.Lstat(sock); err != nil || fi.Mode().Type() != fs.ModeSocket {
		t.Fatalf("after the write: %v, %v; want a socket", fi, err)
	}
}

// TestWriteDevNull writes to /dev/null, which must stay a character device
// (as root, in a private mount namespace: see testutil.DevNullSafe).
func TestWriteDevNull(t *testing.T) {
	if !testutil.DevNullSafe(t) {
		return
	}
	if err := Write("/dev/null", []byte(payload), 0o644); err != nil {
		t.Fatal(err)
	}
	testutil.AssertCharDevice(t, "/dev/null")
	matches, _ := filepath.Glob("/dev/.null.tmp-*")
	if len(matches) > 0 {
		t.Fatalf("temporary files left in /dev: %q", matches)
	}
}
