package pages

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mcpdrill/mcpdrill/studies"
)

// ChangesFile is the page that says what changed since a previous run of
// the same study (study report --previous).
const ChangesFile = "CHANGES.md"

// Changes writes what changed between a previous run of a study and this
// one: the rows and their outcomes, the headline figures (both computed by
// this build's rules from each run's rows, so a figure moves only when a
// row did, or when a rule did: the section says which), and every version
// pair whose published claim changed, with the reason the grading gives.
// It is a function of the two documents outside their meta but for the
// run line.
func Changes(prev, cur *studies.Results) []byte {
	var b strings.Builder
	b.WriteString("# What changed since the last run\n\n")
	fmt.Fprintf(&b, "Previous run: mcpdrill `%s`%s, %d rows. This run: mcpdrill `%s`%s, %d rows.\n\n",
		mdCell(prev.Meta.ToolVersion), commitNote(prev.Meta.Commit), len(prev.Servers), mdCell(cur.Meta.ToolVersion), commitNote(cur.Meta.Commit), len(cur.Servers))
	b.WriteString("Both runs' figures below are computed by this build's rules from each run's rows, rounded once (a previous page rounded some twice). " +
		"What moved did so because the rows did: each package-version is now installed alone (its own lockfile), outcomes follow the taxonomy (a row is blamed only for what the server did), " +
		"calendar versions are never semver steps, a schema change is breaking only with a witness value, and a tool a known configuration still lists is \"no longer listed by default\", not removed.\n\n")

	pr, cr := byName(prev.Servers), byName(cur.Servers)
	gone, added := only(pr, cr), only(cr, pr)
	fmt.Fprintf(&b, "Rows no longer listed: %s. Rows added: %s.\n\n", orNone(mdCells(gone)), orNone(mdCells(added)))

	b.WriteString("## Outcomes\n\n| outcome | previous run | this run |\n|---|---|---|\n")
	po, co := outcomes(prev.Servers), outcomes(cur.Servers)
	for _, k := range slices.Sorted(slices.Values(append(slices.Collect(maps.Keys(po)), only(co, po)...))) {
		fmt.Fprintf(&b, "| %s | %d | %d |\n", mdCell(k), po[k], co[k])
	}
	b.WriteString("\n")
	moves := map[[2]string][]string{}
	for n, c := range cr {
		p, ok := pr[n]
		if !ok {
			continue
		}
		if po, co := outcomeOf(p), outcomeOf(c); po != co {
			moves[[2]string{po, co}] = append(moves[[2]string{po, co}], n)
		}
	}
	if len(moves) > 0 {
		b.WriteString("Rows whose outcome changed, by previous → current outcome:\n\n| previous → current | rows | names |\n|---|---|---|\n")
		mk := slices.SortedFunc(maps.Keys(moves), func(x, y [2]string) int { return cmp.Or(cmp.Compare(x[0], y[0]), cmp.Compare(x[1], y[1])) })
		for _, k := range mk {
			names := moves[k]
			slices.Sort(names)
			fmt.Fprintf(&b, "| %s → %s | %d | %s |\n", mdCell(k[0]), mdCell(k[1]), len(names), strings.Join(mdCells(names), ", "))
		}
		b.WriteString("\n")
	}

	pa, ca := studies.Aggregate(prev.Servers), studies.Aggregate(cur.Servers)
	b.WriteString("## Headline figures\n\n| figure | previous run | this run |\n|---|---|---|\n")
	for _, f := range []struct {
		name string
		get  func(a studies.Aggregates) string
	}{
		{"rows scanned", func(a studies.Aggregates) string { return fmt.Sprint(a.Scanned) }},
		{"counted servers (scanned, neither a variant nor a previous release)", func(a studies.Aggregates) string { return fmt.Sprint(a.Counted) }},
		{"their tools", func(a studies.Aggregates) string { return fmt.Sprint(a.ToolWeighted.Tools) }},
		{"no outputSchema, tool-weighted", func(a studies.Aggregates) string { return ratio(a.ToolWeighted.None, a.ToolWeighted.Tools) }},
		{"vacuous, tool-weighted", func(a studies.Aggregates) string { return ratio(a.ToolWeighted.Vacuous, a.ToolWeighted.Tools) }},
		{"rejects at least one corruption, tool-weighted", func(a studies.Aggregates) string {
			return ratio(a.ToolWeighted.RejectsAny(), a.ToolWeighted.Tools)
		}},
		{"mean leaf rate, tool-weighted", func(a studies.Aggregates) string { return pct(a.ToolWeighted.LeafRate) }},
		{"error conformance, server-weighted mean", func(a studies.Aggregates) string { return pct(a.ServerWeighted.ErrorConformance) }},
		{"specification conformance, server-weighted mean", func(a studies.Aggregates) string { return pct(a.ServerWeighted.SpecConformance) }},
		{"servers handling the seed's 3 error probes", func(a studies.Aggregates) string {
			return fmt.Sprintf("%d/%d", a.SeedProbes.Handled, a.SeedProbes.Measured)
		}},
		{"version pairs listed", func(a studies.Aggregates) string { return fmt.Sprint(a.VersionDrift.Pairs) }},
		{"pairs scanned at both releases", func(a studies.Aggregates) string { return fmt.Sprint(a.VersionDrift.BothScanned) }},
		{"pairs compared", func(a studies.Aggregates) string { return fmt.Sprint(a.VersionDrift.Compared) }},
		{"pairs with a breaking change", func(a studies.Aggregates) string { return fmt.Sprint(a.VersionDrift.WithBreaking) }},
		{"semver violations", func(a studies.Aggregates) string { return fmt.Sprint(a.VersionDrift.SemverViolations) }},
		{"tools removed (absent under every known configuration)", func(a studies.Aggregates) string { return fmt.Sprint(a.VersionDrift.ToolsRemoved) }},
		{"tools no longer listed by default", func(a studies.Aggregates) string { return fmt.Sprint(a.VersionDrift.ToolsUnlisted) }},
	} {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", f.name, f.get(pa), f.get(ca))
	}
	b.WriteString("\n")

	b.WriteString("## Version pairs whose claim changed\n\n| package | previous run | this run | why |\n|---|---|---|---|\n")
	for _, n := range slices.Sorted(slices.Values(append(slices.Collect(maps.Keys(cr)), only(pr, cr)...))) {
		p, c := pr[n].VersionDrift, cr[n].VersionDrift
		if p == nil && c == nil {
			continue
		}
		ps, cs := pairClaim(p), pairClaim(c)
		if ps == cs {
			continue
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", mdCell(n), mdCell(ps), mdCell(cs), mdCell(pairWhy(p, c)))
	}
	b.WriteString("\n")
	return []byte(b.String())
}

// only lists, sorted, the keys of a that b lacks.
func only[V, W any](a map[string]V, b map[string]W) []string {
	var out []string
	for k := range a {
		if _, ok := b[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

func commitNote(c string) string {
	if c == "" {
		return " (commit not recorded)"
	}
	return " (commit `" + mdCell(c) + "`)"
}

func byName(rows []studies.Row) map[string]studies.Row {
	m := map[string]studies.Row{}
	for _, r := range rows {
		m[r.Name] = r
	}
	return m
}

func outcomeOf(r studies.Row) string { return cmp.Or(r.Outcome, r.Status) }

func outcomes(rows []studies.Row) map[string]int {
	m := map[string]int{}
	for _, r := range rows {
		m[outcomeOf(r)]++
	}
	return m
}

func mdCells(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = mdCell(s)
	}
	return out
}

// pairClaim is what a page says of a pair, in a few words.
func pairClaim(vd *studies.VersionDrift) string {
	switch {
	case vd == nil:
		return "not listed"
	case !vd.Compared:
		return "not compared"
	}
	var parts []string
	parts = append(parts, vd.Step)
	if vd.Breaking > 0 {
		parts = append(parts, fmt.Sprintf("%d breaking", vd.Breaking))
	} else {
		parts = append(parts, "not breaking")
	}
	if vd.SemverViolation {
		parts = append(parts, "semver violation")
	}
	if n := len(vd.ToolsRemoved); n > 0 {
		parts = append(parts, fmt.Sprintf("%d removed", n))
	}
	if n := len(vd.ToolsUnlisted); n > 0 {
		parts = append(parts, fmt.Sprintf("%d no longer listed by default", n))
	}
	return strings.Join(parts, ", ")
}

// pairWhy names the rule behind a changed claim, from what the two runs
// recorded.
func pairWhy(p, c *studies.VersionDrift) string {
	var why []string
	switch {
	case c == nil:
		return "the pair is no longer listed (the previous release left the population)"
	case p == nil:
		return "a pair new to the population"
	case p.Compared && !c.Compared:
		return "not compared this run: " + c.Reason
	case !p.Compared && c.Compared:
		return "both releases scanned this run"
	}
	if c.Step == "calendar" && p.Step != "calendar" {
		why = append(why, "calendar versions promise nothing (never a semver step)")
	}
	if len(c.ToolsUnlisted) > 0 && len(p.ToolsUnlisted) == 0 {
		why = append(why, "a known configuration lists the tools the default listing lacks")
	}
	if c.Breaking != p.Breaking {
		undetermined := ""
		if c.Undetermined > 0 {
			undetermined = fmt.Sprintf(", %d undetermined", c.Undetermined)
		}
		why = append(why, fmt.Sprintf("graded by witness: %d breaking, was %d%s (each release installed alone; a change that accepts more is not breaking)", c.Breaking, p.Breaking, undetermined))
	}
	if len(why) == 0 {
		return "–"
	}
	return strings.Join(why, "; ")
}
