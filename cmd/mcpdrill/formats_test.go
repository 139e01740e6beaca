package main

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
	"github.com/mcpdrill/mcpdrill/internal/testbed"
	"github.com/mcpdrill/mcpdrill/report"
	"github.com/mcpdrill/mcpdrill/scan"
)

// goldenCI compares out with testdata/ci/NAME, mcpdrill's version masked.
func goldenCI(t *testing.T, name, out string) {
	t.Helper()
	got := strings.ReplaceAll(out, `"version": "`+version+`"`, `"version": "VERSION"`)
	testutil.Golden(t, filepath.Join("ci", name), []byte(got))
}

// junitDoc is the part of a JUnit report the tests read.
type junitDoc struct {
	Tests    int `xml:"tests,attr"`
	Failures int `xml:"failures,attr"`
	Skipped  int `xml:"skipped,attr"`
	Suites   []struct {
		Cases []junitTestCase `xml:"testcase"`
	} `xml:"testsuite"`
}

// junitTestCase is one case of a junitDoc.
type junitTestCase struct {
	Name      string  `xml:"name,attr"`
	Classname string  `xml:"classname,attr"`
	Time      *string `xml:"time,attr"`
	Failure   *struct {
		Text string `xml:",chardata"`
	} `xml:"failure"`
	Skipped *struct {
		Message string `xml:"message,attr"`
	} `xml:"skipped"`
}

func parseJUnit(t *testing.T, out string) junitDoc {
	t.Helper()
	var doc junitDoc
	if err := xml.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("JUnit: %v\n%s", err, out)
	}
	for _, c := range doc.Suites[0].Cases {
		if strings.ContainsAny(c.Classname, " \t") || !strings.HasPrefix(c.Classname, "mcpdrill.") || c.Time == nil {
			t.Errorf("case %q: classname %q, time %v", c.Name, c.Classname, c.Time)
		}
	}
	return doc
}

// checkAnnotations checks GitHub workflow commands: one per finding, each
// with a file and line, then the summary line.
func checkAnnotations(t *testing.T, out string, results int) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != results+1 || !strings.HasPrefix(lines[len(lines)-1], "mcpdrill ") {
		t.Errorf("want %d annotations and a summary:\n%s", results, out)
	}
	for _, l := range lines[:len(lines)-1] {
		if !(strings.HasPrefix(l, "::error file=") || strings.HasPrefix(l, "::warning file=") || strings.HasPrefix(l, "::notice file=")) ||
			!strings.Contains(l, ",line=") || !strings.Contains(l, ",title=MCP-") {
			t.Errorf("annotation %q", l)
		}
	}
}

const (
	ciBase    = "testdata/ci/base.json"
	ciCurrent = "testdata/ci/current.json"
	// ciBaseURI is ciBase from the repository's root.
	ciBaseURI = "cmd/mcpdrill/testdata/ci/base.json"
)

func TestDriftCheckCIFormats(t *testing.T) {
	args := []string{"drift", "check", "--baseline", ciBase, "--current", ciCurrent, "--format"}
	code, out, errOut := runCLI(t, append(args, "sarif")...)
	if code != exitFindings {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	log := testutil.CheckSARIF(t, []byte(out))
	goldenCI(t, "drift-check.sarif.json", out)
	lines := report.ToolLines(mustRead(t, ciBase))
	for _, r := range log.Runs[0].Results {
		want := max(lines[toolOf(r.Message.Text)], 1)
		if r.URI() != ciBaseURI || r.Line() != want {
			t.Errorf("%s %q at %s:%d, want %s:%d", r.RuleID, r.Message.Text, r.URI(), r.Line(), ciBaseURI, want)
		}
	}

	_, out, _ = runCLI(t, append(args, "github")...)
	goldenCI(t, "drift-check.github.txt", out)
	checkAnnotations(t, out, len(log.Runs[0].Results))

	_, out, _ = runCLI(t, append(args, "junit")...)
	doc := parseJUnit(t, out)
	// One case per tool of either side: search and delete_item fail,
	// echo and summarize (warnings) are skipped.
	if doc.Tests != 4 || doc.Failures != 2 || doc.Skipped != 2 {
		t.Errorf("JUnit counts %d/%d/%d:\n%s", doc.Tests, doc.Failures, doc.Skipped, out)
	}
	if code, _, _ := runCLI(t, append(args, "junit", "--fail-on", "never")...); code != exitOK {
		t.Errorf("--fail-on never: exit %d", code)
	}
}

// toolOf reads the tool out of a result message "TOOL: ...".
func toolOf(msg string) string {
	tool, _, _ := strings.Cut(msg, ": ")
	return tool
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The same drift, with the baseline's tools in another order and every
// entry on other lines, keeps its rule ids and fingerprints; only the
// lines move.
func TestSARIFFingerprintsSurviveReordering(t *testing.T) {
	var base struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(mustRead(t, ciBase), &base); err != nil {
		t.Fatal(err)
	}
	slices.Reverse(base.Tools)
	b, err := json.MarshalIndent(map[string]any{"tools": base.Tools}, "", "\t\t")
	if err != nil {
		t.Fatal(err)
	}
	reordered := filepath.Join(t.TempDir(), "base.json")
	if err := os.WriteFile(reordered, append([]byte("\n\n"), b...), 0o644); err != nil {
		t.Fatal(err)
	}
	keys := func(baseline string) (ids, fps []string, lines []int) {
		_, out, _ := runCLI(t, "drift", "check", "--baseline", baseline, "--current", ciCurrent, "--format", "sarif")
		for _, r := range testutil.CheckSARIF(t, []byte(out)).Runs[0].Results {
			ids = append(ids, r.RuleID)
			fps = append(fps, r.PartialFingerprints[report.FingerprintKey])
			lines = append(lines, r.Line())
		}
		return
	}
	ids1, fps1, lines1 := keys(ciBase)
	ids2, fps2, lines2 := keys(reordered)
	if !slices.Equal(ids1, ids2) || !slices.Equal(fps1, fps2) || len(fps1) != 5 {
		t.Errorf("rule ids or fingerprints changed:\n%v %v\n%v %v", ids1, fps1, ids2, fps2)
	}
	if slices.Equal(lines1, lines2) {
		t.Errorf("lines did not move: %v", lines1)
	}
	if u := slices.Compact(slices.Sorted(slices.Values(fps1))); len(u) != len(fps1) {
		t.Errorf("two results share a fingerprint: %v", fps1)
	}
}

func TestScanCIFormats(t *testing.T) {
	env, cmd := testbedArgs(t, testbed.Options{Profile: "sloppy-errors"})
	scanArgs := func(extra ...string) []string {
		return append(append(append([]string{"scan", "--no-second-connection", "--env", env}, extra...), "--"), cmd...)
	}
	code, out, errOut := runCLI(t, scanArgs("--format", "sarif")...)
	if code != exitFindings {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	log := testutil.CheckSARIF(t, []byte(out))
	if len(log.Runs[0].Results) == 0 {
		t.Fatal("no results")
	}
	for _, r := range log.Runs[0].Results {
		if r.URI() != defaultScanArtifact || r.Line() != 1 {
			t.Errorf("%s at %s:%d, want %s:1", r.RuleID, r.URI(), r.Line(), defaultScanArtifact)
		}
	}

	// --sarif-file names the file to attach to; a manifest gives tool lines.
	manifest := filepath.Join(t.TempDir(), "tools.json")
	if code, _, errOut := runCLI(t, "drift", "capture", writeStdioSpec(t, env, cmd), "-o", manifest); code != exitOK {
		t.Fatalf("capture: %s", errOut)
	}
	lines := report.ToolLines(mustRead(t, manifest))
	_, out, _ = runCLI(t, scanArgs("--format", "sarif", "--sarif-file", manifest)...)
	located := 0
	for _, r := range testutil.CheckSARIF(t, []byte(out)).Runs[0].Results {
		want := 1
		if l, ok := lines[toolOf(r.Message.Text)]; ok {
			want = l
			located++
		}
		if r.URI() != "file://"+filepath.ToSlash(manifest) || r.Line() != want {
			t.Errorf("%s %q at %s:%d, want line %d", r.RuleID, r.Message.Text, r.URI(), r.Line(), want)
		}
	}
	if located == 0 {
		t.Error("no result was placed at its tool's line")
	}

	_, out, _ = runCLI(t, scanArgs("--format", "github")...)
	checkAnnotations(t, out, len(log.Runs[0].Results))

	_, out, _ = runCLI(t, scanArgs("--format", "junit")...)
	doc := parseJUnit(t, out)
	_, jsonRep, _ := runCLI(t, scanArgs("--json", "--fail-on", "never")...)
	var rep scan.Report
	if err := json.Unmarshal([]byte(jsonRep), &rep); err != nil || rep.Requirements == nil {
		t.Fatalf("scan JSON: %v", err)
	}
	classes := map[string]int{}
	cases := map[string]junitTestCase{}
	for _, c := range doc.Suites[0].Cases {
		classes[strings.TrimPrefix(c.Classname, "mcpdrill.scan.")]++
		if c.Classname == "mcpdrill.scan.requirements" {
			cases[c.Name] = c
		}
	}
	// Issue 38: a case per requirement of the revision; a checked one is
	// run, a failed one at or above --fail-on fails (the sloppy server's
	// findings land in them), the others are skipped. A tool case per tool.
	for _, o := range rep.Requirements.Outcomes {
		c, ok := cases[o.ID]
		switch {
		case !ok:
			t.Errorf("no JUnit case for %s", o.ID)
		case o.Outcome == scan.OutcomePassed && (c.Failure != nil || c.Skipped != nil):
			t.Errorf("%s passed, case %+v", o.ID, c)
		case o.Outcome == scan.OutcomeNotApplicable || o.Outcome == scan.OutcomeNotVerified:
			if c.Skipped == nil {
				t.Errorf("%s %s, case not skipped", o.ID, o.Outcome)
			}
		}
	}
	for _, f := range rep.Findings {
		if q := f.Requirement; q != nil && f.Severity == report.SeverityError {
			if c := cases[q.ID]; c.Failure == nil || !strings.Contains(c.Failure.Text, f.Rule) {
				t.Errorf("%s (error, %s) is not a failure of its requirement's case: %+v", f.Rule, q.ID, c)
			}
		}
	}
	if len(cases) != len(rep.Requirements.Outcomes) || classes["tools"] == 0 || classes["probes"] != 0 || doc.Failures == 0 {
		t.Errorf("JUnit cases by class %v:\n%s", classes, out)
	}

	// --json is still --format json.
	_, jsonOut, _ := runCLI(t, scanArgs("--json", "--fail-on", "never")...)
	_, formatOut, _ := runCLI(t, scanArgs("--format", "json", "--fail-on", "never")...)
	var a, b map[string]any
	if json.Unmarshal([]byte(jsonOut), &a) != nil || json.Unmarshal([]byte(formatOut), &b) != nil || a["schema_version"] != "2" || len(a) != len(b) {
		t.Errorf("--json and --format json differ")
	}
}

// writeStdioSpec writes a drift spec that starts the stdio testbed.
func writeStdioSpec(t *testing.T, env string, cmd []string) string {
	t.Helper()
	name, val, _ := strings.Cut(env, "=")
	p := filepath.Join(t.TempDir(), "spec.yaml")
	doc := "server:\n  command: [" + joinYAML(cmd) + "]\n  env:\n    " + name + ": " + quoteYAML(val) + "\n"
	if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDriftCIFormatsLive(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base.json")
	if code, _, errOut := runCLI(t, "drift", "capture", writeSpec(t, dir, "s1.yaml", driftTestbed(t, "1", 1)), "-o", base); code != exitOK {
		t.Fatalf("capture: %s", errOut)
	}
	v2 := driftTestbed(t, "2", 1)
	code, out, errOut := runCLI(t, "drift", base, "--url", v2, "--format", "sarif")
	if code != exitFindings {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	log := testutil.CheckSARIF(t, []byte(out))
	lines := report.ToolLines(mustRead(t, base))
	for _, r := range log.Runs[0].Results {
		if r.URI() != "file://"+filepath.ToSlash(base) || r.Line() != max(lines[toolOf(r.Message.Text)], 1) {
			t.Errorf("%s %q at %s:%d", r.RuleID, r.Message.Text, r.URI(), r.Line())
		}
	}
	_, out, _ = runCLI(t, "drift", base, "--url", v2, "--format", "github")
	checkAnnotations(t, out, len(log.Runs[0].Results))
}

// studyServers writes a servers.json of two stdio testbeds and an entry
// that cannot be scanned (an unset variable), one member per line group.
func studyServers(t *testing.T) string {
	t.Helper()
	goodEnv, goodCmd := testbedArgs(t, testbed.Options{Profile: "good"})
	sloppyEnv, sloppyCmd := testbedArgs(t, testbed.Options{Profile: "sloppy-errors"})
	entry := func(env string, cmd []string) string {
		name, val, _ := strings.Cut(env, "=")
		b, err := json.Marshal(map[string]any{"command": cmd[0], "args": cmd[1:], "env": map[string]string{name: val}})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	doc := "{\n  \"mcpServers\": {\n    \"good\": " + entry(goodEnv, goodCmd) + ",\n    \"sloppy\": " + entry(sloppyEnv, sloppyCmd) +
		",\n    \"unset\": {\"url\": \"http://127.0.0.1:1/mcp\", \"headers\": {\"Authorization\": \"Bearer ${MCPDRILL_SURELY_UNSET}\"}}\n  }\n}\n"
	p := filepath.Join(t.TempDir(), "servers.json")
	if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestStudyRunCIFormats(t *testing.T) {
	servers := studyServers(t)
	run := func(extra ...string) (int, string) {
		t.Helper()
		code, out, errOut := runCLI(t, append([]string{"study", "run", servers, "-q", "-j", "2", "--no-second-connection"}, extra...)...)
		if code == exitUsage || code == exitInternal {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		return code, out
	}
	code, out := run("--format", "sarif")
	if code != exitOK {
		t.Errorf("default --fail-on never: exit %d", code)
	}
	log := testutil.CheckSARIF(t, []byte(out))
	want := map[string]int{"good": 3, "sloppy": 4, "unset": 5}
	seen := map[string]bool{}
	for _, r := range log.Runs[0].Results {
		server := toolOf(r.Message.Text)
		if r.URI() != "file://"+filepath.ToSlash(servers) || r.Line() != want[server] {
			t.Errorf("%s %q at %s:%d", r.RuleID, r.Message.Text, r.URI(), r.Line())
		}
		seen[server+" "+r.RuleID] = true
	}
	if !seen["unset MCP-STUDY-NOT-SCANNED"] || !seen["sloppy MCP-ERR-UNKNOWN-METHOD"] && !seen["sloppy MCP-ERR-UNKNOWN-TOOL"] {
		t.Errorf("results %v", seen)
	}

	_, out = run("--format", "junit")
	doc := parseJUnit(t, out)
	var names []string
	for _, c := range doc.Suites[0].Cases {
		names = append(names, c.Name)
		if c.Classname != "mcpdrill.study-run.servers" {
			t.Errorf("case %s: classname %s", c.Name, c.Classname)
		}
	}
	if !slices.Equal(names, []string{"good", "sloppy", "unset"}) || doc.Failures != 0 {
		t.Errorf("cases %v, %d failures (--fail-on never)", names, doc.Failures)
	}

	code, out = run("--format", "github", "--fail-on", "error")
	if code != exitFindings {
		t.Errorf("--fail-on error: exit %d", code)
	}
	checkAnnotations(t, out, len(log.Runs[0].Results))

	_, out = run("--format", "table")
	for _, s := range []string{"good", "sloppy", "unset", "failed (config)", "MCP-STUDY-NOT-SCANNED"} {
		if !strings.Contains(out, s) {
			t.Errorf("table lacks %q:\n%s", s, out)
		}
	}
}

// TestExitCodesPerCommand is the README's exit-code table, row by row: every
// command that reports findings, with the formats, exits as documented.
func TestExitCodesPerCommand(t *testing.T) {
	goodEnv, goodCmd := testbedArgs(t, testbed.Options{Profile: "good"})
	sloppyEnv, sloppyCmd := testbedArgs(t, testbed.Options{Profile: "sloppy-errors"})
	stdio := func(env string, cmd []string, args ...string) []string {
		return append(append(append(args, "--no-second-connection", "--env", env), "--"), cmd...)
	}
	dir := t.TempDir()
	goodServers := filepath.Join(dir, "servers.json")
	name, val, _ := strings.Cut(goodEnv, "=")
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"good": map[string]any{"command": goodCmd[0], "args": goodCmd[1:], "env": map[string]string{name: val}}}})
	if err := os.WriteFile(goodServers, b, 0o644); err != nil {
		t.Fatal(err)
	}
	mixed := studyServers(t)
	unreachable := []string{"--timeout", "1s", "--url", "http://127.0.0.1:1/mcp"}
	results := filepath.Join(dir, "results.json")
	tests := []struct {
		command string
		args    []string
		want    int
	}{
		{"scan", stdio(goodEnv, goodCmd, "scan"), exitOK},
		{"scan", stdio(sloppyEnv, sloppyCmd, "scan", "--format", "junit"), exitFindings},
		{"scan", stdio(sloppyEnv, sloppyCmd, "scan", "--format", "github", "--fail-on", "never"), exitOK},
		{"scan", []string{"scan", "--format", "yaml", "--url", "http://127.0.0.1:1/mcp"}, exitUsage},
		{"scan", []string{"scan", "--json", "--format", "sarif", "--url", "http://127.0.0.1:1/mcp"}, exitUsage},
		{"scan", append([]string{"scan", "--format", "sarif"}, unreachable...), exitUnreachable},
		{"drift", append([]string{"drift", ciBase, "--format", "sarif"}, unreachable...), exitUnreachable},
		{"drift", []string{"drift", "--format", "sarif"}, exitUsage},
		{"drift check", []string{"drift", "check", "--baseline", ciBase, "--current", ciBase, "--format", "github"}, exitOK},
		{"drift check", []string{"drift", "check", "--baseline", ciBase, "--current", ciCurrent, "--format", "sarif"}, exitFindings},
		{"drift check", []string{"drift", "check", "--baseline", ciBase, "--current", ciCurrent, "--fail-on", "never"}, exitOK},
		{"drift check", []string{"drift", "check", "--baseline", ciBase}, exitUsage},
		{"study run", []string{"study", "run", mixed, "-q", "--format", "table"}, exitOK},
		{"study run", []string{"study", "run", mixed, "-q", "--format", "sarif", "--fail-on", "error"}, exitFindings},
		{"study run", []string{"study", "run", goodServers, "-q", "--fail-on", "error", "-o", results}, exitOK},
		{"study run", []string{"study", "run", goodServers, "-q", "--format", "sarif", "-o", "-"}, exitUsage},
		{"study run", []string{"study", "run", goodServers, "-q", "--fail-on", "sometimes"}, exitUsage},
	}
	readme := string(mustRead(t, "../../README.md"))
	_, section, _ := strings.Cut(readme, "\n## Exit codes\n")
	section, _, _ = strings.Cut(section, "\n## ")
	for i, tc := range tests {
		t.Run(fmt.Sprintf("%s#%d", tc.command, i), func(t *testing.T) {
			if !strings.Contains(section, "| `"+tc.command+"` |") {
				t.Errorf("README's exit-code table has no row for %s", tc.command)
			}
			code, out, errOut := runCLI(t, tc.args...)
			if code != tc.want {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.want, out, errOut)
			}
		})
	}
}

// Every rule's SARIF helpUri points at a heading METHODOLOGY.md has, by
// GitHub's anchor rule (lower case; letters, digits, '-' and '_' kept,
// spaces made '-', everything else dropped).
func TestRuleHelpAnchorsExist(t *testing.T) {
	anchors := map[string]bool{}
	for _, line := range strings.Split(string(mustRead(t, "../../METHODOLOGY.md")), "\n") {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(strings.TrimLeft(line, "#"))) {
			switch {
			case r == ' ':
				b.WriteByte('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		anchors[b.String()] = true
	}
	cat, err := allRules()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range cat {
		a := report.MethodologyAnchor(r.ID)
		if a == "" || !anchors[a] {
			t.Errorf("%s: anchor %q is not a heading of METHODOLOGY.md", r.ID, a)
		}
	}
}
