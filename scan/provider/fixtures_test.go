package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/jsonschema"
	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
)

// fixture is a tool that breaks exactly one constraint of the profile it is
// built for (on that profile's control), with the verdict that profile must
// give it.
type fixture struct {
	// constraint is the constraint broken; its profile is the part before
	// the '/'. A second fixture of the same constraint has a suffix after
	// '#'.
	constraint string
	name       string
	schema     any
	outcome    Outcome
	uncertain  bool
}

func (f fixture) profile() string { return strings.SplitN(f.constraint, "/", 2)[0] }
func (f fixture) id() string      { return strings.SplitN(f.constraint, "#", 2)[0] }

// obj is a JSON object literal; the controls and fixtures are built from it.
type obj = map[string]any

// controls are, per profile, a tool the profile accepts: an open object
// (the shape most servers list) for the modes that allow one, a closed one
// with every property required for the strict modes.
var controls = map[string]func() obj{
	"openai":           open,
	"anthropic":        open,
	"gemini":           open,
	"openai-strict":    closed,
	"anthropic-strict": closed,
}

func open() obj {
	return obj{"type": "object", "properties": obj{"q": obj{"type": "string"}}, "required": []any{"q"}}
}

func closed() obj {
	o := open()
	o["additionalProperties"] = false
	return o
}

// with returns the control of profile with the property named name set to
// s (and listed in required unless optional).
func with(profile, name string, s any, optional bool) obj {
	o := controls[profile]()
	o["properties"].(obj)[name] = s
	if !optional {
		o["required"] = append(o["required"].([]any), name)
	}
	return o
}

// set returns the control of profile with key set to v at the root.
func set(profile, key string, v any) obj {
	o := controls[profile]()
	o[key] = v
	return o
}

// nested closes depth levels of objects around a string.
func nested(levels int) obj {
	var inner any = obj{"type": "string"}
	for range levels - 1 {
		inner = obj{"type": "object", "properties": obj{"n": inner}, "required": []any{"n"}, "additionalProperties": false}
	}
	return obj{"type": "object", "properties": obj{"n": inner}, "required": []any{"n"}, "additionalProperties": false}
}

// manyProperties is a closed object of n properties, optional or required,
// each of schema s.
func manyProperties(n int, s func() any, optional bool) obj {
	props, req := obj{}, []any{}
	for i := range n {
		name := fmt.Sprintf("p%04d", i)
		props[name] = s()
		if !optional {
			req = append(req, name)
		}
	}
	return obj{"type": "object", "properties": props, "required": req, "additionalProperties": false}
}

// enumOf is a string enum of n values of width characters each.
func enumOf(n, width int) obj {
	vals := make([]any, n)
	for i := range vals {
		s := fmt.Sprintf("v%d", i)
		vals[i] = s + strings.Repeat("x", max(width-len(s), 0))
	}
	return obj{"type": "string", "enum": vals}
}

func str() any { return obj{"type": "string"} }

var fixtures = []fixture{
	{constraint: "openai/root-object", schema: obj{"type": "string"}, outcome: Rejected},
	{constraint: "openai/root-properties", schema: obj{"type": "object"}, outcome: Rejected},
	{constraint: "openai/array-items", schema: with("openai", "tags", obj{"type": "array"}, false), outcome: Rejected},
	{constraint: "openai/valid-schema", schema: with("openai", "n", obj{"type": "string", "minLength": "three"}, false), outcome: Rejected},
	{constraint: "openai/name", name: "search.docs", outcome: Rejected},

	{constraint: "openai-strict/root-object", schema: obj{"type": "string"}, outcome: Rejected},
	{constraint: "openai-strict/root-no-anyof", schema: set("openai-strict", "anyOf", []any{closed()}), outcome: Rejected},
	{constraint: "openai-strict/root-properties", schema: obj{"type": "object", "additionalProperties": false}, outcome: Rejected},
	{constraint: "openai-strict/additional-properties", schema: open(), outcome: Rejected},
	{constraint: "openai-strict/all-required", schema: with("openai-strict", "limit", obj{"type": "integer"}, true), outcome: Rejected},
	{constraint: "openai-strict/type-key", schema: with("openai-strict", "any", obj{"description": "anything"}, false), outcome: Rejected},
	{constraint: "openai-strict/type-key#enum", schema: with("openai-strict", "unit", obj{"enum": []any{"C", "F"}}, false), outcome: Rejected, uncertain: true},
	{constraint: "openai-strict/array-items", schema: with("openai-strict", "tags", obj{"type": "array"}, false), outcome: Rejected},
	{constraint: "openai-strict/composition", schema: with("openai-strict", "s", obj{"type": "string", "not": obj{"enum": []any{"x"}}}, false), outcome: Rejected},
	{constraint: "openai-strict/one-of", schema: with("openai-strict", "s", obj{"type": "string", "oneOf": []any{obj{"type": "string", "enum": []any{"a"}}, obj{"type": "string", "enum": []any{"b"}}}}, false), outcome: Rejected},
	{constraint: "openai-strict/unsupported-keywords", schema: with("openai-strict", "tags", obj{"type": "array", "items": str(), "uniqueItems": true}, false), outcome: Rejected},
	{constraint: "openai-strict/string-length", schema: with("openai-strict", "s", obj{"type": "string", "maxLength": 10}, false), outcome: Rejected, uncertain: true},
	{constraint: "openai-strict/format", schema: with("openai-strict", "u", obj{"type": "string", "format": "uri"}, false), outcome: Rejected},
	{constraint: "openai-strict/nesting", schema: nested(11), outcome: Rejected, uncertain: true},
	{constraint: "openai-strict/property-count", schema: manyProperties(5001, str, false), outcome: Rejected},
	{constraint: "openai-strict/string-size", schema: with("openai-strict", "e", enumOf(200, 650), false), outcome: Rejected},
	{constraint: "openai-strict/enum-count", schema: with("openai-strict", "e", enumOf(1001, 1), false), outcome: Rejected},
	{constraint: "openai-strict/enum-string-size", schema: with("openai-strict", "e", enumOf(251, 60), false), outcome: Rejected},
	{constraint: "openai-strict/name", name: "search.docs", outcome: Rejected},

	{constraint: "anthropic/root-object", schema: obj{"type": "string"}, outcome: Rejected},
	{constraint: "anthropic/root-combinator", schema: set("anthropic", "anyOf", []any{obj{"required": []any{"q"}}}), outcome: Rejected},
	{constraint: "anthropic/valid-schema", schema: with("anthropic", "n", obj{"type": "string", "minLength": "three"}, false), outcome: Rejected},
	{constraint: "anthropic/name", name: "search.docs", outcome: Rejected},
	{constraint: "anthropic/name#long", name: strings.Repeat("n", 70), outcome: Rejected, uncertain: true},

	{constraint: "anthropic-strict/root-object", schema: obj{"type": "string"}, outcome: Rejected},
	{constraint: "anthropic-strict/root-combinator", schema: set("anthropic-strict", "anyOf", []any{closed()}), outcome: Rejected},
	{constraint: "anthropic-strict/valid-schema", schema: with("anthropic-strict", "n", obj{"type": "string", "pattern": "("}, false), outcome: Rejected},
	{constraint: "anthropic-strict/additional-properties", schema: open(), outcome: Rejected},
	{constraint: "anthropic-strict/numeric-limits", schema: with("anthropic-strict", "n", obj{"type": "integer", "minimum": 0}, false), outcome: Rejected},
	{constraint: "anthropic-strict/string-limits", schema: with("anthropic-strict", "s", obj{"type": "string", "maxLength": 10}, false), outcome: Rejected},
	{constraint: "anthropic-strict/array-limits", schema: with("anthropic-strict", "tags", obj{"type": "array", "items": str(), "maxItems": 5}, false), outcome: Rejected},
	{constraint: "anthropic-strict/min-items", schema: with("anthropic-strict", "tags", obj{"type": "array", "items": str(), "minItems": 2}, false), outcome: Rejected},
	{constraint: "anthropic-strict/recursion", schema: func() obj {
		o := with("anthropic-strict", "tree", obj{"$ref": "#/$defs/node"}, false)
		o["$defs"] = obj{"node": obj{"type": "object", "properties": obj{"kids": obj{"type": "array", "items": obj{"$ref": "#/$defs/node"}}},
			"required": []any{"kids"}, "additionalProperties": false}}
		return o
	}(), outcome: Rejected},
	{constraint: "anthropic-strict/external-ref", schema: with("anthropic-strict", "r", obj{"$ref": "https://example.invalid/s.json"}, false), outcome: Rejected},
	{constraint: "anthropic-strict/allof-ref", schema: func() obj {
		o := with("anthropic-strict", "r", obj{"allOf": []any{obj{"$ref": "#/$defs/s"}}}, false)
		o["$defs"] = obj{"s": str()}
		return o
	}(), outcome: Rejected},
	{constraint: "anthropic-strict/enum-values", schema: with("anthropic-strict", "e", obj{"enum": []any{obj{"a": 1}, "x"}}, false), outcome: Rejected},
	{constraint: "anthropic-strict/format", schema: with("anthropic-strict", "u", obj{"type": "string", "format": "uri-reference"}, false), outcome: Rejected, uncertain: true},
	{constraint: "anthropic-strict/pattern", schema: with("anthropic-strict", "s", obj{"type": "string", "pattern": "^(?!x).*$"}, false), outcome: Rejected},
	{constraint: "anthropic-strict/unlisted-keywords", schema: with("anthropic-strict", "s", obj{"type": "string", "not": obj{"enum": []any{"x"}}}, false), outcome: Rejected, uncertain: true},
	{constraint: "anthropic-strict/optional-count", schema: manyProperties(25, str, true), outcome: Rejected},
	{constraint: "anthropic-strict/union-count", schema: manyProperties(17, func() any { return obj{"type": []any{"string", "null"}} }, false), outcome: Rejected},
	{constraint: "anthropic-strict/name", name: "search.docs", outcome: Rejected},

	{constraint: "gemini/root-object", schema: obj{"type": "string"}, outcome: Rejected},
	{constraint: "gemini/root-properties", schema: obj{"type": "object", "properties": obj{}}, outcome: Rejected, uncertain: true},
	{constraint: "gemini/keywords", schema: set("gemini", "additionalProperties", false), outcome: Rejected},
	{constraint: "gemini/type", schema: with("gemini", "n", obj{"type": []any{"string", "null"}}, false), outcome: Rejected},
	{constraint: "gemini/enum-strings", schema: with("gemini", "n", obj{"type": "integer", "enum": []any{1, 2}}, false), outcome: Rejected, uncertain: true},
	{constraint: "gemini/required-defined", schema: set("gemini", "required", []any{"q", "missing"}), outcome: Rejected},
	{constraint: "gemini/format", schema: with("gemini", "u", obj{"type": "string", "format": "uri"}, false), outcome: AcceptedWithLoss, uncertain: true},
	{constraint: "gemini/name", name: "9lives", outcome: Rejected},
	{constraint: "gemini/name#long", name: strings.Repeat("n", 70), outcome: Rejected, uncertain: true},
	{constraint: "gemini/parameter-names", schema: with("gemini", "file-path", str(), false), outcome: Rejected, uncertain: true},
}

// build is the fixture as a Tool: its schema (the control when it has
// none) and its name ("search_docs" when it has none).
func (f fixture) build(t *testing.T) Tool {
	s := f.schema
	if s == nil {
		s = controls[f.profile()]()
	}
	raw, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	name := f.name
	if name == "" {
		name = "search_docs"
	}
	return Tool{Name: name, InputSchema: raw}
}

func assess(t *testing.T, tl Tool, ps []*Profile) []Verdict {
	t.Helper()
	return Assess(context.Background(), tl, ps, jsonschema.Budget{})
}

// TestControls: every profile accepts its own control, and no control is
// accepted by every profile: the strict modes need additionalProperties
// false on every object, the Gemini profile refuses the keyword.
func TestControls(t *testing.T) {
	ps, err := Profiles()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		ctl, ok := controls[p.ID]
		if !ok {
			t.Fatalf("profile %s has no control", p.ID)
		}
		tl := fixture{constraint: p.ID + "/", schema: ctl()}.build(t)
		if v := assess(t, tl, []*Profile{p})[0]; v.Outcome != Accepted {
			t.Errorf("%s rejects its own control: %+v", p.ID, v)
		}
		all := true
		for _, v := range assess(t, tl, ps) {
			all = all && v.Outcome == Accepted
		}
		if all {
			t.Errorf("the control of %s is accepted by every profile; the profiles were expected to disagree", p.ID)
		}
	}
}

// TestFixturesBreakOneConstraint: each fixture breaks exactly its
// constraint in its profile, with the expected verdict.
func TestFixturesBreakOneConstraint(t *testing.T) {
	for _, f := range fixtures {
		t.Run(f.constraint, func(t *testing.T) {
			ps, err := Lookup([]string{f.profile()})
			if err != nil {
				t.Fatal(err)
			}
			v := assess(t, f.build(t), ps)[0]
			if got := v.Broken(); !slices.Equal(got, []string{f.id()}) {
				t.Fatalf("broken %v, want exactly [%s]; violations %+v", got, f.id(), v.Violations)
			}
			if v.Outcome != f.outcome || v.Uncertain != f.uncertain {
				t.Fatalf("verdict %s (uncertain %v), want %s (uncertain %v)", v.Outcome, v.Uncertain, f.outcome, f.uncertain)
			}
			for _, x := range v.Violations {
				if !strings.HasPrefix(x.Pointer, "/inputSchema") && x.Pointer != "/name" {
					t.Errorf("violation pointer %q is not in the tool", x.Pointer)
				}
			}
		})
	}
}

// TestEveryConstraintHasAFixture: a constraint without a fixture would be
// unpinned.
func TestEveryConstraintHasAFixture(t *testing.T) {
	ps, err := Profiles()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		for _, c := range p.Constraints {
			if !slices.ContainsFunc(fixtures, func(f fixture) bool { return f.id() == c.ID }) {
				t.Errorf("constraint %s has no fixture", c.ID)
			}
		}
	}
}

// TestAcceptance pins the two cases the issue names.
func TestAcceptance(t *testing.T) {
	ps, err := Lookup([]string{"openai-strict", "openai", "gemini"})
	if err != nil {
		t.Fatal(err)
	}
	optional := Tool{Name: "search", InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"},"limit":{"type":"integer"}},"required":["q"]}`)}
	vs := assess(t, optional, ps)
	if vs[0].Outcome != Rejected || vs[0].Uncertain || vs[1].Outcome != Accepted {
		t.Errorf("optional property, additionalProperties absent: openai-strict %s, openai %s; want rejected, accepted", vs[0].Outcome, vs[1].Outcome)
	}
	uri := Tool{Name: "fetch", InputSchema: json.RawMessage(`{"type":"object","properties":{"url":{"type":"string","format":"uri"}},"required":["url"]}`)}
	v := assess(t, uri, ps)[2]
	if v.Outcome != AcceptedWithLoss || !slices.Equal(v.Broken(), []string{"gemini/format"}) {
		t.Errorf("format uri alone: gemini %s %v; want accepted_with_loss from gemini/format", v.Outcome, v.Broken())
	}
	if v.Violations[0].Pointer != "/inputSchema/properties/url/format" {
		t.Errorf("pointer %q", v.Violations[0].Pointer)
	}
}

// TestFixturesGolden records every fixture's verdict under every profile,
// so the disagreements between profiles are reviewed as one table.
func TestFixturesGolden(t *testing.T) {
	ps, err := Profiles()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	line := func(title string, tl Tool) {
		fmt.Fprintf(&b, "%s\n", title)
		for _, v := range assess(t, tl, ps) {
			u := ""
			if v.Uncertain {
				u = " (uncertain)"
			}
			fmt.Fprintf(&b, "  %-17s %s\n", v.Profile, strings.TrimSpace(fmt.Sprintf("%s%s %s", v.Outcome, u, strings.Join(v.Broken(), " "))))
		}
	}
	for _, id := range slices.Sorted(maps.Keys(controls)) {
		line("control of "+id, fixture{constraint: id + "/", schema: controls[id]()}.build(t))
	}
	for _, f := range fixtures {
		line("fixture "+f.constraint, f.build(t))
	}
	testutil.Golden(t, "fixtures.golden", []byte(b.String()))
}
