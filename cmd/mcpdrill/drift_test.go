package main

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/testbed"
)

// runDriftCLI runs the CLI in-process and returns the exit code and stdout.
func runDriftCLI(t *testing.T, args ...string) (int, string) {
	t.Helper()
	code, out, _ := runCLI(t, args...)
	return code, out
}

func driftTestbed(t *testing.T, version string, seed uint64) string {
	t.Helper()
	h, err := testbed.NewHandler(testbed.Options{Profile: "drifting", Version: version, DriftAfter: -1, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &httptest.Server{Listener: l, Config: &http.Server{Handler: h}}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL + testbed.PathMCP
}

func writeSpec(t *testing.T, dir, name, url string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	doc := "server:\n  url: " + url + "\ncanaries:\n  - tool: search\n    args: {query: widget}\n"
	if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDriftCLIExitCodes(t *testing.T) {
	dir := t.TempDir()
	v1 := driftTestbed(t, "1", 1)
	v1data := driftTestbed(t, "1", 2)
	v2 := driftTestbed(t, "2", 1)
	base := filepath.Join(dir, "base.json")
	if code, _ := runDriftCLI(t, "drift", "capture", writeSpec(t, dir, "s1.yaml", v1), "-o", base); code != exitOK {
		t.Fatalf("capture exit %d", code)
	}

	// Same server, only data changed: exit 0.
	if code, out := runDriftCLI(t, "drift", "check", "--baseline", base, "--spec", writeSpec(t, dir, "s1b.yaml", v1data)); code != exitOK {
		t.Errorf("data-only check exit %d:\n%s", code, out)
	}
	// Manifest vs live v2, flags after MANIFEST, JSON.
	code, out := runDriftCLI(t, "drift", base, "--url", v2, "--json")
	if code != exitFindings {
		t.Errorf("drift v1 vs v2 exit %d", code)
	}
	var rep struct {
		SchemaVersion string `json:"schema_version"`
		Fingerprint   struct{ Baseline, Live string }
		Findings      []map[string]any
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("JSON: %v\n%s", err, out)
	}
	if rep.SchemaVersion != "1" || rep.Fingerprint.Baseline == "" || rep.Fingerprint.Live == "" || rep.Fingerprint.Baseline == rep.Fingerprint.Live || len(rep.Findings) != 8 { // 7 drift findings + MCP-AUTH-ANONYMOUS-LIST
		t.Errorf("report: %s", out)
	}
	for _, f := range rep.Findings {
		for _, k := range []string{"rule", "severity", "tool", "pointer", "change", "breaking", "message"} {
			if _, ok := f[k]; !ok {
				t.Errorf("finding lacks %q: %v", k, f)
			}
		}
	}
	// --fail-on never turns findings into exit 0; sarif and junit render.
	if code, out := runDriftCLI(t, "drift", "--fail-on", "never", "--format", "sarif", base, "--url", v2); code != exitOK || !strings.Contains(out, `"version": "2.1.0"`) {
		t.Errorf("sarif exit %d:\n%.300s", code, out)
	}
	if code, out := runDriftCLI(t, "drift", base, "--url", v2, "--format", "junit"); code != exitFindings || !strings.Contains(out, "<testsuites") {
		t.Errorf("junit exit %d", code)
	}
	// Usage errors and an unreachable target.
	for _, args := range [][]string{
		{"drift"},
		{"drift", filepath.Join(dir, "nope.json"), "--url", v2},
		{"drift", base, "--url", v2, "--format", "yaml"},
		{"drift", "check", "--baseline", base},
		{"drift", "capture", writeSpec(t, dir, "s3.yaml", v1)},
	} {
		if code, _ := runDriftCLI(t, args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
	}
	if code, _ := runDriftCLI(t, "drift", base, "--url", "http://127.0.0.1:1/mcp", "--timeout", "2s"); code != exitUnreachable {
		t.Errorf("unreachable exit %d", code)
	}
	// rules and fingerprint.
	if code, out := runDriftCLI(t, "rules", "CHG-PROPERTY-RENAMED-77a8f7a2"); code != exitOK || !strings.Contains(out, "BRK-IN-PROPERTY-RENAMED") {
		t.Errorf("rules exit %d: %s", code, out)
	}
	_, fpFile := runDriftCLI(t, "fingerprint", base)
	_, fpLive := runDriftCLI(t, "fingerprint", "--url", v1)
	if !strings.HasPrefix(fpFile, "sha256:") || fpFile != fpLive {
		t.Errorf("fingerprint of the capture %q and of the live server %q differ", fpFile, fpLive)
	}
}
