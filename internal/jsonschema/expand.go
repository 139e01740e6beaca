package jsonschema

import (
	"slices"
	"strings"
)

// refBudget bounds how many schema objects ref expansion may build, so a
// schema whose definitions reference each other many times cannot blow up.
const refBudget = 20000

// expandDepth bounds how deep expansion recurses; past it a schema is kept
// as written.
const expandDepth = 128

// ExpandRefs returns a copy of a schema with every local $ref ("#…", a
// pointer or an anchor in the schema itself) replaced by what it points to,
// for comparing two schemas by what they say rather than how they are
// factored. A $ref
// with sibling keywords is merged into its target, siblings winning. A ref
// that is cyclic (already being expanded on the current path), unresolved,
// non-local or past the budget is left in place and compared as written.
func ExpandRefs(root any) any {
	e := &expander{root: root, budget: refBudget}
	return e.expand(root, nil, 0)
}

type expander struct {
	root   any
	budget int
}

func (e *expander) expand(v any, stack []string, depth int) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, el := range x {
			out[i] = e.expand(el, stack, depth+1)
		}
		return out
	case map[string]any:
		e.budget--
		if depth > expandDepth {
			return x
		}
		ref, isRef := x["$ref"].(string)
		if isRef && e.budget > 0 && strings.HasPrefix(ref, "#") && !slices.Contains(stack, ref) {
			if target, ok := e.resolve(ref); ok {
				expanded := e.expand(target, append(stack, ref), depth+1)
				tm, isMap := expanded.(map[string]any)
				if !isMap {
					if b, isBool := expanded.(bool); isBool {
						tm = map[string]any{} // true
						if !b {
							tm["not"] = map[string]any{}
						}
					}
				}
				if tm != nil {
					out := make(map[string]any, len(tm)+len(x))
					for k, val := range tm {
						out[k] = val
					}
					for k, val := range x {
						if k != "$ref" {
							out[k] = e.expand(val, stack, depth+1)
						}
					}
					return out
				}
			}
		}
		out := make(map[string]any, len(x))
		for k, val := range x {
			switch k {
			case "enum", "const", "default", "examples", "$defs", "definitions":
				out[k] = val // values, or definitions only reached through $ref
			case "properties", "patternProperties", "dependentSchemas":
				members, ok := val.(map[string]any)
				if !ok {
					out[k] = val
					continue
				}
				mm := make(map[string]any, len(members))
				for name, sub := range members {
					mm[name] = e.expand(sub, stack, depth+1)
				}
				out[k] = mm
			default:
				out[k] = e.expand(val, stack, depth+1)
			}
		}
		return out
	}
	return v
}

func (e *expander) resolve(ref string) (any, bool) {
	t, _, ok := ResolveRef(e.root, ref)
	return t, ok
}
