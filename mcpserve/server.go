package mcpserve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
	"github.com/mcpdrill/mcpdrill/report"
)

// Protocol revisions served: the modern stateless one, and the legacy
// (initialize) ones, newest first. outputSchema and structuredContent
// exist from 2025-06-18 on: older sessions get text content only.
const (
	revModern    = "2026-07-28"
	rev20251125  = "2025-11-25"
	rev20250618  = "2025-06-18"
	rev20250326  = "2025-03-26"
	rev20241105  = "2024-11-05"
	serverName   = "mcpdrill"
	serverTitle  = "mcpdrill"
	maxLineBytes = 8 << 20
)

var (
	legacyRevisions = []string{rev20251125, rev20250618, rev20250326, rev20241105}
	allRevisions    = append([]string{revModern}, legacyRevisions...)
)

// _meta keys of 2026-07-28 requests and results.
const (
	metaVersion      = "io.modelcontextprotocol/protocolVersion"
	metaCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaServerInfo   = "io.modelcontextprotocol/serverInfo"
)

// Options configure the server.
type Options struct {
	// Version is serverInfo.version and the tool version scans record.
	Version string
	// Rules is the catalogue the rules tool explains.
	Rules report.Catalogue
	// Targets says which servers and URLs the tools may reach.
	Targets *Targets
	// Timeout bounds each request to a scanned server (default 10 s).
	Timeout time.Duration
	// Deadline bounds one tool call (default 2 min).
	Deadline time.Duration
	// MaxConcurrent is how many tool calls run at once (default 2); later
	// calls wait for a slot, within their own deadline.
	MaxConcurrent int
	// Log receives one line per problem the server meets (nil: none). It
	// never receives a tool result.
	Log io.Writer
}

func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.Deadline <= 0 {
		o.Deadline = 2 * time.Minute
	}
	if o.MaxConcurrent <= 0 {
		o.MaxConcurrent = 2
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Targets == nil {
		o.Targets = &Targets{}
	}
	return o
}

// server is one stdio session.
type server struct {
	o     Options
	tools []*tool
	slots chan struct{}

	wmu sync.Mutex
	out io.Writer

	mu        sync.Mutex
	version   string                        // negotiated legacy revision ("" before initialize)
	running   map[string]context.CancelFunc // tool calls by request id
	cancelled map[string]bool
	wg        sync.WaitGroup
}

// Serve answers MCP requests read from in, one JSON-RPC message per line,
// writing one per line to out, until in ends (nil) or ctx does (its
// error). Tool calls run concurrently, at most Options.MaxConcurrent at
// once; when in ends, running calls are cancelled and waited for.
func Serve(ctx context.Context, o Options, in io.Reader, out io.Writer) error {
	o = o.withDefaults()
	tools, err := catalogue()
	if err != nil {
		return err
	}
	s := &server{o: o, tools: tools, slots: make(chan struct{}, o.MaxConcurrent), out: out,
		running: map[string]context.CancelFunc{}, cancelled: map[string]bool{}}
	ctx, cancel := context.WithCancel(ctx)
	defer func() {
		cancel()
		s.wg.Wait()
	}()
	type line struct {
		b      []byte
		tooBig bool
		err    error
	}
	lines := make(chan line)
	done := make(chan struct{})
	defer close(done)
	go func() {
		lr := jsonrpc.NewLineReader(in, maxLineBytes)
		for {
			b, err := lr.ReadLine()
			l := line{b: bytes.Clone(b), err: err}
			if errors.Is(err, jsonrpc.ErrFrameTooLarge) {
				l = line{tooBig: true}
			}
			select {
			case lines <- l:
			case <-done:
				return
			}
			if l.err != nil {
				return
			}
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case l := <-lines:
			switch {
			case l.tooBig:
				fmt.Fprintf(o.Log, "mcpdrill mcp: a message over %d bytes was refused\n", maxLineBytes)
				s.fail(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("message over %d bytes", maxLineBytes), nil)
			case errors.Is(l.err, io.EOF):
				return nil
			case l.err != nil:
				return fmt.Errorf("mcp: read: %w", l.err)
			default:
				s.handle(ctx, l.b)
			}
		}
	}
}

// request is one decoded request or notification.
type request struct {
	id     json.RawMessage // nil for a notification
	method string
	params map[string]json.RawMessage
	meta   map[string]json.RawMessage
	modern bool
	rev    string
}

// handle answers one line.
func (s *server) handle(ctx context.Context, line []byte) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return
	}
	var env map[string]json.RawMessage
	if err := json.Unmarshal(line, &env); err != nil {
		if json.Valid(line) {
			s.fail(nil, jsonrpc.CodeInvalidRequest, "the message is not a JSON-RPC object", nil)
		} else {
			s.fail(nil, jsonrpc.CodeParseError, "the message is not valid JSON", nil)
		}
		return
	}
	r := &request{}
	if raw, ok := env["id"]; ok {
		if !jsonrpc.ValidID(raw) {
			s.fail(nil, jsonrpc.CodeInvalidRequest, "id must be a string or a number", nil)
			return
		}
		r.id = raw
	}
	rawMethod, hasMethod := env["method"]
	if !hasMethod {
		_, isResult := env["result"]
		_, isError := env["error"]
		if (isResult || isError) && r.id != nil {
			return // a response: this server sends no requests
		}
		s.fail(r, jsonrpc.CodeInvalidRequest, "a request needs a method", nil)
		return
	}
	if json.Unmarshal(rawMethod, &r.method) != nil || r.method == "" {
		s.fail(r, jsonrpc.CodeInvalidRequest, "method must be a non-empty string", nil)
		return
	}
	if v := env["jsonrpc"]; string(v) != `"2.0"` {
		s.fail(r, jsonrpc.CodeInvalidRequest, `jsonrpc must be "2.0"`, nil)
		return
	}
	if p, ok := env["params"]; ok && string(p) != "null" {
		if json.Unmarshal(p, &r.params) != nil || r.params == nil {
			s.fail(r, jsonrpc.CodeInvalidParams, "params must be an object", nil)
			return
		}
	}
	if m, ok := r.params["_meta"]; ok {
		_ = json.Unmarshal(m, &r.meta)
	}
	if r.id == nil {
		s.notification(r)
		return
	}
	s.request(ctx, r)
}

func (s *server) notification(r *request) {
	if r.method != "notifications/cancelled" {
		return // notifications/initialized and the rest need nothing
	}
	key := jsonrpc.IDKey(r.params["requestId"])
	s.mu.Lock()
	if cancel, ok := s.running[key]; ok && key != "" {
		s.cancelled[key] = true
		cancel()
	}
	s.mu.Unlock()
}

// methods served, by era.
var methods = map[string]struct{ legacy, modern bool }{
	"initialize":      {legacy: true},
	"ping":            {legacy: true},
	"server/discover": {modern: true},
	"tools/list":      {legacy: true, modern: true},
	"tools/call":      {legacy: true, modern: true},
}

// request decides r's era (a dual-era server picks it per request, as
// 2026-07-28 allows: a request whose _meta names a revision is modern; one
// on a session that sent initialize, or initialize itself, is legacy) and
// answers it.
func (s *server) request(ctx context.Context, r *request) {
	s.mu.Lock()
	negotiated := s.version
	s.mu.Unlock()
	_, hasVersion := r.meta[metaVersion]
	switch {
	case hasVersion:
		r.modern = true
	case r.method == "initialize", r.method == "ping", negotiated != "":
	default:
		r.modern = true
	}
	m, known := methods[r.method]
	if !r.modern {
		r.rev = negotiated
		if r.rev == "" {
			r.rev = legacyRevisions[0]
		}
		if !known || !m.legacy {
			s.fail(r, jsonrpc.CodeMethodNotFound, "method not found: "+r.method, nil)
			return
		}
	} else {
		if !known || !m.modern {
			s.fail(r, jsonrpc.CodeMethodNotFound, "method not found: "+r.method, nil)
			return
		}
		var rev string
		if raw, ok := r.meta[metaVersion]; !ok || json.Unmarshal(raw, &rev) != nil || rev == "" {
			s.fail(r, jsonrpc.CodeInvalidParams, "params._meta must carry "+metaVersion, nil)
			return
		}
		if raw, ok := r.meta[metaCapabilities]; !ok || !isObject(raw) {
			s.fail(r, jsonrpc.CodeInvalidParams, "params._meta must carry "+metaCapabilities, nil)
			return
		}
		if rev != revModern {
			s.fail(r, jsonrpc.CodeUnsupportedProtocolVersion, "unsupported protocol version "+rev,
				map[string]any{"supported": allRevisions, "requested": rev})
			return
		}
		r.rev = rev
	}
	switch r.method {
	case "initialize":
		s.initialize(r)
	case "ping":
		s.result(r, map[string]any{})
	case "server/discover":
		s.result(r, map[string]any{
			"supportedVersions": allRevisions,
			"capabilities":      capabilities(),
			"instructions":      instructions,
			"ttlMs":             listTTL,
			"cacheScope":        "public",
		})
	case "tools/list":
		s.listTools(r)
	case "tools/call":
		s.callTool(ctx, r)
	}
}

// listTTL is how long, in ms, a modern client may keep the tool list and
// the discover result: they change only with mcpdrill's version.
const listTTL = 3600000

func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{' && json.Valid(raw)
}

func capabilities() map[string]any {
	return map[string]any{"tools": map[string]any{"listChanged": false}}
}

func serverInfo(rev string) map[string]any {
	m := map[string]any{"name": serverName, "version": "dev"}
	if rev >= rev20250618 {
		m["title"] = serverTitle
	}
	return m
}

func (s *server) info(rev string) map[string]any {
	m := serverInfo(rev)
	if s.o.Version != "" {
		m["version"] = s.o.Version
	}
	return m
}

func (s *server) initialize(r *request) {
	var requested string
	if raw, ok := r.params["protocolVersion"]; !ok || json.Unmarshal(raw, &requested) != nil || requested == "" {
		s.fail(r, jsonrpc.CodeInvalidParams, "params.protocolVersion must be a string", nil)
		return
	}
	rev := legacyRevisions[0]
	if slices.Contains(legacyRevisions, requested) {
		rev = requested
	}
	s.mu.Lock()
	s.version = rev
	s.mu.Unlock()
	r.rev = rev
	res := map[string]any{"protocolVersion": rev, "capabilities": capabilities(), "serverInfo": s.info(rev)}
	if rev >= rev20250326 {
		res["instructions"] = instructions
	}
	s.result(r, res)
}

func (s *server) listTools(r *request) {
	if raw, ok := r.params["cursor"]; ok {
		var cursor string
		if json.Unmarshal(raw, &cursor) != nil || cursor != "" {
			// One page: no cursor was ever handed out.
			s.fail(r, jsonrpc.CodeInvalidParams, "invalid cursor", nil)
			return
		}
	}
	list := make([]any, len(s.tools))
	for i, t := range s.tools {
		list[i] = t.listing(r.rev)
	}
	res := map[string]any{"tools": list}
	if r.modern {
		res["ttlMs"], res["cacheScope"] = listTTL, "public"
	}
	s.result(r, res)
}

// callTool runs a tool call on its own goroutine, once a slot is free.
func (s *server) callTool(ctx context.Context, r *request) {
	var name string
	if raw, ok := r.params["name"]; !ok || json.Unmarshal(raw, &name) != nil {
		s.fail(r, jsonrpc.CodeInvalidParams, "params.name must be a string", nil)
		return
	}
	i := slices.IndexFunc(s.tools, func(t *tool) bool { return t.name == name })
	if i < 0 {
		s.fail(r, jsonrpc.CodeInvalidParams, "unknown tool "+quote(name), nil)
		return
	}
	t := s.tools[i]
	args := json.RawMessage(`{}`)
	if raw, ok := r.params["arguments"]; ok && string(raw) != "null" {
		if !isObject(raw) {
			s.result(r, toolError("arguments must be an object"))
			return
		}
		args = raw
	}
	key := jsonrpc.IDKey(r.id)
	ctx, cancel := context.WithTimeout(ctx, s.o.Deadline)
	s.mu.Lock()
	if _, busy := s.running[key]; busy {
		s.mu.Unlock()
		cancel()
		s.fail(r, jsonrpc.CodeInvalidRequest, "a request with this id is still running", nil)
		return
	}
	s.running[key] = cancel
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer cancel()
		res := s.run(ctx, t, args, r.rev)
		s.mu.Lock()
		dropped := s.cancelled[key]
		delete(s.running, key)
		delete(s.cancelled, key)
		s.mu.Unlock()
		if !dropped { // a call the client cancelled gets no answer
			s.result(r, res)
		}
	}()
}

// run waits for a slot and runs the tool.
func (s *server) run(ctx context.Context, t *tool, args json.RawMessage, rev string) map[string]any {
	select {
	case s.slots <- struct{}{}:
		defer func() { <-s.slots }()
	case <-ctx.Done():
		return toolError("not run: " + doneReason(ctx))
	}
	return t.call(ctx, s, args, rev)
}

func doneReason(ctx context.Context) string {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return "the call's deadline passed"
	}
	return "the call was cancelled"
}

// result answers r with res, decorated as r's era asks.
func (s *server) result(r *request, res map[string]any) {
	if r.modern {
		res["resultType"] = "complete"
		meta, _ := res["_meta"].(map[string]any)
		if meta == nil {
			meta = map[string]any{}
		}
		meta[metaServerInfo] = s.info(r.rev)
		res["_meta"] = meta
	}
	f, err := jsonrpc.NewResult(r.id, res)
	if err != nil {
		fmt.Fprintf(s.o.Log, "mcpdrill mcp: cannot encode a result: %v\n", err)
		f, _ = jsonrpc.NewErrorResponse(r.id, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "cannot encode the result"})
	}
	s.write(f)
}

// fail answers r (nil: a message that could not be read) with an error.
func (s *server) fail(r *request, code int, msg string, data any) {
	id := json.RawMessage("null")
	if r != nil && r.id != nil {
		id = r.id
	}
	if r != nil && r.id == nil && r.method != "" {
		return // never answer a notification
	}
	e := &jsonrpc.Error{Code: code, Message: msg}
	if data != nil {
		e.Data, _ = json.Marshal(data)
	}
	f, err := jsonrpc.NewErrorResponse(id, e)
	if err != nil {
		return
	}
	s.write(f)
}

func (s *server) write(frame []byte) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if _, err := s.out.Write(append(frame, '\n')); err != nil {
		fmt.Fprintf(s.o.Log, "mcpdrill mcp: write: %v\n", err)
	}
}
