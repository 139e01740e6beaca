package jsonschema

import (
	"encoding/json"
	"errors"
	"github.com/mcpdrill/mcpdrill/internal/jsonvalue"
	"strings"
	"testing"
)

func deepSchema(n int) string {
	return strings.Repeat(`{"type":"object","properties":{"a":`, n) + `{"type":"string"}` + strings.Repeat(`}}`, n)
}

func TestCompile(t *testing.T) {
	tests := []struct {
		name    string
		schema  string
		wantErr error // nil: compiles
	}{
		{"empty", `{}`, nil},
		{"true", `true`, nil},
		{"draft-07", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object"}`, nil},
		{"2019-09", `{"$schema":"https://json-schema.org/draft/2019-09/schema","type":"object"}`, nil},
		{"local refs", `{"$defs":{"A":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/A"}}}`, nil},
		{"ref cycle", `{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}`, nil},
		{"ecma lookahead accepted", `{"type":"string","pattern":"^(?!\\.)[a-z.]+$"}`, nil},
		{"ecma unicode escape", `{"type":"string","pattern":"^\\u00e9+$"}`, nil},
		{"invalid type", `{"type":"objekt"}`, ErrInvalidSchema},
		{"bad regex", `{"type":"string","pattern":"[a-"}`, ErrInvalidSchema},
		{"missing ref", `{"$ref":"#/$defs/nope"}`, ErrInvalidSchema},
		{"remote ref", `{"$ref":"https://example.com/s.json"}`, ErrRemoteRef},
		{"relative remote ref", `{"properties":{"a":{"$ref":"other.json#/x"}}}`, ErrRemoteRef},
		{"unknown dialect", `{"$schema":"https://example.com/my-dialect"}`, ErrUnsupportedDialect},
		{"too deep", deepSchema(10000), jsonvalue.ErrTooDeep},
		{"not json", `{"type":`, ErrInvalidSchema},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Compile(json.RawMessage(tt.schema))
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
		})
	}
}

func TestCompileErrorHasNoValues(t *testing.T) {
	_, err := Compile(json.RawMessage(`{"type":"object","properties":{"secret":{"type":"s3cr3t-value"}}}`))
	if err == nil {
		t.Fatal("want error")
	}
	if strings.Contains(err.Error(), "s3cr3t-value") {
		t.Fatalf("error quotes a value: %v", err)
	}
	if !strings.Contains(err.Error(), "/properties/secret/type") {
		t.Fatalf("error lacks the pointer: %v", err)
	}
}

func TestFormatAssertion(t *testing.T) {
	raw := json.RawMessage(`{"type":"object","properties":{"url":{"type":"string","format":"uri"}}}`)
	bad := map[string]any{"url": "not a uri"}
	s, err := Compile(raw)
	if err != nil {
		t.Fatal(err)
	}
	if s.Validate(bad) == nil {
		t.Error("Compile: format not asserted")
	}
	s2, err := CompileOpts(raw, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s2.Validate(bad) != nil {
		t.Error("CompileOpts without AssertFormat asserted format")
	}
}

func TestViolations(t *testing.T) {
	raw := json.RawMessage(`{"type":"object","required":["hits","id"],"additionalProperties":false,
		"properties":{"id":{},"hits":{"type":"array"},"kind":{"enum":["a","b"]},"n":{"type":"integer","minimum":0},
		"when":{"type":"string","format":"date-time"},"u":{"anyOf":[{"type":"null"},{"type":"integer"}]}}}`)
	s, err := Compile(raw)
	if err != nil {
		t.Fatal(err)
	}
	inst := mustDecode(t, `{"hits":"SECRETVALUE","kind":"SECRETKIND","n":-5,"when":"SECRETDATE","u":"SECRETU","extra":1}`)
	got := s.Violations(inst)
	want := []Violation{
		{"", "required", `missing required property "id"`},
		{"/extra", "additionalProperties", "property is not allowed"},
		{"/hits", "type", "expected array, got string"},
		{"/kind", "enum", "value is not one of the 2 allowed values"},
		{"/n", "minimum", "value is below the minimum 0"},
		{"/u", "anyOf", "value matches none of the alternatives"},
		{"/when", "format", "value is not a valid date-time"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d violations %+v, want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("violation %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	err = s.Validate(inst)
	if err == nil || strings.Contains(err.Error(), "SECRET") {
		t.Fatalf("Validate error = %v", err)
	}
	if s.Violations(mustDecode(t, `{"hits":[],"id":1}`)) != nil {
		t.Error("valid instance has violations")
	}
}

func TestRefCycleValidationTerminates(t *testing.T) {
	s, err := Compile(json.RawMessage(`{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}`))
	if err != nil {
		t.Fatal(err)
	}
	vs := s.Violations(map[string]any{})
	if len(vs) == 0 {
		t.Fatal("a pure $ref cycle accepted a value")
	}
}

func TestUnassertedPatterns(t *testing.T) {
	s, err := Compile(json.RawMessage(`{"type":"string","pattern":"^(?!x)[a-z]+$"}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.UnassertedPatterns(); len(got) != 1 {
		t.Fatalf("UnassertedPatterns = %v", got)
	}
	if s.Validate("xyz") != nil {
		t.Error("unsupported pattern should not be asserted")
	}
	s2, err := Compile(json.RawMessage(`{"type":"string","pattern":"^\\u0041+$"}`))
	if err != nil {
		t.Fatal(err)
	}
	if s2.Validate("AAA") != nil || s2.Validate("b") == nil {
		t.Error("\\u escape not translated")
	}
}

// TestConcurrentUse: a compiled Schema and Measure are safe for concurrent
// use (run with -race).
func TestConcurrentUse(t *testing.T) {
	s, err := Compile(json.RawMessage(`{"type":"object","properties":{"p":{"type":"string","format":"regex"},"q":{"type":"string","pattern":"^(?=a)a+$"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan bool)
	for i := range 4 {
		go func() {
			for range 50 {
				_ = s.Validate(map[string]any{"p": "(?=x)", "q": "aa"})
				_ = Measure(json.RawMessage(`{"type":"object","properties":{"k":{"enum":["a"]}}}`))
			}
			done <- i%2 == 0
		}()
	}
	for range 4 {
		<-done
	}
	if got := s.UnassertedPatterns(); len(got) != 1 {
		t.Fatalf("UnassertedPatterns changed after compile: %v", got)
	}
}
