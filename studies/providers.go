package studies

import (
	"maps"
	"slices"

	"github.com/mcpdrill/mcpdrill/scan"
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
		s.ToolsTakenShare = scan.Share(s.Taken(), s.Tools)
		s.ToolsTakenAfterConversionShare = scan.Share(s.TakenAfterConversion, s.Tools)
		s.ServersTakenShare = scan.Share(s.ServersTaken, s.Servers)
		s.ServersTakenAfterConversionShare = scan.Share(s.ServersTakenAfterConversion, s.Servers)
		s.ServersRejectedShare = scan.Share(s.Servers-s.ServersTaken, s.Servers)
		s.ServersRejectedAfterConversionShare = scan.Share(s.Servers-s.ServersTakenAfterConversion, s.Servers)
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
