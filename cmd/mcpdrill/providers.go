package main

import (
	"fmt"
	"strings"

	"github.com/mcpdrill/mcpdrill/report"
	"github.com/mcpdrill/mcpdrill/scan"
)

// writeProviders writes the scan's provider line: per profile, how many
// tools it accepts (with loss counted in), and the date the profiles'
// sources were read; the profiles named with --providers are marked.
func writeProviders(b *strings.Builder, ps []scan.ProviderSummary, width int) {
	if len(ps) == 0 {
		return
	}
	items := []string{"providers accept"}
	read, named := "", false
	for _, p := range ps {
		it := fmt.Sprintf("%s %d/%d", p.Profile, p.Taken(), p.Tools)
		if p.AcceptedWithLoss > 0 {
			it += fmt.Sprintf(" (%d lossy)", p.AcceptedWithLoss)
		}
		if p.Selected {
			it, named = it+"*", true
		}
		items = append(items, it)
		read = max(read, p.Read)
	}
	items = append(items, "sources read "+read)
	if named {
		items = append(items, "(* named with --providers)")
	}
	writeItems(b, width, "", "  ", items...)
}

// providerChecks are the JUnit cases of the profiles named with
// --providers: each claims its profile's findings (their message starts
// with the profile id), before the tools claim theirs.
func providerChecks(r *scan.Report) []report.Check {
	var cs []report.Check
	for _, p := range r.Providers {
		if !p.Selected {
			continue
		}
		id := p.Profile
		cs = append(cs, report.Check{Class: "providers", Name: id, Claims: func(x report.Result) bool {
			return strings.HasPrefix(x.Rule, "MCP-PROV-") && strings.HasPrefix(x.Message, id+" ")
		}})
	}
	return cs
}
