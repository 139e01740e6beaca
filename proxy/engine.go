// Package proxy relays MCP traffic between a client and a server, over
// stdio (a spawned child) or Streamable HTTP, asks package faults what to do
// with each frame, executes the answer and records every fault that fired.
//
// When no fault fires a frame's original bytes are forwarded untouched; with
// an empty plan the stdio relay is a plain byte copy.
package proxy

import (
	"bytes"
	"encoding/json"
	"sync"

	"github.com/mcpdrill/mcpdrill/faults"
	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
)

// ToolsListHook sees every server→client response to tools/list before any
// fault applies (the seam for guard mode). It returns the bytes to deliver
// (raw itself when unchanged). An error makes the proxy deliver a JSON-RPC
// error with the error's text instead: fail closed.
type ToolsListHook func(raw []byte) ([]byte, error)

// Config is what both transports share.
type Config struct {
	// Plan is the fault plan; nil or empty relays without faults.
	Plan *faults.Plan
	// Recorder receives every fault that fired; nil records nothing.
	Recorder Recorder
	// OnToolsList, when set, intercepts tools/list responses.
	OnToolsList ToolsListHook
	// Guard, when set, pins the server's tool set (guard mode, guard.go).
	Guard *Guard
	// MaxFrame caps one frame (0: jsonrpc.DefaultMaxFrame). Longer frames
	// are relayed as they are, unexamined.
	MaxFrame int
}

// reqInfo is what a response is correlated with.
type reqInfo struct{ method, tool string }

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

	// storeOnly keeps every frame on the store-and-forward path (tests
	// compare the faster modes with it).
	storeOnly bool
}

func newEngine(cfg Config) *engine {
	e := &engine{cfg: cfg}
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
	return e.dec.Empty() && e.cfg.OnToolsList == nil && e.cfg.Guard == nil
}

// mayChange reports whether the proxy could do anything but forward a
// frame travelling in dir: a guard or a tools/list hook sees it, or a rule
// of the plan may still fire there ([faults.Decider.MayFire]). It looks at
// no frame and no roll. Once false it stays false (counters only grow), so
// a pump may then forward frames as they arrive and account for each one
// with [engine.process] before its last byte is written.
func (e *engine) mayChange(dir faults.Direction) bool {
	return e.storeOnly || e.cfg.Guard != nil || (e.cfg.OnToolsList != nil && dir == faults.ToClient) || e.dec.MayFire(dir)
}

// inert reports whether nothing can change in either direction any more:
// no fault can fire, so indices, counters and correlation are never
// observed again and the relay may be a plain byte copy.
func (e *engine) inert() bool {
	return e.passive() || (!e.mayChange(faults.ToServer) && !e.mayChange(faults.ToClient))
}

func other(d faults.Direction) faults.Direction {
	if d == faults.ToServer {
		return faults.ToClient
	}
	return faults.ToServer
}

func kindOf(k jsonrpc.Kind) faults.Kind {
	switch k {
	case jsonrpc.KindRequest:
		return faults.KindRequest
	case jsonrpc.KindNotification:
		return faults.KindNotification
	case jsonrpc.KindResponse:
		return faults.KindResponse
	case jsonrpc.KindError:
		return faults.KindError
	case jsonrpc.KindBatch:
		return faults.KindBatch
	}
	return faults.KindInvalid
}

// process decides what to do with one frame (raw has no line terminator).
// It must be called in the order frames arrive in dir.
func (e *engine) process(dir faults.Direction, raw []byte) (faults.Frame, faults.Action) {
	e.mu[dir].Lock()
	idx := e.next[dir]
	e.next[dir]++
	f := faults.Frame{Dir: dir, Index: idx, Raw: raw}
	if e.passive() {
		e.mu[dir].Unlock()
		return f, faults.Action{Kind: faults.Forward}
	}
	pk, err := jsonrpc.PeekFrame(raw)
	if err == nil {
		f.Kind, f.Method, f.Tool, f.ID = kindOf(pk.Kind), pk.Method, pk.Tool, pk.ID
		e.correlate(&f)
	}
	var hooked []byte
	var hookErr error
	if g := e.cfg.Guard; g != nil && err == nil {
		out, a, done := g.frame(&f)
		if done { // answered or swallowed by the guard: no fault applies
			e.mu[dir].Unlock()
			return f, a
		}
		if out != nil {
			hooked, f.Raw = out, out
		}
	}
	if hooked == nil && e.cfg.OnToolsList != nil && dir == faults.ToClient && f.Method == "tools/list" && (f.Kind == faults.KindResponse) {
		hooked, hookErr = e.cfg.OnToolsList(raw)
		if hookErr != nil {
			hooked, _ = jsonrpc.NewErrorResponse(json.RawMessage(f.ID), &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: hookErr.Error()})
		}
		if !bytes.Equal(hooked, raw) {
			f.Raw = hooked
		} else {
			hooked = nil
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
	return f, a
}

// correlate records requests and gives responses their request's method
// and tool. Requests are keyed by the direction they travelled, so a server
// request and a client request with the same id never collide.
func (e *engine) correlate(f *faults.Frame) {
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
		m[key] = reqInfo{method: f.Method, tool: f.Tool}
	case faults.KindResponse, faults.KindError:
		m := e.pending[other(f.Dir)]
		if r, ok := m[key]; ok {
			f.Method, f.Tool = r.method, r.tool
			delete(m, key)
		}
	}
}
