// Package report holds what every mcpdrill command reports: findings, their
// severities, the catalogue of stable rule ids, and the machine formats
// (JSON helpers, SARIF, JUnit, GitHub workflow annotations) findings are
// written in.
package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Severity grades a finding.
type Severity string

// Severities, from most to least serious.
const (
	SeverityError Severity = "error"
	SeverityWarn  Severity = "warn"
	SeverityInfo  Severity = "info"
)

// Rank orders severities: error 3, warn 2, info 1, anything else 0.
func (s Severity) Rank() int {
	switch s {
	case SeverityError:
		return 3
	case SeverityWarn:
		return 2
	case SeverityInfo:
		return 1
	}
	return 0
}

// ParseThreshold reads a --fail-on value: error, warn, info or never.
// never is returned as the empty Severity.
func ParseThreshold(s string) (Severity, error) {
	switch strings.ToLower(s) {
	case "error", "":
		return SeverityError, nil
	case "warn", "warning":
		return SeverityWarn, nil
	case "info":
		return SeverityInfo, nil
	case "never", "none":
		return "", nil
	}
	return "", fmt.Errorf("unknown severity threshold %q (want error, warn, info or never)", s)
}

// Finding is one observation a run established about a server.
type Finding struct {
	Rule     string   `json:"rule"`
	Severity Severity `json:"severity"`
	Tool     string   `json:"tool,omitempty"`
	// Pointer is a JSON pointer into the schema or message the finding is about.
	Pointer string `json:"pointer,omitempty"`
	Message string `json:"message"`
	// Evidence says what was observed (never a tool result value or a header value).
	Evidence string `json:"evidence,omitempty"`
	// Change and Breaking are set by schema-diff findings.
	Change   string `json:"change,omitempty"`
	Breaking *bool  `json:"breaking,omitempty"`
	// TraceID and SpanID name the call that established the finding, when traced.
	TraceID string `json:"trace_id,omitempty"`
	SpanID  string `json:"span_id,omitempty"`
	// Requirement is the specification requirement the finding grades, for
	// a finding of a rule that grades one on the revision the run spoke.
	Requirement *Requirement `json:"requirement,omitempty"`
}

// Requirement names one requirement of the MCP specification in one
// revision: its stable id (mcpdrill rules --requirements REV), its level,
// and the spec page and heading it comes from.
type Requirement struct {
	ID       string `json:"id"`
	Revision string `json:"revision"`
	Level    string `json:"level"`
	// Section is the page under the revision's specification and its
	// heading anchor, e.g. "server/utilities/pagination#error-handling".
	Section string `json:"section"`
	// URL is the section in the published specification.
	URL string `json:"url"`
}

// SpecURL links a section of revision rev's published specification.
func SpecURL(rev, section string) string {
	return "https://modelcontextprotocol.io/specification/" + rev + "/" + section
}

// String is the requirement in one line: "REQ-PAGINATION-02 (SHOULD,
// 2025-11-25 server/utilities/pagination#error-handling)".
func (q Requirement) String() string {
	return fmt.Sprintf("%s (%s, %s %s)", q.ID, q.Level, q.Revision, q.Section)
}

// RuleRequirement is one requirement a rule grades, over the revisions
// where it comes from the same section.
type RuleRequirement struct {
	ID        string   `json:"id"`
	Level     string   `json:"level"`
	Revisions []string `json:"revisions"`
	Section   string   `json:"section"`
}

// String is the requirement in one line: "REQ-TOOLS-03 (MUST; 2024-11-05,
// 2025-03-26: server/tools#tool)".
func (g RuleRequirement) String() string {
	return fmt.Sprintf("%s (%s; %s: %s)", g.ID, g.Level, strings.Join(g.Revisions, ", "), g.Section)
}

// SetTrace names the traced call that established the finding; empty ids
// (an untraced run) leave both fields out of the report.
func (f *Finding) SetTrace(traceID, spanID string) { f.TraceID, f.SpanID = traceID, spanID }

// Sort orders findings stably: severity (most serious first), rule, tool,
// pointer, message.
func Sort(fs []Finding) { slices.SortStableFunc(fs, compareFindings) }

func compareFindings(a, b Finding) int {
	return cmp.Or(
		cmp.Compare(b.Severity.Rank(), a.Severity.Rank()),
		cmp.Compare(a.Rule, b.Rule),
		cmp.Compare(a.Tool, b.Tool),
		cmp.Compare(a.Pointer, b.Pointer),
		cmp.Compare(a.Message, b.Message),
	)
}

// Fails reports whether any finding is at or above the threshold. An empty
// threshold (never) never fails.
func Fails(fs []Finding, threshold Severity) bool {
	if threshold == "" {
		return false
	}
	for _, f := range fs {
		if f.Severity.Rank() >= threshold.Rank() {
			return true
		}
	}
	return false
}

// Count returns how many findings have each severity.
func Count(fs []Finding) map[Severity]int {
	m := map[Severity]int{}
	for _, f := range fs {
		m[f.Severity]++
	}
	return m
}

// Rule documents one stable rule id.
type Rule struct {
	ID       string   `json:"id"`
	Severity Severity `json:"severity"` // default severity
	// Graded lists, when a finding of the rule may carry another severity
	// than the default (by revision, by target class, by what the server
	// answered), every severity it may carry, most serious first; Detail
	// says when.
	Graded []Severity `json:"graded,omitempty"`
	Title  string     `json:"title"`
	// Detail explains what the rule checks, why, and how to fix it.
	Detail string `json:"detail"`
	// Requirements are the specification requirements the rule grades, by
	// revision; none for a rule that grades none (drift, output contracts).
	Requirements []RuleRequirement `json:"requirements,omitempty"`
	// Formerly are ids the rule had before it was renamed: Lookup finds
	// it by them, and an expected-findings entry naming one is read as
	// the rule (Expectations.Rename), so that files and reports written
	// before the rename keep working.
	Formerly []string `json:"formerly,omitempty"`
}

// Severities are the severities a finding of the rule may carry: Graded,
// or the default alone.
func (r Rule) Severities() []Severity {
	if len(r.Graded) > 0 {
		return r.Graded
	}
	return []Severity{r.Severity}
}

// SeverityText is the rule's severity as a listing shows it: the default,
// or every severity it grades ("error/warn").
func (r Rule) SeverityText() string {
	s := r.Severities()
	parts := make([]string, len(s))
	for i, v := range s {
		parts[i] = string(v)
	}
	return strings.Join(parts, "/")
}

// Catalogue is a set of rules, addressable by id.
type Catalogue []Rule

// IDs lists the catalogue's rule ids, in its order.
func (c Catalogue) IDs() []string {
	out := make([]string, len(c))
	for i, r := range c {
		out[i] = r.ID
	}
	return out
}

// Lookup finds a rule by id (case-insensitive), or by an id it had before
// (Formerly).
func (c Catalogue) Lookup(id string) (Rule, bool) {
	for _, r := range c {
		if strings.EqualFold(r.ID, id) {
			return r, true
		}
	}
	for _, r := range c {
		for _, old := range r.Formerly {
			if strings.EqualFold(old, id) {
				return r, true
			}
		}
	}
	return Rule{}, false
}

// Renamed maps each former rule id (Formerly) to the rule's id.
func (c Catalogue) Renamed() map[string]string {
	m := map[string]string{}
	for _, r := range c {
		for _, old := range r.Formerly {
			m[old] = r.ID
		}
	}
	return m
}

// Merge joins catalogues, sorted by id; a duplicate id is a programming error
// reported as an error.
func Merge(cs ...Catalogue) (Catalogue, error) {
	var out Catalogue
	seen := map[string]bool{}
	for _, c := range cs {
		for _, r := range c {
			for _, id := range append([]string{r.ID}, r.Formerly...) {
				if seen[id] {
					return nil, fmt.Errorf("report: rule %s defined twice", id)
				}
				seen[id] = true
			}
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b Rule) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}
