package scan

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mcpdrill/mcpdrill/internal/jsonschema"
)

// The scan's deadline (Options.Deadline) is a wall: once it has passed,
// nothing more is sent and nothing more is computed, and whatever it cut
// short is recorded as not established, never graded as the server's fault.
// A probe cut short has Verdict skipped, Established false and Reason
// "deadline"; a check has Status not_established and Reason "deadline"; a
// tool's output contract is undetermined with StoppedBy "deadline". One
// MCP-SCAN-INCOMPLETE finding names them all (cutSummary).

// Reasons a scan cut its own work short (the same words as the schema
// package's stop causes).
const (
	ReasonDeadline = jsonschema.StoppedDeadline
	ReasonCanceled = jsonschema.StoppedCanceled
)

// cutShort reports whether the scan's context has ended, and why: work that
// failed then says nothing about the server.
func cutShort(ctx context.Context) (string, bool) {
	switch err := ctx.Err(); {
	case err == nil:
		return "", false
	case errors.Is(err, context.DeadlineExceeded):
		return ReasonDeadline, true
	default:
		return ReasonCanceled, true
	}
}

// notEstablished is the detail recorded for work cut short for reason.
func notEstablished(reason, what string) string {
	return "not established (" + reason + "): " + what
}

// cutCheck records a conformance check the scan's context cut short.
func (s *scanner) cutCheck(id, reason, what string) {
	s.rep.Conformance = append(s.rep.Conformance, Check{ID: id, Status: CheckNotEstablished, Detail: notEstablished(reason, what), Reason: reason})
}

// cutSummary adds one finding naming every probe, check, output contract
// and invocation the scan's context cut short.
func (s *scanner) cutSummary() {
	var parts []string
	reason := ""
	var probes []string
	for _, p := range s.rep.Probes {
		if p.Established != nil && !*p.Established {
			probes, reason = append(probes, p.Name), p.Reason
		}
	}
	if len(probes) > 0 {
		parts = append(parts, "probes "+strings.Join(probes, ", "))
	}
	var checks []string
	for _, c := range s.rep.Conformance {
		if c.Reason != "" {
			checks, reason = append(checks, c.ID), c.Reason
		}
	}
	if len(checks) > 0 {
		parts = append(parts, "checks "+strings.Join(checks, ", "))
	}
	tools := 0
	for _, t := range s.rep.Tools {
		if t.StoppedBy == ReasonDeadline || t.StoppedBy == ReasonCanceled {
			tools, reason = tools+1, t.StoppedBy
		}
	}
	if tools > 0 {
		parts = append(parts, fmt.Sprintf("the output contract of %d tool(s)", tools))
	}
	calls := 0
	if inv := s.rep.Invocation; inv != nil {
		for _, c := range inv.Calls {
			if c.Reason != "" {
				calls++
			}
		}
	}
	if calls > 0 {
		parts = append(parts, fmt.Sprintf("%d tool invocation(s)", calls))
	}
	if len(parts) == 0 {
		return
	}
	what := "the scan deadline"
	if reason == ReasonCanceled {
		what = "cancellation"
	}
	s.find(RuleIncomplete, "", "", fmt.Sprintf("cut short by %s (not established, not graded): %s", what, strings.Join(parts, "; ")))
}
