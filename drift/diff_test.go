package drift

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/mcp"
	"github.com/mcpdrill/mcpdrill/report"
)

func mustValue(t testing.TB, s string) any {
	t.Helper()
	v, err := decodeJSON([]byte(s))
	if err != nil {
		t.Fatalf("bad test JSON %s: %v", s, err)
	}
	return v
}

// schemaTool puts a schema on the given side of a tool named "t". The
// other side gets a fixed schema so only the side under test differs.
func schemaTool(t testing.TB, dir Direction, schema string) mcp.Tool {
	tool := map[string]any{"name": "t", "inputSchema": map[string]any{"type": "object"}}
	if dir == directionInput {
		tool["inputSchema"] = mustValue(t, schema)
	} else {
		tool["outputSchema"] = mustValue(t, schema)
	}
	return valueTool(t, tool)
}

// valueTool is the tool of a decoded tool object.
func valueTool(t testing.TB, obj map[string]any) mcp.Tool {
	t.Helper()
	tl, err := toolFromValue(obj)
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

type want struct {
	kind    Kind
	pointer string // relative to the schema root
	in, out string // expected BRK rule on each side
}

// schemaCases cover every schema-level grading row: each pair of schemas is
// compared once as an inputSchema and once as an outputSchema.
var schemaCases = []struct {
	name     string
	old, new string
	want     []want
}{
	{"optional property removed",
		`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}}}`,
		`{"type":"object","properties":{"a":{"type":"string"}}}`,
		// The new schema still accepts "b" as an undeclared member.
		[]want{{kindPropertyRemoved, "/properties/b", "BRK-IN-PROPERTY-UNDECLARED", "BRK-OUT-OPTIONAL-PROPERTY-REMOVED"}}},
	{"optional property removed from a closed object",
		`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"additionalProperties":false}`,
		`{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}`,
		[]want{{kindPropertyRemoved, "/properties/b", "BRK-IN-PROPERTY-REMOVED", "BRK-OUT-OPTIONAL-PROPERTY-REMOVED"}}},
	{"required property removed",
		`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"required":["a","b"]}`,
		`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`,
		[]want{{kindPropertyRemoved, "/properties/b", "BRK-IN-PROPERTY-UNDECLARED", "BRK-OUT-REQUIRED-PROPERTY-REMOVED"}}},
	{"required property added",
		`{"type":"object","properties":{"a":{"type":"string"}}}`,
		`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"required":["b"]}`,
		[]want{{kindPropertyAdded, "/properties/b", "BRK-IN-REQUIRED-PROPERTY-ADDED", "BRK-OUT-PROPERTY-ADDED"}}},
	{"optional property added",
		`{"type":"object","properties":{"a":{"type":"string"}}}`,
		`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}}}`,
		[]want{{kindPropertyAdded, "/properties/b", "BRK-IN-OPTIONAL-PROPERTY-ADDED", "BRK-OUT-PROPERTY-ADDED"}}},
	{"property renamed",
		`{"type":"object","properties":{"query":{"type":"string","description":"old"}},"required":["query"]}`,
		`{"type":"object","properties":{"q":{"type":"string","description":"new"}},"required":["q"]}`,
		[]want{{kindPropertyRenamed, "/properties/q", "BRK-IN-PROPERTY-RENAMED", "BRK-OUT-PROPERTY-RENAMED"}}},
	{"became required",
		`{"type":"object","properties":{"a":{"type":"string"}}}`,
		`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`,
		[]want{{kindRequiredAdded, "/properties/a", "BRK-IN-BECAME-REQUIRED", "BRK-OUT-BECAME-REQUIRED"}}},
	{"became optional",
		`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`,
		`{"type":"object","properties":{"a":{"type":"string"}}}`,
		[]want{{kindRequiredRemoved, "/properties/a", "BRK-IN-BECAME-OPTIONAL", "BRK-OUT-BECAME-OPTIONAL"}}},
	{"undeclared name became required",
		`{"type":"object"}`,
		`{"type":"object","required":["x"]}`,
		[]want{{kindRequiredAdded, "/required", "BRK-IN-BECAME-REQUIRED", "BRK-OUT-BECAME-REQUIRED"}}},
	{"integer widened to number",
		`{"type":"integer"}`, `{"type":"number"}`,
		[]want{{kindTypeWidened, "/type", "BRK-IN-TYPE-WIDENED", "BRK-OUT-TYPE-WIDENED"}}},
	{"null added",
		`{"type":"string"}`, `{"type":["string","null"]}`,
		[]want{{kindTypeWidened, "/type", "BRK-IN-TYPE-WIDENED", "BRK-OUT-TYPE-WIDENED"}}},
	{"type removed widens",
		`{"type":"string"}`, `{}`,
		[]want{{kindTypeWidened, "/type", "BRK-IN-TYPE-WIDENED", "BRK-OUT-TYPE-WIDENED"}}},
	{"number narrowed to integer",
		`{"type":"number"}`, `{"type":"integer"}`,
		[]want{{kindTypeNarrowed, "/type", "BRK-IN-TYPE-NARROWED", "BRK-OUT-TYPE-NARROWED"}}},
	{"null removed",
		`{"type":["integer","null"]}`, `{"type":"integer"}`,
		[]want{{kindTypeNarrowed, "/type", "BRK-IN-TYPE-NARROWED", "BRK-OUT-TYPE-NARROWED"}}},
	{"type changed",
		`{"type":"string"}`, `{"type":"integer"}`,
		[]want{{kindTypeChanged, "/type", "BRK-IN-TYPE-CHANGED", "BRK-OUT-TYPE-CHANGED"}}},
	{"same type set respelled",
		`{"type":["integer","number"]}`, `{"type":"number"}`, nil},
	{"enum value removed",
		`{"type":"string","enum":["a","b","c"]}`, `{"type":"string","enum":["a","c"]}`,
		[]want{{kindEnumValueRemoved, "/enum", "BRK-IN-ENUM-VALUE-REMOVED", "BRK-OUT-ENUM-VALUE-REMOVED"}}},
	{"enum value added",
		`{"enum":["a"]}`, `{"enum":["a","b"]}`,
		[]want{{kindEnumValueAdded, "/enum", "BRK-IN-ENUM-VALUE-ADDED", "BRK-OUT-ENUM-VALUE-ADDED"}}},
	{"enum reordered and respelled",
		`{"enum":[1,"a",true]}`, `{"enum":[true,"a",1.0]}`, nil},
	{"enum keeps 1 and true apart",
		`{"enum":[1]}`, `{"enum":[true]}`,
		[]want{
			{kindEnumValueAdded, "/enum", "BRK-IN-ENUM-VALUE-ADDED", "BRK-OUT-ENUM-VALUE-ADDED"},
			{kindEnumValueRemoved, "/enum", "BRK-IN-ENUM-VALUE-REMOVED", "BRK-OUT-ENUM-VALUE-REMOVED"}}},
	{"enum appears",
		`{"type":"string"}`, `{"type":"string","enum":["a"]}`,
		[]want{{kindConstraintTightened, "/enum", "BRK-IN-CONSTRAINT-TIGHTENED", "BRK-OUT-CONSTRAINT-TIGHTENED"}}},
	{"const changed",
		`{"const":"v1"}`, `{"const":"v2"}`,
		[]want{{kindConstChanged, "/const", "BRK-IN-CONST-CHANGED", "BRK-OUT-CONST-CHANGED"}}},
	{"const added",
		`{"type":"string"}`, `{"type":"string","const":"x"}`,
		[]want{{kindConstraintTightened, "/const", "BRK-IN-CONSTRAINT-TIGHTENED", "BRK-OUT-CONSTRAINT-TIGHTENED"}}},
	{"minimum raised",
		`{"type":"integer","minimum":1}`, `{"type":"integer","minimum":5}`,
		[]want{{kindConstraintTightened, "/minimum", "BRK-IN-CONSTRAINT-TIGHTENED", "BRK-OUT-CONSTRAINT-TIGHTENED"}}},
	{"maxLength lowered",
		`{"type":"string","maxLength":100}`, `{"type":"string","maxLength":10}`,
		[]want{{kindConstraintTightened, "/maxLength", "BRK-IN-CONSTRAINT-TIGHTENED", "BRK-OUT-CONSTRAINT-TIGHTENED"}}},
	{"maxItems appears",
		`{"type":"array"}`, `{"type":"array","maxItems":3}`,
		[]want{{kindConstraintTightened, "/maxItems", "BRK-IN-CONSTRAINT-TIGHTENED", "BRK-OUT-CONSTRAINT-TIGHTENED"}}},
	{"maximum raised",
		`{"maximum":10}`, `{"maximum":100}`,
		[]want{{kindConstraintLoosened, "/maximum", "BRK-IN-CONSTRAINT-LOOSENED", "BRK-OUT-CONSTRAINT-LOOSENED"}}},
	{"minLength removed",
		`{"type":"string","minLength":2}`, `{"type":"string"}`,
		[]want{{kindConstraintLoosened, "/minLength", "BRK-IN-CONSTRAINT-LOOSENED", "BRK-OUT-CONSTRAINT-LOOSENED"}}},
	{"bound respelled",
		`{"minimum":1}`, `{"minimum":1.0}`, nil},
	{"multipleOf 2 to 4",
		`{"multipleOf":2}`, `{"multipleOf":4}`,
		[]want{{kindConstraintTightened, "/multipleOf", "BRK-IN-CONSTRAINT-TIGHTENED", "BRK-OUT-CONSTRAINT-TIGHTENED"}}},
	{"multipleOf 3 to 5",
		`{"multipleOf":3}`, `{"multipleOf":5}`,
		[]want{{kindConstraintChanged, "/multipleOf", "BRK-IN-CONSTRAINT-CHANGED", "BRK-OUT-CONSTRAINT-CHANGED"}}},
	{"uniqueItems set",
		`{"type":"array"}`, `{"type":"array","uniqueItems":true}`,
		[]want{{kindConstraintTightened, "/uniqueItems", "BRK-IN-CONSTRAINT-TIGHTENED", "BRK-OUT-CONSTRAINT-TIGHTENED"}}},
	{"pattern changed",
		`{"type":"string","pattern":"^[a-z]+$"}`, `{"type":"string","pattern":"^[a-z0-9]+$"}`,
		// Widened in truth, but regular-expression containment is not
		// decided: undetermined for input; the new pattern admits "0".
		[]want{{kindPatternChanged, "/pattern", "BRK-IN-UNDETERMINED", "BRK-OUT-PATTERN-CHANGED"}}},
	{"pattern narrowed",
		`{"type":"string","pattern":"^[a-z0-9]+$"}`, `{"type":"string","pattern":"^[a-z]+$"}`,
		[]want{{kindPatternChanged, "/pattern", "BRK-IN-PATTERN-CHANGED", "BRK-OUT-UNDETERMINED"}}},
	{"pattern added",
		`{"type":"string"}`, `{"type":"string","pattern":"^a"}`,
		[]want{{kindConstraintTightened, "/pattern", "BRK-IN-CONSTRAINT-TIGHTENED", "BRK-OUT-CONSTRAINT-TIGHTENED"}}},
	{"format changed",
		`{"type":"string","format":"date"}`, `{"type":"string","format":"date-time"}`,
		// Format is an annotation unless a validator asserts it.
		[]want{{kindFormatChanged, "/format", "BRK-IN-UNDETERMINED", "BRK-OUT-UNDETERMINED"}}},
	{"format removed",
		`{"type":"string","format":"uri"}`, `{"type":"string"}`,
		[]want{{kindConstraintLoosened, "/format", "BRK-IN-CONSTRAINT-LOOSENED", "BRK-OUT-UNDETERMINED"}}},
	{"additionalProperties closed",
		// A client told of no member sends none: closing the object
		// rejects nothing it sends.
		`{"type":"object"}`, `{"type":"object","additionalProperties":false}`,
		[]want{{kindAdditionalTightened, "/additionalProperties", "BRK-IN-COVERED", "BRK-OUT-ADDITIONAL-PROPERTIES-TIGHTENED"}}},
	{"free-form object closed",
		`{"type":"object","additionalProperties":true}`, `{"type":"object","additionalProperties":false}`,
		[]want{{kindAdditionalTightened, "/additionalProperties", "BRK-IN-ADDITIONAL-PROPERTIES-TIGHTENED", "BRK-OUT-ADDITIONAL-PROPERTIES-TIGHTENED"}}},
	{"additionalProperties opened",
		`{"type":"object","additionalProperties":false}`, `{"type":"object","additionalProperties":true}`,
		[]want{{kindAdditionalLoosened, "/additionalProperties", "BRK-IN-ADDITIONAL-PROPERTIES-LOOSENED", "BRK-OUT-ADDITIONAL-PROPERTIES-LOOSENED"}}},
	{"additionalProperties schema narrowed",
		`{"type":"object","additionalProperties":{"type":"number"}}`, `{"type":"object","additionalProperties":{"type":"integer"}}`,
		[]want{{kindTypeNarrowed, "/additionalProperties/type", "BRK-IN-TYPE-NARROWED", "BRK-OUT-TYPE-NARROWED"}}},
	{"default changed",
		`{"type":"integer","default":10}`, `{"type":"integer","default":20}`,
		[]want{{kindDefaultChanged, "/default", "BRK-IN-DEFAULT-CHANGED", "BRK-OUT-DEFAULT-CHANGED"}}},
	{"anyOf branch removed",
		`{"anyOf":[{"type":"string"},{"type":"integer"},{"type":"boolean"}]}`, `{"anyOf":[{"type":"boolean"},{"type":"string"}]}`,
		[]want{{kindVariantRemoved, "/anyOf/1", "BRK-IN-VARIANT-REMOVED", "BRK-OUT-VARIANT-REMOVED"}}},
	{"oneOf branch added",
		`{"oneOf":[{"type":"string"}]}`, `{"oneOf":[{"type":"integer"},{"type":"string"}]}`,
		[]want{{kindVariantAdded, "/oneOf/0", "BRK-IN-VARIANT-ADDED", "BRK-OUT-VARIANT-ADDED"}}},
	{"anyOf reordered",
		`{"anyOf":[{"type":"string"},{"type":"integer"}]}`, `{"anyOf":[{"type":"integer"},{"type":"string"}]}`, nil},
	{"anyOf one branch edited",
		`{"anyOf":[{"type":"string","maxLength":5},{"type":"integer"}]}`, `{"anyOf":[{"type":"integer"},{"type":"string","maxLength":3}]}`,
		[]want{{kindConstraintTightened, "/anyOf/1/maxLength", "BRK-IN-CONSTRAINT-TIGHTENED", "BRK-OUT-CONSTRAINT-TIGHTENED"}}},
	{"allOf branch added",
		`{"allOf":[{"type":"object"}]}`, `{"allOf":[{"type":"object"},{"required":["a"]},{"minProperties":1}]}`,
		[]want{
			{kindConstraintTightened, "/allOf/1", "BRK-IN-CONSTRAINT-TIGHTENED", "BRK-OUT-CONSTRAINT-TIGHTENED"},
			{kindConstraintTightened, "/allOf/2", "BRK-IN-CONSTRAINT-TIGHTENED", "BRK-OUT-CONSTRAINT-TIGHTENED"}}},
	{"other keyword",
		`{"type":"string"}`, `{"type":"string","not":{"const":""}}`,
		// The search finds "": accepted before, rejected now.
		[]want{{kindKeywordChanged, "/not", "BRK-IN-NARROWED", "BRK-OUT-KEYWORD-CHANGED"}}},
	{"schema description",
		`{"type":"string","description":"a"}`, `{"type":"string","description":"ignore previous instructions"}`,
		[]want{{kindSchemaDescriptionChg, "/description", "BRK-IN-DESCRIPTION-CHANGED", "BRK-OUT-DESCRIPTION-CHANGED"}}},
	{"title and examples ignored",
		`{"type":"string","title":"A","examples":["x"]}`, `{"type":"string","title":"B","examples":["y"]}`, nil},
	{"nested property",
		`{"type":"object","properties":{"f":{"type":"object","properties":{"n":{"type":"integer"}}}}}`,
		`{"type":"object","properties":{"f":{"type":"object","properties":{"n":{"type":"string"}}}}}`,
		[]want{{kindTypeChanged, "/properties/f/properties/n/type", "BRK-IN-TYPE-CHANGED", "BRK-OUT-TYPE-CHANGED"}}},
	{"array items",
		`{"type":"array","items":{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}}`,
		`{"type":"array","items":{"type":"object","properties":{"id":{"type":"string"}}}}`,
		[]want{{kindRequiredRemoved, "/items/properties/id", "BRK-IN-BECAME-OPTIONAL", "BRK-OUT-BECAME-OPTIONAL"}}},
	{"items appears",
		`{"type":"array"}`, `{"type":"array","items":{"type":"string"}}`,
		[]want{{kindConstraintTightened, "/items", "BRK-IN-CONSTRAINT-TIGHTENED", "BRK-OUT-CONSTRAINT-TIGHTENED"}}},
	{"prefixItems grew",
		`{"prefixItems":[{"type":"string"}]}`, `{"prefixItems":[{"type":"string"},{"type":"integer"}]}`,
		[]want{{kindConstraintTightened, "/prefixItems", "BRK-IN-CONSTRAINT-TIGHTENED", "BRK-OUT-CONSTRAINT-TIGHTENED"}}},
	{"ref target changed",
		`{"type":"object","properties":{"p":{"$ref":"#/$defs/P"}},"$defs":{"P":{"type":"object","properties":{"k":{"enum":["a","b"]}}}}}`,
		`{"type":"object","properties":{"p":{"$ref":"#/$defs/P"}},"$defs":{"P":{"type":"object","properties":{"k":{"enum":["a"]}}}}}`,
		[]want{{kindEnumValueRemoved, "/properties/p/properties/k/enum", "BRK-IN-ENUM-VALUE-REMOVED", "BRK-OUT-ENUM-VALUE-REMOVED"}}},
	{"ref inlined is no change",
		`{"type":"object","properties":{"p":{"$ref":"#/$defs/P"}},"$defs":{"P":{"type":"string"}}}`,
		`{"type":"object","properties":{"p":{"type":"string"}}}`, nil},
	{"cyclic ref",
		`{"$defs":{"N":{"type":"object","properties":{"next":{"$ref":"#/$defs/N"},"v":{"type":"integer"}}}},"$ref":"#/$defs/N"}`,
		`{"$defs":{"N":{"type":"object","properties":{"next":{"$ref":"#/$defs/N"},"v":{"type":"number"}}}},"$ref":"#/$defs/N"}`,
		// The cycle guard expands N once; the inner "next" stays a $ref on
		// both sides, so the change is reported once, where it is written.
		// Behind that reference the definitions changed too, which the
		// comparison does not see: no proof, only witnesses (for input
		// there is none).
		[]want{{kindTypeWidened, "/properties/v/type", "BRK-IN-UNDETERMINED", "BRK-OUT-TYPE-WIDENED"}}},
	{"boolean schema",
		`{"type":"object","properties":{"a":true}}`, `{"type":"object","properties":{"a":{}}}`, nil},
}

func TestSchemaRulesBothDirections(t *testing.T) {
	for _, tc := range schemaCases {
		for _, dir := range []Direction{directionInput, directionOutput} {
			t.Run(tc.name+"/"+string(dir), func(t *testing.T) {
				root := "/inputSchema"
				if dir == directionOutput {
					root = "/outputSchema"
				}
				got := Diff([]mcp.Tool{schemaTool(t, dir, tc.old)}, []mcp.Tool{schemaTool(t, dir, tc.new)})
				var gotS, wantS []string
				for _, c := range got {
					gotS = append(gotS, fmt.Sprintf("%s %s %s %s %v", c.Kind, c.Pointer, c.RuleID, c.Direction, c.Breaking))
					if g, _ := lookupGrade(c.Kind, c.Direction, condNone); g.rule == "" && !strings.HasPrefix(c.RuleID, "BRK-") {
						t.Errorf("ungraded change %+v", c)
					}
				}
				for _, w := range tc.want {
					rule := w.in
					if dir == directionOutput {
						rule = w.out
					}
					sev := ruleSeverity(t, rule)
					wantS = append(wantS, fmt.Sprintf("%s %s %s %s %v", w.kind, root+w.pointer, rule, dir, sev == report.SeverityError))
				}
				if strings.Join(gotS, "\n") != strings.Join(wantS, "\n") {
					t.Errorf("changes:\n got: %s\nwant: %s", strings.Join(gotS, "\n      "), strings.Join(wantS, "\n      "))
				}
				for _, c := range got {
					if c.Message == "" || !strings.HasPrefix(c.ChangeID, string(c.Kind)+"-") {
						t.Errorf("bad change %+v", c)
					}
				}
			})
		}
	}
}

func ruleSeverity(t *testing.T, id string) report.Severity {
	t.Helper()
	r, ok := Catalogue().Lookup(id)
	if !ok {
		t.Fatalf("rule %s not in the catalogue", id)
	}
	return r.Severity
}

// Input and output must grade these kinds oppositely (one breaking, the
// other not).
func TestOppositeGrades(t *testing.T) {
	for _, k := range []Kind{kindRequiredAdded, kindRequiredRemoved, kindTypeWidened, kindTypeNarrowed,
		kindEnumValueRemoved, kindConstraintTightened, kindAdditionalTightened, kindVariantRemoved} {
		in, ok1 := lookupGrade(k, directionInput, condNone)
		out, ok2 := lookupGrade(k, directionOutput, condNone)
		if !ok1 || !ok2 {
			t.Fatalf("%s: missing grade", k)
		}
		if (in.sev == report.SeverityError) == (out.sev == report.SeverityError) {
			t.Errorf("%s: input %s and output %s grade alike", k, in.sev, out.sev)
		}
	}
}

func TestToolLevelRules(t *testing.T) {
	base := `{"name":"t","description":"d","title":"T","inputSchema":{"type":"object"},"outputSchema":{"type":"object"},"annotations":{"readOnlyHint":true,"openWorldHint":false}}`
	cases := []struct {
		name   string
		edit   func(m map[string]any)
		kind   Kind
		ptr    string
		rule   string
		breaks bool
	}{
		{"description", func(m map[string]any) { m["description"] = "d2" }, KindDescriptionChanged, "/description", "BRK-TOOL-DESCRIPTION-CHANGED", false},
		{"title", func(m map[string]any) { m["title"] = "T2" }, kindTitleChanged, "/title", "BRK-TOOL-TITLE-CHANGED", false},
		{"output schema removed", func(m map[string]any) { delete(m, "outputSchema") }, kindOutputSchemaRemoved, "/outputSchema", "BRK-OUTPUT-SCHEMA-REMOVED", true},
		{"readOnly flipped", func(m map[string]any) { m["annotations"].(map[string]any)["readOnlyHint"] = false }, kindAnnotationChanged, "/annotations/readOnlyHint", "BRK-ANNOTATION-HINT-CHANGED", false},
		{"destructive declared non-default", func(m map[string]any) { m["annotations"].(map[string]any)["destructiveHint"] = false }, kindAnnotationChanged, "/annotations/destructiveHint", "BRK-ANNOTATION-HINT-CHANGED", false},
		{"idempotent declared at default", func(m map[string]any) { m["annotations"].(map[string]any)["idempotentHint"] = false }, kindAnnotationChanged, "/annotations/idempotentHint", "BRK-ANNOTATION-DECLARATION-CHANGED", false},
		{"openWorld flipped", func(m map[string]any) { delete(m["annotations"].(map[string]any), "openWorldHint") }, kindAnnotationChanged, "/annotations/openWorldHint", "BRK-ANNOTATION-OPENWORLD-CHANGED", false},
		{"annotation title", func(m map[string]any) { m["annotations"].(map[string]any)["title"] = "x" }, kindAnnotationChanged, "/annotations/title", "BRK-ANNOTATION-OTHER-CHANGED", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			old, err := ParseTool([]byte(base))
			if err != nil {
				t.Fatal(err)
			}
			m := mustValue(t, base).(map[string]any)
			tc.edit(m)
			nw, err := toolFromValue(m)
			if err != nil {
				t.Fatal(err)
			}
			got := Diff([]mcp.Tool{old}, []mcp.Tool{nw})
			if len(got) != 1 {
				t.Fatalf("want 1 change, got %+v", got)
			}
			c := got[0]
			if c.Kind != tc.kind || c.Pointer != tc.ptr || c.RuleID != tc.rule || c.Breaking != tc.breaks || c.Direction != directionTool {
				t.Errorf("got %+v", c)
			}
		})
	}
	t.Run("output schema added", func(t *testing.T) {
		old := mcp.Tool{Name: "t"}
		nw := valueTool(t, map[string]any{"name": "t", "outputSchema": map[string]any{"type": "object"}})
		got := Diff([]mcp.Tool{old}, []mcp.Tool{nw})
		if len(got) != 1 || got[0].RuleID != "BRK-OUTPUT-SCHEMA-ADDED" || got[0].Breaking {
			t.Errorf("got %+v", got)
		}
	})
	t.Run("tools removed and added", func(t *testing.T) {
		got := Diff([]mcp.Tool{{Name: "a"}, {Name: "b"}}, []mcp.Tool{{Name: "b"}, {Name: "c"}})
		if len(got) != 2 || got[0].RuleID != "BRK-TOOL-REMOVED" || !got[0].Breaking || got[1].RuleID != "BRK-TOOL-ADDED" || got[1].Breaking {
			t.Errorf("got %+v", got)
		}
	})
}

func TestSchemaTooDeep(t *testing.T) {
	deep := func(leaf string) string {
		s := leaf
		for range maxDepth + 5 {
			s = `{"type":"object","properties":{"x":` + s + `}}`
		}
		return s
	}
	got := Diff([]mcp.Tool{schemaTool(t, directionInput, deep(`{"type":"string"}`))},
		[]mcp.Tool{schemaTool(t, directionInput, deep(`{"type":"integer"}`))})
	if len(got) != 1 || got[0].Kind != kindSchemaTooDeep {
		t.Fatalf("got %+v", got)
	}
}

func TestChangeIDStable(t *testing.T) {
	a := newChange("tool", "/inputSchema/properties/q", kindPropertyRemoved, directionInput, condNone, "m")
	b := newChange("tool", "/inputSchema/properties/q", kindPropertyRemoved, directionInput, condNone, "other")
	if a.ChangeID != b.ChangeID || KindOf(a.ChangeID) != string(kindPropertyRemoved) {
		t.Errorf("ids %s %s", a.ChangeID, b.ChangeID)
	}
	if KindOf("BRK-IN-PROPERTY-REMOVED") != "BRK-IN-PROPERTY-REMOVED" {
		t.Error("KindOf changed a rule id")
	}
}

func TestCatalogueComplete(t *testing.T) {
	c := Catalogue()
	seen := map[string]bool{}
	for _, r := range c {
		if seen[r.ID] {
			t.Errorf("duplicate %s", r.ID)
		}
		seen[r.ID] = true
		if r.Title == "" || r.Detail == "" || r.Severity.Rank() == 0 {
			t.Errorf("incomplete rule %+v", r)
		}
	}
	for k := range kindDocs {
		if !seen[string(k)] {
			t.Errorf("kind %s has no grade", k)
		}
	}
	if _, err := report.Merge(c); err != nil {
		t.Error(err)
	}
}
