package scan

import (
	"context"
	"fmt"
	"strings"

	"github.com/mcpdrill/mcpdrill/report"
	"github.com/mcpdrill/mcpdrill/scan/provider"
)

// Provider-acceptance rule ids: whether the model providers the user named
// (Options.Providers) take the server's tools. Compatibility, not
// conformance: warn at most.
const (
	RuleProviderRejected  = "MCP-PROV-REJECTED"
	RuleProviderUncertain = "MCP-PROV-UNCERTAIN"
	RuleProviderLoss      = "MCP-PROV-LOSS"
	RuleProviderSummary   = "MCP-PROV-SUMMARY"
)

func providerRules() report.Catalogue {
	return report.Catalogue{
		rule(RuleProviderRejected, report.SeverityWarn, "A selected model provider refuses the tool",
			"The tool's definition breaks a constraint the provider mode named with --providers documents or is reported to enforce (a strict mode's JSON Schema subset, a name pattern, a required root shape): a request carrying the tool is refused, or the client falls back to another mode. The finding names the constraint, its JSON pointer and the date its sources were read. Verdicts are for the schema as the server lists it, before any client converts it."),
		rule(RuleProviderUncertain, report.SeverityInfo, "A selected model provider may refuse the tool",
			"The tool breaks a constraint whose sources disagree or are silent (documentation against reported API errors or the provider's SDK); the finding says which source was followed. Checked against the provider before relying on it."),
		rule(RuleProviderLoss, report.SeverityInfo, "A selected model provider ignores part of the tool's schema",
			"The provider takes the tool but ignores a keyword of its schema (a format it does not support, for instance), so the model is not held to it: the server must still validate what it receives."),
		rule(RuleProviderSummary, report.SeverityInfo, "How many of the server's tools a selected provider takes",
			"One line per provider mode named with --providers: the tools accepted, accepted with loss and rejected, and the date the profile's sources were read."),
	}
}

// ProviderSummary is one provider profile's verdicts over the server's
// tools, with the date the profile's sources were read (Tally.Read).
type ProviderSummary struct {
	provider.Tally
	Provider string `json:"provider"`
	Mode     string `json:"mode"`
	// Enforced: the mode holds the model to the schema (constrained
	// decoding).
	Enforced bool `json:"enforced"`
	// Selected: --providers named it, so its verdicts are findings.
	Selected bool `json:"selected,omitempty"`
}

// providers grades every listed tool against every provider profile
// (ToolReport.Providers, Report.Providers) and reports the verdicts of the
// selected profiles as findings. It runs after contracts, which made one
// ToolReport per listed tool, in order.
func (s *scanner) providers(ctx context.Context) {
	if !s.listed || len(s.rep.Tools) != len(s.list.Tools) {
		return
	}
	all, err := provider.Profiles()
	if err != nil {
		return // the embedded profiles are checked by their own tests
	}
	selected := map[string]bool{}
	for _, p := range s.selectedProfiles {
		selected[p.ID] = true
	}
	var graded [][]provider.Verdict
	for i, t := range s.list.Tools {
		if _, cut := cutShort(ctx); cut {
			break
		}
		vs := provider.Assess(ctx, provider.Tool{Name: t.Name, InputSchema: t.InputSchema}, all, s.opts.Budget)
		s.rep.Tools[i].Providers = vs
		graded = append(graded, vs)
		for j, v := range vs {
			if selected[v.Profile] {
				s.providerFindings(t.Name, all[j], v)
			}
		}
	}
	for i, t := range provider.Tallies(all, graded) {
		p := all[i]
		sum := ProviderSummary{Tally: t, Provider: p.Provider, Mode: p.Mode, Enforced: p.Enforced, Selected: selected[p.ID]}
		s.rep.Providers = append(s.rep.Providers, sum)
		if sum.Selected {
			s.findSev(RuleProviderSummary, report.SeverityInfo, "", "", sum.Line())
		}
	}
}

// Line says in one line what the profile made of the server's tools.
func (p ProviderSummary) Line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (sources read %s): %d of %d tools accepted", p.Profile, p.Read, p.Accepted, p.Tools)
	if p.AcceptedWithLoss > 0 {
		fmt.Fprintf(&b, ", %d with loss", p.AcceptedWithLoss)
	}
	fmt.Fprintf(&b, ", %d rejected", p.Rejected)
	if p.Uncertain > 0 {
		fmt.Fprintf(&b, " (%s uncertain)", plural(p.Uncertain, "verdict"))
	}
	if p.TakenAfterConversion != p.Taken() {
		fmt.Fprintf(&b, "; %d taken after client conversion", p.TakenAfterConversion)
	}
	return b.String()
}

// providerFindings reports one finding per constraint a verdict breaks
// (certain and uncertain violations of one constraint apart), at the
// first place it is broken.
func (s *scanner) providerFindings(tool string, p *provider.Profile, v provider.Verdict) {
	type group struct {
		first provider.Violation
		n     int
	}
	var order []string
	groups := map[string]*group{}
	for _, x := range v.Violations {
		key := fmt.Sprintf("%s|%v", x.Constraint, x.Uncertain)
		if g, ok := groups[key]; ok {
			g.n++
			continue
		}
		groups[key] = &group{first: x, n: 1}
		order = append(order, key)
	}
	for _, key := range order {
		g := groups[key]
		c, _ := p.Constraint(g.first.Constraint)
		rule, verb := RuleProviderRejected, "refuses"
		switch {
		case g.first.Effect == provider.EffectLoss:
			rule, verb = RuleProviderLoss, "ignores"
		case g.first.Uncertain:
			rule, verb = RuleProviderUncertain, "may refuse"
		}
		where := "1 place"
		if g.n > 1 {
			where = fmt.Sprintf("%d places", g.n)
		}
		msg := fmt.Sprintf("%s %s it: %s (%s; %s)", p.ID, verb, g.first.Detail, where, c.ID)
		f := report.Finding{Rule: rule, Severity: severityOf(rule), Tool: tool, Pointer: g.first.Pointer, Message: msg,
			Evidence: fmt.Sprintf("%s: %s (%s, sources read %s)", c.ID, c.Rule, c.Basis, p.Read)}
		if g.first.Uncertain && c.Note != "" {
			f.Evidence += "; " + c.Note
		}
		f.SetTrace(s.callFor(tool).IDs())
		s.rep.Findings = append(s.rep.Findings, f)
	}
}
