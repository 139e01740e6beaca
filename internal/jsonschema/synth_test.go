package jsonschema

import (
	"encoding/json"
	"errors"
	"github.com/mcpdrill/mcpdrill/internal/jsonvalue"
	"reflect"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
)

var obj = testutil.ObjectSchema

func TestSynthesize(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		n      int // expected instance count; -1 any (>0)
	}{
		{"formats", obj(`{"a":{"format":"date-time","type":"string"},"b":{"type":"string","format":"date"},"c":{"type":"string","format":"time"},
			"d":{"type":"string","format":"email"},"e":{"type":"string","format":"uri"},"f":{"type":"string","format":"uuid"},
			"g":{"type":"string","format":"ipv4"},"h":{"type":"string","format":"ipv6"},"i":{"type":"string","format":"hostname"},
			"j":{"type":"string","format":"duration"},"k":{"type":"string","format":"json-pointer"},"l":{"type":"string","format":"uri-reference"}}`, `[]`), 1},
		{"patterns", obj(`{"a":{"type":"string","pattern":"^[A-Z]{3}-\\d{4}$"},"b":{"type":"string","pattern":"^(foo|bar)+baz?$"},
			"c":{"type":"string","pattern":"^[^@\\s]+@[^@\\s]+\\.[a-z]{2,}$"},"d":{"type":"string","pattern":"^\\u0041[0-9a-f]{8}$"},
			"e":{"type":"string","pattern":"^[a-z]+$","minLength":10,"maxLength":12},"f":{"type":"string","pattern":"x"}}`, `["a","b","c","d","e","f"]`), 1},
		{"numbers", obj(`{"a":{"type":"integer","minimum":100},"b":{"type":"integer","maximum":-5},"c":{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1},
			"d":{"type":"integer","multipleOf":7,"minimum":50},"e":{"type":"number","multipleOf":0.25,"minimum":0.3,"maximum":0.6}}`, `["a","b","c","d","e"]`), 1},
		{"draft-04 boolean exclusiveMinimum", `{"$schema":"http://json-schema.org/draft-04/schema#","type":"integer","minimum":5,"exclusiveMinimum":true,"maximum":6}`, 1},
		{"arrays", obj(`{"u":{"type":"array","items":{"type":"string","maxLength":3},"minItems":4,"uniqueItems":true},
			"t":{"type":"array","prefixItems":[{"type":"integer"},{"type":"string"}],"items":false},
			"c":{"type":"array","contains":{"const":"needle"},"items":{"type":"string"}},
			"e":{"type":"array","maxItems":0}}`, `["u","t","c","e"]`), 1},
		{"draft-07 tuple", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"array","items":[{"type":"integer"},{"type":"boolean"}],"additionalItems":false,"minItems":2}`, 1},
		{"objects", `{"type":"object","properties":{"a":{"type":"string"}},"minProperties":3,"maxProperties":4,"propertyNames":{"pattern":"^[a-z0-9]+$"},
			"dependentRequired":{"a":["b"]},"dependentSchemas":{"a":{"properties":{"z":{"type":"integer"}},"required":["z"]}}}`, 1},
		{"anyOf covers every branch", obj(`{"v":{"anyOf":[{"type":"string"},{"type":"integer"},{"type":"boolean"},{"type":"null"}]}}`, `["v"]`), 4},
		{"nested choice points", obj(`{"a":{"oneOf":[{"type":"string"},{"type":"object","properties":{"b":{"anyOf":[{"type":"integer"},{"type":"array","items":{"type":"string"}}]}},"required":["b"]}]}}`, `["a"]`), 3},
		{"type list", obj(`{"v":{"type":["string","integer","null"]}}`, `["v"]`), 3},
		{"boolean schemas", `{"type":"object","properties":{"any":true,"none":false}}`, 1},
		{"recursive", `{"$ref":"#/$defs/T","$defs":{"T":{"type":"object","properties":{"v":{"type":"integer"},"kids":{"type":"array","items":{"$ref":"#/$defs/T"}}},"required":["v"]}}}`, 1},
		{"recursive via $dynamicRef", `{"$dynamicAnchor":"node","type":"object","properties":{"kids":{"type":"array","items":{"$dynamicRef":"#node"}}}}`, 1},
		{"anchor ref", `{"type":"object","properties":{"a":{"$ref":"#A"}},"$defs":{"x":{"$anchor":"A","type":"string","format":"email"}}}`, 1},
		{"const object", `{"const":{"a":[1,2],"b":null}}`, 1},
		{"not", obj(`{"v":{"type":"string","not":{"const":"sample"}}}`, `["v"]`), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := json.RawMessage(tt.schema)
			got, err := Synthesize(raw, SynthOptions{})
			if err != nil {
				t.Fatal(err)
			}
			s, err := Compile(raw)
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range got {
				if vs := s.Violations(v); vs != nil {
					t.Errorf("instance %d %s invalid: %+v", i, jsonvalue.Canonical(v), vs)
				}
			}
			if tt.n >= 0 && len(got) != tt.n {
				for _, v := range got {
					t.Logf("instance %s", jsonvalue.Canonical(v))
				}
				t.Errorf("%d instances, want %d", len(got), tt.n)
			}
		})
	}
}

func TestSynthesizeOptionalPresent(t *testing.T) {
	got, err := Synthesize(json.RawMessage(obj(`{"a":{"type":"string"},"b":{"type":"integer"},"c":{"type":"object","properties":{"d":{"type":"boolean"}}}}`, `["a"]`)), SynthOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s := string(jsonvalue.Canonical(got[0])); s != `{"a":"sample","b":1,"c":{"d":true}}` {
		t.Fatalf("first instance %s does not hold every optional property", s)
	}
}

func TestSynthesizeDeterministic(t *testing.T) {
	raw := json.RawMessage(obj(`{"k":{"enum":["a","b","c","d","e"]},"s":{"type":"string","pattern":"^(x|y|z)[0-9]$"},"u":{"anyOf":[{"type":"string"},{"type":"integer"}]}}`, `["k","s"]`))
	a, err := Synthesize(raw, SynthOptions{Seed: 42})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Synthesize(raw, SynthOptions{Seed: 42})
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed, different instances")
	}
	differs := false
	for seed := range uint64(8) {
		c, _ := Synthesize(raw, SynthOptions{Seed: seed})
		if !reflect.DeepEqual(a, c) {
			differs = true
		}
	}
	if !differs {
		t.Error("the seed never changes the choice among equally valid values")
	}
}

func TestSynthesizeLimits(t *testing.T) {
	var alts []string
	for i := range 30 {
		alts = append(alts, `{"const":`+itoa(i)+`}`)
	}
	raw := json.RawMessage(`{"anyOf":[` + joinComma(alts) + `]}`)
	got, err := Synthesize(raw, SynthOptions{MaxInstances: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 5 {
		t.Errorf("MaxInstances 5: got %d", len(got))
	}
	if _, err := Synthesize(json.RawMessage(`{"type":"string","minLength":3,"maxLength":1}`), SynthOptions{}); !errors.Is(err, ErrNoInstance) {
		t.Errorf("unsatisfiable: err = %v", err)
	}
	if _, err := Synthesize(json.RawMessage(`{"type":"objekt"}`), SynthOptions{}); !errors.Is(err, ErrInvalidSchema) {
		t.Errorf("invalid: err = %v", err)
	}
	// Every property required and recursive: no finite instance exists.
	_, err = Synthesize(json.RawMessage(`{"$defs":{"N":{"type":"object","properties":{"n":{"$ref":"#/$defs/N"}},"required":["n"]}},"$ref":"#/$defs/N"}`), SynthOptions{})
	if !errors.Is(err, ErrNoInstance) {
		t.Errorf("infinite required recursion: err = %v", err)
	}
}

func joinComma(s []string) string {
	out := ""
	for i, e := range s {
		if i > 0 {
			out += ","
		}
		out += e
	}
	return out
}
