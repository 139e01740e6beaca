package scan

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpdrill/mcpdrill/internal/jsonschema"
)

// Contract is the verdict on a tool's output contract.
type Contract string

// Contract verdicts.
const (
	// ContractNone: no outputSchema (absent or null).
	ContractNone Contract = "none"
	// ContractVacuous: a schema that compiles but rejects the corrupted
	// payload of no sampled shape (or cannot be shown to reject any).
	ContractVacuous Contract = "vacuous"
	// ContractPartial: the corrupted payloads of some sampled shapes are
	// rejected, and those of others validate.
	ContractPartial Contract = "partial"
	// ContractEnforceable: the corrupted payload of every sampled shape
	// (every branch and its variants, see jsonschema.MaxShapes) is rejected.
	ContractEnforceable Contract = "enforceable"
	// ContractInvalid: the schema does not compile (never folded into
	// vacuous).
	ContractInvalid Contract = "invalid"
)

// Assessment is the enforceability verdict for one outputSchema, with the
// figures behind it. No field ever holds a value from the schema's
// instances; Reason and CompileError name pointers and keywords only.
type Assessment struct {
	Contract Contract `json:"contract"`
	Reason   string   `json:"reason"`
	// Instances is the number of distinct valid branch instances
	// synthesized (one per anyOf/oneOf/if/type-list branch that could be
	// reached, every optional property present).
	Instances int `json:"instances"`
	// Shapes is the number of distinct shapes sampled: the branch
	// instances and their variants (minimal instance, nullable fields null,
	// arrays empty; at most jsonschema.MaxShapes). ShapesRejected is how many of them
	// had their corrupted payload rejected; a shape with nothing to corrupt
	// (only nulls and empty containers) validates as it is and counts as
	// not rejected.
	Shapes         int `json:"shapes"`
	ShapesRejected int `json:"shapes_rejected"`
	// ShapesCapped: jsonschema.MaxShapes cut the sample.
	ShapesCapped bool `json:"shapes_capped,omitempty"`
	// Unrejected describes the first sampled shape whose corrupted payload
	// validated ("nullable values null holding nothing to corrupt",
	// "optional properties absent (branch /oneOf/1)"): schema locations and
	// keywords, never a value. Empty when every shape was rejected.
	Unrejected string `json:"unrejected,omitempty"`
	// Leaves is the number of single-leaf corruptions tried over all
	// instances (every leaf of every instance whose corruption changes it,
	// that is every non-null leaf).
	Leaves int `json:"leaves"`
	// LeavesRejected is how many of those the schema rejected.
	LeavesRejected int `json:"leaves_rejected"`
	// LeavesCapped: the per-leaf stage hit its work budget, so Leaves is a
	// sample (taken evenly across instances).
	LeavesCapped bool `json:"leaves_capped,omitempty"`
	// LeafRate is LeavesRejected/Leaves, 0 when Leaves is 0.
	LeafRate float64 `json:"leaf_rate"`
	// Branches counts the alternatives of every choice point found;
	// Uncovered those no instance could exercise.
	Branches  int `json:"branches"`
	Uncovered int `json:"uncovered"`
	// Undetermined is set when the verdict could not be decided (no
	// instance could be synthesized, a branch stayed uncovered while every
	// sampled shape's corruption was rejected or none was, or the work
	// stopped: see StoppedBy); Contract is then vacuous in the sense "not
	// shown to reject corruption".
	Undetermined bool `json:"undetermined,omitempty"`
	// StoppedBy is set when the assessment stopped before its verdict:
	// jsonschema.StoppedBudget (the schema needs more work or generated
	// data than the Budget allows), StoppedDeadline or StoppedCanceled (the
	// context ended). Undetermined is then set. A stop during the per-leaf stage
	// only samples it (LeavesCapped) and leaves StoppedBy empty.
	StoppedBy string `json:"stopped_by,omitempty"`
	// FormatDependent is set when the verdict is enforceable only because
	// "format" is asserted: with format as an annotation (the default of
	// many validators for 2019-09 and later) the corruption would pass.
	FormatDependent bool `json:"format_dependent,omitempty"`
	// UnassertedPatterns counts patterns with ECMA-only syntax that could
	// not be checked (treated as matching everything).
	UnassertedPatterns int `json:"unasserted_patterns,omitempty"`
	// Wrapped: the root carries "x-fastmcp-wrap-result": true (FastMCP
	// wrapped a non-object return value in {"result": …}).
	Wrapped bool `json:"wrapped"`
	// RootObject: the root schema literally declares "type": "object" (as
	// the MCP revisions before 2026-07-28 require).
	RootObject bool `json:"root_object"`
	// CompileError is the compile failure when Contract is invalid.
	CompileError string `json:"compile_error,omitempty"`
}

// Assess decides whether an outputSchema can catch a corrupted result: the
// verdict over what jsonschema.Measure observed (see its procedure), under
// the default budget.
//
// Verdict: none for no schema; invalid for one that does not compile;
// enforceable iff every sampled shape's corrupted payload is rejected;
// partial iff some are and some are not; vacuous iff none is. No instance,
// or uncovered branches when the verdict would be enforceable or vacuous,
// is Undetermined (vacuous, not established: a branch never tried could go
// either way); partial stands whatever the uncovered branches would add. A
// measurement that stopped before its figures were complete is
// Undetermined too, with StoppedBy.
func Assess(outputSchema json.RawMessage) Assessment {
	return AssessContext(context.Background(), outputSchema, jsonschema.Budget{})
}

// AssessContext is Assess under ctx and b (see jsonschema.MeasureContext).
func AssessContext(ctx context.Context, outputSchema json.RawMessage, b jsonschema.Budget) Assessment {
	return Grade(jsonschema.MeasureContext(ctx, outputSchema, b))
}

// Grade is the verdict on one measurement.
func Grade(m jsonschema.Measurement) Assessment {
	if !m.Declared {
		return Assessment{Contract: ContractNone, Reason: "no outputSchema declared"}
	}
	if m.CompileError != "" {
		return Assessment{Contract: ContractInvalid, Reason: "outputSchema does not compile", CompileError: m.CompileError}
	}
	a := Assessment{UnassertedPatterns: m.UnassertedPatterns, Wrapped: m.Wrapped, RootObject: m.RootObject,
		Instances: m.Instances, Branches: m.Branches, Uncovered: m.Uncovered,
		Shapes: m.Shapes, ShapesRejected: m.ShapesRejected, ShapesCapped: m.ShapesCapped, Unrejected: m.Unrejected,
		Leaves: m.Leaves, LeavesRejected: m.LeavesRejected, LeavesCapped: m.LeavesCapped, FormatDependent: m.FormatDependent}
	var notes []string
	if a.UnassertedPatterns > 0 {
		notes = append(notes, fmt.Sprintf("%d pattern(s) use ECMA-only syntax and are not checked", a.UnassertedPatterns))
	}
	if a.Wrapped {
		notes = append(notes, "the SDK wrapped a non-object result (x-fastmcp-wrap-result)")
	}
	finish := func(c Contract, reason string) Assessment {
		a.Contract = c
		a.Reason = strings.Join(append([]string{reason}, notes...), "; ")
		if a.Leaves > 0 {
			a.LeafRate = float64(a.LeavesRejected) / float64(a.Leaves)
		}
		return a
	}
	if m.StoppedBy != "" {
		a.Undetermined, a.StoppedBy = true, m.StoppedBy
		if m.StoppedBy == jsonschema.StoppedBudget {
			return finish(ContractVacuous, fmt.Sprintf("synthesis budget exceeded %s (%s); enforcement not established", m.StoppedStage, m.StoppedBudgetPart))
		}
		return finish(ContractVacuous, fmt.Sprintf("stopped %s (%s); enforcement not established", m.StoppedStage, m.StoppedBy))
	}
	if a.Instances == 0 {
		a.Undetermined = true
		return finish(ContractVacuous, "no valid instance could be synthesized ("+m.SynthesisNote+"); enforcement not established")
	}
	if a.LeavesCapped {
		notes = append(notes, fmt.Sprintf("per-leaf check stopped after %s (%s)", plural(a.Leaves, "single-leaf corruption"), m.LeavesStoppedBy))
	}
	if m.InstancesCapped {
		notes = append(notes, fmt.Sprintf("instance cap of %d reached", jsonschema.MaxInstances))
	}
	if a.ShapesCapped {
		notes = append(notes, fmt.Sprintf("shape cap of %d reached", jsonschema.MaxShapes))
	}
	of := fmt.Sprintf("%d of %s", a.Shapes-a.ShapesRejected, plural(a.Shapes, "sampled shape"))
	uncovered := func() string {
		return fmt.Sprintf("%s could not be synthesized (first: %s)", plural(a.Uncovered, "branch"), m.FirstUncovered)
	}
	all := a.ShapesRejected == a.Shapes
	switch {
	case a.ShapesRejected == 0 && a.Uncovered > 0:
		a.Undetermined = true
		return finish(ContractVacuous, fmt.Sprintf("no sampled shape's corrupted payload is rejected, but %s; enforcement not established", uncovered()))
	case m.Corruptible == 0:
		return finish(ContractVacuous, "no sampled shape holds a value to corrupt (only null, empty objects or empty arrays)")
	case a.ShapesRejected == 0:
		return finish(ContractVacuous, fmt.Sprintf("a corrupted payload of the same shape validates (%s; first: %s)", of, a.Unrejected))
	case !all:
		return finish(ContractPartial, fmt.Sprintf("a corrupted payload of the same shape validates for %s (first: %s); the others are rejected", of, a.Unrejected))
	case a.Uncovered > 0:
		a.Undetermined = true
		return finish(ContractVacuous, fmt.Sprintf("corrupted payload rejected for all %s, but %s; enforcement not established",
			plural(a.Shapes, "sampled shape"), uncovered()))
	}
	reason := fmt.Sprintf("corrupted payload rejected for all %s", plural(a.Shapes, "sampled shape"))
	if a.FormatDependent {
		reason += " (only because format is asserted)"
	}
	return finish(ContractEnforceable, reason)
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if strings.HasSuffix(noun, "ch") {
		return fmt.Sprintf("%d %ses", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
