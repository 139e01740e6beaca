package clientdrill

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpdrill/mcpdrill/faults"
	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
	"github.com/mcpdrill/mcpdrill/internal/splitmix"
)

// Revisions the scenario server negotiates, newest first: the initialize
// era, where every client library of the study lives.
var Revisions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// PreferredRevision is the revision offered to a client that asks for one
// the server does not know, and MCP_CONFORMANCE_PROTOCOL_VERSION.
const PreferredRevision = "2025-11-25"

// Limits of the scenario server.
const (
	maxFrame  = 16 << 20 // one incoming line or body
	maxConns  = 16       // stdio connections or HTTP sessions per scenario
	maxEvents = 4096     // wire events kept per scenario
	lateExtra = 1500 * time.Millisecond
	askWait   = 2 * time.Second
	largeSize = 10 << 20
	askID     = "mcpdrill-ask-1"
	// relistWait holds the call after list_changed.
	relistWait = time.Second
)

// markers are the seeded strings a scenario plants in what it serves, so
// that the application's report can be matched without quoting it.
type markers struct {
	truth, lie, alt, decoy, errText, tail string
}

func newMarkers(seed uint64, id string) markers {
	h := seed
	for _, b := range []byte(id) {
		h = splitmix.Mix(h ^ uint64(b))
	}
	mk := func(kind string) string {
		h = splitmix.Mix(h + splitmix.Gamma)
		return fmt.Sprintf("mcpdrill-%s-%08x", kind, uint32(h))
	}
	return markers{truth: mk("truth"), lie: mk("lie"), alt: mk("alt"), decoy: mk("decoy"), errText: mk("error"), tail: mk("tail")}
}

// wireEvent is one thing the client did on the wire.
type wireEvent struct {
	seq  int
	at   time.Duration
	conn int
	// kind: request, notification, response, open, close.
	kind   string
	method string
	tool   string
	args   string // canonical arguments of a tools/call
	id     string // id key of a request or response
	// cancels is the request id key a notifications/cancelled names.
	cancels string
	isError bool // a response that is an error
	faulted bool // the faulted call itself
}

// plan is the server's answer to one incoming message.
type plan struct {
	frames [][]byte
	// sse asks HTTP for an event stream even for one frame.
	sse bool
	// raw is written instead of frames: a malformed or cut reply.
	raw []byte
	// cut: after raw, stdio ends the line, HTTP aborts the connection.
	cut bool
	// hold: the answer waits for release (nil: forever, until the
	// scenario ends); written is closed once it was written or given up.
	hold    bool
	release <-chan struct{}
	written chan struct{}
	// waitLate is closed once a held late reply has gone out; the answer
	// waits for it so that the late reply comes first.
	waitLate <-chan struct{}
	// exit: the server dies instead of answering.
	exit bool
	// ask is a server request sent before frames; the answer waits for the
	// client's response up to askWait (answered is closed on it).
	ask      []byte
	answered <-chan struct{}
	// accepted: an HTTP POST of notifications or responses only (202).
	accepted bool
	// delay holds the answer this long (read on, meanwhile).
	delay time.Duration
}

// world is one scenario run: what the server serves, shared by every
// connection the client opens, and what it saw.
type world struct {
	sc      Scenario
	m       markers
	timeout time.Duration
	start   time.Time

	mu        sync.Mutex
	events    []wireEvent
	conns     int
	rev       string
	caps      map[string]json.RawMessage
	faultConn int
	faultID   string
	faultArgs string
	changed   bool
	notified  int // seq of the list_changed notification (0: none)
	asked     string
	answer    string // "error", "result" or "" (none)
	answered  chan struct{}
	late      chan struct{}
	lateOnce  sync.Once
	lateDone  chan struct{}
	lateTimer *time.Timer
	na        bool // the scenario does not apply to this client
	exited    int  // how many times the server died on purpose
}

func newWorld(sc Scenario, seed uint64, timeout time.Duration) *world {
	return &world{sc: sc, m: newMarkers(seed, sc.ID), timeout: timeout, start: time.Now(),
		answered: make(chan struct{}), late: make(chan struct{}), lateDone: make(chan struct{})}
}

func (w *world) since() time.Duration { return time.Since(w.start) }

// openConn registers a new connection (a stdio server process, an HTTP
// session); it returns 0 when the scenario's cap is reached.
func (w *world) openConn() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.conns >= maxConns {
		return 0
	}
	w.conns++
	w.addLocked(wireEvent{conn: w.conns, kind: "open"})
	return w.conns
}

func (w *world) closeConn(conn int) {
	w.mu.Lock()
	w.addLocked(wireEvent{conn: conn, kind: "close"})
	w.mu.Unlock()
}

func (w *world) addLocked(e wireEvent) int {
	if len(w.events) >= maxEvents {
		return 0
	}
	e.seq = len(w.events) + 1
	e.at = w.since()
	w.events = append(w.events, e)
	return e.seq
}

// snapshot returns a copy of the wire state for grading.
func (w *world) snapshot() wireLog {
	w.mu.Lock()
	defer w.mu.Unlock()
	return wireLog{events: slices.Clone(w.events), rev: w.rev, faultConn: w.faultConn, faultID: w.faultID,
		faultArgs: w.faultArgs, notified: w.notified, asked: w.asked, answer: w.answer, na: w.na}
}

// faultedAt returns when the faulted call arrived, and whether it did.
func (w *world) faultedAt() (time.Duration, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, e := range w.events {
		if e.faulted {
			return e.at, true
		}
	}
	return 0, false
}

func (w *world) notifiedLocked() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.notified > 0
}

// waitLate holds an answer until a held late reply has gone out (bounded),
// so that the late reply comes first.
func (w *world) waitLate(ctx context.Context, p *plan) {
	if p.waitLate == nil {
		return
	}
	t := time.NewTimer(w.timeout + lateExtra + time.Second)
	defer t.Stop()
	select {
	case <-p.waitLate:
	case <-t.C:
	case <-ctx.Done():
	}
}

// releaseLate lets a held late reply go (once).
func (w *world) releaseLate() { w.lateOnce.Do(func() { close(w.late) }) }

// stop ends the scenario's timers.
func (w *world) stop() {
	w.mu.Lock()
	if w.lateTimer != nil {
		w.lateTimer.Stop()
	}
	w.mu.Unlock()
}

// handle answers one message from connection conn; nil means no answer.
func (w *world) handle(conn int, raw []byte) *plan {
	msg, err := jsonrpc.Decode(raw)
	if err != nil {
		f, _ := jsonrpc.NewErrorResponse(nil, &jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: "parse error"})
		return &plan{frames: [][]byte{f}}
	}
	switch msg.Kind() {
	case jsonrpc.KindResponse, jsonrpc.KindError:
		w.response(conn, msg)
		return &plan{accepted: true}
	case jsonrpc.KindNotification:
		w.notification(conn, msg)
		return &plan{accepted: true}
	case jsonrpc.KindRequest:
		return w.request(conn, msg)
	}
	f, _ := jsonrpc.NewErrorResponse(nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request"})
	return &plan{frames: [][]byte{f}}
}

func (w *world) response(conn int, msg *jsonrpc.Message) {
	key := jsonrpc.IDKey(msg.ID)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.addLocked(wireEvent{conn: conn, kind: "response", id: key, isError: msg.Error != nil})
	if w.asked != "" && key == w.asked && w.answer == "" {
		w.answer = "result"
		if msg.Error != nil {
			w.answer = "error"
		}
		close(w.answered)
	}
}

func (w *world) notification(conn int, msg *jsonrpc.Message) {
	e := wireEvent{conn: conn, kind: "notification", method: msg.Method}
	if msg.Method == "notifications/cancelled" {
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		_ = json.Unmarshal(msg.Params, &p)
		e.cancels = jsonrpc.IDKey(p.RequestID)
	}
	w.mu.Lock()
	w.addLocked(e)
	w.mu.Unlock()
}

func (w *world) request(conn int, msg *jsonrpc.Message) *plan {
	e := wireEvent{conn: conn, kind: "request", method: msg.Method, id: jsonrpc.IDKey(msg.ID)}
	var call struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if msg.Method == "tools/call" {
		_ = json.Unmarshal(msg.Params, &call)
		e.tool, e.args = call.Name, canonicalArgs(call.Arguments)
	}
	w.mu.Lock()
	faulted := msg.Method == "tools/call" && call.Name == w.sc.Tool && w.faultID == ""
	if faulted {
		e.faulted = true
		w.faultConn, w.faultID, w.faultArgs = conn, e.id, e.args
	}
	w.addLocked(e)
	w.mu.Unlock()

	switch msg.Method {
	case "initialize":
		return w.initialize(msg)
	case "ping":
		return w.reply(msg.ID, map[string]any{})
	case "tools/list":
		return w.reply(msg.ID, map[string]any{"tools": w.tools()})
	case "tools/call":
		if faulted || (w.sc.fault == faultLarge && call.Name == ToolReadLog) {
			// Size is a property of the tool, not a passing fault: every
			// read_log of large-result is large.
			return w.fault(msg.ID, call.Name)
		}
		p := w.reply(msg.ID, w.result(call.Name, call.Arguments))
		if w.sc.fault == faultListChanged && w.notifiedLocked() {
			// A client that re-lists on its own, asynchronously, gets the
			// time to do it before its next call returns.
			p.delay = min(relistWait, w.timeout/2) // well within the client's timeout
		}
		if w.sc.fault == faultLate {
			// The late reply goes before any later call's answer.
			w.releaseLate()
			p.waitLate = w.lateDone
		}
		return p
	}
	f, _ := jsonrpc.NewErrorResponse(msg.ID, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: " + msg.Method})
	return &plan{frames: [][]byte{f}}
}

func canonicalArgs(raw json.RawMessage) string {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil || v == nil {
		return "{}"
	}
	b, _ := json.Marshal(v) // maps encode with sorted keys
	return string(b)
}

func (w *world) reply(id json.RawMessage, result any) *plan {
	f, err := jsonrpc.NewResult(id, result)
	if err != nil {
		f, _ = jsonrpc.NewErrorResponse(id, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "cannot encode the result"})
	}
	return &plan{frames: [][]byte{f}}
}

func (w *world) initialize(msg *jsonrpc.Message) *plan {
	var p struct {
		ProtocolVersion string                     `json:"protocolVersion"`
		Capabilities    map[string]json.RawMessage `json:"capabilities"`
	}
	_ = json.Unmarshal(msg.Params, &p)
	rev := PreferredRevision
	if slices.Contains(Revisions, p.ProtocolVersion) {
		rev = p.ProtocolVersion
	}
	w.mu.Lock()
	if w.rev == "" {
		w.rev = rev
	}
	if w.caps == nil {
		w.caps = p.Capabilities
		if w.caps == nil {
			w.caps = map[string]json.RawMessage{}
		}
	}
	w.mu.Unlock()
	return w.reply(msg.ID, map[string]any{
		"protocolVersion": rev,
		"capabilities":    map[string]any{"tools": map[string]any{"listChanged": true}},
		"serverInfo":      map[string]any{"name": "mcpdrill-client-drill", "version": "1"},
		"instructions":    "mcpdrill client drill, scenario " + w.sc.ID,
	})
}

// tools is the tool list: lookup (read-only, outputSchema), record
// (destructive) and read_log (read-only text); lookup changes in
// list-changed once the fault fired.
func (w *world) tools() []any {
	w.mu.Lock()
	changed := w.changed
	w.mu.Unlock()
	lookupIn := map[string]any{"type": "object", "properties": map[string]any{"query": map[string]any{"type": "string"}}, "required": []any{"query"}}
	desc := "Look up a term; returns the answer and how many sources agree."
	if changed {
		lookupIn = map[string]any{"type": "object", "properties": map[string]any{
			"query": map[string]any{"type": "string"}, "scope": map[string]any{"type": "string"}}, "required": []any{"query", "scope"}}
		desc = "Look up a term within a scope (changed definition " + w.m.alt + ")."
	}
	return []any{
		map[string]any{"name": ToolLookup, "description": desc, "inputSchema": lookupIn,
			"outputSchema": map[string]any{"type": "object", "properties": map[string]any{
				"answer": map[string]any{"type": "string"}, "count": map[string]any{"type": "integer"}},
				"required": []any{"answer", "count"}},
			"annotations": map[string]any{"readOnlyHint": true, "idempotentHint": true, "destructiveHint": false}},
		map[string]any{"name": ToolRecord, "description": "Append an entry to the ledger.",
			"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"entry": map[string]any{"type": "string"}}, "required": []any{"entry"}},
			"annotations": map[string]any{"readOnlyHint": false, "idempotentHint": false, "destructiveHint": true}},
		map[string]any{"name": ToolReadLog, "description": "Read the service log.",
			"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}},
			"annotations": map[string]any{"readOnlyHint": true, "idempotentHint": true, "destructiveHint": false}},
	}
}

// result is the honest result of a call.
func (w *world) result(name string, _ json.RawMessage) map[string]any {
	switch name {
	case ToolLookup:
		return lookupResult(w.m.truth, 3, true)
	case ToolRecord:
		return textResult("recorded " + w.m.truth)
	case ToolReadLog:
		return textResult("log " + w.m.truth)
	}
	return map[string]any{"content": []any{map[string]any{"type": "text", "text": "unknown tool " + name}}, "isError": true}
}

func textResult(s string) map[string]any {
	return map[string]any{"content": []any{map[string]any{"type": "text", "text": s}}}
}

func lookupResult(answer string, count any, structured bool) map[string]any {
	sc := map[string]any{"answer": answer, "count": count}
	b, _ := json.Marshal(sc)
	r := textResult(string(b))
	if structured {
		r["structuredContent"] = sc
	}
	return r
}

// fault is the answer to the faulted call.
func (w *world) fault(id json.RawMessage, name string) *plan {
	honest := w.reply(id, w.result(name, nil))
	f := honest.frames[0]
	w.mu.Lock()
	old := w.rev != "" && w.rev < "2025-06-18"
	w.mu.Unlock()
	if w.sc.schema && old {
		w.mu.Lock()
		w.na = true
		w.mu.Unlock()
		return honest
	}
	switch w.sc.fault {
	case faultDrop:
		return &plan{hold: true, written: make(chan struct{})}
	case faultLate:
		w.mu.Lock()
		w.lateTimer = time.AfterFunc(w.timeout+lateExtra, w.releaseLate)
		w.mu.Unlock()
		return &plan{hold: true, release: w.late, written: w.lateDone, frames: [][]byte{f}}
	case faultSchemaLie:
		return w.reply(id, lookupResult(w.m.lie, "three", true))
	case faultNoStructured:
		return w.reply(id, lookupResult(w.m.lie, 3, false))
	case faultDisagree:
		r := lookupResult(w.m.truth, 3, true)
		b, _ := json.Marshal(map[string]any{"answer": w.m.alt, "count": 3})
		r["content"] = []any{map[string]any{"type": "text", "text": string(b)}}
		return w.reply(id, r)
	case faultTruncate:
		a := faults.Apply(&faults.Frame{Dir: faults.ToClient, Kind: faults.KindResponse, Raw: f},
			faults.Decision{Fire: true, Fault: faults.FaultTruncate, Params: faults.Params{"keep": 0.5}})
		return &plan{raw: a.Out(f), cut: true}
	case faultMalformed:
		a := faults.Apply(&faults.Frame{Dir: faults.ToClient, Kind: faults.KindResponse, Raw: f},
			faults.Decision{Fire: true, Fault: faults.FaultMalformed, Params: faults.Params{"variant": "invalid-json"}})
		return &plan{raw: a.Out(f)}
	case faultExit:
		w.mu.Lock()
		w.exited++
		w.mu.Unlock()
		return &plan{exit: true}
	case faultLarge:
		pad := largeSize - len(w.m.truth) - len(w.m.tail) - 2
		return w.reply(id, textResult(w.m.truth+" "+strings.Repeat("x", max(pad, 0))+" "+w.m.tail))
	case faultRPCError:
		e, _ := jsonrpc.NewErrorResponse(id, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "lookup failed: " + w.m.errText})
		return &plan{frames: [][]byte{e}}
	case faultIsError:
		r := textResult("lookup failed: " + w.m.errText)
		r["isError"] = true
		return w.reply(id, r)
	case faultListChanged:
		w.mu.Lock()
		w.changed = true
		n, _ := jsonrpc.NewNotification("notifications/tools/list_changed", nil)
		w.notified = len(w.events) // the faulted call: what follows it comes after the notification
		w.mu.Unlock()
		return &plan{frames: [][]byte{n, f}, sse: true}
	case faultUnsolicited:
		method, params := w.undeclared()
		if method == "" {
			w.mu.Lock()
			w.na = true
			w.mu.Unlock()
			return honest
		}
		req, _ := jsonrpc.NewRequest(askID, method, params)
		w.mu.Lock()
		w.asked = jsonrpc.IDKey(json.RawMessage(`"` + askID + `"`))
		w.mu.Unlock()
		return &plan{ask: req, answered: w.answered, frames: [][]byte{f}, sse: true}
	case faultDuplicate:
		return &plan{frames: [][]byte{f, f}, sse: true}
	case faultUnknownID:
		decoy := w.reply(id, lookupResult(w.m.decoy, 3, true)).frames[0]
		a := faults.Apply(&faults.Frame{Dir: faults.ToClient, Kind: faults.KindResponse, Raw: decoy},
			faults.Decision{Fire: true, Fault: faults.FaultMalformed, Params: faults.Params{"variant": "unknown-id"}, Roll: uint64(len(w.m.decoy))})
		return &plan{frames: [][]byte{a.Out(decoy), f}, sse: true}
	}
	return honest
}

// undeclared picks a server request for a capability the client did not
// declare in initialize: sampling, else elicitation, else roots.
func (w *world) undeclared() (string, any) {
	w.mu.Lock()
	caps := w.caps
	w.mu.Unlock()
	if _, ok := caps["sampling"]; !ok {
		return "sampling/createMessage", map[string]any{"maxTokens": 16,
			"messages": []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "Say yes."}}}}
	}
	if _, ok := caps["elicitation"]; !ok {
		return "elicitation/create", map[string]any{"message": "Confirm?", "requestedSchema": map[string]any{"type": "object", "properties": map[string]any{}}}
	}
	if _, ok := caps["roots"]; !ok {
		return "roots/list", map[string]any{}
	}
	return "", nil
}
