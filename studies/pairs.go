package studies

import (
	"github.com/mcpdrill/mcpdrill/drift"
	"github.com/mcpdrill/mcpdrill/internal/mcp"
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
	// PreviousScanned and CurrentScanned say which releases were scanned
	// (their tools listed). Compared is false when either was not, or a
	// listing was incomplete; Reason says which.
	PreviousScanned bool   `json:"previous_scanned"`
	CurrentScanned  bool   `json:"current_scanned"`
	Compared        bool   `json:"compared"`
	Reason          string `json:"reason,omitempty"`
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

// Listing is the tools/list the row's scan read, decoded, and whether it
// was whole (not capped, no cursor loop, every entry readable); ok is false
// when the row keeps none (not scanned, or read back from results.json,
// which keeps no listing). studies/versiondrift grades pairs from it.
func (r *Row) Listing() (tools []mcp.Tool, complete, ok bool) {
	if r.base == nil {
		return nil, false, false
	}
	return r.base.tools, r.base.complete, true
}

// SetListing gives the row a listing (tests, and callers that build rows
// by hand, such as a page fixture).
func (r *Row) SetListing(tools []mcp.Tool, complete bool) {
	r.base = &baseline{tools: tools, complete: complete}
}

// Mask masks the secrets of the row's server (redact.Values) in s; s as it
// is for a row read from results.json, which has no secrets to mask.
func (r *Row) Mask(s string) string {
	if r.mask == nil {
		return s
	}
	return r.mask(s)
}

// baselineOf keeps the scan's listing; nil when the scan listed nothing.
func baselineOf(r *scan.Report) *baseline {
	if r.Listed == nil {
		return nil
	}
	tools, bad := drift.Readable(r.Listed.Tools)
	return &baseline{tools: tools, complete: !r.Listed.Capped && !r.Listed.CursorLoop && len(bad) == 0}
}

// DriftAggregates summarise the version pairs.
type DriftAggregates struct {
	// Pairs counts rows with a version_drift (pairs listed);
	// BothScanned those whose two releases were scanned, NeitherScanned
	// those with neither; Compared those graded (both scanned, both
	// listings whole).
	Pairs          int `json:"pairs"`
	BothScanned    int `json:"both_scanned"`
	NeitherScanned int `json:"neither_scanned"`
	Compared       int `json:"compared"`
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
		switch {
		case vd.PreviousScanned && vd.CurrentScanned:
			d.BothScanned++
		case !vd.PreviousScanned && !vd.CurrentScanned:
			d.NeitherScanned++
		}
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
