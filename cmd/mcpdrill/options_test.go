package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mcpdrill/mcpdrill/report"
	"github.com/mcpdrill/mcpdrill/studies"
)

// parseInto runs `mcpdrill ARGV` on the CLI whose command mk makes (argv's
// first word, or a subcommand of it) runs with a run function that keeps
// the parsed options and runs nothing. It returns them (nil when parsing
// failed), the exit code and stderr.
func parseInto[O any](t *testing.T, mk func(func(context.Context, *O) error) *cli.Command, argv ...string) (*O, int, string) {
	t.Helper()
	var got *O
	cmd := mk(func(_ context.Context, o *O) error { got = o; return nil })
	cmds := commands()
	replaced := false
	for i, c := range cmds {
		if c.Name != argv[0] {
			continue
		}
		if cmd.Name == c.Name {
			cmds[i], replaced = cmd, true
		}
		for j, sub := range c.Subcommands {
			if sub.Name == cmd.Name {
				c.Subcommands[j], replaced = cmd, true
			}
		}
	}
	if !replaced {
		t.Fatalf("no command %q under %q", cmd.Name, argv[0])
	}
	app := appOf(cmds)
	var stderr bytes.Buffer
	app.Writer, app.ErrWriter = &bytes.Buffer{}, &stderr
	code := execute(app, append([]string{"mcpdrill"}, argv...), &stderr)
	return got, code, stderr.String()
}

// refused reports whether `mcpdrill ARGV` is a usage error found while
// parsing, before mk's run would run.
func refused[O any](t *testing.T, mk func(func(context.Context, *O) error) *cli.Command, argv ...string) bool {
	t.Helper()
	o, code, _ := parseInto(t, mk, argv...)
	return code == exitUsage && o == nil
}

// parseScan parses `mcpdrill scan ARGS` into scanOptions.
func parseScan(t *testing.T, args ...string) (*scanOptions, int, string) {
	t.Helper()
	return parseInto(t, scanCommand, append([]string{"scan"}, args...)...)
}

// TestScanFlagsParseIntoOptions: argv becomes scanOptions (nothing is
// started: the command would not exist), and bad flags are usage errors
// before anything runs.
func TestScanFlagsParseIntoOptions(t *testing.T) {
	o, code, stderr := parseScan(t, "--format", "sarif", "--fail-on", "warn", "--deadline", "7s", "--no-second-connection",
		"--probe-any-tool", "--sarif-file", "tools.json", "--target-class", "production", "--", "no-such-server", "--flag")
	if code != exitOK || o == nil {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if o.out.format != "sarif" || o.out.threshold != report.SeverityWarn || o.sarifFile != "tools.json" {
		t.Errorf("output options %+v, sarif file %q", o.out, o.sarifFile)
	}
	if o.scan.Deadline != 7*time.Second || !o.scan.SkipSecondConnection || o.scan.SkipOriginCheck || !o.scan.ProbeAnyTool {
		t.Errorf("scan options %+v", o.scan)
	}
	if len(o.targets) != 1 || strings.Join(o.targets[0].cfg.Command, " ") != "no-such-server --flag" || o.targets[0].gate.class != "production" {
		t.Errorf("targets %+v", o.targets)
	}

	for _, bad := range [][]string{
		{"--format", "yaml", "--", "x"},
		{"--fail-on", "sometimes", "--", "x"},
		{"--target-class", "galaxy", "--", "x"},
		{"--execute", "--", "x"},
		{"--url", "ftp://127.0.0.1/mcp"},
		{"--deadline", "-1s", "--", "x"},
		{},
	} {
		if o, code, _ := parseScan(t, bad...); code != exitUsage || o != nil {
			t.Errorf("%q: exit %d, options %v; want a usage error before running", bad, code, o)
		}
	}
}

// TestDriftFlagsParseIntoOptions: the manifest is read and parsed and the
// target gated before anything connects; flags may follow MANIFEST.
func TestDriftFlagsParseIntoOptions(t *testing.T) {
	parse := func(args ...string) (*driftOptions, int, string) {
		return parseInto(t, driftCommand, append([]string{"drift"}, args...)...)
	}
	o, code, stderr := parse(ciBase, "--format", "junit", "--url", "http://127.0.0.1:9/mcp", "--fail-on", "info")
	if code != exitOK || o == nil {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if o.manifestPath != ciBase || len(o.manifest.Tools) == 0 || o.out.format != "junit" || o.out.threshold != report.SeverityInfo || o.live.cfg.URL != "http://127.0.0.1:9/mcp" {
		t.Errorf("options %+v", o)
	}
	for _, bad := range [][]string{
		{},
		{"no-such-manifest.json", "--url", "http://127.0.0.1:9/mcp"},
		{"testdata/transcripts/help.txtar", "--url", "http://127.0.0.1:9/mcp"},
		{ciBase},
		{ciBase, "--url", "http://127.0.0.1:9/mcp", "--format", "yaml"},
	} {
		if o, code, _ := parse(bad...); code != exitUsage || o != nil {
			t.Errorf("%q: exit %d, options %v; want a usage error before running", bad, code, o)
		}
	}
}

// studyFiles writes a servers.json whose one server is disabled and the
// results.json a study of it gives, and returns their paths.
func studyFiles(t *testing.T) (servers, results string) {
	t.Helper()
	dir := t.TempDir()
	servers, results = filepath.Join(dir, "servers.json"), filepath.Join(dir, "results.json")
	data := []byte(`{"mcpServers": {"off": {"command": "true", "disabled": true}}}`)
	spec, err := studies.ParseSpec(data, dir)
	if err != nil {
		t.Fatal(err)
	}
	res, err := studies.Run(context.Background(), spec, studies.Options{Deadline: time.Second, RequestTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := studies.Write(&b, res); err != nil {
		t.Fatal(err)
	}
	for path, content := range map[string][]byte{servers: data, results: b.Bytes()} {
		if err := os.WriteFile(path, content, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return servers, results
}

// TestStudyRunFlagsParseIntoOptions: study run's argv becomes
// studyRunOptions, servers.json read and parsed, before any server starts.
func TestStudyRunFlagsParseIntoOptions(t *testing.T) {
	servers, _ := studyFiles(t)
	ws := t.TempDir()
	for _, tt := range []struct {
		name  string
		args  []string
		check func(*studyRunOptions) bool
	}{
		{"defaults", []string{servers}, func(o *studyRunOptions) bool {
			return o.path == servers && len(o.spec.Servers) == 1 && o.out.format == "json" && o.out.threshold == "" && o.output == "-" && !o.quiet &&
				o.run.Jobs == 0 && o.run.Deadline == 2*time.Minute && o.run.RequestTimeout == 10*time.Second && o.run.Shard == (studies.Shard{}) &&
				!o.run.SkipSecondConnection && o.run.Population == "" && o.run.Installed == nil && o.run.ToolVersion == version && o.run.Progress == nil
		}},
		{"flags after SERVERS.json", []string{servers, "-o", "r.json", "--format", "table", "--fail-on", "warn", "-j", "3", "-q"}, func(o *studyRunOptions) bool {
			return o.output == "r.json" && o.out.format == "table" && o.out.threshold == report.SeverityWarn && o.run.Jobs == 3 && o.quiet
		}},
		{"limits and shard", []string{"--timeout", "1m", "--request-timeout", "2s", "--shard", "2/3", "--no-second-connection", "--population", "top 10", servers}, func(o *studyRunOptions) bool {
			return o.run.Deadline == time.Minute && o.run.RequestTimeout == 2*time.Second && o.run.Shard == (studies.Shard{Index: 2, Count: 3}) &&
				o.run.SkipSecondConnection && o.run.Population == "top 10"
		}},
		{"placeholders", []string{servers, "--input", "a=1", "--input", "b=x=y", "--workspace", ws}, func(o *studyRunOptions) bool {
			return o.run.Inputs["a"] == "1" && o.run.Inputs["b"] == "x=y" && o.run.Workspace == ws
		}},
		{"json alias", []string{servers, "--json"}, func(o *studyRunOptions) bool { return o.out.format == "json" }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o, code, stderr := parseInto(t, studyRunCommand, append([]string{"study", "run"}, tt.args...)...)
			if code != exitOK || o == nil {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if !tt.check(o) {
				t.Errorf("options %+v", o)
			}
		})
	}
	for _, bad := range [][]string{
		{},
		{servers, servers},
		{"no-such-servers.json"},
		{servers, "--format", "table", "-o", "-"},
		{servers, "--format", "yaml"},
		{servers, "--fail-on", "sometimes"},
		{servers, "--jobs", "-1"},
		{servers, "--timeout", "0s"},
		{servers, "--request-timeout", "-1s"},
		{servers, "--shard", "4/3"},
		{servers, "--input", "=v"},
		{servers, "--install-log", "no-such-log.json"},
		{servers, "--nope"},
	} {
		if !refused(t, studyRunCommand, append([]string{"study", "run"}, bad...)...) {
			t.Errorf("%q: want a usage error before running", bad)
		}
	}
}

// TestStudyInstallFlagsParseIntoOptions: study install's argv becomes
// studyInstallOptions before anything is installed.
func TestStudyInstallFlagsParseIntoOptions(t *testing.T) {
	servers, _ := studyFiles(t)
	links := t.TempDir()
	o, code, stderr := parseInto(t, studyInstallCommand, "study", "install", servers)
	if code != exitOK || o == nil {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if o.install.Jobs != 4 || o.install.Timeout != 10*time.Minute || o.log != "" || o.quiet || o.install.Force || o.install.FindLinks != "" || o.dir != filepath.Dir(servers) {
		t.Errorf("defaults %+v", o)
	}
	o, code, stderr = parseInto(t, studyInstallCommand, "study", "install", servers, "-j", "2", "--timeout", "1m", "--only", "a", "--only", "b",
		"--force", "-q", "--find-links", links, "--cache-dir", "c", "--log", "l.json")
	if code != exitOK || o == nil {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if o.install.Jobs != 2 || o.install.Timeout != time.Minute || strings.Join(o.install.Only, ",") != "a,b" || !o.install.Force || !o.quiet ||
		o.install.FindLinks != links || o.install.CacheDir != "c" || o.log != "l.json" {
		t.Errorf("flags %+v", o)
	}
	for _, bad := range [][]string{{}, {servers, "x"}, {"no-such-servers.json"}, {servers, "-j", "-1"}, {servers, "--timeout", "0s"}} {
		if !refused(t, studyInstallCommand, append([]string{"study", "install"}, bad...)...) {
			t.Errorf("%q: want a usage error before running", bad)
		}
	}
}

// TestStudyMergeReportImportParseIntoOptions: the documents merge, report
// and import take are read and checked before anything is written.
func TestStudyMergeReportImportParseIntoOptions(t *testing.T) {
	servers, results := studyFiles(t)
	registry := filepath.Join("..", "..", "studies", "registry", "testdata", "registry", "servers.json")

	m, code, stderr := parseInto(t, studyMergeCommand, "study", "merge", results, results, "-o", "m.json")
	if code != exitOK || m == nil || len(m.parts) != 2 || m.output != "m.json" {
		t.Errorf("merge: exit %d, options %+v: %s", code, m, stderr)
	}
	if m, _, _ := parseInto(t, studyMergeCommand, "study", "merge", results); m == nil || m.output != "-" {
		t.Errorf("merge default output: options %+v", m)
	}
	r, code, stderr := parseInto(t, studyReportCommand, "study", "report", results)
	if code != exitOK || r == nil || r.dir != "." || len(r.results.Servers) != 1 {
		t.Errorf("report: exit %d, options %+v: %s", code, r, stderr)
	}
	if r, _, _ := parseInto(t, studyReportCommand, "study", "report", "-o", "site", results); r == nil || r.dir != "site" {
		t.Errorf("report -o: options %+v", r)
	}
	i, code, stderr := parseInto(t, studyImportCommand, "study", "import", registry, "--pypi", "venv", "-o", "s.json")
	if code != exitOK || i == nil || !i.imp.PyPIVenv || i.output != "s.json" || len(i.data) == 0 {
		t.Errorf("import: exit %d, options %+v: %s", code, i, stderr)
	}
	t.Setenv("PATH", t.TempDir()) // no uvx: venvs
	if i, _, _ := parseInto(t, studyImportCommand, "study", "import", registry); i == nil || !i.imp.PyPIVenv || i.output != "-" {
		t.Errorf("import default --pypi without uvx: options %+v", i)
	}
	if i, _, _ := parseInto(t, studyImportCommand, "study", "import", "--pypi", "uvx", registry); i == nil || i.imp.PyPIVenv {
		t.Errorf("import --pypi uvx: options %+v", i)
	}

	for _, bad := range [][]string{{}, {"no-such-results.json"}, {servers}} {
		if !refused(t, studyMergeCommand, append([]string{"study", "merge"}, bad...)...) {
			t.Errorf("merge %q: want a usage error before running", bad)
		}
	}
	for _, bad := range [][]string{{}, {results, results}, {servers}} {
		if !refused(t, studyReportCommand, append([]string{"study", "report"}, bad...)...) {
			t.Errorf("report %q: want a usage error before running", bad)
		}
	}
	for _, bad := range [][]string{{}, {registry, registry}, {"no-such-registry.json"}, {registry, "--pypi", "conda"}} {
		if !refused(t, studyImportCommand, append([]string{"study", "import"}, bad...)...) {
			t.Errorf("import %q: want a usage error before running", bad)
		}
	}
}

// TestDriftCaptureCheckParseIntoOptions: capture's and check's spec and
// state files are read and checked before anything connects.
func TestDriftCaptureCheckParseIntoOptions(t *testing.T) {
	spec := filepath.Join(t.TempDir(), "spec.yaml")
	if err := os.WriteFile(spec, []byte("server:\n  url: http://127.0.0.1:9/mcp\ncanaries:\n  - tool: search\n    args: {query: widget}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, code, stderr := parseInto(t, driftCaptureCommand, "drift", "capture", spec, "-o", "state.json")
	if code != exitOK || c == nil {
		t.Fatalf("capture: exit %d: %s", code, stderr)
	}
	if c.output != "state.json" || c.cfg.URL != "http://127.0.0.1:9/mcp" || c.cfg.RequestTimeout != 10*time.Second || c.cfg.MaxListPages != 50 ||
		c.cfg.Protocol != "" || c.deadline != 2*time.Minute || len(c.spec.Canaries) != 1 {
		t.Errorf("capture defaults %+v", c)
	}
	c, _, _ = parseInto(t, driftCaptureCommand, "drift", "capture", "-o", "-", "--protocol", "2025-06-18", "--timeout", "3s",
		"--deadline", "1m", "--max-list-pages", "2", spec)
	if c == nil || c.output != "-" || c.cfg.Protocol != "2025-06-18" || c.cfg.RequestTimeout != 3*time.Second || c.cfg.MaxListPages != 2 || c.deadline != time.Minute {
		t.Errorf("capture flags %+v", c)
	}

	k, code, stderr := parseInto(t, driftCheckCommand, "drift", "check", "--baseline", ciBase, "--current", ciBase, "--format", "junit")
	if code != exitOK || k == nil {
		t.Fatalf("check: exit %d: %s", code, stderr)
	}
	if k.baselinePath != ciBase || k.base == nil || k.currentPath != ciBase || k.current == nil || k.live != nil || k.out.format != "junit" || k.out.threshold != report.SeverityError {
		t.Errorf("check offline %+v", k)
	}
	k, _, _ = parseInto(t, driftCheckCommand, "drift", "check", "--baseline", ciBase, "--spec", spec, "--fail-on", "warn", "--deadline", "5s")
	if k == nil || k.current != nil || k.live == nil || k.live.cfg.URL != "http://127.0.0.1:9/mcp" || k.live.deadline != 5*time.Second || k.out.threshold != report.SeverityWarn {
		t.Errorf("check live %+v", k)
	}

	for _, bad := range [][]string{
		{}, {spec}, {spec, spec, "-o", "x"}, {"no-such-spec.yaml", "-o", "x"}, {ciBase, "-o", "x"},
		{spec, "-o", "x", "--protocol", "1999-01-01"}, {spec, "-o", "x", "--timeout", "0s"}, {spec, "-o", "x", "--max-list-pages", "0"},
	} {
		if !refused(t, driftCaptureCommand, append([]string{"drift", "capture"}, bad...)...) {
			t.Errorf("capture %q: want a usage error before running", bad)
		}
	}
	for _, bad := range [][]string{
		{"--current", ciBase}, {"--baseline", ciBase}, {"--baseline", ciBase, "--current", ciBase, "--spec", spec},
		{"--baseline", "no-such.json", "--current", ciBase}, {"--baseline", ciBase, "--current", "no-such.json"},
		{"--baseline", ciBase, "--spec", "no-such.yaml"}, {"--baseline", ciBase, "--current", ciBase, "extra"},
		{"--baseline", ciBase, "--current", ciBase, "--format", "yaml"},
	} {
		if !refused(t, driftCheckCommand, append([]string{"drift", "check"}, bad...)...) {
			t.Errorf("check %q: want a usage error before running", bad)
		}
	}
}
