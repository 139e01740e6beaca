//go:build unix

package pipes

import (
	"io"
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// isBlocking reports whether f's open file is in blocking mode.
func isBlocking(t *testing.T, f *os.File) bool {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var flags uintptr
	var errno syscall.Errno
	if err := rc.Control(func(fd uintptr) {
		flags, _, errno = syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
	}); err != nil || errno != 0 {
		t.Fatalf("F_GETFL: %v, %v", err, errno)
	}
	return flags&syscall.O_NONBLOCK == 0
}

// TestStartAndExitStatus runs a shell over the pipes Start makes: what is
// written to Stdin comes back on Stdout (and on Stderr when asked), the
// command's ends are closed here (Stdout ends when the command does), and
// ExitStatus reports its code, or 128+signal. Stdin is non-blocking (for
// the poller) unless BlockingStdin asks otherwise.
func TestStartAndExitStatus(t *testing.T) {
	cases := []struct {
		name, script string
		opts         Option
		status       int
	}{
		{"exit 0", "cat", 0, 0},
		{"exit 3, stderr", "cat; echo oops >&2; exit 3", Stderr, 3},
		{"killed by SIGTERM", "cat; kill -TERM $$", 0, 128 + 15},
		{"blocking stdin", "cat", BlockingStdin, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := openFDs(t)
			cmd := exec.Command("/bin/sh", "-c", tc.script)
			c, err := Start(cmd, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			stderr := tc.opts&Stderr != 0
			if (c.Stderr != nil) != stderr {
				t.Fatalf("Stderr = %v, asked %v", c.Stderr, stderr)
			}
			if blocking := tc.opts&BlockingStdin != 0; blocking != isBlocking(t, c.Stdin) {
				t.Fatalf("stdin blocking: %v, asked %v", !blocking, blocking)
			}
			if _, err := io.WriteString(c.Stdin, "ping\n"); err != nil {
				t.Fatal(err)
			}
			c.Stdin.Close()
			out, err := io.ReadAll(c.Stdout) // ends only once the command's end is closed
			if err != nil || string(out) != "ping\n" {
				t.Fatalf("stdout %q, %v", out, err)
			}
			if stderr {
				if errOut, _ := io.ReadAll(c.Stderr); string(errOut) != "oops\n" {
					t.Fatalf("stderr %q", errOut)
				}
				c.Stderr.Close()
			}
			c.Stdout.Close()
			werr := cmd.Wait()
			if got := ExitStatus(cmd, werr); got != tc.status {
				t.Fatalf("ExitStatus = %d, want %d (%v)", got, tc.status, werr)
			}
			if after := openFDs(t); after > before {
				t.Fatalf("open descriptors %d → %d", before, after)
			}
		})
	}
	if got := ExitStatus(exec.Command("true"), nil); got != 1 {
		t.Fatalf("ExitStatus of a command never run = %d, want 1", got)
	}
}
