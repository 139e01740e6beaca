package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
)

func sampleFindings() []Finding {
	yes := true
	return []Finding{
		{Rule: "MCP-CONF-SERVER-INFO", Severity: SeverityInfo, Message: "fyi"},
		{Rule: "MCP-DRIFT-SCHEMA", Severity: SeverityError, Tool: "search", Pointer: "/inputSchema/properties/q", Message: "removed <q>", Change: "CHG-X-12345678", Breaking: &yes},
		{Rule: "MCP-OUT-VACUOUS", Severity: SeverityWarn, Tool: "weather", Message: "accepts 100% of corruptions,\nsays: nothing"},
	}
}

var sampleCatalogue = Catalogue{
	{ID: "MCP-DRIFT-SCHEMA", Severity: SeverityError, Title: "Breaking schema change", Detail: "The served tool differs."},
	{ID: "MCP-OUT-VACUOUS", Severity: SeverityWarn, Title: "Vacuous output schema", Detail: "It accepts anything."},
}

func sampleOutput() Output {
	lines := map[string]int{"search": 3, "weather": 9}
	return Output{Command: "drift check", Version: "1.0", Catalogue: sampleCatalogue, Threshold: SeverityError,
		Results: Locate(sampleFindings(), "testdata/tools.json", lines), Duration: 1500 * time.Millisecond,
		Checks: []Check{
			{Class: "tools", Name: "search", Claims: func(r Result) bool { return r.Tool == "search" }, Time: 20 * time.Millisecond},
			{Class: "tools", Name: "weather", Claims: func(r Result) bool { return r.Tool == "weather" }},
			{Class: "tools", Name: "echo", Claims: func(r Result) bool { return r.Tool == "echo" }},
			{Class: "conformance", Name: "MCP-CONF-CACHE-HINTS", Skipped: "not_applicable: legacy revision"},
		}}
}

func TestWriteSARIF(t *testing.T) {
	var b bytes.Buffer
	if err := WriteSARIF(&b, sampleOutput()); err != nil {
		t.Fatal(err)
	}
	log := testutil.CheckSARIF(t, b.Bytes())
	testutil.Golden(t, "sarif.golden.json", b.Bytes())
	rs := log.Runs[0].Results
	if len(rs) != 3 || rs[0].RuleID != "MCP-DRIFT-SCHEMA" || rs[0].Level != "error" || rs[2].Level != "note" ||
		rs[0].URI() != "testdata/tools.json" || rs[0].Line() != 3 || rs[1].Line() != 9 || rs[2].Line() != 1 {
		t.Errorf("unexpected SARIF:\n%s", b.String())
	}
	// A rule missing from the catalogue is still listed, and linked.
	if r := log.Runs[0].Tool.Driver.Rules[2]; r.ID != "MCP-CONF-SERVER-INFO" || !strings.HasSuffix(r.HelpURI, "#4-specification-conformance") {
		t.Errorf("rule %+v", r)
	}
}

func TestSARIFStableAcrossOrder(t *testing.T) {
	o := sampleOutput()
	var a, b bytes.Buffer
	if err := WriteSARIF(&a, o); err != nil {
		t.Fatal(err)
	}
	// The same findings in another order and at other lines (the manifest
	// was reordered) keep their fingerprints.
	o.Results = Locate(sampleFindings(), "testdata/tools.json", map[string]int{"search": 40, "weather": 2})
	slices.Reverse(o.Results)
	if err := WriteSARIF(&b, o); err != nil {
		t.Fatal(err)
	}
	fps := func(data []byte) []string {
		var out []string
		for _, r := range testutil.CheckSARIF(t, data).Runs[0].Results {
			out = append(out, r.RuleID+"="+r.PartialFingerprints[FingerprintKey])
		}
		return out
	}
	if fa, fb := fps(a.Bytes()), fps(b.Bytes()); !slices.Equal(fa, fb) {
		t.Errorf("fingerprints moved:\n%v\n%v", fa, fb)
	}
	// Digits in the message do not make a new alert; another pointer does.
	f := sampleFindings()[1]
	r1 := Result{Finding: f}
	r3 := r1
	r3.Pointer = "/inputSchema/properties/other"
	if Fingerprint(Result{Finding: Finding{Rule: "R", Message: "took 12 ms"}}) != Fingerprint(Result{Finding: Finding{Rule: "R", Message: "took 345 ms"}}) ||
		Fingerprint(r1) == Fingerprint(r3) || Fingerprint(r1) == Fingerprint(Result{Finding: f, Subject: "other-server"}) {
		t.Error("fingerprint keys")
	}
}

func TestSARIFResultCap(t *testing.T) {
	var rs []Result
	for i := range SARIFMaxResults + 10 {
		sev := SeverityInfo
		if i%1000 == 0 {
			sev = SeverityError
		}
		rs = append(rs, Result{Finding: Finding{Rule: "MCP-OUT-VACUOUS", Severity: sev, Tool: fmt.Sprintf("t%05d", i), Message: "m"}, Location: Location{Path: "tools.json", Line: i + 1}})
	}
	var b bytes.Buffer
	if err := WriteSARIF(&b, Output{Command: "scan", Catalogue: sampleCatalogue, Results: rs}); err != nil {
		t.Fatal(err)
	}
	log := testutil.CheckSARIF(t, b.Bytes())
	var doc struct {
		Runs []struct {
			Properties map[string]any `json:"properties"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	got := log.Runs[0].Results
	if len(got) != SARIFMaxResults || got[0].Level != "error" || got[25].Level != "error" || doc.Runs[0].Properties["omittedResults"] != float64(10) {
		t.Errorf("%d results, first %s, properties %v", len(got), got[0].Level, doc.Runs[0].Properties)
	}
}

func TestWriteJUnit(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJUnit(&b, sampleOutput()); err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, "junit.golden.xml", b.Bytes())
	var doc junitSuites
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	s := doc.Suites[0]
	// search fails (error), weather is skipped (a warning below --fail-on),
	// echo passes, the cache-hints check is skipped, the info finding no
	// check claims is a case of its own, skipped.
	if doc.Tests != 5 || doc.Failures != 1 || doc.Skipped != 3 || s.Time != "1.500" {
		t.Errorf("counts: %+v\n%s", doc, b.String())
	}
	byName := map[string]junitCase{}
	for _, c := range s.Cases {
		byName[c.Name] = c
		if strings.ContainsAny(c.Classname, " \t") || c.Time == "" {
			t.Errorf("case %q: classname %q, time %q", c.Name, c.Classname, c.Time)
		}
	}
	if c := byName["search"]; c.Failure == nil || c.Failure.Type != "error" || c.Time != "0.020" || c.Classname != "mcpdrill.drift-check.tools" {
		t.Errorf("search: %+v", c)
	}
	if c := byName["weather"]; c.Skipped == nil || !strings.HasPrefix(c.Skipped.Message, "warn: MCP-OUT-VACUOUS") {
		t.Errorf("weather: %+v", c)
	}
	if c := byName["echo"]; c.Failure != nil || c.Skipped != nil {
		t.Errorf("echo: %+v", c)
	}
	if c := byName["MCP-CONF-SERVER-INFO"]; c.Skipped == nil || c.Classname != "mcpdrill.drift-check.findings" {
		t.Errorf("unclaimed finding: %+v", c)
	}

	// Warnings fail at --fail-on warn; a failed check fails unless never.
	o := sampleOutput()
	o.Threshold = SeverityWarn
	o.Checks = append(o.Checks, Check{Class: "servers", Name: "down", Failed: "failed (launch): exited"})
	failures := func(o Output) int {
		var b bytes.Buffer
		var doc junitSuites
		if err := WriteJUnit(&b, o); err != nil {
			t.Fatal(err)
		}
		if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		return doc.Failures
	}
	if n := failures(o); n != 3 {
		t.Errorf("fail-on warn: %d failures", n)
	}
	o.Threshold = ""
	if n := failures(o); n != 0 {
		t.Errorf("fail-on never: %d failures", n)
	}

	b.Reset()
	if err := WriteJUnit(&b, Output{Command: "scan"}); err != nil || !strings.Contains(b.String(), `tests="1"`) {
		t.Errorf("empty report: %v\n%s", err, b.String())
	}
}

func TestWriteAnnotations(t *testing.T) {
	var b bytes.Buffer
	o := sampleOutput()
	o.Results = append(o.Results, Result{Finding: Finding{Rule: "MCP-SCAN-UNREACHABLE", Severity: SeverityError, Message: "no answer"},
		Location: Location{Path: "dir,with:odd%chars/servers.json", Line: 4}, Subject: "srv"})
	if err := WriteAnnotations(&b, o); err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, "annotations.golden.txt", b.Bytes())
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		if !strings.HasPrefix(line, "::") && !strings.HasPrefix(line, "mcpdrill ") {
			t.Errorf("stray line %q", line)
		}
	}
}

func TestAnnotationEscaping(t *testing.T) {
	tests := []struct{ in, data, prop string }{
		{"plain", "plain", "plain"},
		{"100%", "100%25", "100%25"},
		{"a\nb", "a%0Ab", `a\nb`},
		{"a\r\nb", `a\r%0Ab`, `a\r\nb`},
		{"k: v, w", "k: v, w", "k%3A v%2C w"},
		{"%0A", "%250A", "%250A"},
		// What a server said is made safe first (safetext).
		{"\x1b]52;c;x\x07 \u202e", `\x1b]52;c;x\a \u202e`, `\x1b]52;c;x\a \u202e`},
		{"ok\n::add-mask::x", `ok%0A\x3a:add-mask::x`, `ok\n%3A%3Aadd-mask%3A%3Ax`},
	}
	for _, tc := range tests {
		if got := escapeData(tc.in); got != tc.data {
			t.Errorf("escapeData(%q) = %q, want %q", tc.in, got, tc.data)
		}
		if got := escapeProperty(tc.in); got != tc.prop {
			t.Errorf("escapeProperty(%q) = %q, want %q", tc.in, got, tc.prop)
		}
	}
}

func TestToolLines(t *testing.T) {
	tests := []struct {
		name, doc string
		want      map[string]int
	}{
		{"list result", "{\n \"tools\": [\n  {\"name\": \"a\"},\n  {\n   \"description\": \"x\",\n   \"name\": \"b\"\n  }\n ]\n}\n", map[string]int{"a": 3, "b": 4}},
		{"bare array", "[{\"name\":\"a\"},\n{\"inputSchema\":{\"properties\":{\"name\":{\"type\":\"string\"}}},\"name\":\"b\"}]", map[string]int{"a": 1, "b": 2}},
		{"rpc frame", "{\"jsonrpc\":\"2.0\",\"id\":1,\n\"result\":{\"tools\":[\n{\"name\":\"a\"}]}}", map[string]int{"a": 3}},
		{"capture canaries are not tools", "{\"tools\":[{\"name\":\"a\"}],\n\"canaries\":[{\"name\":\"c\",\"tool\":\"a\"}]}", map[string]int{"a": 1}},
		{"first of a repeated name", "[{\"name\":\"a\"},\n{\"name\":\"a\"}]", map[string]int{"a": 1}},
		{"broken JSON keeps what was read", "[{\"name\":\"a\"},\n{\"name\":", map[string]int{"a": 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ToolLines([]byte(tc.doc))
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestHelpURI(t *testing.T) {
	for id, want := range map[string]string{
		"MCP-DRIFT-CALL-OUTPUT-SCHEMA": "gated-tool-invocation",
		"MCP-DRIFT-CANARY-SHAPE":       "behavioural-canaries-drift-capture-drift-check",
		"MCP-DRIFT-TOOL-MISSING":       "manifest-vs-live-mcpdrill-drift-manifest---url-url-----cmd",
		"CHG-TOOL-ADDED":               "schema-diff-classifier",
		"NOPE":                         "",
	} {
		if got := MethodologyAnchor(id); got != want {
			t.Errorf("%s: %q, want %q", id, got, want)
		}
	}
	if HelpURI("NOPE") != "" || !strings.HasPrefix(HelpURI("MCP-ERR-PARSE"), RepositoryURL+"/blob/main/METHODOLOGY.md#") {
		t.Error(HelpURI("MCP-ERR-PARSE"))
	}
}

// TestRequirementInFormats: a finding that grades a requirement names it in
// SARIF (result properties, and the rule's help), in the workflow
// annotation (title and message) and in the JUnit case's text.
func TestRequirementInFormats(t *testing.T) {
	q := &Requirement{ID: "REQ-PAGINATION-02", Revision: "2025-11-25", Level: "SHOULD",
		Section: "server/utilities/pagination#error-handling", URL: SpecURL("2025-11-25", "server/utilities/pagination#error-handling")}
	f := Finding{Rule: "MCP-CONF-INVALID-CURSOR", Severity: SeverityWarn, Message: "served a page", Requirement: q}
	cat := Catalogue{{ID: "MCP-CONF-INVALID-CURSOR", Severity: SeverityWarn, Title: "Invalid cursor served", Detail: "Refuse it.",
		Requirements: []RuleRequirement{{ID: "REQ-PAGINATION-02", Level: "SHOULD", Revisions: []string{"2025-06-18", "2025-11-25"}, Section: "server/utilities/pagination#error-handling"}}}}
	o := Output{Command: "scan", Catalogue: cat, Threshold: SeverityWarn, Results: Locate([]Finding{f}, ".mcpdrill/scan", nil),
		Checks: []Check{{Class: "requirements", Name: "REQ-PAGINATION-02", Claims: func(r Result) bool { return r.Requirement != nil && r.Requirement.ID == "REQ-PAGINATION-02" }}}}

	var sarif bytes.Buffer
	if err := WriteSARIF(&sarif, o); err != nil {
		t.Fatal(err)
	}
	log := testutil.CheckSARIF(t, sarif.Bytes())
	props := log.Runs[0].Results[0].Properties
	if props["requirement"] != "REQ-PAGINATION-02" || props["specRevision"] != "2025-11-25" || props["requirementLevel"] != "SHOULD" ||
		props["specSection"] != q.Section || props["specUrl"] != "https://modelcontextprotocol.io/specification/2025-11-25/server/utilities/pagination#error-handling" {
		t.Errorf("result properties %v", props)
	}
	if h := log.Runs[0].Tool.Driver.Rules[0].Help.Text; !strings.Contains(h, "It grades REQ-PAGINATION-02 (SHOULD; 2025-06-18, 2025-11-25: server/utilities/pagination#error-handling).") {
		t.Errorf("rule help %q", h)
	}

	var gh bytes.Buffer
	if err := WriteAnnotations(&gh, o); err != nil {
		t.Fatal(err)
	}
	want := "::warning file=.mcpdrill/scan,line=1,title=MCP-CONF-INVALID-CURSOR REQ-PAGINATION-02::served a page [REQ-PAGINATION-02 (SHOULD, 2025-11-25 server/utilities/pagination#error-handling)]"
	if line := strings.SplitN(gh.String(), "\n", 2)[0]; line != want {
		t.Errorf("annotation %q", line)
	}

	var ju bytes.Buffer
	if err := WriteJUnit(&ju, o); err != nil {
		t.Fatal(err)
	}
	if s := ju.String(); !strings.Contains(s, `<testcase name="REQ-PAGINATION-02" classname="mcpdrill.scan.requirements"`) ||
		!strings.Contains(s, "MCP-CONF-INVALID-CURSOR [warn] served a page [REQ-PAGINATION-02 (SHOULD, 2025-11-25 server/utilities/pagination#error-handling)]") {
		t.Errorf("JUnit:\n%s", s)
	}
}

// lineCounter counts only the bytes since the offset it was last asked
// about, and starts again if asked about an earlier one.
func TestLineCounter(t *testing.T) {
	data := []byte("a\nb\n\nc\nd")
	c := &lineCounter{data: data}
	for _, tc := range []struct {
		off  int64
		line int
	}{{0, 1}, {1, 1}, {2, 2}, {5, 4}, {5, 4}, {8, 5}, {100, 5}, {3, 2}, {-1, 1}} {
		if got := c.at(tc.off); got != tc.line {
			t.Errorf("at(%d) = %d, want %d", tc.off, got, tc.line)
		}
	}
	// One line holding many tools: every tool on line 1.
	var b strings.Builder
	b.WriteString(`[`)
	for i := range 500 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"t%d"}`, i)
	}
	b.WriteString(`]`)
	lines := ToolLines([]byte(b.String()))
	if len(lines) != 500 || lines["t0"] != 1 || lines["t499"] != 1 {
		t.Errorf("%d tools placed, t0 on %d, t499 on %d", len(lines), lines["t0"], lines["t499"])
	}
}
