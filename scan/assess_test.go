package scan

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/jsonschema"

	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
)

var obj = testutil.ObjectSchema

// TestAssessAnchorEdgeCases runs the edge cases on which the reference
// implementation was wrong, plus more, and pins the verdicts.
func TestAssessAnchorEdgeCases(t *testing.T) {
	deep := strings.Repeat(`{"type":"object","properties":{"a":`, 10000) + `{"type":"string"}` + strings.Repeat(`}}`, 10000)
	tests := []struct {
		name      string
		schema    string
		want      Contract
		instances int // -1: don't check
		leaves    int // -1: don't check
		rejected  int
		check     func(t *testing.T, a Assessment)
	}{
		{"format uri is asserted", obj(`{"url":{"type":"string","format":"uri"}}`, `["url"]`), ContractEnforceable, 1, 1, 1,
			func(t *testing.T, a Assessment) {
				if !a.FormatDependent {
					t.Error("FormatDependent not set")
				}
			}},
		{"format date-time is asserted", obj(`{"at":{"type":"string","format":"date-time"}}`, `["at"]`), ContractEnforceable, 1, 1, 1, nil},
		{"slug pattern rejects the sentinel", obj(`{"slug":{"type":"string","pattern":"^[a-z-]+$"}}`, `["slug"]`), ContractEnforceable, 1, 1, 1,
			func(t *testing.T, a Assessment) {
				if a.FormatDependent {
					t.Error("FormatDependent set without a format")
				}
			}},
		{"digits pattern", obj(`{"n":{"type":"string","pattern":"^[0-9]+$"}}`, `["n"]`), ContractEnforceable, 1, 1, 1, nil},
		{"$ref to an unconstrained object is followed: no false positive",
			`{"type":"object","properties":{"item":{"$ref":"#/$defs/Item"}},"required":["item"],"$defs":{"Item":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}}`,
			ContractVacuous, 1, 1, 0, nil},
		{"items via $ref to a constrained object (the empty array is not rejected)",
			`{"type":"object","properties":{"items":{"type":"array","items":{"$ref":"#/definitions/I"}}},"required":["items"],"definitions":{"I":{"type":"object","properties":{"kind":{"enum":["a","b"]}},"required":["kind"]}}}`,
			ContractPartial, 1, 1, 1, nil},
		{"items via $ref to a constrained object, minItems 1",
			`{"type":"object","properties":{"items":{"type":"array","minItems":1,"items":{"$ref":"#/definitions/I"}}},"required":["items"],"definitions":{"I":{"type":"object","properties":{"kind":{"enum":["a","b"]}},"required":["kind"]}}}`,
			ContractEnforceable, 1, 1, 1, nil},
		{"oneOf [string, string+maxLength]: overlap is not enforcement",
			obj(`{"v":{"oneOf":[{"type":"string"},{"type":"string","maxLength":5}]}}`, `["v"]`), ContractVacuous, 1, 1, 0,
			func(t *testing.T, a Assessment) {
				if a.Branches != 2 || a.Uncovered != 0 {
					t.Errorf("branches %d uncovered %d, want 2 and 0 (branch 1 overlapped)", a.Branches, a.Uncovered)
				}
			}},
		{"oneOf discriminated union: every branch enforced",
			obj(`{"shape":{"oneOf":[{"type":"object","properties":{"kind":{"const":"circle"},"r":{"type":"number"}},"required":["kind","r"]},{"type":"object","properties":{"kind":{"const":"square"},"side":{"type":"number"}},"required":["kind","side"]}]}}`, `["shape"]`),
			ContractEnforceable, 2, 4, 2, nil},
		{"oneOf with one loose branch is partial",
			obj(`{"v":{"oneOf":[{"type":"string","enum":["x"]},{"type":"integer"}]}}`, `["v"]`), ContractPartial, 2, 2, 1, nil},
		{"anyOf [null, integer>=0]: the null branch has nothing to corrupt and is not rejected",
			obj(`{"v":{"anyOf":[{"type":"null"},{"type":"integer","minimum":0}]}}`, `["v"]`), ContractPartial, 2, 1, 1,
			func(t *testing.T, a Assessment) {
				if !strings.Contains(a.Reason, "nothing to corrupt") {
					t.Errorf("reason %q does not mention the skipped null instance", a.Reason)
				}
			}},
		{"nullable type list", obj(`{"v":{"type":["integer","null"],"minimum":0}}`, `["v"]`), ContractPartial, 2, 1, 1, nil},
		{"boolean const false", obj(`{"v":{"type":"boolean","const":false}}`, `["v"]`), ContractEnforceable, 1, 1, 1, nil},
		{"boolean const true", obj(`{"v":{"type":"boolean","const":true}}`, `["v"]`), ContractEnforceable, 1, 1, 1, nil},
		{"plain boolean", obj(`{"v":{"type":"boolean"}}`, `["v"]`), ContractVacuous, 1, 1, 0, nil},
		{"minItems only", obj(`{"v":{"type":"array","minItems":2}}`, `["v"]`), ContractVacuous, 1, 2, 0, nil},
		{"additionalProperties false only", `{"type":"object","additionalProperties":false}`, ContractVacuous, 1, 0, 0, nil},
		{"minLength only", obj(`{"v":{"type":"string","minLength":1}}`, `["v"]`), ContractVacuous, 1, 1, 0, nil},
		{"length-only bounds do not count", obj(`{"code":{"type":"string","minLength":3,"maxLength":3}}`, `["code"]`), ContractVacuous, 1, 1, 0, nil},
		{"optional enum is generated (and absent in the minimal instance)", obj(`{"name":{"type":"string"},"kind":{"enum":["a","b"]}}`, `["name"]`), ContractPartial, 1, 2, 1,
			func(t *testing.T, a Assessment) {
				if a.LeafRate != 0.5 {
					t.Errorf("LeafRate = %v, want 0.5", a.LeafRate)
				}
			}},
		{"invalid type name", `{"type":"objekt"}`, ContractInvalid, 0, 0, 0,
			func(t *testing.T, a Assessment) {
				if a.CompileError == "" || strings.Contains(a.CompileError, "objekt") {
					t.Errorf("CompileError = %q", a.CompileError)
				}
			}},
		{"empty schema", `{}`, ContractVacuous, 1, 1, 0, nil},
		{"bare object", `{"type":"object"}`, ContractVacuous, 1, 0, 0, nil},
		{"fastmcp wrapper", `{"type":"object","properties":{"result":{"type":"string"}},"required":["result"],"x-fastmcp-wrap-result":true}`, ContractVacuous, 1, 1, 0,
			func(t *testing.T, a Assessment) {
				if !a.Wrapped || !a.RootObject {
					t.Errorf("Wrapped %v RootObject %v", a.Wrapped, a.RootObject)
				}
			}},
		{"pure $ref cycle", `{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}`, ContractVacuous, 0, 0, 0,
			func(t *testing.T, a Assessment) {
				if !strings.Contains(a.Reason, "not established") {
					t.Errorf("reason %q", a.Reason)
				}
			}},
		{"recursive tree schema", `{"type":"object","properties":{"node":{"$ref":"#/$defs/Node"}},"required":["node"],"$defs":{"Node":{"type":"object","properties":{"name":{"type":"string","pattern":"^[a-z]+$"},"children":{"type":"array","items":{"$ref":"#/$defs/Node"}}},"required":["name"]}}}`,
			ContractEnforceable, 1, 2, 2, nil},
		{"10,000-deep schema", deep, ContractInvalid, 0, 0, 0, nil},
		{"remote $ref is never fetched", `{"type":"object","properties":{"a":{"$ref":"https://example.com/a.json"}}}`, ContractInvalid, 0, 0, 0,
			func(t *testing.T, a Assessment) {
				if !strings.Contains(a.CompileError, "never fetched") {
					t.Errorf("CompileError = %q", a.CompileError)
				}
			}},
		{"absent", ``, ContractNone, 0, 0, 0, nil},
		{"null", `null`, ContractNone, 0, 0, 0, nil},
		{"root not an object", `{"type":"array","minItems":1,"items":{"type":"integer","minimum":1}}`, ContractEnforceable, 1, 1, 1,
			func(t *testing.T, a Assessment) {
				if a.RootObject {
					t.Error("RootObject set for an array root")
				}
			}},
		{"draft-07 $ref hides siblings", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"a":{"$ref":"#/definitions/S","type":"integer"}},"required":["a"],"definitions":{"S":{"type":"string","enum":["x"]}}}`,
			ContractEnforceable, 1, 1, 1, nil},
		{"allOf merge", obj(`{"v":{"allOf":[{"type":"integer"},{"minimum":10},{"maximum":20}]}}`, `["v"]`), ContractEnforceable, 1, 1, 1, nil},
		{"if/then/else both branches", `{"type":"object","properties":{"kind":{"enum":["a","b"]},"n":{"type":"integer"}},"required":["kind","n"],"if":{"properties":{"kind":{"const":"a"}}},"then":{"properties":{"n":{"minimum":0}}},"else":{"properties":{"n":{"maximum":100}}}}`,
			ContractEnforceable, 2, -1, 0, nil},
		{"ECMA lookahead pattern is not asserted", obj(`{"v":{"type":"string","pattern":"^(?!x)[a-z]+$"}}`, `["v"]`), ContractVacuous, 1, 1, 0,
			func(t *testing.T, a Assessment) {
				if a.UnassertedPatterns != 1 {
					t.Errorf("UnassertedPatterns = %d", a.UnassertedPatterns)
				}
			}},
		{"additionalProperties schema is exercised", `{"type":"object","minProperties":1,"additionalProperties":{"type":"string","format":"email"}}`, ContractEnforceable, 1, 1, 1, nil},
		{"patternProperties exercised", `{"type":"object","patternProperties":{"^x-[a-z]+$":{"type":"integer","minimum":1}},"additionalProperties":false}`, ContractPartial, 1, 1, 1, nil},
		{"unsatisfiable schema", obj(`{"v":{"type":"string","minLength":5,"maxLength":2}}`, `["v"]`), ContractVacuous, 0, 0, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := Assess(json.RawMessage(tt.schema)) // bounded by its work budget, not by a clock
			if a.Contract != tt.want {
				t.Fatalf("Contract = %s, want %s (reason: %s)", a.Contract, tt.want, a.Reason)
			}
			if tt.instances >= 0 && a.Instances != tt.instances {
				t.Errorf("Instances = %d, want %d", a.Instances, tt.instances)
			}
			if tt.leaves >= 0 && (a.Leaves != tt.leaves || a.LeavesRejected != tt.rejected) {
				t.Errorf("Leaves %d/%d rejected, want %d/%d", a.LeavesRejected, a.Leaves, tt.rejected, tt.leaves)
			}
			if a.Leaves > 0 && a.LeafRate != float64(a.LeavesRejected)/float64(a.Leaves) {
				t.Errorf("LeafRate %v inconsistent", a.LeafRate)
			}
			if a.Reason == "" {
				t.Error("empty Reason")
			}
			if tt.check != nil {
				tt.check(t, a)
			}
		})
	}
}

// TestAssessNoValues: nothing from the schema's instances leaks into the
// assessment (reasons quote pointers and keywords only).
func TestAssessNoValues(t *testing.T) {
	a := Assess(json.RawMessage(obj(`{"token":{"type":"string","enum":["SECRETENUM"]},"n":{"const":"SECRETCONST"}}`, `["token"]`)))
	b, _ := json.Marshal(a)
	if strings.Contains(string(b), "SECRET") {
		t.Fatalf("assessment quotes a value: %s", b)
	}
}

// TestAssessShapes pins the verdict over the sampled shapes (branch
// instances, minimal instance, nullable values null, arrays empty): exact
// verdicts and shape counts for schemas whose real payloads take shapes one
// full instance per branch never tries.
func TestAssessShapes(t *testing.T) {
	uri := `{"type":["string","null"],"format":"uri"}`
	uriAnyOf := `{"anyOf":[{"type":"string","format":"uri"},{"type":"null"}]}`
	tests := []struct {
		name     string
		schema   string
		want     Contract
		shapes   int
		rejected int
		first    string // the first shape not rejected, as the reason names it ("" for none)
	}{
		// Issue 15's example: the only constraint is format uri on two
		// nullable fields. A shape with one URI is rejected (the sentinel is
		// no URI); with both fields null there is nothing to corrupt, so the
		// "corrupted" payload is the payload itself and validates. Some
		// shapes rejected, one not: partial.
		{"format uri on two nullable fields", obj(`{"homepage":`+uri+`,"docs":`+uri+`}`, `["homepage","docs"]`),
			ContractPartial, 4, 3, "nullable values null holding nothing to corrupt"},
		{"format uri on two nullable fields, anyOf with null", obj(`{"homepage":`+uriAnyOf+`,"docs":`+uriAnyOf+`}`, `["homepage","docs"]`),
			ContractPartial, 4, 3, "nullable values null holding nothing to corrupt"},
		{"format uri on two optional nullable fields", obj(`{"homepage":`+uri+`,"docs":`+uri+`}`, `[]`),
			ContractPartial, 5, 3, "optional properties absent holding nothing to corrupt"},
		// An array whose constraints bind only its items: the empty array
		// is a valid payload with nothing to corrupt, so its corruption
		// validates; the one-item shape is rejected. Partial. With
		// minItems 1 there is no empty shape: enforceable.
		{"array constrained only through its items", obj(`{"hits":{"type":"array","items":{"type":"string","format":"uri"}}}`, `["hits"]`),
			ContractPartial, 2, 1, "arrays empty holding nothing to corrupt"},
		{"array with minItems 1", obj(`{"hits":{"type":"array","minItems":1,"items":{"type":"string","format":"uri"}}}`, `["hits"]`),
			ContractEnforceable, 1, 1, ""},
		{"root array constrained only through its items", `{"type":"array","items":{"type":"integer","minimum":1}}`,
			ContractPartial, 2, 1, "arrays empty holding nothing to corrupt"},
		{"empty array beside a constrained required field", obj(`{"total":{"type":"integer","minimum":0},"hits":{"type":"array","items":{"type":"string"}}}`, `["total","hits"]`),
			ContractEnforceable, 2, 2, ""},
		{"constrained required field, free optional one", obj(`{"id":{"type":"integer","minimum":1},"note":{"type":"string"}}`, `["id"]`),
			ContractEnforceable, 2, 2, ""},
		{"only optional properties carry constraints", obj(`{"url":{"type":"string","format":"uri"}}`, `[]`),
			ContractPartial, 2, 1, "optional properties absent holding nothing to corrupt"},
		{"nothing constrained", obj(`{"name":{"type":"string"},"tags":{"type":"array","items":{"type":"string"}}}`, `["name"]`),
			ContractVacuous, 3, 0, "full instance"},
		{"nullable beside a constrained required field", obj(`{"id":{"type":"string","pattern":"^[a-z]+$"},"parent":{"type":["string","null"],"pattern":"^[a-z]+$"}}`, `["id","parent"]`),
			ContractEnforceable, 2, 2, ""},
		{"enum with null", obj(`{"state":{"enum":["open","closed",null]}}`, `["state"]`),
			ContractPartial, 2, 1, "nullable values null holding nothing to corrupt"},
		{"nullable object with a constrained field", obj(`{"owner":{"anyOf":[{"type":"object","properties":{"email":{"type":"string","format":"email"}},"required":["email"]},{"type":"null"}]}}`, `["owner"]`),
			ContractPartial, 2, 1, "full instance (branch /properties/owner/anyOf/1) holding nothing to corrupt"},
		{"discriminated union with optional fields", obj(`{"shape":{"oneOf":[`+
			`{"type":"object","properties":{"kind":{"const":"circle"},"r":{"type":"number"}},"required":["kind"]},`+
			`{"type":"object","properties":{"kind":{"const":"square"},"side":{"type":"number"}},"required":["kind"]}]}}`, `["shape"]`),
			ContractEnforceable, 4, 4, ""},
		{"nullable root: its null branch is a shape of its own", `{"type":["object","null"],"properties":{"id":{"type":"integer","minimum":1}},"required":["id"]}`,
			ContractPartial, 2, 1, "full instance (branch /type/1) holding nothing to corrupt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := Assess(json.RawMessage(tt.schema))
			if a.Contract != tt.want || a.Undetermined {
				t.Fatalf("Contract = %s (undetermined %v), want %s (reason: %s)", a.Contract, a.Undetermined, tt.want, a.Reason)
			}
			if a.Shapes != tt.shapes || a.ShapesRejected != tt.rejected {
				t.Errorf("shapes %d/%d rejected, want %d/%d (reason: %s)", a.ShapesRejected, a.Shapes, tt.rejected, tt.shapes, a.Reason)
			}
			if tt.first != "" && !strings.Contains(a.Reason, "(first: "+tt.first+")") && !strings.Contains(a.Reason, "first: "+tt.first+")") {
				t.Errorf("reason %q does not name %q first", a.Reason, tt.first)
			}
			if a.Shapes < a.Instances || a.ShapesCapped {
				t.Errorf("shapes %d, instances %d, capped %v", a.Shapes, a.Instances, a.ShapesCapped)
			}
		})
	}
}

// TestAssessShapeCap: 61 branch instances (a oneOf of 60 variants and a
// nullable field) have more than jsonschema.MaxShapes distinct shapes; the verdict
// stands over the sample and says so.
func TestAssessShapeCap(t *testing.T) {
	var alts []string
	for i := range 60 {
		alts = append(alts, fmt.Sprintf(`{"type":"object","properties":{"kind":{"const":"k%d"},"note":{"type":"string"}},"required":["kind"]}`, i))
	}
	a := Assess(json.RawMessage(obj(`{"v":{"oneOf":[`+strings.Join(alts, ",")+`]},"n":{"type":["integer","null"],"minimum":1}}`, `["v","n"]`)))
	if a.Contract != ContractEnforceable || a.Shapes != jsonschema.MaxShapes || !a.ShapesCapped || a.ShapesRejected != jsonschema.MaxShapes {
		t.Fatalf("got %s, shapes %d/%d rejected, capped %v: %s", a.Contract, a.ShapesRejected, a.Shapes, a.ShapesCapped, a.Reason)
	}
	if !strings.Contains(a.Reason, fmt.Sprintf("shape cap of %d reached", jsonschema.MaxShapes)) {
		t.Errorf("reason %q does not mention the shape cap", a.Reason)
	}
}
