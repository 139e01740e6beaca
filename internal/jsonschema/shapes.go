package jsonschema

import (
	"strings"

	"github.com/mcpdrill/mcpdrill/internal/jsonvalue"
)

// Shape sampling: the shapes a server can really send, beyond the one
// full instance per branch that synthesize produces. Measure corrupts every
// sampled shape; a contract is enforceable only when it rejects the
// corruption of all of them.

// MaxShapes caps the shapes sampled per schema: the branch instances come
// first (at most MaxInstances of them), then their variants, in the
// order of shapeVariants, until the cap.
const MaxShapes = 128

// shapeVariant turns a branch instance into another shape a server can
// send: minimal leaves every optional property out and keeps every array
// at its minItems (the "minimal instance"); nulls sets every explicitly
// nullable value below the root to null, all together (a nullable value
// null on its own is already a branch instance: a type list or an
// anyOf/oneOf with a null branch is a choice point); emptyArrays keeps
// every array at its minItems with optional properties present.
type shapeVariant struct {
	minimal     bool
	nulls       bool
	emptyArrays bool
}

// shapeVariants, barest first, so that when MaxShapes cuts the sample the
// shapes most likely to slip past the schema are the ones kept.
var shapeVariants = []shapeVariant{
	{minimal: true, nulls: true},
	{minimal: true},
	{nulls: true},
	{emptyArrays: true},
}

// shapeAttempts is how many generation attempts (other string lengths,
// enum members) a variant gets before it is given up.
const shapeAttempts = 3

// shape is one sampled instance and how it was obtained.
type shape struct {
	value any
	// label says how the shape differs from the full instance of the
	// default branches (schema locations and keywords only, never a
	// value), for the reason that names the first shape not rejected.
	label string
}

// shapeLabel describes a shape: the branch it was forced to (none for
// the default branches) and what its variant changed.
func shapeLabel(forced map[string]int, g *gen) string {
	var parts []string
	if g != nil {
		if g.dropped {
			parts = append(parts, "optional properties absent")
		}
		if g.shortened {
			parts = append(parts, "arrays empty")
		}
		if g.nulled {
			parts = append(parts, "nullable values null")
		}
	}
	if len(parts) == 0 {
		parts = append(parts, "full instance")
	}
	label := strings.Join(parts, ", ")
	if len(forced) > 0 {
		label += " (" + strings.TrimSuffix(describeChoices(forced), ": ") + ")"
	}
	return label
}

// sampleShapes returns res's branch instances followed by their distinct
// variants (at most MaxShapes in all; capped says a further distinct shape
// was found and left out). A variant keeps the branch choices of the instance it comes
// from (nulls override them where a null branch exists) and is kept only
// if it validates against s; a duplicate of a shape already sampled is
// dropped. The work is charged to s's meter; stop is its error when it
// stopped the sampling.
func sampleShapes(s *Schema, res *synthResult, o SynthOptions) (shapes []shape, capped bool, stop error) {
	o.MaxDepth = orDefault(o.MaxDepth, defaultSynthDepth)
	m := s.opts.meter
	seen := map[string]bool{}
	for _, in := range res.instances {
		seen[string(jsonvalue.Canonical(in.value))] = true
		shapes = append(shapes, shape{in.value, shapeLabel(in.forced, nil)})
	}
	cache := map[string]*matcher{}
	for _, sv := range shapeVariants {
		for _, in := range res.instances {
			for a := range shapeAttempts {
				g := newGen(s, in.choices, a, o, cache)
				g.minimal = sv.minimal
				g.nulls, g.emptyArrays = sv.nulls, sv.emptyArrays
				v, ok := g.run()
				// Validating costs about as much as generating did.
				if !ok || !m.step(int64(synthBudget-g.budget)) {
					if err := m.stopped(); err != nil {
						return shapes, false, err
					}
					continue
				}
				valid := s.Validate(v) == nil
				if err := m.stopped(); err != nil {
					// The validation was cut short: its answer means nothing.
					return shapes, false, err
				}
				if !valid {
					continue
				}
				if key := string(jsonvalue.Canonical(v)); !seen[key] {
					if len(shapes) >= MaxShapes {
						return shapes, true, nil
					}
					seen[key] = true
					shapes = append(shapes, shape{v, shapeLabel(in.forced, g)})
				}
				break
			}
		}
	}
	return shapes, false, nil
}
