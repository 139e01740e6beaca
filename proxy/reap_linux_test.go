//go:build linux

package proxy

import (
	"path/filepath"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/reap/reaptest"
)

// F13 (issue 21): a grandchild that called setsid outlived wrap once the
// server exited. RunStdio now ends it before it returns.
func TestStdioEndsSetsidGrandchild(t *testing.T) {
	file := filepath.Join(t.TempDir(), "pid")
	// reaptest.Run plays the spawner before any proxy role is looked at:
	// it leaves the grandchild behind, then copies stdin to stdout.
	in, out, wait := startStdio(t, nil, nil, "cat", reaptest.Env(file)...)
	pid := reaptest.Pid(t, file)
	reaptest.Alive(t, pid)
	if _, err := in.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n")); err != nil {
		t.Fatal(err)
	}
	if line, err := out.ReadString('\n'); err != nil {
		t.Fatalf("relay: %q %v", line, err)
	}
	in.Close()
	if code := wait(); code != 0 {
		t.Fatalf("exit status %d", code)
	}
	reaptest.WaitGone(t, pid)
}
