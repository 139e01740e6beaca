package proxy

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestOfficialConformanceThroughWrap runs scripts/conformance.sh: the official
// MCP conformance suite (pinned in testdata/conformance, with its Node 22)
// against the Go SDK's stateful everything-server, directly and through
// `mcpdrill wrap` with no faults. The script fails when the two scores differ
// scenario by scenario or the direct score is below its baseline.
//
// It needs npm, network access for the first `npm ci` and about 10 s, so it
// runs only with MCPDRILL_CONFORMANCE=1 (`make conformance` runs the script
// itself).
func TestOfficialConformanceThroughWrap(t *testing.T) {
	if os.Getenv("MCPDRILL_CONFORMANCE") != "1" {
		t.Skip("set MCPDRILL_CONFORMANCE=1 to run the official conformance suite direct vs through wrap")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("bash: %v", err)
	}
	script, err := filepath.Abs(filepath.Join("..", "scripts", "conformance.sh"))
	if err != nil {
		t.Fatal(err)
	}
	budget := 5 * time.Minute
	if d, ok := t.Deadline(); ok && time.Until(d)-30*time.Second < budget {
		budget = time.Until(d) - 30*time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()

	cmd := exec.CommandContext(ctx, bash, script)
	cmd.Env = os.Environ()
	if os.Getenv("CONFORMANCE_TIMEOUT") == "" {
		cmd.Env = append(cmd.Env, "CONFORMANCE_TIMEOUT=120")
	}
	// SIGTERM lets the script's trap stop the servers and the suite it started.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 15 * time.Second
	out, err := cmd.CombinedOutput()
	t.Logf("scripts/conformance.sh output:\n%s", out)
	var exit *exec.ExitError
	switch {
	case err == nil:
	case ctx.Err() != nil:
		t.Fatalf("conformance script did not finish within %v", budget)
	case errors.As(err, &exit) && exit.ExitCode() == 1:
		t.Fatal("the conformance score through mcpdrill wrap differs from the direct one, or the direct one is below its baseline (see the output above)")
	default:
		t.Fatalf("conformance script could not run: %v (see the output above)", err)
	}
}
