package drift

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestCanonical(t *testing.T) {
	cases := map[string]string{
		`{"b":1,"a":[1.0,2e0,-0,0.5]}`: `{"a":[1,2,0,0.5],"b":1}`,
		`"<&>\u2028é"`:                 "\"<&>\u2028é\"",
		`{"z":{"y":null,"x":true}}`:    `{"z":{"x":true,"y":null}}`,
		`1e400`:                        `1e+400`,
		`12345678901234567890`:         `12345678901234567890`,
		`{"é":1,"e":2,"E":3}`:          `{"E":3,"e":2,"é":1}`,
	}
	for in, want := range cases {
		v := mustValue(t, in)
		if got := string(canonical(v)); got != want {
			t.Errorf("canonical(%s) = %s, want %s", in, got, want)
		}
	}
}

// The documented definition, computed independently: sha256 over the
// canonical array of {name, description, inputSchema, outputSchema}.
func TestFingerprintDefinition(t *testing.T) {
	m, err := ParseManifest([]byte(`[{"name":"b","inputSchema":{"type":"object"}},{"name":"a","description":"d","title":"ignored","annotations":{"readOnlyHint":true}}]`))
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"description":"d","inputSchema":null,"name":"a","outputSchema":null},{"description":"","inputSchema":{"type":"object"},"name":"b","outputSchema":null}]`
	if got := Fingerprint(m.Tools); got != sha256Hex(want) {
		t.Errorf("fingerprint %s, want sha256 of %s", got, want)
	}
	if got := Fingerprint(nil); got != sha256Hex("[]") {
		t.Errorf("empty set %s", got)
	}
	if !strings.HasPrefix(ToolFingerprint(m.Tools[0]), "sha256:") || ToolFingerprint(m.Tools[0]) == ToolFingerprint(m.Tools[1]) {
		t.Error("tool fingerprints")
	}
}

func TestFingerprintGolden(t *testing.T) {
	// Pins the definition: changing canonicalisation changes every stored
	// baseline, so it must be a deliberate, documented change. The value was
	// computed independently with Python's json.dumps(sort_keys=True,
	// separators=(",", ":"), ensure_ascii=False) and hashlib.sha256.
	m, err := ParseManifest([]byte(`{"tools":[{"name":"echo","description":"Echo text","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	const want = "sha256:c89f807fe40ca5c113c1a3e2b2552c8626f1b168b25392069c64c49367dcd471"
	if got := Fingerprint(m.Tools); got != want {
		t.Errorf("fingerprint %s, want %s", got, want)
	}
}

func TestFingerprintSensitivity(t *testing.T) {
	base := `[{"name":"a","description":"d","inputSchema":{"type":"object","properties":{"x":{"type":"string"}}}}]`
	variants := []string{
		`[{"name":"a","description":"d2","inputSchema":{"type":"object","properties":{"x":{"type":"string"}}}}]`,
		`[{"name":"a","description":"d","inputSchema":{"type":"object","properties":{"y":{"type":"string"}}}}]`,
		`[{"name":"a","description":"d","inputSchema":{"type":"object","properties":{"x":{"type":"string"}}},"outputSchema":{"type":"object"}}]`,
		`[{"name":"b","description":"d","inputSchema":{"type":"object","properties":{"x":{"type":"string"}}}}]`,
	}
	fp := fpOf(t, base)
	for _, v := range variants {
		if fpOf(t, v) == fp {
			t.Errorf("fingerprint did not change for %s", v)
		}
	}
	if fpOf(t, `[{"name":"a","description":"d","title":"x","annotations":{"readOnlyHint":true},"inputSchema":{"properties":{"x":{"type":"string"}},"type":"object"}}]`) != fp {
		t.Error("title, annotations or key order changed the fingerprint")
	}
}

func fpOf(t testing.TB, doc string) string {
	m, err := ParseManifest([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return Fingerprint(m.Tools)
}

func sha256Hex(s string) string { return "sha256:" + hexSum([]byte(s)) }

// shuffled re-encodes a decoded value with object keys in a random order.
func shuffled(r *rand.Rand, v any) []byte {
	var b bytes.Buffer
	var write func(v any)
	write = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
			b.WriteByte('{')
			for i, k := range keys {
				if i > 0 {
					b.WriteString(", ")
				}
				kb, _ := json.Marshal(k)
				b.Write(kb)
				b.WriteString(" : ")
				write(x[k])
			}
			b.WriteByte('}')
		case []any:
			b.WriteByte('[')
			for i, e := range x {
				if i > 0 {
					b.WriteByte(',')
				}
				write(e)
			}
			b.WriteByte(']')
		default:
			b.Write(canonical(x))
		}
	}
	write(v)
	return b.Bytes()
}

func FuzzFingerprintInvariant(f *testing.F) {
	f.Add([]byte(`[{"name":"a","inputSchema":{"type":"object","properties":{"x":{"type":"string","enum":["p","q"]}}}},{"name":"b","description":"z"}]`), uint64(1))
	f.Add([]byte(`{"tools":[{"name":"n","outputSchema":{"b":1,"a":{"d":2,"c":3}}}]}`), uint64(7))
	f.Fuzz(func(t *testing.T, doc []byte, seed uint64) {
		m, err := ParseManifest(doc)
		if err != nil {
			return
		}
		r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
		items := make([]any, len(m.Tools))
		for i, tl := range m.Tools {
			items[i] = mustValue(t, string(tl.Raw))
		}
		r.Shuffle(len(items), func(i, j int) { items[i], items[j] = items[j], items[i] })
		m2, err := ParseManifest(shuffled(r, items))
		if err != nil {
			t.Fatalf("reordered manifest rejected: %v", err)
		}
		if Fingerprint(m.Tools) != Fingerprint(m2.Tools) {
			t.Fatal("fingerprint depends on key or tool order")
		}
		if cs := Diff(m.Tools, m2.Tools); len(cs) != 0 {
			t.Fatalf("diff of reordered set: %+v", cs)
		}
	})
}
