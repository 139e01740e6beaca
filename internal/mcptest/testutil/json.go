package testutil

import "testing"

// ObjectSchema is the JSON Schema of an object with the given properties
// (a JSON object) and required list (a JSON array), both as source text.
func ObjectSchema(props, required string) string {
	return `{"type":"object","properties":` + props + `,"required":` + required + `}`
}

// SeedJSON adds to f's corpus a JSON value of every kind and the values
// that trip canonical forms: negative zero, an exponent past float64,
// escapes, astral and full-width characters, keys out of order, nesting,
// and numbers spelt several ways.
func SeedJSON(f *testing.F) {
	for _, s := range []string{
		`null`, `true`, `0`, `-0.0`, `1e400`, `"x"`, `""`, `"é😀\u0000"`, `[]`, `{}`,
		`{"a":[1,2.5,"s",true,null,{"b":{}}],"c":{"d":[[]]}}`,
		`{"b":1,"a":2,"😀":3,"｡":4}`, `[1.0,1e2,-12.340e-3,123456789012345678901234567890]`,
	} {
		f.Add([]byte(s))
	}
}
