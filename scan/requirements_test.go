package scan

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/mcp"
	"github.com/mcpdrill/mcpdrill/internal/testbed"
	"github.com/mcpdrill/mcpdrill/report"
)

// TestRequirementsAccounted checks the table: ids unique, sections and
// levels set, revisions covered, each requirement graded by catalogue rules
// or given one of the reasons; and every conformance rule of the catalogue
// cites at least one requirement.
func TestRequirementsAccounted(t *testing.T) {
	cat := Catalogue()
	seen := map[string]bool{}
	cited := map[string]bool{}
	for _, q := range Requirements("") {
		if seen[q.ID] {
			t.Errorf("%s: duplicate id", q.ID)
		}
		seen[q.ID] = true
		if q.Section == "" || strings.HasPrefix(q.Section, "/") || strings.Contains(q.Section, " ") {
			t.Errorf("%s: section %q is not a spec page path", q.ID, q.Section)
		}
		if q.Level != LevelMust && q.Level != LevelShould {
			t.Errorf("%s: level %q", q.ID, q.Level)
		}
		if q.Summary == "" || len(q.Revisions) == 0 {
			t.Errorf("%s: no summary or no revisions", q.ID)
		}
		for _, rev := range q.Revisions {
			if !slices.Contains(RequirementRevisions(), rev) {
				t.Errorf("%s: revision %q not covered", q.ID, rev)
			}
		}
		switch {
		case len(q.Checks) == 0 && !isReason(q.Reason):
			t.Errorf("%s: neither a check nor a reason (%q)", q.ID, q.Reason)
		case len(q.Checks) > 0 && q.Reason != "":
			t.Errorf("%s: both checks and a reason", q.ID)
		}
		for _, id := range q.Checks {
			if _, ok := cat.Lookup(id); !ok {
				t.Errorf("%s: check %s is not in the catalogue", q.ID, id)
			}
			cited[id] = true
		}
	}
	for _, r := range cat {
		if GradesConformance(r.ID) && !cited[r.ID] {
			t.Errorf("rule %s grades conformance but cites no requirement", r.ID)
		}
	}
	for _, rev := range RequirementRevisions() {
		if len(Requirements(rev)) == 0 {
			t.Errorf("%s: no requirements", rev)
		}
	}
}

// TestAccountRequirements: an undeclared capability is not applicable and
// never failed; a failed check fails its requirement; reasons are not
// verified.
func TestAccountRequirements(t *testing.T) {
	f := false
	r := &Report{
		Protocol:    Protocol{Revision: Rev20251125, Transport: "stdio"},
		Conformance: []Check{{ID: RuleCursorLoop, Status: CheckPass}, {ID: RuleStdoutPurity, Status: CheckFail}},
		Probes:      []Probe{{Name: "unknown_tool", Conformant: &f, rule: RuleErrUnknownTool}},
	}
	noTools := AccountRequirements(r, json.RawMessage(`{}`))
	withTools := AccountRequirements(r, json.RawMessage(`{"tools":{}}`))
	if noTools.Failed != 1 || withTools.Failed != 2 {
		t.Errorf("failed: without tools %d (want 1: stdout), with tools %d (want 2)", noTools.Failed, withTools.Failed)
	}
	if noTools.Passed != 1 {
		t.Errorf("passed %d, want 1 (cursor loop)", noTools.Passed)
	}
	for _, rc := range []*RequirementCounts{noTools, withTools} {
		if rc.Checked != rc.Passed+rc.Failed || rc.Checked+rc.NotApplicable+rc.NotVerified != rc.Requirements {
			t.Errorf("counts do not add up: %+v", rc)
		}
	}
	if noTools.NotApplicable <= withTools.NotApplicable {
		t.Errorf("n/a without tools %d, with %d: undeclared tools must be n/a", noTools.NotApplicable, withTools.NotApplicable)
	}
	if AccountRequirements(&Report{Protocol: Protocol{Revision: "2023-01-01"}}, nil) != nil {
		t.Error("a revision the table does not cover must give no counts")
	}
}

// TestLegacyReplyCheck: a legacy tools/list page with resultType or ttlMs
// fails MCP-CONF-LEGACY-REPLY; a plain one passes.
func TestLegacyReplyCheck(t *testing.T) {
	for _, tc := range []struct {
		page string
		want CheckStatus
	}{
		{`{"tools":[]}`, CheckPass},
		{`{"tools":[],"resultType":"complete","ttlMs":0}`, CheckFail},
	} {
		s := &scanner{sess: mcp.Session{Revision: Rev20251125}, list: mcp.ToolList{Raw: []json.RawMessage{json.RawMessage(tc.page)}}, rep: &Report{}}
		s.legacyReplyCheck()
		if len(s.rep.Conformance) != 1 || s.rep.Conformance[0].Status != tc.want {
			t.Errorf("%s: checks %+v, want %s", tc.page, s.rep.Conformance, tc.want)
		}
		if (tc.want == CheckFail) != (len(s.rep.Findings) == 1) {
			t.Errorf("%s: findings %+v", tc.page, s.rep.Findings)
		}
	}
}

// TestFindingsCiteRequirements: on every revision, each finding of a
// conformance rule (MCP-CONF-*, MCP-ERR-*) at warn or error names the
// requirement it grades, of that revision, and a requirement the table
// lists for the rule. The profiles that fail most checks are scanned on
// every revision they speak.
func TestFindingsCiteRequirements(t *testing.T) {
	if testing.Short() {
		t.Skip("25 scans")
	}
	for _, profile := range []string{"sloppy-errors", "sloppy-content", "bad-schema", "json-preamble", "typical"} {
		p, _ := testbed.Lookup(profile)
		for _, rev := range p.Revisions {
			t.Run(profile+"/"+rev, func(t *testing.T) {
				t.Parallel()
				r := runScan(t, stdioConfig(t, testbed.Options{Profile: profile, Revisions: []string{rev}}))
				if r.Protocol.Revision != rev {
					t.Fatalf("negotiated %q", r.Protocol.Revision)
				}
				for _, f := range r.Findings {
					conf := strings.HasPrefix(f.Rule, "MCP-CONF-") || strings.HasPrefix(f.Rule, "MCP-ERR-")
					q := f.Requirement
					switch {
					case q != nil && (q.Revision != rev || !slices.ContainsFunc(Requirements(rev), func(x Requirement) bool {
						return x.ID == q.ID && slices.Contains(x.Checks, f.Rule) && x.Section == q.Section && x.Level == q.Level
					})):
						t.Errorf("%s cites %+v, not a requirement of %s graded by it", f.Rule, q, rev)
					case q == nil && conf && f.Severity != report.SeverityInfo:
						t.Errorf("%s %s names no requirement: %s", f.Severity, f.Rule, f.Message)
					}
				}
				rc := r.Requirements
				if rc == nil || len(rc.Outcomes) != rc.Requirements || rc.Checked+rc.NotApplicable+rc.NotVerified != rc.Requirements {
					t.Fatalf("requirement accounting %+v", rc)
				}
			})
		}
	}
}
