package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// clientFiles are one configuration of each client `configs` reads, by
// where it goes under a scratch home ($HOME, with XDG_CONFIG_HOME at
// $HOME/.config) and workspace ($HOME/src/proj), each written the way its
// client writes it.
var clientFiles = map[string]string{
	".codeium/windsurf/mcp_config.json": `{"mcpServers": {"wind": {"serverUrl": "https://h.example/mcp"}}}`,
	".codex/config.toml":                "model = \"gpt-5\"\n\n# servers\n[mcp_servers.codex-one]\ncommand = \"npx\"\nargs = [\"-y\", \"pkg\"]\n\n[mcp_servers.codex-off]\ncommand = \"x\"\nenabled = false\n",
	".gemini/settings.json":             `{"theme": "x", "mcpServers": {"gem": {"httpUrl": "https://h.example/mcp", "headers": {"Authorization": "Bearer $GEM_TOKEN"}}}}`,
	".config/zed/settings.json":         "// Zed\n{\n  \"context_servers\": {\n    \"zed-one\": {\"command\": \"zed-srv\", \"args\": []},\n    \"ext\": {\"source\": \"extension\", \"settings\": {}}\n  }\n}\n",
	".config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json": `{"mcpServers": {"cline-one": {"command": "node", "args": ["a.js"], "disabled": false, "autoApprove": []}}}`,
	".config/Code/User/globalStorage/rooveterinaryinc.roo-cline/settings/mcp_settings.json":   `{"mcpServers": {"roo-one": {"type": "streamable-http", "url": "https://h.example/mcp"}}}`,
	".config/opencode/opencode.json":   `{"$schema": "https://opencode.ai/config.json", "mcp": {"oc": {"type": "local", "command": ["oc-srv", "--x"]}}}`,
	".kiro/settings/mcp.json":          `{"mcpServers": {"kiro-one": {"command": "k", "env": {"A": "${A}"}}}}`,
	".claude.json":                     `{"numStartups": 3, "mcpServers": {"cc-user": {"command": "u"}}, "projects": {"$WS": {"mcpServers": {"cc-local": {"command": "l"}}}}}`,
	"src/proj/.codex/config.toml":      "[mcp_servers.ws-codex]\ncommand = \"./tools/srv\"\n",
	"src/proj/.roo/mcp.json":           `{"mcpServers": {"ws-roo": {"command": "r"}}}`,
	"src/proj/.kiro/settings/mcp.json": `{"mcpServers": {"ws-kiro": {"command": "k"}}}`,
}

// scratchClients writes clientFiles under a new home and points the
// environment at it; it returns the home and the workspace.
func scratchClients(t *testing.T) (home, ws string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the scratch home is laid out as on Linux ($XDG_CONFIG_HOME)")
	}
	home = t.TempDir()
	ws = filepath.Join(home, "src", "proj")
	for rel, content := range clientFiles {
		p := filepath.Join(home, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.ReplaceAll(content, "$WS", ws)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("CODEX_HOME", "")
	return home, ws
}

// TestConfigsEveryClient: `configs --json` finds each client's file in a
// scratch home and workspace, with its servers, its scope, and Claude
// Code's local scope for the workspace.
func TestConfigsEveryClient(t *testing.T) {
	home, ws := scratchClients(t)
	code, out, errOut := runCLI(t, "configs", "--json", "--workspace", ws)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc struct{ Configs []configEntry }
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range doc.Configs {
		var names []string
		for _, s := range e.Servers {
			n := s.Name + "/" + s.Transport
			if s.Disabled {
				n += "/off"
			}
			names = append(names, n)
		}
		if e.Error != "" {
			t.Errorf("%s: %s", e.Path, e.Error)
		}
		got[e.Client+" "+e.Scope+" "+strings.TrimPrefix(e.Path, home+"/")] = strings.Join(names, ",")
	}
	want := map[string]string{
		"Claude Code user .claude.json":                   "cc-user/stdio",
		"Claude Code local .claude.json":                  "cc-local/stdio",
		"Windsurf user .codeium/windsurf/mcp_config.json": "wind/http",
		"Codex user .codex/config.toml":                   "codex-off/stdio/off,codex-one/stdio",
		"Gemini CLI user .gemini/settings.json":           "gem/http",
		"Zed user .config/zed/settings.json":              "zed-one/stdio",
		"Cline user .config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json":  "cline-one/stdio",
		"Roo Code user .config/Code/User/globalStorage/rooveterinaryinc.roo-cline/settings/mcp_settings.json": "roo-one/http",
		"opencode user .config/opencode/opencode.json":                                                        "oc/stdio",
		"Kiro user .kiro/settings/mcp.json":                                                                   "kiro-one/stdio",
		"Codex workspace src/proj/.codex/config.toml":                                                         "ws-codex/stdio",
		"Roo Code workspace src/proj/.roo/mcp.json":                                                           "ws-roo/stdio",
		"Kiro workspace src/proj/.kiro/settings/mcp.json":                                                     "ws-kiro/stdio",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: servers %q, want %q", k, got[k], v)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected entry %s", k)
		}
	}
}

// TestWorkspaceClientsUntrusted: a workspace's Codex, Roo and Kiro files
// start nothing until trusted, as a .vscode/mcp.json does not.
func TestWorkspaceClientsUntrusted(t *testing.T) {
	_, ws := scratchClients(t)
	t.Setenv("GEM_TOKEN", "g")
	t.Setenv("A", "a")
	code, _, errOut := runCLI(t, "scan", "--config", "auto", "--workspace", ws, "--no-second-connection")
	if code != exitUsage {
		t.Fatalf("exit %d, want 2: %s", code, errOut)
	}
	for _, f := range []string{".codex/config.toml", ".roo/mcp.json", ".kiro/settings/mcp.json"} {
		if !strings.Contains(errOut, filepath.Join(ws, f)) {
			t.Errorf("the refusal does not name %s:\n%s", f, errOut)
		}
	}
	for _, own := range []string{"mcp_config.json", "opencode.json", "cline_mcp_settings.json"} {
		if strings.Contains(errOut, own) {
			t.Errorf("the user's own %s is listed as untrusted:\n%s", own, errOut)
		}
	}
	if !slices.ContainsFunc(strings.Split(errOut, "\n"), func(l string) bool { return strings.Contains(l, "--trust-workspace") }) {
		t.Errorf("no word of --trust-workspace:\n%s", errOut)
	}
}

// TestToolCollisionAcrossServers: two servers of one configuration that
// list the same tool names get a collision finding each, placed on their
// own entries; a configuration of one server gets none.
func TestToolCollisionAcrossServers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers")
	}
	configEnv(t)
	cfg := filepath.Join(t.TempDir(), "mcp.json")
	entry := `{"command": "${MCPDRILL_TEST_SELF}", "args": ["-test.run=^$"], "env": {"MCPDRILL_TESTBED_CHILD": "{\"Profile\":\"good\"}"}}`
	if err := os.WriteFile(cfg, []byte("{\"mcpServers\": {\n  \"alpha\": "+entry+",\n  \"beta\": "+entry+"\n}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "scan", "--trust-workspace", "--config", cfg, "--json", "--fail-on", "never", "--no-second-connection")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	collisions := map[string][]string{}
	for _, s := range scannedServers(t, out) {
		for _, f := range s.Report.Findings {
			if f.Rule == "MCP-CONFIG-TOOL-COLLISION" {
				collisions[s.Server] = append(collisions[s.Server], f.Tool+": "+f.Message)
			}
		}
	}
	if len(collisions["alpha"]) == 0 || len(collisions["alpha"]) != len(collisions["beta"]) ||
		!strings.Contains(collisions["alpha"][0], `also listed by server "beta"`) || !strings.Contains(collisions["beta"][0], `also listed by server "alpha"`) {
		t.Fatalf("collisions %q", collisions)
	}
	code, out, _ = runCLI(t, "scan", "--trust-workspace", "--config", cfg, "--server", "alpha", "--json", "--fail-on", "never", "--no-second-connection")
	if code != exitOK || strings.Contains(out, "MCP-CONFIG-TOOL-COLLISION") {
		t.Errorf("one server alone: exit %d, a collision reported", code)
	}
	// In SARIF the findings sit on each server's own line.
	code, out, _ = runCLI(t, "scan", "--trust-workspace", "--config", cfg, "--format", "github", "--fail-on", "never", "--no-second-connection")
	if code != exitOK || !strings.Contains(out, ",line=2,title=MCP-CONFIG-TOOL-COLLISION") || !strings.Contains(out, ",line=3,title=MCP-CONFIG-TOOL-COLLISION") {
		t.Errorf("annotations:\n%s", out)
	}
}

// TestConfigExitIsTheWorstVerdict: with --config, a server that fails its
// gate is exit 1 even when another is unreachable (issue 40: exit 3 hid
// the other server's errors); without a failing finding it is exit 3.
// Either way stderr names the unreachable server and counts them.
func TestConfigExitIsTheWorstVerdict(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers")
	}
	configEnv(t)
	cfg := filepath.Join(t.TempDir(), "mcp.json")
	doc := `{"mcpServers": {
  "sloppy": {"command": "${MCPDRILL_TEST_SELF}", "args": ["-test.run=^$"], "env": {"MCPDRILL_TESTBED_CHILD": "{\"Profile\":\"sloppy-errors\"}"}},
  "gone": {"command": "/nonexistent/mcp-server"}
}}`
	if err := os.WriteFile(cfg, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		failOn string
		code   int
	}{{"error", exitFindings}, {"never", exitUnreachable}} {
		code, _, errOut := runCLI(t, "scan", "--trust-workspace", "--config", cfg, "--fail-on", tc.failOn, "--no-second-connection", "--format", "sarif")
		if code != tc.code {
			t.Errorf("--fail-on %s: exit %d, want %d\n%s", tc.failOn, code, tc.code, errOut)
		}
		if !strings.Contains(errOut, `mcpdrill: server "gone" of `+cfg+": no MCP session could be opened") ||
			!strings.Contains(errOut, "1 of 2 servers unreachable or refused the protocol") {
			t.Errorf("--fail-on %s: stderr does not name the server and count:\n%s", tc.failOn, errOut)
		}
	}
}
