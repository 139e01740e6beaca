package schema

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func obj(props, required string) string {
	return `{"type":"object","properties":` + props + `,"required":` + required + `}`
}

// TestAssessAnchorEdgeCases runs the edge cases on which the reference
// implementation was wrong, plus more, and pins the verdicts.
func TestAssessAnchorEdgeCases(t *testing.T) {
	deep := deepSchema(10000)
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
		{"items via $ref to a constrained object",
			`{"type":"object","properties":{"items":{"type":"array","items":{"$ref":"#/definitions/I"}}},"required":["items"],"definitions":{"I":{"type":"object","properties":{"kind":{"enum":["a","b"]}},"required":["kind"]}}}`,
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
		{"oneOf with one loose branch is vacuous",
			obj(`{"v":{"oneOf":[{"type":"string","enum":["x"]},{"type":"integer"}]}}`, `["v"]`), ContractVacuous, 2, 2, 1, nil},
		{"anyOf [null, integer>=0]: null branch has nothing to corrupt",
			obj(`{"v":{"anyOf":[{"type":"null"},{"type":"integer","minimum":0}]}}`, `["v"]`), ContractEnforceable, 2, 1, 1,
			func(t *testing.T, a Assessment) {
				if !strings.Contains(a.Reason, "nothing to corrupt") {
					t.Errorf("reason %q does not mention the skipped null instance", a.Reason)
				}
			}},
		{"nullable type list", obj(`{"v":{"type":["integer","null"],"minimum":0}}`, `["v"]`), ContractEnforceable, 2, 1, 1, nil},
		{"boolean const false", obj(`{"v":{"type":"boolean","const":false}}`, `["v"]`), ContractEnforceable, 1, 1, 1, nil},
		{"boolean const true", obj(`{"v":{"type":"boolean","const":true}}`, `["v"]`), ContractEnforceable, 1, 1, 1, nil},
		{"plain boolean", obj(`{"v":{"type":"boolean"}}`, `["v"]`), ContractVacuous, 1, 1, 0, nil},
		{"minItems only", obj(`{"v":{"type":"array","minItems":2}}`, `["v"]`), ContractVacuous, 1, 2, 0, nil},
		{"additionalProperties false only", `{"type":"object","additionalProperties":false}`, ContractVacuous, 1, 0, 0, nil},
		{"minLength only", obj(`{"v":{"type":"string","minLength":1}}`, `["v"]`), ContractVacuous, 1, 1, 0, nil},
		{"length-only bounds do not count", obj(`{"code":{"type":"string","minLength":3,"maxLength":3}}`, `["code"]`), ContractVacuous, 1, 1, 0, nil},
		{"optional enum is generated", obj(`{"name":{"type":"string"},"kind":{"enum":["a","b"]}}`, `["name"]`), ContractEnforceable, 1, 2, 1,
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
		{"root not an object", `{"type":"array","items":{"type":"integer","minimum":1}}`, ContractEnforceable, 1, 1, 1,
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
		{"additionalProperties schema is exercised", `{"type":"object","additionalProperties":{"type":"string","format":"email"}}`, ContractEnforceable, 1, 1, 1, nil},
		{"patternProperties exercised", `{"type":"object","patternProperties":{"^x-[a-z]+$":{"type":"integer","minimum":1}},"additionalProperties":false}`, ContractEnforceable, 1, 1, 1, nil},
		{"unsatisfiable schema", obj(`{"v":{"type":"string","minLength":5,"maxLength":2}}`, `["v"]`), ContractVacuous, 0, 0, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			a := Assess(json.RawMessage(tt.schema))
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("Assess took %v", d)
			}
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
