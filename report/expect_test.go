package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func result(rule string, sev Severity, tool, pointer, msg string) Result {
	return Result{Finding: Finding{Rule: rule, Severity: sev, Tool: tool, Pointer: pointer, Message: msg}}
}

// expectations builds a file of entries through its own writer and parser.
func expectations(t *testing.T, xs ...Expectation) *Expectations {
	t.Helper()
	var b bytes.Buffer
	if err := WriteExpectations(&b, &Expectations{Kind: ExpectationsKind, SchemaVersion: ExpectationsVersion, Findings: xs}); err != nil {
		t.Fatal(err)
	}
	e, err := ParseExpectations(b.Bytes())
	if err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	return e
}

func TestExpectationsFollowTheSuitesBaselineRule(t *testing.T) {
	vacuous := result("MCP-OUT-VACUOUS", SeverityWarn, "search", "/outputSchema", "a corrupted but well-typed payload validates; 2 of 5 single-leaf corruptions rejected")
	unknown := result("MCP-ERR-UNKNOWN-TOOL", SeverityError, "", "", "unknown_tool: answered with a tool_error result")
	pinned := func(r Result) Expectation {
		return Expectation{Rule: r.Rule, Tool: ptr(r.Tool), Pointer: ptr(r.Pointer), Content: FindingContent(r)}
	}
	everywhere := func(string) bool { return true }

	t.Run("an expected failure passes", func(t *testing.T) {
		e := expectations(t, pinned(vacuous))
		rs := []Result{vacuous}
		v := e.Evaluate(rs, SeverityWarn, everywhere)
		if v.Fails() || len(v.Expected) != 1 || !rs[0].Expected {
			t.Fatalf("verdict %+v, expected %v", v, rs[0].Expected)
		}
	})
	t.Run("an unexpected failure fails", func(t *testing.T) {
		e := expectations(t, pinned(vacuous))
		v := e.Evaluate([]Result{vacuous, unknown}, SeverityWarn, everywhere)
		if !v.Fails() || fmt.Sprint(v.Unexpected) != "[1]" || len(v.Stale) != 0 {
			t.Fatalf("verdict %+v", v)
		}
	})
	t.Run("an entry whose finding is fixed is stale", func(t *testing.T) {
		e := expectations(t, pinned(vacuous), pinned(unknown))
		v := e.Evaluate([]Result{unknown}, SeverityWarn, everywhere)
		if !v.Fails() || fmt.Sprint(v.Stale) != "[0]" || len(v.Unexpected) != 0 {
			t.Fatalf("verdict %+v", v)
		}
	})
	t.Run("an acknowledged finding that changes comes back", func(t *testing.T) {
		e := expectations(t, pinned(vacuous))
		changed := vacuous
		changed.Message = strings.Replace(changed.Message, "2 of 5", "1 of 5", 1)
		v := e.Evaluate([]Result{changed}, SeverityWarn, everywhere)
		if !v.Fails() || fmt.Sprint(v.Unexpected) != "[0]" || v.Changed[0] != 0 || len(v.Stale) != 0 {
			t.Fatalf("verdict %+v", v)
		}
	})
	t.Run("a severity change is a change", func(t *testing.T) {
		e := expectations(t, pinned(vacuous))
		worse := vacuous
		worse.Severity = SeverityError
		if v := e.Evaluate([]Result{worse}, SeverityWarn, everywhere); !v.Fails() {
			t.Fatalf("verdict %+v", v)
		}
	})
	t.Run("a broad entry expects every finding of its place", func(t *testing.T) {
		e := expectations(t, Expectation{Rule: "MCP-OUT-VACUOUS"})
		other := vacuous
		other.Tool = "fetch"
		if v := e.Evaluate([]Result{vacuous, other}, SeverityWarn, everywhere); v.Fails() || len(v.Expected) != 2 {
			t.Fatalf("verdict %+v", v)
		}
	})
	t.Run("a finding below the threshold keeps its entry alive", func(t *testing.T) {
		e := expectations(t, pinned(vacuous))
		if v := e.Evaluate([]Result{vacuous}, SeverityError, everywhere); v.Fails() || len(v.Expected) != 0 {
			t.Fatalf("verdict %+v", v)
		}
	})
	t.Run("an incomplete run establishes no staleness", func(t *testing.T) {
		e := expectations(t, pinned(vacuous))
		v := e.Evaluate(nil, SeverityWarn, func(string) bool { return false })
		if v.Fails() || fmt.Sprint(v.Unsettled) != "[0]" {
			t.Fatalf("verdict %+v", v)
		}
	})
	t.Run("servers are told apart", func(t *testing.T) {
		a, b := vacuous, vacuous
		a.Subject, b.Subject = "a", "b"
		x := pinned(a)
		x.Server = ptr("a")
		e := expectations(t, x)
		v := e.Evaluate([]Result{a, b}, SeverityWarn, func(s string) bool { return s != "c" })
		if fmt.Sprint(v.Expected, v.Unexpected) != "[0] [1]" {
			t.Fatalf("verdict %+v", v)
		}
	})
}

func TestRebaseline(t *testing.T) {
	vacuous := result("MCP-OUT-VACUOUS", SeverityWarn, "search", "/outputSchema", "validates")
	info := result("MCP-OUT-NO-SCHEMA", SeverityInfo, "echo", "", "no outputSchema")
	broad := Expectation{Rule: "MCP-ERR-UNKNOWN-TOOL", Reason: "the SDK's answer"}
	stale := Expectation{Rule: "MCP-CONF-PING", Reason: "fixed since"}
	old := expectations(t, broad, stale, Expectation{Rule: vacuous.Rule, Tool: ptr("search"), Content: "sha256:" + strings.Repeat("0", 64), Reason: "tracked upstream"})
	unknown := result("MCP-ERR-UNKNOWN-TOOL", SeverityError, "", "", "unknown_tool: tool_error")
	rs := []Result{vacuous, info, unknown}
	got := old.Rebaseline(rs, SeverityWarn)
	var b bytes.Buffer
	if err := WriteExpectations(&b, got); err != nil {
		t.Fatal(err)
	}
	back, err := ParseExpectations(b.Bytes())
	if err != nil {
		t.Fatalf("the rewritten file does not parse: %v\n%s", err, b.String())
	}
	if v := back.Evaluate(rs, SeverityWarn, func(string) bool { return true }); v.Fails() {
		t.Fatalf("the rewritten file does not pass its own run: %+v\n%s", v, b.String())
	}
	if len(back.Findings) != 2 || back.Findings[0].Rule != broad.Rule || back.Findings[0].Reason != broad.Reason {
		t.Fatalf("want the broad entry kept and one new entry:\n%s", b.String())
	}
	n := back.Findings[1]
	if n.Content != FindingContent(vacuous) || n.Reason != "tracked upstream" || n.Message != "validates" || *n.Tool != "search" {
		t.Errorf("new entry %+v: want the finding pinned with the reason of its earlier acknowledgement", n)
	}
	if first := (*Expectations)(nil).Rebaseline(rs, SeverityError); len(first.Findings) != 1 {
		t.Errorf("a first baseline at error: %+v", first.Findings)
	}
}

// TestParseExpectationsAbuse is the abuse list of the file format, one
// case each.
func TestParseExpectationsAbuse(t *testing.T) {
	doc := func(findings string) string {
		return `{"kind":"mcpdrill-expected-findings","schema_version":1,"findings":[` + findings + `]}`
	}
	sum := "sha256:" + strings.Repeat("ab", 32)
	for _, tt := range []struct {
		name, data, want string
	}{
		{"a member given twice", `{"kind":"mcpdrill-expected-findings","schema_version":1,"findings":[{"rule":"X","tool":"a","tool":"b"}]}`, `member "/findings/0/tool" is given twice`},
		{"a member given twice at the top", `{"kind":"x","kind":"mcpdrill-expected-findings","schema_version":1,"findings":[]}`, `member "/kind" is given twice`},
		{"an unknown member (a typo)", doc(`{"rule":"X","pointr":"/a"}`), `unknown field "pointr"`},
		{"trailing data", doc(``) + `{}`, "trailing data"},
		{"not JSON", `{"kind":`, "not an expected-findings file"},
		{"another kind of file", `{"kind":"capture","schema_version":1,"findings":[]}`, `kind is "capture"`},
		{"no kind", `{"schema_version":1,"findings":[]}`, `kind is ""`},
		{"a newer version", `{"kind":"mcpdrill-expected-findings","schema_version":2,"findings":[]}`, "schema_version 2"},
		{"too many entries", doc(strings.TrimSuffix(strings.Repeat(`{"rule":"X"},`, MaxExpectations+1), ",")), "at most 10000"},
		{"a long field", doc(`{"rule":"X","reason":"` + strings.Repeat("a", maxExpectationField+1) + `"}`), "reason is longer than"},
		{"no rule", doc(`{"tool":"a"}`), "is not a rule id"},
		{"a rule with a control character", doc(`{"rule":"X\u001b[31m"}`), "is not a rule id"},
		{"a content that is no hash", doc(`{"rule":"X","content":"sha256:zz"}`), "is not sha256:"},
		{"two same entries", doc(`{"rule":"X","tool":"a","server":"s","pointer":"","content":"` + sum + `"},{"rule":"X","tool":"a","server":"s","pointer":"","content":"` + sum + `"}`), "are the same entry"},
		{"two same broad entries", doc(`{"rule":"X"},{"rule":"X"}`), "are the same entry"},
		{"an entry another covers", doc(`{"rule":"X","tool":"a","content":"` + sum + `"},{"rule":"X","tool":"a"}`), "findings[1] expects every finding findings[0] does"},
		{"wrong types", doc(`{"rule":7}`), "not an expected-findings file"},
		{"findings not an array", `{"kind":"mcpdrill-expected-findings","schema_version":1,"findings":{}}`, "not an expected-findings file"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseExpectations([]byte(tt.data))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
			if len(err.Error()) > 400 {
				t.Errorf("error of %d bytes: a hostile file's text must be bounded", len(err.Error()))
			}
		})
	}
	t.Run("hostile text is kept as data", func(t *testing.T) {
		e, err := ParseExpectations([]byte(doc(`{"rule":"X","tool":"\u001b]8;;http://evil\u0007x","reason":"\r\n::error::owned"}`)))
		if err != nil {
			t.Fatal(err)
		}
		// Label quotes the tool (%q): no control character survives.
		if l := e.Findings[0].Label(); strings.ContainsAny(l, "\x1b\x07\r\n") {
			t.Errorf("label %q carries control characters", l)
		}
	})
	t.Run("an empty list parses", func(t *testing.T) {
		if e, err := ParseExpectations([]byte(doc(``))); err != nil || len(e.Findings) != 0 {
			t.Fatalf("%v %v", e, err)
		}
	})
}

func FuzzParseExpectations(f *testing.F) {
	f.Add([]byte(`{"kind":"mcpdrill-expected-findings","schema_version":1,"findings":[{"rule":"X","tool":"t","content":"sha256:` + strings.Repeat("0", 64) + `"}]}`))
	f.Add([]byte(`{"kind":"mcpdrill-expected-findings","schema_version":1,"findings":[{"rule":"X"},{"rule":"Y","server":"s"}]}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := ParseExpectations(b)
		if err != nil {
			return
		}
		// What parses writes back to what parses the same.
		var out bytes.Buffer
		if err := WriteExpectations(&out, e); err != nil {
			t.Fatal(err)
		}
		again, err := ParseExpectations(out.Bytes())
		if err != nil {
			t.Fatalf("written back, it does not parse: %v\n%s", err, out.String())
		}
		a, _ := json.Marshal(e)
		c, _ := json.Marshal(again)
		if !bytes.Equal(a, c) {
			t.Fatalf("round trip changed the file:\n%s\n%s", a, c)
		}
		e.Evaluate([]Result{result("X", SeverityError, "t", "", "m")}, SeverityWarn, nil)
	})
}

func TestSARIFCategoryAndSuppressions(t *testing.T) {
	r := result("MCP-OUT-VACUOUS", SeverityWarn, "search", "/outputSchema", "validates")
	r.Expected = true
	for _, tt := range []struct{ category, want string }{{"", ""}, {"mcp/prod", "mcp/prod/"}, {"x/", "x/"}} {
		var b bytes.Buffer
		if err := WriteSARIF(&b, Output{Command: "scan", Category: tt.category, Results: []Result{r}}); err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Runs []struct {
				AutomationDetails *struct{ ID string } `json:"automationDetails"`
				Results           []struct {
					Suppressions []struct{ Kind, Status string }
				}
			}
		}
		if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		run := doc.Runs[0]
		switch {
		case tt.want == "" && run.AutomationDetails != nil:
			t.Errorf("no category: automationDetails %+v, want none (the uploader's category applies only then)", run.AutomationDetails)
		case tt.want != "" && (run.AutomationDetails == nil || run.AutomationDetails.ID != tt.want):
			t.Errorf("category %q: automationDetails %+v, want id %q", tt.category, run.AutomationDetails, tt.want)
		}
		if s := run.Results[0].Suppressions; len(s) != 1 || s[0].Kind != "external" || s[0].Status != "accepted" {
			t.Errorf("an expected result's suppressions: %+v", s)
		}
	}
}
