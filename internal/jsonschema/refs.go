package jsonschema

import (
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/mcpdrill/mcpdrill/internal/jsonvalue"
)

// ResolveRef follows a reference within the schema document root: a local
// pointer or anchor ("#/$defs/x", "#name"), a reference against the root's
// $id, or one into an embedded resource identified by its $id. It returns
// the target and its location in root (a JSON pointer, or "#anchor"). The
// one $ref resolver: synthesis follows it and drift expands with it.
func ResolveRef(root any, ref string) (any, string, bool) {
	if strings.HasPrefix(ref, "#") {
		t, ok := Resolve(root, ref)
		return t, refLoc(ref), ok
	}
	base, frag, _ := strings.Cut(ref, "#")
	if rm, ok := root.(map[string]any); ok {
		if id, ok := rm["$id"].(string); ok && strings.TrimSuffix(id, "#") == base {
			t, ok := Resolve(root, "#"+frag)
			return t, refLoc("#" + frag), ok
		}
	}
	// An embedded resource identified by $id.
	if t, tloc, ok := findByID(root, base); ok {
		if frag == "" {
			return t, tloc, true
		}
		if sub, ok := Resolve(t, "#"+frag); ok {
			return sub, tloc + refLoc("#"+frag), true
		}
	}
	return nil, "", false
}

func refLoc(ref string) string {
	frag := strings.TrimPrefix(ref, "#")
	if frag != "" && frag[0] != '/' {
		return "#" + frag // anchor
	}
	if toks, ok := jsonvalue.SplitPointer(frag); ok {
		return ptrOf(toks)
	}
	return frag
}

// findSubschema returns the first subschema of v (depth-first, v itself
// included) for which match holds, with its schema location.
func findSubschema(v any, loc string, depth int, match func(m map[string]any, depth int) bool) (any, string, bool) {
	m, ok := v.(map[string]any)
	if !ok || depth > jsonvalue.MaxJSONDepth {
		return nil, "", false
	}
	if match(m, depth) {
		return m, loc, true
	}
	var (
		found any
		floc  string
		hit   bool
	)
	forEachSubschema(m, loc, func(sub any, sloc string) {
		if !hit {
			found, floc, hit = findSubschema(sub, sloc, depth+1, match)
		}
	})
	return found, floc, hit
}

// findByID finds the embedded resource (below the root) whose $id is id or
// a relative suffix of it.
func findByID(root any, id string) (any, string, bool) {
	return findSubschema(root, "", 0, func(m map[string]any, depth int) bool {
		s, ok := m["$id"].(string)
		return ok && depth > 0 && (s == id || strings.HasSuffix(id, "/"+s))
	})
}

// ResolveDynamicRef follows a $dynamicRef or $recursiveRef: "#" is the
// root, "#name" the subschema declaring $dynamicAnchor name when there is
// one, and anything else as ResolveRef.
func ResolveDynamicRef(root any, ref string) (any, string, bool) {
	if ref == "#" {
		return root, "", true
	}
	if name, ok := strings.CutPrefix(ref, "#"); ok && name != "" && name[0] != '/' {
		if t, tloc, ok := findDynamicAnchor(root, name); ok {
			return t, tloc, true
		}
	}
	return ResolveRef(root, ref)
}

// findDynamicAnchor finds the subschema declaring $dynamicAnchor name.
func findDynamicAnchor(root any, name string) (any, string, bool) {
	return findSubschema(root, "", 0, func(m map[string]any, _ int) bool {
		a, ok := m["$dynamicAnchor"].(string)
		return ok && a == name
	})
}

// Resolve follows a local reference inside a schema document: a JSON
// pointer (bare or as a URI fragment, see jsonvalue.Resolve) or a
// plain-name fragment ("#node"), looked up as a "$anchor" (or a draft-07
// style "$id": "#node") anywhere in root.
func Resolve(root any, ref string) (any, bool) {
	if frag, ok := strings.CutPrefix(ref, "#"); ok && frag != "" && frag[0] != '/' {
		name, err := url.PathUnescape(frag)
		if err != nil {
			return nil, false
		}
		return findAnchor(root, name, 0)
	}
	return jsonvalue.Resolve(root, ref)
}

// findAnchor searches root depth-first (object keys in sorted order) for an
// object whose "$anchor" is name or whose "$id" is "#name".
func findAnchor(root any, name string, depth int) (any, bool) {
	if depth > jsonvalue.MaxJSONDepth {
		return nil, false
	}
	switch t := root.(type) {
	case map[string]any:
		if a, ok := t["$anchor"].(string); ok && a == name {
			return t, true
		}
		if id, ok := t["$id"].(string); ok && id == "#"+name {
			return t, true
		}
		for _, k := range slices.Sorted(maps.Keys(t)) {
			if v, ok := findAnchor(t[k], name, depth+1); ok {
				return v, true
			}
		}
	case []any:
		for _, e := range t {
			if v, ok := findAnchor(e, name, depth+1); ok {
				return v, true
			}
		}
	}
	return nil, false
}
