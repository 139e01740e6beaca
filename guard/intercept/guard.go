// Package intercept is guard mode: an interceptor (see proxy.Interceptor)
// that enforces a server's pinned tool set (package guard) on the traffic
// of one proxy. It lists the server's tools itself through internal/mcp,
// over the proxy's peers.
package intercept

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpdrill/mcpdrill/drift"
	"github.com/mcpdrill/mcpdrill/faults"
	"github.com/mcpdrill/mcpdrill/guard"
	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
	"github.com/mcpdrill/mcpdrill/internal/mcp"
)

// CodeWithheld is the JSON-RPC error code of a tools/call the guard
// refuses. It lies outside -32768..-32000, as the MCP error-code policy asks
// of application codes.
const CodeWithheld = -31001

// IDPrefix starts the id of every request the guard sends itself.
const IDPrefix = "mcpdrill-guard-"

// maxPages bounds one re-check listing.
const maxPages = 50

// maxCursorReqs bounds the client listings remembered by id.
const maxCursorReqs = 1 << 16

// Options configures guard mode.
type Options struct {
	// Store holds the baselines (shared with other proxies and the CLI).
	Store *guard.Store
	// Server is this upstream's id in the store.
	Server string
	// Posture decides first contact: discovery (trust on first use) or
	// strict (pending until approved). Default discovery.
	Posture guard.Posture
	// Recheck is the interval of the proxy's own tools/list (0: only on
	// notifications/tools/list_changed, on client listings and before the
	// first tools/call).
	Recheck time.Duration
	// Timeout bounds one proxy-issued listing, and how long a tools/call
	// waits for a re-check in flight (default 10s).
	Timeout time.Duration
	// Actor names this proxy in the audit log (default "mcpdrill-proxy").
	Actor string
	// Hint words the operator commands a refusal suggests (the CLI's
	// guard subcommands, naming the store); nil names the verb and server
	// only.
	Hint guard.Hint
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Logf receives one line per transition and per store or re-check
	// failure: server ids, statuses and fingerprints only, never payloads.
	Logf func(format string, a ...any)
}

// Guard enforces a server's pinned tool set on the traffic of one proxy:
// it is a proxy.Interceptor, for proxy.Config.Guard. Only a verified
// server's tools are served: a tools/list answer of a server in any other
// status reaches the client with an empty tools array, and a tools/call is
// answered by the proxy with a JSON-RPC error naming the status and the
// commands to review it.
type Guard struct {
	o Options

	mu        sync.Mutex
	meta      json.RawMessage // params._meta of the client's latest tools request
	ready     bool            // the client has spoken past initialize
	confirmed bool            // a full listing was seen since the last list_changed
	gen       uint64          // bumped by every list_changed
	inflight  chan struct{}
	lastErr   error
	serving   *bool
	lister    *mcp.Client // the guard's own listings, over peers
	waiters   map[string]chan answer
	cursorReq map[string]bool // client tools/list ids → carried a cursor
	dropped   atomic.Uint64   // withheld tool calls without an id (Dropped)

	// the relay's peers, set once by the relay that owns the guard (Attach)
	send     func([]byte)     // stdio: write a frame to the server
	post     mcp.RoundTripper // HTTP: one request and its answer
	toClient func([]byte)     // write a frame to the client
	attached bool

	bindOnce  sync.Once
	closeOnce sync.Once
	closed    chan struct{}
	loopDone  chan struct{}
}

// answer is what a waiting request of the guard's own gets back.
type answer struct {
	frame []byte
	err   error
}

// New checks the options and returns a guard.
func New(o Options) (*Guard, error) {
	if o.Store == nil {
		return nil, errors.New("proxy: guard needs a store")
	}
	if err := guard.ValidServerName(o.Server); err != nil {
		return nil, fmt.Errorf("proxy: guard: %w", err)
	}
	if o.Posture == "" {
		o.Posture = guard.PostureDiscovery
	}
	if o.Hint == nil {
		o.Hint = func(c guard.Command) string {
			return strings.Join(slices.DeleteFunc([]string{c.Verb, c.Server, c.Fingerprint}, func(s string) bool { return s == "" }), " ")
		}
	}
	if _, err := guard.ParsePosture(string(o.Posture)); err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.Actor == "" {
		o.Actor = "mcpdrill-proxy"
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	g := &Guard{o: o, waiters: map[string]chan answer{}, cursorReq: map[string]bool{},
		closed: make(chan struct{}), loopDone: make(chan struct{})}
	g.lister = mcp.NewClientOver(g.roundTrip, mcp.Config{IDPrefix: IDPrefix, RequestTimeout: o.Timeout,
		MaxListPages: maxPages, MaxPageTools: drift.MaxManifestTools, MaxTools: maxPages * drift.MaxManifestTools})
	return g, nil
}

// Close stops the periodic re-check and fails waiting listings.
func (g *Guard) Close() {
	g.closeOnce.Do(func() { close(g.closed) })
	started := false
	g.bindOnce.Do(func() {}) // no loop can start after Close
	g.mu.Lock()
	started = g.attached
	g.mu.Unlock()
	if started && g.o.Recheck > 0 {
		<-g.loopDone
	}
}

func (g *Guard) now() time.Time { return g.o.Now().UTC() }

// Attach gives the guard its relay's peers (see proxy.Interceptor); only
// the first call counts.
func (g *Guard) Attach(send func(frame []byte), roundTrip func(ctx context.Context, frame []byte) ([]byte, error), toClient func(frame []byte)) {
	g.bindOnce.Do(func() {
		g.mu.Lock()
		g.send, g.post, g.toClient, g.attached = send, roundTrip, toClient, true
		g.mu.Unlock()
		g.startLoop()
	})
}

func (g *Guard) startLoop() {
	if g.o.Recheck <= 0 {
		close(g.loopDone)
		return
	}
	go func() {
		defer close(g.loopDone)
		t := time.NewTicker(g.o.Recheck)
		defer t.Stop()
		for {
			select {
			case <-g.closed:
				return
			case <-t.C:
				g.mu.Lock()
				ready := g.ready
				g.mu.Unlock()
				if ready {
					ctx, cancel := context.WithTimeout(context.Background(), g.o.Timeout)
					err := g.Recheck(ctx)
					cancel()
					if err != nil {
						g.o.Logf("guard %s: periodic re-check: %v", g.o.Server, err)
					}
				}
			}
		}
	}()
}

// frame judges a frame Screen could read: it sees every examined frame
// after correlation. It returns replacement bytes (the frame still goes through
// faults), or a final action with done set (faults are skipped).
func (g *Guard) frame(f *faults.Frame) (out []byte, a faults.Action, done bool) {
	if f.Dir == faults.ToServer {
		return g.fromClient(f)
	}
	return g.fromServer(f)
}

func (g *Guard) fromClient(f *faults.Frame) ([]byte, faults.Action, bool) {
	if f.Kind != faults.KindRequest && f.Kind != faults.KindNotification {
		return nil, faults.Action{}, false
	}
	if f.Method != "initialize" {
		g.mu.Lock()
		g.ready = true
		g.mu.Unlock()
	}
	// A frame is judged by its method, never by its id: a receiver may run
	// a call that carries none (absent or null), so a tool call without an
	// id is judged as one with.
	call := invokesTool(f.Method)
	if !call && (f.Kind != faults.KindRequest || f.Method != "tools/list") {
		return nil, faults.Action{}, false
	}
	var req struct {
		Params struct {
			Meta   json.RawMessage `json:"_meta"`
			Cursor *string         `json:"cursor"`
		} `json:"params"`
	}
	_ = json.Unmarshal(f.Raw, &req)
	g.mu.Lock()
	if len(req.Params.Meta) > 0 && !bytes.Equal(req.Params.Meta, []byte("null")) {
		g.meta = append(json.RawMessage(nil), req.Params.Meta...)
	}
	if !call {
		if k := jsonrpc.IDKey(f.ID); k != "" {
			if len(g.cursorReq) >= maxCursorReqs {
				clear(g.cursorReq)
			}
			g.cursorReq[k] = req.Params.Cursor != nil && *req.Params.Cursor != ""
		}
		confirmed := g.confirmed
		g.mu.Unlock()
		if !confirmed {
			g.firstListing()
		}
		return nil, faults.Action{}, false
	}
	g.mu.Unlock()
	msg, r := g.callAllowed(f.Tool)
	switch {
	case msg == "":
		return nil, faults.Action{}, false
	case f.ID == nil:
		// No id to answer under: the call is dropped, and counted.
		g.dropCall(msg)
		return nil, faults.Action{Kind: faults.Drop}, true
	}
	return nil, faults.Action{Kind: faults.Drop, Reply: g.refusal(f.ID, r, msg)}, true
}

// invokesTool reports whether a client method runs one of the server's
// tools. In every MCP revision up to 2026-07-28 that is tools/call alone:
// a task-augmented call and an input-required retry are tools/call too,
// and the tasks methods only read or cancel what a call started.
func invokesTool(method string) bool { return method == "tools/call" }

// Dropped is the number of tool calls without an id (no "id", or "id":
// null) the guard withheld: with no id to answer under, a withheld call is
// dropped, logged and counted here.
func (g *Guard) Dropped() uint64 { return g.dropped.Load() }

// dropCall counts a withheld tool call that has no id, and logs it: each
// of the first few, then one line at every power of two, so that a client
// sending them by the million cannot flood the log.
func (g *Guard) dropCall(why string) {
	n := g.dropped.Add(1)
	if n <= 4 || n&(n-1) == 0 {
		g.o.Logf("guard %s: a tools/call without an id was dropped, since it cannot be answered (%d so far): %s", g.o.Server, n, why)
	}
}

// firstListing pins the whole tool set before a client's first listing of
// a server the store has no record of, so that the pages of that listing
// can be judged against it: a paginated server is served on first use
// too. It runs on the client's side of the relay, where waiting for the
// guard's own listing cannot hold up its replies.
func (g *Guard) firstListing() {
	if r, err := g.o.Store.Get(g.o.Server); err != nil || guard.StatusOf(r) != guard.StatusNone {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), g.o.Timeout)
	defer cancel()
	if err := g.Recheck(ctx); err != nil {
		g.o.Logf("guard %s: first listing: %v", g.o.Server, err)
	}
}

// callAllowed decides a tools/call; a non-empty message refuses it. r is
// the server's record as the decision read it (nil: none, or unreadable).
func (g *Guard) callAllowed(tool string) (msg string, r *guard.Record) {
	g.mu.Lock()
	confirmed := g.confirmed
	g.mu.Unlock()
	if !confirmed {
		ctx, cancel := context.WithTimeout(context.Background(), g.o.Timeout)
		err := g.Recheck(ctx)
		cancel()
		g.mu.Lock()
		confirmed = g.confirmed
		g.mu.Unlock()
		if !confirmed {
			r, _ := g.o.Store.Get(g.o.Server)
			why := "its live tool set could not be re-checked"
			if err != nil {
				why += " (" + err.Error() + ")"
			}
			return fmt.Sprintf("mcpdrill guard: server %q: %s, so calls are refused until a tools/list succeeds; check with `%s`", g.o.Server, why, g.hint("status")), r
		}
	}
	r, err := g.o.Store.Get(g.o.Server)
	if err != nil {
		return fmt.Sprintf("mcpdrill guard: server %q: the guard store cannot be read (%v), so calls are refused", g.o.Server, err), nil
	}
	if !r.Serves() {
		return guard.Explain(g.o.Hint, g.o.Server, r), r
	}
	if tool == "" {
		return fmt.Sprintf("mcpdrill guard: server %q: the call names no tool the guard can read (params.name must be a string), so it is refused", g.o.Server), r
	}
	if !r.Baseline.Has(tool) {
		return fmt.Sprintf("mcpdrill guard: server %q: tool %q is not in the approved tool set; review with `%s`", g.o.Server, tool, g.hint("diff")), r
	}
	return "", r
}

// hint is the guard command verb for this server, as a user types it.
func (g *Guard) hint(verb string) string {
	return g.o.Hint(guard.Command{Verb: verb, Server: g.o.Server})
}

// refusal is the error answer, under id, to a request the guard refuses;
// r is the server's record (nil: none). Its data names the server, its
// status, the command to review it and, when there is a set to approve,
// the command that approves it by fingerprint.
func (g *Guard) refusal(id []byte, r *guard.Record, msg string) []byte {
	info := map[string]string{"server": g.o.Server, "status": guard.StatusOf(r).String(), "review": g.hint("diff")}
	if c, ok := guard.ApproveCommand(r); ok {
		info["approve"] = g.o.Hint(c)
	}
	data, _ := json.Marshal(info)
	b, err := jsonrpc.NewErrorResponse(json.RawMessage(id), &jsonrpc.Error{Code: CodeWithheld, Message: msg, Data: data})
	if err != nil {
		b, _ = jsonrpc.NewErrorResponse(nil, &jsonrpc.Error{Code: CodeWithheld, Message: msg})
	}
	return b
}

func (g *Guard) fromServer(f *faults.Frame) ([]byte, faults.Action, bool) {
	switch f.Kind {
	case faults.KindResponse, faults.KindError:
		if g.takeWaiter(jsonrpc.IDKey(f.ID), answer{frame: bytes.Clone(f.Raw)}) {
			return nil, faults.Action{Kind: faults.Drop}, true // never reaches the client
		}
		if f.Method == "tools/list" && f.Kind == faults.KindResponse {
			return g.clientList(f), faults.Action{}, false
		}
	case faults.KindNotification:
		if f.Method == "notifications/tools/list_changed" {
			g.mu.Lock()
			g.confirmed = false
			g.gen++
			g.mu.Unlock()
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), g.o.Timeout)
				defer cancel()
				if err := g.Recheck(ctx); err != nil {
					g.o.Logf("guard %s: re-check after list_changed: %v", g.o.Server, err)
				}
			}()
		}
	}
	return nil, faults.Action{}, false
}

// clientList decides a tools/list answer to the client: nil forwards it,
// anything else replaces it.
func (g *Guard) clientList(f *faults.Frame) []byte {
	g.mu.Lock()
	k := jsonrpc.IDKey(f.ID)
	paged := g.cursorReq[k]
	delete(g.cursorReq, k)
	g.mu.Unlock()
	m, err := drift.ParseManifest(f.Raw)
	if err != nil {
		g.o.Logf("guard %s: unreadable tools/list answer withheld: %v", g.o.Server, err)
		r, _ := g.o.Store.Get(g.o.Server)
		return g.withheld(f.Raw, r, "the tools/list answer could not be read as a tool list")
	}
	if why := frameAmbiguity(f.Raw); why != "" {
		g.o.Logf("guard %s: ambiguous tools/list answer withheld: %s", g.o.Server, why)
		r, _ := g.o.Store.Get(g.o.Server)
		return g.withheld(f.Raw, r, "the tools/list answer is ambiguous ("+why+"), so parsers could read different tools from it")
	}
	if paged || m.NextCursor != "" {
		return g.page(f.Raw, m.Tools)
	}
	r, err := g.observe(guard.NewToolSet(m.Tools), true)
	if err != nil {
		return g.withheld(f.Raw, nil, "the guard store failed: "+err.Error())
	}
	if r.Serves() {
		return nil
	}
	return g.withheld(f.Raw, r, "")
}

// page decides one page of a paginated listing: it is served only when the
// server is verified and every tool on it is byte-for-byte (canonically) a
// baseline tool; otherwise it is withheld and a full re-check runs.
func (g *Guard) page(raw []byte, tools []mcp.Tool) []byte {
	r, err := g.o.Store.Get(g.o.Server)
	if err != nil {
		return g.withheld(raw, nil, "the guard store failed: "+err.Error())
	}
	if r.Serves() {
		base, err := r.Baseline.Parse()
		if err == nil {
			want := map[string]string{}
			for _, t := range base {
				want[t.Name] = drift.ToolFingerprint(t)
			}
			ok := true
			for _, t := range tools {
				if want[t.Name] != drift.ToolFingerprint(t) {
					ok = false
					break
				}
			}
			if ok {
				return nil
			}
		}
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), g.o.Timeout)
		defer cancel()
		if err := g.Recheck(ctx); err != nil {
			g.o.Logf("guard %s: re-check of a paginated listing: %v", g.o.Server, err)
		}
	}()
	return g.withheld(raw, r, "a page of the tool list does not match the approved set")
}

// withheld rewrites a tools/list response to carry no tools (and no
// cursor), with the guard's explanation in result._meta.
func (g *Guard) withheld(raw []byte, r *guard.Record, why string) []byte {
	// jsonrpc.Unmarshal: a list nested past encoding/json's limit (the
	// reason it is withheld, as often as not) still yields its id.
	var frame map[string]json.RawMessage
	if jsonrpc.Unmarshal(raw, &frame) != nil || frame == nil {
		frame = map[string]json.RawMessage{"jsonrpc": json.RawMessage(`"2.0"`)}
	}
	var res map[string]json.RawMessage
	if jsonrpc.Unmarshal(frame["result"], &res) != nil || res == nil {
		res = map[string]json.RawMessage{}
	}
	delete(frame, "error")
	res["tools"] = json.RawMessage("[]")
	delete(res, "nextCursor")
	var meta map[string]json.RawMessage
	if jsonrpc.Unmarshal(res["_meta"], &meta) != nil || meta == nil {
		meta = map[string]json.RawMessage{}
	}
	msg := guard.Explain(g.o.Hint, g.o.Server, r)
	if why != "" {
		msg = fmt.Sprintf("mcpdrill guard: server %q: %s, so its tools are withheld", g.o.Server, why)
	}
	info, _ := json.Marshal(map[string]string{"server": g.o.Server, "status": guard.StatusOf(r).String(), "message": msg})
	meta["io.mcpdrill/guard"] = info
	var errMeta, errRes error
	res["_meta"], errMeta = json.Marshal(meta)
	frame["result"], errRes = json.Marshal(res)
	out, err := json.Marshal(frame)
	if err != nil || errMeta != nil || errRes != nil {
		// A member encoding/json cannot write back (nested past its
		// limit) is dropped: the answer keeps its id and the explanation.
		short := map[string]json.RawMessage{"jsonrpc": json.RawMessage(`"2.0"`), "id": frame["id"]}
		short["result"], _ = json.Marshal(map[string]json.RawMessage{"tools": json.RawMessage("[]"),
			"_meta": json.RawMessage(`{"io.mcpdrill/guard":` + string(info) + `}`)})
		if out, err = json.Marshal(short); err != nil {
			return []byte(`{"jsonrpc":"2.0","result":{"tools":[]}}`)
		}
	}
	return out
}

// observe records a complete live tool set and remembers whether the
// server is served; it announces a change of that to the client with
// notifications/tools/list_changed (stdio: on its stdout; HTTP: on every
// open GET stream) unless fromClient (the client is reading this very
// answer, no announcement needed).
func (g *Guard) observe(live guard.ToolSet, fromClient bool) (*guard.Record, error) {
	r, ev, err := g.o.Store.Observe(g.o.Server, live, g.o.Posture, g.o.Actor, g.now())
	if err != nil {
		g.o.Logf("guard %s: store: %v", g.o.Server, err)
		g.setServing(false, fromClient)
		return nil, err
	}
	if ev != nil {
		g.o.Logf("guard %s: %s: %s → %s (%s → %s)", g.o.Server, ev.Action, ev.From, ev.To, orNone(ev.OldFingerprint), orNone(ev.NewFingerprint))
	}
	g.mu.Lock()
	g.confirmed = true
	g.mu.Unlock()
	g.setServing(r.Serves(), fromClient)
	return r, nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func (g *Guard) setServing(now, quiet bool) {
	g.mu.Lock()
	changed := g.serving != nil && *g.serving != now
	g.serving = &now
	notify := g.toClient
	g.mu.Unlock()
	if changed && !quiet && notify != nil {
		if b, err := jsonrpc.NewNotification("notifications/tools/list_changed", nil); err == nil {
			notify(b)
		}
	}
}

// Recheck lists the server's tools itself (its own request ids; the
// replies never reach the client), following cursors, and records the set.
// Concurrent calls share one listing; a list_changed during a listing
// starts another.
func (g *Guard) Recheck(ctx context.Context) error {
	for {
		g.mu.Lock()
		if ch := g.inflight; ch != nil {
			g.mu.Unlock()
			select {
			case <-ch:
			case <-ctx.Done():
				return ctx.Err()
			}
			g.mu.Lock()
			ok, err := g.confirmed, g.lastErr
			g.mu.Unlock()
			if ok || err != nil {
				return err
			}
			continue // a list_changed came in during that listing
		}
		ch := make(chan struct{})
		g.inflight = ch
		gen := g.gen
		g.mu.Unlock()
		live, err := g.list(ctx)
		if err == nil {
			_, err = g.observe(live, false)
		}
		g.mu.Lock()
		g.inflight, g.lastErr = nil, err
		stale := g.gen != gen
		if stale || err != nil {
			// A listing that failed vouches for nothing: calls wait for
			// the next one to succeed.
			g.confirmed = false
		}
		g.mu.Unlock()
		close(ch)
		if err != nil || !stale {
			return err
		}
	}
}

// list fetches the whole tool list with the guard's own requests, through
// internal/mcp's pagination; a listing that is not whole and unambiguous
// vouches for nothing.
func (g *Guard) list(ctx context.Context) (guard.ToolSet, error) {
	g.mu.Lock()
	meta := g.meta
	g.mu.Unlock()
	l, err := g.lister.ListToolsMeta(ctx, meta)
	switch {
	case err != nil:
		return guard.ToolSet{}, fmt.Errorf("tools/list: %w", err)
	case l.CursorLoop:
		return guard.ToolSet{}, fmt.Errorf("tools/list pagination loops: page %d hands back a cursor already followed", l.Pages)
	case l.ToolsCapped:
		return guard.ToolSet{}, fmt.Errorf("tools/list answer: page %d lists more than the %d tools a listing may hold", l.Pages, drift.MaxManifestTools)
	case l.Capped:
		return guard.ToolSet{}, fmt.Errorf("tools/list did not end within %d pages", maxPages)
	case l.Ambiguity != "":
		return guard.ToolSet{}, fmt.Errorf("tools/list answer is ambiguous: %s", l.Ambiguity)
	case l.Duplicate != "":
		return guard.ToolSet{}, fmt.Errorf("tools/list answer: tool %q is listed twice", l.Duplicate)
	}
	var tools []mcp.Tool
	for i, page := range l.Raw {
		m, err := drift.ParseManifest(page)
		if err != nil {
			return guard.ToolSet{}, fmt.Errorf("tools/list answer: page %d: %w", i+1, err)
		}
		tools = append(tools, m.Tools...)
	}
	return guard.NewToolSet(tools), nil
}

// roundTrip sends one of the guard's requests to the server and returns
// its answer: over HTTP through the relay's RoundTrip, on stdio written to
// the server, its answer taken out of the server's frames by Screen.
func (g *Guard) roundTrip(ctx context.Context, frame []byte) ([]byte, error) {
	g.mu.Lock()
	send, post := g.send, g.post
	g.mu.Unlock()
	switch {
	case post != nil:
		return post(ctx, frame)
	case send != nil:
		pk, err := jsonrpc.PeekFrame(frame)
		key := jsonrpc.IDKey(pk.ID)
		if err != nil || key == "" {
			return nil, errors.New("the guard's request has no id")
		}
		ch := make(chan answer, 1)
		g.mu.Lock()
		g.waiters[key] = ch
		g.mu.Unlock()
		defer func() {
			g.mu.Lock()
			delete(g.waiters, key)
			g.mu.Unlock()
		}()
		send(frame)
		select {
		case a := <-ch:
			return a.frame, a.err
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-g.closed:
			return nil, errors.New("guard closed")
		}
	}
	return nil, errors.New("guard is not attached to a relay")
}
