package studies_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
	"github.com/mcpdrill/mcpdrill/studies"
)

// testbedSpec writes a servers.json over the built-in testbed: well-behaved,
// vacuous, sloppy and legacy stdio servers, one launched over Streamable
// HTTP, one whose launch dies, one whose command is missing.
func testbedSpec(t *testing.T, bin string) string {
	t.Helper()
	dir := t.TempDir()
	stdio := func(profile string) map[string]any {
		return map[string]any{"command": bin, "args": []string{"testbed", "--profile", profile}, "sdk": "testbed"}
	}
	servers := map[string]any{
		"good":    stdio("good"),
		"vacuous": stdio("vacuous"),
		"legacy":  stdio("legacy"),
		"modern":  stdio("modern"),
		"crash":   stdio("crash"),
		"http-good": map[string]any{
			"url": "http://127.0.0.1:${PORT}/mcp", "sdk": "testbed",
			"launch": map[string]any{"command": bin, "args": []string{"testbed", "--profile", "good", "--http", "127.0.0.1:${PORT}"}},
		},
		"http-dies": map[string]any{
			"url":    "http://127.0.0.1:${PORT}/mcp",
			"launch": map[string]any{"command": bin, "args": []string{"testbed", "--no-such-flag"}, "ready": "5s"},
		},
		"missing": map[string]any{"command": "bin/not-installed"},
	}
	path := filepath.Join(dir, "servers.json")
	writeJSON(t, path, map[string]any{"mcpServers": servers})
	return path
}

// studyBinary skips the test under -short, saying why (it starts
// subprocesses), and returns the built mcpdrill.
func studyBinary(t *testing.T, why string) string {
	t.Helper()
	if testing.Short() {
		t.Skip(why)
	}
	return testutil.Binary(t)
}

func runCLI(t *testing.T, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("mcpdrill %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stderr.String()
}

func readResults(t *testing.T, path string) (*studies.Results, []byte) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := studies.Validate(data); err != nil {
		t.Fatal(err)
	}
	r, err := studies.Read(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return r, data
}

func withoutMeta(t *testing.T, r *studies.Results) string {
	t.Helper()
	c := *r
	c.Meta = studies.Meta{}
	var b bytes.Buffer
	if err := studies.Write(&b, &c); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestStudyEndToEnd runs the real binary over testbed servers: a full run,
// three shards merged, and the report, all through the CLI.
func TestStudyEndToEnd(t *testing.T) {
	bin := studyBinary(t, "subprocess study")
	spec := testbedSpec(t, bin)
	out := t.TempDir()
	whole := filepath.Join(out, "results.json")
	progress := runCLI(t, bin, "study", "run", spec, "-o", whole, "-j", "4", "--timeout", testutil.Hang.String(), "--request-timeout", testutil.Hang.String())
	if n := strings.Count(progress, "study: ["); n != 8 {
		t.Errorf("progress lines: %d, want 8 (stderr is not a terminal):\n%s", n, progress)
	}
	res, raw := readResults(t, whole)
	if bytes.Contains(raw, []byte(filepath.Dir(spec))) {
		t.Fatal("the spec directory leaked into results.json")
	}
	want := map[string][2]string{
		"crash":     {"", ""},
		"good":      {studies.StatusScanned, ""},
		"http-dies": {studies.StatusFailed, studies.FailLaunch},
		"http-good": {studies.StatusScanned, ""},
		"legacy":    {studies.StatusScanned, ""},
		"missing":   {studies.StatusFailed, studies.FailUnreachable},
		"modern":    {studies.StatusScanned, ""},
		"vacuous":   {studies.StatusScanned, ""},
	}
	if len(res.Servers) != len(want) {
		t.Fatalf("%d rows, want %d", len(res.Servers), len(want))
	}
	for _, r := range res.Servers {
		w, ok := want[r.Name]
		if !ok {
			t.Fatalf("unexpected row %q", r.Name)
		}
		if w[0] != "" && (r.Status != w[0] || r.Failure != w[1]) {
			t.Errorf("%s: %s/%s (%s), want %s/%s", r.Name, r.Status, r.Failure, r.Reason, w[0], w[1])
		}
		if r.Status == studies.StatusFailed && r.Reason == "" {
			t.Errorf("%s failed without a reason", r.Name)
		}
	}
	byName := map[string]studies.Row{}
	for _, r := range res.Servers {
		byName[r.Name] = r
	}
	if p := byName["http-good"].Protocol; p == nil || p.Transport != "streamable-http" {
		t.Errorf("http-good protocol %+v", p)
	}
	if p := byName["legacy"].Protocol; p == nil || p.Era != "legacy" {
		t.Errorf("legacy protocol %+v", p)
	}
	if s := byName["vacuous"].Scores; s == nil || s.Vacuous == 0 {
		t.Errorf("vacuous scores %+v", s)
	}

	// Three shards, merged, equal the whole run outside meta.
	var shards []string
	for k := 1; k <= 3; k++ {
		p := filepath.Join(out, "shard"+string(rune('0'+k))+".json")
		runCLI(t, bin, "study", "run", "--shard", string(rune('0'+k))+"/3", "-q", "-j", "2", "--timeout", testutil.Hang.String(), "--request-timeout", testutil.Hang.String(), "-o", p, spec)
		shards = append(shards, p)
	}
	merged := filepath.Join(out, "merged.json")
	runCLI(t, bin, append([]string{"study", "merge", "-o", merged}, shards...)...)
	m, _ := readResults(t, merged)
	if got, want := withoutMeta(t, m), withoutMeta(t, res); got != want {
		t.Fatalf("merged shards differ from the unsharded run:\n--- merged\n%s\n--- whole\n%s", got, want)
	}

	// The report writes both files, and the summary names every server.
	rep := filepath.Join(out, "report")
	runCLI(t, bin, "study", "report", whole, "-o", rep)
	md, err := os.ReadFile(filepath.Join(rep, "SUMMARY.md"))
	if err != nil {
		t.Fatal(err)
	}
	for name := range want {
		if !bytes.Contains(md, []byte("| "+name+" |")) {
			t.Errorf("SUMMARY.md has no row for %s", name)
		}
	}
	if _, err := os.Stat(filepath.Join(rep, "index.html")); err != nil {
		t.Fatal(err)
	}
}

func TestStudyCLIUsage(t *testing.T) {
	bin := studyBinary(t, "subprocess")
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"mcpServers":{"a":{}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := [][]string{
		{"study", "run"},
		{"study", "run", filepath.Join(dir, "absent.json")},
		{"study", "run", bad},
		{"study", "run", bad, "--shard", "4/3"},
		{"study", "run", bad, "--bogus"},
		{"study", "merge"},
		{"study", "merge", bad},
		{"study", "report", bad},
	}
	for _, args := range tests {
		cmd := exec.Command(bin, args...)
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 {
			t.Errorf("mcpdrill %s: %v, want exit 2", strings.Join(args, " "), err)
		}
	}
}
