package studies

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpdrill/mcpdrill/drift"
	"github.com/mcpdrill/mcpdrill/internal/mcp"
	"github.com/mcpdrill/mcpdrill/internal/strwalk"
	"github.com/mcpdrill/mcpdrill/report"
	"github.com/mcpdrill/mcpdrill/scan"
)

// VersionDrift is the graded difference between a package's previous
// release (the entry whose previous_of names this row) and this row's
// release, by the drift catalogue (drift.Diff, as `mcpdrill drift` grades a
// baseline against a live server). It sits on the newer row.
type VersionDrift struct {
	// Previous is the name of the previous release's row.
	Previous string `json:"previous"`
	From     string `json:"from"`
	To       string `json:"to"`
	// Step is the semver step from From to To: major, minor, patch,
	// same, downgrade, calendar (either version is a calendar version,
	// which promises nothing of compatibility) or unknown (a version that
	// does not parse). Before 1.0 the leftmost non-zero component is the
	// major one (npm's caret rule): 0.2.x to 0.3.0 is a major step, 0.2.3
	// to 0.2.4 a minor one.
	Step string `json:"step"`
	// Compared is false when either release was not scanned or its listing
	// was incomplete; Reason says which.
	Compared bool   `json:"compared"`
	Reason   string `json:"reason,omitempty"`
	// Changes are the graded changes, sorted by tool, pointer and kind.
	Changes []VersionChange `json:"changes"`
	// ByRule and BySeverity count the changes.
	ByRule     map[string]int `json:"by_rule"`
	BySeverity map[string]int `json:"by_severity"`
	// Breaking counts the breaking changes (inside a schema: those with a
	// witness) and Undetermined the changes inside a schema the grading
	// could not decide. ToolsRemoved names the tools absent from the newer
	// release under every configuration known for the package (the default
	// one included), ToolsUnlisted those absent from its default listing
	// that a known configuration lists or may list (BRK-TOOL-UNLISTED),
	// ToolsAdded and DescriptionsChanged the others concerned; all sorted.
	Breaking            int      `json:"breaking"`
	Undetermined        int      `json:"undetermined"`
	ToolsRemoved        []string `json:"tools_removed"`
	ToolsUnlisted       []string `json:"tools_unlisted"`
	ToolsAdded          []string `json:"tools_added"`
	DescriptionsChanged []string `json:"descriptions_changed"`
	// SemverViolation is a breaking change shipped in a minor or patch
	// step of semantic versions (never for calendar versions).
	SemverViolation bool `json:"semver_violation"`
}

// VersionChange is one graded change of a version pair.
type VersionChange struct {
	Tool     string          `json:"tool"`
	Pointer  string          `json:"pointer,omitempty"`
	Kind     string          `json:"kind"`
	Rule     string          `json:"rule"`
	Severity report.Severity `json:"severity"`
	Breaking bool            `json:"breaking"`
	Message  string          `json:"message"`
	// Verdict and Witness are drift.Change's: for a change inside a
	// schema, compatible, breaking or undetermined, and the value that
	// shows it.
	Verdict string `json:"verdict,omitempty"`
	Witness string `json:"witness,omitempty"`
}

// baseline is what a row keeps of its scan for the version comparison:
// the listed tools, decoded, and whether the listing was whole.
type baseline struct {
	tools    []mcp.Tool
	complete bool
}

// baselineOf keeps the scan's listing; nil when the scan listed nothing.
func baselineOf(r *scan.Report) *baseline {
	if r.Listed == nil {
		return nil
	}
	tools, bad := drift.Readable(r.Listed.Tools)
	return &baseline{tools: tools, complete: !r.Listed.Capped && !r.Listed.CursorLoop && len(bad) == 0}
}

// pairVersions grades every pair of rows joined by previous_of whose both
// rows are in rows, and puts the result on the newer row. entries are the
// servers.json entries (for the package versions).
func pairVersions(rows []Row, entries []Entry) {
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
		vd := gradeVersions(&rows[pi], &rows[ci], versions[e.Name], versions[e.PreviousOf])
		// Tool names and messages come from both scans: both servers'
		// secrets are masked in them.
		for _, mask := range []func(string) string{rows[pi].mask, rows[ci].mask} {
			if mask != nil {
				strwalk.Map(&vd, mask)
			}
		}
		rows[ci].VersionDrift = &vd
	}
}

// gradeVersions compares prev with cur.
func gradeVersions(prev, cur *Row, from, to string) VersionDrift {
	vd := VersionDrift{Previous: prev.Name, From: from, To: to, Step: SemverStep(from, to),
		Changes: []VersionChange{}, ByRule: map[string]int{}, BySeverity: map[string]int{},
		ToolsRemoved: []string{}, ToolsUnlisted: []string{}, ToolsAdded: []string{}, DescriptionsChanged: []string{}}
	switch {
	case prev.Status != StatusScanned || prev.base == nil:
		vd.Reason = "the previous release was not scanned"
		return vd
	case cur.Status != StatusScanned || cur.base == nil:
		vd.Reason = "the current release was not scanned"
		return vd
	case !prev.base.complete || !cur.base.complete:
		vd.Reason = "a tools/list was incomplete (capped, looping or unreadable entries): tool removals cannot be told apart from unread tools"
		return vd
	}
	vd.Compared = true
	for _, c := range drift.Diff(prev.base.tools, cur.base.tools) {
		unlistedHow := ""
		if c.Kind == drift.KindToolRemoved {
			if unlistedHow = unlisted(cur.Configurations, c.Tool); unlistedHow != "" {
				c = drift.Unlisted(c, unlistedHow)
			}
		}
		vd.Changes = append(vd.Changes, VersionChange{Tool: c.Tool, Pointer: c.Pointer, Kind: string(c.Kind),
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

// SemverStep names the step from one version to another (see
// VersionDrift.Step).
func SemverStep(from, to string) string {
	if CalendarVersion(from) || CalendarVersion(to) {
		return "calendar"
	}
	a, okA := parseSemver(from)
	b, okB := parseSemver(to)
	if !okA || !okB {
		return "unknown"
	}
	if c := slices.Compare(a, b); c == 0 {
		return "same"
	} else if c > 0 {
		return "downgrade"
	}
	lead := 0
	for lead < 2 && a[lead] == 0 {
		lead++
	}
	first := 0
	for first < 3 && a[first] == b[first] {
		first++
	}
	switch {
	case first <= lead:
		return "major"
	case first == lead+1:
		return "minor"
	}
	return "patch"
}

// CalendarVersion reports whether a version is a calendar version: its
// first component (after a leading v) is a year from 2000 to 2099, or a
// date YYYYMMDD of those years (2025.4.8, 2025.04.08, 2026.8.31-1,
// 20250408.0.0, v2024.1). Such a version numbers releases by date and
// promises nothing of compatibility, so no step between it and another
// version can violate semantic versioning.
func CalendarVersion(v string) bool {
	v = strings.TrimPrefix(v, "v")
	first, _, _ := strings.Cut(v, ".")
	if i := strings.IndexAny(first, "-+"); i >= 0 {
		first = first[:i]
	}
	n, err := strconv.Atoi(first)
	if err != nil || strings.HasPrefix(first, "0") {
		return false
	}
	switch len(first) {
	case 4:
		return n >= 2000 && n <= 2099
	case 8:
		y, m, d := n/10000, n/100%100, n%100
		return y >= 2000 && y <= 2099 && m >= 1 && m <= 12 && d >= 1 && d <= 31
	}
	return false
}

// parseSemver reads MAJOR.MINOR.PATCH (a leading v, a pre-release and
// build metadata ignored).
func parseSemver(v string) ([]int, bool) {
	v = strings.TrimPrefix(v, "v")
	if i := strings.IndexAny(v, "-+"); i >= 0 {
		v = v[:i]
	}
	parts := strings.Split(v, ".")
	if len(parts) != 3 {
		return nil, false
	}
	out := make([]int, 3)
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return nil, false
		}
		out[i] = n
	}
	return out, true
}

// DriftAggregates summarise the version pairs.
type DriftAggregates struct {
	// Pairs counts rows with a version_drift; Compared those graded.
	Pairs    int `json:"pairs"`
	Compared int `json:"compared"`
	// Steps counts compared pairs by semver step.
	Steps map[string]int `json:"steps"`
	// WithChanges, WithBreaking, WithUndetermined, WithRemovals,
	// WithUnlisted and WithDescriptionChanges count compared pairs;
	// SemverViolations those with a breaking change in a minor or patch
	// step of semantic versions.
	WithChanges            int `json:"with_changes"`
	WithBreaking           int `json:"with_breaking"`
	WithUndetermined       int `json:"with_undetermined"`
	WithRemovals           int `json:"with_removals"`
	WithUnlisted           int `json:"with_unlisted"`
	WithDescriptionChanges int `json:"with_description_changes"`
	SemverViolations       int `json:"semver_violations"`
	// ByRule counts changes per BRK rule over compared pairs.
	ByRule map[string]int `json:"by_rule"`
	// ToolsRemoved, ToolsUnlisted and DescriptionsChanged count tools
	// over compared pairs.
	ToolsRemoved        int `json:"tools_removed"`
	ToolsUnlisted       int `json:"tools_unlisted"`
	DescriptionsChanged int `json:"descriptions_changed"`
}

func aggregateDrift(rows []Row) DriftAggregates {
	d := DriftAggregates{Steps: map[string]int{}, ByRule: map[string]int{}}
	for _, r := range rows {
		vd := r.VersionDrift
		if vd == nil {
			continue
		}
		d.Pairs++
		if !vd.Compared {
			continue
		}
		d.Compared++
		d.Steps[vd.Step]++
		for k, v := range vd.ByRule {
			d.ByRule[k] += v
		}
		if len(vd.Changes) > 0 {
			d.WithChanges++
		}
		if vd.Breaking > 0 {
			d.WithBreaking++
		}
		if vd.Undetermined > 0 {
			d.WithUndetermined++
		}
		if len(vd.ToolsRemoved) > 0 {
			d.WithRemovals++
		}
		if len(vd.ToolsUnlisted) > 0 {
			d.WithUnlisted++
		}
		if len(vd.DescriptionsChanged) > 0 {
			d.WithDescriptionChanges++
		}
		if vd.SemverViolation {
			d.SemverViolations++
		}
		d.ToolsRemoved += len(vd.ToolsRemoved)
		d.ToolsUnlisted += len(vd.ToolsUnlisted)
		d.DescriptionsChanged += len(vd.DescriptionsChanged)
	}
	return d
}

// driftRows are the rows with a version pair, violations first, then by
// name.
func driftRows(rows []Row) []Row {
	var out []Row
	for _, r := range rows {
		if r.VersionDrift != nil {
			out = append(out, r)
		}
	}
	slices.SortStableFunc(out, func(a, b Row) int {
		return cmp.Or(-cmp.Compare(b2i(a.VersionDrift.SemverViolation), b2i(b.VersionDrift.SemverViolation)), cmp.Compare(a.Name, b.Name))
	})
	return out
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Summary is a pair's changes in a few words, e.g. "3 changes (1
// breaking): BRK-TOOL-REMOVED 1, BRK-TOOL-DESCRIPTION-CHANGED 2".
func (vd *VersionDrift) Summary() string {
	if !vd.Compared {
		return "not compared: " + vd.Reason
	}
	if len(vd.Changes) == 0 {
		return "no change"
	}
	undecided := ""
	if vd.Undetermined > 0 {
		undecided = fmt.Sprintf(", %d undetermined", vd.Undetermined)
	}
	return fmt.Sprintf("%d changes (%d breaking%s): %s", len(vd.Changes), vd.Breaking, undecided, strings.Join(sortedCounts(vd.ByRule), ", "))
}
