package jsonschema

import (
	"encoding/json"
	"github.com/mcpdrill/mcpdrill/internal/jsonvalue"
	"reflect"
	"slices"
	"testing"
	"unicode/utf8"
)

func mustDecode(t testing.TB, s string) any {
	t.Helper()
	v, err := jsonvalue.DecodeJSON([]byte(s))
	if err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return v
}

func TestCorrupt(t *testing.T) {
	tests := []struct{ in, want string }{
		{`"hello"`, `"\u0000mcpd"`},
		{`""`, `"\u0000"`},
		{`"ab"`, `"\u0000m"`},
		{`42`, `-999999999`},
		{`4.0`, `-999999999`},
		{`4.5`, `-1.5e+308`},
		{`true`, `false`},
		{`false`, `true`},
		{`null`, `null`},
		{`{}`, `{}`},
		{`[]`, `[]`},
		{`{"a":[1,"x",{"b":null}],"c":false}`, `{"a":[-999999999,"\u0000",{"b":null}],"c":true}`},
	}
	for _, tt := range tests {
		in := mustDecode(t, tt.in)
		before := string(jsonvalue.Canonical(in))
		got := jsonvalue.Canonical(Corrupt(in))
		if string(got) != tt.want {
			t.Errorf("Corrupt(%s) = %s, want %s", tt.in, got, tt.want)
		}
		if string(jsonvalue.Canonical(in)) != before {
			t.Errorf("Corrupt modified its input %s", tt.in)
		}
	}
	// Length in code points is preserved, and long strings cycle the sentinel.
	long := "ééééééééééééééééééééééééééééééééééééééé"
	c := CorruptString(long)
	if utf8.RuneCountInString(c) != utf8.RuneCountInString(long) || c[:len(Sentinel)] != Sentinel {
		t.Errorf("CorruptString(long) = %q", c)
	}
	// json.Number stays json.Number; Go numbers keep their Go type.
	if _, ok := Corrupt(json.Number("3")).(json.Number); !ok {
		t.Error("json.Number leaf changed Go type")
	}
	if _, ok := Corrupt(3.5).(float64); !ok {
		t.Error("float64 leaf changed Go type")
	}
}

func TestLeavesAndCorruptLeaf(t *testing.T) {
	v := mustDecode(t, `{"b":[true,{"x/y":"s"}],"a":1,"e":{},"n":null,"~":[]}`)
	want := []string{"/a", "/b/0", "/b/1/x~1y", "/n"}
	if got := Leaves(v); !slices.Equal(got, want) {
		t.Fatalf("Leaves = %v, want %v", got, want)
	}
	if got := Leaves(mustDecode(t, `"x"`)); !slices.Equal(got, []string{""}) {
		t.Fatalf("scalar Leaves = %v", got)
	}
	orig := string(jsonvalue.Canonical(v))
	got, ok := CorruptLeaf(v, "/b/1/x~1y")
	if !ok {
		t.Fatal("CorruptLeaf failed")
	}
	if s := string(jsonvalue.Canonical(got)); s != `{"a":1,"b":[true,{"x/y":"\u0000"}],"e":{},"n":null,"~":[]}` {
		t.Errorf("CorruptLeaf = %s", s)
	}
	if string(jsonvalue.Canonical(v)) != orig {
		t.Error("CorruptLeaf modified its input")
	}
	for _, bad := range []string{"/b", "/e", "/zz", "/b/2", "/b/01", "x", "/~"} {
		if _, ok := CorruptLeaf(v, bad); ok {
			t.Errorf("CorruptLeaf(%q) reported a leaf", bad)
		}
	}
	if got, ok := CorruptLeaf(mustDecode(t, `7`), ""); !ok || got != json.Number(CorruptInteger) {
		t.Errorf("root leaf: %v %v", got, ok)
	}
}

func TestBreakTypes(t *testing.T) {
	v := mustDecode(t, `{"name":"n","count":3,"tags":["a","b"],"meta":{"ok":true,"z":null}}`)
	orig := string(jsonvalue.Canonical(v))
	for seed := range uint64(50) {
		a := BreakTypes(v, seed)
		b := BreakTypes(v, seed)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("seed %d: not deterministic", seed)
		}
		if reflect.DeepEqual(a, v) {
			t.Fatalf("seed %d: nothing broken", seed)
		}
		if !typeChanged(v, a) {
			t.Fatalf("seed %d: no JSON type changed: %s", seed, jsonvalue.Canonical(a))
		}
	}
	if string(jsonvalue.Canonical(v)) != orig {
		t.Fatal("BreakTypes modified its input")
	}
	for _, s := range []string{`{}`, `[]`, `"x"`, `null`, `1`} {
		in := mustDecode(t, s)
		if out := BreakTypes(in, 1); jsonvalue.Type(out) == jsonvalue.Type(in) {
			t.Errorf("BreakTypes(%s) kept the type: %s", s, jsonvalue.Canonical(out))
		}
	}
}

// typeChanged reports whether some node of b has a different JSON type from
// the node at the same place in a (integer and number count as one type).
func typeChanged(a, b any) bool {
	ta, tb := jsonvalue.Type(a), jsonvalue.Type(b)
	if ta == "integer" {
		ta = "number"
	}
	if tb == "integer" {
		tb = "number"
	}
	if ta != tb {
		return true
	}
	switch x := a.(type) {
	case map[string]any:
		y := b.(map[string]any)
		for k := range x {
			if typeChanged(x[k], y[k]) {
				return true
			}
		}
	case []any:
		y := b.([]any)
		for i := range x {
			if typeChanged(x[i], y[i]) {
				return true
			}
		}
	}
	return false
}
