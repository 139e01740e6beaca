package testbed

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
)

// serverName is serverInfo.name.
const serverName = "mcpdrill-testbed"

// Per-request _meta keys of 2026-07-28.
const (
	metaVersion      = "io.modelcontextprotocol/protocolVersion"
	metaCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaServerInfo   = "io.modelcontextprotocol/serverInfo"
	metaSubscription = "io.modelcontextprotocol/subscriptionId"
)

// engine is one server process: the profile, the options and the state
// shared by every connection (the drift counter, the notification sinks).
type engine struct {
	p Profile
	o Options

	mu       sync.Mutex
	lists    int
	drifted  bool
	sinks    map[int]*sink
	nextSink int
}

// sink receives unsolicited notifications: a legacy connection, or a
// 2026-07-28 subscriptions/listen stream.
type sink struct {
	subID json.RawMessage // listen request id; nil for a legacy connection
	send  func([]byte)
}

func newEngine(o Options) (*engine, error) {
	p, o, err := o.resolve()
	if err != nil {
		return nil, err
	}
	return &engine{p: p, o: o, sinks: map[int]*sink{}}, nil
}

func (e *engine) legacyRevs() []string {
	return slices.DeleteFunc(slices.Clone(e.o.Revisions), isModern)
}

func (e *engine) modern() bool { return slices.ContainsFunc(e.o.Revisions, isModern) }
func (e *engine) legacy() bool { return slices.ContainsFunc(e.o.Revisions, isLegacy) }

// streamable reports whether the profile serves Streamable HTTP at /mcp.
func (e *engine) streamable() bool {
	return slices.ContainsFunc(e.o.Revisions, func(r string) bool { return r >= Rev20250326 })
}

// oldSSE reports whether the profile serves the 2024-11-05 HTTP+SSE transport.
func (e *engine) oldSSE() bool { return slices.Contains(e.o.Revisions, Rev20241105) }

func (e *engine) tools() []tool {
	e.mu.Lock()
	d := e.drifted
	e.mu.Unlock()
	return e.p.b.tools(e.o, d)
}

func (e *engine) addSink(s *sink) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.nextSink++
	e.sinks[e.nextSink] = s
	return e.nextSink
}

func (e *engine) removeSink(id int) {
	e.mu.Lock()
	delete(e.sinks, id)
	e.mu.Unlock()
}

// countList records one tools/list and, for a drifting profile, returns the
// function that performs the rug pull once the threshold is reached.
func (e *engine) countList() func() {
	if !e.p.b.drift {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.lists++
	if e.drifted || e.o.DriftAfter < 0 || e.lists < e.o.DriftAfter {
		return nil
	}
	e.drifted = true
	return func() { e.broadcast("notifications/tools/list_changed") }
}

func (e *engine) broadcast(method string) {
	e.mu.Lock()
	ids := make([]int, 0, len(e.sinks))
	for id := range e.sinks {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	targets := make([]*sink, 0, len(ids))
	for _, id := range ids {
		targets = append(targets, e.sinks[id])
	}
	e.mu.Unlock()
	for _, s := range targets {
		var params any
		if s.subID != nil {
			params = map[string]any{"_meta": map[string]any{metaSubscription: s.subID}}
		}
		f, err := jsonrpc.NewNotification(method, params)
		if err == nil {
			s.send(f)
		}
	}
}

func (e *engine) serverInfo(rev string) map[string]any {
	m := map[string]any{"name": serverName, "version": e.o.Version}
	if rev >= Rev20250618 {
		m["title"] = "mcpdrill testbed (" + e.p.Name + ")"
	}
	return m
}

func (e *engine) capabilities() map[string]any {
	return e.declaredContent(map[string]any{"tools": map[string]any{"listChanged": e.p.b.drift}})
}

func (e *engine) instructions() string {
	return "mcpdrill testbed, profile " + e.p.Name + ": " + e.p.Summary
}

// conn is one client connection: a stdio process, an HTTP session, or one
// stateless HTTP request.
type conn struct {
	e *engine

	mu      sync.Mutex
	version string          // negotiated legacy revision; "" before initialize
	notify  func([]byte)    // where legacy notifications go; nil drops them
	sinkID  int             // registered legacy sink
	listens map[string]int  // open stdio listens: id key → sink id
	listenF func(*sink) int // registers a listen sink (stdio)
}

func (e *engine) newConn(notify func([]byte)) *conn {
	return &conn{e: e, notify: notify, listens: map[string]int{}}
}

// close unregisters the connection's sinks.
func (c *conn) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sinkID != 0 {
		c.e.removeSink(c.sinkID)
		c.sinkID = 0
	}
	for k, id := range c.listens {
		c.e.removeSink(id)
		delete(c.listens, k)
	}
}

// out is the server's answer to one incoming frame.
type out struct {
	frames [][]byte // reply frames, response last
	status int      // HTTP status; 0 means 200
	modern bool     // the request was handled as 2026-07-28
	// stream writes one frame too large to hold in memory, instead of frames.
	stream  func(io.Writer) error
	crash   bool   // cut the last frame in half, then die
	onCrash func() // Options.OnCrash
	hang    bool   // never answer
	after   func() // runs once the reply has been written
	// listen is set when the request opened a subscriptions/listen stream
	// (HTTP); frames then holds the acknowledgement.
	listen *listenReq
}

type listenReq struct{ id json.RawMessage }

// headers are the HTTP request headers 2026-07-28 checks against the body.
type headers struct {
	version, method, name          string
	hasVersion, hasMethod, hasName bool
}

// request is a decoded JSON-RPC request.
type request struct {
	id     json.RawMessage
	method string
	params map[string]json.RawMessage
	meta   map[string]json.RawMessage
	modern bool
	rev    string
}

// handle answers one incoming frame. h is nil outside HTTP.
func (c *conn) handle(ctx context.Context, line []byte, h *headers) *out {
	b := &c.e.p.b
	if b.hang {
		return &out{hang: true}
	}
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	var env map[string]json.RawMessage
	if err := json.Unmarshal(line, &env); err != nil {
		if json.Valid(line) {
			return c.fail(nil, ekInvalidRequest, "the message is not a JSON-RPC object", nil)
		}
		return c.fail(nil, ekParse, "the message is not valid JSON", nil)
	}
	var id json.RawMessage
	if raw, ok := env["id"]; ok {
		if !jsonrpc.ValidID(raw) {
			return c.fail(nil, ekInvalidRequest, "id must be a string or a number", nil)
		}
		id = raw
	}
	rawMethod, hasMethod := env["method"]
	if !hasMethod {
		_, isResult := env["result"]
		_, isError := env["error"]
		if (isResult || isError) && id != nil {
			return nil // a response from the client; the testbed sends no requests
		}
		return c.fail(&request{id: id}, ekInvalidRequest, "a request needs a method", nil)
	}
	r := &request{id: id}
	if json.Unmarshal(rawMethod, &r.method) != nil || r.method == "" {
		return c.fail(r, ekInvalidRequest, "method must be a non-empty string", nil)
	}
	if v, ok := env["jsonrpc"]; !ok || string(v) != `"2.0"` {
		return c.fail(r, ekInvalidRequest, `jsonrpc must be "2.0"`, nil)
	}
	if p, ok := env["params"]; ok && string(p) != "null" {
		if json.Unmarshal(p, &r.params) != nil {
			if id == nil {
				return nil
			}
			return c.fail(r, ekInvalidParams, "params must be an object", nil)
		}
	}
	if m, ok := r.params["_meta"]; ok {
		_ = json.Unmarshal(m, &r.meta)
	}
	if id == nil {
		c.notification(r)
		return nil
	}
	if b.flood {
		t := time.NewTimer(c.e.o.Delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil
		}
	}
	return c.request(ctx, r, h)
}

func (c *conn) notification(r *request) {
	switch r.method {
	case "notifications/cancelled":
		var reqID json.RawMessage
		if raw, ok := r.params["requestId"]; ok {
			reqID = raw
		}
		key := jsonrpc.IDKey(reqID)
		c.mu.Lock()
		if sid, ok := c.listens[key]; ok && key != "" {
			c.e.removeSink(sid)
			delete(c.listens, key)
		}
		c.mu.Unlock()
	}
	// notifications/initialized and anything else need no action.
}

// method is one entry of the dispatch table.
type method struct {
	legacy, modern bool
	run            func(c *conn, ctx context.Context, r *request) *out
}

var methods map[string]method

func init() {
	methods = map[string]method{
		"initialize":           {legacy: true, run: (*conn).initialize},
		"ping":                 {legacy: true, run: (*conn).ping},
		"server/discover":      {modern: true, run: (*conn).discover},
		"tools/list":           {legacy: true, modern: true, run: (*conn).listTools},
		"tools/call":           {legacy: true, modern: true, run: (*conn).callTool},
		"subscriptions/listen": {modern: true, run: (*conn).listen},
	}
	maps.Copy(methods, contentMethods)
}

// request decides the era of r, checks what that era requires, and runs it.
func (c *conn) request(ctx context.Context, r *request, h *headers) *out {
	e := c.e
	c.mu.Lock()
	negotiated := c.version
	c.mu.Unlock()
	_, hasMetaVersion := r.meta[metaVersion]
	switch {
	case !e.modern():
	case hasMetaVersion:
		r.modern = true
	case r.method == "initialize", negotiated != "":
	case e.legacy() && r.method == "ping":
	default:
		r.modern = true
	}
	m, known := methods[r.method]
	if !r.modern {
		r.rev = negotiated
		if revs := e.legacyRevs(); r.rev == "" && len(revs) > 0 {
			r.rev = revs[0]
		}
		if !known || !m.legacy {
			return c.fail(r, ekMethodNotFound, "method not found: "+r.method, nil)
		}
		return m.run(c, ctx, r)
	}
	if !known || !m.modern {
		return c.fail(r, ekMethodNotFound, "method not found: "+r.method, nil)
	}
	var rev string
	if raw, ok := r.meta[metaVersion]; !ok || json.Unmarshal(raw, &rev) != nil || rev == "" {
		return c.fail(r, ekMissingMeta, "params._meta must carry "+metaVersion, nil)
	}
	if raw, ok := r.meta[metaCapabilities]; !ok || !isObject(raw) {
		return c.fail(r, ekMissingMeta, "params._meta must carry "+metaCapabilities, nil)
	}
	if !isModern(rev) || !slices.Contains(e.o.Revisions, rev) {
		return c.fail(r, ekUnsupportedVersion, "unsupported protocol version "+rev,
			map[string]any{"supported": e.o.Revisions, "requested": rev})
	}
	r.rev = rev
	if h != nil {
		if msg := checkHeaders(r, h); msg != "" {
			return c.fail(r, ekHeaderMismatch, msg, nil)
		}
	}
	return m.run(c, ctx, r)
}

func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{' && json.Valid(raw)
}

// checkHeaders applies the 2026-07-28 header rules; it returns the problem
// or "".
func checkHeaders(r *request, h *headers) string {
	if !h.hasVersion {
		return "missing MCP-Protocol-Version header"
	}
	if msg := headerValue("MCP-Protocol-Version", h.version, r.rev); msg != "" {
		return msg
	}
	if !h.hasMethod {
		return "missing Mcp-Method header"
	}
	if msg := headerValue("Mcp-Method", h.method, r.method); msg != "" {
		return msg
	}
	var key string
	switch r.method {
	case "tools/call", "prompts/get":
		key = "name"
	case "resources/read":
		key = "uri"
	default:
		return ""
	}
	var want string
	_ = json.Unmarshal(r.params[key], &want)
	if !h.hasName {
		return "missing Mcp-Name header"
	}
	return headerValue("Mcp-Name", h.name, want)
}

// headerValue decodes a header value (plain or =?base64?…?=) and compares it
// with the body's value.
func headerValue(name, v, want string) string {
	for i := 0; i < len(v); i++ {
		if ch := v[i]; (ch < 0x20 && ch != '\t') || ch > 0x7e {
			return name + " header has invalid characters"
		}
	}
	if strings.HasPrefix(v, "=?base64?") && strings.HasSuffix(v, "?=") && len(v) >= len("=?base64??=") {
		enc := v[len("=?base64?") : len(v)-2]
		dec, err := base64.StdEncoding.DecodeString(enc)
		if err != nil {
			dec, err = base64.RawStdEncoding.DecodeString(enc)
		}
		if err != nil {
			return name + " header has invalid base64"
		}
		v = string(dec)
	}
	if v != want {
		return name + " header does not match the body"
	}
	return ""
}

// result encodes a successful response, decorated as r's era asks.
func (c *conn) result(r *request, res map[string]any) *out {
	if r.modern {
		res["resultType"] = "complete"
		meta, _ := res["_meta"].(map[string]any)
		if meta == nil {
			meta = map[string]any{}
		}
		meta[metaServerInfo] = c.e.serverInfo(r.rev)
		res["_meta"] = meta
	}
	f, err := jsonrpc.NewResult(r.id, res)
	if err != nil {
		f, _ = jsonrpc.NewErrorResponse(r.id, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "cannot encode the result"})
	}
	return &out{frames: [][]byte{f}, modern: r.modern}
}

// fail answers an error situation, conformantly or in the profile's style.
// r may be nil when the request could not be read.
func (c *conn) fail(r *request, kind errKind, msg string, data any) *out {
	if r == nil {
		r = &request{}
	}
	code := conformantCodes[kind]
	status := 0
	if ans, ok := c.e.p.b.errs[kind]; ok {
		switch {
		case ans.drop:
			return nil
		case ans.result != nil:
			if r.id == nil {
				return nil
			}
			return c.result(r, clone(ans.result))
		}
		code, data = ans.code, nil
	} else {
		if r.modern {
			status = modernStatus[kind]
		}
		if code == jsonrpc.CodeUnsupportedProtocolVersion {
			status = 400
		}
	}
	if c.e.p.b.mcpErrors && kind != ekMethodNotFound {
		// The SDK answers an unknown method itself, without McpError.
		msg = fmt.Sprintf("MCP error %d: %s", code, msg)
	}
	e := &jsonrpc.Error{Code: code, Message: msg}
	if data != nil {
		e.Data, _ = json.Marshal(data)
	}
	var id json.RawMessage
	if r.id != nil {
		id = r.id
	} else {
		id = json.RawMessage("null")
	}
	f, _ := jsonrpc.NewErrorResponse(id, e)
	return &out{frames: [][]byte{f}, status: status, modern: r.modern}
}

func clone(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// ---- methods ----

func (c *conn) initialize(_ context.Context, r *request) *out {
	var requested string
	if raw, ok := r.params["protocolVersion"]; !ok || json.Unmarshal(raw, &requested) != nil || requested == "" {
		return c.fail(r, ekInvalidParams, "params.protocolVersion must be a string", nil)
	}
	legacy := c.e.legacyRevs()
	if len(legacy) == 0 {
		return c.fail(r, ekUnsupportedVersion,
			"initialize is not supported; this server speaks "+strings.Join(c.e.o.Revisions, ", "),
			map[string]any{"supported": c.e.o.Revisions, "requested": requested})
	}
	rev := legacy[0]
	if slices.Contains(legacy, requested) {
		rev = requested
	}
	c.mu.Lock()
	c.version = rev
	if c.sinkID == 0 && c.notify != nil {
		c.sinkID = c.e.addSink(&sink{send: c.notify})
	}
	c.mu.Unlock()
	r.rev = rev
	res := map[string]any{
		"protocolVersion": rev,
		"capabilities":    c.e.capabilities(),
		"serverInfo":      c.e.serverInfo(rev),
	}
	if rev >= Rev20250326 {
		res["instructions"] = c.e.instructions()
	}
	return c.result(r, res)
}

func (c *conn) ping(_ context.Context, r *request) *out {
	return c.result(r, map[string]any{})
}

func (c *conn) discover(_ context.Context, r *request) *out {
	return c.result(r, map[string]any{
		"supportedVersions": c.e.o.Revisions,
		"capabilities":      c.e.capabilities(),
		"instructions":      c.e.instructions(),
		"ttlMs":             300000,
		"cacheScope":        "public",
	})
}

// spliceMark is replaced, in an encoded frame, by bytes encoding/json cannot
// produce (a schema nested deeper than its limit) or that are too large to
// build in memory (the hugeline description).
const spliceMark = "@@testbed-splice@@"

func (c *conn) listTools(_ context.Context, r *request) *out {
	e := c.e
	tools := e.tools()
	var cursor string
	if raw, ok := r.params["cursor"]; ok && json.Unmarshal(raw, &cursor) != nil {
		return c.fail(r, ekInvalidParams, "cursor must be a string", nil)
	}
	size := e.o.PageSize
	off := 0
	if e.p.b.ignoreCursor {
		cursor = ""
	}
	if cursor != "" {
		n, ok := decodeCursor(cursor)
		if !ok || n >= len(tools) {
			return c.fail(r, ekInvalidParams, "invalid cursor", nil)
		}
		off = n
	}
	end := min(off+size, len(tools))
	next := ""
	switch {
	case e.p.b.cursorLoop:
		// Two cursors that point at each other: the listing never ends.
		next = encodeCursor(size)
		if off != 0 {
			next = encodeCursor(0)
		}
	case end < len(tools):
		next = encodeCursor(end)
	}
	var splice []byte
	page := make([]any, 0, end-off)
	for i := off; i < end; i++ {
		t := tools[i]
		m := t.render(r.rev)
		if t.outputBytes != nil && r.rev >= Rev20250618 {
			m["outputSchema"] = spliceMark
			splice = t.outputBytes(e.o)
		}
		page = append(page, m)
	}
	huge := e.p.b.hugeList && len(page) > 0
	if huge {
		page[0].(map[string]any)["description"] = spliceMark
	}
	res := map[string]any{"tools": page}
	if next != "" {
		res["nextCursor"] = next
	}
	if r.modern {
		res["ttlMs"] = 60000
		if e.p.b.drift {
			res["ttlMs"] = 0
		}
		res["cacheScope"] = "public"
	}
	o := c.result(r, res)
	o.after = e.countList()
	if splice != nil {
		o.frames[0] = bytes.Replace(o.frames[0], []byte(`"`+spliceMark+`"`), splice, 1)
	}
	if huge {
		frame := o.frames[0]
		o.frames = nil
		o.stream = hugeWriter(frame, e.o.HugeBytes)
	}
	if e.p.b.crashOn == r.method {
		o.crash, o.onCrash = true, e.o.OnCrash
	}
	return o
}

// hugeWriter streams frame with its splice mark replaced by a padded string,
// so that the whole frame is about total bytes long.
func hugeWriter(frame []byte, total int) func(io.Writer) error {
	mark := []byte(`"` + spliceMark + `"`)
	i := bytes.Index(frame, mark)
	head, tail := frame[:i], frame[i+len(mark):]
	pad := max(total-len(head)-len(tail)-2, 0)
	return func(w io.Writer) error {
		if _, err := w.Write(head); err != nil {
			return err
		}
		chunk := bytes.Repeat([]byte("padding "), 8192)
		if _, err := w.Write([]byte(`"`)); err != nil {
			return err
		}
		for left := pad; left > 0; {
			n := min(left, len(chunk))
			if _, err := w.Write(chunk[:n]); err != nil {
				return err
			}
			left -= n
		}
		if _, err := w.Write([]byte(`"`)); err != nil {
			return err
		}
		_, err := w.Write(tail)
		return err
	}
}

func encodeCursor(off int) string {
	return base64.RawURLEncoding.EncodeToString([]byte("offset:" + strconv.Itoa(off)))
}

func decodeCursor(s string) (int, bool) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimPrefix(string(b), "offset:"))
	if err != nil || n < 0 || !strings.HasPrefix(string(b), "offset:") {
		return 0, false
	}
	return n, true
}

func (c *conn) callTool(_ context.Context, r *request) *out {
	var name string
	if raw, ok := r.params["name"]; !ok || json.Unmarshal(raw, &name) != nil {
		return c.fail(r, ekInvalidParams, "params.name must be a string", nil)
	}
	args := map[string]any{}
	if raw, ok := r.params["arguments"]; ok && string(raw) != "null" {
		if !isObject(raw) || json.Unmarshal(raw, &args) != nil {
			return c.fail(r, ekInvalidParams, "params.arguments must be an object", nil)
		}
	}
	var t *tool
	tools := c.e.tools()
	for i := range tools {
		if tools[i].name == name {
			t = &tools[i]
			break
		}
	}
	if t == nil && c.e.p.b.mcpErrors {
		// McpServer catches its own McpError and returns it as a result.
		return c.result(r, toolContent(errResult("MCP error %d: Tool %s not found", jsonrpc.CodeInvalidParams, name), r.rev))
	}
	if t == nil {
		return c.fail(r, ekUnknownTool, fmt.Sprintf("unknown tool %q", name), nil)
	}
	if msg := t.check(args); msg != "" {
		msg = "invalid arguments: " + msg
		if _, styled := c.e.p.b.errs[ekInvalidArgs]; styled || r.rev < Rev20251125 {
			return c.fail(r, ekInvalidArgs, msg, nil)
		}
		return c.result(r, toolContent(errResult("%s", msg), r.rev))
	}
	return c.result(r, toolContent(t.run(callEnv{seed: c.e.o.Seed, rev: r.rev}, args), r.rev))
}

// toolContent renders a tool result as a CallToolResult for revision rev.
func toolContent(tr toolResult, rev string) map[string]any {
	text := tr.text
	if text == "" && tr.structured != nil {
		b, _ := json.Marshal(tr.structured)
		text = string(b)
	}
	res := map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}}
	if tr.structured != nil && !tr.isError && rev >= Rev20250618 {
		res["structuredContent"] = tr.structured
	}
	if tr.isError {
		res["isError"] = true
	}
	return res
}

// listen opens a 2026-07-28 subscription. Only toolsListChanged exists here.
func (c *conn) listen(_ context.Context, r *request) *out {
	var p struct {
		Notifications map[string]json.RawMessage `json:"notifications"`
	}
	raw, _ := json.Marshal(r.params)
	if json.Unmarshal(raw, &p) != nil || p.Notifications == nil {
		return c.fail(r, ekInvalidParams, "params.notifications must be an object", nil)
	}
	agreed := map[string]any{}
	if string(p.Notifications["toolsListChanged"]) == "true" && c.e.p.b.drift {
		agreed["toolsListChanged"] = true
	}
	ack, _ := jsonrpc.NewNotification("notifications/subscriptions/acknowledged", map[string]any{
		"notifications": agreed,
		"_meta":         map[string]any{metaSubscription: r.id},
	})
	o := &out{frames: [][]byte{ack}, modern: true}
	if c.listenF != nil {
		key := jsonrpc.IDKey(r.id)
		id := c.listenF(&sink{subID: r.id})
		c.mu.Lock()
		c.listens[key] = id
		c.mu.Unlock()
		return o
	}
	o.listen = &listenReq{id: r.id}
	return o
}
