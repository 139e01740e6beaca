package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mcpdrill/mcpdrill/guard"
	"github.com/mcpdrill/mcpdrill/internal/mcp"
	"github.com/mcpdrill/mcpdrill/internal/testbed"
)

// TestBuildVersion: -ldflags first, then the module version, then the
// commit, then "devel".
func TestBuildVersion(t *testing.T) {
	info := func(v string, settings ...string) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) {
			bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/mcpdrill/mcpdrill", Version: v}}
			for i := 0; i+1 < len(settings); i += 2 {
				bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
			}
			return bi, true
		}
	}
	none := func() (*debug.BuildInfo, bool) { return nil, false }
	for _, tc := range []struct {
		name, ldflags string
		read          func() (*debug.BuildInfo, bool)
		want          string
	}{
		{"ldflags win", "v9.9.9", info("v1.2.3"), "v9.9.9"},
		{"go install @version", "", info("v1.2.3"), "v1.2.3"},
		{"a clone's pseudo-version", "", info("v0.0.0-20261204012750-496f9286d815+dirty"), "v0.0.0-20261204012750-496f9286d815+dirty"},
		{"devel with a commit", "", info("(devel)", "vcs.revision", "496f9286d815ad6d29876e8c087ae6c5c493624a", "vcs.modified", "true"), "devel+496f9286d815-dirty"},
		{"devel, clean commit", "", info("(devel)", "vcs.revision", "abc", "vcs.modified", "false"), "devel+abc"},
		{"nothing known", "", info("(devel)"), "devel"},
		{"no build info", "", none, "devel"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := buildVersion(tc.ldflags, tc.read); got != tc.want {
				t.Errorf("buildVersion = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestVersionCommand: `mcpdrill version` and --version both answer.
func TestVersionCommand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"version"}, exitOK, "mcpdrill version " + version + "\n"},
		{[]string{"--version"}, exitOK, "mcpdrill version " + version + "\n"},
		{[]string{"-v"}, exitOK, "mcpdrill version " + version + "\n"},
		{[]string{"version", "extra"}, exitUsage, ""},
	} {
		code, out, errOut := runCLI(t, tc.args...)
		if code != tc.code || !strings.HasPrefix(out, tc.out) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", tc.args, code, out, errOut)
		}
	}
	if version == "" {
		t.Error("empty version")
	}
}

// TestCompletionScripts: a script for each shell, a usage error otherwise,
// and the bash script completes commands and flags when sourced.
func TestCompletionScripts(t *testing.T) {
	for _, tc := range []struct {
		shell, marker string
		code          int
	}{
		{"bash", "complete -o bashdefault -o default -F _mcpdrill_complete mcpdrill", exitOK},
		{"zsh", "compdef _mcpdrill_complete mcpdrill", exitOK},
		{"fish", "complete -c mcpdrill", exitOK},
		{"powershell", "", exitUsage},
	} {
		code, out, errOut := runCLI(t, "completion", tc.shell)
		if code != tc.code || !strings.Contains(out, tc.marker) {
			t.Errorf("completion %s: exit %d, stderr %q, script:\n%s", tc.shell, code, errOut, out)
		}
	}
	if code, _, _ := runCLI(t, "completion"); code != exitUsage {
		t.Errorf("completion without a shell: exit %d", code)
	}
	if testing.Short() {
		return
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	env := pathWithBinary(t)
	for _, tc := range []struct {
		words string
		want  string
	}{
		{"mcpdrill wr", "wrap"},
		{"mcpdrill wrap --qu", "--quiet"},
		{"mcpdrill guard ap", "approve"},
		{"mcpdrill comp", "completion"},
	} {
		script := `source <(mcpdrill completion bash)
COMP_WORDS=(` + tc.words + `); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
_mcpdrill_complete; printf '%s\n' "${COMPREPLY[@]}"`
		cmd := exec.Command("bash", "--norc", "--noprofile", "-c", script)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != tc.want {
			t.Errorf("completing %q: %v, %q, want %q", tc.words, err, out, tc.want)
		}
	}
}

// walkCommands calls fn for every command and subcommand, with its path.
func walkCommands(cmds []*cli.Command, path []string, fn func(path []string, c *cli.Command)) {
	for _, c := range cmds {
		p := append(append([]string(nil), path...), c.Name)
		fn(p, c)
		walkCommands(c.Subcommands, p, fn)
	}
}

// TestOneDefaultPerFlag: no flag's help line shows two defaults (a
// hand-written "(default …)" in the usage and urfave/cli's own).
func TestOneDefaultPerFlag(t *testing.T) {
	defaults := regexp.MustCompile(`\(default|[^(]default:`)
	n := 0
	walkCommands(newApp().Commands, nil, func(path []string, c *cli.Command) {
		for _, f := range c.Flags {
			n++
			line := cli.FlagStringer(f)
			if k := len(defaults.FindAllString(line, -1)); k > 1 {
				t.Errorf("%s: %d defaults: %s", strings.Join(path, " "), k, line)
			}
		}
	})
	if n < 50 {
		t.Fatalf("only %d flags seen", n)
	}
}

// TestExitCodesWhereTheyApply: an EXIT CODES block speaks of --fail-on
// only on a command that has --fail-on.
func TestExitCodesWhereTheyApply(t *testing.T) {
	blocks := 0
	walkCommands(newApp().Commands, nil, func(path []string, c *cli.Command) {
		name := strings.Join(path, " ")
		hasFailOn := false
		for _, f := range c.Flags {
			hasFailOn = hasFailOn || f.Names()[0] == "fail-on"
		}
		_, block, found := strings.Cut(c.Description, "EXIT CODES")
		if found {
			blocks++
		}
		if found && strings.Contains(block, "--fail-on") && !hasFailOn {
			t.Errorf("%s: EXIT CODES mention --fail-on, which it does not have", name)
		}
	})
	if blocks < 6 {
		t.Errorf("only %d EXIT CODES blocks", blocks)
	}
	for _, tc := range []struct {
		one     string
		reaches bool
		has     []string
		hasNot  []string
	}{
		{"findings", true, []string{"0  ok", "1  findings", "2  usage", "3  target", "4  internal"}, nil},
		{"", true, []string{"0  ok", "3  target"}, []string{"1  "}},
		{"", false, []string{"2  usage", "4  internal"}, []string{"1  ", "3  "}},
	} {
		got := exitCodes(tc.one, tc.reaches)
		for _, s := range tc.has {
			if !strings.Contains(got, s) {
				t.Errorf("exitCodes(%q, %v) lacks %q:\n%s", tc.one, tc.reaches, s, got)
			}
		}
		for _, s := range tc.hasNot {
			if strings.Contains(got, s) {
				t.Errorf("exitCodes(%q, %v) has %q:\n%s", tc.one, tc.reaches, s, got)
			}
		}
	}
}

// TestGuardHintsNameTheStore: the commands guard suggests carry --dir,
// unless MCPDRILL_GUARD_DIR names the store.
func TestGuardHintsNameTheStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "my pins")
	st, err := guard.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	set := guard.NewToolSet([]mcp.Tool{{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)}})
	if _, _, err := st.Observe("srv", set, guard.PostureStrict, "test", time.Now()); err != nil {
		t.Fatal(err)
	}
	quoted := "'" + dir + "'"
	for _, tc := range []struct {
		name, env string
		args      []string
		want      string
	}{
		{"--dir given", "", []string{"guard", "status", "--dir", dir}, "`mcpdrill guard diff --dir " + quoted + " srv`"},
		{"the environment names it", dir, []string{"guard", "status"}, "`mcpdrill guard diff srv`"},
		{"the environment names another", filepath.Join(t.TempDir(), "other"), []string{"guard", "status", "--dir", dir}, "`mcpdrill guard approve --dir " + quoted + " --fingerprint " + set.Fingerprint + " srv`"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(guardDirEnv, tc.env)
			code, out, errOut := runCLI(t, tc.args...)
			if code != exitFindings || !strings.Contains(out, tc.want) {
				t.Errorf("exit %d, want %q in:\n%s%s", code, tc.want, out, errOut)
			}
		})
	}
}

// TestGoodProfileIsClean: a scan of the good testbed profile finds no
// error and no warning.
func TestGoodProfileIsClean(t *testing.T) {
	env, argv := testbedArgs(t, testbed.Options{Profile: "good"})
	code, out, errOut := runCLI(t, append([]string{"scan", "--no-second-connection", "--fail-on", "warn", "--env", env, "--"}, argv...)...)
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
}

// TestOTLPFromEnvironment: without --otlp-endpoint, OTEL_EXPORTER_OTLP_ENDPOINT
// names the collector; a protocol the tracer does not speak is a warning
// and the run goes on untraced.
func TestOTLPFromEnvironment(t *testing.T) {
	env, argv := testbedArgs(t, testbed.Options{Profile: "vacuous"})
	url, names := spanNames(t)
	scan := append([]string{"scan", "--no-second-connection", "--json", "--fail-on", "never", "--env", env, "--"}, argv...)
	type findings struct {
		Findings []struct {
			SpanID string `json:"span_id"`
		} `json:"findings"`
	}
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", url)
	code, out, errOut := runCLI(t, scan...)
	var got findings
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != exitOK || len(got.Findings) == 0 {
		t.Fatalf("exit %d, %v: %s", code, err, errOut)
	}
	spans := names()
	for _, f := range got.Findings {
		if _, ok := spans[f.SpanID]; !ok {
			t.Errorf("finding names span %q, not exported (%d spans)", f.SpanID, len(spans))
		}
	}
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	code, out, errOut = runCLI(t, scan...)
	got = findings{}
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != exitOK || !strings.Contains(errOut, "OTEL_EXPORTER_OTLP_PROTOCOL") {
		t.Fatalf("grpc: exit %d, %v, stderr %q", code, err, errOut)
	}
	for _, f := range got.Findings {
		if f.SpanID != "" {
			t.Errorf("grpc: a finding names span %q", f.SpanID)
		}
	}
}

// TestDriftSpecCommandArgs: a drift spec names its stdio server with
// command and args, as servers.json does, and its capture is a manifest.
func TestDriftSpecCommandArgs(t *testing.T) {
	env, argv := testbedArgs(t, testbed.Options{Profile: "good"})
	k, v, _ := strings.Cut(env, "=")
	dir := t.TempDir()
	args, _ := json.Marshal(argv[1:])
	spec := "server:\n  command: " + strconvQuote(argv[0]) + "\n  args: " + string(args) + "\n  env: {" + k + ": " + strconvQuote(v) + "}\n"
	specPath, capture := filepath.Join(dir, "spec.yaml"), filepath.Join(dir, "tools.json")
	if err := os.WriteFile(specPath, []byte(spec), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runCLI(t, "drift", "capture", specPath, "-o", capture); code != exitOK {
		t.Fatalf("capture: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := runCLI(t, append([]string{"drift", capture, "--env", env, "--"}, argv...)...); code != exitOK {
		t.Fatalf("drift against the capture: exit %d\n%s%s", code, out, errOut)
	}
}

// strconvQuote quotes s as a YAML (and JSON) double-quoted string.
func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
