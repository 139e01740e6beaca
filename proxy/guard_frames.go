package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpdrill/mcpdrill/faults"
	"github.com/mcpdrill/mcpdrill/guard"
	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
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

// maxHead is how much of a frame over the cap is kept to read its id.
const maxHead = jsonrpc.MaxHead

// unexamined is step for a frame the guard cannot examine whole while it
// is on (over the frame cap, or cut short): head is its start (at most
// maxHead bytes), all the proxy kept of it; cut says it was cut short.
func (e *engine) unexamined(dir faults.Direction, head []byte, cut bool) (faults.Frame, faults.Action) {
	e.mu[dir].Lock()
	defer e.mu[dir].Unlock()
	f := faults.Frame{Dir: dir, Index: e.next[dir], Raw: head}
	e.next[dir]++
	pk, _ := jsonrpc.PeekFrame(head)
	f.Kind, f.Method, f.Tool = kindOf(pk.Kind), pk.Method, pk.Tool
	max := e.cfg.MaxFrame
	if max <= 0 {
		max = jsonrpc.DefaultMaxFrame
	}
	why := fmt.Sprintf("it is longer than the frame cap of %d bytes", max)
	if cut {
		why = "it was cut short"
	}
	_, a, _ := e.cfg.Guard.unexaminable(e, &f, pk.ID, why)
	return f, a
}

// screen is the guard's part of the engine's step for one frame: the peek
// pk (and its error) of f.Raw. It returns what frame returns.
func (g *Guard) screen(e *engine, f *faults.Frame, pk jsonrpc.Peek, perr error) ([]byte, faults.Action, bool) {
	switch {
	case perr != nil:
		return g.unexaminable(e, f, pk.ID, "it is not a JSON-RPC message the guard can read")
	case pk.Ambiguous:
		return g.unexaminable(e, f, pk.ID, "it repeats a member name, or spells one in another case, so parsers could read it differently")
	case f.Kind == faults.KindBatch:
		return g.batch(e, f)
	}
	return g.frame(f)
}

// unexaminable refuses or withholds a frame the guard cannot judge; id is
// what could be read of its id (nil: none).
func (g *Guard) unexaminable(e *engine, f *faults.Frame, id json.RawMessage, why string) ([]byte, faults.Action, bool) {
	if len(id) > 0 && string(id) != "null" {
		f.ID = id
	} else {
		id = nil
	}
	g.o.Logf("guard %s: a %s frame was not forwarded: %s", g.o.Server, dirNoun(f.Dir), why)
	if f.Dir == faults.ToServer {
		if id == nil && f.Kind == faults.KindNotification {
			return nil, faults.Action{Kind: faults.Drop}, true
		}
		r, _ := g.o.Store.Get(g.o.Server)
		msg := fmt.Sprintf("mcpdrill guard: server %q: a request was refused: %s", g.o.Server, why)
		return nil, faults.Action{Kind: faults.Drop, Reply: g.refusal(id, guard.StatusOf(r), msg)}, true
	}
	if id == nil {
		return nil, faults.Action{Kind: faults.Drop}, true
	}
	// An answer: it leaves the correlation table as any answer does.
	f.Kind = faults.KindResponse
	e.correlate(f, allSeq)
	if k := jsonrpc.IDKey(id); g.takeWaiter(k, nil) {
		return nil, faults.Action{Kind: faults.Drop}, true // the guard's own listing fails
	}
	r, _ := g.o.Store.Get(g.o.Server)
	msg := fmt.Sprintf("the server's answer could not be examined (%s)", why)
	if f.Method == "tools/list" {
		stub, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": map[string]any{}})
		return nil, faults.Action{Kind: faults.Replace, Bytes: g.withheld(stub, r, msg)}, true
	}
	text := fmt.Sprintf("mcpdrill guard: server %q: %s, so it was withheld", g.o.Server, msg)
	return nil, faults.Action{Kind: faults.Replace, Bytes: g.refusal(id, guard.StatusOf(r), text)}, true
}

func dirNoun(d faults.Direction) string {
	if d == faults.ToServer {
		return "client"
	}
	return "server"
}

// takeWaiter hands reply to the guard's own request waiting under key,
// if there is one (nil reply: a failed answer); it reports whether there
// was.
func (g *Guard) takeWaiter(key string, reply []byte) bool {
	if key == "" || !strings.Contains(key, guardIDPrefix) {
		return false
	}
	g.mu.Lock()
	ch, ok := g.waiters[key]
	delete(g.waiters, key)
	g.mu.Unlock()
	if ok {
		if reply == nil {
			reply, _ = jsonrpc.NewErrorResponse(nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the server's answer could not be examined"})
		}
		ch <- reply
	}
	return ok
}

// batch judges each element of a batch as a frame of its own.
func (g *Guard) batch(e *engine, f *faults.Frame) ([]byte, faults.Action, bool) {
	elems, err := jsonrpc.SplitArray(f.Raw)
	if err != nil || len(elems) == 0 {
		return g.unexaminable(e, f, nil, "it is a batch the guard cannot read")
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
		ef.Kind, ef.Method, ef.Tool, ef.ID = kindOf(pk.Kind), pk.Method, pk.Tool, pk.ID
		if perr == nil && pk.Kind != jsonrpc.KindBatch {
			e.correlate(&ef, allSeq)
		}
		var out []byte
		var a faults.Action
		var done bool
		if pk.Kind == jsonrpc.KindBatch {
			out, a, done = g.unexaminable(e, &ef, nil, "a batch inside a batch is not JSON-RPC")
		} else {
			out, a, done = g.screen(e, &ef, pk, perr)
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
				pk, _ := jsonrpc.PeekFrame(elems[i])
				if pk.Kind == jsonrpc.KindRequest {
					r, _ := g.o.Store.Get(g.o.Server)
					msg := fmt.Sprintf("mcpdrill guard: server %q: refused with the rest of its batch, in which another request was refused", g.o.Server)
					replies = append(replies, g.refusal(pk.ID, guard.StatusOf(r), msg))
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

// listAmbiguity names a member of a tools/list answer that parsers could
// read differently (see [jsonrpc.FoldCollision]): in the result, in a
// tool, or at the top of a tool's schemas or annotations, which clients
// decode into structures whose fields encoding/json matches regardless of
// case. It returns "" when there is none or raw cannot be split (the
// manifest parser has judged it by then).
func listAmbiguity(raw []byte) string {
	var frame struct {
		Result json.RawMessage `json:"result"`
	}
	if jsonrpc.Unmarshal(raw, &frame) != nil {
		return ""
	}
	if k, ok := jsonrpc.FoldCollision(frame.Result); ok {
		return fmt.Sprintf("the result repeats member %q", k)
	}
	var res map[string]json.RawMessage
	if jsonrpc.Unmarshal(frame.Result, &res) != nil {
		return ""
	}
	tools, _ := jsonrpc.SplitArray(res["tools"])
	for i, t := range tools {
		if k, ok := jsonrpc.FoldCollision(t); ok {
			return fmt.Sprintf("tool %d repeats member %q", i, k)
		}
		var parts map[string]json.RawMessage
		if jsonrpc.Unmarshal(t, &parts) != nil {
			continue
		}
		for _, m := range []string{"inputSchema", "outputSchema", "annotations"} {
			if k, ok := jsonrpc.FoldCollision(parts[m]); ok {
				return fmt.Sprintf("the %s of tool %d repeats member %q", m, i, k)
			}
		}
	}
	return ""
}
