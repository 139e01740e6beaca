package jsonvalue

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
)

func TestDecodeJSON(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		wantErr error
		typ     string
	}{
		{"object", `{"a":1}`, nil, "object"},
		{"integer stays json.Number", `12345678901234567890`, nil, "integer"},
		{"float", `1.5`, nil, "number"},
		{"integral float is integer", `3.0`, nil, "integer"},
		{"null", `null`, nil, "null"},
		{"trailing", `{} {}`, ErrTrailingData, ""},
		{"too deep", strings.Repeat("[", MaxJSONDepth+1) + strings.Repeat("]", MaxJSONDepth+1), ErrTooDeep, ""},
		{"brackets in strings do not count", `["` + strings.Repeat("[", 5000) + `"]`, nil, "array"},
		{"huge exponent", `1e999999999`, ErrNumberTooLarge, ""},
		{"bad json", `{`, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := DecodeJSON([]byte(tt.in))
			if testutil.WantErrorIs(t, err, tt.wantErr) {
				return
			}
			if tt.typ == "" {
				if err == nil {
					t.Fatal("want an error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := Type(v); got != tt.typ {
				t.Fatalf("Type = %q, want %q", got, tt.typ)
			}
		})
	}
	v, _ := DecodeJSON([]byte(`12345678901234567890`))
	if v != json.Number("12345678901234567890") {
		t.Fatalf("number not kept textually: %#v", v)
	}
}

func TestType(t *testing.T) {
	tests := []struct {
		v    any
		want string
	}{
		{map[string]any{}, "object"}, {[]any{}, "array"}, {"x", "string"}, {true, "boolean"}, {nil, "null"},
		{json.Number("1e2"), "integer"}, {json.Number("1.25"), "number"}, {2.0, "integer"}, {2.5, "number"},
		{7, "integer"}, {json.Number("bogus"), ""}, {struct{}{}, ""},
	}
	for _, tt := range tests {
		if got := Type(tt.v); got != tt.want {
			t.Errorf("Type(%#v) = %q, want %q", tt.v, got, tt.want)
		}
	}
}

func TestKind(t *testing.T) {
	tests := []struct {
		v    any
		want string
	}{
		{map[string]any{}, "object"}, {[]any{}, "array"}, {"x", "string"}, {true, "boolean"}, {nil, "null"},
		{json.Number("1e2"), "number"}, {json.Number("1.25"), "number"}, {2.0, "number"}, {7, "number"},
		{json.Number("bogus"), ""}, {struct{}{}, ""},
	}
	for _, tt := range tests {
		if got := Kind(tt.v); got != tt.want {
			t.Errorf("Kind(%#v) = %q, want %q", tt.v, got, tt.want)
		}
	}
}

func TestNumber(t *testing.T) {
	tests := []struct {
		v    any
		want float64
		ok   bool
	}{
		{json.Number("1.5"), 1.5, true}, {json.Number("-2e3"), -2000, true}, {json.Number("x"), 0, false},
		{2.5, 2.5, true}, {float32(0.5), 0.5, true}, {7, 7, true}, {int64(-8), -8, true}, {uint64(9), 9, true},
		{"1", 0, false}, {nil, 0, false}, {true, 0, false},
	}
	for _, tt := range tests {
		if got, ok := Number(tt.v); got != tt.want || ok != tt.ok {
			t.Errorf("Number(%#v) = %v, %v; want %v, %v", tt.v, got, ok, tt.want, tt.ok)
		}
	}
}

func TestCanonical(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"b":1,"a":2}`, `{"a":2,"b":1}`},
		{` { "a" : [ 1 , 2 ] } `, `{"a":[1,2]}`},
		{`1.0`, `1`}, {`1e0`, `1`}, {`10e-1`, `1`}, {`-0`, `0`}, {`-0.0e5`, `0`}, {`1.50`, `1.5`},
		{`1e21`, `1e+21`}, {`1e20`, `100000000000000000000`}, {`1e-7`, `1e-7`}, {`0.000001`, `0.000001`},
		{`123456789012345678901234567890`, `1.2345678901234567890123456789e+29`},
		{`12345678901234567890`, `12345678901234567890`},
		{`-1.5e308`, `-1.5e+308`}, {`0.5`, `0.5`}, {`-12.3400`, `-12.34`},
		{`"a\/b\u0041\u00e9<>&"`, `"a/bAé<>&"`},
		{`"\u0000\u001f\n\t\"\\"`, `"\u0000\u001f\n\t\"\\"`},
		{`"\u2028"`, "\"\u2028\""},
		// UTF-16 order: U+FF61 (one unit 0xFF61) sorts after U+1F600 (0xD83D 0xDE00); bytewise it would be first.
		{`{"｡":1,"😀":2}`, `{"😀":2,"｡":1}`},
		{`{"b":{"d":null,"c":true},"a":[]}`, `{"a":[],"b":{"c":true,"d":null}}`},
	}
	for _, tt := range tests {
		got, err := CanonicalJSON(json.RawMessage(tt.in))
		if err != nil {
			t.Errorf("CanonicalJSON(%s): %v", tt.in, err)
			continue
		}
		if string(got) != tt.want {
			t.Errorf("CanonicalJSON(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
	// Go values outside the decoded model go through json.Marshal.
	type pair struct {
		B int `json:"b"`
		A int `json:"a"`
	}
	if got := string(Canonical(pair{1, 2})); got != `{"a":2,"b":1}` {
		t.Errorf("struct canonical = %s", got)
	}
	if got := string(Canonical(2.0)); got != `2` {
		t.Errorf("float canonical = %s", got)
	}
}

func TestResolve(t *testing.T) {
	doc, err := DecodeJSON([]byte(`{"$defs":{"a/b":{"x":1},"m~n":{"y":2},"sp ace":{"z":3},"arr":[10,20]},"properties":{"p":{"$anchor":"here","k":4}}}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		ref  string
		ok   bool
		want string
	}{
		{"#", true, ""},
		{"", true, ""},
		{"#/$defs/a~1b", true, `{"x":1}`},
		{"/$defs/m~0n", true, `{"y":2}`},
		{"#/$defs/sp%20ace", true, `{"z":3}`},
		{"#/$defs/arr/1", true, `20`},
		{"#/$defs/arr/01", false, ""},
		{"#/$defs/arr/2", false, ""},
		{"#/$defs/missing", false, ""},
		{"#/$defs/bad~2", false, ""},
		{"#here", false, ""}, // an anchor, not a pointer
		{"#nowhere", false, ""},
		{"other.json#/a", false, ""},
		{"https://example.com/s#/a", false, ""},
	}
	for _, tt := range tests {
		got, ok := Resolve(doc, tt.ref)
		if ok != tt.ok {
			t.Errorf("Resolve(%q) ok = %v, want %v", tt.ref, ok, tt.ok)
			continue
		}
		if ok && tt.want != "" && string(Canonical(got)) != tt.want {
			t.Errorf("Resolve(%q) = %s, want %s", tt.ref, Canonical(got), tt.want)
		}
	}
}

// TestWriteIndentedEscapesUnsafe: a document written for people carries no
// control, DEL, C1 or bidirectional character raw, and still decodes to
// the same value.
func TestWriteIndentedEscapesUnsafe(t *testing.T) {
	in := map[string]string{"name": "a\x1b]52;c;x\x07\u009b\x7f\u202e\u2066é\U0001F600\U000F0000\n##[error]x"}
	var b strings.Builder
	if err := WriteIndented(&b, in); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, r := range out {
		if r != '\n' && (r < 0x20 || r >= 0x7f && r <= 0x9f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 || r >= 0xf0000) {
			t.Errorf("raw %U in %q", r, out)
		}
	}
	if !strings.Contains(out, `\u202e`) || !strings.Contains(out, "é\U0001F600") || !strings.Contains(out, `\udb80\udc00`) || strings.Contains(out, "##[") {
		t.Errorf("escapes: %s", out)
	}
	var back map[string]string
	if err := json.Unmarshal([]byte(out), &back); err != nil || back["name"] != in["name"] {
		t.Errorf("round trip: %q, %v", back["name"], err)
	}
}
