package clientdrill

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/target"
)

// httpPath is where the scenario server serves Streamable HTTP.
const httpPath = "/mcp"

// httpServer serves a scenario over Streamable HTTP on a loopback port.
type httpServer struct {
	w   *world
	ctx context.Context
	ln  net.Listener
	srv *http.Server
	url string

	mu       sync.Mutex
	sessions map[string]int
}

// listenHTTP starts the listener on 127.0.0.1 and a port the system picks.
func listenHTTP(ctx context.Context, w *world) (*httpServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("clientdrill: listen: %w", err)
	}
	h := &httpServer{w: w, ctx: ctx, ln: ln, sessions: map[string]int{}, url: "http://" + ln.Addr().String() + httpPath}
	h.srv = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	go func() { _ = h.srv.Serve(ln) }()
	return h, nil
}

func (h *httpServer) close() { _ = h.srv.Close() }

// hostOK accepts the listener's own address, or localhost at its port.
func (h *httpServer) hostOK(host string) bool {
	addr := h.ln.Addr().String()
	if host == addr {
		return true
	}
	_, port, _ := net.SplitHostPort(addr)
	return host == "localhost:"+port
}

// originOK accepts no Origin, or one whose host is loopback.
func originOK(origin string) bool { return origin == "" || target.LoopbackOrigin(origin) }

func (h *httpServer) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	if !h.hostOK(r.Host) || !originOK(r.Header.Get("Origin")) {
		http.Error(rw, "forbidden", http.StatusForbidden)
		return
	}
	if r.URL.Path != httpPath {
		http.NotFound(rw, r)
		return
	}
	switch r.Method {
	case http.MethodPost:
		h.post(rw, r)
	case http.MethodDelete:
		sid := r.Header.Get("Mcp-Session-Id")
		h.mu.Lock()
		conn, ok := h.sessions[sid]
		delete(h.sessions, sid)
		h.mu.Unlock()
		if !ok {
			http.Error(rw, "session not found", http.StatusNotFound)
			return
		}
		h.w.closeConn(conn)
		rw.WriteHeader(http.StatusOK)
	default:
		// No standalone GET stream: the specification lets a server refuse it.
		rw.Header().Set("Allow", "POST, DELETE")
		http.Error(rw, "method not allowed", http.StatusMethodNotAllowed)
	}
}

func newSessionID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (h *httpServer) post(rw http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(rw, r.Body, maxFrame))
	if err != nil {
		http.Error(rw, "body too large or unreadable", http.StatusRequestEntityTooLarge)
		return
	}
	sid := r.Header.Get("Mcp-Session-Id")
	var conn int
	if isInitialize(body) {
		if conn = h.w.openConn(); conn == 0 {
			http.Error(rw, "too many sessions", http.StatusServiceUnavailable)
			return
		}
		sid = newSessionID()
		h.mu.Lock()
		h.sessions[sid] = conn
		h.mu.Unlock()
		rw.Header().Set("Mcp-Session-Id", sid)
	} else {
		h.mu.Lock()
		c, ok := h.sessions[sid]
		h.mu.Unlock()
		switch {
		case sid == "":
			http.Error(rw, "missing Mcp-Session-Id", http.StatusBadRequest)
			return
		case !ok:
			http.Error(rw, "session not found", http.StatusNotFound)
			return
		}
		conn = c
	}
	p := h.w.handle(conn, body)
	switch {
	case p == nil || p.accepted:
		rw.WriteHeader(http.StatusAccepted)
		return
	case p.exit:
		// The server dies: every session is gone and this response never
		// completes.
		h.mu.Lock()
		clear(h.sessions)
		h.mu.Unlock()
		panic(http.ErrAbortHandler)
	case p.hold:
		if p.written != nil {
			defer close(p.written)
		}
		select {
		case <-p.release: // a nil release never fires
		case <-r.Context().Done():
			return
		}
	}
	h.w.waitLate(r.Context(), p)
	if p.delay > 0 {
		t := time.NewTimer(p.delay)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}
	if p.raw != nil {
		rw.Header().Set("Content-Type", "application/json")
		if p.cut {
			rw.Header().Set("Content-Length", strconv.Itoa(2*len(p.raw)))
		}
		rw.WriteHeader(http.StatusOK)
		_, _ = rw.Write(p.raw)
		if p.cut {
			if f, ok := rw.(http.Flusher); ok {
				f.Flush()
			}
			panic(http.ErrAbortHandler)
		}
		return
	}
	if p.ask == nil && !p.sse && len(p.frames) == 1 {
		rw.Header().Set("Content-Type", "application/json")
		_, _ = rw.Write(p.frames[0])
		return
	}
	rw.Header().Set("Content-Type", "text/event-stream")
	rw.Header().Set("Cache-Control", "no-cache")
	rw.WriteHeader(http.StatusOK)
	event := func(f []byte) error {
		if _, err := fmt.Fprintf(rw, "event: message\ndata: %s\n\n", f); err != nil {
			return err
		}
		if fl, ok := rw.(http.Flusher); ok {
			fl.Flush()
		}
		return nil
	}
	if p.ask != nil {
		if event(p.ask) != nil {
			return
		}
		t := time.NewTimer(askWait)
		select {
		case <-p.answered:
		case <-t.C:
		case <-r.Context().Done():
		}
		t.Stop()
	}
	for _, f := range p.frames {
		if event(f) != nil {
			return
		}
	}
}

// isInitialize peeks whether a body is an initialize request.
func isInitialize(body []byte) bool {
	var m struct {
		Method string `json:"method"`
	}
	return json.Unmarshal(body, &m) == nil && m.Method == "initialize"
}
