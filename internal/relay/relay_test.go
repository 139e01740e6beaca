package relay

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"
)

// TestRunStartFailureClosesPipes: a command that cannot start leaves no
// pipe open behind it.
func TestRunStartFailureClosesPipes(t *testing.T) {
	fds := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skip("no /proc/self/fd here")
		}
		return len(ents)
	}
	before := fds()
	for range 5 {
		if _, err := Run(context.Background(), []string{"/nonexistent/mcpdrill-relay-test"}, nil, strings.NewReader(""), io.Discard, io.Discard); err == nil {
			t.Fatal("Run of a missing command succeeded")
		}
	}
	if after := fds(); after > before {
		t.Fatalf("open descriptors %d → %d after failed starts", before, after)
	}
}
