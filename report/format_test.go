package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"
)

func sampleFindings() []Finding {
	yes := true
	return []Finding{
		{Rule: "R-INFO", Severity: SeverityInfo, Message: "fyi"},
		{Rule: "R-ERR", Severity: SeverityError, Tool: "search", Pointer: "/inputSchema/properties/q", Message: "removed <q>", Change: "CHG-X-12345678", Breaking: &yes},
	}
}

func TestWriteSARIF(t *testing.T) {
	var b bytes.Buffer
	cat := Catalogue{{ID: "R-ERR", Severity: SeverityError, Title: "err", Detail: "detail"}}
	if err := WriteSARIF(&b, "mcpdrill", "1.0", cat, sampleFindings()); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Version string `json:"version"`
		Runs    []struct {
			Tool struct {
				Driver struct {
					Rules []struct{ ID string } `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			Results []struct {
				RuleID    string         `json:"ruleId"`
				RuleIndex int            `json:"ruleIndex"`
				Level     string         `json:"level"`
				Props     map[string]any `json:"properties"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	r := doc.Runs[0]
	if doc.Version != "2.1.0" || len(r.Results) != 2 || r.Results[0].RuleID != "R-ERR" || r.Results[0].Level != "error" ||
		r.Results[1].Level != "note" || r.Tool.Driver.Rules[r.Results[1].RuleIndex].ID != "R-INFO" || r.Results[0].Props["breaking"] != true {
		t.Errorf("unexpected SARIF:\n%s", b.String())
	}
}

func TestWriteJUnit(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJUnit(&b, "drift", SeverityWarn, sampleFindings()); err != nil {
		t.Fatal(err)
	}
	var doc junitSuites
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Tests != 2 || doc.Failures != 1 || doc.Suites[0].Cases[0].Failure == nil || doc.Suites[0].Cases[1].Failure != nil {
		t.Errorf("unexpected JUnit:\n%s", b.String())
	}
	b.Reset()
	if err := WriteJUnit(&b, "drift", SeverityError, nil); err != nil || !strings.Contains(b.String(), `tests="1"`) {
		t.Errorf("empty report: %v\n%s", err, b.String())
	}
}
