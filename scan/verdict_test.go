package scan

import (
	"strings"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/jsonschema"
)

// TestGrade: the verdict over a measurement, case by case (the figures are
// jsonschema's; the verdict and its reason are the scan's).
func TestGrade(t *testing.T) {
	tests := []struct {
		name         string
		m            jsonschema.Measurement
		want         Contract
		undetermined bool
		reason       string
	}{
		{"no schema", jsonschema.Measurement{}, ContractNone, false, "no outputSchema declared"},
		{"does not compile", jsonschema.Measurement{Declared: true, CompileError: "x"}, ContractInvalid, false, "does not compile"},
		{"stopped by the budget", jsonschema.Measurement{Declared: true, StoppedBy: jsonschema.StoppedBudget, StoppedStage: "while sampling shapes", StoppedBudgetPart: "work"},
			ContractVacuous, true, "synthesis budget exceeded while sampling shapes (work); enforcement not established"},
		{"stopped by the deadline", jsonschema.Measurement{Declared: true, StoppedBy: jsonschema.StoppedDeadline, StoppedStage: "while synthesizing instances"},
			ContractVacuous, true, "stopped while synthesizing instances (deadline)"},
		{"no instance", jsonschema.Measurement{Declared: true, SynthesisNote: "false schema at \"/p\""}, ContractVacuous, true, "no valid instance could be synthesized"},
		{"every shape rejected", jsonschema.Measurement{Declared: true, Instances: 1, Shapes: 2, Corruptible: 2, ShapesRejected: 2, Leaves: 4, LeavesRejected: 3},
			ContractEnforceable, false, "corrupted payload rejected for all 2 sampled shapes"},
		{"only because of format", jsonschema.Measurement{Declared: true, Instances: 1, Shapes: 1, Corruptible: 1, ShapesRejected: 1, FormatDependent: true},
			ContractEnforceable, false, "(only because format is asserted)"},
		{"some shapes rejected", jsonschema.Measurement{Declared: true, Instances: 1, Shapes: 3, Corruptible: 3, ShapesRejected: 1, Unrejected: "minimal instance", Uncovered: 1, FirstUncovered: "/oneOf/1"},
			ContractPartial, false, "validates for 2 of 3 sampled shapes (first: minimal instance)"},
		{"no shape rejected", jsonschema.Measurement{Declared: true, Instances: 1, Shapes: 1, Corruptible: 1, Unrejected: "branch instance"}, ContractVacuous, false, "validates (1 of 1 sampled shape"},
		{"nothing to corrupt", jsonschema.Measurement{Declared: true, Instances: 1, Shapes: 1}, ContractVacuous, false, "holds a value to corrupt"},
		{"none rejected, a branch uncovered", jsonschema.Measurement{Declared: true, Instances: 1, Shapes: 1, Corruptible: 1, Uncovered: 2, FirstUncovered: "/anyOf/1"},
			ContractVacuous, true, "2 branches could not be synthesized (first: /anyOf/1)"},
		{"all rejected, a branch uncovered", jsonschema.Measurement{Declared: true, Instances: 1, Shapes: 1, Corruptible: 1, ShapesRejected: 1, Uncovered: 1, FirstUncovered: "(root)/oneOf/0"},
			ContractVacuous, true, "rejected for all 1 sampled shape, but 1 branch could not be synthesized"},
		{"notes", jsonschema.Measurement{Declared: true, Instances: 1, Shapes: 1, Corruptible: 1, ShapesRejected: 1, Wrapped: true, UnassertedPatterns: 2, LeavesCapped: true, Leaves: 7, LeavesStoppedBy: "work budget", InstancesCapped: true, ShapesCapped: true},
			ContractEnforceable, false, "; 2 pattern(s) use ECMA-only syntax and are not checked; the SDK wrapped a non-object result (x-fastmcp-wrap-result); per-leaf check stopped after 7 single-leaf corruptions (work budget); instance cap of 64 reached; shape cap of 128 reached"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := Grade(tc.m)
			if a.Contract != tc.want || a.Undetermined != tc.undetermined || !strings.Contains(a.Reason, tc.reason) {
				t.Errorf("got %s undetermined=%v %q", a.Contract, a.Undetermined, a.Reason)
			}
			if tc.m.StoppedBy != "" && a.StoppedBy != tc.m.StoppedBy {
				t.Errorf("stopped_by %q", a.StoppedBy)
			}
		})
	}
}
