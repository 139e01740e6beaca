package faults

import "sync"

// Decision is the outcome of [Decider.Decide] for one frame.
type Decision struct {
	// Fire is true when a rule fired; all other fields are zero otherwise.
	Fire bool
	// Rule is the index of the rule that fired; RuleName its name.
	Rule     int
	RuleName string
	Fault    string
	Params   Params
	// Roll is the value of [Roll] for this frame and rule; it seeds every
	// random choice of [Apply].
	Roll uint64
	// Match is the 1-based count of frames this rule had matched in this
	// direction, this one included.
	Match int
}

// Decider holds a plan's per-direction match and fire counters. It is safe
// for concurrent use; each direction's frames must be presented in the order
// the proxy read them, with consecutive indices.
type Decider struct {
	plan *Plan
	mu   [3]sync.Mutex
	// matched and fired are indexed [direction][rule].
	matched [3][]int
	fired   [3][]int
}

// NewDecider returns a Decider with zeroed counters.
func (p *Plan) NewDecider() *Decider {
	d := &Decider{plan: p}
	for i := range d.matched {
		d.matched[i] = make([]int, len(p.Rules))
		d.fired[i] = make([]int, len(p.Rules))
	}
	return d
}

// Empty reports whether the plan has no rules, so the proxy can take its
// plain byte-copy path.
func (d *Decider) Empty() bool { return d == nil || len(d.plan.Rules) == 0 }

// Decide returns the decision for one frame. Rules are tried in order;
// every rule whose matchers accept the frame counts it, and the first one
// that is eligible by its counts and whose roll is below its probability
// fires. Later rules still count the frame but do not roll.
func (d *Decider) Decide(f *Frame) Decision {
	if d.Empty() {
		return Decision{}
	}
	dir := f.Dir
	if dir > ToClient {
		dir = AnyDirection
	}
	d.mu[dir].Lock()
	defer d.mu[dir].Unlock()
	var out Decision
	for i := range d.plan.Rules {
		r := &d.plan.Rules[i]
		if !r.Matches(f) {
			continue
		}
		d.matched[dir][i]++
		if out.Fire {
			continue
		}
		n := d.matched[dir][i]
		if !eligible(r, n) || (r.Limit > 0 && d.fired[dir][i] >= r.Limit) {
			continue
		}
		roll := Roll(d.plan.Seed, d.plan.Session, f.Dir, i, f.Index)
		if Unit(roll) >= r.Probability {
			continue
		}
		d.fired[dir][i]++
		out = Decision{Fire: true, Rule: i, RuleName: r.Name, Fault: r.Fault, Params: r.Params, Roll: roll, Match: n}
	}
	return out
}

// eligible applies nth, after and every to the n-th matching frame.
func eligible(r *Rule, n int) bool {
	if r.After > 0 && n <= r.After {
		return false
	}
	if r.Nth > 0 && n != r.Nth {
		return false
	}
	if r.Every > 0 {
		k := n - r.After
		if k%r.Every != 0 {
			return false
		}
	}
	return true
}

// MayFire reports whether some rule could still fire on a frame travelling
// in dir, whatever the frame holds and whatever its index. It reads the
// counters and never changes them, and it looks at no roll (for the roll of
// one frame see [Decider.MayFireAt]): a rule cannot fire when it targets the
// other direction, when its probability is 0, when it has fired Limit times,
// or when its Nth matching frame in dir is behind it. Counters only grow, so
// once MayFire is false for a direction it stays false: the proxy may then
// forward that direction's frames as they arrive, presenting each one to
// [Decider.Decide] afterwards for its counts (which then cannot fire).
func (d *Decider) MayFire(dir Direction) bool {
	return d.MayFireIf(dir, nil)
}

// MayFireAt reports whether some rule could fire on the next frame
// travelling in dir if that frame is given the per-direction index index
// and matches the rule. It reads the counters and never changes them.
//
// Everything [Decider.Decide] looks at besides the frame's matchers is
// known before the frame's first byte: a rule whose matchers accept the
// frame counts it as its matched+1-th match (each rule's counter moves only
// when that rule matches), its fired counter moves only when it fires, and
// its roll depends on the index alone. So when MayFireAt is false, Decide
// on any frame at that index, whatever its kind, method or tool, fires
// nothing; when it is true, some frame at that index would fire. "The first
// rule that fires wins" does not change the answer: it only picks which
// rule fires. The answer holds until the next Decide in dir; the proxy may
// forward a frame for which it is false as it arrives and present it to
// Decide afterwards for its counts. When it is true, so is MayFire(dir).
func (d *Decider) MayFireAt(dir Direction, index uint64) bool {
	return d.MayFireAtIf(dir, index, nil)
}

// MayFireAtIf is [Decider.MayFireAt] for a frame that only the rules for
// which could reports true may match (nil: every rule); see
// [Rule.CouldMatch]. A rule that does not match a frame neither counts it
// nor fires on it, so when MayFireAtIf is false, Decide on any frame at
// that index which those rules alone could match fires nothing.
func (d *Decider) MayFireAtIf(dir Direction, index uint64, could func(*Rule) bool) bool {
	return d.anyLive(dir, func(ci Direction, i int, r *Rule) bool {
		return eligible(r, d.matched[ci][i]+1) && Unit(Roll(d.plan.Seed, d.plan.Session, dir, i, index)) < r.Probability &&
			(could == nil || could(r))
	})
}

// MayFireIf reports whether some rule that could still fire in dir
// ([Decider.MayFire]) is one for which could reports true (nil: every
// rule; then it is MayFire). It looks at no
// index or roll, so its answer does not depend on which index the next
// frame gets: when it is false, Decide fires nothing on a frame that only
// those rules could match, whenever it is presented (the proxy's HTTP
// replies, whose order among concurrent exchanges is not known before
// their first byte).
func (d *Decider) MayFireIf(dir Direction, could func(*Rule) bool) bool {
	return d.anyLive(dir, func(ci Direction, i int, r *Rule) bool {
		return (r.Nth == 0 || d.matched[ci][i] < r.Nth) && (could == nil || could(r))
	})
}

// anyLive reports whether some rule that can still fire in dir (right
// direction, probability above 0, Limit not used up) also passes ok, under
// the direction's lock.
func (d *Decider) anyLive(dir Direction, ok func(ci Direction, i int, r *Rule) bool) bool {
	if d.Empty() {
		return false
	}
	ci := dir
	if ci > ToClient {
		ci = AnyDirection
	}
	d.mu[ci].Lock()
	defer d.mu[ci].Unlock()
	for i := range d.plan.Rules {
		r := &d.plan.Rules[i]
		switch {
		case r.Direction != AnyDirection && r.Direction != dir:
		case r.Probability <= 0: // a roll in [0,1) is never below 0
		case r.Limit > 0 && d.fired[ci][i] >= r.Limit:
		case ok(ci, i, r):
			return true
		}
	}
	return false
}
