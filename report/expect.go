package report

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/mcpdrill/mcpdrill/internal/jsonvalue"
)

// An expected-findings file lists the findings a team has acknowledged, so
// that a CI gate fails on what is new and not on what is known. It is the
// official MCP conformance suite's baseline rule applied to findings: a
// failing finding the file expects passes, one it does not expect fails,
// and an entry that no finding matches any more fails too (stale: remove
// it), so the file cannot outlive what it excuses.
//
// The file is JSON:
//
//	{
//	  "kind": "mcpdrill-expected-findings",
//	  "schema_version": 1,
//	  "findings": [
//	    {"rule": "MCP-OUT-VACUOUS", "tool": "search", "pointer": "/outputSchema",
//	     "content": "sha256:…", "message": "…", "reason": "upstream issue #12"}
//	  ]
//	}
//
// An entry names a rule and, optionally, the server (a --config server),
// the tool and the JSON pointer; a field left out matches any value. With
// "content" (FindingContent: a hash of the finding's rule, severity,
// server, tool, pointer, change and message) it acknowledges one finding as
// it is: when the finding changes it is no longer expected, and comes back.
// "message" records what the finding said (it is not compared); "reason"
// is the team's own note.
//
// The file may sit in a repository the user cloned: it is untrusted input.
// Abuse list, each refused with an error naming the entry (tests in
// expect_test.go):
//   - a file over the input size limit (the caller reads it with
//     internal/inputfile);
//   - a member given twice anywhere (a parser that keeps the first reads
//     another file than one that keeps the last);
//   - a member mcpdrill does not know (a typo such as "pointr" would
//     otherwise widen an entry to every pointer), or trailing data;
//   - another kind of file (a drift capture), or a schema_version mcpdrill
//     does not read;
//   - more than MaxExpectations entries, a field longer than
//     maxExpectationField bytes, a rule id outside [A-Za-z0-9._-], a
//     content that is not a SHA-256;
//   - two entries that are the same, or one that already expects all that
//     another does (remove one or the other, as the suite asks);
//   - text meant for a terminal (control characters, escape sequences) in
//     any field: the file's text is printed through safetext, never as it
//     is.

// ExpectationsKind is the "kind" of an expected-findings file.
const ExpectationsKind = "mcpdrill-expected-findings"

// ExpectationsVersion is the schema_version of the expected-findings files
// this mcpdrill writes and reads.
const ExpectationsVersion = 1

// MaxExpectations is the most entries an expected-findings file may hold.
const MaxExpectations = 10000

// maxExpectationField is the longest a field of an entry may be, in bytes.
const maxExpectationField = 4096

// Expectations is a parsed expected-findings file.
type Expectations struct {
	Kind          string        `json:"kind"`
	SchemaVersion int           `json:"schema_version"`
	Findings      []Expectation `json:"findings"`
}

// Expectation is one entry: the findings it expects. A nil Server, Tool or
// Pointer, or an empty Content, matches any value.
type Expectation struct {
	Rule    string  `json:"rule"`
	Server  *string `json:"server,omitempty"`
	Tool    *string `json:"tool,omitempty"`
	Pointer *string `json:"pointer,omitempty"`
	// Content is FindingContent of the one finding acknowledged.
	Content string `json:"content,omitempty"`
	// Message is what the finding said when it was acknowledged; it is
	// not compared.
	Message string `json:"message,omitempty"`
	// Reason is the team's note on why the finding is expected.
	Reason string `json:"reason,omitempty"`
}

// FindingContent is the hash an acknowledgement pins: "sha256:" and the hex
// SHA-256 of the result's rule, severity, subject (server), tool, pointer,
// change id and message, NUL-separated. Any change to what the finding says
// (a count, a named branch, its severity) changes it; where the finding is
// placed in a file, and when it was found, do not.
func FindingContent(r Result) string {
	key := strings.Join([]string{r.Rule, string(r.Severity), r.Subject, r.Tool, r.Pointer, r.Change, r.Message}, "\x00")
	sum := sha256.Sum256([]byte(key))
	return "sha256:" + hex.EncodeToString(sum[:])
}

var (
	ruleIDPattern  = regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`)
	contentPattern = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
)

// ParseExpectations reads an expected-findings file; every problem of the
// abuse list above is an error naming the entry.
func ParseExpectations(data []byte) (*Expectations, error) {
	if p, dup := jsonvalue.RepeatedKey(data, 0); dup {
		return nil, fmt.Errorf("member %q is given twice (a JSON parser would keep only one of them)", p)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var e Expectations
	if err := dec.Decode(&e); err != nil {
		return nil, fmt.Errorf("not an expected-findings file: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("trailing data after the top-level object")
	}
	switch {
	case e.Kind != ExpectationsKind:
		return nil, fmt.Errorf("kind is %q, want %q", clip(e.Kind), ExpectationsKind)
	case e.SchemaVersion != ExpectationsVersion:
		return nil, fmt.Errorf("schema_version %d: this mcpdrill reads version %d", e.SchemaVersion, ExpectationsVersion)
	case len(e.Findings) > MaxExpectations:
		return nil, fmt.Errorf("%d entries: at most %d", len(e.Findings), MaxExpectations)
	}
	for i, x := range e.Findings {
		if err := x.check(); err != nil {
			return nil, fmt.Errorf("findings[%d]: %w", i, err)
		}
	}
	if err := e.checkOverlap(); err != nil {
		return nil, err
	}
	return &e, nil
}

// clip bounds a string quoted in an error.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

func (x Expectation) check() error {
	for _, f := range []struct {
		name string
		v    *string
	}{{"rule", &x.Rule}, {"server", x.Server}, {"tool", x.Tool}, {"pointer", x.Pointer}, {"content", &x.Content}, {"message", &x.Message}, {"reason", &x.Reason}} {
		if f.v != nil && len(*f.v) > maxExpectationField {
			return fmt.Errorf("%s is longer than %d bytes", f.name, maxExpectationField)
		}
	}
	if !ruleIDPattern.MatchString(x.Rule) {
		return fmt.Errorf("rule %q is not a rule id", clip(x.Rule))
	}
	if x.Content != "" && !contentPattern.MatchString(x.Content) {
		return fmt.Errorf("content %q is not sha256: and 64 lowercase hex digits", clip(x.Content))
	}
	return nil
}

// checkOverlap refuses two entries that are the same, and an entry that
// expects everything another expects (the narrower one can never decide
// anything).
func (e *Expectations) checkOverlap() error {
	byRule := map[string][]int{}
	for i, x := range e.Findings {
		byRule[x.Rule] = append(byRule[x.Rule], i)
	}
	for _, idx := range byRule {
		// Only an entry that leaves a field open can cover another; there
		// are few, so the comparison stays far from quadratic in practice
		// and is bounded by MaxExpectations in any case.
		var broad []int
		for _, i := range idx {
			if x := e.Findings[i]; x.Server == nil || x.Tool == nil || x.Pointer == nil || x.Content == "" {
				broad = append(broad, i)
			}
		}
		for _, i := range idx {
			for _, j := range broad {
				if i == j || !e.Findings[j].covers(e.Findings[i]) {
					continue
				}
				if e.Findings[i].covers(e.Findings[j]) {
					return fmt.Errorf("findings[%d] and findings[%d] are the same entry: remove one", min(i, j), max(i, j))
				}
				return fmt.Errorf("findings[%d] expects every finding findings[%d] does: remove one or the other", j, i)
			}
		}
		// Two entries with every field given are the same only when all
		// are equal.
		seen := map[string]int{}
		for _, i := range idx {
			x := e.Findings[i]
			if x.Server == nil || x.Tool == nil || x.Pointer == nil || x.Content == "" {
				continue
			}
			k := strings.Join([]string{*x.Server, *x.Tool, *x.Pointer, x.Content}, "\x00")
			if j, ok := seen[k]; ok {
				return fmt.Errorf("findings[%d] and findings[%d] are the same entry: remove one", j, i)
			}
			seen[k] = i
		}
	}
	return nil
}

// covers reports whether x expects every finding y does: the same rule, and
// each field x gives given alike by y.
func (x Expectation) covers(y Expectation) bool {
	same := func(a, b *string) bool { return a == nil || (b != nil && *a == *b) }
	return x.Rule == y.Rule && same(x.Server, y.Server) && same(x.Tool, y.Tool) && same(x.Pointer, y.Pointer) &&
		(x.Content == "" || x.Content == y.Content)
}

// at reports whether the entry's place (rule, server, tool, pointer)
// matches the result's.
func (x Expectation) at(r Result) bool {
	eq := func(p *string, v string) bool { return p == nil || *p == v }
	return x.Rule == r.Rule && eq(x.Server, r.Subject) && eq(x.Tool, r.Tool) && eq(x.Pointer, r.Pointer)
}

// matches reports whether the entry expects the result.
func (x Expectation) matches(r Result) bool {
	return x.at(r) && (x.Content == "" || x.Content == FindingContent(r))
}

// Label names the entry for a message: its rule and the fields it gives.
func (x Expectation) Label() string {
	parts := []string{x.Rule}
	if x.Server != nil {
		parts = append(parts, fmt.Sprintf("server %q", *x.Server))
	}
	if x.Tool != nil && *x.Tool != "" {
		parts = append(parts, fmt.Sprintf("tool %q", *x.Tool))
	}
	if x.Pointer != nil && *x.Pointer != "" {
		parts = append(parts, *x.Pointer)
	}
	if x.Content != "" {
		parts = append(parts, "content "+strings.TrimPrefix(x.Content, "sha256:")[:12])
	}
	return strings.Join(parts, " ")
}

// ExpectationVerdict is what Evaluate made of a run's results.
type ExpectationVerdict struct {
	// Expected are the failing results an entry expects, Unexpected the
	// failing results none does (indexes into the results).
	Expected, Unexpected []int
	// Changed maps an unexpected result to the entry that acknowledged it
	// before it changed (same place, other content).
	Changed map[int]int
	// Stale are the entries that match no finding of the run: the
	// findings they excused are gone (indexes into Findings).
	Stale []int
	// Unsettled are the entries that match no finding but whose server's
	// run was not complete: their staleness was not established.
	Unsettled []int
}

// Fails reports whether the gate fails: a failing finding not expected, or
// a stale entry.
func (v ExpectationVerdict) Fails() bool { return len(v.Unexpected) > 0 || len(v.Stale) > 0 }

// Evaluate judges the results of a run against the entries. A result
// fails when its severity is at or above threshold ("" never). Each
// failing result an entry matches is expected and marked so
// (Result.Expected); any other failing result is unexpected. An entry that
// matches no result at all, failing or not, is stale, unless established
// says its server's run (established(""): the whole run, for an entry that
// names no server) did not complete, so that a finding's absence proves
// nothing; an entry at the place of an unexpected result whose content
// changed is reported with that result (Changed) instead.
func (e *Expectations) Evaluate(rs []Result, threshold Severity, established func(server string) bool) ExpectationVerdict {
	v := ExpectationVerdict{Changed: map[int]int{}}
	matched := make([]bool, len(e.Findings))
	contents := make([]string, len(rs))
	for i, r := range rs {
		contents[i] = FindingContent(r)
		expected := false
		for j, x := range e.Findings {
			if x.at(r) && (x.Content == "" || x.Content == contents[i]) {
				matched[j], expected = true, true
			}
		}
		if threshold == "" || r.Severity.Rank() < threshold.Rank() {
			continue
		}
		if expected {
			rs[i].Expected = true
			v.Expected = append(v.Expected, i)
		} else {
			v.Unexpected = append(v.Unexpected, i)
		}
	}
	paired := map[int]bool{}
	for j, x := range e.Findings {
		if matched[j] {
			continue
		}
		server := ""
		if x.Server != nil {
			server = *x.Server
		}
		if established != nil && !established(server) {
			v.Unsettled = append(v.Unsettled, j)
			continue
		}
		changed := false
		if x.Content != "" {
			for _, i := range v.Unexpected {
				if !paired[i] && x.at(rs[i]) {
					v.Changed[i], paired[i], changed = j, true, true
					break
				}
			}
		}
		if !changed {
			v.Stale = append(v.Stale, j)
		}
	}
	return v
}

// Rebaseline is the file that expects exactly the failing results of a run
// (severity at or above threshold): each entry of e that still matches a
// finding of the run is kept as it is (a hand-written broad entry stays
// broad, its reason with it), and each failing result no kept entry
// expects gets an entry of its own that pins its content, carrying the
// reason of the entry that acknowledged it before it changed. Stale entries
// are dropped. e may be nil (a first baseline).
func (e *Expectations) Rebaseline(rs []Result, threshold Severity) *Expectations {
	out := &Expectations{Kind: ExpectationsKind, SchemaVersion: ExpectationsVersion, Findings: []Expectation{}}
	var old []Expectation
	if e != nil {
		old = e.Findings
	}
	kept := make([]bool, len(old))
	for _, r := range rs {
		for j, x := range old {
			if x.matches(r) {
				kept[j] = true
			}
		}
	}
	for j, x := range old {
		if kept[j] {
			out.Findings = append(out.Findings, x)
		}
	}
	fresh := []Expectation{}
	for _, r := range (Output{Results: rs}).sortedResults() {
		if threshold == "" || r.Severity.Rank() < threshold.Rank() {
			continue
		}
		covered := false
		for _, x := range out.Findings {
			if x.matches(r) {
				covered = true
				break
			}
		}
		if covered {
			continue
		}
		n := Expectation{Rule: r.Rule, Content: FindingContent(r), Message: r.Message}
		if r.Subject != "" {
			n.Server = ptr(r.Subject)
		}
		if r.Tool != "" {
			n.Tool = ptr(r.Tool)
		}
		if r.Pointer != "" {
			n.Pointer = ptr(r.Pointer)
		}
		for _, x := range old {
			if x.Content != "" && x.at(r) {
				n.Reason = x.Reason
				break
			}
		}
		if !containsExpectation(fresh, n) {
			fresh = append(fresh, n)
		}
	}
	out.Findings = append(out.Findings, fresh...)
	return out
}

func ptr(s string) *string { return &s }

// containsExpectation reports whether xs holds an entry for the same
// finding as n (two identical findings need one entry).
func containsExpectation(xs []Expectation, n Expectation) bool {
	for _, x := range xs {
		if x.Rule == n.Rule && x.Content == n.Content {
			return true
		}
	}
	return false
}

// WriteExpectations writes e as indented JSON.
func WriteExpectations(w io.Writer, e *Expectations) error {
	if err := jsonvalue.WriteIndented(w, e); err != nil {
		return fmt.Errorf("report: write expected findings: %w", err)
	}
	return nil
}
