package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/jsonschema"
)

func TestEmbeddedProfilesLoad(t *testing.T) {
	ps, err := Profiles()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"anthropic", "anthropic-strict", "gemini", "openai", "openai-strict"}
	if got := IDs(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("profiles %v, want %v", got, want)
	}
	for _, p := range ps {
		if _, err := time.Parse(time.DateOnly, p.Read); err != nil {
			t.Errorf("%s: read date %q", p.ID, p.Read)
		}
	}
}

func TestLookup(t *testing.T) {
	ps, err := Lookup([]string{"gemini", "openai-strict", "gemini"})
	if err != nil || len(ps) != 2 || ps[0].ID != "gemini" || ps[1].ID != "openai-strict" {
		t.Fatalf("Lookup: %v %v", ps, err)
	}
	if all, err := Lookup([]string{"all"}); err != nil || len(all) != 5 {
		t.Fatalf("all: %d %v", len(all), err)
	}
	if _, err := Lookup([]string{"openai-strictest"}); err == nil || !strings.Contains(err.Error(), "openai-strict") {
		t.Fatalf("unknown profile: %v", err)
	}
}

// TestParseProfileRefuses: a profile file that cannot be trusted to say
// what it grades is refused, with a message naming the fault.
func TestParseProfileRefuses(t *testing.T) {
	base := func(c string) string {
		return `{"id":"p","provider":"P","mode":"m","field":"f","read":"2026-12-06","constraints":[` + c + `]}`
	}
	good := `{"id":"p/a","rule":"r","check":"array-items","effect":"reject","basis":"documented","sources":[{"ref":"x","read":"2026-12-06"}]}`
	if _, err := parseProfile([]byte(base(good))); err != nil {
		t.Fatalf("a good profile is refused: %v", err)
	}
	tests := map[string]string{
		"unknown field":       strings.Replace(base(good), `"mode"`, `"mood":"x","mode"`, 1),
		"unknown check":       strings.Replace(base(good), "array-items", "no-such-check", 1),
		"foreign constraint":  strings.Replace(base(good), `"p/a"`, `"q/a"`, 1),
		"bad effect":          strings.Replace(base(good), `"reject"`, `"maybe"`, 1),
		"bad basis":           strings.Replace(base(good), `"documented"`, `"rumour"`, 1),
		"no source":           strings.Replace(base(good), `[{"ref":"x","read":"2026-12-06"}]`, `[]`, 1),
		"undated source":      strings.Replace(base(good), `"read":"2026-12-06"}]`, `"read":"last week"}]`, 1),
		"stale profile date":  strings.Replace(base(good), `"read":"2026-12-06","constraints"`, `"read":"2026-01-01","constraints"`, 1),
		"uncertain, no note":  strings.Replace(base(good), `"basis"`, `"uncertain":true,"basis"`, 1),
		"missing params":      strings.Replace(base(good), "array-items", "nesting-depth", 1),
		"bad name pattern":    strings.Replace(base(good), `"check":"array-items"`, `"check":"name","params":{"pattern":"(","limit":3}`, 1),
		"bad profile id":      strings.Replace(base(good), `"id":"p"`, `"id":"P Q"`, 1),
		"no constraints":      `{"id":"p","provider":"P","mode":"m","field":"f","read":"2026-12-06","constraints":[]}`,
		"trailing rubbish":    base(good) + `{`,
		"duplicate in a file": base(good + "," + good),
	}
	for name, doc := range tests {
		t.Run(name, func(t *testing.T) {
			p, err := parseProfile([]byte(doc))
			if name == "duplicate in a file" {
				// Constraint ids are checked over every file, by load.
				_, err = load(fstest.MapFS{"profiles/a.json": {Data: []byte(doc)}})
			}
			if err == nil {
				t.Fatalf("accepted: %+v", p)
			}
		})
	}
}

// Abuse list for Assess, whose input is a schema a server wrote:
//   - nesting as deep as the decoder allows: the walks stop at
//     jsonvalue.MaxJSONDepth and the compile at its own limit;
//   - definitions that reference each other twice over (2^n expansion):
//     the resolving walk stops at walkBudget and the depth and recursion
//     verdicts say "not established" (uncertain) instead of hanging;
//   - reference cycles through "#", anchors and $dynamicRef: reported as
//     recursion, never followed twice;
//   - keywords of the wrong JSON type (type: 5, required: "x", properties:
//     []): read defensively, never a panic;
//   - text the server controls (names, format values, keys): a detail
//     never repeats it, except a format that is a short lower-case token;
//   - a schema that is not JSON at all, or absent: graded as no schema.
func TestAssessAbuse(t *testing.T) {
	ps, err := Profiles()
	if err != nil {
		t.Fatal(err)
	}
	deep := strings.Repeat(`{"type":"object","properties":{"a":`, 900) + `{}` + strings.Repeat(`}}`, 900)
	defs := map[string]any{"d0": map[string]any{"type": "string"}}
	for i := 1; i <= 40; i++ {
		r := fmt.Sprintf("#/$defs/d%d", i-1)
		defs[fmt.Sprintf("d%d", i)] = map[string]any{"anyOf": []any{map[string]any{"$ref": r}, map[string]any{"$ref": r}}}
	}
	bomb, _ := json.Marshal(map[string]any{"type": "object", "additionalProperties": false, "required": []any{"x"},
		"properties": map[string]any{"x": map[string]any{"$ref": "#/$defs/d40"}}, "$defs": defs})
	secret := "sk-live-0123456789abcdef"
	tests := map[string]struct {
		name, schema string
		check        func(t *testing.T, vs []Verdict)
	}{
		"deep": {schema: deep},
		"ref bomb": {schema: string(bomb), check: func(t *testing.T, vs []Verdict) {
			for _, v := range vs {
				if v.Profile == "openai-strict" && (v.Outcome != Rejected || !v.Uncertain) {
					t.Errorf("openai-strict on a schema too large to expand: %s uncertain %v, want rejected (uncertain): %+v", v.Outcome, v.Uncertain, v.Violations)
				}
			}
		}},
		"wrong types": {schema: `{"type":5,"required":"x","properties":[],"enum":{},"items":7,"format":["a"],"minItems":"9","pattern":3,"$ref":4}`},
		"server text": {name: secret, schema: `{"type":"object","properties":{"u":{"type":"string","format":"` + secret + `"}},"` + secret + `":1}`,
			check: func(t *testing.T, vs []Verdict) {
				for _, v := range vs {
					for _, x := range v.Violations {
						if strings.Contains(x.Detail, secret) {
							t.Errorf("%s: detail repeats server text: %q", x.Constraint, x.Detail)
						}
					}
				}
			}},
		"not json": {schema: `{"type":`, check: func(t *testing.T, vs []Verdict) {
			for _, v := range vs {
				if v.Outcome != Rejected {
					t.Errorf("%s: %s on a schema that is not JSON", v.Profile, v.Outcome)
				}
			}
		}},
		"absent": {schema: `null`, check: func(t *testing.T, vs []Verdict) {
			for _, v := range vs {
				if v.Outcome != Rejected || v.Violations[0].Pointer != "/inputSchema" {
					t.Errorf("%s: %+v on an absent schema", v.Profile, v)
				}
			}
		}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			name := tt.name
			if name == "" {
				name = "tool"
			}
			vs := Assess(context.Background(), Tool{Name: name, InputSchema: json.RawMessage(tt.schema)}, ps, jsonschema.Budget{})
			if len(vs) != len(ps) {
				t.Fatalf("%d verdicts for %d profiles", len(vs), len(ps))
			}
			if tt.check != nil {
				tt.check(t, vs)
			}
		})
	}
}

// TestViolationsBounded: a schema breaking one constraint at a thousand
// places lists MaxViolations of them and counts the rest.
func TestViolationsBounded(t *testing.T) {
	props := map[string]any{}
	for i := range 1000 {
		props[fmt.Sprintf("p%d", i)] = map[string]any{"type": "object", "properties": map[string]any{}}
	}
	raw, _ := json.Marshal(map[string]any{"type": "object", "properties": props})
	ps, _ := Lookup([]string{"openai-strict"})
	v := Assess(context.Background(), Tool{Name: "t", InputSchema: raw}, ps, jsonschema.Budget{})[0]
	per := map[string]int{}
	for _, x := range v.Violations {
		per[x.Constraint]++
	}
	if per["openai-strict/additional-properties"] != MaxViolations || per["openai-strict/all-required"] != MaxViolations {
		t.Fatalf("listed %v", per)
	}
	if v.Omitted != 1001+1000-2*MaxViolations { // every object is open; no property is required
		t.Fatalf("omitted %d", v.Omitted)
	}
}

func FuzzAssess(f *testing.F) {
	for _, s := range []string{`{"type":"object","properties":{"a":{"$ref":"#"}}}`, `{"anyOf":[{"type":["string","null"]}]}`,
		`{"type":"object","properties":{"x":{"enum":[1,{"a":[]}],"pattern":"(?=\\b)"}},"required":["y"]}`, `true`, `[]`} {
		f.Add("name", s)
	}
	ps, err := Profiles()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, name, schema string) {
		vs := Assess(context.Background(), Tool{Name: name, InputSchema: json.RawMessage(schema)}, ps, jsonschema.Budget{Steps: 1_000_000})
		for _, v := range vs {
			switch v.Outcome {
			case Accepted:
				if len(v.Violations) != 0 {
					t.Fatalf("%s accepted with violations", v.Profile)
				}
			case Rejected, AcceptedWithLoss:
				if len(v.Violations) == 0 {
					t.Fatalf("%s %s without a violation", v.Profile, v.Outcome)
				}
			default:
				t.Fatalf("outcome %q", v.Outcome)
			}
		}
	})
}

// TestAfterConversion: what the OpenAI Agents SDK's strict converter
// repairs (a missing additionalProperties, optional properties, oneOf) is
// accepted after conversion; an object declared open is not, nor a
// format the converter leaves alone.
func TestAfterConversion(t *testing.T) {
	ps, _ := Lookup([]string{"openai-strict"})
	for _, tt := range []struct {
		schema string
		after  Outcome
	}{
		{`{"type":"object","properties":{"q":{"type":"string"},"n":{"oneOf":[{"type":"string"},{"type":"integer"}]}},"required":["q"]}`, Accepted},
		{`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"],"additionalProperties":true}`, Rejected},
		{`{"type":"object","properties":{"u":{"type":"string","format":"uri"}}}`, Rejected},
		{`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"],"additionalProperties":false}`, Accepted},
	} {
		v := Assess(context.Background(), Tool{Name: "t", InputSchema: json.RawMessage(tt.schema)}, ps, jsonschema.Budget{})[0]
		if v.Converted() != tt.after {
			t.Errorf("%s: %s after conversion, want %s (%+v)", tt.schema, v.Converted(), tt.after, v)
		}
		if v.AfterConversion == v.Outcome {
			t.Errorf("%s: after_conversion repeats the outcome", tt.schema)
		}
	}
}

// TestAfterConversionStrips: what Anthropic's SDK moves into descriptions
// is a loss after conversion, not an acceptance.
func TestAfterConversionStrips(t *testing.T) {
	ps, _ := Lookup([]string{"anthropic-strict"})
	v := Assess(context.Background(), Tool{Name: "t", InputSchema: json.RawMessage(
		`{"type":"object","properties":{"n":{"type":"integer","minimum":1}},"required":["n"]}`)}, ps, jsonschema.Budget{})[0]
	if v.Outcome != Rejected || v.Converted() != AcceptedWithLoss {
		t.Fatalf("%s, after conversion %s; want rejected, accepted_with_loss", v.Outcome, v.Converted())
	}
}
