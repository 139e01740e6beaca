package drift

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mcpdrill/mcpdrill/internal/jsonvalue"
	"github.com/mcpdrill/mcpdrill/internal/mcp"
	"github.com/mcpdrill/mcpdrill/report"
)

// Change is one classified difference between an old and a new tool set.
type Change struct {
	Tool string `json:"tool"`
	// Pointer is a JSON pointer into the tool object ("/inputSchema/properties/q",
	// "/description"; "" for a whole tool). Inside schemas it follows local
	// $refs as if they were inlined: it names where an argument sits, not
	// where its definition is written.
	Pointer string `json:"pointer"`
	// Kind is the change kind, "CHG-…".
	Kind Kind `json:"kind"`
	// ChangeID is Kind plus the first 8 hex digits of
	// sha256(tool, NUL, pointer): stable across runs and reorderings.
	ChangeID string `json:"change"`
	// RuleID is the BRK-* rule that graded the change.
	RuleID    string          `json:"rule"`
	Severity  report.Severity `json:"severity"`
	Breaking  bool            `json:"breaking"`
	Direction Direction       `json:"direction"`
	// Message describes the change with schema values only.
	Message string `json:"message"`
	// Verdict is, for a change inside a schema, whether it lets through a
	// value the receiving side rejects: compatible, breaking or
	// undetermined (grade.go); empty for other changes.
	Verdict string `json:"verdict,omitempty"`
	// Witness is, for a breaking (or format-dependent) change, the value
	// that shows it: an instance pointer and the value placed there, built
	// from the schemas alone.
	Witness string `json:"witness,omitempty"`
}

// Diff classifies every difference between two tool sets, matched by tool
// name. The result is sorted by tool, pointer and kind, and is empty when
// the sets are equal up to key order, tool order and number spelling.
func Diff(oldTools, newTools []mcp.Tool) []Change {
	out, _ := diffContext(context.Background(), oldTools, newTools)
	return out
}

// ctxStride is how many tools a comparison handles between two looks at
// its context: often enough that a deadline stops 100,000 tools within
// milliseconds, rarely enough to cost nothing.
const ctxStride = 64

// diffContext is Diff under ctx: once ctx ends it stops between two tools
// and returns ctx's error (and no changes: a partial comparison would read
// as "nothing else changed").
func diffContext(ctx context.Context, oldTools, newTools []mcp.Tool) ([]Change, error) {
	oldBy := indexTools(oldTools)
	newBy := indexTools(newTools)
	var out []Change
	i := 0
	for name, o := range oldBy {
		if i%ctxStride == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		i++
		n, ok := newBy[name]
		if !ok {
			out = append(out, newChange(name, "", KindToolRemoved, directionTool, condNone,
				fmt.Sprintf("tool %q removed", name)))
			continue
		}
		out = append(out, diffTool(ctx, o, n)...)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for name := range newBy {
		if _, ok := oldBy[name]; !ok {
			out = append(out, newChange(name, "", KindToolAdded, directionTool, condNone,
				fmt.Sprintf("tool %q added", name)))
		}
	}
	sortChanges(out)
	return out, nil
}

// Unlisted regrades a removed tool that the new side still lists under
// another configuration, or whose listing under one was not established:
// "no longer listed by default" (BRK-TOOL-UNLISTED), never "removed". how
// says which (for the message); c is returned unchanged when it is not a
// removed tool.
func Unlisted(c Change, how string) Change {
	if c.Kind != KindToolRemoved {
		return c
	}
	return newChange(c.Tool, c.Pointer, c.Kind, c.Direction, condUnlisted,
		fmt.Sprintf("tool %q no longer listed by default (%s)", c.Tool, how))
}

// sortChanges orders changes by tool, pointer, kind and message.
func sortChanges(cs []Change) {
	slices.SortFunc(cs, func(a, b Change) int {
		return cmp.Or(cmp.Compare(a.Tool, b.Tool), cmp.Compare(a.Pointer, b.Pointer),
			cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Message, b.Message))
	})
}

func indexTools(ts []mcp.Tool) map[string]mcp.Tool {
	m := make(map[string]mcp.Tool, len(ts))
	for _, t := range ts {
		if _, dup := m[t.Name]; !dup { // the first of a duplicated name wins
			m[t.Name] = t
		}
	}
	return m
}

// DiffTool classifies the differences between two versions of one tool.
// Names are not compared.
func DiffTool(o, n mcp.Tool) []Change {
	return diffTool(context.Background(), o, n)
}

// diffTool is DiffTool under ctx: the witness searches of grading stop
// when it ends (what they did not establish is then undetermined).
func diffTool(ctx context.Context, o, n mcp.Tool) []Change {
	d := &differ{tool: n.Name, oldIndex: map[string]int{}}
	if o.Description != n.Description {
		d.add("/description", KindDescriptionChanged, directionTool, condNone, "tool description changed")
	}
	if o.Title != n.Title {
		d.add("/title", kindTitleChanged, directionTool, condNone, "tool title changed")
	}
	d.annotations(o.AnnotationsValue(), n.AnnotationsValue())

	var sides []*side
	d.dir = directionInput
	oi, ni := o.InputSchemaValue(), n.InputSchemaValue()
	if oi == nil {
		oi = map[string]any{}
	}
	if ni == nil {
		ni = map[string]any{}
	}
	if !equalJSON(oi, ni) {
		in := newSide(directionInput, "/inputSchema", oi, ni)
		d.schema(in.root, in.oldX, in.newX, 0)
		sides = append(sides, in)
	}

	d.dir = directionOutput
	oo, no := o.OutputSchemaValue(), n.OutputSchemaValue()
	switch {
	case oo != nil && no == nil:
		d.add("/outputSchema", kindOutputSchemaRemoved, directionTool, condNone, "outputSchema removed")
	case oo == nil && no != nil:
		d.add("/outputSchema", kindOutputSchemaAdded, directionTool, condNone, "outputSchema added")
	case oo != nil && !equalJSON(oo, no):
		out := newSide(directionOutput, "/outputSchema", oo, no)
		d.schema(out.root, out.oldX, out.newX, 0)
		sides = append(sides, out)
	}
	for _, sd := range sides {
		d.grade(ctx, sd)
	}
	sortChanges(d.out)
	return d.out
}

// newChange builds a graded change.
func newChange(tool, ptr string, k Kind, dir Direction, cond, msg string) Change {
	g, ok := lookupGrade(k, dir, cond)
	if !ok { // every emitted kind has a row; this is a programming error
		g = grade{rule: "BRK-UNGRADED", sev: report.SeverityWarn}
	}
	sum := sha256.Sum256([]byte(tool + "\x00" + ptr))
	return Change{
		Tool: tool, Pointer: ptr, Kind: k,
		ChangeID:  string(k) + "-" + hex.EncodeToString(sum[:4]),
		RuleID:    g.rule,
		Severity:  g.sev,
		Breaking:  g.sev == report.SeverityError,
		Direction: dir,
		Message:   msg,
	}
}

type differ struct {
	tool string
	dir  Direction
	out  []Change
	// node is the pointer of the schema being compared; nodes holds, for
	// each change in out, the node it was found at.
	node  string
	nodes []string
	// oldIndex maps the pointer of an anyOf/oneOf/allOf branch compared
	// member by member (one branch left, one arrived) to the old branch's
	// index; the pointer carries the new one.
	oldIndex map[string]int
}

func (d *differ) add(ptr string, k Kind, dir Direction, cond, msg string) {
	d.out = append(d.out, newChange(d.tool, ptr, k, dir, cond, msg))
	d.nodes = append(d.nodes, d.node)
}

// emit records a change on the current schema side.
func (d *differ) emit(ptr string, k Kind, cond, format string, a ...any) {
	d.add(ptr, k, d.dir, cond, fmt.Sprintf(format, a...))
}

// hintDefaults are the specification defaults of the boolean hints.
var hintDefaults = map[string]bool{
	"readOnlyHint":    false,
	"destructiveHint": true,
	"idempotentHint":  false,
	"openWorldHint":   true,
}

func (d *differ) annotations(o, n map[string]any) {
	for _, k := range unionKeys(o, n) {
		ov, oOK := o[k]
		nv, nOK := n[k]
		if oOK == nOK && equalJSON(ov, nv) {
			continue
		}
		ptr := joinPointer("/annotations", k)
		def, isHint := hintDefaults[k]
		if !isHint {
			d.add(ptr, kindAnnotationChanged, directionTool, condOther,
				fmt.Sprintf("annotation %s changed", k))
			continue
		}
		effective := func(v any, ok bool) (bool, bool) {
			if !ok || v == nil {
				return def, true
			}
			b, isBool := v.(bool)
			return b, isBool
		}
		ob, oValid := effective(ov, oOK)
		nb, nValid := effective(nv, nOK)
		show := func(v any, ok bool) string {
			if !ok || v == nil {
				return "undeclared"
			}
			return short(v)
		}
		msg := fmt.Sprintf("%s %s -> %s", k, show(ov, oOK), show(nv, nOK))
		switch {
		case oValid && nValid && ob == nb:
			d.add(ptr, kindAnnotationChanged, directionTool, condDeclaration, msg+" (same effective value)")
		case k == "openWorldHint":
			d.add(ptr, kindAnnotationChanged, directionTool, condOpenWorld, msg)
		default:
			d.add(ptr, kindAnnotationChanged, directionTool, condHint, msg)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// unionKeys returns the keys present in a or b, sorted, each once.
func unionKeys[V any](a, b map[string]V) []string {
	ks := slices.Sorted(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			ks = append(ks, k)
		}
	}
	slices.Sort(ks)
	return ks
}

// onlyIn returns the keys of a that b lacks, sorted.
func onlyIn[V any](a, b map[string]V) []string {
	var ks []string
	for _, k := range sortedKeys(a) {
		if _, ok := b[k]; !ok {
			ks = append(ks, k)
		}
	}
	return ks
}

// maxDepth bounds schema recursion.
const maxDepth = 64

// asSchema turns a boolean schema into its object form: true is {}, false
// is {"not": {}}.
func asSchema(v any) (map[string]any, bool) {
	switch x := v.(type) {
	case map[string]any:
		return x, true
	case bool:
		if x {
			return map[string]any{}, true
		}
		return map[string]any{"not": map[string]any{}}, true
	}
	return nil, false
}

// handled lists the keywords the classifier grades itself; ignored lists
// keywords that carry no validation (and $defs, seen through $ref).
var (
	handled = map[string]bool{
		"type": true, "properties": true, "required": true, "additionalProperties": true,
		"items": true, "prefixItems": true, "enum": true, "const": true, "pattern": true,
		"format": true, "default": true, "anyOf": true, "oneOf": true, "allOf": true,
		"description": true, "uniqueItems": true, "multipleOf": true,
		"minimum": true, "exclusiveMinimum": true, "minLength": true, "minItems": true,
		"minProperties": true, "minContains": true, "maximum": true, "exclusiveMaximum": true,
		"maxLength": true, "maxItems": true, "maxProperties": true, "maxContains": true,
	}
	ignored = map[string]bool{
		"title": true, "examples": true, "$comment": true, "$schema": true, "$id": true,
		"$anchor": true, "$dynamicAnchor": true, "$defs": true, "definitions": true,
		"$vocabulary": true, "deprecated": true, "readOnly": true, "writeOnly": true,
	}
	lowerBounds = []string{"minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties", "minContains"}
	upperBounds = []string{"maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties", "maxContains"}
)

// schema compares two (ref-expanded) schemas at a pointer.
func (d *differ) schema(ptr string, a, b any, depth int) {
	if equalJSON(a, b) {
		return
	}
	defer func(parent string) { d.node = parent }(d.node)
	d.node = ptr
	if depth >= maxDepth {
		d.emit(ptr, kindSchemaTooDeep, condNone, "schemas differ below the depth limit")
		return
	}
	am, aOK := asSchema(a)
	bm, bOK := asSchema(b)
	if !aOK || !bOK {
		d.emit(ptr, kindKeywordChanged, condNone, "schema changed (not a JSON Schema object)")
		return
	}
	d.types(ptr, am, bm)
	d.properties(ptr, am, bm, depth)
	d.additional(ptr, am, bm, depth)
	d.items(ptr, am, bm, depth)
	d.enum(ptr, am, bm)
	d.bounds(ptr, am, bm)
	d.keyword(ptr, am, bm, "pattern", kindPatternChanged, kindConstraintTightened, kindConstraintLoosened)
	d.keyword(ptr, am, bm, "format", kindFormatChanged, kindConstraintTightened, kindConstraintLoosened)
	d.simple(ptr, am, bm)
	d.branches(ptr, am, bm, "anyOf", depth)
	d.branches(ptr, am, bm, "oneOf", depth)
	d.branches(ptr, am, bm, "allOf", depth)
	d.others(ptr, am, bm)
}

// --- type ---

var allTypes = []string{"array", "boolean", "null", "number", "object", "string"}

func typeSet(m map[string]any) (map[string]bool, bool) {
	set := map[string]bool{}
	switch t := m["type"].(type) {
	case nil:
		if _, present := m["type"]; present {
			return nil, false
		}
		for _, x := range allTypes {
			set[x] = true
		}
	case string:
		set[t] = true
	case []any:
		for _, e := range t {
			s, ok := e.(string)
			if !ok {
				return nil, false
			}
			set[s] = true
		}
	default:
		return nil, false
	}
	return set, true
}

func accepts(set map[string]bool, t string) bool {
	return set[t] || (t == "integer" && set["number"])
}

func subset(a, b map[string]bool) bool {
	for t := range a {
		if !accepts(b, t) {
			return false
		}
	}
	return true
}

func typeString(m map[string]any) string {
	if _, ok := m["type"]; !ok {
		return "any"
	}
	return short(m["type"])
}

func (d *differ) types(ptr string, a, b map[string]any) {
	if equalJSON(a["type"], b["type"]) {
		return
	}
	as, aOK := typeSet(a)
	bs, bOK := typeSet(b)
	p := joinPointer(ptr, "type")
	msg := fmt.Sprintf("type %s -> %s", typeString(a), typeString(b))
	switch {
	case !aOK || !bOK:
		d.emit(p, kindTypeChanged, condNone, "%s", msg)
	case subset(as, bs) && subset(bs, as):
		// Same accepted set spelled differently (e.g. ["integer","number"]).
	case subset(as, bs):
		d.emit(p, kindTypeWidened, condNone, "%s", msg)
	case subset(bs, as):
		d.emit(p, kindTypeNarrowed, condNone, "%s", msg)
	default:
		d.emit(p, kindTypeChanged, condNone, "%s", msg)
	}
}

// --- properties and required ---

func requiredSet(m map[string]any) map[string]bool {
	set := map[string]bool{}
	if r, ok := m["required"].([]any); ok {
		for _, e := range r {
			if s, ok := e.(string); ok {
				set[s] = true
			}
		}
	}
	return set
}

func propsOf(m map[string]any) map[string]any {
	p, _ := m["properties"].(map[string]any)
	return p
}

// withoutDocs drops description and title from a schema object, for the
// rename comparison.
func withoutDocs(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	c := make(map[string]any, len(m))
	for k, x := range m {
		if k != "description" && k != "title" {
			c[k] = x
		}
	}
	return c
}

func (d *differ) properties(ptr string, a, b map[string]any, depth int) {
	ap, bp := propsOf(a), propsOf(b)
	ar, br := requiredSet(a), requiredSet(b)
	removed, added := onlyIn(ap, bp), onlyIn(bp, ap)
	if len(removed) == 1 && len(added) == 1 && equalJSON(withoutDocs(ap[removed[0]]), withoutDocs(bp[added[0]])) {
		o, n := removed[0], added[0]
		d.emit(joinPointer(ptr, "properties", n), kindPropertyRenamed, condNone, "property %q renamed to %q", o, n)
		removed, added = nil, nil
	}
	for _, k := range removed {
		cond := condOptional
		if ar[k] {
			cond = condRequired
		}
		d.emit(joinPointer(ptr, "properties", k), kindPropertyRemoved, cond, "%s property %q removed", cond, k)
	}
	for _, k := range added {
		cond := condOptional
		if br[k] {
			cond = condRequired
		}
		d.emit(joinPointer(ptr, "properties", k), kindPropertyAdded, cond, "%s property %q added", cond, k)
	}
	for _, k := range sortedKeys(ap) {
		if bv, ok := bp[k]; ok {
			d.schema(joinPointer(ptr, "properties", k), ap[k], bv, depth+1)
		}
	}
	// Required-ness of names present on both sides (declared as properties
	// on both, or undeclared on both).
	for _, k := range unionKeys(ar, br) {
		_, inA := ap[k]
		_, inB := bp[k]
		if inA != inB {
			continue // reported as added, removed or renamed
		}
		p := joinPointer(ptr, "properties", k)
		if !inA {
			p = joinPointer(ptr, "required")
		}
		switch {
		case !ar[k] && br[k]:
			d.emit(p, kindRequiredAdded, condNone, "property %q became required", k)
		case ar[k] && !br[k]:
			d.emit(p, kindRequiredRemoved, condNone, "property %q became optional", k)
		}
	}
}

// --- additionalProperties ---

// openness ranks an additionalProperties value: 0 closed (false), 1 a
// schema, 2 open (absent or true).
func openness(m map[string]any) int {
	v, ok := m["additionalProperties"]
	if !ok {
		return 2
	}
	switch x := v.(type) {
	case bool:
		if x {
			return 2
		}
		return 0
	}
	return 1
}

func (d *differ) additional(ptr string, a, b map[string]any, depth int) {
	av, bv := a["additionalProperties"], b["additionalProperties"]
	ao, bo := openness(a), openness(b)
	p := joinPointer(ptr, "additionalProperties")
	names := map[int]string{0: "false", 1: "a schema", 2: "open"}
	switch {
	case ao == 1 && bo == 1:
		d.schema(p, av, bv, depth+1)
	case bo < ao:
		d.emit(p, kindAdditionalTightened, condNone, "additionalProperties %s -> %s", names[ao], names[bo])
	case bo > ao:
		d.emit(p, kindAdditionalLoosened, condNone, "additionalProperties %s -> %s", names[ao], names[bo])
	}
}

// --- items and prefixItems ---

func (d *differ) items(ptr string, a, b map[string]any, depth int) {
	d.subschema(joinPointer(ptr, "items"), a, b, "items", depth)
	ap, _ := a["prefixItems"].([]any)
	bp, _ := b["prefixItems"].([]any)
	if equalJSON(a["prefixItems"], b["prefixItems"]) {
		return
	}
	for i := 0; i < min(len(ap), len(bp)); i++ {
		d.schema(joinPointer(ptr, "prefixItems", fmt.Sprint(i)), ap[i], bp[i], depth+1)
	}
	p := joinPointer(ptr, "prefixItems")
	switch {
	case len(bp) > len(ap):
		d.emit(p, kindConstraintTightened, condNone, "prefixItems grew from %d to %d positions", len(ap), len(bp))
	case len(bp) < len(ap):
		d.emit(p, kindConstraintLoosened, condNone, "prefixItems shrank from %d to %d positions", len(ap), len(bp))
	}
}

// subschema compares a keyword holding one schema, where absence means
// "anything": appearing tightens, disappearing loosens.
func (d *differ) subschema(p string, a, b map[string]any, kw string, depth int) {
	av, aOK := a[kw]
	bv, bOK := b[kw]
	switch {
	case aOK && bOK:
		d.schema(p, av, bv, depth+1)
	case bOK:
		d.emit(p, kindConstraintTightened, condNone, "%s added", kw)
	case aOK:
		d.emit(p, kindConstraintLoosened, condNone, "%s removed", kw)
	}
}

// --- enum and const ---

func (d *differ) enum(ptr string, a, b map[string]any) {
	p := joinPointer(ptr, "enum")
	av, aOK := a["enum"].([]any)
	bv, bOK := b["enum"].([]any)
	_, aHas := a["enum"]
	_, bHas := b["enum"]
	switch {
	case aHas && bHas && aOK && bOK:
		aset, bset := valueSet(av), valueSet(bv)
		removed, added := onlyIn(aset, bset), onlyIn(bset, aset)
		if len(removed) > 0 {
			d.emit(p, kindEnumValueRemoved, condNone, "enum value(s) removed: %s", listValues(removed))
		}
		if len(added) > 0 {
			d.emit(p, kindEnumValueAdded, condNone, "enum value(s) added: %s", listValues(added))
		}
	case aHas && bHas:
		if !equalJSON(a["enum"], b["enum"]) {
			d.emit(p, kindKeywordChanged, condNone, "enum changed (not an array)")
		}
	case bHas:
		d.emit(p, kindConstraintTightened, condNone, "enum added")
	case aHas:
		d.emit(p, kindConstraintLoosened, condNone, "enum removed")
	}

	d.keyword(ptr, a, b, "const", kindConstChanged, kindConstraintTightened, kindConstraintLoosened)
}

// valueSet keys values by their canonical encoding (so 1 and true differ,
// and 1 and 1.0 do not).
func valueSet(vs []any) map[string]any {
	m := make(map[string]any, len(vs))
	for _, v := range vs {
		m[string(canonical(v))] = v
	}
	return m
}

func listValues(ks []string) string {
	const maxShown = 5
	shown := ks
	if len(shown) > maxShown {
		shown = shown[:maxShown]
	}
	var parts []string
	for _, k := range shown {
		if len(k) > 48 {
			k = k[:45] + "..."
		}
		parts = append(parts, k)
	}
	s := strings.Join(parts, ", ")
	if len(ks) > maxShown {
		s += fmt.Sprintf(" and %d more", len(ks)-maxShown)
	}
	return s
}

// --- numeric bounds, multipleOf, uniqueItems ---

func (d *differ) bounds(ptr string, a, b map[string]any) {
	for _, kw := range append(append([]string{}, lowerBounds...), upperBounds...) {
		lower := slices.Contains(lowerBounds, kw)
		av, aOK := a[kw]
		bv, bOK := b[kw]
		p := joinPointer(ptr, kw)
		switch {
		case aOK && bOK:
			x, xOK := jsonvalue.Number(av)
			y, yOK := jsonvalue.Number(bv)
			if !xOK || !yOK {
				if !equalJSON(av, bv) {
					d.emit(p, kindKeywordChanged, condNone, "%s changed (not a number)", kw)
				}
				continue
			}
			if x == y {
				continue
			}
			msg := fmt.Sprintf("%s %s -> %s", kw, short(av), short(bv))
			if (lower && y > x) || (!lower && y < x) {
				d.emit(p, kindConstraintTightened, condNone, "%s", msg)
			} else {
				d.emit(p, kindConstraintLoosened, condNone, "%s", msg)
			}
		case bOK:
			d.emit(p, kindConstraintTightened, condNone, "%s %s added", kw, short(bv))
		case aOK:
			d.emit(p, kindConstraintLoosened, condNone, "%s %s removed", kw, short(av))
		}
	}

	p := joinPointer(ptr, "multipleOf")
	av, aOK := a["multipleOf"]
	bv, bOK := b["multipleOf"]
	switch {
	case aOK && bOK:
		x, xOK := jsonvalue.Number(av)
		y, yOK := jsonvalue.Number(bv)
		switch {
		case !xOK || !yOK || x <= 0 || y <= 0:
			if !equalJSON(av, bv) {
				d.emit(p, kindKeywordChanged, condNone, "multipleOf changed (not a positive number)")
			}
		case x == y:
		case isWholeMultiple(y, x):
			d.emit(p, kindConstraintTightened, condNone, "multipleOf %s -> %s", short(av), short(bv))
		case isWholeMultiple(x, y):
			d.emit(p, kindConstraintLoosened, condNone, "multipleOf %s -> %s", short(av), short(bv))
		default:
			d.emit(p, kindConstraintChanged, condNone, "multipleOf %s -> %s", short(av), short(bv))
		}
	case bOK:
		d.emit(p, kindConstraintTightened, condNone, "multipleOf %s added", short(bv))
	case aOK:
		d.emit(p, kindConstraintLoosened, condNone, "multipleOf %s removed", short(av))
	}

	au, _ := a["uniqueItems"].(bool)
	bu, _ := b["uniqueItems"].(bool)
	p = joinPointer(ptr, "uniqueItems")
	switch {
	case !au && bu:
		d.emit(p, kindConstraintTightened, condNone, "uniqueItems now true")
	case au && !bu:
		d.emit(p, kindConstraintLoosened, condNone, "uniqueItems no longer true")
	}
}

// isWholeMultiple reports whether x is a whole multiple of y (y > 0).
func isWholeMultiple(x, y float64) bool {
	q := x / y
	return q >= 1 && q == float64(int64(q))
}

// --- pattern, format ---

// keyword compares a keyword whose value is compared whole (pattern, format,
// const, default): a different value is changed, one only in b is added and
// one only in a is removed.
func (d *differ) keyword(ptr string, a, b map[string]any, kw string, changed, added, removed Kind) {
	av, aOK := a[kw]
	bv, bOK := b[kw]
	p := joinPointer(ptr, kw)
	switch {
	case aOK && bOK:
		if !equalJSON(av, bv) {
			d.emit(p, changed, condNone, "%s %s -> %s", kw, short(av), short(bv))
		}
	case bOK:
		d.emit(p, added, condNone, "%s %s added", kw, short(bv))
	case aOK:
		d.emit(p, removed, condNone, "%s %s removed", kw, short(av))
	}
}

// --- default, description ---

func (d *differ) simple(ptr string, a, b map[string]any) {
	d.keyword(ptr, a, b, "default", kindDefaultChanged, kindDefaultChanged, kindDefaultChanged)
	if !equalJSON(a["description"], b["description"]) {
		d.emit(joinPointer(ptr, "description"), kindSchemaDescriptionChg, condNone, "description changed")
	}
}

// --- anyOf / oneOf / allOf as sets ---

func (d *differ) branches(ptr string, a, b map[string]any, kw string, depth int) {
	if equalJSON(a[kw], b[kw]) {
		return
	}
	p := joinPointer(ptr, kw)
	ab, aArr := a[kw].([]any)
	bb, bArr := b[kw].([]any)
	_, aHas := a[kw]
	_, bHas := b[kw]
	if (aHas && !aArr) || (bHas && !bArr) {
		d.emit(p, kindKeywordChanged, condNone, "%s changed (not an array)", kw)
		return
	}
	goneKind, freshKind := kindVariantRemoved, kindVariantAdded
	if kw == "allOf" { // every branch must hold: a new branch tightens
		goneKind, freshKind = kindConstraintLoosened, kindConstraintTightened
	}
	if !aHas {
		d.emit(p, kindConstraintTightened, condNone, "%s added", kw)
		return
	}
	if !bHas {
		d.emit(p, kindConstraintLoosened, condNone, "%s removed", kw)
		return
	}
	akeys := make([]string, len(ab))
	bkeys := make([]string, len(bb))
	inB := map[string]bool{}
	inA := map[string]bool{}
	for i, v := range ab {
		akeys[i] = string(canonical(v))
		inA[akeys[i]] = true
	}
	for i, v := range bb {
		bkeys[i] = string(canonical(v))
		inB[bkeys[i]] = true
	}
	var gone, fresh []int
	for i, k := range akeys {
		if !inB[k] {
			gone = append(gone, i)
		}
	}
	for i, k := range bkeys {
		if !inA[k] {
			fresh = append(fresh, i)
		}
	}
	if len(gone) == 1 && len(fresh) == 1 {
		child := joinPointer(p, fmt.Sprint(fresh[0]))
		d.oldIndex[child] = gone[0]
		d.schema(child, ab[gone[0]], bb[fresh[0]], depth+1)
		return
	}
	for _, i := range gone {
		d.emit(joinPointer(p, fmt.Sprint(i)), goneKind, condNone, "%s branch %d removed", kw, i)
	}
	for _, i := range fresh {
		d.emit(joinPointer(p, fmt.Sprint(i)), freshKind, condNone, "%s branch %d added", kw, i)
	}
}

// --- everything else ---

func (d *differ) others(ptr string, a, b map[string]any) {
	for _, k := range unionKeys(a, b) {
		if handled[k] || ignored[k] {
			continue
		}
		av, aOK := a[k]
		bv, bOK := b[k]
		if aOK == bOK && equalJSON(av, bv) {
			continue
		}
		what := "changed"
		switch {
		case !aOK:
			what = "added"
		case !bOK:
			what = "removed"
		}
		d.emit(joinPointer(ptr, k), kindKeywordChanged, condNone, "keyword %s %s", k, what)
	}
}
