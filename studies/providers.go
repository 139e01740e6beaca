package studies

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mcpdrill/mcpdrill/scan/provider"
)

// ProviderShare is one provider profile over the servers a study counts
// (scanned, neither a variant nor a previous release) that list at least
// one tool: its tool tally summed over them, how many of them it takes
// whole (every tool accepted, with or without loss), and the same once the
// profile's client conversions have repaired what they repair.
type ProviderShare struct {
	provider.Tally
	Servers                     int `json:"servers"`
	ServersTaken                int `json:"servers_taken"`
	ServersTakenAfterConversion int `json:"servers_taken_after_conversion"`

	ToolsTakenShare                     *float64 `json:"tools_taken_share"`
	ToolsTakenAfterConversionShare      *float64 `json:"tools_taken_after_conversion_share"`
	ServersTakenShare                   *float64 `json:"servers_taken_share"`
	ServersTakenAfterConversionShare    *float64 `json:"servers_taken_after_conversion_share"`
	ServersRejectedShare                *float64 `json:"servers_rejected_share"`
	ServersRejectedAfterConversionShare *float64 `json:"servers_rejected_after_conversion_share"`
}

// rowVerdicts is how a study row keeps a scanned tool's provider verdicts:
// one violation of each constraint broken.
func rowVerdicts(vs []provider.Verdict) []provider.Verdict {
	out := make([]provider.Verdict, len(vs))
	for i, v := range vs {
		out[i] = v.Compact()
	}
	return out
}

// providerPool sums the provider verdicts of the rows a study counts.
type providerPool struct {
	shares map[string]*ProviderShare
}

// add counts a counted row's tools, profile by profile.
func (p *providerPool) add(r Row) {
	perProfile := map[string]*provider.Tally{}
	var order []string
	for _, t := range r.Tools {
		for _, v := range t.Providers {
			tl, ok := perProfile[v.Profile]
			if !ok {
				tl = &provider.Tally{Profile: v.Profile}
				perProfile[v.Profile] = tl
				order = append(order, v.Profile)
			}
			tl.Add(v)
		}
	}
	if p.shares == nil {
		p.shares = map[string]*ProviderShare{}
	}
	for _, id := range order {
		tl := perProfile[id]
		s, ok := p.shares[id]
		if !ok {
			s = &ProviderShare{Tally: provider.Tally{Profile: id, Read: profileRead(id)}}
			p.shares[id] = s
		}
		s.Merge(*tl)
		s.Servers++
		if tl.Taken() == tl.Tools {
			s.ServersTaken++
		}
		if tl.TakenAfterConversion == tl.Tools {
			s.ServersTakenAfterConversion++
		}
	}
}

// figures are the shares, by profile id.
func (p *providerPool) figures() []ProviderShare {
	out := []ProviderShare{}
	for _, id := range slices.Sorted(maps.Keys(p.shares)) {
		s := *p.shares[id]
		s.ToolsTakenShare = share(s.Taken(), s.Tools)
		s.ToolsTakenAfterConversionShare = share(s.TakenAfterConversion, s.Tools)
		s.ServersTakenShare = share(s.ServersTaken, s.Servers)
		s.ServersTakenAfterConversionShare = share(s.ServersTakenAfterConversion, s.Servers)
		s.ServersRejectedShare = share(s.Servers-s.ServersTaken, s.Servers)
		s.ServersRejectedAfterConversionShare = share(s.Servers-s.ServersTakenAfterConversion, s.Servers)
		out = append(out, s)
	}
	return out
}

// profileRead is the read date of the profile's sources as this build
// knows them ("" for a profile it does not know).
func profileRead(id string) string {
	ps, err := provider.Lookup([]string{id})
	if err != nil {
		return ""
	}
	return ps[0].Read
}

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
func Count1005(rows []Row, m Measured1005, after bool) (n, servers int) {
	for _, r := range rows {
		if r.Status != StatusScanned || r.VariantOf != "" || r.PreviousOf != "" {
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
func writeProviders(b *strings.Builder, r *Results) {
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
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", m.What, seedRatio(m.Count, m.Servers), ratio(n, d), ratio(na, d))
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
