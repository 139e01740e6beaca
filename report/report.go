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
	Title    string   `json:"title"`
	// Detail explains what the rule checks, why, and how to fix it.
	Detail string `json:"detail"`
}

// Catalogue is a set of rules, addressable by id.
type Catalogue []Rule

// Lookup finds a rule by id (case-insensitive).
func (c Catalogue) Lookup(id string) (Rule, bool) {
	for _, r := range c {
		if strings.EqualFold(r.ID, id) {
			return r, true
		}
	}
	return Rule{}, false
}

// Merge joins catalogues, sorted by id; a duplicate id is a programming error
// reported as an error.
func Merge(cs ...Catalogue) (Catalogue, error) {
	var out Catalogue
	seen := map[string]bool{}
	for _, c := range cs {
		for _, r := range c {
			if seen[r.ID] {
				return nil, fmt.Errorf("report: rule %s defined twice", r.ID)
			}
			seen[r.ID] = true
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b Rule) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}
