//go:build unix

package scan

import (
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/mcp"
	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
	"github.com/mcpdrill/mcpdrill/report"
)

// The pinned npm servers (testdata/npm/package-lock.json), scanned as a user
// would: they are peers mcpdrill did not write.

func TestNPMServersOverStdio(t *testing.T) {
	if testing.Short() {
		t.Skip("npm servers start Node.js")
	}
	tests := []struct {
		env       string
		args      func(t *testing.T) []string
		wantTools string // one tool the server is known to list
	}{
		{"MCPDRILL_NPM_EVERYTHING", nil, "echo"},
		{"MCPDRILL_NPM_FILESYSTEM", func(t *testing.T) []string { return []string{t.TempDir()} }, "read_text_file"},
		{"MCPDRILL_NPM_MEMORY", nil, "create_entities"},
	}
	for _, tc := range tests {
		t.Run(tc.env, func(t *testing.T) {
			t.Parallel()
			cmd := testutil.NPMServer(t, tc.env)
			if tc.args != nil {
				cmd = append(cmd, tc.args(t)...)
			}
			cfg := mcp.Config{Command: cmd, RequestTimeout: 10 * time.Second}
			if tc.env == "MCPDRILL_NPM_MEMORY" {
				cfg.Env = []string{"MEMORY_FILE_PATH=" + t.TempDir() + "/memory.jsonl"}
			}
			start := time.Now()
			r := runScan(t, cfg)
			t.Logf("%s: %s %s, %s over %s, %d tools, declared %d, enforceable %d, vacuous %d, probes %s, %v",
				tc.env, r.Server.Name, r.Server.Version, r.Protocol.Revision, r.Protocol.Transport,
				r.Scores.Tools, r.Scores.Declared, r.Scores.Enforceable, r.Scores.Vacuous, verdicts(r), time.Since(start).Round(time.Millisecond))
			checkRealServer(t, r, tc.wantTools)
			// Issue 15: the TypeScript SDK drops the malformed and invalid
			// frames; the barrier tells it from a dead server, and a dropped
			// frame alone does not fail the default gate.
			for _, name := range []string{"malformed_json", "invalid_request"} {
				if p := probe(r, name); p.Verdict != VerdictIgnored {
					t.Errorf("%s: %+v, want ignored", name, p)
				}
			}
			if report.Fails(r.Findings, report.SeverityError) {
				t.Errorf("a finding fails --fail-on error: %+v", r.Findings)
			}
			// Issue 38: the scan sees the TypeScript SDK's McpServer in
			// their answers, as their installed package.json says (the
			// second method), and names it in the findings that are its
			// behaviours: no conformance finding fails --fail-on warn.
			if r.SDK == nil || r.SDK.Name != SDKTypeScript || r.SDK.Layer != "McpServer" {
				t.Errorf("sdk %+v", r.SDK)
			}
			if !dependsOnTSSDK(t, cmd[0]) {
				t.Errorf("%s: the package does not depend on @modelcontextprotocol/sdk", tc.env)
			}
			var conf []report.Finding
			for _, f := range r.Findings {
				if !strings.HasPrefix(f.Rule, "MCP-OUT-") {
					conf = append(conf, f)
				}
			}
			if report.Fails(conf, report.SeverityWarn) {
				t.Errorf("a conformance finding fails --fail-on warn: %+v", conf)
			}
		})
	}
}

// dependsOnTSSDK reads the package.json of the npm package whose bin is
// bin: does it depend on the TypeScript SDK?
func dependsOnTSSDK(t *testing.T, bin string) bool {
	t.Helper()
	real, err := filepath.EvalSymlinks(bin)
	if err != nil {
		t.Fatal(err)
	}
	for d := filepath.Dir(real); filepath.Dir(d) != d; d = filepath.Dir(d) {
		b, err := os.ReadFile(filepath.Join(d, "package.json"))
		if err != nil {
			continue
		}
		var p struct {
			Dependencies map[string]string `json:"dependencies"`
		}
		if err := json.Unmarshal(b, &p); err != nil {
			t.Fatal(err)
		}
		_, ok := p.Dependencies["@modelcontextprotocol/sdk"]
		return ok
	}
	return false
}

func TestNPMEverythingOverHTTP(t *testing.T) {
	if testing.Short() {
		t.Skip("npm servers start Node.js")
	}
	bin := testutil.NPMServer(t, "MCPDRILL_NPM_EVERYTHING")
	addr := testutil.FreeAddr(t)
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(bin[0], "streamableHttp")
	cmd.Env = append(cmd.Environ(), "PORT="+port)
	start(t, cmd)
	waitListening(t, addr, 30*time.Second)
	start := time.Now()
	r := runScan(t, mcp.Config{URL: "http://" + addr + "/mcp", RequestTimeout: 10 * time.Second})
	t.Logf("everything over HTTP: %s %s, %s over %s, %d tools, declared %d, enforceable %d, vacuous %d, probes %s, %v",
		r.Server.Name, r.Server.Version, r.Protocol.Revision, r.Protocol.Transport,
		r.Scores.Tools, r.Scores.Declared, r.Scores.Enforceable, r.Scores.Vacuous, verdicts(r), time.Since(start).Round(time.Millisecond))
	if r.Protocol.Transport != string(mcp.TransportStreamableHTTP) {
		t.Errorf("transport %q", r.Protocol.Transport)
	}
	checkRealServer(t, r, "echo")
	goldenRules(t, "npm-everything-transport-http", r, transportRules)
	// Issue 15: its 400 carrying -32700 for an invalid request is the
	// "HTTP 4xx" the expectation accepts, and the status is recorded.
	if p := probe(r, "invalid_request"); p.Conformant == nil || !*p.Conformant || p.HTTPStatus != 400 {
		t.Errorf("invalid_request over HTTP: %+v", p)
	}
}

func checkRealServer(t *testing.T, r *Report, wantTool string) {
	t.Helper()
	if !r.Established {
		t.Fatalf("scan not established: %+v", r.Findings)
	}
	if r.Protocol.Revision == "" || r.Server.Name == "" {
		t.Errorf("no negotiated revision or server name: %+v %+v", r.Protocol, r.Server)
	}
	if !slices.ContainsFunc(r.Tools, func(tr ToolReport) bool { return tr.Name == wantTool }) {
		t.Errorf("tool %s not listed", wantTool)
	}
	if len(r.Probes) < 6 {
		t.Errorf("%d probes", len(r.Probes))
	}
	if p := probe(r, "unknown_method"); p.Verdict != VerdictJSONRPCError || p.ErrorCode == nil || *p.ErrorCode != -32601 {
		t.Errorf("unknown_method on a reference server: %+v", p)
	}
	if r.Scores.OutputCoverage == nil || r.Scores.ErrorHandling == nil {
		t.Errorf("scores missing: %+v", r.Scores)
	}
}

func verdicts(r *Report) string {
	s := ""
	for _, p := range r.Probes {
		if s != "" {
			s += " "
		}
		s += p.Name + "=" + string(p.Verdict)
	}
	return s
}

func waitListening(t *testing.T, addr string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("nothing listening on %s after %v", addr, limit)
}
