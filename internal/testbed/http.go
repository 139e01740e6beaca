package testbed

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
	"github.com/mcpdrill/mcpdrill/internal/target"
)

// HTTP paths the handler serves.
const (
	PathMCP     = "/mcp"     // Streamable HTTP (legacy sessions and 2026-07-28)
	PathSSE     = "/sse"     // 2024-11-05 HTTP+SSE: the event stream
	PathMessage = "/message" // 2024-11-05 HTTP+SSE: where messages are POSTed
)

// NewHandler returns the profile's HTTP server. PathMCP serves Streamable
// HTTP when the profile speaks 2025-03-26 or later: initialize opens a
// session (Mcp-Session-Id), and a POST carrying 2026-07-28 `_meta` is served
// statelessly with its headers checked. PathSSE and PathMessage serve the
// 2024-11-05 transport when the profile speaks 2024-11-05. A foreign Origin
// gets 403 everywhere.
func NewHandler(o Options) (http.Handler, error) {
	e, err := newEngine(o)
	if err != nil {
		return nil, err
	}
	h := &httpServer{e: e, sessions: map[string]*session{}}
	mux := http.NewServeMux()
	mux.HandleFunc(PathMCP, h.mcp)
	mux.HandleFunc(PathSSE, h.sse)
	mux.HandleFunc(PathMessage, h.message)
	return h.checkOrigin(mux), nil
}

type httpServer struct {
	e        *engine
	mu       sync.Mutex
	sessions map[string]*session
}

// session is a legacy HTTP session: Streamable HTTP after initialize, or a
// 2024-11-05 SSE stream.
type session struct {
	id string
	c  *conn
	q  chan *out   // notifications (and, on the 2024-11-05 transport, replies)
	in chan []byte // 2024-11-05: POSTed messages, handled in order
}

func (h *httpServer) newSession(old bool) *session {
	s := &session{id: newSessionID(), q: make(chan *out, 64)}
	s.c = h.e.newConn(func(f []byte) {
		select {
		case s.q <- &out{frames: [][]byte{f}}:
		default: // nobody is listening: drop, as a real server would
		}
	})
	if old {
		s.in = make(chan []byte, 64)
	}
	return s
}

func newSessionID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (h *httpServer) add(s *session) {
	h.mu.Lock()
	h.sessions[s.id] = s
	h.mu.Unlock()
}

func (h *httpServer) lookup(id string) *session {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sessions[id]
}

func (h *httpServer) remove(id string) bool {
	h.mu.Lock()
	s, ok := h.sessions[id]
	delete(h.sessions, id)
	h.mu.Unlock()
	if ok {
		s.c.close()
	}
	return ok
}

// checkOrigin refuses requests whose Origin is neither loopback, the
// server's own host, nor allowed by the options (DNS rebinding defence).
func (h *httpServer) checkOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if origin := r.Header.Get("Origin"); origin != "" && !h.originOK(origin, r.Host) {
			writeError(w, http.StatusForbidden, nil, jsonrpc.CodeInvalidRequest, "forbidden origin")
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (h *httpServer) originOK(origin, host string) bool {
	if slices.Contains(h.e.o.AllowedOrigins, origin) {
		return true
	}
	if u, err := url.Parse(origin); err == nil && u.Host != "" && u.Host == host {
		return true
	}
	return target.LoopbackOrigin(origin)
}

// writeError writes an HTTP error whose body is a JSON-RPC error.
func writeError(w http.ResponseWriter, status int, id []byte, code int, msg string) {
	f, _ := jsonrpc.NewErrorResponse(id, &jsonrpc.Error{Code: code, Message: msg})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(f)
}

func (h *httpServer) mcp(w http.ResponseWriter, r *http.Request) {
	e := h.e
	if !e.streamable() {
		http.NotFound(w, r)
		return
	}
	sid := r.Header.Get("Mcp-Session-Id")
	if !e.legacy() && r.Method != http.MethodPost {
		// 2026-07-28 only: no GET stream, no sessions.
		methodNotAllowed(w, http.MethodPost)
		return
	}
	switch r.Method {
	case http.MethodPost:
		h.post(w, r, sid)
	case http.MethodGet:
		if sid == "" {
			w.Header().Set("Allow", "POST, DELETE")
			http.Error(w, "a stream needs an Mcp-Session-Id", http.StatusMethodNotAllowed)
			return
		}
		s := h.lookup(sid)
		if s == nil || s.in != nil {
			writeError(w, http.StatusNotFound, nil, jsonrpc.CodeInvalidRequest, "session not found")
			return
		}
		h.stream(w, r, s)
	case http.MethodDelete:
		if sid == "" {
			http.Error(w, "missing Mcp-Session-Id", http.StatusBadRequest)
			return
		}
		if !h.remove(sid) {
			writeError(w, http.StatusNotFound, nil, jsonrpc.CodeInvalidRequest, "session not found")
			return
		}
		w.WriteHeader(http.StatusOK)
	default:
		methodNotAllowed(w, "GET, POST, DELETE")
	}
}

func readHeaders(r *http.Request) *headers {
	h := &headers{}
	if v := r.Header.Values("Mcp-Protocol-Version"); len(v) > 0 {
		h.version, h.hasVersion = v[0], true
	}
	if v := r.Header.Values("Mcp-Method"); len(v) > 0 {
		h.method, h.hasMethod = v[0], true
	}
	if v := r.Header.Values("Mcp-Name"); len(v) > 0 {
		h.name, h.hasName = v[0], true
	}
	return h
}

func (h *httpServer) post(w http.ResponseWriter, r *http.Request, sid string) {
	e := h.e
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxInFrame))
	if err != nil {
		writeError(w, http.StatusRequestEntityTooLarge, nil, jsonrpc.CodeInvalidRequest, "the message is too large")
		return
	}
	peek, perr := jsonrpc.PeekFrame(body)
	if perr == nil && peek.Kind == jsonrpc.KindBatch {
		writeError(w, http.StatusBadRequest, nil, jsonrpc.CodeInvalidRequest, "batches are not supported")
		return
	}
	var c *conn
	var fresh *session
	switch {
	case sid != "" && e.legacy() && !modernBody(body):
		// A 2026-07-28 request is stateless: its Mcp-Session-Id is ignored.
		s := h.lookup(sid)
		if s == nil || s.in != nil {
			writeError(w, http.StatusNotFound, nil, jsonrpc.CodeInvalidRequest, "session not found")
			return
		}
		if v := r.Header.Get("Mcp-Protocol-Version"); v != "" && !slices.Contains(e.o.Revisions, v) {
			writeError(w, http.StatusBadRequest, nil, jsonrpc.CodeInvalidRequest, "unsupported MCP-Protocol-Version "+v)
			return
		}
		c = s.c
	case perr == nil && peek.Method == "initialize" && e.legacy():
		fresh = h.newSession(false)
		c = fresh.c
	case perr == nil && peek.Kind == jsonrpc.KindRequest && !e.modern():
		writeError(w, http.StatusBadRequest, peek.ID, jsonrpc.CodeInvalidRequest, "missing Mcp-Session-Id; send initialize first")
		return
	default:
		c = e.newConn(nil) // stateless 2026-07-28 request
		defer c.close()
	}
	sse := e.o.Reply == "sse" && accepts(r, "text/event-stream")
	var noise *noiseStream
	if sse && e.p.b.flood && peek.Kind == jsonrpc.KindRequest {
		// Stream noise while the slow answer is being prepared.
		sseHeaders(w, http.StatusOK)
		noise = startNoise(r.Context(), w, e.o)
	}
	o := c.handle(r.Context(), body, readHeaders(r))
	if noise != nil {
		noise.stop()
	}
	if fresh != nil {
		fresh.c.mu.Lock()
		ok := fresh.c.version != ""
		fresh.c.mu.Unlock()
		if ok {
			h.add(fresh)
			w.Header().Set("Mcp-Session-Id", fresh.id)
		} else {
			fresh.c.close()
		}
	}
	switch {
	case o == nil:
		if noise == nil {
			w.WriteHeader(http.StatusAccepted)
		}
		return
	case o.hang:
		<-r.Context().Done()
		return
	case o.listen != nil:
		h.listen(w, r, o, noise != nil)
		return
	}
	status := o.status
	if status == 0 {
		status = http.StatusOK
	}
	if noise == nil && (!sse || status != http.StatusOK) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		writeBody(w, o, false)
		return
	}
	if noise == nil {
		sseHeaders(w, http.StatusOK)
	}
	if e.p.b.noisy {
		_ = jsonrpc.WriteEvent(w, jsonrpc.Event{Data: []byte("[testbed] INFO handling a request"), Retry: -1})
	}
	writeBody(w, o, true)
}

// modernBody reports whether a request body carries the 2026-07-28
// per-request protocol version.
func modernBody(body []byte) bool {
	var m struct {
		Params struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &m) != nil {
		return false
	}
	_, ok := m.Params.Meta[metaVersion]
	return ok
}

func accepts(r *http.Request, mime string) bool {
	for _, v := range r.Header.Values("Accept") {
		if strings.Contains(v, mime) || strings.Contains(v, "*/*") {
			return true
		}
	}
	return false
}

func sseHeaders(w http.ResponseWriter, status int) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(status)
	flush(w)
}

func flush(w http.ResponseWriter) {
	_ = http.NewResponseController(w).Flush()
}

// writeBody writes o's frames as a JSON body (the response only) or as SSE
// message events, crashing the connection when o says so.
func writeBody(w http.ResponseWriter, o *out, sse bool) {
	if sse {
		writeEvents(w, o, "")
		return
	}
	if o.stream != nil {
		_ = o.stream(w)
		flush(w)
		return
	}
	frames := o.frames
	if len(frames) > 1 {
		frames = frames[len(frames)-1:]
	}
	for i, f := range frames {
		if o.crash && i == len(frames)-1 {
			_, _ = w.Write(f[:len(f)/2])
			flush(w)
			crashed(o)
		}
		_, _ = w.Write(f)
	}
	flush(w)
	if o.after != nil {
		o.after()
	}
}

// writeEvents writes o's frames as SSE events named name ("": unnamed),
// the last one cut short and the connection crashed when o says so.
func writeEvents(w http.ResponseWriter, o *out, name string) {
	var fields [][]byte
	if name != "" {
		fields = [][]byte{[]byte("event: " + name + "\n")}
	}
	if o.stream != nil {
		_ = jsonrpc.StreamData(w, fields, o.stream)
		flush(w)
		return
	}
	for i, f := range o.frames {
		if o.crash && i == len(o.frames)-1 {
			_ = jsonrpc.StreamData(w, fields, func(dw io.Writer) error {
				_, _ = dw.Write(f[:len(f)/2])
				flush(w)
				crashed(o)
				return nil
			})
		}
		_ = jsonrpc.WriteData(w, fields, f)
	}
	flush(w)
	if o.after != nil {
		o.after()
	}
}

// listen keeps a 2026-07-28 subscriptions/listen stream open until the
// client goes away.
func (h *httpServer) listen(w http.ResponseWriter, r *http.Request, o *out, started bool) {
	q := make(chan []byte, 16)
	id := h.e.addSink(&sink{subID: o.listen.id, send: func(f []byte) {
		select {
		case q <- f:
		default:
		}
	}})
	defer h.e.removeSink(id)
	if !started {
		sseHeaders(w, http.StatusOK)
	}
	for _, f := range o.frames {
		_ = jsonrpc.WriteEvent(w, jsonrpc.Event{Data: f, Retry: -1})
	}
	flush(w)
	for {
		select {
		case <-r.Context().Done():
			return
		case f := <-q:
			if jsonrpc.WriteEvent(w, jsonrpc.Event{Data: f, Retry: -1}) != nil {
				return
			}
			flush(w)
		}
	}
}

// stream is a legacy session's GET stream: queued notifications (and noise,
// for `flood`) until the client goes away.
func (h *httpServer) stream(w http.ResponseWriter, r *http.Request, s *session) {
	sseHeaders(w, http.StatusOK)
	var noise *noiseStream
	if h.e.p.b.flood {
		noise = startNoise(r.Context(), w, h.e.o)
		defer noise.stop()
	}
	for {
		select {
		case <-r.Context().Done():
			return
		case o := <-s.q:
			if noise != nil {
				noise.mu.Lock()
			}
			for _, f := range o.frames {
				_ = jsonrpc.WriteEvent(w, jsonrpc.Event{Data: f, Retry: -1})
			}
			flush(w)
			if noise != nil {
				noise.mu.Unlock()
			}
		}
	}
}

// oldSSEServes reports whether a request to a 2024-11-05 endpoint (the
// event stream, the message POST) is served: it answers 404 itself when
// the profile speaks no 2024-11-05, and 405 when the request's method is
// not the endpoint's.
func (h *httpServer) oldSSEServes(w http.ResponseWriter, r *http.Request, method string) bool {
	if !h.e.oldSSE() {
		http.NotFound(w, r)
		return false
	}
	if r.Method != method {
		methodNotAllowed(w, method)
		return false
	}
	return true
}

// methodNotAllowed answers 405, naming the methods allowed.
func methodNotAllowed(w http.ResponseWriter, allow string) {
	w.Header().Set("Allow", allow)
	http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
}

// sse serves the 2024-11-05 event stream: an `endpoint` event, then every
// reply and notification of the session as `message` events.
func (h *httpServer) sse(w http.ResponseWriter, r *http.Request) {
	if !h.oldSSEServes(w, r, http.MethodGet) {
		return
	}
	s := h.newSession(true)
	h.add(s)
	defer h.remove(s.id)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	go func() { // one worker: replies keep the order of the POSTs
		for {
			select {
			case <-ctx.Done():
				return
			case body := <-s.in:
				if o := s.c.handle(ctx, body, nil); o != nil && !o.hang {
					select {
					case s.q <- o:
					case <-ctx.Done():
						return
					}
				}
			}
		}
	}()
	sseHeaders(w, http.StatusOK)
	endpoint := PathMessage + "?sessionId=" + s.id
	if err := jsonrpc.WriteEvent(w, jsonrpc.Event{Event: "endpoint", Data: []byte(endpoint), Retry: -1}); err != nil {
		return
	}
	flush(w)
	var noise *noiseStream
	if h.e.p.b.flood {
		noise = startNoise(ctx, w, h.e.o)
		defer noise.stop()
	}
	for {
		select {
		case <-ctx.Done():
			return
		case o := <-s.q:
			if noise != nil {
				noise.mu.Lock()
			}
			if h.e.p.b.noisy {
				_ = jsonrpc.WriteEvent(w, jsonrpc.Event{Event: "message", Data: []byte("[testbed] INFO sending a reply"), Retry: -1})
			}
			writeOldSSE(w, o)
			if noise != nil {
				noise.mu.Unlock()
			}
		}
	}
}

func writeOldSSE(w http.ResponseWriter, o *out) { writeEvents(w, o, "message") }

// message accepts a 2024-11-05 POST and queues it for the session's stream.
func (h *httpServer) message(w http.ResponseWriter, r *http.Request) {
	if !h.oldSSEServes(w, r, http.MethodPost) {
		return
	}
	s := h.lookup(r.URL.Query().Get("sessionId"))
	if s == nil || s.in == nil {
		http.Error(w, "session not found", http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxInFrame))
	if err != nil {
		http.Error(w, "the message is too large", http.StatusRequestEntityTooLarge)
		return
	}
	select {
	case s.in <- body:
		w.WriteHeader(http.StatusAccepted)
		_, _ = io.WriteString(w, "Accepted")
	default:
		http.Error(w, "too many queued messages", http.StatusServiceUnavailable)
	}
}

// noiseStream writes `flood` noise events on an SSE stream until stopped.
type noiseStream struct {
	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

func startNoise(ctx context.Context, w http.ResponseWriter, o Options) *noiseStream {
	ctx, cancel := context.WithCancel(ctx)
	n := &noiseStream{cancel: cancel, done: make(chan struct{})}
	note, _ := jsonrpc.NewNotification("notifications/message", map[string]any{
		"level": "debug", "logger": "flood", "data": string(noiseText(o.Seed, o.NoiseBytes)),
	})
	go func() {
		defer close(n.done)
		for ctx.Err() == nil {
			n.mu.Lock()
			err := jsonrpc.WriteEvent(w, jsonrpc.Event{Data: note, Retry: -1})
			if err == nil {
				err = http.NewResponseController(w).Flush()
			}
			n.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return n
}

func (n *noiseStream) stop() {
	n.cancel()
	<-n.done
}

// crashed ends a response mid-frame: the options' OnCrash hook first (which
// may end the process), then an aborted connection.
func crashed(o *out) {
	if o.onCrash != nil {
		o.onCrash()
	}
	panic(http.ErrAbortHandler)
}
