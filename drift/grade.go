package drift

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/mcpdrill/mcpdrill/internal/jsonschema"
	"github.com/mcpdrill/mcpdrill/internal/jsonvalue"
	"github.com/mcpdrill/mcpdrill/report"
)

// Grading a schema change by the instances it affects.
//
// A change of an input schema is breaking when some instance a client
// sends, following the old schema, is rejected by the new one; a change of
// an output schema is breaking when the new schema admits an instance the
// old one did not (a client relying on the old guarantees meets it). Both
// are one question, "is every instance of S an instance of T?", with the
// sender's schema S and the receiver's T: for input S is the old schema and
// T the new, for output S is the new and T the old. A sender sends only the
// members it was told of: S is read with its objects that declare members
// closed to undeclared ones (jsonschema.CloseUndeclared).
//
// Every change the differ finds inside a schema gets a verdict:
//
//   - compatible, when the procedure proves that the change lets no
//     instance of S past that T rejects: a schema enclosing it, reached
//     from the root through properties, items, prefixItems,
//     additionalProperties, anyOf or allOf only (not through a oneOf branch,
//     where admitting more can make two branches match), is proved to
//     include S's in T's (jsonschema.Includes: for example, the old schema
//     kept as a branch of the new anyOf); or the change only widens T on
//     its own (a type widened, a bound relaxed, an enum value added, a
//     member no longer required, an object opened, an anyOf branch added,
//     for input; the mirror for output) and sits on such a path;
//   - breaking, when a witness was found: an instance of S, built at the
//     change's place inside an instance of T, that T rejects at that place,
//     confirmed by validating the whole instance against both schemas as
//     they were written (references resolved by the validator);
//   - undetermined otherwise, and when the only witness found is rejected
//     by T only if "format" is asserted (JSON Schema 2020-12 makes format an
//     annotation; validators differ).
//
// A change's verdict picks its rule: the kind's own rule when the verdict
// agrees with its severity (error means breaking), BRK-IN-COVERED or
// BRK-OUT-COVERED for a change of a breaking kind proved compatible,
// BRK-IN-PROPERTY-UNDECLARED for an input property no longer declared that
// the new schema still accepts as an undeclared member, BRK-IN-NARROWED or
// BRK-OUT-WIDENED for a change of a kind that is not breaking in itself
// (an ungraded keyword, a oneOf branch) for which a witness was found, and
// BRK-IN-UNDETERMINED or BRK-OUT-UNDETERMINED for the rest.
//
// Abuse list (schemas are server-controlled text): recursive $refs (the
// expansion keeps them in place and the side is then graded without
// proofs, witnesses only); $ref siblings the expansion merges unlike a
// validator (same); huge enums, deep nesting and costly patterns (the
// prover's step, depth and compile caps; synthesis under a budget; a
// bounded number of candidates and validations per change; the context
// between searches); witnesses that would quote secrets (a witness is
// built from the schemas alone, never from a tool result).

// Verdicts of a change inside a schema.
const (
	verdictCompatible   = "compatible"
	verdictBreaking     = "breaking"
	VerdictUndetermined = "undetermined"
)

// side is one schema side of one tool being compared: its pointer, the
// two schemas as written and with local references expanded.
type side struct {
	dir        Direction
	root       string
	oldRaw     any
	newRaw     any
	oldX, newX any
	// faithful is false when the expansion may not mean what the
	// validator reads (a reference left in place, or one with asserting
	// siblings): proofs are then not attempted.
	faithful bool
}

func newSide(dir Direction, root string, oldRaw, newRaw any) *side {
	sd := &side{dir: dir, root: root, oldRaw: oldRaw, newRaw: newRaw,
		oldX: jsonschema.ExpandRefs(oldRaw), newX: jsonschema.ExpandRefs(newRaw)}
	sd.faithful = plainRefs(oldRaw) && plainRefs(newRaw) && !hasRef(sd.oldX) && !hasRef(sd.newX) &&
		equalJSON(schemaDialect(oldRaw), schemaDialect(newRaw))
	return sd
}

func schemaDialect(v any) any {
	if m, ok := v.(map[string]any); ok {
		return m["$schema"]
	}
	return nil
}

// refKeys are the reference keywords.
var refKeys = []string{"$ref", "$dynamicRef", "$recursiveRef"}

// hasRef reports whether a reference is left anywhere in v.
func hasRef(v any) bool {
	c := canonical(v)
	for _, k := range refKeys {
		if bytes.Contains(c, []byte(`"`+k+`"`)) {
			return true
		}
	}
	return false
}

// plainRefs reports whether no reference in v has an asserting sibling
// (which the expansion would merge, siblings winning, where a validator
// applies both, or in draft 7 only the reference).
func plainRefs(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		isRef := false
		for _, k := range refKeys {
			if _, ok := x[k]; ok {
				isRef = true
			}
		}
		for k, sub := range x {
			if isRef && !ignored[k] && k != "description" && k != "default" && k != "$ref" && k != "$dynamicRef" && k != "$recursiveRef" {
				return false
			}
			if !plainRefs(sub) {
				return false
			}
		}
	case []any:
		for _, sub := range x {
			if !plainRefs(sub) {
				return false
			}
		}
	}
	return true
}

// senderIsOld reports whether the old schema is the sender's on this side.
func (sd *side) senderIsOld() bool { return sd.dir == directionInput }

// step is one move from a schema to a subschema along a node's pointer.
type step struct {
	kw       string // properties, additionalProperties, items, prefixItems, anyOf, oneOf, allOf
	key      string // the property name
	old, new int    // the position on each side (prefixItems, branches)
}

// pathOf turns a node pointer below the side's root into steps.
func (sd *side) pathOf(node string, oldIndex map[string]int) ([]step, bool) {
	rest := strings.TrimPrefix(node, sd.root)
	toks, ok := jsonvalue.SplitPointer(rest)
	if !ok {
		return nil, false
	}
	var out []step
	prefix := sd.root
	for i := 0; i < len(toks); i++ {
		kw := toks[i]
		prefix = joinPointer(prefix, kw)
		switch kw {
		case "additionalProperties", "items":
			out = append(out, step{kw: kw})
		case "properties", "prefixItems", "anyOf", "oneOf", "allOf":
			if i+1 >= len(toks) {
				return nil, false
			}
			i++
			prefix = joinPointer(prefix, toks[i])
			st := step{kw: kw, key: toks[i]}
			if kw != "properties" {
				n, err := strconv.Atoi(toks[i])
				if err != nil {
					return nil, false
				}
				st.old, st.new = n, n
				if o, ok := oldIndex[prefix]; ok {
					st.old = o
				}
			}
			out = append(out, st)
		default:
			return nil, false
		}
	}
	return out, true
}

// at follows steps from a schema, on the old or the new side.
func at(v any, path []step, old bool) (any, bool) {
	for _, st := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		switch st.kw {
		case "properties":
			props, _ := m["properties"].(map[string]any)
			if v, ok = props[st.key]; !ok {
				return nil, false
			}
		case "additionalProperties", "items":
			if v, ok = m[st.kw]; !ok {
				return nil, false
			}
		default:
			arr, _ := m[st.kw].([]any)
			i := st.new
			if old {
				i = st.old
			}
			if i < 0 || i >= len(arr) {
				return nil, false
			}
			v = arr[i]
		}
	}
	return v, true
}

// monotone reports whether admitting more at the end of path can only make
// the root admit more: no oneOf branch on the way.
func monotone(path []step) bool {
	for _, st := range path {
		if st.kw == "oneOf" {
			return false
		}
	}
	return true
}

// schemaKind reports whether a change kind concerns what a schema admits
// (and so gets a verdict).
func schemaKind(k Kind) bool {
	switch k {
	case kindDefaultChanged, kindSchemaDescriptionChg, kindSchemaTooDeep:
		return false
	}
	return true
}

// widensAlone reports whether a change of kind k at keyword kw, on its
// own, lets the receiver accept everything it accepted: on the input side
// the new schema admits more, on the output side it admits less.
func widensAlone(k Kind, kw string, dir Direction) bool {
	var widens, narrows bool
	switch k {
	case kindTypeWidened, kindRequiredRemoved, kindEnumValueAdded, kindAdditionalLoosened:
		widens = true
	case kindTypeNarrowed, kindRequiredAdded, kindEnumValueRemoved, kindAdditionalTightened:
		narrows = true
	case kindConstraintLoosened:
		widens = kw != "prefixItems"
	case kindConstraintTightened:
		narrows = kw != "prefixItems"
	case kindVariantAdded:
		widens = kw == "anyOf"
	case kindVariantRemoved:
		narrows = kw == "anyOf"
	}
	if dir == directionInput {
		return widens
	}
	return narrows
}

// keywordOf names the keyword a change is about, from its pointer below
// the node it was found at ("" for the node itself), and the member it
// names: a property change points at node/properties/NAME, a required-ness
// change there too, or at node/required when the name is not a declared
// property (its message names it then).
func keywordOf(c Change, node string) (kw, member string) {
	toks, ok := jsonvalue.SplitPointer(strings.TrimPrefix(c.Pointer, node))
	if !ok || len(toks) == 0 {
		return "", ""
	}
	kw = toks[0]
	if len(toks) > 1 {
		member = toks[1]
	}
	if c.Kind == kindRequiredAdded || c.Kind == kindRequiredRemoved {
		if kw == "required" {
			member = propertyNamed(c)
		}
		kw = "required"
	}
	return kw, member
}

// grade gives every schema change of a side its verdict and rule.
func (d *differ) grade(ctx context.Context, sd *side) {
	g := newGrader(ctx, sd, d.oldIndex)
	undecided := false
	for i := range d.out {
		c := &d.out[i]
		if c.Direction != sd.dir || !strings.HasPrefix(c.Pointer, sd.root) {
			continue
		}
		if c.Kind == kindSchemaTooDeep {
			undecided = true
			continue
		}
		if !schemaKind(c.Kind) {
			continue
		}
		v, w := g.verdict(*c, d.nodes[i])
		applyVerdict(c, v, w, g.declaredInReceiver(*c, d.nodes[i]))
		if v != verdictCompatible {
			undecided = true
		}
	}
	if undecided || g.rootProved() {
		return
	}
	// Every change was shown compatible, yet the root is not proved: the
	// differ does not see a recursive reference's definitions or the
	// dialect, so when the side has those, it says what the whole allows.
	if sd.faithful {
		return
	}
	d.node = sd.root
	d.add(sd.root, kindKeywordChanged, sd.dir, condNone, "the schemas differ where the comparison does not look (definitions behind a recursive reference, a reference with siblings, or the dialect)")
	d.nodes[len(d.nodes)-1] = sd.root
	c := &d.out[len(d.out)-1]
	w, formatOnly := g.search().find(nil, "", nil)
	switch {
	case w != "":
		applyVerdict(c, verdictBreaking, w, false)
	case formatOnly != "":
		applyVerdict(c, VerdictUndetermined, formatOnly, false)
	default:
		applyVerdict(c, VerdictUndetermined, "", false)
	}
}

// applyVerdict sets a change's verdict, witness and the rule that grades
// it (see the package comment of this file).
func applyVerdict(c *Change, v, witness string, declared bool) {
	c.Verdict, c.Witness = v, witness
	own, _ := lookupGrade(c.Kind, c.Direction, condOf(*c))
	pick := own
	switch v {
	case verdictBreaking:
		if own.sev != report.SeverityError {
			pick, _ = lookupGrade(kindAny, c.Direction, condWitnessed)
		}
	case VerdictUndetermined:
		pick, _ = lookupGrade(kindAny, c.Direction, condUndetermined)
	case verdictCompatible:
		if own.sev == report.SeverityError {
			pick, _ = lookupGrade(kindAny, c.Direction, condCovered)
			if c.Direction == directionInput && !declared && (c.Kind == kindPropertyRemoved || c.Kind == kindPropertyRenamed) {
				pick, _ = lookupGrade(kindAny, c.Direction, condUndeclared)
			}
		}
	}
	c.RuleID, c.Severity, c.Breaking = pick.rule, pick.sev, pick.sev == report.SeverityError
}

// condOf recovers the condition a change was graded under.
func condOf(c Change) string {
	switch {
	case c.Kind == kindPropertyRemoved && c.Direction == directionOutput:
		if strings.HasPrefix(c.Message, condRequired) {
			return condRequired
		}
		return condOptional
	case c.Kind == kindPropertyAdded && c.Direction == directionInput:
		if strings.HasPrefix(c.Message, condRequired) {
			return condRequired
		}
		return condOptional
	}
	return condNone
}

// grader holds what grading one side needs, built as it is needed.
type grader struct {
	ctx      context.Context
	sd       *side
	oldIndex map[string]int
	// s and t are the sender's schema (closed to undeclared members) and
	// the receiver's, references expanded.
	s, t   any
	proved map[string]bool
	root   *bool
	ws     *witnessSearch
}

func newGrader(ctx context.Context, sd *side, oldIndex map[string]int) *grader {
	g := &grader{ctx: ctx, sd: sd, oldIndex: oldIndex, proved: map[string]bool{}}
	if sd.senderIsOld() {
		g.s, g.t = jsonschema.CloseUndeclared(sd.oldX), sd.newX
	} else {
		g.s, g.t = jsonschema.CloseUndeclared(sd.newX), sd.oldX
	}
	return g
}

// nodes returns the sender's and receiver's schemas at path.
func (g *grader) nodes(path []step) (s, t any, ok bool) {
	old := g.sd.senderIsOld()
	s, okS := at(g.s, path, old)
	t, okT := at(g.t, path, !old)
	return s, t, okS && okT
}

// provedAt reports whether the sender's schema at path is proved inside the
// receiver's.
func (g *grader) provedAt(path []step) bool {
	if !g.sd.faithful {
		return false
	}
	key := fmt.Sprint(path)
	if p, ok := g.proved[key]; ok {
		return p
	}
	s, t, ok := g.nodes(path)
	p := ok && jsonschema.Includes(s, t)
	g.proved[key] = p
	return p
}

func (g *grader) rootProved() bool {
	if g.root == nil {
		p := g.provedAt(nil)
		g.root = &p
	}
	return *g.root
}

// verdict decides one change found at node.
func (g *grader) verdict(c Change, node string) (v, witness string) {
	if g.rootProved() {
		return verdictCompatible, ""
	}
	path, ok := g.sd.pathOf(node, g.oldIndex)
	if !ok {
		return VerdictUndetermined, ""
	}
	kw, member := keywordOf(c, node)
	if g.sd.faithful {
		// An enclosing schema on a monotone path proved inside.
		for n := len(path); n >= 0; n-- {
			if monotone(path[:n]) && g.provedAt(path[:n]) {
				return verdictCompatible, ""
			}
		}
		if monotone(path) && widensAlone(c.Kind, kw, c.Direction) {
			return verdictCompatible, ""
		}
		// What the receiver asserts with the change's keyword (or of the
		// change's member) holds of everything the sender sends there.
		if monotone(path) && g.keywordCompatible(path, c, kw, member) {
			return verdictCompatible, ""
		}
	}
	members := []string{member}
	if c.Kind == kindPropertyRenamed {
		members = append(members, propertyNamed(c))
	}
	w, formatOnly := g.search().find(path, kw, members)
	switch {
	case w != "":
		return verdictBreaking, w
	case formatOnly != "":
		return VerdictUndetermined, formatOnly
	}
	return VerdictUndetermined, ""
}

// keywordCompatible proves a change at path by the receiver's keyword (or
// member) alone: every instance of the sender's schema there meets what
// the receiver's asserts with it (jsonschema.KeywordGroup). A rename is
// about two members, both checked.
func (g *grader) keywordCompatible(path []step, c Change, kw, member string) bool {
	s, t, ok := g.nodes(path)
	if !ok || kw == "" {
		return false
	}
	members := []string{member}
	if c.Kind == kindPropertyRenamed {
		members = append(members, propertyNamed(c))
	}
	for _, m := range members {
		part := jsonschema.KeywordGroup(t, kw, m)
		if part == nil || !jsonschema.Includes(s, part) {
			return false
		}
	}
	return true
}

// declaredInReceiver reports whether the member a property change names is
// still declared by the receiving side's schema at the change's node (in
// its properties or any branch of it): a property kept in a branch is not
// one the schema merely tolerates.
func (g *grader) declaredInReceiver(c Change, node string) bool {
	if c.Kind != kindPropertyRemoved && c.Kind != kindPropertyRenamed {
		return false
	}
	path, ok := g.sd.pathOf(node, g.oldIndex)
	if !ok {
		return false
	}
	newNode, ok := at(g.sd.newX, path, false)
	if !ok {
		return false
	}
	name := propertyNamed(c)
	return name != "" && declares(newNode, name, 0)
}

// propertyNamed is the first name quoted in a change's message: the
// removed property, a renamed one's former name, the name that became
// required or optional.
func propertyNamed(c Change) string {
	i := strings.Index(c.Message, `"`)
	if i < 0 {
		return ""
	}
	j := strings.Index(c.Message[i+1:], `"`)
	if j < 0 {
		return ""
	}
	return c.Message[i+1 : i+1+j]
}

// declares reports whether a schema declares a member name, directly or in
// one of its in-place branches.
func declares(v any, name string, depth int) bool {
	m, ok := v.(map[string]any)
	if !ok || depth > maxDepth {
		return false
	}
	if props, ok := m["properties"].(map[string]any); ok {
		if _, ok := props[name]; ok {
			return true
		}
	}
	for _, kw := range []string{"allOf", "anyOf", "oneOf"} {
		if bs, ok := m[kw].([]any); ok {
			for _, b := range bs {
				if declares(b, name, depth+1) {
					return true
				}
			}
		}
	}
	for _, kw := range []string{"then", "else"} {
		if declares(m[kw], name, depth+1) {
			return true
		}
	}
	return false
}
