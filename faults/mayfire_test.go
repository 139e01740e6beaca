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
