package pipes

import (
	"errors"
	"os"
	"os/exec"
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
	for _, opts := range []Option{0, Stderr, BlockingStdin, Stderr | BlockingStdin, 0} {
		_, err := Start(exec.Command("/nonexistent/mcpdrill-pipes-test"), opts)
		if err == nil || errors.Is(err, ErrPipe) {
			t.Fatalf("Start of a missing command: %v", err)
		}
	}
	if after := openFDs(t); after > before {
		t.Fatalf("open descriptors %d → %d after failed starts", before, after)
	}
}
