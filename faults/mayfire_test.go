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
	var dead [3]bool
	randomTraffic(rng, 300, kinds, methods, exactTools, func(trial, i int, p *Plan, d *Decider, dir Direction, idx *[3]uint64) {
		if i == 0 {
			dead = [3]bool{}
		}
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
	})
}

// randomTraffic runs trials random plans (randomPlan over kinds, methods
// and tools), each over 40 frames in random directions: frame calls each
// with the trial's plan and decider, the frame's number in the trial, its
// direction and the per-direction index counters, which frame advances.
func randomTraffic(rng *rand.Rand, trials int, kinds []Kind, methods, tools []string, frame func(trial, i int, p *Plan, d *Decider, dir Direction, idx *[3]uint64)) {
	for trial := 0; trial < trials; trial++ {
		p := randomPlan(rng, kinds, methods, tools)
		d := p.NewDecider()
		var idx [3]uint64
		for i := 0; i < 40; i++ {
			frame(trial, i, p, d, Direction(1+rng.IntN(2)), &idx)
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
// The copies carry no outlook (Decide works out the next frame's in the
// walk that decides the current one), so each frame's decision on the
// outlook carried is also checked against a fresh walk over the same
// counters: the same rule, roll and match count.
func TestMayFireAtIsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	kinds, methods, tools := exactKinds, exactMethods, exactTools
	candidates := exactFrames()
	fires, quiet := 0, 0
	randomTraffic(rng, 300, kinds, methods, tools, func(trial, i int, p *Plan, d *Decider, dir Direction, idx *[3]uint64) {
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
		fresh := d.clone()
		dec, f := decideNext(d, rng, candidates, dir, idx)
		if dec.Fire && !may {
			t.Fatalf("trial %d frame %d: fired after MayFireAt said no", trial, i)
		}
		if want := fresh.Decide(&f); fmt.Sprint(dec) != fmt.Sprint(want) {
			t.Fatalf("trial %d frame %d: decided %+v on the outlook carried, %+v on a fresh walk", trial, i, dec, want)
		}
	})
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

// The frames the exactness tests try: every kind, and methods and tools
// enough that each random rule matches some of them and misses others.
var (
	exactKinds   = []Kind{KindRequest, KindNotification, KindResponse, KindError, KindBatch, KindInvalid}
	exactMethods = []string{"tools/call", "tools/list", "ping", "initialize", "notifications/initialized", "notifications/progress", "other"}
	// exactGlobs are method patterns with a `*`, which match lifecycle
	// methods without naming them, and one that names initialize.
	exactGlobs = []string{"*", "notifications/*", "initiali?e"}
	exactTools = []string{"a", "b", "c"}
)

// decideNext decides a random candidate as the next frame in dir; it
// returns the decision and the frame.
func decideNext(d *Decider, rng *rand.Rand, candidates []Frame, dir Direction, idx *[3]uint64) (Decision, Frame) {
	f := candidates[rng.IntN(len(candidates))]
	f.Dir, f.Index = dir, idx[dir]
	idx[dir]++
	return d.Decide(&f), f
}

// exactTargets is every method × tool of the exactness tests.
func exactTargets() []Target {
	var ts []Target
	for _, m := range exactMethods {
		for _, tl := range exactTools {
			ts = append(ts, Target{Method: m, Tool: tl})
		}
	}
	return ts
}

// exactFrames is every kind × method × tool of the exactness tests, so
// that every rule is matched by one of them, and a frame with no method or
// tool, which only rules without matchers accept.
func exactFrames() []Frame {
	var fs []Frame
	for _, k := range exactKinds {
		for _, tg := range exactTargets() {
			fs = append(fs, Frame{Kind: k, Method: tg.Method, Tool: tg.Tool})
		}
	}
	return append(fs, Frame{Kind: KindInvalid})
}

// randomPlan is a plan of 1 to 4 drop rules with random directions,
// probabilities, matchers (from kinds, methods and tools) and counts.
func randomPlan(rng *rand.Rand, kinds []Kind, methods, tools []string) *Plan {
	p := &Plan{Seed: rng.Uint64(), Session: "s"}
	for n := 1 + rng.IntN(4); n > 0; n-- {
		r := Rule{Fault: FaultDrop, Direction: Direction(rng.IntN(3)), Probability: []float64{0, 0.2, 0.5, 1}[rng.IntN(4)]}
		switch rng.IntN(4) {
		case 0, 1:
			r.Methods = []string{methods[rng.IntN(len(methods))]}
		case 2:
			r.Methods = []string{exactGlobs[rng.IntN(len(exactGlobs))]}
		}
		if rng.IntN(3) == 0 {
			r.Tool = tools[rng.IntN(len(tools))]
		}
		if rng.IntN(3) == 0 {
			r.Kinds = []Kind{kinds[rng.IntN(len(kinds))]}
			if rng.IntN(2) == 0 {
				r.Kinds = append(r.Kinds, kinds[rng.IntN(len(kinds))])
			}
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
	return p
}

// TestMayFireAtIfIsExact: MayFireAtIf with [Rule.CouldMatch] is exact over
// the frames the proxy can meet next when the requests pending in the other
// direction are answers: a request or notification of any method and tool,
// a response or error correlated with one of answers or with none, a batch
// or invalid frame with neither. When it is false none of them fires at
// that index (so the proxy may stream the frame); when true one does.
// MayFireIf is checked to be sound at every index.
func TestMayFireAtIfIsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	kinds, methods, tools := exactKinds, exactMethods, exactTools
	targets := exactTargets()
	seen, narrowed := map[bool]int{}, 0
	randomTraffic(rng, 400, kinds, methods, tools, func(trial, i int, p *Plan, d *Decider, dir Direction, idx *[3]uint64) {
		var answers []Target
		for _, tg := range targets {
			if rng.IntN(6) == 0 {
				answers = append(answers, tg)
			}
		}
		var candidates []Frame
		for _, k := range kinds {
			switch k {
			case KindRequest, KindNotification:
				for _, tg := range targets {
					candidates = append(candidates, Frame{Kind: k, Method: tg.Method, Tool: tg.Tool})
				}
			case KindResponse, KindError:
				for _, tg := range answers {
					candidates = append(candidates, Frame{Kind: k, Method: tg.Method, Tool: tg.Tool})
				}
			}
			candidates = append(candidates, Frame{Kind: k})
		}
		could := func(r *Rule) bool { return r.CouldMatch(dir, answers) }
		may := d.MayFireAtIf(dir, idx[dir], could)
		if may && !d.MayFireAt(dir, idx[dir]) {
			t.Fatalf("trial %d: MayFireAtIf true where MayFireAt is false", trial)
		}
		if !may && d.MayFireAt(dir, idx[dir]) {
			narrowed++
		}
		anyIdx := d.MayFireIf(dir, could)
		if may && !anyIdx {
			t.Fatalf("trial %d: MayFireAtIf true where MayFireIf is false", trial)
		}
		some := false
		for _, c := range candidates {
			c.Dir = dir
			for _, at := range []uint64{idx[dir], idx[dir] + 1 + uint64(rng.IntN(50))} {
				c.Index = at
				dec := d.clone().Decide(&c)
				if dec.Fire && !anyIdx {
					t.Fatalf("trial %d frame %d: %+v fired at index %d after MayFireIf said no; rules %+v", trial, i, c, at, p.Rules)
				}
				if at == idx[dir] {
					if dec.Fire && !may {
						t.Fatalf("trial %d frame %d: %+v fired (rule %d) after MayFireAtIf said no; answers %v; rules %+v", trial, i, c, dec.Rule, answers, p.Rules)
					}
					some = some || dec.Fire
				}
			}
		}
		if may && !some {
			t.Fatalf("trial %d frame %d: MayFireAtIf said yes but no frame fires; answers %v; rules %+v", trial, i, answers, p.Rules)
		}
		seen[may]++
		decideNext(d, rng, candidates, dir, idx)
	})
	if seen[true] == 0 || seen[false] == 0 || narrowed == 0 {
		t.Fatalf("degenerate traffic: %d frames could fire, %d could not, %d only thanks to CouldMatch", seen[true], seen[false], narrowed)
	}
	t.Logf("%d frames could fire, %d could not (%d of them only thanks to CouldMatch)", seen[true], seen[false], narrowed)
}

// TestCouldMatch: what a rule can match before a frame's first byte.
func TestCouldMatch(t *testing.T) {
	call := []Target{{Method: "tools/call", Tool: "search"}}
	cases := []struct {
		name    string
		rule    string
		dir     Direction
		answers []Target
		want    bool
	}{
		{"tool glob, no pending call", "fault: error\n    tool: search", ToClient, nil, false},
		{"tool glob, the pending call", "fault: error\n    tool: sea*", ToClient, call, true},
		{"tool glob, another tool pending", "fault: error\n    tool: fetch", ToClient, call, false},
		{"method, pending call", "fault: drop-tool", ToClient, call, false},
		{"method tools/list pending", "fault: drop-tool", ToClient, []Target{{Method: "tools/list"}}, true},
		{"other direction", "fault: error\n    direction: c2s\n    kinds: [response]", ToClient, call, false},
		{"requests name their own method", "fault: drop\n    kinds: [request]\n    method: anything", ToClient, nil, true},
		{"any kind, tool glob", "fault: drop\n    kinds: []\n    tool: x", ToClient, nil, true},
		{"invalid frames carry nothing", "fault: drop\n    direction: any\n    kinds: [invalid]\n    method: \"*\"", ToServer, nil, true},
		{"invalid frames, a method", "fault: drop\n    direction: any\n    kinds: [invalid]\n    method: ping", ToServer, nil, false},
		{"an uncorrelated response matches a bare rule", "fault: corrupt", ToClient, nil, true},
		{"a pending initialize is exempt", "fault: corrupt\n    method: \"i*\"", ToClient, []Target{{Method: "initialize"}}, false},
		{"a pending initialize, named", "fault: corrupt\n    method: initialize", ToClient, []Target{{Method: "initialize"}}, true},
		{"a pending ping, bare rule, only uncorrelated replies", "fault: corrupt\n    method: \"?*\"", ToClient, []Target{{Method: "ping"}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := mustPlan(t, "rules:\n  - "+c.rule+"\n")
			if got := p.Rules[0].CouldMatch(c.dir, c.answers); got != c.want {
				t.Errorf("CouldMatch = %v, want %v (rule %+v)", got, c.want, p.Rules[0])
			}
		})
	}
}

// TestLifecycleExempt: handshake and liveness frames (and the responses to
// such requests, matched by their request's method) are left alone by
// every rule that does not name their method; a rule that names one
// faults it.
func TestLifecycleExempt(t *testing.T) {
	cases := []struct {
		name string
		rule string
		f    Frame
		want bool
	}{
		{"initialize reply, bare corrupt", "fault: corrupt", Frame{Dir: ToClient, Kind: KindResponse, Method: "initialize"}, false},
		{"initialize reply, bare timeout", "fault: timeout", Frame{Dir: ToClient, Kind: KindResponse, Method: "initialize"}, false},
		{"tools/call reply, bare corrupt", "fault: corrupt", Frame{Dir: ToClient, Kind: KindResponse, Method: "tools/call", Tool: "x"}, true},
		{"uncorrelated reply, bare corrupt", "fault: corrupt", Frame{Dir: ToClient, Kind: KindResponse}, true},
		{"ping reply", "fault: error", Frame{Dir: ToClient, Kind: KindResponse, Method: "ping"}, false},
		{"ping request from the server", "fault: drop", Frame{Dir: ToClient, Kind: KindRequest, Method: "ping"}, false},
		{"initialized notification", "fault: drop\n    direction: c2s", Frame{Dir: ToServer, Kind: KindNotification, Method: "notifications/initialized"}, false},
		{"server/discover reply", "fault: malformed", Frame{Dir: ToClient, Kind: KindResponse, Method: "server/discover"}, false},
		{"star does not name it", "fault: corrupt\n    method: \"*\"", Frame{Dir: ToClient, Kind: KindResponse, Method: "initialize"}, false},
		{"notifications/* does not name it", "fault: drop\n    direction: c2s\n    method: notifications/*", Frame{Dir: ToServer, Kind: KindNotification, Method: "notifications/initialized"}, false},
		{"notifications/* still matches others", "fault: drop\n    direction: c2s\n    method: notifications/*", Frame{Dir: ToServer, Kind: KindNotification, Method: "notifications/cancelled"}, true},
		{"named", "fault: corrupt\n    method: initialize", Frame{Dir: ToClient, Kind: KindResponse, Method: "initialize"}, true},
		{"named among others", "fault: timeout\n    methods: [tools/call, ping]", Frame{Dir: ToClient, Kind: KindResponse, Method: "ping"}, true},
		{"named by ? and a class", "fault: drop\n    direction: c2s\n    method: notifications/initiali[sz]e?", Frame{Dir: ToServer, Kind: KindNotification, Method: "notifications/initialized"}, true},
		{"named by flags --only", "", Frame{Dir: ToClient, Kind: KindResponse, Method: "initialize"}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var p *Plan
			if c.rule == "" {
				var err error
				if p, err = PlanFromFlags(FlagOptions{Faults: []string{"corrupt"}, Only: []string{"initialize"}}); err != nil {
					t.Fatal(err)
				}
			} else {
				p = mustPlan(t, "rules:\n  - "+c.rule+"\n")
			}
			if got := p.Rules[0].Matches(&c.f); got != c.want {
				t.Errorf("Matches(%+v) = %v, want %v", c.f, got, c.want)
			}
			if got := p.NewDecider().Decide(&c.f).Fire; got != c.want {
				t.Errorf("Decide(%+v).Fire = %v, want %v", c.f, got, c.want)
			}
		})
	}
	for _, m := range []string{"tools/call", "tools/list", "notifications/cancelled", "initialize/x", ""} {
		if IsLifecycle(m) {
			t.Errorf("IsLifecycle(%q)", m)
		}
	}
}
