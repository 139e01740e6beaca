package proxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mcpdrill/mcpdrill/drift"
	"github.com/mcpdrill/mcpdrill/faults"
	"github.com/mcpdrill/mcpdrill/guard"
	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
)

// CodeGuardWithheld is the JSON-RPC error code of a tools/call the guard
// refuses. It lies outside -32768..-32000, as the MCP error-code policy asks
// of application codes.
const CodeGuardWithheld = -31001

// guardIDPrefix starts the id of every request the guard sends itself.
const guardIDPrefix = "mcpdrill-guard-"

// maxGuardPages bounds one re-check listing.
const maxGuardPages = 50

// GuardOptions configures guard mode.
type GuardOptions struct {
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

// Guard enforces a server's pinned tool set on the traffic of one proxy.
// Put it in Config.Guard. Only a verified server's tools are served: a
// tools/list answer of a server in any other status reaches the client with
// an empty tools array, and a tools/call is answered by the proxy with a
// JSON-RPC error naming the status and the commands to review it.
type Guard struct {
	o GuardOptions

	mu        sync.Mutex
	meta      json.RawMessage // params._meta of the client's latest tools request
	ready     bool            // the client has spoken past initialize
	confirmed bool            // a full listing was seen since the last list_changed
	gen       uint64          // bumped by every list_changed
	inflight  chan struct{}
	lastErr   error
	serving   *bool
	seq       uint64
	waiters   map[string]chan []byte
	cursorReq map[string]bool // client tools/list ids → carried a cursor

	// transport, set once by the relay that owns the guard
	toServer func([]byte) // stdio: write a frame to the server
	toClient func([]byte) // write a frame to the client (HTTP: into its GET streams)
	httpH    *HTTP
	httpHdr  http.Header
	httpURL  string

	bindOnce  sync.Once
	closeOnce sync.Once
	closed    chan struct{}
	loopDone  chan struct{}
}

// NewGuard checks the options and returns a guard.
func NewGuard(o GuardOptions) (*Guard, error) {
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
		o.Hint = func(verb string, args ...string) string { return strings.Join(append([]string{verb}, args...), " ") }
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
	return &Guard{o: o, waiters: map[string]chan []byte{}, cursorReq: map[string]bool{},
		closed: make(chan struct{}), loopDone: make(chan struct{})}, nil
}

// Close stops the periodic re-check and fails waiting listings.
func (g *Guard) Close() {
	g.closeOnce.Do(func() { close(g.closed) })
	started := false
	g.bindOnce.Do(func() {}) // no loop can start after Close
	g.mu.Lock()
	started = g.toServer != nil || g.httpH != nil
	g.mu.Unlock()
	if started && g.o.Recheck > 0 {
		<-g.loopDone
	}
}

func (g *Guard) now() time.Time { return g.o.Now().UTC() }

// bindStdio gives the guard a stdio session's two sinks.
func (g *Guard) bindStdio(server, client *sink) {
	g.bindOnce.Do(func() {
		g.mu.Lock()
		g.toServer = func(b []byte) { server.write(b, newline) }
		g.toClient = func(b []byte) { client.write(b, newline) }
		g.mu.Unlock()
		g.startLoop()
	})
}

// bindHTTP gives the guard an HTTP proxy to send its own listings through.
func (g *Guard) bindHTTP(h *HTTP) {
	g.bindOnce.Do(func() {
		g.mu.Lock()
		g.httpH = h
		g.toClient = h.Push // into the clients' GET streams
		g.mu.Unlock()
		g.startLoop()
	})
}

// noteHTTP remembers the latest client POST's headers and target, so the
// guard's own listing joins the same session with the same credentials.
func (g *Guard) noteHTTP(r *http.Request, target string) {
	h := r.Header.Clone()
	for k := range h {
		if strings.HasPrefix(strings.ToLower(k), "mcp-param-") || strings.EqualFold(k, "Mcp-Name") {
			h.Del(k)
		}
	}
	for k := range hopHeaders {
		h.Del(k)
	}
	h.Del("Content-Length")
	h.Del("Accept-Encoding")
	g.mu.Lock()
	g.httpHdr, g.httpURL = h, target
	g.mu.Unlock()
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

// frame is the engine's hook: it sees every examined frame after
// correlation. It returns replacement bytes (the frame still goes through
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
	if f.Kind != faults.KindRequest || (f.Method != "tools/list" && f.Method != "tools/call") {
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
	if f.Method == "tools/list" {
		if k := jsonrpc.IDKey(f.ID); k != "" {
			if len(g.cursorReq) >= maxPending {
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
	if msg, status := g.callAllowed(f.Tool); msg != "" {
		return nil, faults.Action{Kind: faults.Drop, Reply: g.refusal(f.ID, status, msg)}, true
	}
	return nil, faults.Action{}, false
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

// callAllowed decides a tools/call; a non-empty message refuses it.
func (g *Guard) callAllowed(tool string) (msg string, status guard.Status) {
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
			return fmt.Sprintf("mcpdrill guard: server %q: %s, so calls are refused until a tools/list succeeds; check with `%s`", g.o.Server, why, g.hint("status")), guard.StatusOf(r)
		}
	}
	r, err := g.o.Store.Get(g.o.Server)
	if err != nil {
		return fmt.Sprintf("mcpdrill guard: server %q: the guard store cannot be read (%v), so calls are refused", g.o.Server, err), guard.StatusNone
	}
	if !r.Serves() {
		return guard.Explain(g.o.Hint, g.o.Server, r), guard.StatusOf(r)
	}
	if tool == "" {
		return fmt.Sprintf("mcpdrill guard: server %q: the call names no tool the guard can read (params.name must be a string), so it is refused", g.o.Server), r.Status
	}
	if !r.Baseline.Has(tool) {
		return fmt.Sprintf("mcpdrill guard: server %q: tool %q is not in the approved tool set; review with `%s`", g.o.Server, tool, g.hint("diff")), r.Status
	}
	return "", r.Status
}

// hint is the guard command verb for this server, as a user types it.
func (g *Guard) hint(verb string) string { return g.o.Hint(verb, g.o.Server) }

func (g *Guard) refusal(id []byte, status guard.Status, msg string) []byte {
	data, _ := json.Marshal(map[string]string{
		"server": g.o.Server, "status": status.String(),
		"review": g.hint("diff"), "approve": g.hint("approve"),
	})
	b, err := jsonrpc.NewErrorResponse(json.RawMessage(id), &jsonrpc.Error{Code: CodeGuardWithheld, Message: msg, Data: data})
	if err != nil {
		b, _ = jsonrpc.NewErrorResponse(nil, &jsonrpc.Error{Code: CodeGuardWithheld, Message: msg})
	}
	return b
}

func (g *Guard) fromServer(f *faults.Frame) ([]byte, faults.Action, bool) {
	switch f.Kind {
	case faults.KindResponse, faults.KindError:
		if g.takeWaiter(jsonrpc.IDKey(f.ID), bytes.Clone(f.Raw)) {
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
	if why := listAmbiguity(f.Raw); why != "" {
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
func (g *Guard) page(raw []byte, tools []drift.Tool) []byte {
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

// list fetches the whole tool list with the guard's own requests.
func (g *Guard) list(ctx context.Context) (guard.ToolSet, error) {
	var tools []drift.Tool
	seen := map[string]bool{}
	cursors := map[string]bool{}
	cursor := ""
	for page := 0; ; page++ {
		if page == maxGuardPages {
			return guard.ToolSet{}, fmt.Errorf("tools/list did not end within %d pages", maxGuardPages)
		}
		g.mu.Lock()
		g.seq++
		id := fmt.Sprintf("%s%d", guardIDPrefix, g.seq)
		params := map[string]any{}
		if g.meta != nil {
			params["_meta"] = g.meta
		}
		g.mu.Unlock()
		if cursor != "" {
			params["cursor"] = cursor
		}
		var p any
		if len(params) > 0 {
			p = params
		}
		req, err := jsonrpc.NewRequest(id, "tools/list", p)
		if err != nil {
			return guard.ToolSet{}, err
		}
		reply, err := g.roundTrip(ctx, id, req)
		if err != nil {
			return guard.ToolSet{}, fmt.Errorf("tools/list: %w", err)
		}
		m, err := drift.ParseManifest(reply)
		if err != nil {
			return guard.ToolSet{}, fmt.Errorf("tools/list answer: %w", err)
		}
		if why := listAmbiguity(reply); why != "" {
			return guard.ToolSet{}, fmt.Errorf("tools/list answer is ambiguous: %s", why)
		}
		if m.NextCursor != "" && (cursors[m.NextCursor] || m.NextCursor == cursor) {
			return guard.ToolSet{}, fmt.Errorf("tools/list pagination loops: page %d hands back a cursor already followed", page+1)
		}
		cursors[cursor] = true
		for _, t := range m.Tools {
			if seen[t.Name] {
				return guard.ToolSet{}, fmt.Errorf("tools/list answer: tool %q is listed twice", t.Name)
			}
			seen[t.Name] = true
		}
		tools = append(tools, m.Tools...)
		if m.NextCursor == "" {
			return guard.NewToolSet(tools), nil
		}
		cursor = m.NextCursor
	}
}

// roundTrip sends one of the guard's requests and returns its reply.
func (g *Guard) roundTrip(ctx context.Context, id string, req []byte) ([]byte, error) {
	g.mu.Lock()
	send, h := g.toServer, g.httpH
	hdr, target := g.httpHdr, g.httpURL
	g.mu.Unlock()
	switch {
	case send != nil:
		key := jsonrpc.IDKey(json.RawMessage(fmt.Sprintf("%q", id)))
		ch := make(chan []byte, 1)
		g.mu.Lock()
		g.waiters[key] = ch
		g.mu.Unlock()
		defer func() {
			g.mu.Lock()
			delete(g.waiters, key)
			g.mu.Unlock()
		}()
		send(req)
		select {
		case b := <-ch:
			return b, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-g.closed:
			return nil, errors.New("guard closed")
		}
	case h != nil:
		if hdr == nil {
			return nil, errors.New("no client request seen yet to join its session")
		}
		return h.guardPost(ctx, target, hdr, id, req)
	}
	return nil, errors.New("guard is not attached to a relay")
}

// guardPost sends the guard's request upstream with the client's session
// headers and reads its reply from a JSON or an SSE body.
func (h *HTTP) guardPost(ctx context.Context, target string, hdr http.Header, id string, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header = hdr.Clone()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if req.Header.Get("Mcp-Method") != "" {
		req.Header.Set("Mcp-Method", "tools/list")
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	want := jsonrpc.IDKey(json.RawMessage(fmt.Sprintf("%q", id)))
	ct := resp.Header.Get("Content-Type")
	max := h.maxFrame()
	switch {
	case strings.HasPrefix(ct, "text/event-stream"):
		br := bufio.NewReaderSize(resp.Body, 64<<10)
		for {
			ev, err := jsonrpc.ReadEvent(br, max+jsonrpc.EventSlack, func([]byte) {})
			if ev.HasData && len(ev.Data) <= max {
				if b := replyTo(ev.Data, want); b != nil {
					return b, nil
				}
			}
			if err != nil {
				return nil, fmt.Errorf("HTTP %d: the event stream ended without the reply", resp.StatusCode)
			}
		}
	case strings.HasPrefix(ct, "application/json"):
		b, err := io.ReadAll(io.LimitReader(resp.Body, int64(max)+1))
		if err != nil {
			return nil, err
		}
		if len(b) > max {
			return nil, errors.New("reply over the frame cap")
		}
		if r := replyTo(bytes.TrimSpace(b), want); r != nil {
			return r, nil
		}
		return nil, fmt.Errorf("HTTP %d: the reply is not the answer to the guard's request", resp.StatusCode)
	}
	return nil, fmt.Errorf("HTTP %d (%s)", resp.StatusCode, ct)
}

// replyTo returns the answer with id key want in frame, a message or a
// batch (nil: none).
func replyTo(frame []byte, want string) []byte {
	pk, err := jsonrpc.PeekFrameStrict(frame)
	switch {
	case err != nil || pk.Ambiguous:
		return nil
	case pk.Kind == jsonrpc.KindBatch:
		elems, err := jsonrpc.SplitArray(frame)
		if err != nil {
			return nil
		}
		for _, e := range elems {
			if pk, err := jsonrpc.PeekFrameStrict(e); err == nil && !pk.Ambiguous && pk.Kind != jsonrpc.KindBatch && jsonrpc.IDKey(pk.ID) == want {
				return bytes.Clone(e)
			}
		}
		return nil
	case jsonrpc.IDKey(pk.ID) == want:
		return bytes.Clone(frame)
	}
	return nil
}
