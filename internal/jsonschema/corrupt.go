package jsonschema

import (
	"encoding/json"
	"github.com/mcpdrill/mcpdrill/internal/jsonvalue"
	"github.com/mcpdrill/mcpdrill/internal/splitmix"
	"hash/fnv"
	"maps"
	"math"
	"slices"
	"unicode/utf8"
)

// Sentinel is the text that corrupted strings are cut from. It starts and
// ends with U+0000 (NUL), which no sane pattern, format or enum accepts: every
// format the validator knows (date-time, uri, email, uuid, hostname, ipv4…)
// refuses a NUL, and so does any anchored character-class pattern such as
// ^[a-z-]+$. The middle is readable so that a human who sees it in a client
// knows the value was injected by mcpdrill.
const Sentinel = "\x00mcpdrill-corrupt\x00"

// Fixed replacement numbers used by Corrupt. The integer is far below any
// sane lower bound; the number is close to -MaxFloat64 and so below any
// finite minimum a schema is likely to declare.
const (
	CorruptInteger = "-999999999"
	CorruptNumber  = "-1.5e308"
)

var sentinelRunes = []rune(Sentinel)

// CorruptString returns the string Corrupt puts in place of s: the Sentinel
// repeated and cut to the same length as s in Unicode code points (the unit
// JSON Schema's minLength and maxLength count), or one code point (a NUL)
// when s is empty. Keeping the length means a corrupted value is "garbage of
// the right shape": a schema that constrains only length does not catch it.
// A string that already equals its sentinel gets U+FFFD as first code point
// instead, so the result always differs from s.
func CorruptString(s string) string {
	n := utf8.RuneCountInString(s)
	if n == 0 {
		n = 1
	}
	out := make([]rune, n)
	for i := range out {
		out[i] = sentinelRunes[i%len(sentinelRunes)]
	}
	if string(out) == s {
		// s already is the sentinel: change it anyway.
		out[0] = utf8.RuneError
	}
	return string(out)
}

// Corrupt returns a copy of v (as decoded by jsonvalue.DecodeJSON) with every leaf
// replaced, keeping the structure and the JSON types:
//
//   - string  → CorruptString (NUL-led sentinel of the same length)
//   - integer (a number with no fractional part, json.Number or Go number)
//     → -999999999 (CorruptInteger)
//   - number with a fractional part → -1.5e308 (CorruptNumber)
//   - boolean → flipped
//   - null    → null
//
// Objects keep their keys and arrays their lengths. json.Number leaves stay
// json.Number; float64 and int leaves keep their Go type. Values outside the
// JSON data model are returned unchanged. The input is not modified. This is
// the one corruption procedure shared by the scanner's enforceability check
// and the proxy's `corrupt` fault.
func Corrupt(v any) any {
	return corrupt(v, 0)
}

func corrupt(v any, depth int) any {
	if depth > jsonvalue.MaxJSONDepth {
		return v
	}
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = corrupt(e, depth+1)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = corrupt(e, depth+1)
		}
		return out
	}
	return corruptLeaf(v)
}

func corruptLeaf(v any) any {
	switch t := v.(type) {
	case string:
		return CorruptString(t)
	case bool:
		return !t
	case json.Number:
		if jsonvalue.Type(t) == "integer" {
			return json.Number(CorruptInteger)
		}
		return json.Number(CorruptNumber)
	case float64:
		if jsonvalue.Type(t) == "integer" {
			return float64(-999999999)
		}
		return -1.5e308
	case float32:
		if jsonvalue.Type(t) == "integer" {
			return float32(-999999999)
		}
		return float32(-math.MaxFloat32)
	case int:
		return int(-999999999)
	case int64:
		return int64(-999999999)
	case int32:
		return int32(-999999999)
	}
	return v
}

// isLeaf reports whether v is a scalar JSON value (not an object or array).
func isLeaf(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return false
	}
	return true
}

// Leaves returns the JSON pointers of every leaf (string, number, boolean or
// null) in v, in document order with object keys sorted bytewise and array
// elements by index. A scalar v has the single leaf "". Empty objects and
// arrays are not leaves.
func Leaves(v any) []string {
	var out []string
	walkLeaves(v, func(p string, _ any) { out = append(out, p) })
	return out
}

// walkLeaves calls fn with the pointer and value of every leaf of v no
// deeper than jsonvalue.MaxJSONDepth, in walkNodes' order.
func walkLeaves(v any, fn func(string, any)) {
	walkNodes(v, "", 0, func(p string, v any, tooDeep bool) {
		switch v.(type) {
		case map[string]any, []any:
		default:
			if !tooDeep {
				fn(p, v)
			}
		}
	})
}

// collectNodes returns the pointers of v and of every value below it, in
// walkNodes' order, the first value too deep to walk included.
func collectNodes(v any) []string {
	var out []string
	walkNodes(v, "", 0, func(p string, _ any, _ bool) { out = append(out, p) })
	return out
}

// walkNodes calls fn with the pointer of v (at ptr, depth deep) and of
// every value below it, in document order: object keys sorted bytewise,
// array elements by index. It does not descend into a value deeper than
// jsonvalue.MaxJSONDepth, and tells fn that such a value is too deep.
func walkNodes(v any, ptr string, depth int, fn func(ptr string, v any, tooDeep bool)) {
	tooDeep := depth > jsonvalue.MaxJSONDepth
	fn(ptr, v, tooDeep)
	if tooDeep {
		return
	}
	switch t := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(t)) {
			walkNodes(t[k], jsonvalue.PointerAppend(ptr, k), depth+1, fn)
		}
	case []any:
		for i, e := range t {
			walkNodes(e, ptr+"/"+itoa(i), depth+1, fn)
		}
	}
}

// CorruptLeaf returns a copy of v in which only the leaf at pointer is
// corrupted (as Corrupt would corrupt it); containers along the path are
// copied, everything else is shared with v. It reports false, returning v,
// when pointer does not address a leaf.
func CorruptLeaf(v any, pointer string) (any, bool) {
	return jsonvalue.Replace(v, pointer, func(leaf any) (any, bool) {
		if !isLeaf(leaf) {
			return leaf, false
		}
		return corruptLeaf(leaf), true
	})
}

// BreakTypes returns a copy of v in which some values change their JSON type
// (the proxy's `schema-break` fault). Each node other than the root is broken
// with probability 1/3, decided by a hash of (seed, JSON pointer), so the
// outcome depends only on seed and the shape of v. If no node was chosen, one
// node picked by the same hash is broken (the root when v has no children).
// Replacements carry no data from the original:
//
//	string  → number 0 or true
//	integer/number → "mcpdrill-type-break" or false
//	boolean → "mcpdrill-type-break" or 0
//	null    → "mcpdrill-type-break" or {}
//	object  → "mcpdrill-type-break" or []
//	array   → {"mcpdrill":"type-break"} or "mcpdrill-type-break"
//
// A broken container is replaced whole (its children are not visited).
func BreakTypes(v any, seed uint64) any {
	nodes := collectNodes(v)
	broken := false
	out := breakWalk(v, "", seed, 0, &broken, "")
	if broken {
		return out
	}
	// Nothing fired: break exactly one node chosen by the seed.
	target := ""
	if len(nodes) > 1 {
		target = nodes[1+int(nodeHash(seed, "\x00pick")%uint64(len(nodes)-1))]
	}
	return breakWalk(v, "", seed, 0, &broken, "\x00"+target)
}

// breakWalk breaks nodes chosen by hash, or, when force is "\x00"+pointer,
// exactly that node.
func breakWalk(v any, ptr string, seed uint64, depth int, broken *bool, force string) any {
	h := nodeHash(seed, ptr)
	if force != "" {
		if force[1:] == ptr {
			*broken = true
			return breakValue(v, h)
		}
	} else if ptr != "" && h%3 == 0 {
		*broken = true
		return breakValue(v, h)
	}
	if depth > jsonvalue.MaxJSONDepth {
		return v
	}
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for _, k := range slices.Sorted(maps.Keys(t)) {
			out[k] = breakWalk(t[k], jsonvalue.PointerAppend(ptr, k), seed, depth+1, broken, force)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = breakWalk(e, ptr+"/"+itoa(i), seed, depth+1, broken, force)
		}
		return out
	}
	return v
}

const breakText = "mcpdrill-type-break"

func breakValue(v any, h uint64) any {
	alt := (h>>8)&1 == 1
	switch v.(type) {
	case string:
		if alt {
			return true
		}
		return json.Number("0")
	case bool:
		if alt {
			return json.Number("0")
		}
		return breakText
	case nil:
		if alt {
			return map[string]any{}
		}
		return breakText
	case map[string]any:
		if alt {
			return []any{}
		}
		return breakText
	case []any:
		if alt {
			return breakText
		}
		return map[string]any{"mcpdrill": "type-break"}
	default: // numbers of any Go type
		if alt {
			return false
		}
		return breakText
	}
}

// nodeHash mixes seed and a pointer into 64 bits (FNV-1a then splitmix64).
func nodeHash(seed uint64, ptr string) uint64 {
	f := fnv.New64a()
	_, _ = f.Write([]byte(ptr))
	x := seed ^ f.Sum64()
	return splitmix.Next(&x)
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	var buf [20]byte
	n := len(buf)
	for i > 0 {
		n--
		buf[n] = digits[i%10]
		i /= 10
	}
	return string(buf[n:])
}
