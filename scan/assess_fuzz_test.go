package scan

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/jsonschema"
)

// FuzzAssess: no panic, consistent figures and, while fuzzing, bounded
// time. Assess's work is bounded by its budget, which counts steps, not
// time; an input that takes seconds finds work the budget does not count.
// The seed corpus, which `go test` runs, asserts no time.
func FuzzAssess(f *testing.F) {
	fuzzing := flag.Lookup("test.fuzz") != nil && flag.Lookup("test.fuzz").Value.String() != ""
	for _, p := range assessInputs(f) {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{`{}`, `true`, `false`, `{"type":"objekt"}`, `{"oneOf":[{"type":"string"},{"type":"string","maxLength":5}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		start := time.Now()
		a := Assess(raw)
		if d := time.Since(start); fuzzing && d > 10*time.Second {
			t.Fatalf("Assess took %v", d)
		}
		if a.LeavesRejected > a.Leaves || a.LeavesRejected < 0 {
			t.Fatalf("leaves %d/%d", a.LeavesRejected, a.Leaves)
		}
		switch a.Contract {
		case ContractNone, ContractVacuous, ContractPartial, ContractEnforceable:
			if a.CompileError != "" {
				t.Fatal("CompileError on a compiled schema")
			}
		case ContractInvalid:
			if a.CompileError == "" {
				t.Fatal("invalid without CompileError")
			}
		default:
			t.Fatalf("unknown contract %q", a.Contract)
		}
		if a.Contract == ContractEnforceable && (a.Instances == 0 || a.Uncovered > 0 || a.ShapesRejected != a.Shapes) {
			t.Fatalf("enforceable without evidence: %+v", a)
		}
		if a.Contract == ContractPartial && (a.ShapesRejected == 0 || a.ShapesRejected >= a.Shapes || a.Undetermined) {
			t.Fatalf("partial without a rejected and an accepted shape: %+v", a)
		}
		if a.Shapes < a.Instances || a.Shapes > jsonschema.MaxShapes || a.ShapesRejected > a.Shapes {
			t.Fatalf("shapes %d/%d, instances %d", a.ShapesRejected, a.Shapes, a.Instances)
		}
	})
}

// BenchmarkAssess assesses the realistic golden schemas.
func BenchmarkAssess(b *testing.B) {
	files, _ := filepath.Glob(filepath.Join("testdata", "assess", "*.json"))
	var raws [][]byte
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		raws = append(raws, raw)
	}
	for b.Loop() {
		for _, raw := range raws {
			Assess(raw)
		}
	}
}
