package drift

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpdrill/mcpdrill/internal/jsonschema"
	"github.com/mcpdrill/mcpdrill/internal/jsonvalue"
)

// Bounds of one change's witness search.
const (
	witnessSynthSteps  = 2_000_000
	witnessSynthBytes  = 1 << 20
	witnessCandidates  = 48  // local values tried at the change's place
	witnessBases       = 6   // instances of the whole schema they are placed in
	witnessValidations = 600 // whole-instance validations per search
	witnessShown       = 80  // characters of a witness value in a report
)

// witnessSearch looks for instances of the sender's schema that the
// receiver's rejects. It is built once per side, on the first search.
type witnessSearch struct {
	g *grader
	// sDomain is the sender's schema closed to undeclared members
	// (expanded), sRaw the sender's schema as written, tRaw the
	// receiver's as written; each with format not asserted ([0]) and
	// asserted ([1]). A witness breaks the pair with format read the same
	// way on both sides: not asserted (it holds whatever a validator
	// does), or only asserted (format-dependent).
	sDomain, sRaw, tRaw [2]*jsonschema.Schema
	bases               []any
	validations         int
	usable              bool
}

func (g *grader) search() *witnessSearch {
	if g.ws != nil {
		return g.ws
	}
	ws := &witnessSearch{g: g}
	g.ws = ws
	sRaw, tRaw := g.sd.newRaw, g.sd.oldRaw
	if g.sd.senderIsOld() {
		sRaw, tRaw = g.sd.oldRaw, g.sd.newRaw
	}
	for i, assert := range []bool{false, true} {
		var err1, err2, err3 error
		ws.sDomain[i], err1 = compile(g.s, assert)
		ws.sRaw[i], err2 = compile(sRaw, assert)
		ws.tRaw[i], err3 = compile(tRaw, assert)
		if err1 != nil || err2 != nil || err3 != nil {
			return ws
		}
	}
	ws.usable = true
	// Bases: instances of the receiver's schema first (a value placed in
	// one is rejected for what was placed), then of the sender's.
	for _, src := range []any{tRaw, g.s} {
		ws.bases = append(ws.bases, ws.synth(src, nil, 0, witnessBases/2)...)
	}
	if len(ws.bases) == 0 {
		ws.bases = []any{map[string]any{}}
	}
	return ws
}

func compile(v any, assertFormat bool) (*jsonschema.Schema, error) {
	return jsonschema.CompileOpts(canonical(v), jsonschema.Options{AssertFormat: assertFormat})
}

// synth returns up to n instances of schema v (joined with extra, when
// given, by allOf), quietly none when there are none or the budget ends.
func (ws *witnessSearch) synth(v any, extra map[string]any, seed uint64, n int) []any {
	if ws.g.ctx.Err() != nil {
		return nil
	}
	doc := v
	if extra != nil {
		doc = map[string]any{"allOf": []any{v, extra}}
	}
	out, err := jsonschema.SynthesizeContext(ws.g.ctx, canonical(doc), jsonschema.SynthOptions{
		Seed: seed, MaxInstances: n, Budget: jsonschema.Budget{Steps: witnessSynthSteps, Bytes: witnessSynthBytes}})
	if err != nil {
		return nil
	}
	return out
}

// dataStep is one move into an instance: a member or an array position.
type dataStep struct {
	key   string
	index int
	isArr bool
}

// dataPath turns schema steps into the instance positions they govern;
// branch steps stay in place.
func (ws *witnessSearch) dataPath(path []step) ([]dataStep, bool) {
	var out []dataStep
	for i, st := range path {
		s, t, ok := ws.g.nodes(path[:i])
		if !ok {
			return nil, false
		}
		switch st.kw {
		case "properties":
			out = append(out, dataStep{key: st.key})
		case "additionalProperties":
			out = append(out, dataStep{key: freshMember(s, t)})
		case "items":
			n := 0
			for _, m := range []any{s, t} {
				if mm, ok := m.(map[string]any); ok {
					if pi, ok := mm["prefixItems"].([]any); ok {
						n = max(n, len(pi))
					}
				}
			}
			out = append(out, dataStep{index: n, isArr: true})
		case "prefixItems":
			out = append(out, dataStep{index: st.new, isArr: true})
		}
	}
	return out, true
}

// freshMember is a member name neither schema declares.
func freshMember(schemas ...any) string {
	name := "mcpdrillExtra"
	for i := 0; ; i++ {
		taken := false
		for _, s := range schemas {
			if m, ok := s.(map[string]any); ok {
				if props, ok := m["properties"].(map[string]any); ok {
					if _, ok := props[name]; ok {
						taken = true
					}
				}
			}
		}
		if !taken {
			return name
		}
		name = fmt.Sprintf("mcpdrillExtra%d", i+1)
	}
}

func dataPointer(dp []dataStep) string {
	p := ""
	for _, s := range dp {
		if s.isArr {
			p += fmt.Sprintf("/%d", s.index)
		} else {
			p = jsonvalue.PointerAppend(p, s.key)
		}
	}
	return p
}

// place returns base with w at dp, containers made or copied on the way
// (base itself is not changed).
func place(base any, dp []dataStep, w any) any {
	if len(dp) == 0 {
		return w
	}
	s := dp[0]
	if s.isArr {
		arr, _ := base.([]any)
		out := slices.Clone(arr)
		for len(out) <= s.index {
			var pad any
			if len(arr) > 0 {
				pad = arr[0]
			}
			out = append(out, pad)
		}
		out[s.index] = place(out[s.index], dp[1:], w)
		return out
	}
	m, _ := base.(map[string]any)
	out := maps.Clone(m)
	if out == nil {
		out = map[string]any{}
	}
	out[s.key] = place(out[s.key], dp[1:], w)
	return out
}

// probes are plain values of every JSON type, tried at a change's place.
func probes() []any {
	n := func(s string) any { return json.Number(s) }
	return []any{nil, true, false, n("0"), n("1"), n("-1"), n("0.5"), n("1000000"), n("-1000000"),
		"", "x", "0", "not a uri", []any{}, []any{nil}, []any{"x", "x"}, map[string]any{}}
}

// find looks for a witness for a change about keyword kw (and member) at
// path, or, with a nil path and no change, anywhere. It returns the
// witness, or failing one a witness that the receiver rejects only when
// format is asserted.
func (ws *witnessSearch) find(path []step, kw string, members []string) (witness, formatOnly string) {
	if !ws.usable {
		return "", ""
	}
	dp, ok := ws.dataPath(path)
	if !ok {
		return "", ""
	}
	ptr := dataPointer(dp)
	// Inside an anyOf or oneOf branch at the same place, a validator
	// reports the alternatives failing, not the branch's keyword.
	branch := false
	for i := len(path) - 1; i >= 0 && (path[i].kw == "anyOf" || path[i].kw == "oneOf" || path[i].kw == "allOf"); i-- {
		branch = branch || path[i].kw != "allOf"
	}
	cands := ws.candidates(path, kw, members)
	for _, w := range cands {
		for _, base := range ws.bases {
			if ws.validations >= witnessValidations || ws.g.ctx.Err() != nil {
				return "", formatOnly
			}
			x := place(base, dp, w)
			ws.validations++
			for i := range 2 {
				if ws.sDomain[i].Validate(x) != nil || ws.sRaw[i].Validate(x) != nil {
					continue
				}
				named, ok := attributed(ws.tRaw[i].Violations(x), ptr, kw, members, branch)
				if !ok {
					continue
				}
				shown := showWitness(ptr, kw, named, w)
				if i == 0 {
					return shown, ""
				}
				if formatOnly == "" {
					formatOnly = shown + " (rejected only where format is asserted)"
				}
			}
		}
	}
	return "", formatOnly
}

// nodeKeywords are the keywords a validator reports at the value they
// judge (a violation of one of them at the change's place is the change's).
var nodeKeywords = map[string]bool{
	"type": true, "enum": true, "const": true, "minimum": true, "maximum": true, "exclusiveMinimum": true,
	"exclusiveMaximum": true, "multipleOf": true, "minLength": true, "maxLength": true, "pattern": true,
	"format": true, "minItems": true, "maxItems": true, "uniqueItems": true, "minProperties": true,
	"maxProperties": true, "required": true, "anyOf": true, "oneOf": true, "not": true,
	"dependentRequired": true, "contains": true, "minContains": true, "maxContains": true,
}

// attributed reports whether the receiver's violations include one the
// change explains: at the change's place (ptr) and by its keyword where a
// validator reports that keyword at the value itself; at or below the
// place otherwise (and anywhere for the search with no change). A change
// inside an anyOf or oneOf branch is explained by the alternatives failing
// at its place (branch). A change about members explains a violation of
// one of them (a rename names two); that member is returned.
func attributed(vs []jsonschema.Violation, ptr, kw string, members []string, branch bool) (member string, ok bool) {
	if len(members) > 0 {
		member = members[0]
	}
	for _, v := range vs {
		if ptr != "" && v.Pointer != ptr && !strings.HasPrefix(v.Pointer, ptr+"/") {
			continue
		}
		switch {
		case branch && v.Pointer == ptr && (v.Keyword == "anyOf" || v.Keyword == "oneOf"):
			return member, true
		case kw == "properties":
			for _, m := range members {
				mp := jsonvalue.PointerAppend(ptr, m)
				if v.Pointer == mp || strings.HasPrefix(v.Pointer, mp+"/") ||
					(v.Pointer == ptr && v.Keyword == "required" && strings.Contains(v.Message, strconv.Quote(m))) {
					return m, true
				}
			}
		case !nodeKeywords[kw]:
			return member, true
		case v.Pointer == ptr && v.Keyword == kw:
			if kw == "required" && member != "" && !strings.Contains(v.Message, strconv.Quote(member)) {
				continue
			}
			return member, true
		}
	}
	return "", false
}

// showWitness renders a witness: where in the instance, and the value
// placed there (or the member it lacks).
func showWitness(ptr, kw, member string, w any) string {
	at := ptr
	if at == "" {
		at = "(root)"
	}
	if obj, ok := w.(map[string]any); ok && member != "" {
		if v, has := obj[member]; has {
			return shortValue(jsonvalue.PointerAppend(ptr, member), v)
		}
		if kw == "required" || kw == "properties" {
			return at + " without " + strconv.Quote(member)
		}
	}
	return shortValue(at, w)
}

func shortValue(at string, v any) string {
	s := string(canonical(v))
	if len(s) > witnessShown {
		s = s[:witnessShown-3] + "..."
	}
	return at + " = " + s
}

// candidates are the values tried at the change's place: values built to
// break the receiver's keyword there, then instances of the sender's
// schema and their variants, then plain probes; only those the sender's
// schema at that place accepts and the receiver's rejects are kept when
// both compile on their own.
func (ws *witnessSearch) candidates(path []step, kw string, members []string) []any {
	s, t, ok := ws.g.nodes(path)
	if !ok {
		return nil
	}
	// The value sits where the last member or item step leads; branch
	// steps after it stay at that place, and a witness there need not
	// match the branch (a oneOf rejects a value that now matches two).
	at := len(path)
	for at > 0 && (path[at-1].kw == "anyOf" || path[at-1].kw == "oneOf" || path[at-1].kw == "allOf") {
		at--
	}
	sPlace, tPlace, ok := ws.g.nodes(path[:at])
	if !ok {
		return nil
	}
	sm, _ := s.(map[string]any)
	tm, _ := t.(map[string]any)
	var out []any
	add := func(vs ...any) { out = append(out, vs...) }
	if v := violator(kw, tm); v != nil {
		add(ws.synth(s, v, 0, 4)...)
	}
	if kw == "type" {
		for _, name := range []string{"null", "boolean", "integer", "number", "string", "array", "object"} {
			add(ws.synth(s, map[string]any{"type": name}, 0, 1)...)
		}
	}
	if e, ok := sm["enum"].([]any); ok {
		add(e...)
	}
	if v, ok := sm["const"]; ok {
		add(v)
	}
	// Values the receiver's keyword there rules out: what its "not" admits,
	// and neighbours of its const or enum values.
	if kw == "not" {
		add(ws.synth(tm["not"], nil, 0, 4)...)
	}
	if kw == "const" || kw == "enum" {
		vals, _ := tm["enum"].([]any)
		if v, ok := tm["const"]; ok {
			vals = append(vals, v)
		}
		for _, v := range vals {
			add(neighbours(v)...)
		}
	}
	insts := append(ws.synth(s, nil, 0, 8), ws.synth(s, nil, 1, 4)...)
	if at < len(path) {
		// Values of the branch on both sides, and of the whole place.
		insts = append(insts, ws.synth(t, nil, 0, 4)...)
		insts = append(insts, ws.synth(sPlace, nil, 0, 8)...)
	}
	if kw == "uniqueItems" || kw == "items" || kw == "prefixItems" || kw == "maxItems" || kw == "contains" {
		insts = append(insts, ws.synth(s, map[string]any{"minItems": json.Number("2")}, 0, 2)...)
	}
	add(insts...)
	for _, in := range insts {
		if arr, isArr := in.([]any); isArr {
			if len(arr) > 0 {
				add(append(slices.Clone(arr), arr[0])) // a repeated item
			}
			for _, p := range probes() {
				add(append(slices.Clone(arr), p))
			}
		}
		obj, isObj := in.(map[string]any)
		if !isObj {
			continue
		}
		for _, member := range members {
			if member == "" {
				continue
			}
			if _, has := obj[member]; has {
				cut := maps.Clone(obj)
				delete(cut, member)
				add(cut)
			}
			for _, p := range probes() {
				with := maps.Clone(obj)
				with[member] = p
				add(with)
			}
		}
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			cut := maps.Clone(obj)
			delete(cut, k)
			add(cut)
		}
		extra := maps.Clone(obj)
		extra[freshMember(s, t)] = "x"
		add(extra)
	}
	add(probes()...)

	// Keep what the two schemas at the place tell apart, when they can be
	// compiled on their own (a reference left in place cannot).
	sc, err1 := compile(sPlace, false)
	tc, err2 := compile(tPlace, true) // lets format-dependent values through too
	seen := map[string]bool{}
	var kept []any
	for _, v := range out {
		key := string(canonical(v))
		if seen[key] {
			continue
		}
		seen[key] = true
		if err1 == nil && err2 == nil && (sc.Validate(v) != nil || tc.Validate(v) == nil) {
			continue
		}
		kept = append(kept, v)
		if len(kept) >= witnessCandidates {
			break
		}
	}
	return kept
}

// neighbours are values next to a schema value: a number one and a half
// either side, a string with a letter more, or emptied.
func neighbours(v any) []any {
	switch x := v.(type) {
	case json.Number:
		r := jsonschema.ExactNumber(x)
		if r == nil {
			return nil
		}
		var out []any
		for _, d := range []*big.Rat{big.NewRat(1, 1), big.NewRat(-1, 1), big.NewRat(1, 2), big.NewRat(-1, 2)} {
			n := new(big.Rat).Add(r, d)
			if n.IsInt() {
				out = append(out, json.Number(n.FloatString(0)))
			} else {
				out = append(out, json.Number(n.FloatString(12)))
			}
		}
		return out
	case string:
		return []any{x + "x", ""}
	case bool:
		return []any{!x}
	}
	return nil
}

// violator is a schema whose instances break the receiver's keyword kw
// (nil when none is built for it).
func violator(kw string, tm map[string]any) map[string]any {
	v, ok := tm[kw]
	if !ok {
		return nil
	}
	r := jsonschema.ExactNumber(v)
	if r == nil {
		return nil
	}
	one := big.NewRat(1, 1)
	num := func(x *big.Rat) json.Number { return json.Number(x.FloatString(0)) }
	if !r.IsInt() {
		num = func(x *big.Rat) json.Number { return json.Number(x.FloatString(12)) }
	}
	switch kw {
	case "minimum":
		return map[string]any{"exclusiveMaximum": v}
	case "exclusiveMinimum":
		return map[string]any{"maximum": v}
	case "maximum":
		return map[string]any{"exclusiveMinimum": v}
	case "exclusiveMaximum":
		return map[string]any{"minimum": v}
	case "minLength", "minItems", "minProperties":
		if r.Sign() <= 0 {
			return nil
		}
		up := map[string]string{"minLength": "maxLength", "minItems": "maxItems", "minProperties": "maxProperties"}[kw]
		return map[string]any{up: num(new(big.Rat).Sub(r, one))}
	case "maxLength", "maxItems", "maxProperties":
		down := map[string]string{"maxLength": "minLength", "maxItems": "minItems", "maxProperties": "minProperties"}[kw]
		return map[string]any{down: num(new(big.Rat).Add(r, one))}
	}
	return nil
}
