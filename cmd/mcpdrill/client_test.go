package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdrill/mcpdrill/clientdrill"
	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
)

// The README's client drill, as written, from the repository root:
// `mcpdrill client -- node examples/client/sdk-client.mjs` runs the whole
// catalogue over stdio and HTTP with a verdict for each, and two runs give
// the same JSON byte for byte.
func TestClientExample(t *testing.T) {
	if testing.Short() {
		t.Skip("runs node twice per scenario")
	}
	root := testutil.ModuleRoot(t)
	if _, err := os.Stat(filepath.Join(root, "examples/client/node_modules/@modelcontextprotocol/sdk")); err != nil {
		if os.Getenv("MCPDRILL_REQUIRE_NPM") != "" {
			t.Fatal("examples/client is not installed (make npm)")
		}
		t.Skip("examples/client is not installed (make npm); set MCPDRILL_REQUIRE_NPM to fail instead")
	}
	bin := testutil.Binary(t)
	var docs [2][]byte
	for i := range docs {
		cmd := exec.Command(bin, "client", "--json", "--", "node", "examples/client/sdk-client.mjs")
		cmd.Dir = root
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("run %d: %v\n%s", i+1, err, stderr.String())
		}
		docs[i] = out
	}
	var rep clientdrill.Report
	if err := json.Unmarshal(docs[0], &rep); err != nil {
		t.Fatal(err)
	}
	if want := 2 * len(clientdrill.Catalogue()); len(rep.Results) != want {
		t.Fatalf("%d results, want %d", len(rep.Results), want)
	}
	for _, r := range rep.Results {
		if r.Outcome == "" || r.Outcome == clientdrill.NoCall || r.Outcome == clientdrill.Hung || r.Outcome == clientdrill.Crashed {
			t.Errorf("%s over %s: %s (%+v)", r.Scenario, r.Transport, r.Outcome, r.Evidence)
		}
	}
	if !bytes.Equal(docs[0], docs[1]) {
		t.Errorf("two runs differ:\n%s\n---\n%s", docs[0], docs[1])
	}
}

// Usage errors of `mcpdrill client`.
func TestClientUsage(t *testing.T) {
	for _, args := range [][]string{
		{"client"},
		{"client", "--only", "no-such-scenario", "--", "true"},
		{"client", "--transport", "ws", "--", "true"},
		{"client", "--timeout", "0s", "--", "true"},
		{"client", "--format", "yaml", "--", "true"},
	} {
		var stderr bytes.Buffer
		if code := execute(newApp(), append([]string{"mcpdrill"}, args...), &stderr); code != exitUsage {
			t.Errorf("%v: exit %d, want %d (%s)", args, code, exitUsage, stderr.String())
		}
	}
	var stderr bytes.Buffer
	app := newApp()
	var out bytes.Buffer
	app.Writer = &out
	if code := execute(app, []string{"mcpdrill", "client", "--list", "--json"}, &stderr); code != exitOK {
		t.Fatalf("client --list: exit %d: %s", code, stderr.String())
	}
	var cat []clientdrill.Scenario
	if err := json.Unmarshal(out.Bytes(), &cat); err != nil || len(cat) != len(clientdrill.Catalogue()) {
		t.Fatalf("client --list --json: %v, %d scenarios", err, len(cat))
	}
	// A command that cannot start is exit 3 (the target is unreachable).
	stderr.Reset()
	if code := execute(newApp(), []string{"mcpdrill", "client", "--only", "duplicate-reply", "--transport", "http", "--", "/nonexistent/client"}, &stderr); code != exitUnreachable || !strings.Contains(stderr.String(), "start") {
		t.Errorf("a client that cannot start: exit %d (%s), want %d", code, stderr.String(), exitUnreachable)
	}
}
