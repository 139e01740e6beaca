package studies

import (
	"context"
	"runtime"
	"slices"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
	"github.com/mcpdrill/mcpdrill/scan"
)

// A stdio server that fails at start-up gives a row whose reason is what
// it did and said, as scan reports it.
func TestStartupFailureRowSaysWhy(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the server is a POSIX shell")
	}
	spec, err := ParseSpec([]byte(`{"mcpServers": {"needs-key": {"command": "/bin/sh",
  "args": ["-c", "echo 'missing API_KEY' >&2; exit 1"]}}}`), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), spec, Options{Scan: scan.Run, Jobs: 1, Deadline: testutil.Hang, RequestTimeout: testutil.Hang})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Servers[0]
	want := `no MCP session could be opened: the server exited with status 1 during the handshake; its stderr ends "missing API_KEY"`
	if r.Status != StatusFailed || r.Failure != FailUnreachable || r.Reason != want {
		t.Fatalf("row %s/%s %q\nwant reason %q", r.Status, r.Failure, r.Reason, want)
	}
	if got := res.Meta.Servers["needs-key"].Stderr; !slices.Contains(got, "missing API_KEY") {
		t.Errorf("stderr meta %q", got)
	}
}
