package faults

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
)

func FuzzParsePlan(f *testing.F) {
	f.Add([]byte("seed: 1\nrules:\n  - fault: latency\n    params: {latency: 1s}\n"))
	f.Add([]byte(`{"rules":[{"fault":"drop","nth":2,"tool":"a*"}]}`))
	f.Add([]byte("rules:\n  - fault: nope\n    probability: 9\n"))
	f.Add([]byte("rules: [{fault: slow, params: {chunk: 0}}]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParsePlan(data)
		if err != nil {
			return
		}
		if len(p.Rules) == 0 {
			t.Fatal("accepted plan without rules")
		}
		for _, r := range p.Rules {
			if _, ok := Lookup(r.Fault); !ok || r.Probability < 0 || r.Probability > 1 {
				t.Fatalf("accepted bad rule %+v", r)
			}
		}
		// Every accepted plan survives its own encoding (what an event
		// log's header carries).
		enc, err := json.Marshal(p)
		if err != nil {
			t.Fatalf("encoding %+v: %v", p, err)
		}
		back, err := ParsePlan(enc)
		if err != nil {
			t.Fatalf("reading %s back: %v", enc, err)
		}
		for j := range p.Rules {
			if !sameRule(p.Rules[j], back.Rules[j]) {
				t.Fatalf("rule %d: %+v read back as %+v", j, p.Rules[j], back.Rules[j])
			}
		}
		if again, _ := json.Marshal(back); !bytes.Equal(enc, again) {
			t.Fatalf("encodings differ:\n%s\n%s", enc, again)
		}
		d := p.NewDecider()
		for i := uint64(0); i < 4; i++ {
			fr := &Frame{Dir: ToClient, Index: i, Kind: KindResponse, Raw: []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)}
			Apply(fr, d.Decide(fr))
		}
	})
}

// FuzzApply runs every fault over arbitrary frames: Apply never panics, is
// deterministic, and never forwards when it says it replaced.
func FuzzApply(f *testing.F) {
	for _, seed := range [][]byte{toolResult, listFrame, callReq, []byte(`{"jsonrpc":"2.0","method":"n"}`), []byte(`[1,2]`), []byte(`{`), {}} {
		f.Add(seed, uint64(1), uint8(0))
	}
	specs := Catalogue()
	f.Fuzz(func(t *testing.T, raw []byte, roll uint64, which uint8) {
		spec := specs[int(which)%len(specs)]
		params, _ := resolveParams(spec, nil)
		for _, kind := range []Kind{KindRequest, KindResponse, KindNotification} {
			fr := &Frame{Dir: ToClient, Kind: kind, Raw: raw}
			d := Decision{Fire: true, Fault: spec.Name, Params: params, Roll: roll}
			a := Apply(fr, d)
			b := Apply(fr, d)
			if fmt.Sprint(a) != fmt.Sprint(b) {
				t.Fatalf("%s: not deterministic", spec.Name)
			}
			if a.Kind == Replace && a.Bytes == nil {
				t.Fatalf("%s: replace with nil bytes", spec.Name)
			}
			if a.Cut && (len(a.Bytes) == 0 || len(a.Bytes) >= len(raw) || !bytes.HasPrefix(raw, a.Bytes)) {
				t.Fatalf("%s: bad cut %q of %q", spec.Name, a.Bytes, raw)
			}
			if a.Kind == Forward && a.Reply == nil && a.Applied {
				t.Fatalf("%s: forward marked applied", spec.Name)
			}
			if a.Kind == Delay && a.Delay < 0 {
				t.Fatalf("negative delay")
			}
		}
		if a := Apply(&Frame{Raw: raw}, Decision{Fault: spec.Name, Params: params, Roll: roll}); a.Kind != Forward || !bytes.Equal(a.Out(raw), raw) {
			t.Fatalf("unfired decision changed the frame")
		}
	})
}
