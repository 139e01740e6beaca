package main

import (
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/mcp"
	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
	"github.com/mcpdrill/mcpdrill/internal/testbed"
)

// The configurations under testdata/configs start this test binary as a
// testbed server (${env:MCPDRILL_TEST_SELF}) or reach one over HTTP
// (${env:MCPDRILL_TEST_URL}); configEnv sets those variables, and plants
// secrets in the others.
var configPlanted = map[string]string{
	"env placeholder in args":    "PLANTED_CFG_ARG_77a1",
	"env placeholder in env":     "PLANTED_CFG_ENV_77a1",
	"input in args, env, header": "PLANTED_CFG_INPUT_77a1",
	"url query value":            "PLANTED_CFG_Q_77a1",
	"command path":               "PLANTED_CFG_CMD_77a1",
}

// configEnv starts an HTTP testbed and sets the variables the testdata
// configurations use.
func configEnv(t *testing.T) {
	t.Helper()
	h, err := testbed.NewHandler(testbed.Options{Profile: "good"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	u := srv.URL + testbed.PathMCP + "?token=" + url.QueryEscape(configPlanted["url query value"])
	t.Setenv("MCPDRILL_TEST_SELF", self)
	t.Setenv("MCPDRILL_TEST_URL", u)
	t.Setenv("MCPDRILL_TEST_ARG", configPlanted["env placeholder in args"])
	t.Setenv("MCPDRILL_TEST_TOKEN", configPlanted["env placeholder in env"])
}

func configPath(name string) string { return filepath.Join("testdata", "configs", name) }

// scannedServers decodes `scan --config --json` into its servers' names,
// failing the test for a server that was not reached.
func scannedServers(t *testing.T, out string) []configScan {
	t.Helper()
	var doc []configScan
	mustJSON(t, out, &doc)
	for _, s := range doc {
		if s.Report == nil || !s.Report.Established {
			t.Errorf("server %s: not established", s.Server)
		}
	}
	return doc
}

func TestScanConfig(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers")
	}
	configEnv(t)
	// The testdata configurations are this test's own: trusted.
	scan := []string{"scan", "--json", "--fail-on", "never", "--no-second-connection", "--trust-workspace"}
	desktop, vscode, claude := configPath("claude_desktop_config.json"), configPath("vscode_mcp.json"), configPath("claude_code.mcp.json")
	tests := []struct {
		name    string
		args    []string
		code    int
		servers []string // of the JSON document, when the run succeeds
		stderr  string   // a part of stderr
	}{
		{"every server of a Claude Desktop config", append(scan, "--config", desktop), exitOK, []string{"good", "vacuous"}, `server "off" of ` + desktop + " is disabled"},
		{"one server", append(scan, "--config", desktop, "--server", "vacuous"), exitOK, []string{"vacuous"}, ""},
		{"a disabled server named", append(scan, "--config", desktop, "--server", "off", "--server", "good"), exitOK, []string{"good", "off"}, ""},
		{"an unknown server", append(scan, "--config", desktop, "--server", "nope"), exitUsage, nil, `--server "nope": no such server in ` + desktop + " (servers: good, off, vacuous)"},
		{"an input without --input", append(scan, "--config", vscode), exitUsage, nil, `input "api-key" (Testbed API key) has no value`},
		{"inputs given", append(scan, "--config", vscode, "--input", "api-key="+configPlanted["input in args, env, header"]), exitOK, []string{"local", "remote"}, ""},
		{"Claude Code defaults and plain variables", append(scan, "--config", claude), exitOK, []string{"remote"}, ""},
		{"--config and --url", append(scan, "--config", desktop, "--url", "http://127.0.0.1:1/mcp"), exitUsage, nil, "give no --url or server command"},
		{"--server without --config", append(scan, "--server", "good", "--url", "http://127.0.0.1:1/mcp"), exitUsage, nil, "--server goes with --config"},
		{"a missing file", append(scan, "--config", configPath("none.json")), exitUsage, nil, "--config: "},
		{"a bad --input", append(scan, "--config", vscode, "--input", "novalue"), exitUsage, nil, "--input: want ID=VALUE"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, tc.args...)
			if code != tc.code || !strings.Contains(errOut, tc.stderr) {
				t.Fatalf("exit %d, want %d; stderr (want %q):\n%s\nstdout:\n%s", code, tc.code, tc.stderr, errOut, out)
			}
			if tc.servers == nil {
				if out != "" {
					t.Errorf("stdout on a failed run:\n%s", out)
				}
				return
			}
			var names []string
			for _, s := range scannedServers(t, out) {
				names = append(names, s.Server)
			}
			if !slices.Equal(names, tc.servers) {
				t.Errorf("servers %q, want %q", names, tc.servers)
			}
		})
	}

	t.Run("the target is shown as the config writes it", func(t *testing.T) {
		_, out, _ := runCLI(t, append(scan, "--config", desktop, "--server", "good")...)
		doc := scannedServers(t, out)
		want := []string{"${env:MCPDRILL_TEST_SELF}", "-test.run=^$", "${env:MCPDRILL_TEST_ARG}"}
		if len(doc) != 1 || doc[0].Config != desktop || !slices.Equal(doc[0].Report.Target.Command, want) {
			t.Fatalf("got %+v, want command %q", doc, want)
		}
	})
	t.Run("an input is needed before anything starts", func(t *testing.T) {
		code, _, errOut := runCLI(t, append(scan, "--config", vscode, "--server", "remote")...)
		if code != exitUsage || !strings.Contains(errOut, `server "remote" of `+vscode) || !strings.Contains(errOut, "give each input with --input ID=VALUE") {
			t.Fatalf("exit %d:\n%s", code, errOut)
		}
	})
	t.Run("table", func(t *testing.T) {
		code, out, errOut := runCLI(t, "scan", "--trust-workspace", "--config", desktop, "--fail-on", "never", "--no-second-connection")
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		for _, want := range []string{`== server "good" of ` + desktop + `: ${env:MCPDRILL_TEST_SELF} -test.run=^$ ${env:MCPDRILL_TEST_ARG}`, `== server "vacuous" of `, "error handling"} {
			if !strings.Contains(out, want) {
				t.Errorf("no %q in:\n%s", want, out)
			}
		}
	})
	t.Run("sarif at each server's entry", func(t *testing.T) {
		code, out, errOut := runCLI(t, "scan", "--trust-workspace", "--config", desktop, "--format", "sarif", "--fail-on", "never", "--no-second-connection")
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		log := testutil.CheckSARIF(t, []byte(out))
		n := 0
		for _, run := range log.Runs {
			for _, r := range run.Results {
				n++
				if !strings.HasSuffix(r.URI(), "testdata/configs/claude_desktop_config.json") || r.Line() < 3 {
					t.Errorf("%s not at a server's entry of the config: %s:%d", r.RuleID, r.URI(), r.Line())
				}
			}
		}
		if n == 0 {
			t.Error("no results: the vacuous server has findings")
		}
	})
	// vscode_mcp.json starts with a // comment, as VS Code allows: the
	// results and annotations are still on each server's own line (issue
	// 40: they were all on line 1).
	t.Run("sarif and annotations through comments", func(t *testing.T) {
		lines := map[string]int{"local": 7, "remote": 13}
		for _, format := range []string{"sarif", "github"} {
			code, out, errOut := runCLI(t, "scan", "--trust-workspace", "--config", vscode, "--input", "api-key=x", "--format", format, "--fail-on", "never", "--no-second-connection", "--fail-on", "info")
			if code != exitFindings {
				t.Fatalf("%s: exit %d: %s", format, code, errOut)
			}
			if format == "github" {
				for server, line := range lines {
					if !strings.Contains(out, "file=cmd/mcpdrill/testdata/configs/vscode_mcp.json,line="+strconv.Itoa(line)+",") {
						t.Errorf("no annotation of server %s at line %d:\n%s", server, line, out)
					}
				}
				continue
			}
			for _, run := range testutil.CheckSARIF(t, []byte(out)).Runs {
				for _, r := range run.Results {
					server, _ := r.Properties["server"].(string)
					if r.Line() != lines[server] {
						t.Errorf("%s of server %q at line %d, want %d", r.RuleID, server, r.Line(), lines[server])
					}
				}
			}
		}
	})
}

// TestScanConfigAuto finds the configurations of a made-up home and
// workspace, lists them, and scans them all.
func TestScanConfigAuto(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers")
	}
	if runtime.GOOS != "linux" {
		t.Skip("the made-up home is laid out as on Linux ($XDG_CONFIG_HOME)")
	}
	configEnv(t)
	home := t.TempDir()
	ws := filepath.Join(home, "src", "proj")
	copyConfig := func(name, dest string) {
		t.Helper()
		b, err := os.ReadFile(configPath(name))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(home, dest)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	copyConfig("claude_desktop_config.json", ".config/Claude/claude_desktop_config.json")
	copyConfig("vscode_mcp.json", "src/proj/.vscode/mcp.json")
	copyConfig("claude_code.mcp.json", "src/proj/.mcp.json")
	if err := os.WriteFile(filepath.Join(home, ".claude.json"), []byte(`{"numStartups": 1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("USERPROFILE", home)
	t.Setenv("APPDATA", filepath.Join(home, ".config"))

	for _, tc := range []struct {
		golden string
		args   []string
		width  int // 0: the default
	}{
		{"configs.golden", []string{"configs", "--workspace", ws}, 0},
		{"configs-all.golden", []string{"configs", "--workspace", ws, "--all"}, 0},
		{"configs-all-80.golden", []string{"configs", "--workspace", ws, "--all"}, 80},
		{"configs-json.golden", []string{"configs", "--workspace", ws, "--json"}, 0},
	} {
		t.Setenv("COLUMNS", "")
		if tc.width > 0 {
			t.Setenv("COLUMNS", strconv.Itoa(tc.width))
		}
		code, out, errOut := runCLI(t, tc.args...)
		if code != exitOK {
			t.Fatalf("%q: exit %d: %s", tc.args, code, errOut)
		}
		if tc.width > 0 {
			checkFits(t, tc.golden, out, tc.width)
		}
		testutil.Golden(t, filepath.Join("configs", tc.golden), []byte(strings.ReplaceAll(out, home, "$HOME")))
	}
	t.Setenv("COLUMNS", "")

	code, out, errOut := runCLI(t, "scan", "--json", "--fail-on", "never", "--no-second-connection", "--config", "auto", "--workspace", ws, "--trust-workspace",
		"--input", "api-key="+configPlanted["input in args, env, header"])
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got []string
	for _, s := range scannedServers(t, out) {
		got = append(got, filepath.Base(s.Config)+":"+s.Server)
	}
	want := []string{"claude_desktop_config.json:good", "claude_desktop_config.json:vacuous", ".mcp.json:remote", "mcp.json:local", "mcp.json:remote"}
	if !slices.Equal(got, want) {
		t.Errorf("scanned %q, want %q", got, want)
	}
	// ${workspaceFolder} of the workspace's .vscode/mcp.json is its repository, or without one its directory.
	for _, s := range scannedServers(t, out) {
		if s.Server == "local" && !slices.Contains(s.Report.Target.Command, "${workspaceFolder}") {
			t.Errorf("local: command %q", s.Report.Target.Command)
		}
	}
}

// TestDriftConfig: drift's live side is the one server of --config.
func TestDriftConfig(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers")
	}
	configEnv(t)
	manifest := filepath.Join(t.TempDir(), "tools.json")
	if err := os.WriteFile(manifest, []byte(`{"tools":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	desktop := configPath("claude_desktop_config.json")
	code, _, errOut := runCLI(t, "drift", manifest, "--trust-workspace", "--config", desktop)
	if code != exitUsage || !strings.Contains(errOut, "2 servers in --config (good, vacuous): name one with --server") {
		t.Fatalf("two servers: exit %d: %s", code, errOut)
	}
	code, out, errOut := runCLI(t, "drift", manifest, "--trust-workspace", "--config", desktop, "--server", "good", "--json", "--fail-on", "never")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep struct {
		Live     string `json:"live"`
		Compared bool   `json:"compared"`
	}
	mustJSON(t, out, &rep)
	if !rep.Compared || rep.Live != "${env:MCPDRILL_TEST_SELF} -test.run=^$ ${env:MCPDRILL_TEST_ARG}" {
		t.Errorf("live %q, compared %v", rep.Live, rep.Compared)
	}
}

// TestConfigSecretsNeverPrinted plants secrets where configurations hold
// them (env placeholders in args and env, inputs in args, env and headers,
// a URL's query, a command path) and looks for them in everything scan,
// drift and configs print, in every format.
func TestConfigSecretsNeverPrinted(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers")
	}
	configEnv(t)
	lc := &leakChecker{t: t, secrets: configPlanted}
	run := func(what string, args ...string) {
		t.Helper()
		code, out, errOut := runCLI(t, args...)
		if code == exitInternal {
			t.Errorf("%s: exit %d\n%s", what, code, errOut)
		}
		lc.check(what+" stdout", out)
		lc.check(what+" stderr", errOut)
	}
	input := "api-key=" + configPlanted["input in args, env, header"]
	// A server whose command is a path made of a secret: the failure to
	// start it quotes the path.
	broken := filepath.Join(t.TempDir(), "broken.json")
	if err := os.WriteFile(broken, []byte(`{"mcpServers": {"gone": {"command": "/nonexistent/${env:MCPDRILL_TEST_CMD}/srv"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MCPDRILL_TEST_CMD", configPlanted["command path"])
	manifest := filepath.Join(t.TempDir(), "tools.json")
	if err := os.WriteFile(manifest, []byte(`{"tools":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"table", "json", "sarif", "junit", "github"} {
		for _, cfg := range []string{"claude_desktop_config.json", "vscode_mcp.json", "claude_code.mcp.json"} {
			run("scan "+cfg+" "+format, "scan", "--trust-workspace", "--config", configPath(cfg), "--input", input, "--format", format, "--fail-on", "never", "--no-second-connection")
		}
		run("scan broken "+format, "scan", "--trust-workspace", "--config", broken, "--format", format)
		for _, server := range []string{"local", "remote"} {
			run("drift "+server+" "+format, "drift", manifest, "--trust-workspace", "--config", configPath("vscode_mcp.json"), "--server", server, "--input", input, "--format", format, "--fail-on", "never")
		}
		run("drift broken "+format, "drift", manifest, "--trust-workspace", "--config", broken, "--format", format)
	}
	results := filepath.Join(t.TempDir(), "results.json")
	run("study run", "study", "run", configPath("vscode_mcp.json"), "--input", input, "-q", "-o", results, "--no-second-connection")
	lc.checkFile("study results", results)
	run("study run table", "study", "run", configPath("vscode_mcp.json"), "--input", input, "-q", "--format", "table", "--no-second-connection")
	run("scan without the input", "scan", "--trust-workspace", "--config", configPath("vscode_mcp.json"))
	run("scan untrusted", "scan", "--config", configPath("vscode_mcp.json"), "--input", input)
	run("configs", "configs", "--workspace", filepath.Join("testdata", "configs"))
	run("configs json", "configs", "--json", "--all")
	if lc.seen < 50 {
		t.Errorf("only %d outputs checked", lc.seen)
	}
}

// TestStudyConfigPlaceholders: study run reads a VS Code configuration as
// servers.json, with its inputs from --input; without one, the servers
// that need it are config failures naming it.
func TestStudyConfigPlaceholders(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers")
	}
	configEnv(t)
	for _, tc := range []struct {
		name   string
		args   []string
		status string
		reason string
	}{
		{"with the input", []string{"--input", "api-key=" + configPlanted["input in args, env, header"]}, "scanned", ""},
		{"without it", nil, "failed", `input "api-key" (Testbed API key) has no value`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"study", "run", configPath("vscode_mcp.json"), "-q", "--no-second-connection", "--workspace", t.TempDir()}, tc.args...)
			code, out, errOut := runCLI(t, args...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var res struct {
				Servers []struct{ Name, Status, Failure, Reason string }
			}
			mustJSON(t, out, &res)
			if len(res.Servers) != 2 {
				t.Fatalf("rows %+v", res.Servers)
			}
			for _, r := range res.Servers {
				if r.Status != tc.status || r.Reason != tc.reason || (tc.status == "failed" && r.Failure != "config") {
					t.Errorf("%s: %s %s %q; want %s %q", r.Name, r.Status, r.Failure, r.Reason, tc.status, tc.reason)
				}
			}
		})
	}
}

// TestConfigMaskingIsPrecise: a configuration that gives its server a
// path (FSROOT=/tmp, ${env:HOME}) masks no path in the output, the JSON
// "config" field (a file under the temporary directory) included; a value
// whose name says secret is still masked wherever it turns up.
func TestConfigMaskingIsPrecise(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers")
	}
	configEnv(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	cfg := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(cfg, []byte(`{"mcpServers": {"good": {
		"command": "${env:MCPDRILL_TEST_SELF}", "args": ["-test.run=^$", "--root", "${env:HOME}"],
		"env": {"MCPDRILL_TESTBED_CHILD": "{\"Profile\":\"good\"}", "FSROOT": "/tmp", "HOME_DIR": "${env:HOME}", "LOG_LEVEL": "info"}}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "scan", "--trust-workspace", "--config", cfg, "--json", "--fail-on", "never", "--no-second-connection")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if strings.Contains(out, "REDACTED") {
		t.Errorf("nothing here is secret, yet the output masks something:\n%s", out)
	}
	var doc []configScan
	mustJSON(t, out, &doc)
	if len(doc) != 1 || doc[0].Config != cfg || !doc[0].Report.Established {
		t.Errorf("config %q, want %q", doc[0].Config, cfg)
	}
	// A value whose name says secret is masked, an echo of it less its
	// last character too; the path beside it is not.
	lt := liveTarget{secrets: targetSecrets(mcp.Config{Env: []string{"SERVICE_TOKEN=tok-9f8e7d6c5b4a", "FSROOT=/tmp"}})}
	if got := maskOf([]liveTarget{lt})("SERVICE_TOKEN=tok-9f8e7d6c5b4 in /tmp/x"); got != "SERVICE_TOKEN=REDACTED in /tmp/x" {
		t.Errorf("masked %q", got)
	}
}
