// Package versiondrift grades a study's version pairs: each release
// against the release before it (servers.json's previous_of), by the drift
// catalogue (drift.Diff, as `mcpdrill drift` grades a baseline against a
// live server), with the step between their versions told apart (semantic,
// calendar, 0.x) and the tool sets of known configurations consulted before
// a tool is called removed. It builds on the study's core (studies), which
// keeps the listings and the result types; the core never imports it.
package versiondrift

import (
	"slices"
	"strings"

	"github.com/mcpdrill/mcpdrill/drift"
	"github.com/mcpdrill/mcpdrill/internal/strwalk"
	"github.com/mcpdrill/mcpdrill/studies"
)

// Grade grades every pair of rows joined by previous_of whose both rows are
// in rows, and puts the result on the newer row. entries are the
// servers.json entries (for the package versions). It is the study
// runner's pair grader (studies.Options.GradePairs).
func Grade(rows []studies.Row, entries []studies.Entry) {
	byName := map[string]int{}
	for i, r := range rows {
		byName[r.Name] = i
	}
	versions := map[string]string{}
	for _, e := range entries {
		versions[e.Name] = e.PackageVersion()
	}
	for _, e := range entries {
		if e.PreviousOf == "" {
			continue
		}
		pi, okp := byName[e.Name]
		ci, okc := byName[e.PreviousOf]
		if !okp || !okc {
			continue
		}
		prev, cur := &rows[pi], &rows[ci]
		vd := Pair(prev, cur, versions[e.Name], versions[e.PreviousOf])
		// Tool names and messages come from both scans: both servers'
		// secrets are masked in them.
		strwalk.Map(&vd, prev.Mask)
		strwalk.Map(&vd, cur.Mask)
		cur.VersionDrift = &vd
	}
}

// Pair grades the release of cur (version to) against the previous
// release prev (version from).
func Pair(prev, cur *studies.Row, from, to string) studies.VersionDrift {
	vd := studies.VersionDrift{Previous: prev.Name, From: from, To: to, Step: Step(from, to),
		Changes: []studies.VersionChange{}, ByRule: map[string]int{}, BySeverity: map[string]int{},
		ToolsRemoved: []string{}, ToolsUnlisted: []string{}, ToolsAdded: []string{}, DescriptionsChanged: []string{}}
	prevTools, prevWhole, prevOK := prev.Listing()
	curTools, curWhole, curOK := cur.Listing()
	vd.PreviousScanned = prev.Status == studies.StatusScanned && prevOK
	vd.CurrentScanned = cur.Status == studies.StatusScanned && curOK
	switch {
	case !vd.PreviousScanned && !vd.CurrentScanned:
		vd.Reason = "neither release was scanned"
		return vd
	case !vd.PreviousScanned:
		vd.Reason = "the previous release was not scanned"
		return vd
	case !vd.CurrentScanned:
		vd.Reason = "the current release was not scanned"
		return vd
	case !prevWhole || !curWhole:
		vd.Reason = "a tools/list was incomplete (capped, looping or unreadable entries): tool removals cannot be told apart from unread tools"
		return vd
	}
	vd.Compared = true
	for _, c := range drift.Diff(prevTools, curTools) {
		unlistedHow := ""
		if c.Kind == drift.KindToolRemoved {
			if unlistedHow = Unlisted(cur.Configurations, c.Tool); unlistedHow != "" {
				c = drift.Unlisted(c, unlistedHow)
			}
		}
		vd.Changes = append(vd.Changes, studies.VersionChange{Tool: c.Tool, Pointer: c.Pointer, Kind: string(c.Kind),
			Rule: c.RuleID, Severity: c.Severity, Breaking: c.Breaking, Message: c.Message, Verdict: c.Verdict, Witness: c.Witness})
		vd.ByRule[c.RuleID]++
		vd.BySeverity[string(c.Severity)]++
		if c.Breaking {
			vd.Breaking++
		}
		if c.Verdict == drift.VerdictUndetermined {
			vd.Undetermined++
		}
		switch c.Kind {
		case drift.KindToolRemoved:
			if unlistedHow != "" {
				vd.ToolsUnlisted = append(vd.ToolsUnlisted, c.Tool)
			} else {
				vd.ToolsRemoved = append(vd.ToolsRemoved, c.Tool)
			}
		case drift.KindToolAdded:
			vd.ToolsAdded = append(vd.ToolsAdded, c.Tool)
		case drift.KindDescriptionChanged:
			vd.DescriptionsChanged = append(vd.DescriptionsChanged, c.Tool)
		}
	}
	for _, s := range []*[]string{&vd.ToolsRemoved, &vd.ToolsUnlisted, &vd.ToolsAdded, &vd.DescriptionsChanged} {
		slices.Sort(*s)
		*s = slices.Compact(*s)
	}
	vd.SemverViolation = vd.Breaking > 0 && (vd.Step == "minor" || vd.Step == "patch")
	return vd
}

// Unlisted says, for a tool missing from the newer release's default
// listing, why it is not called removed: the configuration that lists it,
// or the configurations whose listing was not established. "" when every
// configuration known for the package was listed whole without it (or
// none is known): the tool is removed.
func Unlisted(configs []studies.ConfigScan, tool string) string {
	var open []string
	for _, c := range configs {
		if c.Status == studies.StatusScanned {
			if _, ok := slices.BinarySearch(c.Tools, tool); ok {
				return "listed with " + label(c)
			}
		}
		if c.Status != studies.StatusScanned || !c.Complete {
			open = append(open, label(c))
		}
	}
	if len(open) > 0 {
		return "not established with " + strings.Join(open, ", ") + ": that listing did not complete"
	}
	return ""
}

// label names a configuration by its settings ("GITLAB_TOOLSETS=all").
func label(c studies.ConfigScan) string {
	parts := append(slices.Clone(c.Env), c.Args...)
	if len(parts) == 0 {
		return c.Name
	}
	return strings.Join(parts, " ")
}
