package pages

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcpdrill/mcpdrill/scan/provider"
	"github.com/mcpdrill/mcpdrill/studies"
)

// Measured1005 is one provider figure posted on
// modelcontextprotocol/inspector#1005 (2026-08-23): 617 stdio servers,
// 14,804 tool schemas, derived from the providers' constraint tables and
// SDK code. A server counts when a tool of it is rejected by one of
// Failing (as listed) while every tool is taken, after conversion, by each
// of Passing.
type Measured1005 struct {
	What    string
	Failing []string
	Passing []string
	Count   int
	Servers int
}

// Study1005 are the figures of the #1005 measurement this study's provider
// shares are put beside.
var Study1005 = []Measured1005{
	{What: "hard-rejected by OpenAI strict mode", Failing: []string{"openai-strict"}, Count: 170, Servers: 617},
	{What: "failing Anthropic's strict subset", Failing: []string{"anthropic-strict"}, Count: 389, Servers: 617},
	{What: "failing at least one Anthropic constraint", Failing: []string{"anthropic", "anthropic-strict"}, Count: 447, Servers: 617},
	{What: "passing OpenAI's converter, failing Anthropic's strict subset", Failing: []string{"anthropic-strict"}, Passing: []string{"openai-strict"}, Count: 277, Servers: 617},
}

// Count1005 counts the counted rows with graded tools that m describes,
// with the verdicts as listed (after false) or with the failing profiles
// also taken after conversion (after true), and how many rows were
// graded.
func Count1005(rows []studies.Row, m Measured1005, after bool) (n, servers int) {
	for _, r := range rows {
		if r.Status != studies.StatusScanned || r.VariantOf != "" || r.PreviousOf != "" {
			continue
		}
		graded, failing, passing := false, false, true
		for _, t := range r.Tools {
			for _, v := range t.Providers {
				graded = true
				outcome := v.Outcome
				if after {
					outcome = v.Converted()
				}
				if slices.Contains(m.Failing, v.Profile) && outcome == provider.Rejected {
					failing = true
				}
				if slices.Contains(m.Passing, v.Profile) && v.Converted() == provider.Rejected {
					passing = false
				}
			}
		}
		if !graded {
			continue
		}
		servers++
		if failing && passing {
			n++
		}
	}
	return n, servers
}

// writeProviders puts the provider shares beside the #1005 measurement's.
func writeProviders(b *strings.Builder, r *studies.Results) {
	ps := r.Aggregates.Providers
	if len(ps) == 0 {
		return
	}
	b.WriteString("## Provider acceptance\n\n")
	b.WriteString("Whether each provider mode takes the counted servers' tools as they list them (model-free; METHODOLOGY Part I section 7). " +
		"A server is taken when every one of its tools is; \"after conversion\" counts what the profile's client converter repairs (for openai-strict, the OpenAI Agents SDK's strict converter).\n\n")
	b.WriteString("| profile | sources read | servers taken | servers taken after conversion | tools taken | tools taken after conversion | tools with loss | uncertain verdicts |\n|---|---|---|---|---|---|---|---|\n")
	for _, p := range ps {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %d | %d |\n", mdCell(p.Profile), p.Read, ratio(p.ServersTaken, p.Servers),
			ratio(p.ServersTakenAfterConversion, p.Servers), ratio(p.Taken(), p.Tools), ratio(p.TakenAfterConversion, p.Tools), p.AcceptedWithLoss, p.Uncertain)
	}
	b.WriteString("\nBeside modelcontextprotocol/inspector#1005 (2026-08-23, 617 stdio servers, 14,804 tool schemas; servers with at least one tool failing):\n\n")
	b.WriteString("| figure | #1005 | this run, as listed | this run, after conversion |\n|---|---|---|---|\n")
	for _, m := range Study1005 {
		n, d := Count1005(r.Servers, m, false)
		na, _ := Count1005(r.Servers, m, true)
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", m.What, ratio(m.Count, m.Servers), ratio(n, d), ratio(na, d))
	}
	b.WriteString("\n")
}

// pageVerdict is a provider verdict in a tool row of the study page: the
// profile, a mark (✓ accepted, ~ with loss, ✗ rejected, ? uncertain) and,
// on hover, the constraints broken.
type pageVerdict struct {
	Profile, Mark, Title string
}

func pageVerdicts(vs []provider.Verdict) []pageVerdict {
	out := make([]pageVerdict, len(vs))
	for i, v := range vs {
		mark := map[provider.Outcome]string{provider.Accepted: "✓", provider.AcceptedWithLoss: "~", provider.Rejected: "✗"}[v.Outcome]
		if v.Uncertain {
			mark += "?"
		}
		title := string(v.Outcome)
		if b := v.Broken(); len(b) > 0 {
			title += ": " + strings.Join(b, ", ")
		}
		if v.AfterConversion != "" {
			title += "; after conversion " + string(v.AfterConversion)
		}
		out[i] = pageVerdict{Profile: v.Profile, Mark: mark, Title: title}
	}
	return out
}
