package jsonschema_test

import (
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/jsonschema"
	"github.com/mcpdrill/mcpdrill/internal/jsonvalue"
	"github.com/mcpdrill/mcpdrill/internal/mcptest/schemapair"
)

// FuzzIncludes: whenever Includes proves s ⊆ t, no instance of s that a
// brute-force search finds is rejected by t. Checked both ways round, with
// and without the sender's objects closed.
func FuzzIncludes(f *testing.F) {
	for _, seed := range [][]byte{{}, {1, 2, 3, 4, 5}, {0, 5, 0, 1, 5}, {2, 10, 1, 6, 3}, {7, 7, 7, 1, 9, 9}, {3, 0, 1, 2, 15, 4}} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		old, new := schemapair.Pair(data)
		for _, p := range [][2]any{{old, new}, {new, old}, {jsonschema.CloseUndeclared(old), new}, {jsonschema.CloseUndeclared(new), old}} {
			if !jsonschema.Includes(p[0], p[1]) {
				continue
			}
			if w, found := schemapair.Witness(p[0], p[1]); found {
				t.Fatalf("Includes proved\n  s = %s\ninside\n  t = %s\nbut t rejects %s", jsonvalue.Canonical(p[0]), jsonvalue.Canonical(p[1]), jsonvalue.Canonical(w))
			}
		}
	})
}
