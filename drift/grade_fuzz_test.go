package drift

import (
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/jsonschema"
	"github.com/mcpdrill/mcpdrill/internal/mcp"
	"github.com/mcpdrill/mcpdrill/internal/mcptest/schemapair"
)

// FuzzGrading is the property the grading promises: a side of a tool is
// never all compatible when an instance exists that breaks it (input: one
// a client following the old schema sends and the new one rejects; output:
// one the new schema admits and the old one rejects). The instance is
// searched for by brute force over synthesized instances, independently of
// the grading's own targeted search. Every change carries a catalogue rule,
// and a breaking change carries its witness.
func FuzzGrading(f *testing.F) {
	for _, seed := range [][]byte{{}, {1, 2, 3, 4, 5}, {0, 5, 0, 1, 5}, {2, 10, 1, 6, 3}, {7, 7, 7, 1, 9, 9}, {3, 0, 1, 2, 15, 4},
		{0, 0, 0, 0, 6, 10}, {1, 1, 2, 0, 11}, {2, 3, 1, 0, 3}} {
		f.Add(seed)
	}
	cat := Catalogue()
	f.Fuzz(func(t *testing.T, data []byte) {
		old, new := schemapair.Pair(data)
		ot := valueTool(t, map[string]any{"name": "t", "inputSchema": old, "outputSchema": old})
		nt := valueTool(t, map[string]any{"name": "t", "inputSchema": new, "outputSchema": new})
		cs := Diff([]mcp.Tool{ot}, []mcp.Tool{nt})
		open := map[Direction]bool{}
		for _, c := range cs {
			if _, ok := cat.Lookup(c.RuleID); !ok {
				t.Fatalf("change graded by %q, not in the catalogue: %+v", c.RuleID, c)
			}
			if c.Verdict == verdictBreaking && c.Witness == "" {
				t.Fatalf("breaking change without a witness: %+v", c)
			}
			if c.Verdict == verdictBreaking || c.Verdict == VerdictUndetermined || c.Kind == kindSchemaTooDeep {
				open[c.Direction] = true
			}
		}
		for _, sd := range []struct {
			dir  Direction
			s, t any
		}{{directionInput, old, new}, {directionOutput, new, old}} {
			if open[sd.dir] {
				continue
			}
			if w, found := schemapair.Witness(jsonschema.CloseUndeclared(sd.s), sd.t); found {
				t.Fatalf("%s side graded compatible, but %s breaks it\nold %s\nnew %s\nchanges %+v", sd.dir, canonical(w), canonical(old), canonical(new), cs)
			}
		}
	})
}
