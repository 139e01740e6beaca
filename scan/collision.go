package scan

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mcpdrill/mcpdrill/report"
)

// RuleToolCollision is a tool name that two servers of one client
// configuration both list.
const RuleToolCollision = "MCP-CONFIG-TOOL-COLLISION"

// ConfigServer is one server of a client configuration, with its scan.
type ConfigServer struct {
	// Name is the server's name in the configuration.
	Name   string
	Report *Report
}

// AddToolCollisions adds to the report of each server of one client
// configuration a RuleToolCollision finding for every tool name it lists
// that another server of the same configuration lists too: a client that
// puts every server's tools in one list (as the model sees them) reaches
// one of them by that name, and which one is up to the client; a server
// can shadow another's tool. Only servers whose inventory was established
// are compared; each finding names the other servers, sorted.
func AddToolCollisions(servers []ConfigServer) {
	owners := map[string][]string{}
	for _, s := range servers {
		if s.Report == nil || !s.Report.Established {
			continue
		}
		seen := map[string]bool{}
		for _, t := range s.Report.Tools {
			if !seen[t.Name] {
				seen[t.Name] = true
				owners[t.Name] = append(owners[t.Name], s.Name)
			}
		}
	}
	for _, s := range servers {
		if s.Report == nil || !s.Report.Established {
			continue
		}
		var added []report.Finding
		for _, name := range slices.Sorted(maps.Keys(owners)) {
			if len(owners[name]) < 2 || !slices.Contains(owners[name], s.Name) {
				continue
			}
			others := slices.DeleteFunc(slices.Clone(owners[name]), func(o string) bool { return o == s.Name })
			slices.SortFunc(others, cmp.Compare[string])
			quoted := make([]string, len(others))
			for i, o := range others {
				quoted[i] = fmt.Sprintf("%q", o)
			}
			added = append(added, report.Finding{Rule: RuleToolCollision, Severity: severityOf(RuleToolCollision), Tool: name,
				Message: fmt.Sprintf("tool %q is also listed by server %s of this configuration: a client that merges the servers' tools reaches only one of them by that name", name, strings.Join(quoted, ", "))})
		}
		if len(added) > 0 {
			s.Report.Findings = append(s.Report.Findings, added...)
			report.Sort(s.Report.Findings)
		}
	}
}
