package jsonschema

import (
	"slices"
	"strings"

	"github.com/mcpdrill/mcpdrill/internal/jsonvalue"
)

// Node is one subschema met by Walk or WalkResolved.
type Node struct {
	// Value is the subschema: a map[string]any, or a bool.
	Value any
	// Pointer is its location in the document ("" for the root).
	Pointer string
	// Keyword is the keyword it sits under in its parent ("" for the
	// root; "properties", "items", "anyOf", "$defs"…, or "$ref" when
	// WalkResolved reached it through a reference), and Member its
	// property name or array index under that keyword ("" under a
	// single-schema keyword).
	Keyword, Member string
	// Depth is the number of subschema steps from the root (references
	// followed by WalkResolved count as steps).
	Depth int
	// Path holds, for every step from the root, the keyword taken; it is
	// shared with the walk and must not be kept or modified.
	Path []string
}

// Object is the node's value as a schema object (nil for a boolean schema).
func (n Node) Object() map[string]any {
	m, _ := n.Value.(map[string]any)
	return m
}

// Walk calls fn for doc and for each of its subschemas, depth-first (doc
// first; the keywords of a node in a fixed order, map members sorted), with
// their locations in doc. It does not follow references: a subschema under
// "$defs" is visited where it is written. fn returning false skips the
// node's subschemas. Nesting beyond jsonvalue.MaxJSONDepth is not visited.
func Walk(doc any, fn func(Node) bool) {
	var path []string
	var walk func(v any, loc, kw, member string, depth int)
	walk = func(v any, loc, kw, member string, depth int) {
		if depth > jsonvalue.MaxJSONDepth {
			return
		}
		if !fn(Node{Value: v, Pointer: loc, Keyword: kw, Member: member, Depth: depth, Path: path}) {
			return
		}
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		forEachMember(m, loc, func(sub any, sloc, k, name string) {
			path = append(path, k)
			walk(sub, sloc, k, name, depth+1)
			path = path[:len(path)-1]
		})
	}
	walk(doc, "", "", "", 0)
}

// Ref is what WalkResolved found at a reference keyword.
type Ref struct {
	// Pointer is the location of the schema holding the reference, and
	// Keyword the reference keyword ("$ref", "$dynamicRef" or
	// "$recursiveRef"); Target is what it names.
	Pointer, Keyword, Target string
	// Cycle is set when the reference leads back onto the path that
	// reached it (a recursive schema); it is not followed again.
	Cycle bool
	// Unresolved is set when ResolveRef (or ResolveDynamicRef) could not
	// follow it: a reference that leaves the document, or a dangling one.
	Unresolved bool
}

// WalkResolved calls node for doc and for the subschemas a validator can
// reach from it, following references with the one resolver (ResolveRef,
// ResolveDynamicRef) instead of entering "$defs" and "definitions", and
// ref for every reference met. A reference whose target is already on the
// current path is reported as a cycle and not followed. The walk visits at
// most budget nodes (a schema that references its definitions many times
// over can be exponentially large once expanded) and reports whether it
// visited every reachable node. node returning false skips a node's
// subschemas.
func WalkResolved(doc any, budget int, node func(Node) bool, ref func(Ref)) (complete bool) {
	complete = true
	var path []string
	var onPath []string // locations of the nodes on the current path
	var walk func(v any, loc, kw, member string, depth int)
	walk = func(v any, loc, kw, member string, depth int) {
		if depth > jsonvalue.MaxJSONDepth || !complete {
			return
		}
		if budget--; budget < 0 {
			complete = false
			return
		}
		if !node(Node{Value: v, Pointer: loc, Keyword: kw, Member: member, Depth: depth, Path: path}) {
			return
		}
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		onPath = append(onPath, loc)
		defer func() { onPath = onPath[:len(onPath)-1] }()
		forEachMember(m, loc, func(sub any, sloc, k, name string) {
			if k == "$defs" || k == "definitions" {
				return
			}
			path = append(path, k)
			walk(sub, sloc, k, name, depth+1)
			path = path[:len(path)-1]
		})
		for _, rk := range []string{"$ref", "$dynamicRef", "$recursiveRef"} {
			target, ok := m[rk].(string)
			if !ok {
				continue
			}
			var (
				t       any
				tloc    string
				resolve bool
			)
			if rk == "$ref" {
				t, tloc, resolve = ResolveRef(doc, target)
			} else {
				t, tloc, resolve = ResolveDynamicRef(doc, target)
			}
			r := Ref{Pointer: loc, Keyword: rk, Target: target, Unresolved: !resolve}
			if resolve && slices.Contains(onPath, tloc) {
				r.Cycle = true
			}
			if ref != nil {
				ref(r)
			}
			if !resolve || r.Cycle {
				continue
			}
			// An anchor target ("#name") has no pointer of its own: it
			// stays on the path under its anchor while it is expanded.
			anchor := strings.HasPrefix(tloc, "#")
			if anchor {
				onPath = append(onPath, tloc)
			}
			path = append(path, rk)
			walk(t, tloc, rk, "", depth+1)
			path = path[:len(path)-1]
			if anchor {
				onPath = onPath[:len(onPath)-1]
			}
		}
	}
	walk(doc, "", "", "", 0)
	return complete
}
