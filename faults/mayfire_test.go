package faults

import (
	"fmt"
	"math/rand/v2"
	"path"
	"testing"
)

func TestMayFire(t *testing.T) {
	cases := []struct {
		name     string
		plan     string
		frames   int // s2c frames decided before asking
		c2s, s2c bool
	}{
		{"no rules", "", 0, false, false},
		{"live any", "fault: drop\n    direction: any", 0, true, true},
		{"fault's default direction", "fault: drop", 0, false, true},
		{"probability 0", "fault: drop\n    probability: 0", 0, false, false},
		{"other direction", "fault: drop\n    direction: c2s", 0, true, false},
		{"tool glob does not settle it", "fault: drop\n    direction: any\n    tool: none", 5, true, true},
		{"limit used up", "fault: drop\n    direction: s2c\n    limit: 2", 2, false, false},
		{"limit not used up", "fault: drop\n    direction: s2c\n    limit: 3", 2, false, true},
		{"nth behind", "fault: drop\n    direction: s2c\n    nth: 2\n    probability: 0.5", 2, false, false},
		{"nth ahead", "fault: drop\n    direction: s2c\n    nth: 3", 2, false, true},
		{"after and every stay live", "fault: drop\n    direction: s2c\n    after: 1\n    every: 100", 50, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var d *Decider
			if c.plan != "" {
				d = mustPlan(t, "rules:\n  - "+c.plan+"\n").NewDecider()
			}
			for i := 0; i < c.frames; i++ {
				d.Decide(&Frame{Dir: ToClient, Index: uint64(i), Kind: KindResponse})
			}
			if got := d.MayFire(ToServer); got != c.c2s {
				t.Errorf("MayFire(c2s) = %v, want %v", got, c.c2s)
			}
			if got := d.MayFire(ToClient); got != c.s2c {
				t.Errorf("MayFire(s2c) = %v, want %v", got, c.s2c)
			}
		})
	}
}

// TestMayFireIsSound: over random plans and traffic, once MayFire is false
// for a direction no frame in it fires and MayFire stays false.
func TestMayFireIsSound(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	kinds := []Kind{KindRequest, KindNotification, KindResponse, KindError}
	methods := []string{"tools/call", "tools/list", "ping"}
	for trial := 0; trial < 300; trial++ {
		p := &Plan{Seed: rng.Uint64(), Session: "s"}
		for n := 1 + rng.IntN(3); n > 0; n-- {
			r := Rule{Fault: FaultDrop, Direction: Direction(rng.IntN(3)), Probability: []float64{0, 0.3, 1}[rng.IntN(3)]}
			if rng.IntN(2) == 0 {
				r.Methods = []string{methods[rng.IntN(len(methods))]}
			}
			switch rng.IntN(4) {
			case 0:
				r.Limit = 1 + rng.IntN(3)
			case 1:
				r.Nth = 1 + rng.IntN(4)
			case 2:
				r.After, r.Every = rng.IntN(3), 1+rng.IntN(3)
			}
			p.Rules = append(p.Rules, r)
		}
		d := p.NewDecider()
		var idx [3]uint64
		dead := [3]bool{}
		for i := 0; i < 40; i++ {
			dir := Direction(1 + rng.IntN(2))
			if !d.MayFire(dir) {
				dead[dir] = true
			} else if dead[dir] {
				t.Fatalf("trial %d: MayFire(%v) came back to true", trial, dir)
			}
			f := Frame{Dir: dir, Index: idx[dir], Kind: kinds[rng.IntN(len(kinds))], Method: methods[rng.IntN(len(methods))]}
			idx[dir]++
			if dec := d.Decide(&f); dec.Fire && dead[dir] {
				t.Fatalf("trial %d: %s fired after MayFire said no: %s", trial, fmt.Sprint(f), fmt.Sprint(p.Rules))
			}
		}
	}
}

// TestGlobMatchLiteral: the literal fast path agrees with path.Match.
func TestGlobMatchLiteral(t *testing.T) {
	for _, c := range [][2]string{{"tools/call", "tools/call"}, {"tools/call", "tools/cal"}, {"a", ""}, {"", ""}, {"", "x"}, {"search*", "search_docs"}, {`se\arch`, "search"}, {"[", "["}, {"x?", "xy"}, {"]", "]"}, {"a]", "b"}, {"^-", "^-"}} {
		ok, err := path.Match(c[0], c[1])
		if want := err == nil && ok; globMatch(c[0], c[1]) != want {
			t.Errorf("globMatch(%q, %q) = %v, want %v", c[0], c[1], !want, want)
		}
	}
}

// clone copies a Decider's counters, so a frame can be tried without
// moving the original.
func (d *Decider) clone() *Decider {
	c := d.plan.NewDecider()
	for i := range d.matched {
		copy(c.matched[i], d.matched[i])
		copy(c.fired[i], d.fired[i])
	}
	return c
}

// TestMayFireAtIsExact: over random plans and traffic, before each frame,
// MayFireAt(dir, index) is true exactly when some frame at that index
// fires. Every candidate (each kind × method × tool, so that every rule is
// matched by one of them) is decided on a copy of the counters: when
// MayFireAt is false none fires, when it is true one does. A frame with no
// method or tool, which only rules without matchers accept, is tried too.
func TestMayFireAtIsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	kinds := []Kind{KindRequest, KindNotification, KindResponse, KindError, KindBatch, KindInvalid}
	methods := []string{"tools/call", "tools/list", "ping"}
	tools := []string{"a", "b", "c"}
	var candidates []Frame
	for _, k := range kinds {
		for _, m := range methods {
			for _, tl := range tools {
				candidates = append(candidates, Frame{Kind: k, Method: m, Tool: tl})
			}
		}
	}
	candidates = append(candidates, Frame{Kind: KindInvalid})
	fires, quiet := 0, 0
	for trial := 0; trial < 300; trial++ {
		p := &Plan{Seed: rng.Uint64(), Session: "s"}
		for n := 1 + rng.IntN(4); n > 0; n-- {
			r := Rule{Fault: FaultDrop, Direction: Direction(rng.IntN(3)), Probability: []float64{0, 0.2, 0.5, 1}[rng.IntN(4)]}
			if rng.IntN(2) == 0 {
				r.Methods = []string{methods[rng.IntN(len(methods))]}
			}
			if rng.IntN(3) == 0 {
				r.Tool = tools[rng.IntN(len(tools))]
			}
			if rng.IntN(3) == 0 {
				r.Kinds = []Kind{kinds[rng.IntN(len(kinds))]}
			}
			switch rng.IntN(5) {
			case 0:
				r.Limit = 1 + rng.IntN(3)
			case 1:
				r.Nth = 1 + rng.IntN(4)
			case 2:
				r.After, r.Every = rng.IntN(3), 1+rng.IntN(3)
			case 3:
				r.After, r.Limit = rng.IntN(3), 1+rng.IntN(2)
			}
			p.Rules = append(p.Rules, r)
		}
		d := p.NewDecider()
		var idx [3]uint64
		for i := 0; i < 40; i++ {
			dir := Direction(1 + rng.IntN(2))
			may := d.MayFireAt(dir, idx[dir])
			if !d.MayFire(dir) && may {
				t.Fatalf("trial %d: MayFireAt true where MayFire is false", trial)
			}
			some := false
			for _, c := range candidates {
				c.Dir, c.Index = dir, idx[dir]
				dec := d.clone().Decide(&c)
				if dec.Fire && !may {
					t.Fatalf("trial %d frame %d: %+v fired (rule %d) after MayFireAt said no; rules %+v", trial, i, c, dec.Rule, p.Rules)
				}
				some = some || dec.Fire
			}
			if may && !some {
				t.Fatalf("trial %d frame %d: MayFireAt said yes but no frame fires; rules %+v", trial, i, p.Rules)
			}
			if may {
				fires++
			} else {
				quiet++
			}
			f := candidates[rng.IntN(len(candidates))]
			f.Dir, f.Index = dir, idx[dir]
			idx[dir]++
			if dec := d.Decide(&f); dec.Fire && !may {
				t.Fatalf("trial %d frame %d: fired after MayFireAt said no", trial, i)
			}
		}
	}
	if fires == 0 || quiet == 0 {
		t.Fatalf("degenerate traffic: %d frames could fire, %d could not", fires, quiet)
	}
}

// TestMayFireAtMatchAll: with rules that match every frame in their
// direction, Decide fires exactly when MayFireAt said it could, and a
// probability-p rule leaves about 1-p of the frames quiet.
func TestMayFireAtMatchAll(t *testing.T) {
	d := mustPlan(t, "seed: 9\nrules:\n  - fault: corrupt\n    probability: 0.2\n  - fault: drop\n    direction: c2s\n    after: 2\n    every: 3\n    limit: 4\n").NewDecider()
	quiet := 0
	const n = 2000
	for i := uint64(0); i < n; i++ {
		for _, dir := range []Direction{ToServer, ToClient} {
			may := d.MayFireAt(dir, i)
			if got := d.Decide(&Frame{Dir: dir, Index: i, Kind: KindResponse}).Fire; got != may {
				t.Fatalf("%v frame %d: fired %v, MayFireAt %v", dir, i, got, may)
			}
			if dir == ToClient && !may {
				quiet++
			}
		}
	}
	if quiet < n*75/100 || quiet > n*85/100 {
		t.Errorf("%d of %d s2c frames quiet at probability 0.2", quiet, n)
	}
}
