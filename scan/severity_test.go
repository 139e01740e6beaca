package scan

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/mcp"
	"github.com/mcpdrill/mcpdrill/internal/testbed"
	"github.com/mcpdrill/mcpdrill/report"
)

// TestFindingsCarryTheirRulesSeverities: what `mcpdrill rules` says of a
// rule's severity is what scans grade (issue 40: MCP-ERR-UNKNOWN-TOOL was
// listed as error while scans of the usual SDK answer graded it warn).
// Every finding of a scan of every testbed profile that is not hostile,
// over stdio and HTTP, carries a severity its rule's catalogue entry lists
// (Rule.Severities): a finding graded otherwise fails the test, naming
// the rule, the severity and the profile. The scans must also grade some
// findings off their rule's default, the case among them, or the
// test would hold of a catalogue that lists defaults only.
func TestFindingsCarryTheirRulesSeverities(t *testing.T) {
	if testing.Short() {
		t.Skip("scans every profile")
	}
	cat := Catalogue()
	var mu sync.Mutex
	offDefault := map[string]bool{} // "RULE severity" graded off the rule's default
	t.Run("profiles", func(t *testing.T) {
		for _, p := range testbed.Profiles() {
			if p.Hostile {
				continue
			}
			for _, transport := range []string{"stdio", "http"} {
				t.Run(p.Name+"/"+transport, func(t *testing.T) {
					t.Parallel()
					o := testbed.Options{Profile: p.Name}
					var cfg mcp.Config
					if transport == "stdio" {
						cfg = stdioConfig(t, o)
					} else {
						cfg = httpConfig(t, o, testbed.PathMCP)
					}
					for _, f := range runScan(t, cfg).Findings {
						r, ok := cat.Lookup(f.Rule)
						switch {
						case !ok:
							t.Errorf("%s: not in the catalogue", f.Rule)
						case !slices.Contains(r.Severities(), f.Severity):
							t.Errorf("%s graded %s (%s); the catalogue lists %s", f.Rule, f.Severity, f.Message, r.SeverityText())
						case f.Severity != r.Severity:
							mu.Lock()
							offDefault[fmt.Sprintf("%s %s", f.Rule, f.Severity)] = true
							mu.Unlock()
						}
					}
				})
			}
		}
	})
	if len(offDefault) == 0 {
		t.Fatal("no finding was graded off its rule's default: the test proves nothing")
	}
	if !offDefault[RuleErrUnknownTool+" warn"] && !offDefault[RuleErrUnknownTool+" info"] && !t.Failed() {
		t.Errorf("no profile's scan graded %s off its default: the case of issue 40 is not covered (graded off default: %v)", RuleErrUnknownTool, offDefault)
	}
}

// TestRuleSeverities pins the severities the catalogue lists for the rules
// issue 40 named and for rules whose checks pass their severity by hand.
func TestRuleSeverities(t *testing.T) {
	cat := Catalogue()
	for id, want := range map[string]string{
		RuleErrUnknownTool:    "error/warn/info", // a tool_error result is a refusal in another form; the TypeScript SDK's is info
		RuleErrMissingArgs:    "error/warn",
		RuleUnconstrained:     "info",
		RulePartialContract:   "warn",
		RuleServerRequest:     "error/warn/info",
		RuleResourceMissing:   "error/warn/info",
		RuleAuthAnonymousList: "error/warn/info",
		RuleVacuous:           "warn",
	} {
		r, ok := cat.Lookup(id)
		if !ok {
			t.Errorf("%s: not in the catalogue", id)
			continue
		}
		if got := r.SeverityText(); got != want {
			t.Errorf("%s: %s, want %s", id, got, want)
		}
		if !slices.Contains(r.Severities(), r.Severity) {
			t.Errorf("%s: the default %s is not among %s", id, r.Severity, r.SeverityText())
		}
	}
	// The renamed rule answers to its old id.
	if r, ok := cat.Lookup("MCP-OUT-PARTIAL"); !ok || r.ID != RuleUnconstrained {
		t.Errorf("Lookup(MCP-OUT-PARTIAL) = %s, %v; want %s", r.ID, ok, RuleUnconstrained)
	}
	if _, err := report.Merge(cat); err != nil {
		t.Error(err)
	}
}
