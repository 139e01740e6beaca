package jsonschema

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/mcpdrill/mcpdrill/internal/jsonvalue"
	"maps"
	"math/big"
	"slices"
	"strings"
)

// SynthOptions tune Synthesize.
type SynthOptions struct {
	// Seed varies the choices made where several values would do (which
	// enum member, which regular-expression alternative). The output is
	// deterministic for a given Seed.
	Seed uint64
	// MaxInstances caps the number of instances returned. Default 16.
	MaxInstances int
	// MaxDepth caps the nesting of generated values. Past half of it,
	// optional properties are left out and arrays are kept at minItems, so
	// recursive schemas bottom out. Default 24.
	MaxDepth int
	// Budget bounds the work and the generated data of the whole
	// synthesis (every attempt and instance); see Budget.
	Budget Budget
}

const (
	defaultMaxInstances = 16
	defaultSynthDepth   = 24
	synthAttempts       = 6
	synthBudget         = 20000 // values generated per attempt
	maxSynthString      = 4096
	maxSynthItems       = 1024
	maxExpandParts      = 512
)

// ErrNoInstance reports that no instance satisfying the schema was found.
var ErrNoInstance = errors.New("schema: no valid instance could be synthesized")

// Synthesize returns valid instances of the schema. It compiles raw as
// Compile does (so "format" counts), then generates:
//
//   - local "$ref" ($defs, definitions, anchors) followed, with a cycle guard;
//     in drafts before 2019-09 a "$ref" hides its sibling keywords, as the
//     draft says;
//   - "type" (a list of types is a choice point with one instance per
//     type), "const", "enum", "properties" (required AND optional: the
//     first instance of every branch has every declared property),
//     "additionalProperties"/"patternProperties" (one extra property when
//     they constrain), "propertyNames", min/maxProperties,
//     dependentRequired/dependentSchemas, "items"/"prefixItems"/
//     "additionalItems", min/maxItems, uniqueItems, contains,
//     min/maxLength, "pattern" (a matching string is built from the
//     regular expression's syntax tree; patterns with ECMA-only syntax are
//     not asserted and are ignored), "format" (date-time, date, time,
//     duration, email, hostname, ipv4, ipv6, uri, uri-reference, iri,
//     uri-template, uuid, json-pointer, relative-json-pointer, regex,
//     semver), minimum/maximum (exclusive too), multipleOf;
//   - "allOf" merged; "anyOf", "oneOf" and "if"/"then"/"else" are choice
//     points: one instance per branch, so every branch is covered (the
//     other choice points keep their first branch).
//
// Every instance is validated against the compiled schema and dropped if it
// does not validate; several attempts (other lengths, enum members, without
// optional properties) are made per branch before giving up on it.
// Identical instances are returned once. ErrNoInstance (with the first
// reason) is returned when nothing validates.
//
// Synthesize is SynthesizeContext without a context.
func Synthesize(raw json.RawMessage, o SynthOptions) ([]any, error) {
	return SynthesizeContext(context.Background(), raw, o)
}

// SynthesizeContext is Synthesize under ctx and o.Budget: when the budget
// runs out it returns an error wrapping ErrBudget, and when ctx ends one
// wrapping ctx's error; nothing is returned then, not even the instances
// already found.
func SynthesizeContext(ctx context.Context, raw json.RawMessage, o SynthOptions) ([]any, error) {
	m := newMeter(ctx, o.Budget)
	s, err := CompileOpts(raw, Options{AssertFormat: true, meter: m})
	if err != nil {
		return nil, err
	}
	res := synthesize(s, nil, o)
	if res.stop != nil {
		return nil, res.stop
	}
	if len(res.instances) == 0 {
		return nil, fmt.Errorf("%w: %s", ErrNoInstance, res.firstNote())
	}
	out := make([]any, len(res.instances))
	for i, in := range res.instances {
		out[i] = in.value
	}
	return out, nil
}

// branch is one alternative of a choice point (anyOf, oneOf, if/then/else,
// a type list) identified by the choice point's schema location.
type branch struct {
	Point string
	Index int
}

type synthInstance struct {
	value   any
	choices map[string]int // every choice the instance took
	forced  map[string]int // the choices that were forced to reach its branch
}

type synthResult struct {
	instances  []synthInstance
	points     map[string]int // choice point → number of branches
	covered    map[branch]bool
	overlapped map[branch]bool // only reachable by values that also match another oneOf branch
	notes      []string
	capped     bool
	// stop is set when the budget's meter stopped the synthesis (budget
	// exhausted or context ended); the result is then incomplete.
	stop error
}

func (r *synthResult) firstNote() string {
	if len(r.notes) == 0 {
		return "no reason recorded"
	}
	return r.notes[0]
}

// uncovered returns the branches no instance exercises, sorted.
func (r *synthResult) uncovered() []branch {
	var out []branch
	for p, n := range r.points {
		for i := range n {
			b := branch{p, i}
			if !r.covered[b] && !r.overlapped[b] {
				out = append(out, b)
			}
		}
	}
	slices.SortFunc(out, func(a, b branch) int {
		if c := strings.Compare(a.Point, b.Point); c != 0 {
			return c
		}
		return a.Index - b.Index
	})
	return out
}

func (r *synthResult) note(s string) {
	if s != "" && !slices.Contains(r.notes, s) {
		r.notes = append(r.notes, s)
	}
}

// synthesize runs the branch-covering generation. relaxed, when not nil,
// is the oneOf-as-anyOf schema: a branch whose only candidates fail the
// strict schema but pass the relaxed one is "overlapped" (every value it
// could produce is claimed by another branch as well). The work is charged
// to s's meter (none when s was compiled without one); when it stops,
// res.stop says why and the generation ends.
func synthesize(s *Schema, relaxed *Schema, o SynthOptions) *synthResult {
	o.MaxInstances, o.MaxDepth = orDefault(o.MaxInstances, defaultMaxInstances), orDefault(o.MaxDepth, defaultSynthDepth)
	res := &synthResult{points: map[string]int{}, covered: map[branch]bool{}, overlapped: map[branch]bool{}}
	m := s.opts.meter
	cache := map[string]*matcher{}
	queue := []map[string]int{{}}
	tried := map[branch]bool{}
	seen := map[string]bool{}
	runs := 0
	for len(queue) > 0 {
		if res.stop = m.stopped(); res.stop != nil {
			break
		}
		if len(res.instances) >= o.MaxInstances || runs >= 4*o.MaxInstances+8 {
			res.capped = true
			break
		}
		runs++
		cs := queue[0]
		queue = queue[1:]
		var accepted, overlap, last, dup *gen
		firstViolation := ""
		for a := range synthAttempts {
			g := newGen(s, cs, a, o, cache)
			v, ok := g.run()
			for p, n := range g.npoints {
				res.points[p] = max(res.points[p], n)
			}
			last = g
			// Validating costs about as much as generating did.
			if !ok || !m.step(int64(synthBudget-g.budget)) {
				if m.stopped() != nil {
					break
				}
				res.note(g.failure)
				continue
			}
			g.value = v
			vs := s.Violations(v)
			if m.stopped() != nil {
				// The validation was cut short: its answer means nothing.
				break
			}
			if len(vs) == 0 {
				if len(cs) > 0 && seen[string(jsonvalue.Canonical(v))] {
					// Valid but already known: another attempt may
					// reach the branch for real (say, an if/else
					// branch needs another enum member).
					if dup == nil {
						dup = g
					}
					continue
				}
				accepted = g
				break
			}
			if firstViolation == "" {
				firstViolation = fmt.Sprintf(" (first violation at %s: %s)", displayPtr(vs[0].Pointer), vs[0].Message)
			}
			if relaxed != nil && overlap == nil && relaxed.Validate(v) == nil {
				overlap = g
			}
		}
		if res.stop = m.stopped(); res.stop != nil {
			break
		}
		if accepted == nil && dup != nil {
			accepted = dup
		}
		base := last
		switch {
		case accepted != nil:
			base = accepted
			key := string(jsonvalue.Canonical(accepted.value))
			if !seen[key] {
				seen[key] = true
				res.instances = append(res.instances, synthInstance{value: accepted.value, choices: accepted.used, forced: cs})
			}
			for p, i := range accepted.used {
				res.covered[branch{p, i}] = true
			}
		case overlap != nil:
			base = overlap
			for p, i := range overlap.used {
				if _, forced := cs[p]; forced {
					res.overlapped[branch{p, i}] = true
				}
			}
		default:
			res.note(describeChoices(cs) + "no candidate validates" + firstViolation)
		}
		for p, i := range base.used {
			tried[branch{p, i}] = true
		}
		for _, p := range slices.Sorted(maps.Keys(base.used)) {
			for i := range base.npoints[p] {
				b := branch{p, i}
				if tried[b] || res.covered[b] {
					continue
				}
				tried[b] = true
				ncs := make(map[string]int, len(cs)+1)
				for k, v := range cs {
					ncs[k] = v
				}
				ncs[p] = i
				queue = append(queue, ncs)
			}
		}
	}
	return res
}

func describeChoices(cs map[string]int) string {
	if len(cs) == 0 {
		return ""
	}
	var parts []string
	for _, p := range slices.Sorted(maps.Keys(cs)) {
		parts = append(parts, fmt.Sprintf("%s/%d", p, cs[p]))
	}
	return "branch " + strings.Join(parts, ", ") + ": "
}

// gen is one generation attempt under a fixed set of forced choices.
type gen struct {
	root    any
	draft   int
	forced  map[string]int
	used    map[string]int // choice point → branch taken
	npoints map[string]int // choice point → branch count
	attempt int
	seed    uint64
	minimal bool // attempt without optional properties
	// nulls: every explicitly nullable value below the root is null (a
	// type list with "null", a null-only anyOf/oneOf branch, an enum with
	// null), whatever the forced choices say; emptyArrays: every array at
	// its minItems. Both are set for the shape variants (shapes.go).
	nulls       bool
	emptyArrays bool
	// What the variant flags changed, for the shape's label: an optional
	// property left out (dropped), an array shortened, a value nulled
	// where it would not have been.
	dropped, shortened, nulled bool
	budget                     int
	maxDepth                   int
	refActive                  map[string]int
	failure                    string
	cache                      map[string]*matcher
	value                      any
	m                          *meter // the whole synthesis' budget (nil: unbounded)
}

func newGen(s *Schema, forced map[string]int, attempt int, o SynthOptions, cache map[string]*matcher) *gen {
	return &gen{
		root: s.doc, draft: s.draft, forced: forced,
		used: map[string]int{}, npoints: map[string]int{},
		attempt: attempt, seed: o.Seed, minimal: attempt == 3 || attempt == 4,
		budget: synthBudget, maxDepth: o.MaxDepth, refActive: map[string]int{}, cache: cache,
		m: s.opts.meter,
	}
}

func (g *gen) failf(format string, args ...any) {
	if g.failure == "" {
		g.failure = fmt.Sprintf(format, args...)
	}
}

func (g *gen) run() (any, bool) {
	// The root itself is never nulled by g.nulls: a nullable root is a
	// choice point whose null branch is a branch instance of its own.
	c := g.newConj()
	nulls := g.nulls
	g.nulls = false
	g.expand(g.root, "", c, 0)
	g.nulls = nulls
	return g.fromConj(c, 0, 0)
}

// part is one schema object that the value must satisfy.
type part struct {
	m   map[string]any
	loc string
}

// conj is a conjunction of schema objects (a node, its allOf members, the
// chosen anyOf/oneOf branch, $ref targets…).
type conj struct {
	parts []part
	refs  []string
	seen  map[string]bool
	never bool // contains the false schema or something unresolvable
}

func (g *gen) newConj() *conj { return &conj{seen: map[string]bool{}} }

func (g *gen) choose(point string, n, def int) int {
	i := def
	if f, ok := g.forced[point]; ok && f < n {
		i = f
	}
	return g.take(point, n, i)
}

// chooseNullable is choose at a choice point whose branch nullIdx admits
// only null (-1: none does): with g.nulls that branch is taken whatever
// is forced.
func (g *gen) chooseNullable(point string, n, def, nullIdx int) int {
	if g.nulls && nullIdx >= 0 {
		if f, ok := g.forced[point]; ok && f < n {
			def = f
		}
		if def != nullIdx {
			g.nulled = true
		}
		return g.take(point, n, nullIdx)
	}
	return g.choose(point, n, def)
}

// take records that branch i of the n at point was taken.
func (g *gen) take(point string, n, i int) int {
	g.used[point] = i
	g.npoints[point] = n
	return i
}

// nullOnly returns the index of the first alternative that admits null
// and nothing else ({"type":"null"}, {"const":null}, {"enum":[null]}),
// or -1.
func nullOnly(alts []any) int {
	for i, a := range alts {
		m, ok := a.(map[string]any)
		if !ok {
			continue
		}
		if t, ok := m["type"].(string); ok && t == "null" {
			return i
		}
		if ts, ok := m["type"].([]any); ok && len(ts) == 1 && ts[0] == "null" {
			return i
		}
		if cv, ok := m["const"]; ok && cv == nil {
			return i
		}
		if ev, ok := m["enum"].([]any); ok && len(ev) == 1 && ev[0] == nil {
			return i
		}
	}
	return -1
}

func (g *gen) expand(node any, loc string, c *conj, depth int) {
	if c.seen[loc] {
		return
	}
	c.seen[loc] = true
	if depth > 64 || len(c.parts) > maxExpandParts {
		g.failf("combinators nested too deeply at %q", loc)
		c.never = true
		return
	}
	m, ok := node.(map[string]any)
	if !ok {
		if b, ok := node.(bool); !ok || !b {
			g.failf("false schema at %q", loc)
			c.never = true
		}
		return
	}
	if r, ok := m["$ref"].(string); ok {
		t, tloc, ok := g.resolveRef(r)
		if !ok {
			g.failf("cannot follow $ref at %q", loc)
			c.never = true
			return
		}
		c.refs = append(c.refs, tloc)
		g.expand(t, tloc, c, depth+1)
		if g.draft < 2019 {
			return
		}
	}
	for _, k := range []string{"$dynamicRef", "$recursiveRef"} {
		if r, ok := m[k].(string); ok {
			t, tloc, ok := g.resolveDynamic(r)
			if !ok {
				g.failf("cannot follow %s at %q", k, loc)
				c.never = true
				return
			}
			c.refs = append(c.refs, tloc)
			g.expand(t, tloc, c, depth+1)
		}
	}
	c.parts = append(c.parts, part{m, loc})
	if all, ok := m["allOf"].([]any); ok {
		for i, sub := range all {
			g.expand(sub, jsonvalue.PointerAppend(loc, "allOf")+"/"+itoa(i), c, depth+1)
		}
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if alts, ok := m[k].([]any); ok && len(alts) > 0 {
			p := jsonvalue.PointerAppend(loc, k)
			i := g.chooseNullable(p, len(alts), 0, nullOnly(alts))
			g.expand(alts[i], p+"/"+itoa(i), c, depth+1)
		}
	}
	if ifs, ok := m["if"]; ok {
		th, hasThen := m["then"]
		el, hasElse := m["else"]
		if hasThen || hasElse {
			p := jsonvalue.PointerAppend(loc, "if")
			if g.choose(p, 2, 0) == 0 {
				g.expand(ifs, p, c, depth+1)
				if hasThen {
					g.expand(th, jsonvalue.PointerAppend(loc, "then"), c, depth+1)
				}
			} else if hasElse {
				g.expand(el, jsonvalue.PointerAppend(loc, "else"), c, depth+1)
			}
		}
	}
}

// resolveRef follows a reference that compiled (so it is local).
func (g *gen) resolveRef(ref string) (any, string, bool) { return ResolveRef(g.root, ref) }

func (g *gen) resolveDynamic(ref string) (any, string, bool) { return ResolveDynamicRef(g.root, ref) }

func (g *gen) fromConj(c *conj, depth, idx int) (any, bool) {
	g.budget--
	if g.budget < 0 {
		g.failf("generation budget exhausted")
		return nil, false
	}
	if !g.m.step(1) {
		g.failf("synthesis budget exceeded")
		return nil, false
	}
	if depth > g.maxDepth {
		g.failf("values nested deeper than %d", g.maxDepth)
		return nil, false
	}
	if c.never {
		return nil, false
	}
	minimal := g.minimal || depth >= g.maxDepth/2
	for _, r := range c.refs {
		if g.refActive[r] > 0 {
			minimal = true
		}
	}
	for _, r := range c.refs {
		g.refActive[r]++
	}
	defer func() {
		for _, r := range c.refs {
			g.refActive[r]--
		}
	}()

	declared := declaredTypes(c)
	for _, p := range c.parts {
		if cv, ok := p.m["const"]; ok {
			return g.copyValue(cv)
		}
	}
	for _, p := range c.parts {
		ev, ok := p.m["enum"].([]any)
		if !ok || len(ev) == 0 {
			continue
		}
		var fit []any
		for _, e := range ev {
			if typeAllowed(declared, jsonvalue.Type(e)) {
				fit = append(fit, e)
			}
		}
		if len(fit) == 0 {
			g.failf("no enum member at %q has an allowed type", p.loc)
			return nil, false
		}
		k := (int(g.seed%uint64(len(fit))) + g.attempt + idx) % len(fit)
		if g.nulls && depth > 0 && slices.Contains(fit, any(nil)) {
			g.nulled = g.nulled || fit[k] != nil
			return nil, true
		}
		return g.copyValue(fit[k])
	}

	t, ok := g.pickType(c, declared, g.nulls && depth > 0)
	if !ok {
		return nil, false
	}
	switch t {
	case "null":
		return nil, true
	case "boolean":
		return g.attempt%2 == 0, true
	case "integer", "number":
		return g.genNumber(c, t == "integer", idx)
	case "string":
		return g.genString(c, idx)
	case "array":
		return g.genArray(c, depth, idx, minimal || g.emptyArrays)
	default:
		return g.genObject(c, depth, idx, minimal)
	}
}

// declaredTypes intersects the "type" keywords of a conjunction; nil means
// unconstrained.
func declaredTypes(c *conj) []string {
	var allowed []string
	constrained := false
	for _, p := range c.parts {
		var ts []string
		switch tv := p.m["type"].(type) {
		case string:
			ts = []string{tv}
		case []any:
			for _, e := range tv {
				if s, ok := e.(string); ok {
					ts = append(ts, s)
				}
			}
		default:
			continue
		}
		if !constrained {
			allowed, constrained = ts, true
			continue
		}
		var next []string
		for _, a := range allowed {
			switch {
			case slices.Contains(ts, a):
				next = append(next, a)
			case a == "number" && slices.Contains(ts, "integer"):
				next = append(next, "integer")
			case a == "integer" && slices.Contains(ts, "number"):
				next = append(next, "integer")
			}
		}
		allowed = slices.Compact(next)
	}
	if constrained && allowed == nil {
		return []string{}
	}
	return allowed
}

func typeAllowed(declared []string, t string) bool {
	if declared == nil {
		return true
	}
	return slices.Contains(declared, t) || (t == "integer" && slices.Contains(declared, "number"))
}

// pickType chooses the type to generate. A type list is a choice point
// (first non-null type by default, null when preferNull and the list has
// it); without "type", it is inferred from the keywords present, and a
// bare schema yields a string.
func (g *gen) pickType(c *conj, declared []string, preferNull bool) (string, bool) {
	if declared != nil {
		if len(declared) == 0 {
			g.failf("no type satisfies every subschema at %q", c.parts[0].loc)
			return "", false
		}
		if len(declared) == 1 {
			return declared[0], true
		}
		point := ""
		for _, p := range c.parts {
			if _, ok := p.m["type"].([]any); ok {
				point = jsonvalue.PointerAppend(p.loc, "type")
				break
			}
		}
		def := 0
		for i, t := range declared {
			if t != "null" {
				def = i
				break
			}
		}
		nullIdx := -1
		if preferNull {
			nullIdx = slices.Index(declared, "null")
		}
		return declared[g.chooseNullable(point, len(declared), def, nullIdx)], true
	}
	has := func(keys ...string) bool {
		for _, p := range c.parts {
			for _, k := range keys {
				if _, ok := p.m[k]; ok {
					return true
				}
			}
		}
		return false
	}
	switch {
	case has("properties", "required", "additionalProperties", "patternProperties", "minProperties",
		"maxProperties", "propertyNames", "dependentRequired", "dependentSchemas", "unevaluatedProperties"):
		return "object", true
	case has("items", "prefixItems", "minItems", "maxItems", "uniqueItems", "contains", "additionalItems", "unevaluatedItems"):
		return "array", true
	case has("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"):
		return "number", true
	}
	return "string", true
}

// copyValue copies a schema value (const, enum member) into the instance,
// charging its size to the budget: a large const repeated in an array
// costs what it weighs.
func (g *gen) copyValue(v any) (any, bool) {
	nodes, bytes := valueSize(v, 0)
	if !g.m.step(nodes) || !g.m.take(bytes) {
		g.failf("synthesis budget exceeded")
		return nil, false
	}
	return deepCopy(v), true
}

// valueSize counts the nodes of a decoded value and the bytes of its
// strings and keys.
func valueSize(v any, depth int) (nodes, bytes int64) {
	nodes = 1
	if depth > jsonvalue.MaxJSONDepth {
		return nodes, bytes
	}
	switch t := v.(type) {
	case string:
		bytes += int64(len(t))
	case map[string]any:
		for k, e := range t {
			n, b := valueSize(e, depth+1)
			nodes, bytes = nodes+n, bytes+b+int64(len(k))
		}
	case []any:
		for _, e := range t {
			n, b := valueSize(e, depth+1)
			nodes, bytes = nodes+n, bytes+b
		}
	}
	return nodes, bytes
}

func deepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}

// --- objects

type propSrc struct {
	schema any
	loc    string
}

func (g *gen) genObject(c *conj, depth, idx int, minimal bool) (any, bool) {
	props, required := gatherProps(c)
	present := map[string]bool{}
	for r := range required {
		present[r] = true
	}
	if !minimal {
		for k := range props {
			present[k] = true
		}
	}
	// dependentSchemas / schema-valued dependencies of present properties
	// join the conjunction (fixpoint, bounded).
	applied := map[string]bool{}
	for range 4 {
		added := false
		for _, p := range slices.Clone(c.parts) {
			for _, kw := range []string{"dependentSchemas", "dependencies"} {
				deps, ok := p.m[kw].(map[string]any)
				if !ok {
					continue
				}
				for _, name := range slices.Sorted(maps.Keys(deps)) {
					key := p.loc + "\x00" + kw + "\x00" + name
					if !present[name] || applied[key] || !isSchema(deps[name]) {
						continue
					}
					applied[key] = true
					added = true
					g.expand(deps[name], jsonvalue.PointerAppend(jsonvalue.PointerAppend(p.loc, kw), name), c, 0)
				}
			}
		}
		if !added {
			break
		}
		props, required = gatherProps(c)
		for r := range required {
			present[r] = true
		}
		if !minimal {
			for k := range props {
				present[k] = true
			}
		}
	}
	if c.never {
		return nil, false
	}
	// dependentRequired / array-valued dependencies.
	for range 4 {
		grew := false
		for _, p := range c.parts {
			for _, kw := range []string{"dependentRequired", "dependencies"} {
				deps, ok := p.m[kw].(map[string]any)
				if !ok {
					continue
				}
				for name, lst := range deps {
					arr, ok := lst.([]any)
					if !ok || !present[name] {
						continue
					}
					for _, e := range arr {
						if s, ok := e.(string); ok && !present[s] {
							present[s], required[s], grew = true, true, true
						}
					}
				}
			}
		}
		if !grew {
			break
		}
	}
	out := map[string]any{}
	for _, name := range slices.Sorted(maps.Keys(present)) {
		v, ok := g.propValue(c, props, name, depth, idx)
		if !ok {
			if required[name] {
				return nil, false
			}
			continue
		}
		out[name] = v
	}
	if !minimal {
		g.extraProps(c, props, out, depth, idx)
	} else if g.minimal && (len(out) < len(props) || hasExtraProps(c)) {
		g.dropped = true
	}
	minP, maxP := -1, -1
	for _, p := range c.parts {
		if n, ok := intKeyword(p.m, "minProperties"); ok && n > minP {
			minP = n
		}
		if n, ok := intKeyword(p.m, "maxProperties"); ok && (maxP < 0 || n < maxP) {
			maxP = n
		}
	}
	for i := 0; len(out) < minP && i < maxSynthItems; i++ {
		name := "p" + itoa(i)
		if _, dup := out[name]; dup {
			continue
		}
		v, ok := g.propValue(c, props, name, depth, idx)
		if !ok {
			return nil, false
		}
		out[name] = v
	}
	if maxP >= 0 && len(out) > maxP {
		keys := slices.Sorted(maps.Keys(out))
		for i := len(keys) - 1; i >= 0 && len(out) > maxP; i-- {
			if !required[keys[i]] {
				delete(out, keys[i])
			}
		}
	}
	return out, true
}

func gatherProps(c *conj) (map[string][]propSrc, map[string]bool) {
	props := map[string][]propSrc{}
	required := map[string]bool{}
	for _, p := range c.parts {
		if pm, ok := p.m["properties"].(map[string]any); ok {
			for _, name := range slices.Sorted(maps.Keys(pm)) {
				props[name] = append(props[name], propSrc{pm[name], jsonvalue.PointerAppend(jsonvalue.PointerAppend(p.loc, "properties"), name)})
			}
		}
		if req, ok := p.m["required"].([]any); ok {
			for _, r := range req {
				if s, ok := r.(string); ok {
					required[s] = true
				}
			}
		}
	}
	return props, required
}

// propValue generates the value of property name: its "properties"
// schemas, the patternProperties it matches, or else additionalProperties.
func (g *gen) propValue(c *conj, props map[string][]propSrc, name string, depth, idx int) (any, bool) {
	child := g.newConj()
	for _, ps := range props[name] {
		g.expand(ps.schema, ps.loc, child, 0)
	}
	for _, p := range c.parts {
		matched := false
		if pp, ok := p.m["patternProperties"].(map[string]any); ok {
			for _, pat := range slices.Sorted(maps.Keys(pp)) {
				if re := g.regexp(pat); re != nil && re.MatchString(name) {
					matched = true
					g.expand(pp[pat], jsonvalue.PointerAppend(jsonvalue.PointerAppend(p.loc, "patternProperties"), pat), child, 0)
				}
			}
		}
		pm, _ := p.m["properties"].(map[string]any)
		if _, declared := pm[name]; declared || matched {
			continue
		}
		if ap, ok := p.m["additionalProperties"]; ok {
			g.expand(ap, jsonvalue.PointerAppend(p.loc, "additionalProperties"), child, 0)
		}
	}
	return g.fromConj(child, depth+1, idx)
}

// hasExtraProps says whether extraProps would add a property to an
// object of c.
func hasExtraProps(c *conj) bool {
	for _, p := range c.parts {
		if pp, ok := p.m["patternProperties"].(map[string]any); ok && len(pp) > 0 {
			return true
		}
		if ap, ok := p.m["additionalProperties"].(map[string]any); ok && len(ap) > 0 {
			return true
		}
	}
	return false
}

// extraProps adds one property per patternProperties entry and one for a
// constraining additionalProperties schema, so that their constraints are
// exercised.
func (g *gen) extraProps(c *conj, props map[string][]propSrc, out map[string]any, depth, idx int) {
	for _, p := range c.parts {
		if pp, ok := p.m["patternProperties"].(map[string]any); ok {
			for _, pat := range slices.Sorted(maps.Keys(pp)) {
				key, ok := g.stringFor([]string{pat}, 1, 16, idx)
				if !ok {
					continue
				}
				if _, dup := out[key]; dup {
					continue
				}
				if v, ok := g.propValue(c, props, key, depth, idx); ok {
					out[key] = v
				}
			}
		}
	}
	for _, p := range c.parts {
		ap, ok := p.m["additionalProperties"].(map[string]any)
		if !ok || len(ap) == 0 {
			continue
		}
		key := "extra"
		if pn, ok := p.m["propertyNames"]; ok {
			kc := g.newConj()
			g.expand(pn, jsonvalue.PointerAppend(p.loc, "propertyNames"), kc, 0)
			if v, ok := g.fromConj(kc, depth+1, idx); ok {
				if s, ok := v.(string); ok {
					key = s
				}
			}
		}
		if _, dup := out[key]; dup {
			continue
		}
		if v, ok := g.propValue(c, props, key, depth, idx); ok {
			out[key] = v
		}
	}
}

func intKeyword(m map[string]any, k string) (int, bool) {
	n, ok := m[k].(json.Number)
	if !ok {
		return 0, false
	}
	d, ok := jsonvalue.ParseDecimal(string(n))
	if !ok || !d.Integral() || d.Neg || d.Exp > 9 {
		return 0, false
	}
	i := 0
	for j := 0; j < d.Exp; j++ {
		i *= 10
		if j < len(d.Digits) {
			i += int(d.Digits[j] - '0')
		}
	}
	return i, true
}

// --- arrays

func (g *gen) genArray(c *conj, depth, idx int, minimal bool) (any, bool) {
	var prefix [][]propSrc
	var rest []propSrc
	restFalse := false
	minI, maxI := 0, -1
	unique := false
	var contains []propSrc
	minContains := 0
	addPrefix := func(i int, ps propSrc) {
		for len(prefix) <= i {
			prefix = append(prefix, nil)
		}
		prefix[i] = append(prefix[i], ps)
	}
	for _, p := range c.parts {
		itemsLoc := jsonvalue.PointerAppend(p.loc, "items")
		if g.draft >= 2020 {
			if pi, ok := p.m["prefixItems"].([]any); ok {
				for i, s := range pi {
					addPrefix(i, propSrc{s, jsonvalue.PointerAppend(p.loc, "prefixItems") + "/" + itoa(i)})
				}
			}
			if it, ok := p.m["items"]; ok && isSchema(it) {
				rest = append(rest, propSrc{it, itemsLoc})
				restFalse = restFalse || it == false
			}
		} else {
			switch it := p.m["items"].(type) {
			case []any:
				for i, s := range it {
					addPrefix(i, propSrc{s, itemsLoc + "/" + itoa(i)})
				}
				if ai, ok := p.m["additionalItems"]; ok && isSchema(ai) {
					rest = append(rest, propSrc{ai, jsonvalue.PointerAppend(p.loc, "additionalItems")})
					restFalse = restFalse || ai == false
				}
			case map[string]any, bool:
				rest = append(rest, propSrc{it, itemsLoc})
				restFalse = restFalse || it == false
			}
		}
		if n, ok := intKeyword(p.m, "minItems"); ok && n > minI {
			minI = n
		}
		if n, ok := intKeyword(p.m, "maxItems"); ok && (maxI < 0 || n < maxI) {
			maxI = n
		}
		if u, ok := p.m["uniqueItems"].(bool); ok && u {
			unique = true
		}
		if cs, ok := p.m["contains"]; ok {
			contains = append(contains, propSrc{cs, jsonvalue.PointerAppend(p.loc, "contains")})
			mc := 1
			if n, ok := intKeyword(p.m, "minContains"); ok && g.draft >= 2019 {
				mc = n
			}
			minContains = max(minContains, mc)
		}
	}
	_ = unique // distinct values come from the element index
	countFor := func(minimal bool) int {
		count := minI
		if !minimal {
			count = max(count, len(prefix), 1)
		}
		if len(contains) > 0 {
			count = max(count, minContains)
		}
		if restFalse && count > len(prefix) {
			count = len(prefix)
		}
		if maxI >= 0 && count > maxI {
			count = maxI
		}
		return count
	}
	count := countFor(minimal)
	if (g.minimal || g.emptyArrays) && count < countFor(false) {
		g.shortened = true
	}
	if count > maxSynthItems {
		g.failf("array needs more than %d items", maxSynthItems)
		return nil, false
	}
	out := make([]any, 0, count)
	for i := range count {
		child := g.newConj()
		if i < len(prefix) {
			for _, ps := range prefix[i] {
				g.expand(ps.schema, ps.loc, child, 0)
			}
		} else {
			for _, ps := range rest {
				g.expand(ps.schema, ps.loc, child, 0)
			}
		}
		if i < minContains {
			for _, ps := range contains {
				g.expand(ps.schema, ps.loc, child, 0)
			}
		}
		v, ok := g.fromConj(child, depth+1, idx*7+i)
		if !ok {
			return nil, false
		}
		out = append(out, v)
	}
	return out, true
}

// --- numbers

type bound struct {
	v   *big.Rat
	exc bool
}

func ratOf(v any) *big.Rat {
	n, ok := v.(json.Number)
	if !ok {
		return nil
	}
	if _, ok := jsonvalue.ParseDecimal(string(n)); !ok {
		return nil
	}
	r, ok := new(big.Rat).SetString(string(n))
	if !ok {
		return nil
	}
	return r
}

func (g *gen) genNumber(c *conj, isInt bool, idx int) (any, bool) {
	var lo, hi *bound
	var mults []*big.Rat
	tighterLo := func(b bound) {
		if lo == nil || b.v.Cmp(lo.v) > 0 || (b.v.Cmp(lo.v) == 0 && b.exc) {
			lo = &b
		}
	}
	tighterHi := func(b bound) {
		if hi == nil || b.v.Cmp(hi.v) < 0 || (b.v.Cmp(hi.v) == 0 && b.exc) {
			hi = &b
		}
	}
	for _, p := range c.parts {
		exMinBool, _ := p.m["exclusiveMinimum"].(bool)
		exMaxBool, _ := p.m["exclusiveMaximum"].(bool)
		if r := ratOf(p.m["minimum"]); r != nil {
			tighterLo(bound{r, exMinBool})
		}
		if r := ratOf(p.m["maximum"]); r != nil {
			tighterHi(bound{r, exMaxBool})
		}
		if r := ratOf(p.m["exclusiveMinimum"]); r != nil {
			tighterLo(bound{r, true})
		}
		if r := ratOf(p.m["exclusiveMaximum"]); r != nil {
			tighterHi(bound{r, true})
		}
		if r := ratOf(p.m["multipleOf"]); r != nil && r.Sign() > 0 {
			mults = append(mults, r)
		}
	}
	ok := func(t *big.Rat) bool {
		if isInt && !t.IsInt() {
			return false
		}
		if lo != nil && (t.Cmp(lo.v) < 0 || (lo.exc && t.Cmp(lo.v) == 0)) {
			return false
		}
		if hi != nil && (t.Cmp(hi.v) > 0 || (hi.exc && t.Cmp(hi.v) == 0)) {
			return false
		}
		for _, m := range mults {
			if !new(big.Rat).Quo(t, m).IsInt() {
				return false
			}
		}
		return true
	}
	step := big.NewRat(1, 1)
	if len(mults) > 0 {
		step = mults[0]
		if isInt && !step.IsInt() {
			// the smallest integer multiple of step: numerator of step/1 over gcd
			step = new(big.Rat).SetInt(new(big.Int).Set(step.Num()))
		}
	}
	up := func(t *big.Rat) *big.Rat { // smallest multiple of step >= t
		q := new(big.Rat).Quo(t, step)
		f := ceilRat(q)
		return new(big.Rat).Mul(new(big.Rat).SetInt(f), step)
	}
	down := func(t *big.Rat) *big.Rat { // largest multiple of step <= t
		q := new(big.Rat).Quo(t, step)
		f := floorRat(q)
		return new(big.Rat).Mul(new(big.Rat).SetInt(f), step)
	}
	pref := big.NewRat(int64(1+idx+[]int{0, 10, 0, 0, 5, 100}[g.attempt%6]), 1)
	var cands []*big.Rat
	if !isInt && len(mults) == 0 {
		// A fractional value, so that corruption uses the number sentinel.
		cands = append(cands, new(big.Rat).Add(pref, big.NewRat(1, 2)))
	}
	cands = append(cands, up(pref))
	if lo != nil {
		t := up(lo.v)
		if lo.exc && t.Cmp(lo.v) == 0 {
			t = new(big.Rat).Add(t, step)
		}
		t = new(big.Rat).Add(t, new(big.Rat).Mul(big.NewRat(int64(idx), 1), step))
		cands = append(cands, t)
	}
	if hi != nil {
		t := down(hi.v)
		if hi.exc && t.Cmp(hi.v) == 0 {
			t = new(big.Rat).Sub(t, step)
		}
		t = new(big.Rat).Sub(t, new(big.Rat).Mul(big.NewRat(int64(idx), 1), step))
		cands = append(cands, t)
	}
	if lo != nil && hi != nil {
		mid := new(big.Rat).Quo(new(big.Rat).Add(lo.v, hi.v), big.NewRat(2, 1))
		cands = append(cands, mid, up(mid), down(mid))
	}
	cands = append(cands, big.NewRat(0, 1))
	for _, t := range cands {
		if ok(t) {
			return json.Number(ratDecimal(t)), true
		}
	}
	g.failf("no number satisfies the bounds at %q", c.parts[0].loc)
	return nil, false
}

func ceilRat(q *big.Rat) *big.Int {
	n, d := q.Num(), q.Denom()
	f := new(big.Int).Div(n, d) // Euclidean: floor for positive d
	if new(big.Int).Mul(f, d).Cmp(n) != 0 {
		f.Add(f, big.NewInt(1))
	}
	return f
}

func floorRat(q *big.Rat) *big.Int {
	return new(big.Int).Div(q.Num(), q.Denom())
}

// ratDecimal renders r as JSON number text: exact when r has a finite
// decimal expansion of up to 30 fractional digits, else 20 digits.
func ratDecimal(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	for prec := 1; prec <= 30; prec++ {
		s := r.FloatString(prec)
		if q, ok := new(big.Rat).SetString(s); ok && q.Cmp(r) == 0 {
			return s
		}
	}
	return r.FloatString(20)
}
