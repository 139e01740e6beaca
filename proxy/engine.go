// Package proxy relays MCP traffic between a client and a server, over
// stdio (a spawned child) or Streamable HTTP, asks package faults what to do
// with each frame, executes the answer and records every fault that fired.
//
// When no fault fires a frame's original bytes are forwarded untouched; with
// an empty plan the stdio relay is a plain byte copy.
package proxy

import (
	"encoding/json"
	"sync"
	"sync/atomic"

	"github.com/mcpdrill/mcpdrill/faults"
	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
)

// Config is what both transports share.
type Config struct {
	// Plan is the fault plan; nil or empty relays without faults.
	Plan *faults.Plan
	// Recorder receives every fault that fired; nil records nothing.
	Recorder Recorder
	// Guard, when set, sees every frame first (Interceptor): guard mode,
	// package guard/intercept, pins the server's tool set.
	Guard Interceptor
	// MaxFrame caps one frame (0: jsonrpc.DefaultMaxFrame). Longer frames
	// are relayed as they are, unexamined.
	MaxFrame int
}

// reqInfo is what a response is correlated with. seq orders the requests
// of the table (1, 2, …), so a frame judged before a request was recorded
// is never correlated with it (see [passLine]).
type reqInfo struct {
	method, tool string
	seq          uint64
}

// maxAnswers bounds the pending requests a streaming choice looks at: with
// more in flight, a frame is stored and decided (the choice would cost more
// than it saves).
const maxAnswers = 16

// allSeq correlates a frame with every pending request.
const allSeq = ^uint64(0)

// maxPending bounds the correlation table of one direction.
const maxPending = 1 << 16

// engine turns frames into actions: index, peek, correlate, decide, apply.
type engine struct {
	cfg  Config
	dec  *faults.Decider
	mu   [3]sync.Mutex // per direction: index order == decision order
	next [3]uint64

	pmu     sync.Mutex
	pending [3]map[string]reqInfo // by the direction the request travelled
	seq     uint64                // the last reqInfo.seq given

	// storeOnly keeps every frame on the store-and-forward path (tests
	// compare the faster modes with it).
	storeOnly bool
	// lateFires counts faults that fired on a frame already forwarded
	// (cut-through). It must stay 0: a pump streams a frame only when no
	// rule can fire on it. Tests read it.
	lateFires atomic.Int64
	// streamed counts the frames accounted for after (most of) their bytes
	// were forwarded; tests read it.
	streamed atomic.Int64
}

// storeAllFrames makes every new engine store every frame (storeOnly).
// Only this package's test processes set it, to measure the store path
// against the per-frame choice with the same plan and the same fires.
var storeAllFrames bool

func newEngine(cfg Config) *engine {
	e := &engine{cfg: cfg, storeOnly: storeAllFrames}
	if cfg.Plan != nil {
		e.dec = cfg.Plan.NewDecider()
	}
	for i := range e.pending {
		e.pending[i] = map[string]reqInfo{}
	}
	return e
}

// passive reports whether the engine never changes or inspects traffic.
func (e *engine) passive() bool {
	return e.dec.Empty() && e.cfg.Guard == nil
}

// sees reports whether every frame in dir must be stored whatever the
// plan: a guard looks at it (or a test stores all).
func (e *engine) sees(faults.Direction) bool {
	return e.storeOnly || e.cfg.Guard != nil
}

// inert reports whether nothing can change in either direction any more:
// no fault can fire, so indices, counters and correlation are never
// observed again and the relay may be a plain byte copy.
func (e *engine) inert() bool {
	return e.passive() || (!e.sees(faults.ToServer) && !e.dec.MayFire(faults.ToServer) && !e.dec.MayFire(faults.ToClient))
}

// look is what a pump may do with the next frame in a direction, chosen
// before the frame's first byte.
type look uint8

const (
	// store: a rule may fire on the frame, or a guard sees it: read it
	// whole, decide, then write.
	store look = iota
	// passLine: no rule can fire on this frame (the counts and the roll at
	// the index it will get, and what it could be matched by: the requests
	// now pending in the other direction, which a response there answers;
	// [faults.Rule.CouldMatch]): forward it as it arrives and account for
	// it with [engine.account], passing the seq choose returned, before its
	// last byte is written. It is then correlated only with the requests
	// recorded before the choice, as if it had arrived before any later
	// one. The choice holds until the next frame in dir is processed, so
	// only the one goroutine that processes dir's frames, in order, may
	// rely on it.
	passLine
	// passAll: no rule can fire in dir any more, on any frame: forward
	// every frame as it arrives (counters only grow, so this stays so).
	passAll
)

// choose chooses for the next frame in dir, in one look at the decider's
// outlook ([faults.Decider.Next]).
func (e *engine) choose(dir faults.Direction) (look, uint64) {
	e.mu[dir].Lock()
	idx := e.next[dir]
	e.mu[dir].Unlock()
	return e.lookAt(dir, &idx)
}

// mayChangeAny reports whether a rule may fire on a frame in dir whose
// index is not known before its first byte (an HTTP reply, among
// concurrent exchanges): no roll is looked at, only whether a rule that can
// still fire could match the frame at all ([faults.Decider.MayFireIf]).
// When false the frame may be forwarded as it arrives and accounted for
// with the seq returned, as for [passLine].
func (e *engine) mayChangeAny(dir faults.Direction) (bool, uint64) {
	l, seq := e.lookAt(dir, nil)
	return l == store, seq
}

// lookAt is choose for the frame at index *idx, or at any index when idx
// is nil (then passLine stands for passAll too). The seq returned is the
// correlation table's last, or allSeq when the choice looked at no
// pending request.
func (e *engine) lookAt(dir faults.Direction, idx *uint64) (look, uint64) {
	if e.sees(dir) {
		return store, allSeq
	}
	var buf [maxAnswers]faults.Target
	answers, seq, ok := e.answers(dir, buf[:0])
	var could func(*faults.Rule) bool // nil: every rule could match
	if ok {
		could = func(r *faults.Rule) bool { return r.CouldMatch(dir, answers) }
	} else {
		seq = allSeq
	}
	var live, may bool
	if idx != nil {
		live, may = e.dec.Next(dir, *idx, could)
	} else {
		may = e.dec.MayFireIf(dir, could)
		live = true
	}
	switch {
	case may:
		return store, seq
	case live:
		return passLine, seq
	}
	return passAll, seq
}

// answers appends to buf what a response travelling in dir could be
// correlated with (the requests pending in the other direction) and
// returns the table's last seq; ok is false when more than maxAnswers are
// pending.
func (e *engine) answers(dir faults.Direction, buf []faults.Target) (_ []faults.Target, seq uint64, ok bool) {
	e.pmu.Lock()
	defer e.pmu.Unlock()
	m := e.pending[other(dir)]
	if len(m) > maxAnswers {
		return buf, 0, false
	}
	for _, r := range m {
		buf = append(buf, faults.Target{Method: r.method, Tool: r.tool})
	}
	return buf, e.seq, true
}

func other(d faults.Direction) faults.Direction {
	if d == faults.ToServer {
		return faults.ToClient
	}
	return faults.ToServer
}

// process decides what to do with one frame (raw has no line terminator).
// It must be called in the order frames arrive in dir.
func (e *engine) process(dir faults.Direction, raw []byte) (faults.Frame, faults.Action) {
	f, a, _ := e.step(dir, raw, allSeq)
	return f, a
}

// account is process for a frame the proxy has already (mostly) forwarded
// because no fault could fire on it: its index, correlation and counts.
// The frame is correlated only with requests whose seq is at most seq (the
// one choose or mayChangeAny returned when the choice was made).
func (e *engine) account(dir faults.Direction, raw []byte, seq uint64) {
	e.streamed.Add(1)
	if _, _, fired := e.step(dir, raw, seq); fired {
		e.lateFires.Add(1)
	}
}

// step is process; it also reports whether a fault fired. A response is
// correlated only with a request whose seq is at most seq.
func (e *engine) step(dir faults.Direction, raw []byte, seq uint64) (faults.Frame, faults.Action, bool) {
	e.mu[dir].Lock()
	idx := e.next[dir]
	e.next[dir]++
	f := faults.Frame{Dir: dir, Index: idx, Raw: raw}
	if e.passive() {
		e.mu[dir].Unlock()
		return f, faults.Action{Kind: faults.Forward}, false
	}
	peek := jsonrpc.PeekFrame
	if e.cfg.Guard != nil {
		peek = jsonrpc.PeekFrameStrict // the guard judges what the receiver reads
	}
	pk, err := peek(raw)
	if err == nil {
		f.Kind, f.Method, f.Tool, f.ID = faults.KindOf(pk.Kind), pk.Method, pk.Tool, pk.ID
		e.correlate(&f, seq)
	}
	var hooked []byte
	if g := e.cfg.Guard; g != nil {
		out, a, done := g.Screen(&f, pk, err, e.correlateAll)
		if done { // answered or swallowed by the guard: no fault applies
			e.mu[dir].Unlock()
			return f, a, false
		}
		if out != nil {
			hooked, f.Raw = out, out
		}
	}
	d := e.dec.Decide(&f)
	e.mu[dir].Unlock()
	a := faults.Apply(&f, d)
	if d.Fire && e.cfg.Recorder != nil {
		out := a.Out(f.Raw)
		after := len(out)
		switch a.Kind {
		case faults.Drop, faults.Withhold, faults.Close, faults.Kill:
			after = 0
		case faults.Duplicate:
			after = 2 * len(out)
		}
		e.cfg.Recorder.Record(Event{
			Seed: e.cfg.Plan.Seed, Session: e.cfg.Plan.Session, Dir: dir.String(), Index: idx,
			Rule: d.Rule, RuleName: d.RuleName, Fault: d.Fault, Action: a.Kind.String(), Applied: a.Applied,
			Kind: f.Kind.String(), Method: f.Method, Tool: f.Tool, ID: json.RawMessage(f.ID),
			BytesBefore: len(raw), BytesAfter: after, Note: a.Note,
		})
	}
	if hooked != nil && a.Kind == faults.Forward {
		a = faults.Action{Kind: faults.Replace, Bytes: hooked}
	}
	return f, a, d.Fire
}

// correlate records requests and gives responses their request's method
// and tool. Requests are keyed by the direction they travelled, so a server
// request and a client request with the same id never collide. A response
// is not correlated with a request recorded after seq: that request stays
// pending.
func (e *engine) correlate(f *faults.Frame, seq uint64) {
	key := jsonrpc.IDKey(f.ID)
	if key == "" {
		return
	}
	e.pmu.Lock()
	defer e.pmu.Unlock()
	switch f.Kind {
	case faults.KindRequest:
		m := e.pending[f.Dir]
		if len(m) >= maxPending {
			for k := range m { // forget an arbitrary old request
				delete(m, k)
				break
			}
		}
		e.seq++
		m[key] = reqInfo{method: f.Method, tool: f.Tool, seq: e.seq}
	case faults.KindResponse, faults.KindError:
		m := e.pending[other(f.Dir)]
		if r, ok := m[key]; ok && r.seq <= seq {
			f.Method, f.Tool = r.method, r.tool
			delete(m, key)
		}
	}
}
