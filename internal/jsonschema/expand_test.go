package jsonschema

import (
	"encoding/json"
	"testing"
)

// TestExpandRefs: local refs (pointers, anchors, the root's $id) are
// inlined with their siblings winning; cyclic, unresolved and remote refs
// stay as written.
func TestExpandRefs(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"pointer", `{"properties":{"p":{"$ref":"#/$defs/P"}},"$defs":{"P":{"type":"string"}}}`,
			`{"$defs":{"P":{"type":"string"}},"properties":{"p":{"type":"string"}}}`},
		{"siblings win", `{"properties":{"p":{"$ref":"#/$defs/P","type":"integer"}},"$defs":{"P":{"type":"string","minimum":1}}}`,
			`{"$defs":{"P":{"minimum":1,"type":"string"}},"properties":{"p":{"minimum":1,"type":"integer"}}}`},
		{"anchor", `{"properties":{"p":{"$ref":"#a"}},"$defs":{"P":{"$anchor":"a","type":"string"}}}`,
			`{"$defs":{"P":{"$anchor":"a","type":"string"}},"properties":{"p":{"$anchor":"a","type":"string"}}}`},
		{"root $id", `{"$id":"https://x.example/s.json","properties":{"p":{"$ref":"https://x.example/s.json#/$defs/P"}},"$defs":{"P":{"type":"string"}}}`,
			`{"$defs":{"P":{"type":"string"}},"$id":"https://x.example/s.json","properties":{"p":{"$ref":"https://x.example/s.json#/$defs/P"}}}`},
		{"false target", `{"properties":{"p":{"$ref":"#/$defs/F"}},"$defs":{"F":false}}`,
			`{"$defs":{"F":false},"properties":{"p":{"not":{}}}}`},
		{"cycle kept once", `{"$defs":{"N":{"properties":{"next":{"$ref":"#/$defs/N"}}}},"$ref":"#/$defs/N"}`,
			// N is expanded once on the path; the root's sibling $defs is
			// expanded like any sibling of a $ref.
			`{"$defs":{"N":{"properties":{"next":{"properties":{"next":{"$ref":"#/$defs/N"}}}}}},"properties":{"next":{"$ref":"#/$defs/N"}}}`},
		{"unresolved", `{"properties":{"p":{"$ref":"#/$defs/missing"}}}`, `{"properties":{"p":{"$ref":"#/$defs/missing"}}}`},
		{"remote", `{"properties":{"p":{"$ref":"https://elsewhere.example/x.json"}}}`, `{"properties":{"p":{"$ref":"https://elsewhere.example/x.json"}}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var in any
			if err := json.Unmarshal([]byte(tc.in), &in); err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(ExpandRefs(in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestResolveAnchors: a plain-name fragment is an anchor ("$anchor", or a
// draft-07 "$id": "#name"); pointers go through jsonvalue.Resolve.
func TestResolveAnchors(t *testing.T) {
	var doc any
	if err := json.Unmarshal([]byte(`{"$defs":{"a":{"x":1},"old":{"$id":"#legacy","y":2}},"properties":{"p":{"$anchor":"here","k":4}}}`), &doc); err != nil {
		t.Fatal(err)
	}
	for ref, want := range map[string]string{
		"#here": `{"$anchor":"here","k":4}`, "#legacy": `{"$id":"#legacy","y":2}`, "#/$defs/a": `{"x":1}`,
		"#nowhere": "", "other.json#here": "", "#%zz": "",
	} {
		got, ok := Resolve(doc, ref)
		if ok != (want != "") {
			t.Errorf("Resolve(%q) ok = %v", ref, ok)
			continue
		}
		if b, _ := json.Marshal(got); ok && string(b) != want {
			t.Errorf("Resolve(%q) = %s, want %s", ref, b, want)
		}
	}
}
