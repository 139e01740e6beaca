package intercept

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mcpdrill/mcpdrill/faults"
	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
	"github.com/mcpdrill/mcpdrill/internal/mcp"
)

// The guard decides on what the receiver will parse, so a frame it cannot
// read the way every receiver reads it never passes while it is on:
//   - a frame it cannot decode, or one over the frame cap, is refused (from
//     the client) or withheld (from the server), answered under its id when
//     the id can be read from the frame's head;
//   - an ambiguous frame ([jsonrpc.Peek.Ambiguous]: a repeated member name,
//     or one that differs from an envelope or call member only in case) is
//     refused or withheld the same way;
//   - a batch is decided element by element. From the client it is
//     forwarded only when every element would be: otherwise each request
//     in it is answered with a refusal, in one batch, and none reaches the
//     server. From the server each element is judged as a frame of its own
//     (the guard's own replies taken out, tool lists withheld, undecodable
//     elements withheld) and the rest delivered as a batch.

// Screen is the guard's part of the relay's step for one frame
// (proxy.Interceptor): pk (and its error) is the strict peek of f.Raw. It
// returns replacement bytes (the frame still goes through faults), or a
// final action with done set (faults are skipped).
func (g *Guard) Screen(f *faults.Frame, pk jsonrpc.Peek, perr error, correlate func(*faults.Frame)) ([]byte, faults.Action, bool) {
	switch {
	case perr != nil:
		return g.unexaminable(f, pk.ID, "it is not a JSON-RPC message the guard can read", correlate)
	case pk.Ambiguous:
		return g.unexaminable(f, pk.ID, "it repeats a member name, or spells one in another case, so parsers could read it differently", correlate)
	case f.Kind == faults.KindBatch:
		return g.batch(f, correlate)
	}
	return g.frame(f)
}

// Unexaminable decides a frame the relay could not examine whole
// (proxy.Interceptor): it is refused or withheld.
func (g *Guard) Unexaminable(f *faults.Frame, id json.RawMessage, why string, correlate func(*faults.Frame)) faults.Action {
	_, a, _ := g.unexaminable(f, id, why, correlate)
	return a
}

// unexaminable refuses or withholds a frame the guard cannot judge; id is
// what could be read of its id (nil: none).
func (g *Guard) unexaminable(f *faults.Frame, id json.RawMessage, why string, correlate func(*faults.Frame)) ([]byte, faults.Action, bool) {
	if len(id) > 0 && string(id) != "null" {
		f.ID = id
	} else {
		id = nil
	}
	g.o.Logf("guard %s: a %s frame was not forwarded: %s", g.o.Server, dirNoun(f.Dir), why)
	if f.Dir == faults.ToServer {
		if id == nil && f.Kind == faults.KindNotification {
			if invokesTool(f.Method) {
				g.dropCall("it could not be examined: " + why)
			}
			return nil, faults.Action{Kind: faults.Drop}, true
		}
		r, _ := g.o.Store.Get(g.o.Server)
		msg := fmt.Sprintf("mcpdrill guard: server %q: a request was refused: %s", g.o.Server, why)
		return nil, faults.Action{Kind: faults.Drop, Reply: g.refusal(id, r, msg)}, true
	}
	if id == nil {
		return nil, faults.Action{Kind: faults.Drop}, true
	}
	// An answer: it leaves the correlation table as any answer does.
	f.Kind = faults.KindResponse
	correlate(f)
	if k := jsonrpc.IDKey(id); g.takeWaiter(k, answer{err: errors.New("the server's answer could not be examined (" + why + ")")}) {
		return nil, faults.Action{Kind: faults.Drop}, true // the guard's own listing fails
	}
	r, _ := g.o.Store.Get(g.o.Server)
	msg := fmt.Sprintf("the server's answer could not be examined (%s)", why)
	if f.Method == "tools/list" {
		stub, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": map[string]any{}})
		return nil, faults.Action{Kind: faults.Replace, Bytes: g.withheld(stub, r, msg)}, true
	}
	text := fmt.Sprintf("mcpdrill guard: server %q: %s, so it was withheld", g.o.Server, msg)
	return nil, faults.Action{Kind: faults.Replace, Bytes: g.refusal(id, r, text)}, true
}

func dirNoun(d faults.Direction) string {
	if d == faults.ToServer {
		return "client"
	}
	return "server"
}

// takeWaiter hands a to the guard's own request waiting under key, if
// there is one; it reports whether there was.
func (g *Guard) takeWaiter(key string, a answer) bool {
	if key == "" || !strings.Contains(key, IDPrefix) {
		return false
	}
	g.mu.Lock()
	ch, ok := g.waiters[key]
	delete(g.waiters, key)
	g.mu.Unlock()
	if ok {
		ch <- a
	}
	return ok
}

// batch judges each element of a batch as a frame of its own.
func (g *Guard) batch(f *faults.Frame, correlate func(*faults.Frame)) ([]byte, faults.Action, bool) {
	elems, err := jsonrpc.SplitArray(f.Raw)
	if err != nil || len(elems) == 0 {
		return g.unexaminable(f, nil, "it is a batch the guard cannot read", correlate)
	}
	type judged struct {
		out    []byte // what to deliver (nil: nothing)
		reply  []byte // an answer to the sender
		refuse bool
	}
	res := make([]judged, len(elems))
	refused := false
	for i, raw := range elems {
		ef := faults.Frame{Dir: f.Dir, Index: f.Index, Raw: raw}
		pk, perr := jsonrpc.PeekFrameStrict(raw)
		ef.Kind, ef.Method, ef.Tool, ef.ID = faults.KindOf(pk.Kind), pk.Method, pk.Tool, pk.ID
		if perr == nil && pk.Kind != jsonrpc.KindBatch {
			correlate(&ef)
		}
		var out []byte
		var a faults.Action
		var done bool
		if pk.Kind == jsonrpc.KindBatch {
			out, a, done = g.unexaminable(&ef, nil, "a batch inside a batch is not JSON-RPC", correlate)
		} else {
			out, a, done = g.Screen(&ef, pk, perr, correlate)
		}
		j := judged{out: raw}
		switch {
		case !done && out != nil:
			j.out = out
		case done && a.Kind == faults.Replace:
			j.out = a.Bytes
		case done:
			j.out, j.reply, j.refuse = nil, a.Reply, f.Dir == faults.ToServer
		}
		refused = refused || j.refuse
		res[i] = j
	}
	if f.Dir == faults.ToServer && refused {
		// All or nothing: no element reaches the server.
		var replies []json.RawMessage
		for i, j := range res {
			switch {
			case j.reply != nil:
				replies = append(replies, j.reply)
			case j.out != nil:
				msg := fmt.Sprintf("mcpdrill guard: server %q: refused with the rest of its batch, in which the guard refused another element", g.o.Server)
				pk, _ := jsonrpc.PeekFrame(elems[i])
				switch {
				case pk.Kind == jsonrpc.KindRequest:
					r, _ := g.o.Store.Get(g.o.Server)
					replies = append(replies, g.refusal(pk.ID, r, msg))
				case invokesTool(pk.Method):
					g.dropCall(msg) // a call without an id: not answered
				}
			}
		}
		a := faults.Action{Kind: faults.Drop}
		if len(replies) > 0 {
			a.Reply, _ = json.Marshal(replies)
		}
		return nil, a, true
	}
	var outs, replies []json.RawMessage
	changed := false
	for i, j := range res {
		if j.out != nil {
			outs = append(outs, j.out)
		}
		if j.reply != nil {
			replies = append(replies, j.reply)
		}
		changed = changed || j.out == nil || !bytes.Equal(j.out, elems[i])
	}
	if !changed {
		return nil, faults.Action{}, false
	}
	a := faults.Action{Kind: faults.Drop}
	if len(outs) > 0 {
		a = faults.Action{Kind: faults.Replace}
		a.Bytes, _ = json.Marshal(outs)
	}
	if len(replies) > 0 {
		a.Reply, _ = json.Marshal(replies)
	}
	return nil, a, true
}

// frameAmbiguity is mcp.ListAmbiguity of a tools/list answer's result.
func frameAmbiguity(raw []byte) string {
	var frame struct {
		Result json.RawMessage `json:"result"`
	}
	if jsonrpc.Unmarshal(raw, &frame) != nil {
		return ""
	}
	return mcp.ListAmbiguity(frame.Result)
}
