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
//
// Beside the counters it carries, per direction, the outlook of the next
// frame: for every rule whether it can still fire at all and whether it
// fires on that frame if it matches it, with its roll. Everything but the
// matchers is known before the frame's first byte (the counters, the
// index), so [Decider.Decide] works out the next frame's outlook in the same
// walk over the rules that decides the current one: each frame costs one
// walk, each roll is computed once, and the questions asked before a frame
// arrives ([Decider.Next], [Decider.MayFireAt] …) read the outlook without
// walking the rules again.
type Decider struct {
	plan *Plan
	mu   [3]sync.Mutex
	// matched and fired are indexed [direction][rule].
	matched [3][]int
	fired   [3][]int
	// next is each direction's outlook, for the index after the last frame
	// decided there.
	next [3]outlook
}

// outlook is what the frame at index, travelling in dir, can meet.
type outlook struct {
	ok    bool // computed; false: compute before use
	dir   Direction
	index uint64
	// state and roll are per rule; roll is set for armed rules only.
	state []ruleState
	roll  []uint64
	// live counts the rules not dead, armed those armed.
	live, armed int
}

// ruleState is one rule's part of an outlook.
type ruleState uint8

const (
	// dead: the rule can never fire in this direction again (the other
	// direction, probability 0, its limit used up, its nth match behind
	// it). Counters only grow, so a dead rule stays dead and its counters
	// are never looked at again: Decide does not even match it.
	dead ruleState = iota
	// waiting: the rule can still fire, but not on this frame (its counts
	// or its roll say no).
	waiting
	// armed: the rule fires on this frame if its matchers accept it and no
	// earlier rule fires.
	armed
)

// NewDecider returns a Decider with zeroed counters.
func (p *Plan) NewDecider() *Decider {
	d := &Decider{plan: p}
	for i := range d.matched {
		d.matched[i] = make([]int, len(p.Rules))
		d.fired[i] = make([]int, len(p.Rules))
		d.next[i].state = make([]ruleState, len(p.Rules))
		d.next[i].roll = make([]uint64, len(p.Rules))
	}
	return d
}

// Empty reports whether the plan has no rules, so the proxy can take its
// plain byte-copy path.
func (d *Decider) Empty() bool { return d == nil || len(d.plan.Rules) == 0 }

// slot is the counters' index for frames travelling in dir.
func slot(dir Direction) Direction {
	if dir > ToClient {
		return AnyDirection
	}
	return dir
}

// Decide returns the decision for one frame. Rules are tried in order;
// every rule whose matchers accept the frame counts it, and the first one
// that is eligible by its counts and whose roll is below its probability
// fires. Later rules still count the frame but do not roll.
func (d *Decider) Decide(f *Frame) Decision {
	if d.Empty() {
		return Decision{}
	}
	ci := slot(f.Dir)
	d.mu[ci].Lock()
	defer d.mu[ci].Unlock()
	o := d.outlookLocked(ci, f.Dir, f.Index)
	next := f.Index + 1
	var out Decision
	o.live, o.armed = 0, 0
	for i := range d.plan.Rules {
		r := &d.plan.Rules[i]
		if o.state[i] != dead && r.Matches(f) {
			d.matched[ci][i]++
			if !out.Fire && o.state[i] == armed {
				d.fired[ci][i]++
				out = Decision{Fire: true, Rule: i, RuleName: r.Name, Fault: r.Fault, Params: r.Params, Roll: o.roll[i], Match: d.matched[ci][i]}
			}
		}
		d.lookRule(o, ci, i, next) // the next frame's outlook, in the same walk
	}
	o.index = next
	return out
}

// outlookLocked returns the outlook of the frame at index in dir, computing
// it when the one carried is for another frame (a frame presented out of
// order, or a question about one). The caller holds mu[ci].
func (d *Decider) outlookLocked(ci, dir Direction, index uint64) *outlook {
	o := &d.next[ci]
	if o.ok && o.dir == dir && o.index == index {
		return o
	}
	o.ok, o.dir, o.index, o.live, o.armed = true, dir, index, 0, 0
	for i := range d.plan.Rules {
		d.lookRule(o, ci, i, index)
	}
	return o
}

// lookRule sets rule i's state in o for the frame at index, from the
// counters, and counts it.
func (d *Decider) lookRule(o *outlook, ci Direction, i int, index uint64) {
	r := &d.plan.Rules[i]
	n := d.matched[ci][i] + 1 // the frame's place among the rule's matches, if it matches
	switch {
	case r.Direction != AnyDirection && r.Direction != o.dir,
		r.Probability <= 0, // a roll in [0,1) is never below 0
		r.Limit > 0 && d.fired[ci][i] >= r.Limit,
		r.Nth > 0 && n > r.Nth:
		o.state[i] = dead
		return
	}
	o.live++
	o.state[i] = waiting
	if !eligible(r, n) {
		return
	}
	if roll := Roll(d.plan.Seed, d.plan.Session, o.dir, i, index); Unit(roll) < r.Probability {
		o.state[i], o.roll[i] = armed, roll
		o.armed++
	}
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

// Next answers, in one look at the outlook carried from the last Decide in
// dir, the two questions the proxy asks before a frame's first byte: live
// is [Decider.MayFire] (some rule can still fire in dir, on some frame) and
// may is [Decider.MayFireAtIf] (one could fire on the frame at index that
// only the rules accepted by could may match; nil: every rule). may implies
// live. With nothing live the answer costs no walk at all.
func (d *Decider) Next(dir Direction, index uint64, could func(*Rule) bool) (live, may bool) {
	if d.Empty() {
		return false, false
	}
	ci := slot(dir)
	d.mu[ci].Lock()
	defer d.mu[ci].Unlock()
	o := d.outlookLocked(ci, dir, index)
	return o.live > 0, d.anyLocked(o, armed, could)
}

// anyLocked reports whether some rule at least at state in o is accepted
// by could (nil: every rule). The caller holds the direction's lock.
func (d *Decider) anyLocked(o *outlook, state ruleState, could func(*Rule) bool) bool {
	n := o.armed
	if state < armed {
		n = o.live
	}
	if n == 0 {
		return false
	}
	for i, st := range o.state {
		if st >= state && (could == nil || could(&d.plan.Rules[i])) {
			return true
		}
	}
	return false
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
	_, may := d.Next(dir, index, could)
	return may
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
	if d.Empty() {
		return false
	}
	ci := slot(dir)
	d.mu[ci].Lock()
	defer d.mu[ci].Unlock()
	o := &d.next[ci]
	if !o.ok || o.dir != dir { // which rules are live does not depend on the index
		o = d.outlookLocked(ci, dir, o.index)
	}
	return d.anyLocked(o, waiting, could)
}
