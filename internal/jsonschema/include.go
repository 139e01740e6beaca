package jsonschema

import (
	"bytes"
	"encoding/json"
	"math/big"
	"slices"

	"github.com/mcpdrill/mcpdrill/internal/jsonvalue"
)

// Includes reports whether every instance of schema s is an instance of
// schema t (s ⊆ t), by a procedure that is sound and incomplete: true is a
// proof, false only says that the procedure could not prove it. Both are
// decoded documents whose local $refs were expanded (ExpandRefs); a $ref
// still in place (a recursive schema) is understood only where both sides
// spell it, and the subtree around it, identically. "format" counts as an
// assertion on t's side and not on s's, so a proof holds whichever way a
// validator reads it.
//
// The procedure, by the shape of t (every keyword of t must be implied by
// s, which is read as the conjunction of itself and its allOf members):
//
//   - s equal to t, or to one of s's conjuncts (canonical forms, annotations
//     aside); t accepting everything; s accepting nothing;
//   - s finite (const, enum, or only booleans and null): every value s
//     accepts is validated against t, which decides the question;
//   - "type" by type sets (integer inside number), the effective types of
//     s taking its allOf, anyOf and oneOf branches into account; a keyword
//     of t that applies to a type s never admits is implied;
//   - numeric bounds, multipleOf, lengths, item and property counts and
//     uniqueItems by comparing values exactly (decimals, not doubles);
//     pattern and format only when s has the same one;
//   - properties/additionalProperties member by member (patternProperties
//     only when identical), required by name, items/prefixItems position by
//     position;
//   - anyOf in t: s inside one branch; oneOf in t: s inside one branch and
//     disjoint from every other (types, or finite values); not in t: s
//     disjoint from it; allOf in t: every member; anyOf or oneOf in s: case
//     by case, each branch of s inside t;
//   - everything else (if/then/else, contains, dependentSchemas,
//     propertyNames, unevaluated*, draft-7 tuple items): only when s holds
//     the identical keyword. Keywords no validator asserts (annotations,
//     unknown vendor keywords) impose nothing.
//
// The work is bounded (includeSteps recursive steps, includeDepth levels):
// past the bound the answer is false.
func Includes(s, t any) bool {
	p := &prover{steps: includeSteps}
	return p.incl([]any{s}, t, 0)
}

// Bounds of one Includes call.
const (
	includeSteps    = 20000
	includeDepth    = 64
	includeCompiles = 64
	maxFinite       = 256
)

type prover struct {
	steps    int
	compiles int
}

func (p *prover) spend() bool {
	p.steps--
	return p.steps >= 0
}

// annotationKeys carry no assertion; they are dropped before two schemas
// are compared for equality.
var annotationKeys = map[string]bool{
	"title": true, "description": true, "default": true, "examples": true, "$comment": true,
	"deprecated": true, "readOnly": true, "writeOnly": true, "$schema": true, "$id": true,
	"$anchor": true, "$dynamicAnchor": true, "$vocabulary": true, "$defs": true, "definitions": true,
	"contentMediaType": true, "contentEncoding": true, "contentSchema": true,
}

// asserting lists the keywords a validator asserts in some draft. A keyword
// of t outside it (and outside annotationKeys) is a vendor keyword: no
// validator asserts it, so it imposes nothing.
var asserting = map[string]bool{
	"type": true, "enum": true, "const": true,
	"multipleOf": true, "maximum": true, "exclusiveMaximum": true, "minimum": true, "exclusiveMinimum": true,
	"maxLength": true, "minLength": true, "pattern": true, "format": true,
	"items": true, "prefixItems": true, "additionalItems": true, "maxItems": true, "minItems": true,
	"uniqueItems": true, "contains": true, "maxContains": true, "minContains": true,
	"properties": true, "patternProperties": true, "additionalProperties": true, "required": true,
	"maxProperties": true, "minProperties": true, "dependentRequired": true, "dependentSchemas": true,
	"dependencies": true, "propertyNames": true, "unevaluatedProperties": true, "unevaluatedItems": true,
	"allOf": true, "anyOf": true, "oneOf": true, "not": true, "if": true, "then": true, "else": true,
	"$ref": true, "$dynamicRef": true, "$recursiveRef": true,
}

// schemaMap turns a schema into its object form: true is {}, false is
// {"not": {}}; nil for anything else.
func schemaMap(v any) map[string]any {
	switch x := v.(type) {
	case map[string]any:
		return x
	case bool:
		if x {
			return map[string]any{}
		}
		return map[string]any{"not": map[string]any{}}
	}
	return nil
}

// stripAnnotations is a shallow copy of m without annotation keywords.
func stripAnnotations(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if !annotationKeys[k] {
			out[k] = v
		}
	}
	return out
}

// refFree reports whether a schema has no reference left in it (checked
// on its canonical text, so a string that merely spells "$ref" counts too:
// the answer errs on the safe side).
func refFree(canon []byte) bool {
	return !bytes.Contains(canon, []byte(`"$ref"`)) && !bytes.Contains(canon, []byte(`"$dynamicRef"`)) &&
		!bytes.Contains(canon, []byte(`"$recursiveRef"`))
}

// sameSchema reports whether two schemas are the same constraint: equal
// canonical forms without annotations, and no reference whose target could
// differ.
func sameSchema(a, b map[string]any) bool {
	ca, cb := jsonvalue.Canonical(stripAnnotations(a)), jsonvalue.Canonical(stripAnnotations(b))
	return bytes.Equal(ca, cb) && refFree(ca)
}

// sameValue reports whether two keyword values are equal and free of
// references.
func sameValue(a, b any) bool {
	ca, cb := jsonvalue.Canonical(a), jsonvalue.Canonical(b)
	return bytes.Equal(ca, cb) && refFree(ca)
}

// isFalse reports whether a schema object admits nothing on its face.
func isFalse(m map[string]any) bool {
	if n, ok := m["not"]; ok {
		if nm := schemaMap(n); nm != nil && isTrivial(nm) {
			return true
		}
	}
	if t, ok := m["type"].([]any); ok && len(t) == 0 {
		return true
	}
	if e, ok := m["enum"].([]any); ok && len(e) == 0 {
		return true
	}
	return false
}

// isTrivial reports whether a schema object asserts nothing.
func isTrivial(m map[string]any) bool {
	for k := range m {
		if asserting[k] {
			return false
		}
	}
	return true
}

// conjuncts flattens s and its allOf members (recursively) into the list of
// schema objects that all hold.
func conjuncts(ss []any, depth int) []map[string]any {
	var out []map[string]any
	for _, s := range ss {
		m := schemaMap(s)
		if m == nil {
			continue // not a schema: ignoring a conjunct only widens s
		}
		out = append(out, m)
		if all, ok := m["allOf"].([]any); ok && depth < includeDepth {
			out = append(out, conjuncts(all, depth+1)...)
		}
	}
	return out
}

// incl proves that the conjunction of ss is inside t.
func (p *prover) incl(ss []any, t any, depth int) bool {
	if !p.spend() || depth > includeDepth {
		return false
	}
	tm := schemaMap(t)
	if tm == nil {
		return false
	}
	if isTrivial(tm) {
		return true
	}
	cs := conjuncts(ss, depth)
	for _, c := range cs {
		if isFalse(c) || sameSchema(c, tm) {
			return true
		}
	}
	if len(cs) == 0 {
		return false // s accepts everything and t does not
	}
	ty := effectiveTypes(cs, 0)
	if ty == 0 {
		return true
	}
	if vals, ok := finiteValues(cs, ty); ok {
		return p.allAccepted(cs, vals, tm)
	}
	if p.keywords(cs, ty, tm, depth) {
		return true
	}
	// Case by case over s's first anyOf or oneOf.
	for i, c := range cs {
		for _, kw := range []string{"anyOf", "oneOf"} {
			branches, ok := c[kw].([]any)
			if !ok || len(branches) == 0 {
				continue
			}
			// cs is flat already: no conjunct brings its allOf again.
			rest := make([]any, 0, len(cs))
			for j, o := range cs {
				if j != i {
					rest = append(rest, without(o, "allOf"))
				} else {
					rest = append(rest, without(o, kw))
				}
			}
			for _, b := range branches {
				if !p.incl(append(slices.Clone(rest), b), t, depth+1) {
					return false
				}
			}
			return true
		}
	}
	return false
}

// without is a shallow copy of m without key k (and, for an applicator
// already expanded into conjuncts, without its allOf).
func without(m map[string]any, k string) map[string]any {
	out := make(map[string]any, len(m))
	for key, v := range m {
		if key != k && key != "allOf" {
			out[key] = v
		}
	}
	return out
}

// keywords proves every keyword of t from the conjuncts cs (whose
// effective types are ty).
func (p *prover) keywords(cs []map[string]any, ty typeSet, tm map[string]any, depth int) bool {
	done := map[string]bool{}
	for k := range tm {
		if done[k] || annotationKeys[k] || !asserting[k] {
			continue
		}
		ok := false
		switch k {
		case "type":
			ts, valid := typeSetOf(tm)
			ok = valid && ty&^ts == 0
		case "minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum":
			ok = ty&tNumber == 0 || numericImplied(cs, ty, tm, k)
		case "multipleOf":
			ok = ty&tNumber == 0 || multipleImplied(cs, ty, tm[k])
		case "minLength", "maxLength":
			ok = ty&tString == 0 || countImplied(cs, tm, k)
		case "pattern", "format":
			ok = ty&tString == 0 || hasSame(cs, k, tm[k])
		case "minItems", "maxItems":
			ok = ty&tArray == 0 || countImplied(cs, tm, k)
		case "uniqueItems":
			ok = ty&tArray == 0 || tm[k] != true || uniqueImplied(cs)
		case "items", "prefixItems", "additionalItems":
			done["items"], done["prefixItems"], done["additionalItems"] = true, true, true
			ok = ty&tArray == 0 || sameGroup(cs, tm, "items", "prefixItems", "additionalItems") || p.itemsImplied(cs, tm, depth)
		case "contains", "minContains", "maxContains":
			done["contains"], done["minContains"], done["maxContains"] = true, true, true
			ok = ty&tArray == 0 || sameGroup(cs, tm, "contains", "minContains", "maxContains")
		case "properties", "patternProperties", "additionalProperties":
			done["properties"], done["patternProperties"], done["additionalProperties"] = true, true, true
			ok = ty&tObject == 0 || sameGroup(cs, tm, "properties", "patternProperties", "additionalProperties") || p.propertiesImplied(cs, tm, depth)
		case "required":
			ok = ty&tObject == 0 || requiredImplied(cs, tm[k])
		case "minProperties", "maxProperties":
			ok = ty&tObject == 0 || countImplied(cs, tm, k)
		case "dependentRequired", "dependentSchemas", "dependencies", "propertyNames":
			ok = ty&tObject == 0 || hasSame(cs, k, tm[k])
		case "enum", "const":
			ok = false // s is not finite (finiteValues said so)
		case "allOf":
			all, isArr := tm[k].([]any)
			ok = isArr
			for _, m := range all {
				if ok && !p.incl(asAny(cs), m, depth+1) {
					ok = false
				}
			}
		case "anyOf":
			any1, isArr := tm[k].([]any)
			for _, m := range any1 {
				if isArr && p.incl(asAny(cs), m, depth+1) {
					ok = true
					break
				}
			}
		case "oneOf":
			ok = p.oneOfImplied(cs, ty, tm[k], depth)
		case "not":
			ok = p.disjoint(cs, ty, tm[k], depth)
		case "if", "then", "else":
			done["if"], done["then"], done["else"] = true, true, true
			ok = sameGroup(cs, tm, "if", "then", "else")
		default: // unevaluated*, residual references
			ok = false
		}
		if !ok {
			return false
		}
		done[k] = true
	}
	return true
}

func asAny(cs []map[string]any) []any {
	out := make([]any, len(cs))
	for i, c := range cs {
		out[i] = c
	}
	return out
}

// hasSame reports whether a conjunct holds keyword k with value v.
func hasSame(cs []map[string]any, k string, v any) bool {
	for _, c := range cs {
		if cv, ok := c[k]; ok && sameValue(cv, v) {
			return true
		}
	}
	return false
}

// sameGroup reports whether a conjunct holds the keywords of a group
// (whose meanings depend on each other) exactly as t does.
func sameGroup(cs []map[string]any, tm map[string]any, keys ...string) bool {
	for _, c := range cs {
		same := true
		for _, k := range keys {
			cv, cOK := c[k]
			tv, tOK := tm[k]
			if cOK != tOK || (cOK && !sameValue(cv, tv)) {
				same = false
				break
			}
		}
		if same {
			return true
		}
	}
	return false
}

// --- types ---

// typeSet is a set of JSON types; tInteger and tFraction split numbers.
type typeSet uint8

const (
	tNull typeSet = 1 << iota
	tBoolean
	tObject
	tArray
	tString
	tInteger
	tFraction
	tNumber = tInteger | tFraction
	tAll    = tNull | tBoolean | tObject | tArray | tString | tNumber
)

func typeBit(name string) (typeSet, bool) {
	switch name {
	case "null":
		return tNull, true
	case "boolean":
		return tBoolean, true
	case "object":
		return tObject, true
	case "array":
		return tArray, true
	case "string":
		return tString, true
	case "integer":
		return tInteger, true
	case "number":
		return tNumber, true
	}
	return 0, false
}

// typeSetOf reads a schema's "type" (tAll when absent); valid is false for
// a malformed value.
func typeSetOf(m map[string]any) (typeSet, bool) {
	switch t := m["type"].(type) {
	case nil:
		if _, present := m["type"]; present {
			return 0, false
		}
		return tAll, true
	case string:
		b, ok := typeBit(t)
		return b, ok
	case []any:
		var s typeSet
		for _, e := range t {
			name, ok := e.(string)
			if !ok {
				return 0, false
			}
			b, ok := typeBit(name)
			if !ok {
				return 0, false
			}
			s |= b
		}
		return s, true
	}
	return 0, false
}

// valueType is the type bit of a JSON value.
func valueType(v any) typeSet {
	switch jsonvalue.Type(v) {
	case "null":
		return tNull
	case "boolean":
		return tBoolean
	case "object":
		return tObject
	case "array":
		return tArray
	case "string":
		return tString
	case "integer":
		return tInteger
	case "number":
		return tFraction
	}
	return 0
}

// effectiveTypes over-approximates the types a conjunction admits: the
// intersection of every conjunct's type, const, enum and its anyOf/oneOf
// branches' effective types.
func effectiveTypes(cs []map[string]any, depth int) typeSet {
	ty := tAll
	for _, c := range cs {
		ty &= schemaTypes(c, depth)
	}
	return ty
}

func schemaTypes(c map[string]any, depth int) typeSet {
	ty := tAll
	if isFalse(c) {
		return 0
	}
	if s, ok := typeSetOf(c); ok {
		ty &= s
	}
	if v, ok := c["const"]; ok {
		ty &= valueType(v)
	}
	if e, ok := c["enum"].([]any); ok {
		var s typeSet
		for _, v := range e {
			s |= valueType(v)
		}
		ty &= s
	}
	if depth < 8 {
		for _, kw := range []string{"anyOf", "oneOf"} {
			if bs, ok := c[kw].([]any); ok {
				var s typeSet
				for _, b := range bs {
					if bm := schemaMap(b); bm != nil {
						s |= effectiveTypes(conjuncts([]any{bm}, depth+1), depth+1)
					} else {
						s = tAll
					}
				}
				ty &= s
			}
		}
		if all, ok := c["allOf"].([]any); ok {
			for _, b := range all {
				if bm := schemaMap(b); bm != nil {
					ty &= schemaTypes(bm, depth+1)
				}
			}
		}
	}
	return ty
}

// --- finite schemas ---

// finiteValues lists the candidate values of a conjunction that admits
// finitely many (a const, an enum, or only booleans and null); ok is false
// otherwise or past maxFinite values.
func finiteValues(cs []map[string]any, ty typeSet) ([]any, bool) {
	for _, c := range cs {
		if v, ok := c["const"]; ok {
			return []any{v}, true
		}
	}
	for _, c := range cs {
		if e, ok := c["enum"].([]any); ok {
			if len(e) > maxFinite {
				return nil, false
			}
			return e, true
		}
	}
	if ty&^(tBoolean|tNull) == 0 {
		var vals []any
		if ty&tBoolean != 0 {
			vals = append(vals, true, false)
		}
		if ty&tNull != 0 {
			vals = append(vals, nil)
		}
		return vals, true
	}
	return nil, false
}

// allAccepted decides a finite s: every candidate s accepts (format not
// asserted, so s is read at its widest) must be accepted by t (format
// asserted, t at its narrowest).
func (p *prover) allAccepted(cs []map[string]any, vals []any, tm map[string]any) bool {
	p.compiles += 2
	if p.compiles > includeCompiles {
		return false
	}
	s, err := compileValue(map[string]any{"allOf": asAny(cs)}, false)
	if err != nil {
		return false
	}
	t, err := compileValue(tm, true)
	if err != nil {
		return false
	}
	for _, v := range vals {
		if s.Validate(v) == nil && t.Validate(v) != nil {
			return false
		}
	}
	return true
}

// compileValue compiles a decoded schema, format asserted or not.
func compileValue(v any, assertFormat bool) (*Schema, error) {
	return compileDoc(v, Options{AssertFormat: assertFormat}.withDefaults())
}

// --- numbers ---

// ExactNumber reads a schema's number exactly: nil for anything else
// (draft-4's boolean exclusive bounds included) and for exponents past
// ±400, whose exact value is not worth building.
func ExactNumber(v any) *big.Rat {
	n, ok := v.(json.Number)
	if !ok {
		return nil
	}
	d, ok := jsonvalue.ParseDecimal(string(n))
	if !ok || d.Exp > 400 || d.Exp < -400 {
		return nil
	}
	return ratOf(n)
}

// tightest is the tightest bound the conjuncts set on one side (lower:
// minimum and exclusiveMinimum; upper: maximum and exclusiveMaximum), on
// integers alone made inclusive integers; nil when none.
func tightest(cs []map[string]any, ty typeSet, lower bool) *bound {
	incl, excl, sign := "maximum", "exclusiveMaximum", -1
	if lower {
		incl, excl, sign = "minimum", "exclusiveMinimum", 1
	}
	var b *bound
	for _, c := range cs {
		for _, k := range []string{incl, excl} {
			v := ExactNumber(c[k])
			if v == nil {
				continue
			}
			nb := &bound{v: v, exc: k == excl}
			if ty&tFraction == 0 {
				nb = intBound(nb, lower)
			}
			if cmp := nb.v.Cmp(b0(b)) * sign; b == nil || cmp > 0 || (cmp == 0 && nb.exc) {
				b = nb
			}
		}
	}
	return b
}

// b0 is b's value, or zero for none (then unused: b == nil decides).
func b0(b *bound) *big.Rat {
	if b == nil {
		return new(big.Rat)
	}
	return b.v
}

// intBound turns a bound on integers into an inclusive integer bound:
// x > 2.5 and x >= 2.5 are x >= 3, x > 2 is x >= 3 (and the mirror for an
// upper bound).
func intBound(b *bound, lower bool) *bound {
	if lower {
		f := new(big.Rat).SetInt(floorRat(b.v))
		if b.exc || f.Cmp(b.v) != 0 {
			f.Add(f, big.NewRat(1, 1))
		}
		return &bound{v: f}
	}
	c := new(big.Rat).SetInt(ceilRat(b.v))
	if b.exc || c.Cmp(b.v) != 0 {
		c.Sub(c, big.NewRat(1, 1))
	}
	return &bound{v: c}
}

// numericImplied proves t's bound keyword k from the conjuncts' bounds.
func numericImplied(cs []map[string]any, ty typeSet, tm map[string]any, k string) bool {
	tv := ExactNumber(tm[k])
	if tv == nil {
		return false
	}
	lower := k == "minimum" || k == "exclusiveMinimum"
	sb := tightest(cs, ty, lower)
	if sb == nil {
		return false
	}
	tb := &bound{v: tv, exc: k == "exclusiveMinimum" || k == "exclusiveMaximum"}
	if ty&tFraction == 0 {
		tb = intBound(tb, lower)
	}
	c := sb.v.Cmp(tb.v)
	if !lower {
		c = -c
	}
	return c > 0 || (c == 0 && (sb.exc || !tb.exc))
}

// multipleImplied proves multipleOf m: some conjunct's multipleOf is a
// whole multiple of m, or s admits only integers and 1 is one.
func multipleImplied(cs []map[string]any, ty typeSet, mv any) bool {
	m := ExactNumber(mv)
	if m == nil || m.Sign() <= 0 {
		return false
	}
	whole := func(x *big.Rat) bool { return new(big.Rat).Quo(x, m).IsInt() }
	if ty&tFraction == 0 && whole(big.NewRat(1, 1)) {
		return true
	}
	for _, c := range cs {
		if k := ExactNumber(c["multipleOf"]); k != nil && k.Sign() > 0 && whole(k) {
			return true
		}
	}
	return false
}

// --- counts ---

// countImplied proves a min*/max* count keyword of t from the conjuncts'.
func countImplied(cs []map[string]any, tm map[string]any, k string) bool {
	tv := ExactNumber(tm[k])
	if tv == nil {
		return false
	}
	lower := k == "minLength" || k == "minItems" || k == "minProperties"
	for _, c := range cs {
		sv := ExactNumber(c[k])
		if sv == nil {
			continue
		}
		if (lower && sv.Cmp(tv) >= 0) || (!lower && sv.Cmp(tv) <= 0) {
			return true
		}
	}
	if k == "maxItems" {
		// A tuple that admits nothing past its positions.
		for _, c := range cs {
			if pi, ok := c["prefixItems"].([]any); ok && isFalseSchema(c["items"]) {
				if big.NewRat(int64(len(pi)), 1).Cmp(tv) <= 0 {
					return true
				}
			}
		}
	}
	return false
}

func isFalseSchema(v any) bool {
	m := schemaMap(v)
	return m != nil && isFalse(m)
}

func uniqueImplied(cs []map[string]any) bool {
	one := big.NewRat(1, 1)
	for _, c := range cs {
		if c["uniqueItems"] == true {
			return true
		}
		if v := ExactNumber(c["maxItems"]); v != nil && v.Cmp(one) <= 0 {
			return true
		}
	}
	return false
}

// --- objects ---

func requiredImplied(cs []map[string]any, tv any) bool {
	names, ok := tv.([]any)
	if !ok {
		return false
	}
	have := map[string]bool{}
	for _, c := range cs {
		if r, ok := c["required"].([]any); ok {
			for _, n := range r {
				if s, ok := n.(string); ok {
					have[s] = true
				}
			}
		}
	}
	for _, n := range names {
		s, ok := n.(string)
		if !ok || !have[s] {
			return false
		}
	}
	return true
}

// memberSchemas are the schemas the conjuncts put on a member called name,
// and whether some conjunct rules the member out altogether. A conjunct
// with patternProperties says nothing here (its patterns are not matched):
// dropping a constraint only widens s.
func memberSchemas(cs []map[string]any, name string) (schemas []any, absent bool) {
	for _, c := range cs {
		if _, ok := c["patternProperties"]; ok {
			continue
		}
		props, _ := c["properties"].(map[string]any)
		if sub, ok := props[name]; ok {
			schemas = append(schemas, sub)
			continue
		}
		if ap, ok := c["additionalProperties"]; ok {
			if isFalseSchema(ap) {
				return nil, true
			}
			schemas = append(schemas, ap)
		}
	}
	return schemas, false
}

// propertiesImplied proves t's properties and additionalProperties (t
// without patternProperties) member by member.
func (p *prover) propertiesImplied(cs []map[string]any, tm map[string]any, depth int) bool {
	if _, ok := tm["patternProperties"]; ok {
		return false
	}
	tprops, _ := tm["properties"].(map[string]any)
	if _, ok := tm["properties"]; ok && tprops == nil {
		return false
	}
	for name, tsub := range tprops {
		ss, absent := memberSchemas(cs, name)
		if absent {
			continue
		}
		if !p.incl(ss, tsub, depth+1) {
			return false
		}
	}
	ap, ok := tm["additionalProperties"]
	if !ok {
		return true
	}
	// Members t does not declare: those s declares, and those s leaves
	// undeclared (unless some conjunct closes them off).
	for _, c := range cs {
		props, _ := c["properties"].(map[string]any)
		for name := range props {
			if _, declared := tprops[name]; declared {
				continue
			}
			ss, absent := memberSchemas(cs, name)
			if !absent && !p.incl(ss, ap, depth+1) {
				return false
			}
		}
	}
	var extra []any
	for _, c := range cs {
		if _, ok := c["patternProperties"]; ok {
			continue
		}
		if cap, ok := c["additionalProperties"]; ok {
			if isFalseSchema(cap) {
				return true
			}
			extra = append(extra, cap)
		}
	}
	return p.incl(extra, ap, depth+1)
}

// --- arrays ---

// itemSchemas are the schemas the conjuncts put on position i of an array
// (draft-7 tuple items are left out: dropping a constraint only widens s).
func itemSchemas(cs []map[string]any, i int) []any {
	var out []any
	for _, c := range cs {
		if _, tuple := c["items"].([]any); tuple {
			continue
		}
		if pi, ok := c["prefixItems"].([]any); ok && i < len(pi) {
			out = append(out, pi[i])
			continue
		}
		if it, ok := c["items"]; ok {
			out = append(out, it)
		}
	}
	return out
}

// itemsImplied proves t's items and prefixItems (2020-12 form) position
// by position.
func (p *prover) itemsImplied(cs []map[string]any, tm map[string]any, depth int) bool {
	if _, ok := tm["additionalItems"]; ok {
		return false
	}
	if _, tuple := tm["items"].([]any); tuple {
		return false
	}
	tp, _ := tm["prefixItems"].([]any)
	if _, ok := tm["prefixItems"]; ok && tp == nil {
		return false
	}
	n := len(tp)
	for _, c := range cs {
		if pi, ok := c["prefixItems"].([]any); ok {
			n = max(n, len(pi))
		}
	}
	tAt := func(i int) any {
		if i < len(tp) {
			return tp[i]
		}
		if it, ok := tm["items"]; ok {
			return it
		}
		return true
	}
	for i := 0; i <= n; i++ {
		if !p.incl(itemSchemas(cs, i), tAt(i), depth+1) {
			return false
		}
	}
	return true
}

// --- applicators ---

// oneOfImplied proves oneOf: s inside one branch and disjoint from the
// others.
func (p *prover) oneOfImplied(cs []map[string]any, ty typeSet, v any, depth int) bool {
	branches, ok := v.([]any)
	if !ok {
		return false
	}
	for i, b := range branches {
		if !p.incl(asAny(cs), b, depth+1) {
			continue
		}
		for j, o := range branches {
			if j != i && !p.disjoint(cs, ty, o, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}

// disjoint proves that no instance of the conjunction is an instance of
// x: their effective types do not meet, or one side is finite and none of
// its values is accepted by the other.
func (p *prover) disjoint(cs []map[string]any, ty typeSet, x any, depth int) bool {
	xm := schemaMap(x)
	if xm == nil || !p.spend() || depth > includeDepth {
		return false
	}
	if isFalse(xm) {
		return true
	}
	xty := effectiveTypes(conjuncts([]any{xm}, depth), 0)
	if ty&xty == 0 {
		return true
	}
	p.compiles += 2
	if p.compiles > includeCompiles {
		return false
	}
	if vals, ok := finiteValues(cs, ty); ok {
		xs, err := compileValue(xm, false)
		s, err2 := compileValue(map[string]any{"allOf": asAny(cs)}, true)
		if err != nil || err2 != nil {
			return false
		}
		for _, v := range vals {
			if s.Validate(v) == nil && xs.Validate(v) == nil {
				return false
			}
		}
		return true
	}
	xcs := conjuncts([]any{xm}, depth)
	if vals, ok := finiteValues(xcs, xty); ok {
		s, err := compileValue(map[string]any{"allOf": asAny(cs)}, false)
		xs, err2 := compileValue(xm, true)
		if err != nil || err2 != nil {
			return false
		}
		for _, v := range vals {
			if xs.Validate(v) == nil && s.Validate(v) == nil {
				return false
			}
		}
		return true
	}
	return false
}

// --- the contract domain ---

// CloseUndeclared returns a copy of schema s in which every object schema
// that declares its members and says nothing of others is closed to
// undeclared members (additionalProperties false): the instances of the
// result are those a sender following s sends, members it was never told
// about left out. An object schema is closed when its type includes object
// or it has properties or patternProperties, and it has no
// additionalProperties, no unevaluatedProperties and no in-place applicator
// (allOf, anyOf, oneOf, not, if/then/else, dependentSchemas, dependencies,
// a reference) that could declare members of its own; only schemas reached
// through properties, items, prefixItems and additionalProperties from the
// root are considered (a branch of an applicator shares its object with
// its siblings). A free-form object says so with additionalProperties
// true or a schema, and stays open.
func CloseUndeclared(s any) any {
	return closeNode(s, 0)
}

var inPlace = []string{"allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas", "dependencies",
	"$ref", "$dynamicRef", "$recursiveRef", "unevaluatedProperties", "additionalProperties"}

func closeNode(v any, depth int) any {
	m, ok := v.(map[string]any)
	if !ok || depth > includeDepth {
		return v
	}
	out := make(map[string]any, len(m)+1)
	for k, x := range m {
		out[k] = x
	}
	if props, ok := m["properties"].(map[string]any); ok {
		np := make(map[string]any, len(props))
		for k, x := range props {
			np[k] = closeNode(x, depth+1)
		}
		out["properties"] = np
	}
	if ap, ok := m["additionalProperties"].(map[string]any); ok {
		out["additionalProperties"] = closeNode(ap, depth+1)
	}
	switch it := m["items"].(type) {
	case map[string]any:
		out["items"] = closeNode(it, depth+1)
	}
	if pi, ok := m["prefixItems"].([]any); ok {
		np := make([]any, len(pi))
		for i, x := range pi {
			np[i] = closeNode(x, depth+1)
		}
		out["prefixItems"] = np
	}
	ty, valid := typeSetOf(m)
	_, hasProps := m["properties"]
	_, hasPatterns := m["patternProperties"]
	objectish := (valid && ty != tAll && ty&tObject != 0) || hasProps || hasPatterns
	if !objectish {
		return out
	}
	for _, k := range inPlace {
		if _, ok := m[k]; ok {
			return out
		}
	}
	out["additionalProperties"] = false
	return out
}

// KeywordGroup is the part of schema t that one keyword asserts, with the
// keywords whose meaning depends on it (properties, patternProperties and
// additionalProperties; items, prefixItems and additionalItems; contains
// with its bounds; if, then and else; a bound with its exclusive form);
// with member set, only what properties says of that member (its value, or
// the additionalProperties schema that governs it, and whether it is
// required). Includes(s, KeywordGroup(t, kw, member)) asks whether s meets
// t in that respect alone. nil when t is not a schema object.
func KeywordGroup(t any, kw, member string) map[string]any {
	tm := schemaMap(t)
	if tm == nil {
		return nil
	}
	out := map[string]any{}
	if member != "" && (kw == "properties" || kw == "required") {
		if _, ok := tm["patternProperties"]; ok {
			return tm // patterns may govern the member: the whole schema
		}
		props, _ := tm["properties"].(map[string]any)
		if sub, ok := props[member]; ok {
			out["properties"] = map[string]any{member: sub}
		} else if ap, ok := tm["additionalProperties"]; ok {
			out["properties"] = map[string]any{member: ap}
		}
		if req, ok := tm["required"].([]any); ok && slices.Contains(req, any(member)) {
			out["required"] = []any{member}
		}
		return out
	}
	groups := [][]string{
		{"properties", "patternProperties", "additionalProperties"},
		{"items", "prefixItems", "additionalItems"},
		{"contains", "minContains", "maxContains"},
		{"if", "then", "else"},
		{"minimum", "exclusiveMinimum"},
		{"maximum", "exclusiveMaximum"},
	}
	keys := []string{kw}
	for _, g := range groups {
		if slices.Contains(g, kw) {
			keys = g
		}
	}
	for _, k := range keys {
		if v, ok := tm[k]; ok {
			out[k] = v
		}
	}
	return out
}
