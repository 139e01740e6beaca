// Package schemapair builds pairs of JSON Schemas, an old one and a new one
// a few edits apart, from fuzz bytes, and searches by brute force for an
// instance one admits and the other rejects: the property tests of the
// inclusion procedure (internal/jsonschema.Includes) and of drift's change
// grading use it. Test-only.
package schemapair

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/mcpdrill/mcpdrill/internal/jsonschema"
	"github.com/mcpdrill/mcpdrill/internal/jsonvalue"
)

// reader hands out small choices from fuzz bytes (zeros once they run out).
type reader struct {
	b []byte
	i int
}

func (r *reader) pick(n int) int {
	if n <= 1 {
		return 0
	}
	if r.i >= len(r.b) {
		return 0
	}
	v := int(r.b[r.i])
	r.i++
	return v % n
}

func num(v int) json.Number { return json.Number(fmt.Sprint(v)) }

// leafSchemas are the member schemas a base is made of.
func leafSchema(r *reader) map[string]any {
	switch r.pick(12) {
	case 0:
		return map[string]any{"type": "string", "maxLength": num(3 + r.pick(4))}
	case 1:
		return map[string]any{"type": "integer", "minimum": num(r.pick(3)), "maximum": num(5 + r.pick(6))}
	case 2:
		return map[string]any{"type": "number"}
	case 3:
		return map[string]any{"enum": []any{"a", "b", "c"}}
	case 4:
		return map[string]any{"type": "boolean"}
	case 5:
		return map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "maxItems": num(2 + r.pick(3))}
	case 6:
		return map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"type": "integer"}}, "required": []any{"x"}, "additionalProperties": false}
	case 7:
		return map[string]any{"type": "string", "pattern": "^[a-c]+$"}
	case 8:
		return map[string]any{"type": []any{"string", "null"}}
	case 9:
		return map[string]any{"anyOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "integer"}}}
	case 10:
		return map[string]any{"oneOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "integer", "minimum": num(5)}}}
	}
	return map[string]any{"type": "string", "format": "date"}
}

var names = []string{"a", "b", "c", "d"}

// Pair builds an old schema (an object of one to three members) and a new
// one, one to three edits away, from data. Both are decoded documents
// (json.Number numbers).
func Pair(data []byte) (old, new any) {
	r := &reader{b: data}
	props := map[string]any{}
	var required []any
	for i := range 1 + r.pick(3) {
		props[names[i]] = leafSchema(r)
		if r.pick(2) == 0 {
			required = append(required, names[i])
		}
	}
	root := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		root["required"] = required
	}
	switch r.pick(3) {
	case 1:
		root["additionalProperties"] = false
	case 2:
		root["additionalProperties"] = true
	}
	o := clone(root)
	n := clone(root)
	for range 1 + r.pick(3) {
		mutate(r, n.(map[string]any))
	}
	return o, n
}

func clone(v any) any {
	var out any
	b := jsonvalue.Canonical(v)
	out, _ = jsonvalue.DecodeJSON(b)
	return out
}

// mutate applies one edit to the root or one of its members.
func mutate(r *reader, root map[string]any) {
	props, _ := root["properties"].(map[string]any)
	keys := slices.Sorted(maps.Keys(props))
	if len(keys) == 0 {
		props = map[string]any{"a": map[string]any{"type": "string"}}
		root["properties"] = props
		keys = []string{"a"}
	}
	name := keys[r.pick(len(keys))]
	m, _ := props[name].(map[string]any)
	if m == nil {
		m = map[string]any{}
		props[name] = m
	}
	types := []any{"string", "integer", "number", "boolean", []any{"string", "null"}, []any{"integer", "string"}}
	switch r.pick(16) {
	case 0: // type set
		m["type"] = types[r.pick(len(types))]
	case 1: // a bound moves, appears or goes
		kw := []string{"minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems", "exclusiveMinimum"}[r.pick(7)]
		if r.pick(3) == 0 {
			delete(m, kw)
		} else {
			m[kw] = num(r.pick(12))
		}
	case 2: // enum value added or removed, or enum appears
		e, _ := m["enum"].([]any)
		switch {
		case len(e) > 0 && r.pick(2) == 0:
			m["enum"] = e[:len(e)-1]
		default:
			m["enum"] = append(slices.Clone(e), []any{"d", "a", num(1), nil}[r.pick(4)])
		}
	case 3: // required-ness
		req, _ := root["required"].([]any)
		if i := slices.Index(req, any(name)); i >= 0 {
			root["required"] = slices.Delete(slices.Clone(req), i, i+1)
		} else {
			root["required"] = append(slices.Clone(req), name)
		}
	case 4: // the object opens or closes
		switch r.pick(4) {
		case 0:
			delete(root, "additionalProperties")
		case 1:
			root["additionalProperties"] = false
		case 2:
			root["additionalProperties"] = true
		default:
			root["additionalProperties"] = map[string]any{"type": "string"}
		}
	case 5: // the old member kept as an anyOf branch
		props[name] = map[string]any{"anyOf": []any{clone(m), leafSchema(r)}}
	case 6: // a oneOf whose branches may overlap
		props[name] = map[string]any{"oneOf": []any{clone(m), leafSchema(r)}}
	case 7:
		m["pattern"] = []string{"^[a-z]+$", "^[a-c]+$", "^a", "^[0-9]*$"}[r.pick(4)]
	case 8:
		if _, ok := m["format"]; ok {
			delete(m, "format")
		} else {
			m["format"] = []string{"date", "uri", "email"}[r.pick(3)]
		}
	case 9: // a member added
		add := names[r.pick(len(names))]
		if _, ok := props[add]; !ok {
			props[add] = leafSchema(r)
			if r.pick(2) == 0 {
				req, _ := root["required"].([]any)
				root["required"] = append(slices.Clone(req), add)
			}
		}
	case 10: // a member removed
		delete(props, name)
		if req, ok := root["required"].([]any); ok && r.pick(2) == 0 {
			if i := slices.Index(req, any(name)); i >= 0 {
				root["required"] = slices.Delete(slices.Clone(req), i, i+1)
			}
		}
	case 11: // a member renamed
		to := names[r.pick(len(names))]
		if _, ok := props[to]; !ok {
			props[to] = m
			delete(props, name)
		}
	case 12:
		m["items"] = leafSchema(r)
	case 13:
		m["const"] = []any{"a", num(1), true}[r.pick(3)]
	case 14:
		m["not"] = map[string]any{"const": []any{"a", num(1), ""}[r.pick(3)]}
	default: // the member's schema replaced
		props[name] = leafSchema(r)
	}
}

// probes are the values the brute-force search puts at every leaf.
func probes() []any {
	out := []any{nil, true, false, "", "a", "abc", "abcdef", "d", "1", "zz", "2020-01-01", "x@y.z", "http://a.b/",
		[]any{}, []any{"a"}, []any{"a", "a"}, []any{"a", "b", "c", "d", "e"}, map[string]any{}, map[string]any{"x": num(1)}, json.Number("0.5")}
	for _, n := range []int{-1, 0, 1, 2, 3, 4, 5, 6, 7, 10, 11, 12, 100} {
		out = append(out, num(n))
	}
	return out
}

// Witness searches for an instance of s that t rejects, "format" read the
// same way on both sides (asserted on both, or on neither): instances
// synthesized from s, each with every leaf and every member replaced by
// each probe value in turn, members removed and members added. It returns
// the first found.
func Witness(s, t any) (any, bool) {
	var cs [2][2]*jsonschema.Schema
	for i, v := range []any{s, t} {
		for j, assert := range []bool{false, true} {
			c, err := jsonschema.CompileOpts(jsonvalue.Canonical(v), jsonschema.Options{AssertFormat: assert})
			if err != nil {
				return nil, false
			}
			cs[i][j] = c
		}
	}
	try := func(x any) bool {
		for j := range 2 {
			if cs[0][j].Validate(x) == nil && cs[1][j].Validate(x) != nil {
				return true
			}
		}
		return false
	}
	var bases []any
	seen := map[string]bool{}
	for seed := range uint64(3) {
		insts, _ := jsonschema.Synthesize(jsonvalue.Canonical(s), jsonschema.SynthOptions{Seed: seed, MaxInstances: 16})
		for _, in := range append(insts, map[string]any{}) {
			if k := string(jsonvalue.Canonical(in)); !seen[k] && len(bases) < maxBases {
				seen[k] = true
				bases = append(bases, in)
			}
		}
	}
	for _, b := range bases {
		if try(b) {
			return b, true
		}
		for _, x := range variants(b) {
			k := string(jsonvalue.Canonical(x))
			if seen[k] {
				continue
			}
			seen[k] = true
			if try(x) {
				return x, true
			}
		}
	}
	return nil, false
}

// maxBases bounds the distinct synthesized instances a search starts from.
const maxBases = 12

// variants are b with one leaf or member changed: every leaf replaced by
// every probe, every member removed, a member of every probe added under
// every name, and every array grown by every probe.
func variants(b any) []any {
	var out []any
	for _, p := range jsonschema.Leaves(b) {
		for _, v := range probes() {
			if x, ok := setAt(b, p, v); ok {
				out = append(out, x)
			}
		}
	}
	if obj, ok := b.(map[string]any); ok {
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			cut := maps.Clone(obj)
			delete(cut, k)
			out = append(out, cut)
			for _, v := range probes() {
				with := maps.Clone(obj)
				with[k] = v
				out = append(out, with)
				if arr, ok := obj[k].([]any); ok {
					grown := maps.Clone(obj)
					grown[k] = append(slices.Clone(arr), v)
					out = append(out, grown)
				}
			}
		}
		for _, k := range append(slices.Clone(names), "x", "zz") {
			for _, v := range probes() {
				with := maps.Clone(obj)
				with[k] = v
				out = append(out, with)
			}
		}
	}
	return out
}

// setAt returns a copy of v with the value at pointer p replaced by x.
func setAt(v any, p string, x any) (any, bool) {
	return jsonvalue.Replace(v, p, func(any) (any, bool) { return x, true })
}
