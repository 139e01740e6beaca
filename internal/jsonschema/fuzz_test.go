package jsonschema

import (
	"bytes"
	"github.com/mcpdrill/mcpdrill/internal/jsonvalue"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
)

func seedSchemas(f *testing.F) {
	for _, s := range []string{
		`{}`, `true`, `false`, `{"type":"objekt"}`,
		`{"oneOf":[{"type":"string"},{"type":"string","maxLength":5}]}`,
		`{"anyOf":[{"type":"null"},{"type":"integer","minimum":0}]}`,
		`{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}`,
		`{"type":"array","items":{"type":"string","pattern":"^[a-z]{2,4}(-[0-9]+)?$"},"uniqueItems":true,"minItems":3}`,
		`{"type":"object","properties":{"a":{"type":"number","multipleOf":0.1,"exclusiveMaximum":1}},"required":["a"]}`,
		`{"if":{"type":"string"},"then":{"minLength":2},"else":{"type":"integer"}}`,
	} {
		f.Add([]byte(s))
	}
}

// FuzzSynthesize: every returned instance validates; nothing panics.
func FuzzSynthesize(f *testing.F) {
	seedSchemas(f)
	f.Fuzz(func(t *testing.T, raw []byte) {
		s, err := Compile(raw)
		insts, serr := Synthesize(raw, SynthOptions{MaxInstances: 8})
		if err != nil {
			if serr == nil {
				t.Fatal("Synthesize succeeded on a schema that does not compile")
			}
			return
		}
		for _, v := range insts {
			if vs := s.Violations(v); vs != nil {
				t.Fatalf("instance %s does not validate: %+v", jsonvalue.Canonical(v), vs)
			}
		}
		if len(insts) > 8 {
			t.Fatalf("%d instances over MaxInstances", len(insts))
		}
	})
}

// FuzzCorrupt: structure kept (same keys, lengths and JSON types, booleans
// flipped), input untouched, single-leaf corruption local.
func FuzzCorrupt(f *testing.F) {
	testutil.SeedJSON(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := jsonvalue.DecodeJSON(b)
		if err != nil {
			return
		}
		before := jsonvalue.Canonical(v)
		c := Corrupt(v)
		if !bytes.Equal(jsonvalue.Canonical(v), before) {
			t.Fatal("Corrupt modified its input")
		}
		sameShape(t, v, c, "")
		for _, p := range Leaves(v) {
			one, ok := CorruptLeaf(v, p)
			if !ok {
				t.Fatalf("CorruptLeaf(%q) failed on a listed leaf", p)
			}
			for _, q := range Leaves(v) {
				x, _ := Resolve(v, q)
				y, _ := Resolve(one, q)
				changed := !bytes.Equal(jsonvalue.Canonical(x), jsonvalue.Canonical(y))
				if q != p && changed {
					t.Fatalf("CorruptLeaf(%q) changed %q", p, q)
				}
				if q == p && x != nil && !changed {
					t.Fatalf("CorruptLeaf(%q) left the leaf as it was", p)
				}
			}
		}
		if !bytes.Equal(jsonvalue.Canonical(v), before) {
			t.Fatal("CorruptLeaf modified its input")
		}
		br := BreakTypes(v, 7)
		if !bytes.Equal(jsonvalue.Canonical(br), jsonvalue.Canonical(BreakTypes(v, 7))) {
			t.Fatal("BreakTypes not deterministic")
		}
		if !typeChanged(v, br) {
			t.Fatalf("BreakTypes changed no type: %s", jsonvalue.Canonical(br))
		}
	})
}

func sameShape(t *testing.T, a, b any, ptr string) {
	t.Helper()
	ta, tb := jsonvalue.Type(a), jsonvalue.Type(b)
	if ta == "number" && tb == "integer" {
		tb = "number" // -1.5e308 has no fractional part; it is still a number
	}
	if ta != tb {
		t.Fatalf("%s: type %s became %s", ptr, ta, tb)
	}
	switch x := a.(type) {
	case map[string]any:
		y := b.(map[string]any)
		if len(x) != len(y) {
			t.Fatalf("%s: key count changed", ptr)
		}
		for k := range x {
			if _, ok := y[k]; !ok {
				t.Fatalf("%s: key lost", ptr)
			}
			sameShape(t, x[k], y[k], jsonvalue.PointerAppend(ptr, k))
		}
	case []any:
		y := b.([]any)
		if len(x) != len(y) {
			t.Fatalf("%s: length changed", ptr)
		}
		for i := range x {
			sameShape(t, x[i], y[i], ptr+"/"+itoa(i))
		}
	case bool:
		if b.(bool) == x {
			t.Fatalf("%s: boolean not flipped", ptr)
		}
	case string:
		if x == b.(string) {
			t.Fatalf("%s: string unchanged", ptr)
		}
	}
}

// FuzzResolve: never panics; a pointer built from Leaves resolves.
func FuzzResolve(f *testing.F) {
	f.Add([]byte(`{"a/b":[{"~":1}]}`), "#/a~1b/0/~0")
	f.Add([]byte(`{"x":{"$anchor":"k"}}`), "#k")
	f.Add([]byte(`[1,2]`), "/01")
	f.Fuzz(func(t *testing.T, b []byte, ref string) {
		v, err := jsonvalue.DecodeJSON(b)
		if err != nil {
			return
		}
		_, _ = Resolve(v, ref)
		for _, p := range Leaves(v) {
			if _, ok := Resolve(v, p); !ok {
				t.Fatalf("leaf pointer %q does not resolve", p)
			}
		}
	})
}
