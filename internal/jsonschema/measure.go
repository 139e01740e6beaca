package jsonschema

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/mcpdrill/mcpdrill/internal/jsonvalue"
)

// MaxInstances caps the branch instances Measure synthesizes (a oneOf with
// many variants needs one each).
const MaxInstances = 64

// wrapMarkers are root keywords with which SDKs flag an output schema they
// generated to wrap a non-object return value.
var wrapMarkers = []string{"x-fastmcp-wrap-result"}

// Measurement is what the enforceability procedure observed for one
// outputSchema: the figures an output-contract verdict is graded from
// (package scan grades them). No field ever holds a value from the schema's
// instances; the strings name schema locations and keywords only.
//
// Procedure:
//
//  1. Absent, empty or JSON null: not Declared.
//  2. Compile with "format" asserted (Compile). Failure: CompileError; this includes remote "$ref"s (never fetched: a client
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
//  6. Count the shapes whose corrupted payload is rejected (step 5); the
//     verdict over them is scan's (scan.Assess).
//  7. Per leaf: for each branch instance (not the other shapes, so that
//     the rate keeps its meaning) and each non-null leaf, CorruptLeaf and
//     validate (with the step 5 rule); Leaves and LeavesRejected report
//     how much of the payload the schema actually checks. This stage
//     has a work budget (leafWorkBudget instance nodes validated); past it,
//     LeavesCapped is set and the figures are an even sample.
//  8. FormatDependent: every shape's corrupted payload is rejected, but a
//     copy compiled without format assertion accepts one.
type Measurement struct {
	// Declared is false for an absent, empty or null outputSchema; nothing
	// else is set then.
	Declared bool
	// CompileError is set when the schema does not compile; nothing else
	// but Declared is set then.
	CompileError string
	// RootObject: the root schema literally declares "type": "object".
	// Wrapped: the root carries a wrap marker ("x-fastmcp-wrap-result").
	RootObject, Wrapped bool
	// UnassertedPatterns counts patterns with ECMA-only syntax that could
	// not be checked (treated as matching everything).
	UnassertedPatterns int
	// Instances is the number of branch instances synthesized (at most
	// MaxInstances; InstancesCapped when the cap cut them); Branches counts
	// the alternatives of every choice point, Uncovered those no instance
	// could exercise, FirstUncovered the first of them ("/oneOf/1").
	Instances       int
	InstancesCapped bool
	Branches        int
	Uncovered       int
	FirstUncovered  string
	// SynthesisNote is the first reason an instance could not be built,
	// when none could.
	SynthesisNote string
	// Shapes are the distinct shapes sampled (ShapesCapped: MaxShapes cut
	// them); Corruptible those holding a value to corrupt; ShapesRejected
	// those whose corrupted payload the schema rejects (step 5's rule).
	// Unrejected labels the first shape whose corrupted payload validated
	// (or that held nothing to corrupt).
	Shapes, Corruptible, ShapesRejected int
	ShapesCapped                        bool
	Unrejected                          string
	// FormatDependent: every corrupted shape is rejected, but only because
	// "format" is asserted (decided only when every shape is rejected and
	// no branch is uncovered).
	FormatDependent bool
	// Leaves and LeavesRejected are the single-leaf corruptions tried and
	// rejected; LeavesCapped says the stage stopped early (its work budget,
	// or the Budget or context: LeavesStoppedBy).
	Leaves, LeavesRejected int
	LeavesCapped           bool
	LeavesStoppedBy        string
	// StoppedBy is set when the work stopped before the figures were
	// complete (StoppedBudget, StoppedDeadline, StoppedCanceled), with the
	// stage ("while sampling shapes") and, for the budget, the part
	// exhausted ("work", "generated data"). Only the compile-time fields
	// are kept then.
	StoppedBy, StoppedStage, StoppedBudgetPart string
}

// Measure runs the procedure on outputSchema with the default Budget and
// no deadline.
func Measure(outputSchema json.RawMessage) Measurement {
	return MeasureContext(context.Background(), outputSchema, Budget{})
}

// MeasureContext is Measure under ctx and b: steps 3 to 8 share one Budget
// (see Budget). When it runs out or ctx ends before the figures are
// complete, StoppedBy says so; when that happens during the per-leaf stage,
// the other figures stand and the per-leaf ones are a sample.
func MeasureContext(ctx context.Context, outputSchema json.RawMessage, b Budget) Measurement {
	return measure(outputSchema, newMeter(ctx, b))
}

// measure is MeasureContext with its work charged to m.
func measure(outputSchema json.RawMessage, m *meter) Measurement {
	raw := bytes.TrimSpace(outputSchema)
	if len(raw) == 0 || string(raw) == "null" {
		return Measurement{}
	}
	s, err := CompileOpts(raw, Options{AssertFormat: true, meter: m})
	if err != nil {
		return Measurement{Declared: true, CompileError: err.Error()}
	}
	a := Measurement{Declared: true, UnassertedPatterns: len(s.unsupported)}
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
	stopped := func(stage string) Measurement {
		err := m.stopped()
		out := Measurement{Declared: true, RootObject: a.RootObject, Wrapped: a.Wrapped, UnassertedPatterns: a.UnassertedPatterns,
			Branches: a.Branches, Uncovered: a.Uncovered, FirstUncovered: a.FirstUncovered,
			StoppedBy: stopCause(err), StoppedStage: stage}
		if out.StoppedBy == StoppedBudget {
			out.StoppedBudgetPart = budgetPart(err)
		}
		return out
	}

	res := synthesize(s, relaxed, SynthOptions{MaxInstances: MaxInstances})
	a.Instances, a.InstancesCapped = len(res.instances), res.capped
	for _, n := range res.points {
		a.Branches += n
	}
	if unc := res.uncovered(); len(unc) > 0 {
		a.Uncovered = len(unc)
		a.FirstUncovered = displayPtr(unc[0].Point) + "/" + itoa(unc[0].Index)
	}
	if res.stop != nil {
		return stopped("while synthesizing instances")
	}
	if a.Instances == 0 {
		a.SynthesisNote = res.firstNote()
		return a
	}

	shapes, shapesCapped, stop := sampleShapes(s, res, SynthOptions{MaxInstances: MaxInstances})
	if stop != nil {
		return stopped("while sampling shapes")
	}
	a.Shapes, a.ShapesCapped = len(shapes), shapesCapped
	var corrupted []any
	for _, sh := range shapes {
		c := Corrupt(sh.value)
		if bytes.Equal(jsonvalue.Canonical(c), jsonvalue.Canonical(sh.value)) {
			// Its own corruption, and valid: not rejected.
			if a.Unrejected == "" {
				a.Unrejected = sh.label + " holding nothing to corrupt"
			}
			continue
		}
		a.Corruptible++
		corrupted = append(corrupted, c)
		accepted := judge.Validate(c) == nil
		if m.stopped() != nil {
			return stopped("while validating corrupted payloads")
		}
		if !accepted {
			a.ShapesRejected++
		} else if a.Unrejected == "" {
			a.Unrejected = sh.label
		}
	}
	// Format dependence only matters when every shape is rejected; it is
	// decided before the per-leaf stage, which may spend the rest of the
	// budget.
	if a.ShapesRejected == a.Shapes && a.Uncovered == 0 {
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
		a.LeavesStoppedBy = "work budget"
		if err := m.stopped(); err != nil && stopCause(err) != StoppedBudget {
			a.LeavesStoppedBy = stopCause(err)
		}
	}
	return a
}

// leafWorkBudget bounds the per-leaf stage: the sum, over the single-leaf
// validations made, of the size (nodes) of the instance validated.
const leafWorkBudget = 150000

// leafChecks corrupts one leaf at a time and validates. Instances are
// visited round-robin (leaf 0 of every instance, then leaf 1…) so that, when
// the work budget (or m) runs out, every branch has been sampled alike.
func (a *Measurement) leafChecks(insts []synthInstance, judge *Schema, m *meter) {
	type item struct {
		value  any
		leaves []string
		size   int
	}
	items := make([]item, len(insts))
	longest := 0
	for i, in := range insts {
		var ls []string
		walkLeaves(in.value, func(p string, v any) {
			if v != nil && !bytes.Equal(jsonvalue.Canonical(corruptLeaf(v)), jsonvalue.Canonical(v)) {
				ls = append(ls, p)
			}
		})
		items[i] = item{in.value, ls, len(collectNodes(in.value))}
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

func displayPtr(p string) string {
	if p == "" {
		return "(root)"
	}
	return p
}
