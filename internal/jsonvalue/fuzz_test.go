package jsonvalue

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
)

// FuzzCanonical: idempotent and independent of key order and whitespace.
func FuzzCanonical(f *testing.F) {
	testutil.SeedJSON(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := DecodeJSON(b)
		if err != nil {
			return
		}
		c1 := Canonical(v)
		if c1 == nil {
			t.Fatal("Canonical returned nil for a decoded value")
		}
		v2, err := DecodeJSON(c1)
		if err != nil {
			t.Fatalf("canonical output does not decode: %v (%q)", err, c1)
		}
		if c2 := Canonical(v2); !bytes.Equal(c1, c2) {
			t.Fatalf("not idempotent: %q then %q", c1, c2)
		}
		// encoding/json writes keys in byte order with its own escaping
		// and spacing; the canonical form must not care.
		re, err := json.MarshalIndent(v, " ", "\t")
		if err != nil {
			t.Fatal(err)
		}
		v3, err := DecodeJSON(re)
		if err != nil {
			t.Fatal(err)
		}
		if c3 := Canonical(v3); !bytes.Equal(c1, c3) {
			t.Fatalf("re-encoding changed the canonical form: %q vs %q", c1, c3)
		}
		if !json.Valid(c1) {
			t.Fatalf("canonical output is not valid JSON: %q", c1)
		}
	})
}
