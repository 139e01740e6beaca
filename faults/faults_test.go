package faults

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func mustPlan(t testing.TB, src string) *Plan {
	t.Helper()
	p, err := ParsePlan([]byte(src))
	if err != nil {
		t.Fatalf("ParsePlan: %v", err)
	}
	return p
}

func TestRollIsPureAndSpread(t *testing.T) {
	a := Roll(7, "s", ToClient, 0, 3)
	if b := Roll(7, "s", ToClient, 0, 3); a != b {
		t.Fatalf("Roll not deterministic: %x vs %x", a, b)
	}
	seen := map[uint64]bool{a: true}
	for _, r := range []uint64{
		Roll(8, "s", ToClient, 0, 3), Roll(7, "t", ToClient, 0, 3), Roll(7, "s", ToServer, 0, 3),
		Roll(7, "s", ToClient, 1, 3), Roll(7, "s", ToClient, 0, 4),
	} {
		if seen[r] {
			t.Fatalf("Roll collides across inputs: %x", r)
		}
		seen[r] = true
	}
	// Unit is roughly uniform: 10k rolls, each decile within 20% of expected.
	var hist [10]int
	for i := uint64(0); i < 10000; i++ {
		hist[int(Unit(Roll(1, "u", ToClient, 0, i))*10)]++
	}
	for i, n := range hist {
		if n < 800 || n > 1200 {
			t.Errorf("decile %d has %d of 10000", i, n)
		}
	}
}

func TestParsePlanValid(t *testing.T) {
	yamlSrc := `
seed: 42
session: demo
rules:
  - name: slow-search
    fault: latency
    params: {latency: 2s, jitter: 250}
    method: tools/call
    tool: "search*"
    probability: 0.5
    limit: 3
  - fault: drop-tool
    params: {name: weather, notify: true}
  - fault: error
    direction: c2s
    kinds: [request]
    nth: 2
`
	jsonSrc := `{"seed":42,"session":"demo","rules":[
 {"name":"slow-search","fault":"latency","params":{"latency":"2s","jitter":250},"method":"tools/call","tool":"search*","probability":0.5,"limit":3},
 {"fault":"drop-tool","params":{"name":"weather","notify":true}},
 {"fault":"error","direction":"c2s","kinds":["request"],"nth":2}]}`
	for name, src := range map[string]string{"yaml": yamlSrc, "json": jsonSrc} {
		t.Run(name, func(t *testing.T) {
			p := mustPlan(t, src)
			if p.Seed != 42 || p.Session != "demo" || len(p.Rules) != 3 {
				t.Fatalf("plan = %+v", p)
			}
			r := p.Rules[0]
			if r.Params.Duration("latency") != 2*time.Second || r.Params.Duration("jitter") != 250*time.Millisecond {
				t.Errorf("latency params = %v", r.Params)
			}
			if r.Direction != ToClient || r.Probability != 0.5 || r.Limit != 3 || r.Tool != "search*" {
				t.Errorf("rule 0 = %+v", r)
			}
			dt := p.Rules[1]
			if dt.Name != "1:drop-tool" || len(dt.Methods) != 1 || dt.Methods[0] != "tools/list" || !dt.Params.Bool("notify") {
				t.Errorf("drop-tool defaults not applied: %+v", dt)
			}
			e := p.Rules[2]
			if e.Direction != ToServer || len(e.Kinds) != 1 || e.Kinds[0] != KindRequest || e.Nth != 2 {
				t.Errorf("rule 2 = %+v", e)
			}
			if e.Params.Int("code") != -32603 {
				t.Errorf("error default code = %d", e.Params.Int("code"))
			}
		})
	}
}

func TestParsePlanListsEveryProblem(t *testing.T) {
	src := `
seed: -1
colour: red
rules:
  - fault: nope
  - fault: latency
    params: {latency: soon, bogus: 1}
    probability: 1.5
    direction: sideways
    kinds: [reply]
    nth: 2
    every: 3
    tool: "[x"
  - 17
`
	_, err := ParsePlan([]byte(src))
	if err == nil {
		t.Fatal("invalid plan accepted")
	}
	for _, want := range []string{
		"seed:", "colour: unknown key", `rules[0]: fault: unknown fault "nope"`,
		`rules[1]: param "latency"`, `rules[1]: param "bogus": unknown`, "rules[1]: probability",
		"rules[1]: direction", `rules[1]: kinds: faults: unknown kind "reply"`, "rules[1]: nth and every",
		`rules[1]: tool: bad glob`, "rules[2]: want a mapping",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

func TestParsePlanRejectsShapes(t *testing.T) {
	for _, src := range []string{"", "[]", "rules: 3", "rules: []", "{", "seed: x\nrules: [{fault: drop}]"} {
		if _, err := ParsePlan([]byte(src)); err == nil {
			t.Errorf("ParsePlan(%q) accepted", src)
		}
	}
}

func TestPlanFromFlags(t *testing.T) {
	rate := 0.2
	p, err := PlanFromFlags(FlagOptions{
		Faults: []string{"timeout", "latency:latency=50ms:jitter=10ms", "drop-tool"},
		Rate:   &rate, Only: []string{"tools/call"}, Tool: "search", Seed: 7,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Rules) != 3 || p.Seed != 7 || p.Session != "default" {
		t.Fatalf("plan = %+v", p)
	}
	for _, r := range p.Rules {
		if r.Probability != 0.2 || r.Tool != "search" || len(r.Methods) != 1 || r.Methods[0] != "tools/call" {
			t.Errorf("rule %s = %+v", r.Name, r)
		}
	}
	if p.Rules[1].Params.Duration("latency") != 50*time.Millisecond {
		t.Errorf("latency param = %v", p.Rules[1].Params)
	}
	bad := -1.0
	_, err = PlanFromFlags(FlagOptions{Faults: []string{"nope", "latency:latency", "slow:chunk=0"}, Rate: &bad, Only: []string{"[x"}})
	if err == nil {
		t.Fatal("bad flags accepted")
	}
	for _, want := range []string{`unknown fault "nope"`, "want key=value", "bad glob", `param "chunk"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	if strings.Contains(err.Error(), "--") {
		t.Errorf("a library error words a CLI flag: %v", err)
	}
	var fields []string
	for _, e := range err.(interface{ Unwrap() error }).Unwrap().(interface{ Unwrap() []error }).Unwrap() {
		var oe *OptionError
		if !errors.As(e, &oe) {
			t.Fatalf("not an *OptionError: %v", e)
		}
		fields = append(fields, oe.Field+"/"+oe.Fault)
	}
	if got, want := strings.Join(fields, " "), "Rate/ Only/ Faults/ Faults/latency Faults/slow"; got != want {
		t.Errorf("option errors = %s, want %s", got, want)
	}
	if _, err := PlanFromFlags(FlagOptions{}); err == nil {
		t.Error("no faults accepted")
	}
}

func TestDeciderCounts(t *testing.T) {
	cases := []struct {
		name string
		rule string
		want []uint64 // indices (of 12 responses) where the rule fires
	}{
		{"always", "fault: drop", []uint64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}},
		{"nth", "fault: drop\n    nth: 3", []uint64{2}},
		{"after", "fault: drop\n    after: 9", []uint64{9, 10, 11}},
		{"every", "fault: drop\n    every: 4", []uint64{3, 7, 11}},
		{"after+every", "fault: drop\n    after: 2\n    every: 5", []uint64{6, 11}},
		{"limit", "fault: drop\n    limit: 2", []uint64{0, 1}},
		{"never", "fault: drop\n    probability: 0", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := mustPlan(t, "rules:\n  - "+c.rule+"\n").NewDecider()
			var got []uint64
			for i := uint64(0); i < 12; i++ {
				if d.Decide(&Frame{Dir: ToClient, Index: i, Kind: KindResponse}).Fire {
					got = append(got, i)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("fired at %v, want %v", got, c.want)
			}
		})
	}
}

func TestDeciderMatchers(t *testing.T) {
	p := mustPlan(t, `
rules:
  - fault: error
    method: tools/call
    tool: "search*"
  - fault: drop
    direction: c2s
    kinds: [notification]
`)
	d := p.NewDecider()
	cases := []struct {
		f    Frame
		rule int
		fire bool
	}{
		{Frame{Dir: ToClient, Kind: KindResponse, Method: "tools/call", Tool: "search_docs"}, 0, true},
		{Frame{Dir: ToClient, Kind: KindResponse, Method: "tools/call", Tool: "weather"}, 0, false},
		{Frame{Dir: ToClient, Kind: KindResponse, Method: "tools/list"}, 0, false},
		{Frame{Dir: ToClient, Kind: KindError, Method: "tools/call", Tool: "search"}, 0, false},
		{Frame{Dir: ToServer, Kind: KindRequest, Method: "tools/call", Tool: "search"}, 0, false},
		{Frame{Dir: ToServer, Kind: KindNotification, Method: "notifications/cancelled"}, 1, true},
		{Frame{Dir: ToServer, Kind: KindNotification, Method: "notifications/initialized"}, 1, false}, // lifecycle
		{Frame{Dir: ToClient, Kind: KindNotification, Method: "notifications/progress"}, 1, false},
	}
	for i, c := range cases {
		got := d.Decide(&c.f)
		if got.Fire != c.fire || (c.fire && got.Rule != c.rule) {
			t.Errorf("case %d: %+v", i, got)
		}
	}
}

// TestDecisionsIndependentOfInterleaving: the decisions for one direction do
// not depend on how frames of the other direction are interleaved.
func TestDecisionsIndependentOfInterleaving(t *testing.T) {
	p := mustPlan(t, "seed: 9\nrules:\n  - fault: drop\n    direction: any\n    probability: 0.5\n  - fault: latency\n    direction: any\n    probability: 0.5\n")
	run := func(order []Direction) map[Direction][]string {
		d := p.NewDecider()
		idx := map[Direction]uint64{}
		out := map[Direction][]string{}
		for _, dir := range order {
			dec := d.Decide(&Frame{Dir: dir, Index: idx[dir], Kind: KindResponse})
			out[dir] = append(out[dir], fmt.Sprintf("%v/%d", dec.Fire, dec.Rule))
			idx[dir]++
		}
		return out
	}
	a := run([]Direction{ToServer, ToClient, ToServer, ToClient, ToServer, ToClient, ToServer, ToClient})
	b := run([]Direction{ToClient, ToClient, ToClient, ToClient, ToServer, ToServer, ToServer, ToServer})
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("interleaving changed decisions:\n%v\n%v", a, b)
	}
	other := run([]Direction{ToClient, ToClient, ToClient, ToClient})
	p.Seed = 10
	if fmt.Sprint(run([]Direction{ToClient, ToClient, ToClient, ToClient})) == fmt.Sprint(other) {
		// Possible by chance (1/2^8-ish) but not for this seed pair.
		t.Error("different seed gave identical decisions")
	}
}

func TestCatalogueComplete(t *testing.T) {
	want := []string{"corrupt", "disconnect", "drop", "drop-tool", "duplicate", "error", "latency", "malformed", "rug-pull", "schema-break", "slow", "timeout", "truncate"}
	if got := Names(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("Names() = %v", got)
	}
	for _, s := range Catalogue() {
		if s.Observed == "" {
			t.Errorf("%s: no Observed text", s.Name)
		}
		for _, p := range s.Params {
			if _, err := convertParam(p, p.Default); err != nil && p.Type != TypeDuration {
				t.Errorf("%s.%s: default %v does not validate: %v", s.Name, p.Name, p.Default, err)
			}
			if p.Help == "" {
				t.Errorf("%s.%s: no help", s.Name, p.Name)
			}
		}
		a := Apply(&Frame{Kind: KindResponse, Raw: []byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a"}],"content":[{"type":"text","text":"x"}]}}`)},
			Decision{Fire: true, Fault: s.Name, Params: defaults(s)})
		if strings.Contains(a.Note, "unknown fault") {
			t.Errorf("%s: Apply does not know it", s.Name)
		}
	}
}

func defaults(s Spec) Params {
	p, _ := resolveParams(s, nil)
	return p
}

func isValidJSON(b []byte) bool { return json.Valid(b) }

var (
	toolResult = []byte(`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"{\"n\":42,\"tags\":[\"a\"]}"},{"type":"text","text":"plain words"}],"structuredContent":{"n":42,"tags":["a"],"ok":true}}}`)
	listFrame  = []byte(`{"jsonrpc":"2.0","id":"l1","result":{"tools":[{"name":"search","description":"Search docs","inputSchema":{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}},{"name":"weather","description":"Weather","inputSchema":{"type":"object"}}]}}`)
	callReq    = []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search","arguments":{"q":"x"}}}`)
)

func fire(t *testing.T, fault string, f *Frame, params map[string]any) Action {
	t.Helper()
	spec, ok := Lookup(fault)
	if !ok {
		t.Fatalf("no fault %s", fault)
	}
	p, errs := resolveParams(spec, params)
	if len(errs) > 0 {
		t.Fatalf("params: %v", errs)
	}
	d := Decision{Fire: true, Fault: fault, Params: p, Roll: 12345}
	a := Apply(f, d)
	if b := Apply(f, d); fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("Apply not deterministic")
	}
	return a
}

func TestApplyFaults(t *testing.T) {
	resp := &Frame{Dir: ToClient, Kind: KindResponse, Method: "tools/call", Tool: "search", ID: []byte("7"), Raw: toolResult}
	list := &Frame{Dir: ToClient, Kind: KindResponse, Method: "tools/list", ID: []byte(`"l1"`), Raw: listFrame}
	req := &Frame{Dir: ToServer, Kind: KindRequest, Method: "tools/call", Tool: "search", ID: []byte("7"), Raw: callReq}

	t.Run("not fired forwards", func(t *testing.T) {
		if a := Apply(resp, Decision{Fault: FaultDrop}); a.Kind != Forward || a.Applied || a.Out(resp.Raw) == nil {
			t.Fatalf("%+v", a)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		if a := fire(t, FaultTimeout, resp, nil); a.Kind != Withhold || !a.Applied {
			t.Fatalf("%+v", a)
		}
	})
	t.Run("latency", func(t *testing.T) {
		a := fire(t, FaultLatency, resp, map[string]any{"latency": "100ms", "jitter": "20ms"})
		if a.Kind != Delay || a.Delay < 80*time.Millisecond || a.Delay > 120*time.Millisecond {
			t.Fatalf("%+v", a)
		}
		seen := map[time.Duration]bool{}
		for r := uint64(0); r < 20; r++ {
			d := Apply(resp, Decision{Fire: true, Fault: FaultLatency, Roll: r, Params: Params{"latency": 100 * time.Millisecond, "jitter": 20 * time.Millisecond}})
			seen[d.Delay] = true
		}
		if len(seen) < 10 {
			t.Errorf("jitter not seeded per roll: %d distinct delays", len(seen))
		}
	})
	t.Run("truncate", func(t *testing.T) {
		a := fire(t, FaultTruncate, resp, nil)
		if a.Kind != Replace || !a.Cut || len(a.Bytes) == 0 || len(a.Bytes) >= len(toolResult) || !bytes.HasPrefix(toolResult, a.Bytes) || isValidJSON(a.Bytes) {
			t.Fatalf("%+v", a)
		}
		a = fire(t, FaultTruncate, resp, map[string]any{"keep": 0.5})
		if len(a.Bytes) != len(toolResult)/2 {
			t.Fatalf("keep=0.5 cut at %d of %d", len(a.Bytes), len(toolResult))
		}
	})
	t.Run("malformed", func(t *testing.T) {
		checks := map[string]func(m map[string]any) bool{
			"wrong-version": func(m map[string]any) bool { return m["jsonrpc"] == "1.0" },
			"unknown-id": func(m map[string]any) bool {
				s, _ := m["id"].(string)
				return strings.HasPrefix(s, "mcpdrill-unknown-")
			},
			"missing-id":       func(m map[string]any) bool { _, ok := m["id"]; return !ok },
			"result-and-error": func(m map[string]any) bool { return m["result"] != nil && m["error"] != nil },
		}
		for v, check := range checks {
			a := fire(t, FaultMalformed, resp, map[string]any{"variant": v})
			var m map[string]any
			if err := json.Unmarshal(a.Bytes, &m); err != nil || !check(m) || a.Note != "variant="+v {
				t.Errorf("%s: %s (%v)", v, a.Bytes, err)
			}
		}
		a := fire(t, FaultMalformed, resp, map[string]any{"variant": "invalid-json"})
		if isValidJSON(a.Bytes) || len(a.Bytes) != len(toolResult) {
			t.Errorf("invalid-json: %s", a.Bytes)
		}
		variants := map[string]bool{}
		for r := uint64(0); r < 40; r++ {
			variants[Apply(resp, Decision{Fire: true, Fault: FaultMalformed, Roll: r, Params: Params{"variant": "random"}}).Note] = true
		}
		if len(variants) != len(malformedVariants) {
			t.Errorf("random variant reaches %v", variants)
		}
	})
	t.Run("error on response", func(t *testing.T) {
		a := fire(t, FaultError, resp, map[string]any{"code": -32000, "message": "boom"})
		if a.Kind != Replace || string(a.Bytes) != `{"error":{"code":-32000,"message":"boom"},"id":7,"jsonrpc":"2.0"}` {
			t.Fatalf("%+v %s", a, a.Bytes)
		}
	})
	t.Run("error on request", func(t *testing.T) {
		a := fire(t, FaultError, req, nil)
		if a.Kind != Drop || !bytes.Contains(a.Reply, []byte(`"id":7`)) || !bytes.Contains(a.Reply, []byte(`-32603`)) {
			t.Fatalf("%+v %s", a, a.Reply)
		}
	})
	t.Run("error on notification", func(t *testing.T) {
		a := fire(t, FaultError, &Frame{Kind: KindNotification, Raw: []byte(`{"jsonrpc":"2.0","method":"x"}`)}, nil)
		if a.Kind != Forward || a.Applied {
			t.Fatalf("%+v", a)
		}
	})
	for _, f := range []string{FaultDrop, FaultDuplicate} {
		t.Run(f, func(t *testing.T) {
			if a := fire(t, f, resp, nil); (f == FaultDrop && a.Kind != Drop) || (f == FaultDuplicate && a.Kind != Duplicate) {
				t.Fatalf("%+v", a)
			}
		})
	}
	t.Run("disconnect", func(t *testing.T) {
		if a := fire(t, FaultDisconnect, resp, nil); a.Kind != Close {
			t.Fatalf("%+v", a)
		}
		if a := fire(t, FaultDisconnect, resp, map[string]any{"mode": "kill"}); a.Kind != Kill {
			t.Fatalf("%+v", a)
		}
	})
	t.Run("slow", func(t *testing.T) {
		if a := fire(t, FaultSlow, resp, map[string]any{"chunk": 4, "gap": "5ms"}); a.Kind != Slow || a.Chunk != 4 || a.Gap != 5*time.Millisecond {
			t.Fatalf("%+v", a)
		}
	})
	t.Run("drop-tool", func(t *testing.T) {
		a := fire(t, FaultDropTool, list, map[string]any{"name": "weath*", "notify": true})
		if a.Kind != Replace || bytes.Contains(a.Bytes, []byte(`"weather"`)) || !bytes.Contains(a.Bytes, []byte(`"search"`)) {
			t.Fatalf("%s", a.Bytes)
		}
		if !bytes.Contains(a.Extra, []byte("notifications/tools/list_changed")) {
			t.Errorf("no list_changed: %s", a.Extra)
		}
		a = fire(t, FaultDropTool, list, nil)
		var m struct{ Result struct{ Tools []any } }
		if json.Unmarshal(a.Bytes, &m) != nil || len(m.Result.Tools) != 1 || a.Extra != nil {
			t.Fatalf("seeded pick: %s", a.Bytes)
		}
		if a := fire(t, FaultDropTool, list, map[string]any{"name": "nothing"}); a.Applied {
			t.Errorf("no match should not apply: %+v", a)
		}
		if a := fire(t, FaultDropTool, resp, nil); a.Applied {
			t.Errorf("non tools/list should not apply: %+v", a)
		}
	})
	t.Run("rug-pull", func(t *testing.T) {
		a := fire(t, FaultRugPull, list, map[string]any{"name": "search"})
		if !bytes.Contains(a.Bytes, []byte("changed by mcpdrill rug-pull")) || !bytes.Contains(a.Bytes, []byte(`"required":["q","mcpdrill_rugpull"]`)) {
			t.Fatalf("%s", a.Bytes)
		}
		a = fire(t, FaultRugPull, list, map[string]any{"name": "weather", "change": "description"})
		if bytes.Contains(a.Bytes, []byte("mcpdrill_rugpull")) || !bytes.Contains(a.Bytes, []byte("Weather (changed")) {
			t.Fatalf("%s", a.Bytes)
		}
	})
}

func TestApplyCorruptAndSchemaBreak(t *testing.T) {
	resp := &Frame{Dir: ToClient, Kind: KindResponse, Method: "tools/call", ID: []byte("7"), Raw: toolResult}
	type result struct {
		ID     any `json:"id"`
		Result struct {
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
			StructuredContent map[string]any `json:"structuredContent"`
		} `json:"result"`
	}
	a := fire(t, FaultCorrupt, resp, nil)
	var got result
	if a.Kind != Replace || json.Unmarshal(a.Bytes, &got) != nil {
		t.Fatalf("corrupt: %+v %s", a, a.Bytes)
	}
	sc := got.Result.StructuredContent
	if n, ok := sc["n"].(float64); !ok || n == 42 {
		t.Errorf("corrupt: n = %#v, want a different number", sc["n"])
	}
	if tags, ok := sc["tags"].([]any); !ok || len(tags) != 1 || tags[0] == "a" {
		t.Errorf("corrupt: tags = %#v", sc["tags"])
	}
	if ok, isBool := sc["ok"].(bool); !isBool || ok {
		t.Errorf("corrupt: ok = %#v", sc["ok"])
	}
	if got.ID != float64(7) || len(got.Result.Content) != 2 || got.Result.Content[0].Type != "text" {
		t.Errorf("corrupt changed structure: %s", a.Bytes)
	}
	var inner map[string]any
	if err := json.Unmarshal([]byte(got.Result.Content[0].Text), &inner); err != nil || inner["n"] == float64(42) {
		t.Errorf("corrupt: JSON text block = %q", got.Result.Content[0].Text)
	}
	if txt := got.Result.Content[1].Text; txt == "plain words" || len([]rune(txt)) != len("plain words") {
		t.Errorf("corrupt: plain text = %q", txt)
	}

	b := fire(t, FaultSchemaBreak, resp, nil)
	var br map[string]any
	if b.Kind != Replace || json.Unmarshal(b.Bytes, &br) != nil {
		t.Fatalf("schema-break: %s", b.Bytes)
	}
	res := br["result"].(map[string]any)
	if fmt.Sprint(res["structuredContent"]) == fmt.Sprint(map[string]any{"n": 42.0, "tags": []any{"a"}, "ok": true}) {
		t.Errorf("schema-break left structuredContent unchanged: %s", b.Bytes)
	}
	if res["content"].([]any)[1].(map[string]any)["text"] != "plain words" {
		t.Errorf("schema-break touched plain text: %s", b.Bytes)
	}
	// Corrupting a request changes its arguments, not its method or tool.
	req := &Frame{Dir: ToServer, Kind: KindRequest, Raw: callReq}
	c := fire(t, FaultCorrupt, req, nil)
	if !bytes.Contains(c.Bytes, []byte(`"name":"search"`)) || !bytes.Contains(c.Bytes, []byte(`"method":"tools/call"`)) || bytes.Contains(c.Bytes, []byte(`"q":"x"`)) {
		t.Errorf("corrupt request: %s", c.Bytes)
	}
	if a := fire(t, FaultCorrupt, &Frame{Raw: []byte(`not json`)}, nil); a.Applied || a.Kind != Forward {
		t.Errorf("corrupt of non-JSON: %+v", a)
	}
}
