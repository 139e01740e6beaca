package testbed

import (
	"bytes"
	"encoding/json"
	"sort"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// sampleArgs are valid arguments for every fixture tool.
var sampleArgs = map[string]map[string]any{
	"echo": {"text": "  hello  "}, "add": {"a": 1.5, "b": 2.0}, "search": {"query": "mcp http", "q": "mcp http"},
	"weather": {"city": "Oslo", "units": "imperial"}, "get_user": {"id": 7.0, "tenant": "acme"},
	"summarize": {"text": "One. Two."}, "export_csv": {"table": "users"},
	"fetch_page": {"url": "https://example.com"}, "inventory": {"sku": "SKU-000042"}, "run_query": {"sql": "select 1"},
	"package_links": {"name": "left-pad"}, "mirrors": {"name": "mcpdrill"}, "release": {"name": "mcpdrill"},
}

// argsFor keeps only the sample arguments a tool declares.
func argsFor(tl tool) map[string]any {
	a := map[string]any{}
	for _, p := range tl.params {
		if v, ok := sampleArgs[tl.name][p.name]; ok {
			a[p.name] = v
		}
	}
	return a
}

func compileSchema(raw []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource("mem:///out.json", doc); err != nil {
		return nil, err
	}
	return c.Compile("mem:///out.json")
}

func asJSON(t *testing.T, v any) any {
	t.Helper()
	b, _ := json.Marshal(v)
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestFixtureOutputsConform runs every tool of the fixture profiles and
// validates its structuredContent against its own outputSchema.
func TestFixtureOutputsConform(t *testing.T) {
	sets := map[string][]tool{
		"good": goodTools(Options{}, false), "vacuous": vacuousTools(Options{}, false), "partial": partialTools(Options{}, false),
		"drifting-1": driftingTools(Options{Version: "1"}, false), "drifting-2": driftingTools(Options{Version: "2"}, true),
	}
	for set, tools := range sets {
		for _, tl := range tools {
			t.Run(set+"/"+tl.name, func(t *testing.T) {
				a := argsFor(tl)
				if msg := tl.check(a); msg != "" {
					t.Fatalf("sample args rejected: %s", msg)
				}
				var sch *jsonschema.Schema
				if tl.output != nil {
					var err error
					if sch, err = compileSchema(tl.output); err != nil {
						t.Fatalf("outputSchema does not compile: %v", err)
					}
				}
				for seed := range uint64(20) {
					res := tl.run(callEnv{seed: seed, rev: Rev20260728}, a)
					if res.isError {
						t.Fatalf("isError: %s", res.text)
					}
					if sch == nil {
						continue
					}
					if err := sch.Validate(asJSON(t, res.structured)); err != nil {
						t.Fatalf("seed %d: output does not conform: %v", seed, err)
					}
				}
			})
		}
	}
}

// TestPartialToolsSendTheShapes: the partial profile's tools really send
// the shapes its schemas leave unchecked (both links null, no mirrors), and
// every reply conforms.
func TestPartialToolsSendTheShapes(t *testing.T) {
	seen := map[string]bool{}
	for _, tl := range partialTools(Options{}, false) {
		sch, err := compileSchema(tl.output)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"mcpdrill", "left-pad", "no-such-package"} {
			a := map[string]any{"name": name}
			if msg := tl.check(a); msg != "" {
				t.Fatalf("%s: %s", tl.name, msg)
			}
			res := tl.run(callEnv{seed: 1}, a)
			if err := sch.Validate(asJSON(t, res.structured)); err != nil {
				t.Fatalf("%s(%s): output does not conform: %v", tl.name, name, err)
			}
			out := res.structured.(map[string]any)
			if tl.name == "package_links" && out["homepage"] == nil && out["docs"] == nil {
				seen["both links null"] = true
			}
			if m, ok := out["mirrors"].([]any); ok && len(m) == 0 {
				seen["no mirrors"] = true
			}
		}
	}
	if !seen["both links null"] || !seen["no mirrors"] {
		t.Fatalf("shapes sent: %v", seen)
	}
}

// corruptions returns type-changed, extended and truncated copies of obj.
func corruptions(obj map[string]any, required []string) map[string]map[string]any {
	out := map[string]map[string]any{}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		c := clone(obj)
		switch obj[k].(type) {
		case string:
			c[k] = 12345
		default:
			c[k] = "corrupted"
		}
		out["retyped "+k] = c
	}
	for _, k := range required {
		c := clone(obj)
		delete(c, k)
		out["dropped "+k] = c
	}
	c := clone(obj)
	c["zz_extra"] = true
	out["extra key"] = c
	return out
}

// TestGoodSchemasRejectCorruption: every good tool's schema is tight
// enough to notice a retyped field, a missing field and an extra one.
func TestGoodSchemasRejectCorruption(t *testing.T) {
	for _, tl := range goodTools(Options{}, false) {
		sch, err := compileSchema(tl.output)
		if err != nil {
			t.Fatal(err)
		}
		var s struct {
			Required []string `json:"required"`
		}
		_ = json.Unmarshal(tl.output, &s)
		a := argsFor(tl)
		tl.check(a) // fills defaults
		res := tl.run(callEnv{seed: 3}, a)
		for name, bad := range corruptions(res.structured.(map[string]any), s.Required) {
			if sch.Validate(asJSON(t, bad)) == nil {
				t.Errorf("%s: schema accepts %s", tl.name, name)
			}
		}
	}
	// Value-level corruptions that only bounds, enums, patterns and formats catch.
	subtle := map[string]map[string]any{
		"weather":  {"city": "Oslo", "units": "kelvin", "temperature": 20, "conditions": "clear", "humidity": 50, "observedAt": "2026-07-28T10:00:00Z"},
		"get_user": {"id": 7, "email": "not-an-email", "role": "admin", "active": true, "created": "2025-01-01"},
		"search":   {"query": "x", "total": 1, "results": []any{map[string]any{"id": "doc-1", "title": "t", "score": 0.5, "url": "https://a.example", "updated": "2025-01-01"}}},
		"echo":     {"text": "hi", "length": -1},
	}
	for _, tl := range goodTools(Options{}, false) {
		bad, ok := subtle[tl.name]
		if !ok {
			continue
		}
		sch, _ := compileSchema(tl.output)
		if sch.Validate(asJSON(t, bad)) == nil {
			t.Errorf("%s: schema accepts %v", tl.name, bad)
		}
	}
}

func TestVacuousSchemasAcceptCorruption(t *testing.T) {
	for _, tl := range vacuousTools(Options{}, false) {
		sch, err := compileSchema(tl.output)
		if err != nil {
			t.Fatal(err)
		}
		a := argsFor(tl)
		tl.check(a)
		res := tl.run(callEnv{}, a)
		accepted := 0
		cs := corruptions(res.structured.(map[string]any), nil)
		for _, bad := range cs {
			if sch.Validate(asJSON(t, bad)) == nil {
				accepted++
			}
		}
		enforceable := tl.name == "inventory"
		if enforceable != (accepted == 0) {
			t.Errorf("%s: accepted %d of %d corruptions", tl.name, accepted, len(cs))
		}
	}
}

func TestHostileSchemas(t *testing.T) {
	for _, tl := range badSchemaTools(Options{}, false) {
		if tl.output == nil || tl.name == "echo" {
			continue
		}
		if _, err := compileSchema(tl.output); err == nil {
			t.Errorf("bad-schema %s: outputSchema compiles", tl.name)
		}
	}
	for _, tl := range refCycleTools(Options{}, false) {
		_, err := compileSchema(tl.output)
		switch tl.name {
		case "loop":
			// The validator compiles the cycle; validating must fail, not spin.
			if err == nil {
				sch, _ := compileSchema(tl.output)
				err = sch.Validate(asJSON(t, map[string]any{"ok": true}))
			}
			t.Logf("ref cycle: %v", err)
			if err == nil {
				t.Error("a $ref cycle validated an instance")
			}
		case "tree":
			if err != nil {
				t.Errorf("recursive schema must compile: %v", err)
			}
		}
	}
	if n := len(deepSchema(4)); n != len(`{"type":"object","properties":{"n":`)*3+len(`{"type":"object"}`)+6 {
		t.Errorf("deepSchema(4) is %d bytes", n)
	}
	var v any
	if err := json.Unmarshal(deepSchema(100), &v); err != nil {
		t.Fatal(err)
	}
}
