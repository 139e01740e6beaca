package jsonschema

import (
	"maps"
	"slices"
	"strings"

	"github.com/mcpdrill/mcpdrill/internal/jsonvalue"
)

// Keywords whose value is a subschema, by the shape of the value. The union
// over drafts 4 to 2020-12; "items" and "dependencies" are special-cased
// because their shape varies.
var (
	singleSchemaKeys = []string{"additionalProperties", "additionalItems", "contains", "propertyNames", "not",
		"if", "then", "else", "unevaluatedProperties", "unevaluatedItems", "contentSchema"}
	arraySchemaKeys = []string{"allOf", "anyOf", "oneOf", "prefixItems"}
	mapSchemaKeys   = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)

// forEachSubschema calls fn for every direct subschema of node with its
// schema location (a JSON pointer into the document).
func forEachSubschema(node map[string]any, loc string, fn func(sub any, loc string)) {
	forEachMember(node, loc, func(sub any, loc, _, _ string) { fn(sub, loc) })
}

// forEachMember calls fn for every direct subschema of node with its schema
// location, the keyword it sits under and its member (a property name or
// array index; "" under a single-schema keyword). The order is fixed:
// single-schema keywords, array keywords, map keywords (members sorted),
// items, dependencies.
func forEachMember(node map[string]any, loc string, fn func(sub any, loc, keyword, member string)) {
	for _, k := range singleSchemaKeys {
		if v, ok := node[k]; ok && isSchema(v) {
			fn(v, jsonvalue.PointerAppend(loc, k), k, "")
		}
	}
	for _, k := range arraySchemaKeys {
		if arr, ok := node[k].([]any); ok {
			for i, v := range arr {
				fn(v, jsonvalue.PointerAppend(loc, k)+"/"+itoa(i), k, itoa(i))
			}
		}
	}
	for _, k := range mapSchemaKeys {
		if m, ok := node[k].(map[string]any); ok {
			for _, name := range slices.Sorted(maps.Keys(m)) {
				fn(m[name], jsonvalue.PointerAppend(jsonvalue.PointerAppend(loc, k), name), k, name)
			}
		}
	}
	switch it := node["items"].(type) {
	case []any:
		for i, v := range it {
			fn(v, jsonvalue.PointerAppend(loc, "items")+"/"+itoa(i), "items", itoa(i))
		}
	case map[string]any, bool:
		fn(it, jsonvalue.PointerAppend(loc, "items"), "items", "")
	}
	if deps, ok := node["dependencies"].(map[string]any); ok {
		for _, name := range slices.Sorted(maps.Keys(deps)) {
			if isSchema(deps[name]) {
				fn(deps[name], jsonvalue.PointerAppend(jsonvalue.PointerAppend(loc, "dependencies"), name), "dependencies", name)
			}
		}
	}
}

func isSchema(v any) bool {
	switch v.(type) {
	case map[string]any, bool:
		return true
	}
	return false
}

// relaxOneOf returns a copy of doc in which every "oneOf" is replaced by an
// equivalent "anyOf" (moved into "allOf" so it can sit beside an existing
// "anyOf"). The copy accepts every value the original accepts, plus values
// that the original refuses only because they match more than one oneOf
// branch. It reports false, returning doc, when doc has no oneOf or when a
// "$ref" points into a oneOf (the rewrite would move its target).
func relaxOneOf(doc any) (any, bool) {
	hasOneOf, refIntoOneOf := false, false
	var scan func(v any, depth int)
	scan = func(v any, depth int) {
		if depth > jsonvalue.MaxJSONDepth {
			return
		}
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		if _, ok := m["oneOf"]; ok {
			hasOneOf = true
		}
		for _, k := range []string{"$ref", "$dynamicRef", "$recursiveRef"} {
			if r, ok := m[k].(string); ok && strings.Contains(r, "oneOf") {
				refIntoOneOf = true
			}
		}
		forEachSubschema(m, "", func(sub any, _ string) { scan(sub, depth+1) })
	}
	scan(doc, 0)
	if !hasOneOf || refIntoOneOf {
		return doc, false
	}
	return relaxNode(doc, 0), true
}

func relaxNode(v any, depth int) any {
	m, ok := v.(map[string]any)
	if !ok || depth > jsonvalue.MaxJSONDepth {
		return v
	}
	out := make(map[string]any, len(m)+1)
	for k, e := range m {
		out[k] = e
	}
	for _, k := range singleSchemaKeys {
		if e, ok := m[k]; ok && isSchema(e) {
			out[k] = relaxNode(e, depth+1)
		}
	}
	for _, k := range arraySchemaKeys {
		if arr, ok := m[k].([]any); ok {
			na := make([]any, len(arr))
			for i, e := range arr {
				na[i] = relaxNode(e, depth+1)
			}
			out[k] = na
		}
	}
	for _, k := range mapSchemaKeys {
		if mm, ok := m[k].(map[string]any); ok {
			nm := make(map[string]any, len(mm))
			for name, e := range mm {
				nm[name] = relaxNode(e, depth+1)
			}
			out[k] = nm
		}
	}
	switch it := m["items"].(type) {
	case []any:
		na := make([]any, len(it))
		for i, e := range it {
			na[i] = relaxNode(e, depth+1)
		}
		out["items"] = na
	case map[string]any:
		out["items"] = relaxNode(it, depth+1)
	}
	if deps, ok := m["dependencies"].(map[string]any); ok {
		nd := make(map[string]any, len(deps))
		for name, e := range deps {
			if isSchema(e) {
				nd[name] = relaxNode(e, depth+1)
			} else {
				nd[name] = e
			}
		}
		out["dependencies"] = nd
	}
	if one, ok := out["oneOf"].([]any); ok {
		delete(out, "oneOf")
		var all []any
		if a, ok := out["allOf"].([]any); ok {
			all = append(all, a...)
		}
		out["allOf"] = append(all, map[string]any{"anyOf": one})
	}
	return out
}
