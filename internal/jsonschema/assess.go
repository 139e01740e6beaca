package jsonschema

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/mcpdrill/mcpdrill/internal/jsonvalue"
	"strings"
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
	// (every branch and its variants, see MaxShapes) is rejected.
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
	// arrays empty; at most MaxShapes). ShapesRejected is how many of them
	// had their corrupted payload rejected; a shape with nothing to corrupt
	// (only nulls and empty containers) validates as it is and counts as
	// not rejected.
	Shapes         int `json:"shapes"`
	ShapesRejected int `json:"shapes_rejected"`
	// ShapesCapped: MaxShapes cut the sample.
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
	// StoppedBudget (the schema needs more work or generated data than the
	// Budget allows), StoppedDeadline or StoppedCanceled (the context
	// ended). Undetermined is then set. A stop during the per-leaf stage
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

// assessMaxInstances caps the branch instances Assess synthesizes (a oneOf
// with many variants needs one each).
const assessMaxInstances = 64

// wrapMarkers are root keywords with which SDKs flag an output schema they
// generated to wrap a non-object return value.
var wrapMarkers = []string{"x-fastmcp-wrap-result"}

// Assess decides whether an outputSchema can catch a corrupted result.
//
// Procedure:
//
//  1. Absent, empty or JSON null → none.
//  2. Compile with "format" asserted (Compile). Failure → invalid, with
//     CompileError; this includes remote "$ref"s (never fetched: a client
//     cannot enforce a contract it cannot read offline, so it is treated
//     like any other schema that does not compile), unknown "$schema"
//     dialects and documents over the size or depth limits (a 10,000-deep
//     schema is refused in linear time).
//  3. Synthesize valid instances, one per branch: every anyOf/oneOf/
//     if-then-else alternative and every member of a "type" list is a
//     choice point; an instance is generated for each branch (others at
//     their first branch), with every optional property present. Instances
//     must validate against the schema itself. Then sample the other shapes
//     a server can send (sampleShapes): for each branch instance, the
//     minimal instance (optional properties absent, arrays at minItems)
//     with and without every nullable value null, every nullable value
//     null, and every array empty; each must validate, duplicates are
//     dropped, at most MaxShapes in all. A nullable value null on its own
//     is a branch instance already (its null branch).
//  4. Whole payload: for each shape, Corrupt it (type-preserving: same
//     keys, lengths and JSON types; strings become a NUL-led sentinel of
//     the same length, integers -999999999, numbers -1.5e308, booleans
//     flipped, null kept) and validate the result. A shape with nothing to
//     corrupt (only nulls and empty containers) is its own corruption: it
//     validates, so it counts as not rejected (the schema checks nothing
//     a server sends in that shape).
//  5. oneOf rule: a corrupted payload counts as rejected only if the schema
//     with every oneOf read as anyOf rejects it too. A oneOf rejects a
//     value that matches two branches; that is an accident of overlap,
//     not a check on the data (the corrupted string that fits both
//     {"type":"string"} and {"type":"string","maxLength":5} is garbage
//     both branches accept). A branch whose every candidate matched
//     another branch as well is "overlapped", not uncovered.
//  6. Verdict over the shapes: enforceable iff every shape's corrupted
//     payload is rejected (step 5); partial iff some are and some are not;
//     vacuous iff none is. No instance (Instances 0), or uncovered branches
//     when the verdict would be enforceable or vacuous, is Undetermined
//     (vacuous, not established: a branch never tried could go either
//     way); partial stands whatever the uncovered branches would add.
//  7. Per leaf: for each branch instance (not the other shapes, so that
//     the rate keeps its meaning) and each non-null leaf, CorruptLeaf and
//     validate (with the step 5 rule); Leaves, LeavesRejected and LeafRate
//     report how much of the payload the schema actually checks. This stage
//     has a work budget (leafWorkBudget instance nodes validated); past it,
//     LeavesCapped is set and the figures are an even sample.
//  8. FormatDependent: enforceable, but a copy compiled without format
//     assertion accepts a corrupted payload.
//
// Assess is AssessContext without a context, with the default Budget.
func Assess(outputSchema json.RawMessage) Assessment {
	return AssessContext(context.Background(), outputSchema, Budget{})
}

// AssessContext is Assess under ctx and b: steps 3 to 8 share one Budget
// (see Budget). When it runs out or ctx ends before the verdict, the
// assessment is Undetermined (vacuous, not established) with StoppedBy and
// a reason saying so; when that happens during the per-leaf stage, the
// verdict stands and the per-leaf figures are a sample (LeavesCapped).
func AssessContext(ctx context.Context, outputSchema json.RawMessage, b Budget) Assessment {
	return assess(outputSchema, newMeter(ctx, b))
}

// assess is AssessContext with its work charged to m.
func assess(outputSchema json.RawMessage, m *meter) Assessment {
	raw := bytes.TrimSpace(outputSchema)
	if len(raw) == 0 || string(raw) == "null" {
		return Assessment{Contract: ContractNone, Reason: "no outputSchema declared"}
	}
	s, err := CompileOpts(raw, Options{AssertFormat: true, meter: m})
	if err != nil {
		return Assessment{Contract: ContractInvalid, Reason: "outputSchema does not compile", CompileError: err.Error()}
	}
	a := Assessment{UnassertedPatterns: len(s.unsupported)}
	if root, ok := s.doc.(map[string]any); ok {
		a.RootObject = root["type"] == "object"
		for _, m := range wrapMarkers {
			if root[m] == true {
				a.Wrapped = true
			}
		}
	}
	judge := s
	var relaxed *Schema
	if rdoc, changed := relaxOneOf(s.doc); changed {
		if r, err := compileDoc(rdoc, s.opts); err == nil {
			relaxed, judge = r, r
		}
	}
	noFormat := func() *Schema {
		o := s.opts
		o.AssertFormat = false
		doc := s.doc
		if relaxed != nil {
			doc = relaxed.doc
		}
		nf, err := compileDoc(doc, o)
		if err != nil {
			return nil
		}
		return nf
	}

	res := synthesize(s, relaxed, SynthOptions{MaxInstances: assessMaxInstances})
	a.Instances = len(res.instances)
	for _, n := range res.points {
		a.Branches += n
	}
	unc := res.uncovered()
	a.Uncovered = len(unc)

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
	stopped := func(stage string) Assessment {
		err := m.stopped()
		a.Undetermined, a.StoppedBy = true, stopCause(err)
		a.Instances, a.Leaves, a.LeavesRejected = 0, 0, 0
		a.Shapes, a.ShapesRejected, a.ShapesCapped, a.Unrejected = 0, 0, false, ""
		if a.StoppedBy == StoppedBudget {
			return finish(ContractVacuous, fmt.Sprintf("synthesis budget exceeded %s (%s); enforcement not established", stage, budgetPart(err)))
		}
		return finish(ContractVacuous, fmt.Sprintf("stopped %s (%s); enforcement not established", stage, a.StoppedBy))
	}
	if res.stop != nil {
		return stopped("while synthesizing instances")
	}
	if a.Instances == 0 {
		a.Undetermined = true
		return finish(ContractVacuous, "no valid instance could be synthesized ("+res.firstNote()+"); enforcement not established")
	}

	shapes, shapesCapped, stop := sampleShapes(s, res, SynthOptions{MaxInstances: assessMaxInstances})
	if stop != nil {
		return stopped("while sampling shapes")
	}
	a.Shapes, a.ShapesCapped = len(shapes), shapesCapped
	corruptible := 0
	firstAccepted := ""
	var corrupted []any
	for _, sh := range shapes {
		c := Corrupt(sh.value)
		if bytes.Equal(jsonvalue.Canonical(c), jsonvalue.Canonical(sh.value)) {
			// Its own corruption, and valid: not rejected.
			if firstAccepted == "" {
				firstAccepted = sh.label + " holding nothing to corrupt"
			}
			continue
		}
		corruptible++
		corrupted = append(corrupted, c)
		accepted := judge.Validate(c) == nil
		if m.stopped() != nil {
			return stopped("while validating corrupted payloads")
		}
		if !accepted {
			a.ShapesRejected++
		} else if firstAccepted == "" {
			firstAccepted = sh.label
		}
	}
	all := a.ShapesRejected == a.Shapes
	a.Unrejected = firstAccepted
	// Format dependence only matters for an enforceable verdict; it is
	// decided before the per-leaf stage, which may spend the rest of the
	// budget.
	if all && len(unc) == 0 {
		if nf := noFormat(); nf != nil {
			for _, c := range corrupted {
				accepts := nf.Validate(c) == nil
				if m.stopped() != nil {
					return stopped("while checking format dependence")
				}
				if accepts {
					a.FormatDependent = true
					break
				}
			}
		}
	}
	a.leafChecks(res.instances, judge, m)
	if a.LeavesCapped {
		why := "work budget"
		if err := m.stopped(); err != nil && stopCause(err) != StoppedBudget {
			why = stopCause(err)
		}
		notes = append(notes, fmt.Sprintf("per-leaf check stopped after %s (%s)", plural(a.Leaves, "single-leaf corruption"), why))
	}
	if res.capped {
		notes = append(notes, fmt.Sprintf("instance cap of %d reached", assessMaxInstances))
	}
	if a.ShapesCapped {
		notes = append(notes, fmt.Sprintf("shape cap of %d reached", MaxShapes))
	}
	of := fmt.Sprintf("%d of %s", a.Shapes-a.ShapesRejected, plural(a.Shapes, "sampled shape"))
	uncovered := func() string {
		return fmt.Sprintf("%s could not be synthesized (first: %s/%d)", plural(len(unc), "branch"), displayPtr(unc[0].Point), unc[0].Index)
	}
	switch {
	case a.ShapesRejected == 0 && len(unc) > 0:
		a.Undetermined = true
		return finish(ContractVacuous, fmt.Sprintf("no sampled shape's corrupted payload is rejected, but %s; enforcement not established", uncovered()))
	case corruptible == 0:
		return finish(ContractVacuous, "no sampled shape holds a value to corrupt (only null, empty objects or empty arrays)")
	case a.ShapesRejected == 0:
		return finish(ContractVacuous, fmt.Sprintf("a corrupted payload of the same shape validates (%s; first: %s)", of, firstAccepted))
	case !all:
		return finish(ContractPartial, fmt.Sprintf("a corrupted payload of the same shape validates for %s (first: %s); the others are rejected", of, firstAccepted))
	case len(unc) > 0:
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

// leafWorkBudget bounds the per-leaf stage: the sum, over the single-leaf
// validations made, of the size (nodes) of the instance validated.
const leafWorkBudget = 150000

// leafChecks corrupts one leaf at a time and validates. Instances are
// visited round-robin (leaf 0 of every instance, then leaf 1…) so that, when
// the work budget (or m) runs out, every branch has been sampled alike.
func (a *Assessment) leafChecks(insts []synthInstance, judge *Schema, m *meter) {
	type item struct {
		value  any
		leaves []string
		size   int
	}
	items := make([]item, len(insts))
	longest := 0
	for i, in := range insts {
		var ls []string
		walkLeaves(in.value, "", 0, func(p string, v any) {
			if v != nil && !bytes.Equal(jsonvalue.Canonical(corruptLeaf(v)), jsonvalue.Canonical(v)) {
				ls = append(ls, p)
			}
		})
		var nodes []string
		collectNodes(in.value, "", 0, &nodes)
		items[i] = item{in.value, ls, len(nodes)}
		longest = max(longest, len(ls))
	}
	work := 0
	for j := range longest {
		for _, it := range items {
			if j >= len(it.leaves) {
				continue
			}
			if work+it.size > leafWorkBudget {
				a.LeavesCapped = true
				return
			}
			work += it.size
			c, ok := CorruptLeaf(it.value, it.leaves[j])
			if !ok {
				continue
			}
			rejected := judge.Validate(c) != nil
			if m.stopped() != nil {
				// Cut short: this validation's answer does not count.
				a.LeavesCapped = true
				return
			}
			a.Leaves++
			if rejected {
				a.LeavesRejected++
			}
		}
	}
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

func displayPtr(p string) string {
	if p == "" {
		return "(root)"
	}
	return p
}
