package proxy

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/rawconn"
)

// TestH1PoolConnections: POSTs reuse one upstream connection; after the
// upstream drops its idle connections the next POST still succeeds on a
// new one (no 502 from a dead pooled connection); a reply closed early or
// marked "Connection: close" is not reused.
func TestH1PoolConnections(t *testing.T) {
	var conns atomic.Int64
	up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if r.URL.Query().Get("close") != "" {
			w.Header().Set("Connection", "close")
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	}))
	up.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	up.Start()
	defer up.Close()
	h, err := NewHTTP(HTTPOptions{Upstream: up.URL + "/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	px := httptest.NewServer(h)
	defer px.Close()
	post := func(path string) {
		t.Helper()
		ex := do(px.Client(), http.MethodPost, px.URL+path, http.Header{"Content-Type": {"application/json"}}, []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		if ex.err != nil || ex.status != http.StatusOK || !strings.Contains(string(ex.body), `"result"`) {
			t.Fatalf("POST %s: %v", path, ex)
		}
	}
	for range 5 {
		post("/")
	}
	if n := conns.Load(); n != 1 {
		t.Fatalf("5 sequential POSTs used %d upstream connections, want 1", n)
	}
	if h.h1 == nil {
		t.Skip("no idle-connection peek on this platform: POSTs go through http.Transport, not h1Pool")
	}
	up.CloseClientConnections()
	// The next POST must find the pooled connection dead, not reuse it (a
	// reused dead connection fails after the request was written: a 502).
	waitIdleDead(t, h.h1)
	post("/")
	if n := conns.Load(); n != 2 {
		t.Fatalf("after the upstream closed its connections: %d connections, want 2", n)
	}
	post("/?close=1")
	post("/")
	if n := conns.Load(); n != 3 {
		t.Fatalf("a Connection: close reply was reused: %d connections, want 3", n)
	}
}

// waitIdleDead waits (a few seconds at most) until p holds an idle
// connection and every one it holds has seen the upstream's FIN, so the
// test does not depend on how fast the close crosses loopback.
func waitIdleDead(t *testing.T, p *h1Pool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		p.mu.Lock()
		idle := slices.Clone(p.idle)
		p.mu.Unlock()
		dead := len(idle) > 0
		for _, pc := range idle {
			dead = dead && !rawconn.IdleAlive(pc.c)
		}
		if dead {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 5s the pool holds %d idle connection(s), not all closed by the upstream", len(idle))
		}
		time.Sleep(wait)
	}
}

// TestH1PoolCancel: a client that goes away mid-reply ends the upstream
// exchange (the upstream handler sees its request cancelled).
func TestH1PoolCancel(t *testing.T) {
	gone := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		close(gone)
	}))
	defer up.Close()
	px := startHTTPProxy(t, up.URL+"/mcp", Config{})
	ctx, cancel := context.WithCancel(t.Context())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, px.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`))
	resp, err := px.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	if _, err := resp.Body.Read(buf); err != nil {
		t.Fatal(err)
	}
	cancel()
	resp.Body.Close()
	select {
	case <-gone:
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream request was not cancelled when the client went away")
	}
}
