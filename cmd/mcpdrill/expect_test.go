package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/testbed"
	"github.com/mcpdrill/mcpdrill/report"
)

// TestExpectedFindingsGate is the acceptance of the expected-findings gate
// on drift check: a file written by --update-expected passes its own run;
// an entry whose finding was fixed fails the run naming it (stale: remove
// it); an acknowledged finding that changes comes back.
func TestExpectedFindingsGate(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join("testdata", "ci", "base.json")
	current, err := os.ReadFile(filepath.Join("testdata", "ci", "current.json"))
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cur := write("current.json", string(current))
	expected := filepath.Join(dir, "expected.json")
	check := func(current string, more ...string) (int, string) {
		t.Helper()
		code, _, errOut := runCLI(t, append([]string{"drift", "check", "--baseline", base, "--current", current, "--expected-findings", expected}, more...)...)
		return code, errOut
	}

	if code, errOut := check(cur, "--update-expected"); code != exitOK || !strings.Contains(errOut, "wrote "+expected+": 3 expected finding(s) (0 before)") {
		t.Fatalf("--update-expected: exit %d\n%s", code, errOut)
	}
	b, err := os.ReadFile(expected)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := report.ParseExpectations(b); err != nil {
		t.Fatalf("the written file does not parse: %v\n%s", err, b)
	}
	if code, errOut := check(cur); code != exitOK || !strings.Contains(errOut, ": 3 expected, 0 unexpected, 0 stale") {
		t.Fatalf("the baseline's own run: exit %d\n%s", code, errOut)
	}
	// --fail-on warn: two more findings fail, and they are not expected.
	if code, errOut := check(cur, "--fail-on", "warn"); code != exitFindings || !strings.Contains(errOut, "unexpected finding (not in "+expected+"): MCP-DRIFT-TOOL-UNDECLARED summarize") {
		t.Fatalf("unexpected findings: exit %d\n%s", code, errOut)
	}

	// delete_item is served again: its MCP-DRIFT-TOOL-MISSING is fixed.
	fixed := strings.Replace(string(current), `"tools": [`, `"tools": [
    {"name": "delete_item", "description": "Delete one item.", "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}},`, 1)
	code, errOut := check(write("fixed.json", fixed))
	if code != exitFindings || !strings.Contains(errOut, `stale entry findings[`) || !strings.Contains(errOut, `MCP-DRIFT-TOOL-MISSING tool "delete_item"`) ||
		!strings.Contains(errOut, "matches no finding any more (it passes now): remove it") {
		t.Fatalf("a fixed finding still listed: exit %d\n%s", code, errOut)
	}

	// The enum loses another value: the acknowledged finding's message
	// changes, and it comes back.
	changed := strings.Replace(string(current), `"enum": ["relevance"]`, `"enum": ["newest"]`, 1)
	code, errOut = check(write("changed.json", changed))
	if code != exitFindings || !strings.Contains(errOut, "unexpected finding (changed since findings[") || !strings.Contains(errOut, "/inputSchema/properties/sort/enum") {
		t.Fatalf("a changed finding: exit %d\n%s", code, errOut)
	}
	if strings.Contains(errOut, "stale entry") {
		t.Errorf("the changed finding's entry is reported with it, not as stale:\n%s", errOut)
	}
}

// TestExpectedFindingsFlags: the gate's usage errors.
func TestExpectedFindingsFlags(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join("testdata", "ci", "base.json")
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"kind":"mcpdrill-expected-findings","schema_version":1,"findings":[{"rule":"MCP-NO-SUCH-RULE"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"update without a file", []string{"--update-expected"}, "--update-expected needs --expected-findings FILE"},
		{"a missing file", []string{"--expected-findings", filepath.Join(dir, "none.json")}, "--expected-findings: open"},
		{"an unknown rule", []string{"--expected-findings", bad}, `unknown rule id "MCP-NO-SUCH-RULE"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, append([]string{"drift", "check", "--baseline", base, "--current", base}, tc.args...)...)
			if code != exitUsage || !strings.Contains(errOut, tc.want) {
				t.Fatalf("exit %d, stderr %q; want exit 2 and %q", code, errOut, tc.want)
			}
		})
	}
}

// TestScanExpectedFindings: scan's gate, SARIF's suppressions, and a run
// that does not complete writes no baseline.
func TestScanExpectedFindings(t *testing.T) {
	env, cmd := testbedArgs(t, testbed.Options{Profile: "sloppy-errors"})
	expected := filepath.Join(t.TempDir(), "expected.json")
	scan := func(more ...string) (int, string, string) {
		t.Helper()
		return runCLI(t, append(append([]string{"scan", "--no-second-connection", "--env", env, "--expected-findings", expected}, more...), append([]string{"--"}, cmd...)...)...)
	}
	if code, _, errOut := scan("--update-expected"); code != exitOK {
		t.Fatalf("--update-expected: exit %d\n%s", code, errOut)
	}
	code, out, errOut := scan("--format", "sarif")
	if code != exitOK || !strings.Contains(errOut, " unexpected, 0 stale") {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	if !strings.Contains(out, `"suppressions"`) || strings.Contains(out, "automationDetails") {
		t.Errorf("SARIF: want suppressions on the expected results and no automationDetails without --sarif-category")
	}
	if _, out, _ := scan("--format", "sarif", "--sarif-category", "mcp/sloppy"); !strings.Contains(out, `"id": "mcp/sloppy/"`) {
		t.Errorf("--sarif-category did not reach automationDetails")
	}
	// An unreachable server: no file is written from what was not seen.
	before, _ := os.ReadFile(expected)
	code, _, errOut = runCLI(t, "scan", "--expected-findings", expected, "--update-expected", "--", "/nonexistent/mcp-server")
	after, _ := os.ReadFile(expected)
	if code != exitUnreachable || !strings.Contains(errOut, "not updated: the run did not complete") || !strings.Contains(errOut, "/nonexistent/mcp-server: no MCP session") || string(before) != string(after) {
		t.Fatalf("an unreachable server: exit %d\n%s", code, errOut)
	}
}
