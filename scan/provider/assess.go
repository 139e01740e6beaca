package provider

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/mcpdrill/mcpdrill/internal/jsonschema"
	"github.com/mcpdrill/mcpdrill/internal/jsonvalue"
)

// schemaPointer is where a tool's input schema sits in the tool object;
// violations are reported relative to the tool.
const schemaPointer = "/inputSchema"

// Outcome is a profile's verdict on a tool.
type Outcome string

// Outcomes.
const (
	// Accepted: no constraint of the profile is broken.
	Accepted Outcome = "accepted"
	// AcceptedWithLoss: the provider takes the tool but ignores keywords
	// of its schema, so the model is not held to them.
	AcceptedWithLoss Outcome = "accepted_with_loss"
	// Rejected: the provider refuses a request carrying the tool.
	Rejected Outcome = "rejected"
)

// Violation is one place a tool breaks a constraint.
type Violation struct {
	// Constraint is the id of the constraint broken.
	Constraint string `json:"constraint"`
	// Pointer locates the violation in the tool object ("/name",
	// "/inputSchema/properties/url/format").
	Pointer string `json:"pointer"`
	Effect  Effect `json:"effect"`
	// Detail says what was found there, in keywords and counts: never a
	// value of the schema but a short format name.
	Detail string `json:"detail,omitempty"`
	// Uncertain: the constraint (or this application of it) rests on
	// sources that disagree or are silent.
	Uncertain bool `json:"uncertain,omitempty"`
	// RepairedBy names the client conversion that repairs this violation
	// before the provider sees the schema ("" when none does), and Repair
	// how: "fix", or "strip" (the keyword removed: a loss).
	RepairedBy string `json:"repaired_by,omitempty"`
	Repair     string `json:"repair,omitempty"`
}

// MaxViolations bounds the violations a verdict lists for each constraint
// (every broken constraint is listed); Omitted counts the rest.
const MaxViolations = 10

// Verdict is one profile's verdict on one tool.
type Verdict struct {
	Profile string  `json:"profile"`
	Outcome Outcome `json:"verdict"`
	// Uncertain: every violation that decides the outcome is uncertain,
	// so the provider may well decide otherwise.
	Uncertain  bool        `json:"uncertain,omitempty"`
	Violations []Violation `json:"violations,omitempty"`
	Omitted    int         `json:"violations_omitted,omitempty"`
	// AfterConversion is the outcome once the profile's conversions have
	// repaired what they repair; set only when it differs from Outcome.
	AfterConversion Outcome `json:"after_conversion,omitempty"`
}

// Converted is the outcome after the profile's conversions.
func (v Verdict) Converted() Outcome { return cmp.Or(v.AfterConversion, v.Outcome) }

// Broken lists, once each and in the profile's order, the constraints the
// verdict's violations break.
func (v Verdict) Broken() []string {
	var out []string
	for _, x := range v.Violations {
		if !slices.Contains(out, x.Constraint) {
			out = append(out, x.Constraint)
		}
	}
	return out
}

// Tool is what a profile grades: the name a provider would be given and
// the input schema as the server listed it (absent: nil or "null").
type Tool struct {
	Name        string
	InputSchema json.RawMessage
}

// walkBudget bounds the nodes the reference-following walk visits.
const walkBudget = 100_000

// tool is a Tool read once for every profile.
type tool struct {
	name    string
	present bool
	doc     any
	// root is the schema when it is an object (nil otherwise).
	root  map[string]any
	nodes []node
	// compileErr is the schema's compile error, if any.
	compileErr error
	// refs are the references the resolving walk met; levels the most
	// object schemas on one path of it, first reached at levelsAt.
	refs             []jsonschema.Ref
	levels           int
	levelsAt         string
	resolvedComplete bool
}

// node is one subschema where it is written.
type node struct {
	obj     map[string]any // nil for a boolean schema
	loc, kw string
}

// read decodes and walks a tool's schema once. The compilation is charged
// to b under ctx.
func read(ctx context.Context, in Tool, b jsonschema.Budget) *tool {
	t := &tool{name: in.Name}
	raw := strings.TrimSpace(string(in.InputSchema))
	if raw == "" || raw == "null" {
		return t
	}
	t.present = true
	doc, err := jsonvalue.DecodeJSON(in.InputSchema)
	if err != nil {
		t.compileErr = err
		return t
	}
	t.doc = doc
	t.root, _ = doc.(map[string]any)
	jsonschema.Walk(doc, func(n jsonschema.Node) bool {
		t.nodes = append(t.nodes, node{obj: n.Object(), loc: n.Pointer, kw: n.Keyword})
		return true
	})
	_, t.compileErr = jsonschema.CompileContext(ctx, in.InputSchema, b)
	// levels[d] is the number of object schemas on the path down to the
	// node last visited at depth d.
	var levels []int
	t.resolvedComplete = jsonschema.WalkResolved(doc, walkBudget, func(n jsonschema.Node) bool {
		l := 0
		if n.Depth > 0 {
			l = levels[n.Depth-1]
		}
		if isObject(n.Object()) {
			l++
		}
		levels = append(levels[:n.Depth], l)
		if l > t.levels {
			t.levels, t.levelsAt = l, n.Pointer
		}
		return true
	}, func(r jsonschema.Ref) { t.refs = append(t.refs, r) })
	return t
}

// Assess grades one tool against each profile, in the order given. The
// schema's compilation is charged to b under ctx.
func Assess(ctx context.Context, in Tool, profiles []*Profile, b jsonschema.Budget) []Verdict {
	t := read(ctx, in, b)
	out := make([]Verdict, 0, len(profiles))
	for _, p := range profiles {
		out = append(out, p.grade(t))
	}
	return out
}

// grade runs every check of p over t and decides the outcome.
func (p *Profile) grade(t *tool) Verdict {
	var vs violations
	for i := range p.Constraints {
		c := &p.Constraints[i]
		checks[c.Check].run(t, c, p, &vs)
	}
	order := map[string]int{}
	for i, c := range p.Constraints {
		order[c.ID] = i
	}
	slices.SortStableFunc(vs.list, func(a, b Violation) int {
		return cmp.Or(cmp.Compare(order[a.Constraint], order[b.Constraint]), cmp.Compare(a.Pointer, b.Pointer))
	})
	v := Verdict{Profile: p.ID}
	v.Outcome, v.Uncertain = decide(vs.list, false)
	if after, _ := decide(vs.list, true); after != v.Outcome {
		v.AfterConversion = after
	}
	per := map[string]int{}
	for _, x := range vs.list {
		if per[x.Constraint]++; per[x.Constraint] > MaxViolations {
			v.Omitted++
			continue
		}
		v.Violations = append(v.Violations, x)
	}
	return v
}

// decide is the outcome of a list of violations, and whether every
// violation deciding it is uncertain; repaired leaves out the violations a
// conversion repairs.
func decide(list []Violation, repaired bool) (Outcome, bool) {
	var certainReject, uncertainReject, certainLoss, uncertainLoss bool
	for _, x := range list {
		switch {
		case repaired && x.RepairedBy != "" && x.Repair == RepairStrip:
			certainLoss = true
		case repaired && x.RepairedBy != "":
		case x.Effect == EffectReject && !x.Uncertain:
			certainReject = true
		case x.Effect == EffectReject:
			uncertainReject = true
		case !x.Uncertain:
			certainLoss = true
		default:
			uncertainLoss = true
		}
	}
	switch {
	case certainReject || uncertainReject:
		return Rejected, !certainReject
	case certainLoss || uncertainLoss:
		return AcceptedWithLoss, !certainLoss
	}
	return Accepted, false
}

// Compact keeps the first violation of each constraint broken and counts
// the others in Omitted: the verdict as a study row keeps it.
func (v Verdict) Compact() Verdict {
	c := v
	c.Violations = nil
	seen := map[string]bool{}
	for _, x := range v.Violations {
		if seen[x.Constraint] {
			c.Omitted++
			continue
		}
		seen[x.Constraint] = true
		c.Violations = append(c.Violations, x)
	}
	return c
}
