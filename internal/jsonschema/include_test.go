package jsonschema

import (
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/jsonvalue"
)

// Each case is a pair s, t and whether s ⊆ t is proved; a false want is a
// pair where s admits an instance t rejects (the procedure must never
// prove it), or one the procedure leaves open (marked open).
func TestIncludes(t *testing.T) {
	const x = `{"type":"object","properties":{"path":{"type":"string"},"position":{"type":"number"},"body":{"type":"string"}},"required":["path","position","body"],"additionalProperties":false}`
	const y = `{"type":"object","properties":{"path":{"type":"string"},"line":{"type":"number"},"body":{"type":"string"}},"required":["path","line","body"],"additionalProperties":false}`
	for _, tc := range []struct {
		name, s, t string
		want       bool
	}{
		{"equal", x, x, true},
		{"equal up to annotations", `{"type":"string","description":"a"}`, `{"type":"string","title":"b"}`, true},
		{"old kept as an anyOf branch", x, `{"anyOf":[` + x + `,` + y + `]}`, true},
		{"old kept as the second branch", x, `{"anyOf":[` + y + `,` + x + `]}`, true},
		{"old not a branch", x, `{"anyOf":[` + y + `]}`, false},
		{"t accepts everything", x, `{}`, true},
		{"t true", x, `true`, true},
		{"s false", `false`, `{"type":"string"}`, true},
		{"integer into number", `{"type":"integer"}`, `{"type":"number"}`, true},
		{"number into integer", `{"type":"number"}`, `{"type":"integer"}`, false},
		{"type list widened", `{"type":"string"}`, `{"type":["string","null"]}`, true},
		{"type list narrowed", `{"type":["string","null"]}`, `{"type":"string"}`, false},
		{"minimum added", `{"type":"integer"}`, `{"type":"integer","minimum":1}`, false},
		{"minimum lowered", `{"type":"number","minimum":2}`, `{"type":"number","minimum":1}`, true},
		{"minimum raised", `{"type":"number","minimum":1}`, `{"type":"number","minimum":2}`, false},
		{"maximum removed", `{"type":"number","maximum":10}`, `{"type":"number"}`, true},
		{"exclusive into inclusive", `{"exclusiveMinimum":1}`, `{"minimum":1}`, true},
		{"inclusive into exclusive", `{"minimum":1}`, `{"exclusiveMinimum":1}`, false},
		{"integers above 0 are at least 1", `{"type":"integer","exclusiveMinimum":0}`, `{"type":"integer","minimum":1}`, true},
		{"numbers above 0 are not at least 1", `{"type":"number","exclusiveMinimum":0}`, `{"minimum":1}`, false},
		{"exact decimals", `{"maximum":0.30000000000000001}`, `{"maximum":0.3}`, false},
		{"bound on a type s never admits", `{"type":"string"}`, `{"maximum":3,"minItems":2}`, true},
		{"multipleOf 4 into 2", `{"multipleOf":4}`, `{"multipleOf":2}`, true},
		{"multipleOf 2 into 4", `{"multipleOf":2}`, `{"multipleOf":4}`, false},
		{"integers are multiples of 0.5", `{"type":"integer"}`, `{"multipleOf":0.5}`, true},
		{"maxLength relaxed", `{"type":"string","maxLength":5}`, `{"type":"string","maxLength":10}`, true},
		{"maxLength tightened", `{"type":"string","maxLength":10}`, `{"type":"string","maxLength":5}`, false},
		{"pattern kept", `{"type":"string","pattern":"^a"}`, `{"type":"string","pattern":"^a","maxLength":9,"minLength":0}`, false},
		{"pattern same", `{"type":"string","pattern":"^a","maxLength":5}`, `{"type":"string","pattern":"^a"}`, true},
		{"pattern removed", `{"type":"string","pattern":"^a"}`, `{"type":"string"}`, true},
		{"pattern added (open)", `{"type":"string"}`, `{"type":"string","pattern":"^a"}`, false},
		{"format removed", `{"type":"string","format":"uri"}`, `{"type":"string"}`, true},
		{"format added (open)", `{"type":"string"}`, `{"type":"string","format":"uri"}`, false},
		{"enum value added", `{"enum":["a","b"]}`, `{"enum":["a","b","c"]}`, true},
		{"enum value removed", `{"enum":["a","b"]}`, `{"enum":["a"]}`, false},
		{"enum into type", `{"enum":["a",1]}`, `{"type":["string","integer"]}`, true},
		{"enum into a bound", `{"enum":[1,2,3]}`, `{"maximum":3}`, true},
		{"const into enum", `{"const":"a"}`, `{"enum":["a","b"]}`, true},
		{"booleans are finite", `{"type":"boolean"}`, `{"enum":[true,false]}`, true},
		{"enum added to a string", `{"type":"string"}`, `{"enum":["a"]}`, false},
		{"required removed", `{"type":"object","required":["a","b"]}`, `{"type":"object","required":["a"]}`, true},
		{"required added", `{"type":"object","required":["a"]}`, `{"type":"object","required":["a","b"]}`, false},
		{"object opened", `{"properties":{"a":{"type":"string"}},"additionalProperties":false}`, `{"properties":{"a":{"type":"string"}}}`, true},
		{"object closed", `{"properties":{"a":{"type":"string"}}}`, `{"properties":{"a":{"type":"string"}},"additionalProperties":false}`, false},
		{"additional schema widened", `{"additionalProperties":{"type":"integer"}}`, `{"additionalProperties":{"type":"number"}}`, true},
		{"property type widened", `{"properties":{"a":{"type":"integer"}}}`, `{"properties":{"a":{"type":["integer","string"]}}}`, true},
		{"property added to an open object", `{"type":"object","properties":{"a":{}}}`, `{"type":"object","properties":{"a":{},"b":{"type":"integer"}}}`, false},
		{"property added to a closed object", `{"type":"object","properties":{"a":{}},"additionalProperties":false}`, `{"type":"object","properties":{"a":{},"b":{"type":"integer"}}}`, true},
		{"items widened", `{"type":"array","items":{"type":"integer"}}`, `{"type":"array","items":{"type":"number"}}`, true},
		{"items added", `{"type":"array"}`, `{"type":"array","items":{"type":"number"}}`, false},
		{"prefixItems positions", `{"prefixItems":[{"type":"integer"}],"items":false}`, `{"prefixItems":[{"type":"number"},{"type":"string"}]}`, true},
		{"uniqueItems from maxItems 1", `{"type":"array","maxItems":1}`, `{"type":"array","uniqueItems":true}`, true},
		{"anyOf in s, case by case", `{"anyOf":[{"type":"string"},{"type":"integer"}]}`, `{"type":["string","integer"]}`, true},
		{"anyOf in s, one case outside", `{"anyOf":[{"type":"string"},{"type":"null"}]}`, `{"type":"string"}`, false},
		{"anyOf branch added", `{"anyOf":[{"type":"string"}]}`, `{"anyOf":[{"type":"string"},{"type":"null"}]}`, true},
		{"oneOf, disjoint branches", `{"type":"string"}`, `{"oneOf":[{"type":"string"},{"type":"integer"}]}`, true},
		{"oneOf, overlapping branches", `{"type":"integer"}`, `{"oneOf":[{"type":"number"},{"type":"integer"}]}`, false},
		{"oneOf, finite and disjoint", `{"const":"a"}`, `{"oneOf":[{"enum":["a"]},{"enum":["b"]}]}`, true},
		{"not, disjoint types", `{"type":"string"}`, `{"not":{"type":"integer"}}`, true},
		{"not, overlapping", `{"type":"string"}`, `{"not":{"const":"a"}}`, false},
		{"allOf in t", `{"type":"integer","minimum":3}`, `{"allOf":[{"type":"number"},{"minimum":0}]}`, true},
		{"allOf in s", `{"allOf":[{"type":"integer"},{"minimum":3}]}`, `{"type":"number","minimum":0}`, true},
		{"if/then/else identical", `{"if":{"type":"string"},"then":{"minLength":1},"type":["string","null"]}`, `{"if":{"type":"string"},"then":{"minLength":1}}`, true},
		{"if/then/else changed (open)", `{"if":{"type":"string"},"then":{"minLength":1}}`, `{"if":{"type":"string"},"then":{"minLength":2}}`, false},
		{"vendor keyword imposes nothing", `{"type":"string"}`, `{"type":"string","x-order":3}`, true},
		{"residual reference (open)", `{"$ref":"#/$defs/a","$defs":{"a":{"type":"string"}}}`, `{"$ref":"#/$defs/a","$defs":{"a":{"type":"integer"}}}`, false},
		{"unevaluatedProperties (open)", `{"type":"object"}`, `{"type":"object","unevaluatedProperties":false}`, false},
		{"draft-4 boolean bound (open)", `{"maximum":3}`, `{"maximum":3,"exclusiveMaximum":true}`, false},
		{"draft-4 boolean bound in s is ignored", `{"maximum":3,"exclusiveMaximum":true}`, `{"maximum":3}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Includes(mustDecode(t, tc.s), mustDecode(t, tc.t)); got != tc.want {
				t.Errorf("Includes(%s, %s) = %v, want %v", tc.s, tc.t, got, tc.want)
			}
		})
	}
}

// CloseUndeclared closes the objects a sender was told the members of,
// and leaves free-form ones, branches and compositions open.
func TestCloseUndeclared(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"declared members", `{"type":"object","properties":{"a":{"type":"object","properties":{"b":{}}}}}`,
			`{"additionalProperties":false,"properties":{"a":{"additionalProperties":false,"properties":{"b":{}},"type":"object"}},"type":"object"}`},
		{"no arguments", `{"type":"object"}`, `{"additionalProperties":false,"type":"object"}`},
		{"a map stays open", `{"type":"object","additionalProperties":{"type":"object","properties":{"x":{}}}}`,
			`{"additionalProperties":{"additionalProperties":false,"properties":{"x":{}},"type":"object"},"type":"object"}`},
		{"explicitly open", `{"type":"object","properties":{"a":{}},"additionalProperties":true}`, `{"additionalProperties":true,"properties":{"a":{}},"type":"object"}`},
		{"composition stays open", `{"type":"object","properties":{"a":{}},"anyOf":[{"properties":{"b":{}}}]}`, `{"anyOf":[{"properties":{"b":{}}}],"properties":{"a":{}},"type":"object"}`},
		{"items", `{"type":"array","items":{"type":"object"}}`, `{"items":{"additionalProperties":false,"type":"object"},"type":"array"}`},
		{"any value stays any", `{"properties":{"v":{}}}`, `{"additionalProperties":false,"properties":{"v":{}}}`},
		{"not an object", `{"type":"string"}`, `{"type":"string"}`},
	} {
		got := string(jsonvalue.Canonical(CloseUndeclared(mustDecode(t, tc.in))))
		if got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
	// Inside the contract domain, adding an optional member to an object
	// with declared members is not a narrowing.
	s := CloseUndeclared(mustDecode(t, `{"type":"object","properties":{"a":{"type":"string"}}}`))
	if !Includes(s, mustDecode(t, `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}}}`)) {
		t.Error("closed s should be inside t with a new optional member")
	}
}
