package studies_test

import (
	"encoding/json"
	"github.com/mcpdrill/mcpdrill/scan"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
	"github.com/mcpdrill/mcpdrill/studies"
)

// buildProbeWheel builds the wheel of the dependency-free Python MCP server
// of testdata/pypi into dir and returns its hashed requirement line.
func buildProbeWheel(t *testing.T, dir string) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found: the PyPI install path needs it")
	}
	out, err := exec.Command(py, filepath.Join(testutil.ModuleRoot(t), "studies", "testdata", "pypi", "build_wheel.py"), dir).Output()
	if err != nil {
		t.Fatalf("build_wheel.py: %v", err)
	}
	line := strings.TrimSpace(string(out))
	if !strings.HasPrefix(line, "mcpdrill-pypi-probe==0.1.0 --hash=sha256:") {
		t.Fatalf("requirement line %q", line)
	}
	return line
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestInstallPyPIOffline is the PyPI path without PyPI: our own
// dependency-free server, packaged as a wheel from its local directory, is
// installed by study install into a venv of its own with pip
// --require-hashes --no-index --find-links, then started and scanned by
// study run. A wrong hash, a package the wheelhouse lacks, an npm entry
// without a lockfile and an excluded entry are rows too, each with its
// outcome, and the install time lands in meta apart from the scan's.
func TestInstallPyPIOffline(t *testing.T) {
	bin := studyBinary(t, "venv, pip and a subprocess study")
	wheels := t.TempDir()
	req := buildProbeWheel(t, wheels)
	dir := t.TempDir()
	for sub, line := range map[string]string{
		"probe": req,
		// One hex digit changed: pip must refuse the wheel.
		"tampered": req[:len(req)-1] + map[bool]string{true: "0", false: "1"}[!strings.HasSuffix(req, "0")],
	} {
		if err := os.MkdirAll(filepath.Join(dir, "pypi", sub), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "pypi", sub, "requirements.txt"), []byte(line+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{"HOME": "${WORK_DIR}"}
	spec := filepath.Join(dir, "servers.json")
	writeJSON(t, spec, map[string]any{"mcpServers": map[string]any{
		"pypi:probe":    map[string]any{"command": "pypi/probe/venv/bin/mcpdrill-pypi-probe", "package": "mcpdrill-pypi-probe@0.1.0", "registry": "pypi", "env": env},
		"pypi:tampered": map[string]any{"command": "pypi/tampered/venv/bin/mcpdrill-pypi-probe", "package": "mcpdrill-pypi-probe@0.1.0", "registry": "pypi", "env": env},
		"pypi:absent":   map[string]any{"command": "pypi/absent/venv/bin/mcpdrill-absent", "package": "mcpdrill-absent@1.0.0", "registry": "pypi", "credentials": []string{"ABSENT_KEY"}},
		"npm-no-lock":   map[string]any{"command": "npm/none/node_modules/.bin/x", "package": "x@1.0.0"},
		"library":       map[string]any{"command": "npx", "args": []string{"-y", "lib@1.0.0"}, "package": "lib@1.0.0", "excluded": "library: the package has no executable (bin)"},
	}})
	runCLI(t, bin, "study", "install", spec, "--find-links", wheels, "-j", "2", "-q")
	l, err := studies.ReadInstallLog(filepath.Join(dir, studies.InstallLogName))
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Units) != 4 || len(l.Servers) != 4 {
		t.Fatalf("install log: %d units, %d servers, want 4 and 4 (the excluded entry is not installed): %+v", len(l.Units), len(l.Servers), l)
	}
	if r := l.Servers["pypi:probe"]; r.Status != studies.InstallOK || r.InstallMS <= 0 {
		t.Fatalf("pypi:probe install %+v", r)
	}
	if _, err := os.Stat(filepath.Join(dir, "pypi", "probe", "venv", "bin", "mcpdrill-pypi-probe")); err != nil {
		t.Fatal(err)
	}

	out := filepath.Join(dir, "results.json")
	runCLI(t, bin, "study", "run", spec, "-o", out, "-q", "-j", "2", "--timeout", testutil.Hang.String(), "--request-timeout", testutil.Hang.String())
	res, raw := readResults(t, out)
	if strings.Contains(string(raw), dir) {
		t.Fatal("the study directory leaked into results.json")
	}
	rows := map[string]studies.Row{}
	for _, r := range res.Servers {
		rows[r.Name] = r
	}
	want := map[string][3]string{
		"pypi:probe":    {studies.StatusScanned, "", studies.OutcomeScanned},
		"pypi:tampered": {studies.StatusFailed, studies.FailInstall, studies.OutcomeFailedInstall},
		"pypi:absent":   {studies.StatusFailed, studies.FailInstall, studies.OutcomeFailedInstall},
		"npm-no-lock":   {studies.StatusFailed, studies.FailInstall, studies.OutcomeFailedInstall},
		"library":       {studies.StatusSkipped, "", studies.OutcomeExcluded},
	}
	for name, w := range want {
		r := rows[name]
		if r.Status != w[0] || r.Failure != w[1] || r.Outcome != w[2] {
			t.Errorf("%s: %s/%s/%s (%s), want %s", name, r.Status, r.Failure, r.Outcome, r.Reason, w)
		}
	}
	if r := rows["pypi:tampered"]; !strings.Contains(strings.ToLower(r.Reason), "hash") {
		t.Errorf("tampered: reason %q does not name the hash", r.Reason)
	}
	if r := rows["npm-no-lock"]; !strings.Contains(r.Reason, "npm/none has no package.json") {
		t.Errorf("npm-no-lock: reason %q", r.Reason)
	}
	p := rows["pypi:probe"]
	if p.Registry != "pypi" || p.Server == nil || p.Server.Name != "mcpdrill-pypi-probe" || len(p.Tools) != 3 {
		t.Fatalf("pypi:probe row: registry %q, server %+v, %d tools", p.Registry, p.Server, len(p.Tools))
	}
	contracts := map[string]scan.Contract{}
	for _, tool := range p.Tools {
		contracts[tool.Name] = tool.OutputContract
	}
	if contracts["echo"] != scan.ContractNone || contracts["add"] == scan.ContractNone || contracts["word_count"] == scan.ContractNone {
		t.Errorf("output contracts %v: echo declares none, add and word_count declare one", contracts)
	}
	for _, pr := range p.Probes {
		if pr.Name == "unknown_tool" && (pr.Conformant == nil || !*pr.Conformant) {
			t.Errorf("unknown_tool probe %+v", pr)
		}
	}
	if m := res.Meta.Servers["pypi:probe"]; m.InstallMS <= 0 || m.ScanMS <= 0 {
		t.Errorf("meta of pypi:probe: install %d ms, scan %d ms; want both", m.InstallMS, m.ScanMS)
	}
}
