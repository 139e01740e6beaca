package faults

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestPlanRoundTrip: an encoded plan reads back to a plan that decides the
// same way (same rules, matchers, parameters and seed) and encodes to the
// same bytes, for hand-written plans with every kind of parameter and for
// random ones.
func TestPlanRoundTrip(t *testing.T) {
	var plans []*Plan
	for _, src := range []string{
		"seed: 7\nsession: demo\nrules:\n  - fault: latency\n    params: {latency: 1500ms, jitter: 0.25}\n    method: tools/call\n    probability: 0.3\n  - fault: rug-pull\n    nth: 2\n",
		"rules:\n  - fault: slow\n    params: {chunk: 3, gap: 2ms}\n    direction: c2s\n    kinds: []\n    methods: []\n    tool: 'search*'\n    after: 1\n    every: 2\n    limit: 4\n  - fault: rug-pull\n    methods: []\n    kinds: []\n  - fault: timeout\n    kinds: []\n",
		"rules:\n  - fault: error\n    params: {code: -32000, message: \"boom \\u00e9\"}\n  - fault: drop-tool\n    params: {name: add, notify: true}\n  - fault: malformed\n    params: {variant: result-and-error}\n",
		"seed: 18446744073709551615\nrules:\n  - fault: latency\n    params: {latency: 100us}\n    probability: 0.1\n",
	} {
		p, err := ParsePlan([]byte(src))
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		plans = append(plans, p)
	}
	fp, err := PlanFromFlags(FlagOptions{Faults: []string{"timeout", "corrupt", "latency:latency=2s:jitter=100ms"}, Only: []string{"tools/*"}, Tool: "a?c"})
	if err != nil {
		t.Fatal(err)
	}
	fp.Seed = 99
	plans = append(plans, fp)
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		p := randomPlan(rng, []Kind{KindRequest, KindResponse, KindNotification, KindError, KindBatch, KindInvalid}, []string{"tools/call", "tools/*", "initialize"}, []string{"a*", "b", "[ab]c"})
		for i := range p.Rules {
			p.Rules[i].Name = "r" + string(rune('0'+i))
			p.Rules[i].Params, _ = resolveParams(mustLookup(t, p.Rules[i].Fault), nil)
		}
		plans = append(plans, p)
	}
	for i, p := range plans {
		enc, err := json.Marshal(p)
		if err != nil {
			t.Fatalf("plan %d: %v", i, err)
		}
		back, err := ParsePlan(enc)
		if err != nil {
			t.Fatalf("plan %d: reading %s back: %v", i, enc, err)
		}
		if !back.SeedSet || back.Seed != p.Seed || back.Session != p.Session || len(back.Rules) != len(p.Rules) {
			t.Fatalf("plan %d: %s read back as seed %d/%v session %q, %d rules", i, enc, back.Seed, back.SeedSet, back.Session, len(back.Rules))
		}
		for j := range p.Rules {
			if !sameRule(p.Rules[j], back.Rules[j]) {
				t.Fatalf("plan %d rule %d: %+v read back as %+v (from %s)", i, j, p.Rules[j], back.Rules[j], enc)
			}
		}
		again, _ := json.Marshal(back)
		if !bytes.Equal(enc, again) {
			t.Fatalf("plan %d: encodings differ:\n%s\n%s", i, enc, again)
		}
	}
}

func mustLookup(t *testing.T, name string) Spec {
	t.Helper()
	s, ok := Lookup(name)
	if !ok {
		t.Fatalf("no fault %q", name)
	}
	return s
}

// sameRule compares rules field by field, a nil and an empty list alike.
func sameRule(a, b Rule) bool {
	if a.Name != b.Name || a.Fault != b.Fault || a.Direction != b.Direction || a.Tool != b.Tool ||
		a.Probability != b.Probability || a.Nth != b.Nth || a.After != b.After || a.Every != b.Every || a.Limit != b.Limit ||
		!slices.Equal(a.Methods, b.Methods) || !slices.Equal(a.Kinds, b.Kinds) || len(a.Params) != len(b.Params) {
		return false
	}
	for k, v := range a.Params {
		if b.Params[k] != v {
			return false
		}
	}
	return true
}

func TestPlanEncodingRefusesUnknownParamTypes(t *testing.T) {
	p := &Plan{Rules: []Rule{{Fault: FaultDrop, Params: Params{"x": []int{1}}}}}
	if _, err := json.Marshal(p); err == nil {
		t.Fatal("a parameter of an unknown type was encoded")
	}
	p.Rules[0].Params = Params{"d": 3 * time.Second}
	if _, err := json.Marshal(p); err != nil {
		t.Fatal(err)
	}
}
