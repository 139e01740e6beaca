package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
)

// outgoing is one request frame handed to a transport.
type outgoing struct {
	key     string // jsonrpc.IDKey of the id ("" for none)
	method  string
	frame   []byte
	header  http.Header // extra HTTP headers (they override the defaults)
	rawNull bool        // also accept an id-less error response (SendRaw)
}

// reply is what a transport got back. msg is nil for an HTTP reply without a
// JSON-RPC body (e.g. 202, or an error status with a non-JSON body).
type reply struct {
	msg    *jsonrpc.Message
	status int // HTTP status, 0 on stdio
	header http.Header
	seq    uint64 // stdio: the message's place in what the server wrote (delivery.seq)
}

// transport is one of stdio, Streamable HTTP, HTTP+SSE.
type transport interface {
	roundTrip(ctx context.Context, r outgoing) (*reply, error)
	notify(ctx context.Context, frame []byte, hdr http.Header) (*reply, error)
	inFlight() int
	close() error
}

// Client is a connected MCP session. Its methods are safe for concurrent use.
type Client struct {
	cfg Config
	obs *observer

	mu   sync.Mutex
	t    transport
	sess Session

	stdio  *stdioConn
	hconn  *httpConn // Streamable HTTP (also used before a switch to HTTP+SSE)
	nextID atomic.Int64
	closed atomic.Bool

	extMu  sync.Mutex
	extIDs map[string]struct{} // ids used by SendRaw frames; never reused
}

// Response is a reply with its HTTP details (Status 0 on stdio).
type Response struct {
	Message *jsonrpc.Message
	Status  int
	Header  http.Header
}

// Session returns the negotiated session description.
func (c *Client) Session() Session {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.sess
	s.Detection = append([]string(nil), s.Detection...)
	s.SupportedVersions = append([]string(nil), s.SupportedVersions...)
	return s
}

func (c *Client) transport() transport {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *Client) session() (rev string, modern bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sess.Revision, c.sess.Era == EraModern
}

func (c *Client) detect(note string) {
	c.mu.Lock()
	c.sess.Detection = append(c.sess.Detection, note)
	c.mu.Unlock()
}

// newID returns a fresh request id not used by any SendRaw frame.
func (c *Client) newID() int64 {
	for {
		id := c.nextID.Add(1)
		k := jsonrpc.IDKey(json.RawMessage(fmt.Sprint(id)))
		c.extMu.Lock()
		_, used := c.extIDs[k]
		c.extMu.Unlock()
		if !used {
			return id
		}
	}
}

func idKey(raw json.RawMessage) string { return jsonrpc.IDKey(raw) }

// modernMeta is the per-request protocol fields for rev.
func (c *Client) modernMeta(rev string) map[string]any {
	return map[string]any{
		MetaProtocolVersion:    rev,
		MetaClientCapabilities: map[string]any{},
		MetaClientInfo:         map[string]any{"name": c.cfg.ClientName, "version": c.cfg.ClientVersion},
	}
}

// buildParams marshals params; in the modern era it merges the protocol
// _meta fields under any _meta the caller gave (the caller's keys win).
func (c *Client) buildParams(params any, modernRev string) (json.RawMessage, error) {
	var raw json.RawMessage
	if params != nil {
		b, err := json.Marshal(params)
		if err != nil {
			return nil, fmt.Errorf("mcp: encode params: %w", err)
		}
		raw = b
	}
	if modernRev == "" {
		if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			return nil, nil
		}
		return raw, nil
	}
	obj := map[string]json.RawMessage{}
	if len(raw) > 0 && string(bytes.TrimSpace(raw)) != "null" {
		if err := json.Unmarshal(raw, &obj); err != nil {
			return nil, fmt.Errorf("mcp: params must be a JSON object: %w", err)
		}
	}
	meta := map[string]json.RawMessage{}
	for k, v := range c.modernMeta(modernRev) {
		b, _ := json.Marshal(v)
		meta[k] = b
	}
	if m, ok := obj["_meta"]; ok && string(m) != "null" {
		var given map[string]json.RawMessage
		if err := json.Unmarshal(m, &given); err != nil {
			return nil, fmt.Errorf("mcp: params._meta must be an object: %w", err)
		}
		for k, v := range given {
			meta[k] = v
		}
	}
	mb, _ := json.Marshal(meta)
	obj["_meta"] = mb
	return json.Marshal(obj)
}

// modernHeaders are the 2026-07-28 request headers for method and params.
func modernHeaders(rev, method string, params json.RawMessage) http.Header {
	h := http.Header{}
	h.Set(HeaderProtocolVersion, rev)
	h.Set(HeaderMethod, method)
	field := ""
	switch method {
	case "tools/call", "prompts/get":
		field = "name"
	case "resources/read":
		field = "uri"
	}
	if field != "" && len(params) > 0 {
		var p map[string]json.RawMessage
		if json.Unmarshal(params, &p) == nil {
			var s string
			if json.Unmarshal(p[field], &s) == nil {
				h.Set(HeaderName, EncodeHeaderValue(s))
			}
		}
	}
	return h
}

// request builds a request frame in the current (or given) era.
func (c *Client) request(method string, params any, modernRev string) (outgoing, int64, error) {
	p, err := c.buildParams(params, modernRev)
	if err != nil {
		return outgoing{}, 0, err
	}
	id := c.newID()
	idv, key := any(id), idKey(json.RawMessage(fmt.Sprint(id)))
	if c.cfg.IDPrefix != "" {
		s := fmt.Sprintf("%s%d", c.cfg.IDPrefix, id)
		b, _ := json.Marshal(s)
		idv, key = s, idKey(b)
	}
	var frame []byte
	if p == nil {
		frame, err = jsonrpc.NewRequest(idv, method, nil)
	} else {
		frame, err = jsonrpc.NewRequest(idv, method, p)
	}
	if err != nil {
		return outgoing{}, 0, err
	}
	o := outgoing{key: key, method: method, frame: frame}
	if modernRev != "" {
		o.header = modernHeaders(modernRev, method, p)
	}
	return o, id, nil
}

// Call sends a request and waits for its response. A peer's JSON-RPC error
// comes back as msg.Error with a nil error; err reports mcpdrill's side
// (ErrTimeout, ErrServerExited, ErrClosed, ErrFrameTooLarge, *HTTPError…).
// Over HTTP a 4xx/5xx whose body is a JSON-RPC message returns that message
// (use CallResponse for the status), except 401/403 which always give
// *HTTPError. In the modern era params._meta carries the protocol fields and
// the request carries the 2026-07-28 headers.
func (c *Client) Call(ctx context.Context, method string, params any) (*jsonrpc.Message, error) {
	r, err := c.CallResponse(ctx, method, params)
	if err != nil {
		return nil, err
	}
	return r.Message, nil
}

// CallResponse is Call with the HTTP status and header of the reply.
func (c *Client) CallResponse(ctx context.Context, method string, params any) (*Response, error) {
	if c.closed.Load() {
		return nil, ErrClosed
	}
	rev, modern := c.session()
	mrev := ""
	if modern {
		mrev = rev
	}
	o, id, err := c.request(method, params, mrev)
	if err != nil {
		return nil, err
	}
	return c.do(ctx, o, id, c.cfg.RequestTimeout, true)
}

// do runs one round trip with a timeout and maps the outcome.
func (c *Client) do(ctx context.Context, o outgoing, id int64, timeout time.Duration, cancelOnTimeout bool) (*Response, error) {
	t := c.transport()
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r, err := t.roundTrip(rctx, o)
	if err != nil {
		if rctx.Err() != nil && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || errors.Is(err, rctx.Err())) {
			if cancelOnTimeout && id != 0 && o.method != "initialize" {
				c.sendCancelled(id)
			}
			if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return nil, fmt.Errorf("mcp: %s: %w", o.method, ctx.Err())
			}
			return nil, fmt.Errorf("mcp: %s: %w", o.method, ErrTimeout)
		}
		return nil, err
	}
	return classifyReply(r)
}

// classifyReply maps a transport reply onto (Response, error).
func classifyReply(r *reply) (*Response, error) {
	resp := &Response{Message: r.msg, Status: r.status, Header: r.header}
	switch {
	case r.status == http.StatusUnauthorized || r.status == http.StatusForbidden:
		return nil, &HTTPError{Status: r.status, Header: r.header, Body: r.msg}
	case r.status >= 300 && r.msg == nil:
		return nil, &HTTPError{Status: r.status, Header: r.header}
	case r.msg == nil:
		return nil, fmt.Errorf("%w: HTTP %d without a JSON-RPC body", ErrNoResponse, r.status)
	}
	return resp, nil
}

// sendCancelled tells the server to stop a timed-out request (stdio, and
// legacy HTTP; a modern HTTP request was cancelled by closing its stream).
func (c *Client) sendCancelled(id int64) {
	if _, modern := c.session(); modern && c.stdio == nil {
		return
	}
	frame, err := jsonrpc.NewNotification("notifications/cancelled", map[string]any{"requestId": id, "reason": "timeout"})
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), cancelTimeout)
	defer cancel()
	_, _ = c.transport().notify(ctx, frame, nil)
}

// Notify sends a notification. Over HTTP an error status gives *HTTPError.
func (c *Client) Notify(ctx context.Context, method string, params any) error {
	if c.closed.Load() {
		return ErrClosed
	}
	var frame []byte
	var err error
	if params == nil {
		frame, err = jsonrpc.NewNotification(method, nil)
	} else {
		frame, err = jsonrpc.NewNotification(method, params)
	}
	if err != nil {
		return err
	}
	var hdr http.Header
	if rev, modern := c.session(); modern {
		hdr = http.Header{}
		hdr.Set(HeaderProtocolVersion, rev)
		hdr.Set(HeaderMethod, method)
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	r, err := c.transport().notify(ctx, frame, hdr)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("mcp: %s: %w", method, ErrTimeout)
		}
		return err
	}
	if r != nil && r.status >= 300 {
		return &HTTPError{Status: r.status, Header: r.header, Body: r.msg}
	}
	return nil
}

// SendRaw sends frame as-is (for malformed-input probes) and returns the first
// response whose id is null/absent or equal to the frame's id, or ErrTimeout.
// Over HTTP the bytes are POSTed (with the session's usual headers, and in the
// modern era Mcp-Method/Mcp-Name derived from the frame when it parses) and a
// 4xx whose body is a JSON-RPC message returns that message with a nil error.
func (c *Client) SendRaw(ctx context.Context, frame []byte) (*jsonrpc.Message, error) {
	r, err := c.SendRawHeaders(ctx, frame, nil)
	if err != nil {
		return nil, err
	}
	return r.Message, nil
}

// SendRawHeaders is SendRaw with extra HTTP headers that override the
// client's own (e.g. a mismatching Mcp-Name); ignored on stdio. A frame that
// is a notification (no id) over HTTP returns the bare status.
func (c *Client) SendRawHeaders(ctx context.Context, frame []byte, hdr http.Header) (*Response, error) {
	if c.closed.Load() {
		return nil, ErrClosed
	}
	p, perr := jsonrpc.PeekFrame(frame)
	o := c.rawOutgoing(frame)
	if rev, modern := c.session(); modern && c.stdio == nil {
		h := http.Header{}
		h.Set(HeaderProtocolVersion, rev)
		if perr == nil && p.Method != "" {
			var params json.RawMessage
			if m, err := jsonrpc.Decode(frame); err == nil {
				params = m.Params
			}
			h = modernHeaders(rev, p.Method, params)
		}
		o.header = h
	}
	if hdr != nil {
		if o.header == nil {
			o.header = http.Header{}
		}
		for k, v := range hdr {
			o.header[http.CanonicalHeaderKey(k)] = v
		}
	}
	t := c.transport()
	rctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	r, err := t.roundTrip(rctx, o)
	if err != nil {
		if rctx.Err() != nil {
			if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return nil, fmt.Errorf("mcp: raw frame: %w", ctx.Err())
			}
			return nil, fmt.Errorf("mcp: raw frame: %w", ErrTimeout)
		}
		return nil, err
	}
	if r.status != 0 && r.msg == nil && r.status < 300 {
		// e.g. 202 for a frame the server took as a notification
		return &Response{Status: r.status, Header: r.header}, nil
	}
	return classifyReply(r)
}

// rawOutgoing wraps a SendRaw frame: it also awaits an id-less error
// response, and the id it carries (if it parses) is never reused by the
// client's own requests.
func (c *Client) rawOutgoing(frame []byte) outgoing {
	p, perr := jsonrpc.PeekFrame(frame)
	o := outgoing{frame: frame, rawNull: true, method: p.Method}
	if perr == nil && p.ID != nil {
		o.key = idKey(p.ID)
		c.extMu.Lock()
		if c.extIDs == nil {
			c.extIDs = map[string]struct{}{}
		}
		if len(c.extIDs) < 4096 {
			c.extIDs[o.key] = struct{}{}
		}
		c.extMu.Unlock()
	}
	return o
}

// Observations returns what the client noticed about the peer, sorted.
func (c *Client) Observations() []Observation { return c.obs.list() }

// StderrTail returns the last lines the stdio child wrote to stderr.
func (c *Client) StderrTail() []string {
	if c.stdio == nil {
		return nil
	}
	return c.stdio.stderrTail()
}

// ExitStatus reports the stdio child's exit code once it has exited (-1 when
// killed by a signal).
func (c *Client) ExitStatus() (code int, exited bool) {
	if c.stdio == nil {
		return 0, false
	}
	return c.stdio.exitStatus()
}

// Shutdown reports how the stdio server ended once Close has returned
// (false over HTTP, or before Close).
func (c *Client) Shutdown() (Shutdown, bool) {
	if c.stdio == nil || !c.closed.Load() {
		return Shutdown{}, false
	}
	c.stdio.mu.Lock()
	defer c.stdio.mu.Unlock()
	return c.stdio.shutdown, c.stdio.shutdown.How != ""
}

// Close ends the session. stdio: close stdin, wait, SIGTERM, wait, SIGKILL
// (whole process group). HTTP: DELETE the session if the server issued one.
func (c *Client) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	if t := c.transport(); t != nil {
		return t.close()
	}
	return nil
}

// pending reports requests still awaiting replies (tests: no leaks).
func (c *Client) pending() int { return c.transport().inFlight() }

// cancelTimeout bounds the best-effort notifications/cancelled send.
const cancelTimeout = time.Second
