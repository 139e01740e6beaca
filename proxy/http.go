package proxy

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpdrill/mcpdrill/faults"
	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
	"github.com/mcpdrill/mcpdrill/internal/redact"
)

// HTTPOptions configures the Streamable HTTP (and legacy HTTP+SSE) proxy.
type HTTPOptions struct {
	Config
	// Upstream is the server's MCP endpoint URL. A request to the proxy's
	// "/" goes to this URL; any other path goes to the same path on the
	// upstream's origin (so the legacy transport's message endpoint works).
	Upstream string
	// AllowOrigins are browser origins accepted besides loopback ones.
	AllowOrigins []string
	// Client makes upstream requests (default: a transport without
	// compression or timeouts, since streams may be long-lived).
	Client *http.Client
	// OnError, when set, hears of failures Serve cannot return (a handler
	// that panicked); nil drops them.
	OnError func(error)
	// MemoryBudget bounds the bytes of request and reply bodies the proxy
	// holds at once, across all connections (0: DefaultMemoryBudget).
	// Past it a request is answered 503, and a reply the proxy has no
	// room to examine is relayed as it comes (withheld in guard mode).
	MemoryBudget int64
}

// HTTP is the HTTP proxy; it is an http.Handler for its own listener.
//
//	client ──POST body (c2s frame)──► faults ──► upstream
//	client ◄──JSON body | SSE events (s2c frames, one decision per JSON-RPC message)── upstream
//	GET streams and the legacy /sse stream are s2c event streams; DELETE and
//	everything else pass through untouched.
type HTTP struct {
	eng      *engine
	upstream *url.URL
	allow    map[string]bool
	client   *http.Client
	onError  func(error)
	budget   *byteBudget

	// streams are the clients' open GET event streams, into which the
	// proxy writes notifications of its own (Push).
	streamsMu sync.Mutex
	streams   map[*func([]byte)]struct{}

	// the latest client POST's headers and target, which the
	// interceptor's own requests use (noteSession)
	sessMu  sync.Mutex
	sessHdr http.Header
	sessURL string
}

// Push writes frame (a JSON-RPC notification) as an event into every
// client GET event stream open through the proxy (the Streamable HTTP
// notification stream, or the legacy /sse stream). Guard mode announces
// notifications/tools/list_changed this way.
func (h *HTTP) Push(frame []byte) {
	h.streamsMu.Lock()
	fns := make([]func([]byte), 0, len(h.streams))
	for f := range h.streams {
		fns = append(fns, *f)
	}
	h.streamsMu.Unlock()
	for _, f := range fns {
		f(frame)
	}
}

// addStream registers a client stream's push function until the returned
// function is called.
func (h *HTTP) addStream(push func([]byte)) (remove func()) {
	p := &push
	h.streamsMu.Lock()
	if h.streams == nil {
		h.streams = map[*func([]byte)]struct{}{}
	}
	h.streams[p] = struct{}{}
	h.streamsMu.Unlock()
	return func() {
		h.streamsMu.Lock()
		delete(h.streams, p)
		h.streamsMu.Unlock()
	}
}

// NewHTTP validates the options and returns the proxy handler.
func NewHTTP(o HTTPOptions) (*HTTP, error) {
	u, err := url.Parse(o.Upstream)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("proxy: upstream must be an http(s) URL with a host, got %q", redact.URL(o.Upstream))
	}
	h := &HTTP{eng: newEngine(o.Config), upstream: u, allow: map[string]bool{}, client: o.Client, onError: o.OnError,
		budget: newByteBudget(o.MemoryBudget)}
	for _, a := range o.AllowOrigins {
		h.allow[strings.TrimRight(a, "/")] = true
	}
	if h.client == nil {
		dial := (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
		h.client = &http.Client{CheckRedirect: noRedirect, Transport: &http.Transport{
			Proxy:               nil,
			DisableCompression:  true,
			MaxIdleConnsPerHost: 64,
			IdleConnTimeout:     90 * time.Second,
			DialContext:         dial,
		}}
	}
	if o.Guard != nil {
		o.Guard.Attach(nil, h.ownRequest, h.Push) // Push: into the clients' GET streams
	}
	return h, nil
}

// noRedirect hands an upstream redirect to the client as it is: the proxy
// never sends the client's request, and its credentials, anywhere but the
// upstream it was given.
func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// hopHeaders are not forwarded in either direction.
var hopHeaders = map[string]bool{"Connection": true, "Keep-Alive": true, "Proxy-Connection": true, "Proxy-Authenticate": true,
	"Proxy-Authorization": true, "Te": true, "Trailer": true, "Transfer-Encoding": true, "Upgrade": true}

// copyHeaders copies src's end-to-end headers into dst. src is a header
// net/http parsed, so its keys are canonical.
func copyHeaders(dst, src http.Header) {
	for k, vs := range src {
		if !hopHeaders[k] {
			dst[k] = append([]string(nil), vs...)
		}
	}
}

// originOK accepts requests with no Origin, a loopback Origin, or an
// allowed one: a browser page elsewhere must not drive a local server
// through the proxy (DNS rebinding).
func (h *HTTP) originOK(r *http.Request) bool { return originAllowed(h.allow, r) }

// originAllowed reports whether r's Origin, if any, is a loopback origin
// or one of allow (DNS-rebinding protection).
func originAllowed(allow map[string]bool, r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" || allow[strings.TrimRight(o, "/")] {
		return true
	}
	u, err := url.Parse(o)
	if err != nil {
		return false
	}
	switch u.Hostname() {
	case "localhost", "127.0.0.1", "::1":
		return true
	}
	return false
}

func (h *HTTP) target(r *http.Request) *url.URL {
	t := *h.upstream
	if r.URL.Path != "/" && r.URL.Path != "" {
		t.Path, t.RawPath = r.URL.Path, r.URL.RawPath
		t.RawQuery = r.URL.RawQuery
	} else if r.URL.RawQuery != "" {
		t.RawQuery = r.URL.RawQuery
	}
	return &t
}

// ServeHTTP relays one client request.
func (h *HTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.originOK(r) {
		http.Error(w, "mcpdrill: origin not allowed", http.StatusForbidden)
		return
	}
	if r.Method == http.MethodConnect {
		// Not a proxy for arbitrary hosts: only the upstream is reached.
		w.Header().Set("Allow", "GET, POST, DELETE, OPTIONS")
		http.Error(w, "mcpdrill: CONNECT is not supported", http.StatusMethodNotAllowed)
		return
	}
	var body []byte
	var held *heldBody // body's buffer (nil: no body)
	if r.Body != nil {
		limit := int64(h.maxFrame())
		hb, charged, err := readBudgeted(h.budget, r.Body, r.ContentLength, limit+1)
		defer h.budget.give(charged)
		defer hb.release()
		if errors.Is(err, errBudget) {
			w.Header().Set("Retry-After", "1")
			http.Error(w, "mcpdrill: the proxy holds as many bodies as its memory budget allows; retry", http.StatusServiceUnavailable)
			return
		}
		if err != nil {
			http.Error(w, "mcpdrill: reading request body failed", http.StatusBadRequest)
			return
		}
		if int64(len(hb.b)) > limit {
			http.Error(w, "mcpdrill: request body over the frame cap", http.StatusRequestEntityTooLarge)
			return
		}
		body, held = hb.b, hb
	}
	send := body
	var slow *faults.Action
	if r.Method == http.MethodPost && !h.eng.inert() && len(bytes.TrimSpace(body)) > 0 {
		if h.eng.cfg.Guard != nil {
			h.noteSession(r)
		}
		f, a := h.eng.process(faults.ToServer, bytes.TrimSpace(body))
		p := &requestPort{h: h, w: w, r: r, request: f.Kind == faults.KindRequest, send: body, held: held}
		execute(&f, a, p)
		if p.done {
			return
		}
		send, slow = p.send, p.slow
	}
	resp, err := h.forward(r, send, held, slow)
	if err != nil {
		if r.Context().Err() != nil {
			return
		}
		http.Error(w, "mcpdrill: upstream unreachable", http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	ct := resp.Header.Get("Content-Type")
	jsonReply := strings.HasPrefix(ct, "application/json") && r.Method == http.MethodPost
	switch {
	case strings.HasPrefix(ct, "text/event-stream"):
		h.relayEvents(w, r, resp)
	case jsonReply && !h.eng.inert():
		// When no rule that can still fire could match this reply (by the
		// requests it may answer), nothing can change it, but the books
		// must be kept: cut through when its length is known; otherwise
		// store it (relayJSON), since its end is known only after its last
		// byte.
		if may, seq := h.eng.mayChangeAny(faults.ToClient); !may && resp.ContentLength > 0 {
			h.streamJSON(w, resp, seq)
		} else {
			h.relayJSON(w, r, resp)
		}
	default:
		// Not examined (or nothing can change): stream it through as it
		// comes.
		copyHeaders(w.Header(), resp.Header)
		w.WriteHeader(resp.StatusCode)
		copyBody(w, resp.Body, resp.ContentLength)
	}
}

// requestPort is a client POST's port: what is left to send upstream
// (send, dribbled when slow), unless done (answered or abandoned here).
type requestPort struct {
	h       *HTTP
	w       http.ResponseWriter
	r       *http.Request
	request bool
	send    []byte
	held    *heldBody // the request body's buffer, which send may lie in
	sent    bool      // deliver was called: a second call duplicates
	slow    *faults.Action
	done    bool
}

func (p *requestPort) forward() {}

func (p *requestPort) deliver(b []byte) {
	if p.sent { // a duplicate: the first copy goes now, its reply unread
		if resp, err := p.h.forward(p.r, p.send, p.held, nil); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	p.send, p.sent = b, true
}

func (p *requestPort) deliverCut(b []byte) { p.deliver(b) }
func (p *requestPort) extra([]byte)        {}

func (p *requestPort) replyBack(b []byte) {
	writeJSONBody(p.w, b)
	p.done = true
}

func (p *requestPort) drop() {
	if p.done {
		return
	}
	p.done = true
	if p.request {
		<-p.r.Context().Done() // the request vanished: the client waits
		return
	}
	p.w.WriteHeader(http.StatusAccepted)
}

func (p *requestPort) withhold() { p.drop() }

func (p *requestPort) delay(b []byte, d time.Duration) {
	if !sleepCtx(p.r.Context(), d) {
		p.done = true
		return
	}
	p.send = b
}

func (p *requestPort) dribble(b []byte, chunk int, gap time.Duration) {
	p.send, p.slow = b, &faults.Action{Kind: faults.Slow, Chunk: chunk, Gap: gap}
}

func (p *requestPort) disconnect() { panic(http.ErrAbortHandler) }
func (p *requestPort) kill()       { panic(http.ErrAbortHandler) }

// onlyWriter hides ReaderFrom: the ResponseWriter's would copy through a
// 32 KiB buffer of its own, in more writes.
type onlyWriter struct{ w io.Writer }

func (o onlyWriter) Write(p []byte) (int, error) { return o.w.Write(p) }

// copyBufs are the relay's 64 KiB copy buffers, shared across requests.
var copyBufs = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// copyBody copies a body of declared length n (-1: unknown) to w. A body
// declared at most 4 KiB long goes through a buffer of its own size (one
// byte more, to meet its end), made afresh; others through a pooled 64 KiB
// buffer: a pooled buffer sized for large bodies, taken for each small one,
// cost more at the tail (p99) of small replies than a fresh small one.
func copyBody(w io.Writer, body io.Reader, n int64) {
	if n >= 0 && n <= 4<<10 {
		_, _ = io.CopyBuffer(onlyWriter{w}, onlyReader{body}, make([]byte, n+1))
		return
	}
	bp := copyBufs.Get().(*[]byte)
	_, _ = io.CopyBuffer(onlyWriter{w}, onlyReader{body}, *bp)
	copyBufs.Put(bp)
}

// streamJSON is relayJSON's cut-through twin for a reply of known length
// when no rule could fire on it ([engine.mayChangeAny]): the body is
// written as it arrives and accounted for (index, peek, correlation,
// counts) before its last bytes are written, so the client cannot answer
// or reuse the id before the proxy's books are straight.
func (h *HTTP) streamJSON(w http.ResponseWriter, resp *http.Response, seq uint64) {
	copyHeaders(w.Header(), resp.Header)
	w.WriteHeader(resp.StatusCode)
	if resp.ContentLength > int64(h.maxFrame()) {
		copyBody(w, resp.Body, resp.ContentLength) // past the cap: relayed unexamined
		return
	}
	// The body is read straight into the buffer it is examined in
	// (newHeldBody), and written on from there.
	if !h.budget.take(resp.ContentLength) {
		copyBody(w, resp.Body, resp.ContentLength) // no room to hold it: relayed as it comes
		return
	}
	defer h.budget.give(resp.ContentLength)
	held := newHeldBody(resp.ContentLength)
	defer held.release()
	kept := held.b
	for got := 0; got < len(kept); {
		n, err := resp.Body.Read(kept[got:])
		if got+n == len(kept) {
			if body := bytes.TrimSpace(kept); len(body) > 0 {
				h.eng.account(faults.ToClient, body, seq)
			}
		}
		if n > 0 {
			if _, werr := w.Write(kept[got : got+n]); werr != nil {
				return
			}
		}
		got += n
		if err != nil {
			return // a short body: not a frame the engine saw
		}
	}
	// The body ends at its declared length: reading on meets its end at
	// once, which returns the upstream connection to the pool.
	copyBody(w, resp.Body, 0)
}

func (h *HTTP) maxFrame() int {
	if h.eng.cfg.MaxFrame > 0 {
		return h.eng.cfg.MaxFrame
	}
	return jsonrpc.DefaultMaxFrame
}

// forward sends the client's request upstream with body (dribbled when
// slow), which may lie in held (nil: it does not): held is kept from the
// pool until the transport has closed every copy of the body it was given.
func (h *HTTP) forward(r *http.Request, body []byte, held *heldBody, slow *faults.Action) (*http.Response, error) {
	var rd io.Reader
	if r.Method != http.MethodGet && r.Method != http.MethodHead && (len(body) > 0 || r.ContentLength >= 0) {
		rd = bytes.NewReader(body)
		if slow != nil {
			rd = &slowReader{b: body, chunk: slow.Chunk, gap: slow.Gap}
		}
	}
	req, err := http.NewRequestWithContext(r.Context(), r.Method, "", rd)
	if err != nil {
		return nil, err
	}
	req.URL = h.target(r)
	req.Host = req.URL.Host
	copyHeaders(req.Header, r.Header)
	req.Header.Del("Accept-Encoding")
	if rd != nil {
		req.ContentLength = int64(len(body))
		if held != nil && len(body) > 0 {
			req.Body = held.sent(rd)
			if req.GetBody != nil { // a retry on a fresh connection
				req.GetBody = func() (io.ReadCloser, error) { return held.sent(bytes.NewReader(body)), nil }
			}
		}
	}
	return h.client.Do(req)
}

// Serve serves the proxy on ln with net/http until ctx is done (then it
// closes ln and every connection and returns nil) or ln fails.
func (h *HTTP) Serve(ctx context.Context, ln net.Listener) error { return serve(ctx, ln, h, h.onError) }

// serve serves handler on ln with net/http until ctx is done.
func serve(ctx context.Context, ln net.Listener, handler http.Handler, onError func(error)) error {
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 30 * time.Second, // a client that never finishes its headers
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    1 << 20,
		ErrorLog:          log.New(errorWriter{onError}, "", 0),
	}
	stop := context.AfterFunc(ctx, func() { _ = srv.Close() })
	defer stop()
	err := srv.Serve(ln)
	if ctx.Err() != nil || errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return fmt.Errorf("proxy: serve: %w", err)
}

// errorWriter hands net/http's error log lines to onError (nil: dropped).
type errorWriter struct{ onError func(error) }

func (e errorWriter) Write(p []byte) (int, error) {
	if e.onError != nil {
		e.onError(errors.New(strings.TrimSpace(string(p))))
	}
	return len(p), nil
}

type slowReader struct {
	b     []byte
	chunk int
	gap   time.Duration
	began bool
}

func (s *slowReader) Read(p []byte) (int, error) {
	if len(s.b) == 0 {
		return 0, io.EOF
	}
	if s.began {
		time.Sleep(s.gap)
	}
	s.began = true
	n := copy(p[:min(len(p), s.chunk)], s.b)
	s.b = s.b[n:]
	return n, nil
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func writeJSONBody(w http.ResponseWriter, b []byte) { writeJSONStatus(w, http.StatusOK, b) }

// writeJSONStatus writes b as a JSON body of declared length with status.
func writeJSONStatus(w http.ResponseWriter, status int, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// relayJSON applies s2c faults to a JSON reply body (one message, or a
// batch treated as one frame).
func (h *HTTP) relayJSON(w http.ResponseWriter, r *http.Request, resp *http.Response) {
	limit := int64(h.maxFrame())
	held, charged, err := readBudgeted(h.budget, resp.Body, resp.ContentLength, limit+1)
	defer h.budget.give(charged)
	defer held.release()
	body := held.b
	copyHeaders(w.Header(), resp.Header)
	if errors.Is(err, errBudget) {
		if h.eng.cfg.Guard != nil {
			resp.Body.Close()
			w.Header().Del("Content-Length")
			w.Header().Set("Retry-After", "1")
			http.Error(w, "mcpdrill: no room in the proxy's memory budget to examine the reply", http.StatusServiceUnavailable)
			return
		}
		// No room to examine it: relayed as it comes.
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(body)
		copyBody(w, resp.Body, -1)
		return
	}
	trimmed := bytes.TrimSpace(body)
	if h.eng.cfg.Guard != nil && (err != nil || int64(len(body)) > limit) {
		// The guard cannot examine it: withheld, never relayed.
		resp.Body.Close()
		_, a := h.eng.unexamined(faults.ToClient, body[:min(len(body), jsonrpc.MaxHead)], err != nil)
		w.Header().Del("Content-Length")
		if a.Kind == faults.Replace {
			writeJSONBody(w, a.Bytes)
			return
		}
		w.WriteHeader(http.StatusBadGateway)
		return
	}
	if err != nil || int64(len(body)) > limit || len(trimmed) == 0 {
		// Unreadable or over the cap: relay what there is, unexamined.
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(body)
		_, _ = io.Copy(w, resp.Body)
		return
	}
	f, a := h.eng.process(faults.ToClient, trimmed)
	p := &replyPort{h: h, w: w, r: r, status: resp.StatusCode, body: body}
	execute(&f, a, p)
	p.finish()
}

// replyPort is a JSON reply body's port. What is delivered is written by
// finish: the original body as it came, one frame in its place, or more
// than one frame (a duplicate, an extra) as an event stream.
type replyPort struct {
	h      *HTTP
	w      http.ResponseWriter
	r      *http.Request
	status int
	body   []byte   // the reply as it came
	frames [][]byte // what to deliver
	orig   bool     // frames[0] is the frame itself, unchanged
	done   bool     // written (or abandoned) already
}

func (p *replyPort) forward() {
	p.frames, p.orig = append(p.frames, bytes.TrimSpace(p.body)), true
}

func (p *replyPort) deliver(b []byte) { p.frames = append(p.frames, b) }
func (p *replyPort) extra(b []byte)   { p.frames = append(p.frames, b) }

func (p *replyPort) deliverCut(b []byte) {
	// A short body: the declared length is the original's.
	p.w.Header().Set("Content-Length", strconv.Itoa(len(p.body)))
	p.w.WriteHeader(p.status)
	_, _ = p.w.Write(b)
	flush(p.w)
	panic(http.ErrAbortHandler)
}

func (p *replyPort) replyBack(b []byte) { p.h.replyUpstream(p.r, b) }

func (p *replyPort) drop() {
	p.done = true
	p.w.Header().Del("Content-Length")
	p.w.Header().Del("Content-Type")
	p.w.WriteHeader(http.StatusAccepted)
}

func (p *replyPort) withhold() {
	p.done = true
	<-p.r.Context().Done()
}

func (p *replyPort) delay(b []byte, d time.Duration) {
	if !sleepCtx(p.r.Context(), d) {
		p.done = true
		return
	}
	p.frames = append(p.frames, b)
}

func (p *replyPort) dribble(b []byte, chunk int, gap time.Duration) {
	p.done = true
	p.w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	p.w.WriteHeader(p.status)
	dribble(p.r.Context(), p.w, b, chunk, gap)
}

func (p *replyPort) disconnect() { panic(http.ErrAbortHandler) }
func (p *replyPort) kill()       { panic(http.ErrAbortHandler) }

// finish writes what was delivered.
func (p *replyPort) finish() {
	switch {
	case p.done || len(p.frames) == 0:
	case len(p.frames) == 1 && p.orig:
		p.w.WriteHeader(p.status)
		_, _ = p.w.Write(p.body)
	case len(p.frames) == 1:
		p.w.Header().Set("Content-Length", strconv.Itoa(len(p.frames[0])))
		p.w.WriteHeader(p.status)
		_, _ = p.w.Write(p.frames[0])
	default:
		p.w.Header().Del("Content-Length")
		p.w.Header().Set("Content-Type", "text/event-stream")
		p.w.WriteHeader(p.status)
		for _, fr := range p.frames {
			writeData(p.w, nil, fr)
		}
		flush(p.w)
	}
}

func flush(w http.ResponseWriter) { _ = http.NewResponseController(w).Flush() }

func dribble(ctx context.Context, w http.ResponseWriter, b []byte, chunk int, gap time.Duration) {
	for len(b) > 0 {
		n := min(chunk, len(b))
		if _, err := w.Write(b[:n]); err != nil {
			return
		}
		flush(w)
		b = b[n:]
		if len(b) > 0 && !sleepCtx(ctx, gap) {
			return
		}
	}
}

// replyUpstream posts a frame the proxy makes on the client's behalf (an
// injected error for a server request) to the upstream, with the same
// session headers.
func (h *HTTP) replyUpstream(r *http.Request, frame []byte) {
	// frame is sent after the handler returns: a copy of its own, since it
	// may lie in a body the handler held.
	req, err := http.NewRequestWithContext(context.WithoutCancel(r.Context()), http.MethodPost, h.target(r).String(), bytes.NewReader(bytes.Clone(frame)))
	if err != nil {
		return
	}
	for _, k := range []string{"Mcp-Session-Id", "Mcp-Protocol-Version", "Authorization"} {
		if v := r.Header.Get(k); v != "" {
			req.Header.Set(k, v)
		}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	go func() {
		if resp, err := h.client.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
}

// writeData writes an event of fields and data ([jsonrpc.WriteData]); a
// write error shows on the stream's next write.
func writeData(w io.Writer, fields [][]byte, data []byte) { _ = jsonrpc.WriteData(w, fields, data) }

// relayEvents relays an SSE stream, one fault decision per JSON-RPC message.
func (h *HTTP) relayEvents(w http.ResponseWriter, r *http.Request, resp *http.Response) {
	copyHeaders(w.Header(), resp.Header)
	w.Header().Del("Content-Length")
	w.WriteHeader(resp.StatusCode)
	flush(w)
	var mu sync.Mutex // serialises writes: timers write too
	var timers sync.WaitGroup
	write := func(fn func()) {
		mu.Lock()
		defer mu.Unlock()
		fn()
		flush(w)
	}
	if r.Method == http.MethodGet {
		// The client's notification stream: the proxy may speak on it too.
		ended := false // under mu: once set, w is never touched again
		remove := h.addStream(func(frame []byte) {
			mu.Lock()
			defer mu.Unlock()
			if !ended {
				writeData(w, nil, frame)
				flush(w)
			}
		})
		defer func() {
			mu.Lock()
			ended = true
			mu.Unlock()
			remove()
		}()
	}
	hang := false
	br := bufio.NewReaderSize(resp.Body, 64<<10)
	// An event past the cap (with room for its field lines) is not held
	// in memory: unguarded it is relayed as it comes, guarded it is
	// discarded and withheld.
	spill := func(b []byte) { write(func() { _, _ = w.Write(b) }) }
	if h.eng.cfg.Guard != nil {
		spill = func([]byte) {}
	}
	for {
		// Each event is read into a pooled buffer, taken once the event
		// has begun (an idle stream holds none) and given back once the
		// event is relayed: nothing keeps an event's bytes past that.
		_, _ = br.Peek(1)
		held := pooledBody()
		ev, err := jsonrpc.ReadEventInto(held.b, br, h.maxFrame()+jsonrpc.EventSlack, spill)
		if ev.Raw != nil {
			held.b = ev.Raw[:0]
		}
		if ev.Over {
			if h.eng.cfg.Guard != nil {
				_, a := h.eng.unexamined(faults.ToClient, ev.Head, false)
				if a.Kind == faults.Replace {
					write(func() { writeData(w, nil, a.Bytes) })
				}
			}
		} else if len(ev.Raw) > 0 {
			if h.relayEvent(w, r, ev, write, &timers) {
				hang = true
			}
		}
		held.release()
		if err != nil {
			break
		}
	}
	timers.Wait()
	if hang {
		<-r.Context().Done() // a withheld reply: the stream stays open, silent
	}
}

// relayEvent handles one event; it reports whether a reply was withheld.
func (h *HTTP) relayEvent(w http.ResponseWriter, r *http.Request, ev jsonrpc.RawEvent, write func(func()), timers *sync.WaitGroup) bool {
	if ev.Event.Event == "endpoint" {
		if nd := h.rewriteEndpoint(ev.Data); !bytes.Equal(nd, ev.Data) {
			write(func() { writeData(w, ev.Fields, nd) })
		} else {
			write(func() { _, _ = w.Write(ev.Raw) })
		}
		return false
	}
	complete := bytes.HasSuffix(ev.Raw, []byte("\n\n")) || bytes.HasSuffix(ev.Raw, []byte("\r\n\r\n"))
	if h.eng.cfg.Guard != nil && ev.HasData && (ev.Event.Event == "" || ev.Event.Event == "message") && (!complete || len(ev.Data) > h.maxFrame()) {
		// The guard cannot examine it (cut short, or over the cap):
		// withheld, never relayed.
		_, a := h.eng.unexamined(faults.ToClient, ev.Data[:min(len(ev.Data), jsonrpc.MaxHead)], !complete)
		if a.Kind == faults.Replace {
			write(func() { writeData(w, ev.Fields, a.Bytes) })
		}
		return false
	}
	if !ev.HasData || (ev.Event.Event != "" && ev.Event.Event != "message") || !complete || len(ev.Data) > h.maxFrame() {
		write(func() { _, _ = w.Write(ev.Raw) })
		return false
	}
	f, a := h.eng.process(faults.ToClient, ev.Data)
	p := &eventPort{h: h, w: w, r: r, ev: ev, write: write, timers: timers}
	execute(&f, a, p)
	return p.held
}

// eventPort is an SSE event's port; write serialises writes to the stream
// (timers write too).
type eventPort struct {
	h      *HTTP
	w      http.ResponseWriter
	r      *http.Request
	ev     jsonrpc.RawEvent
	write  func(func())
	timers *sync.WaitGroup
	held   bool // a reply was withheld: the stream stays open, silent
}

func (p *eventPort) forward()         { p.write(func() { _, _ = p.w.Write(p.ev.Raw) }) }
func (p *eventPort) deliver(b []byte) { p.write(func() { writeData(p.w, p.ev.Fields, b) }) }
func (p *eventPort) extra(b []byte)   { p.write(func() { writeData(p.w, nil, b) }) }

func (p *eventPort) deliverCut(b []byte) {
	p.write(func() {
		var buf bytes.Buffer
		for _, fl := range p.ev.Fields {
			buf.Write(fl)
		}
		buf.WriteString("data: ")
		buf.Write(b)
		_, _ = p.w.Write(buf.Bytes())
	})
	panic(http.ErrAbortHandler)
}

func (p *eventPort) replyBack(b []byte) { p.h.replyUpstream(p.r, b) }
func (p *eventPort) drop()              {}
func (p *eventPort) withhold()          { p.held = true }

// delay writes the event after d, built anew (b's memory is the next
// event's) in a pooled buffer when it is large, as linePort.delay does.
func (p *eventPort) delay(b []byte, d time.Duration) {
	out := newHeldBody(int64(len(b) + 256)) // the data, its "data: " prefixes and the fields, mostly
	out.b = jsonrpc.AppendData(out.b[:0], p.ev.Fields, b)
	p.timers.Add(1)
	time.AfterFunc(d, func() {
		defer p.timers.Done()
		p.write(func() { _, _ = p.w.Write(out.b) })
		out.release()
	})
}

func (p *eventPort) dribble(b []byte, chunk int, gap time.Duration) {
	out := jsonrpc.AppendData(nil, p.ev.Fields, b)
	p.write(func() { dribble(p.r.Context(), p.w, out, chunk, gap) })
}

func (p *eventPort) disconnect() { panic(http.ErrAbortHandler) }
func (p *eventPort) kill()       { panic(http.ErrAbortHandler) }

// rewriteEndpoint makes the legacy transport's endpoint URL point at the
// proxy: an upstream URL becomes a path the client resolves against us.
func (h *HTTP) rewriteEndpoint(data []byte) []byte {
	u, err := url.Parse(strings.TrimSpace(string(data)))
	if err != nil {
		return data
	}
	abs := h.upstream.ResolveReference(u)
	if abs.Host != h.upstream.Host {
		return data // another host: leave it
	}
	out := abs.EscapedPath()
	if abs.RawQuery != "" {
		out += "?" + abs.RawQuery
	}
	return []byte(out)
}
