package pipes

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"runtime"
	"testing"
)

// openFDs counts this process's open descriptors (Linux).
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd here")
	}
	return len(ents)
}

// TestStartFailureClosesPipes: a command that cannot start leaves no pipe
// open behind it, and its error is exec's, not ErrPipe.
func TestStartFailureClosesPipes(t *testing.T) {
	before := openFDs(t)
	for _, stderr := range []bool{false, true, false, true, false} {
		_, err := Start(exec.Command("/nonexistent/mcpdrill-pipes-test"), stderr)
		if err == nil || errors.Is(err, ErrPipe) {
			t.Fatalf("Start of a missing command: %v", err)
		}
	}
	if after := openFDs(t); after > before {
		t.Fatalf("open descriptors %d → %d after failed starts", before, after)
	}
}

// TestStartAndExitStatus runs a shell over the pipes Start makes: what is
// written to Stdin comes back on Stdout (and on Stderr when asked), the
// command's ends are closed here (Stdout ends when the command does), and
// ExitStatus reports its code, or 128+signal.
func TestStartAndExitStatus(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("uses /bin/sh")
	}
	cases := []struct {
		name   string
		script string
		stderr bool
		status int
	}{
		{"exit 0", "cat", false, 0},
		{"exit 3, stderr", "cat; echo oops >&2; exit 3", true, 3},
		{"killed by SIGTERM", "cat; kill -TERM $$", false, 128 + 15},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := openFDs(t)
			cmd := exec.Command("/bin/sh", "-c", tc.script)
			c, err := Start(cmd, tc.stderr)
			if err != nil {
				t.Fatal(err)
			}
			if (c.Stderr != nil) != tc.stderr {
				t.Fatalf("Stderr = %v, asked %v", c.Stderr, tc.stderr)
			}
			if _, err := io.WriteString(c.Stdin, "ping\n"); err != nil {
				t.Fatal(err)
			}
			c.Stdin.Close()
			out, err := io.ReadAll(c.Stdout) // ends only once the command's end is closed
			if err != nil || string(out) != "ping\n" {
				t.Fatalf("stdout %q, %v", out, err)
			}
			if tc.stderr {
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
