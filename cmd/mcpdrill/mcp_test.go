package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
	"github.com/mcpdrill/mcpdrill/scan"
)

// TestScanOfMCPServer: mcpdrill's own scan of `mcpdrill mcp` exits 0 with
// every tool's outputSchema enforceable and no error or warning.
func TestScanOfMCPServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and scans the binary")
	}
	bin := testutil.Binary(t)
	code, out, errOut := runCLI(t, "scan", "--format", "json", "--env", "HOME="+t.TempDir(), "--", bin, "mcp")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, errOut, out)
	}
	var rep scan.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Tools) != 5 || rep.Scores.Enforceable != len(rep.Tools) {
		t.Errorf("tools %d, enforceable %d", len(rep.Tools), rep.Scores.Enforceable)
	}
	for _, tr := range rep.Tools {
		if tr.OutputContract != scan.ContractEnforceable {
			t.Errorf("%s: %s (%s)", tr.Name, tr.OutputContract, tr.Reason)
		}
	}
	for _, f := range rep.Findings {
		if f.Severity != "info" {
			t.Errorf("%s %s %s: %s", f.Severity, f.Rule, f.Tool, f.Message)
		}
	}
}

// TestMCPFlags: what `mcpdrill mcp` refuses before it serves.
func TestMCPFlags(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(cfg, []byte(`{"mcpServers":{"x":{"command":"true"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"mcp", "extra"}, "takes no arguments"},
		{[]string{"mcp", "--config", cfg}, "--trust-workspace"},
		{[]string{"mcp", "--config", filepath.Join(dir, "missing.json")}, "--config"},
		{[]string{"mcp", "--allow-url", "127.0.0.1:3000"}, "want an origin"},
		{[]string{"mcp", "--allow-url", "http://u:p@127.0.0.1:3000"}, "want an origin"},
		{[]string{"mcp", "--deadline", "0s"}, "must be positive"},
	} {
		code, _, errOut := runCLI(t, tc.args...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, %q", tc.args, code, errOut)
		}
	}
	var got *mcpOptions
	app := appOf([]*cli.Command{mcpCommand(func(_ context.Context, o *mcpOptions) error { got = o; return nil })})
	if code := execute(app, []string{"mcpdrill", "mcp", "--config", cfg, "--trust-workspace", "--allow-url", "http://127.0.0.1:3000"}, os.Stderr); code != exitOK {
		t.Fatalf("exit %d", code)
	}
	if tg := got.server.Targets; len(tg.Files) != 1 || tg.Files[0] != cfg || !tg.TrustWorkspace || len(tg.AllowURLs) != 1 {
		t.Errorf("targets %+v", tg)
	}
}
