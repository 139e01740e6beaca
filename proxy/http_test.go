package proxy

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdrill/mcpdrill/faults"
	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
	"github.com/mcpdrill/mcpdrill/internal/mcp"
	"github.com/mcpdrill/mcpdrill/internal/mcptest/testbedserver"
	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
	"github.com/mcpdrill/mcpdrill/internal/testbed"
)

// testProxy is a proxy served by its own server (HTTP.Serve) on loopback.
type testProxy struct {
	URL    string
	client *http.Client
	h      *HTTP
}

// Client returns a client for the proxy whose idle connections are closed
// when the test ends.
func (p *testProxy) Client() *http.Client { return p.client }

// startHTTPProxy serves a proxy to upstream with HTTP.Serve on loopback,
// as `mcpdrill wrap --listen` does.
func startHTTPProxy(t testing.TB, upstream string, cfg Config) *testProxy {
	t.Helper()
	h, err := NewHTTP(HTTPOptions{Config: cfg, Upstream: upstream, OnError: func(err error) { t.Errorf("proxy: %v", err) }})
	if err != nil {
		t.Fatal(err)
	}
	return serveProxy(t, h)
}

// serveProxy serves h with HTTP.Serve until the test ends.
func serveProxy(t testing.TB, h *HTTP) *testProxy {
	t.Helper()
	addr := serveLoopback(t, h.Serve)
	c := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(c.CloseIdleConnections) // before the server stops: cleanups run last first
	return &testProxy{URL: "http://" + addr, client: c, h: h}
}

// serveLoopback runs serve (HTTP.Serve, Bridge.Serve) on a loopback
// listener until the test ends, then cancels it and checks that it
// returned cleanly. It returns the listener's address.
func serveLoopback(t testing.TB, serve func(context.Context, net.Listener) error) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return ln.Addr().String()
}

// exchange is one request/response as the client saw it.
type exchange struct {
	status int
	header http.Header
	body   []byte
	err    error
}

var passHeaders = []string{"Content-Type", "Mcp-Session-Id", "Mcp-Protocol-Version", "X-Upstream", "Cache-Control"}

func (e exchange) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d err=%v", e.status, e.err)
	for _, k := range passHeaders {
		if v := e.header.Get(k); v != "" {
			fmt.Fprintf(&b, " %s=%q", k, v)
		}
	}
	fmt.Fprintf(&b, "\n%s", e.body)
	return b.String()
}

func do(c *http.Client, method, url string, hdr http.Header, body []byte) exchange {
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		return exchange{err: err}
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := c.Do(req)
	if err != nil {
		return exchange{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return exchange{status: resp.StatusCode, header: resp.Header, body: b, err: err}
}

// randomUpstream answers each POST with a reply derived from a seeded
// generator: JSON bodies or SSE streams with varied framing (ids, event
// names, comments, CRLF, multi-line data, retry), echoing the request
// body inside. It records what it received.
type randomUpstream struct {
	mu   sync.Mutex
	seen []string
}

func (u *randomUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	u.mu.Lock()
	u.seen = append(u.seen, fmt.Sprintf("%s %s %s|%s|%s|%s|%q", r.Method, r.URL.RequestURI(), r.Header.Get("Mcp-Session-Id"),
		r.Header.Get("Mcp-Method"), r.Header.Get("Mcp-Name"), r.Header.Get("Mcp-Protocol-Version"), body))
	u.mu.Unlock()
	seed := uint64(len(body))
	for _, c := range body {
		seed = seed*31 + uint64(c)
	}
	rng := rand.New(rand.NewPCG(seed, 5))
	w.Header().Set("Mcp-Session-Id", "sess-1")
	w.Header().Set("X-Upstream", "yes")
	switch {
	case r.Method == http.MethodDelete:
		w.WriteHeader(http.StatusNoContent)
	case r.Method == http.MethodGet || rng.IntN(2) == 0:
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		var b bytes.Buffer
		b.WriteString(": hello\n\n")
		for i := 0; i < 1+rng.IntN(4); i++ {
			eol := []string{"\n", "\r\n"}[rng.IntN(2)]
			if rng.IntN(2) == 0 {
				fmt.Fprintf(&b, "id: %d%s", i, eol)
			}
			if rng.IntN(3) == 0 {
				b.WriteString("event: message" + eol)
			}
			if rng.IntN(4) == 0 {
				b.WriteString("retry: 1000" + eol)
			}
			switch rng.IntN(4) {
			case 0:
				fmt.Fprintf(&b, `data:{"jsonrpc":"2.0","method":"notifications/progress","params":{"n":%d}}%s`, i, eol)
			case 1:
				fmt.Fprintf(&b, "data: {\"jsonrpc\":\"2.0\",%sdata: \"id\":%d,\"result\":{}}%s", eol, i, eol)
			case 2:
				fmt.Fprintf(&b, "data: %s%s", bytes.TrimSpace(body), eol)
			case 3:
				fmt.Fprintf(&b, "data: not json %d%s", i, eol)
			}
			b.WriteString(eol)
		}
		_, _ = w.Write(b.Bytes())
	default:
		w.Header().Set("Content-Type", "application/json")
		if rng.IntN(5) == 0 {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"result":{"echo":%s}}`, rng.IntN(100), bytes.TrimSpace(body))
	}
}

// TestHTTPPassThroughIsByteIdentical: with no fault firing, status, the
// headers that matter and every body byte are what a direct client gets, and
// the upstream receives the same requests.
func TestHTTPPassThroughIsByteIdentical(t *testing.T) {
	direct := &randomUpstream{}
	dsrv := httptest.NewServer(direct)
	defer dsrv.Close()
	proxied := &randomUpstream{}
	psrv := httptest.NewServer(proxied)
	defer psrv.Close()
	never := plan(t, "rules:\n  - fault: corrupt\n    direction: any\n    probability: 0\n")
	for name, cfg := range map[string]Config{"no plan": {}, "never fires": {Plan: never}} {
		t.Run(name, func(t *testing.T) {
			direct.seen, proxied.seen = nil, nil
			px := startHTTPProxy(t, psrv.URL+"/mcp", cfg)
			traffic := randomTraffic(11, 40)
			c := &http.Client{Timeout: testutil.Hang}
			for i, frame := range bytes.Split(traffic, []byte("\n")) {
				hdr := http.Header{
					"Content-Type":         {"application/json"},
					"Accept":               {"application/json, text/event-stream"},
					"Mcp-Session-Id":       {"sess-1"},
					"Mcp-Protocol-Version": {"2026-07-28"},
					"Mcp-Method":           {"tools/call"},
					"Mcp-Name":             {"=?base64?ZWNobyDDqQ==?="},
				}
				method := http.MethodPost
				switch i % 13 {
				case 5:
					method = http.MethodGet
				case 12:
					method = http.MethodDelete
				}
				body := frame
				if method != http.MethodPost {
					body = nil
				}
				a := do(c, method, dsrv.URL+"/mcp", hdr, body)
				b := do(c, method, px.URL+"/mcp", hdr, body)
				if a.String() != b.String() {
					t.Fatalf("exchange %d (%s) differs:\ndirect:  %s\nproxied: %s", i, method, a, b)
				}
			}
			if fmt.Sprint(direct.seen) != fmt.Sprint(proxied.seen) {
				t.Fatalf("upstream saw different requests:\n%v\n%v", direct.seen, proxied.seen)
			}
		})
	}
}

// testbedServer serves the testbed's good profile, replying in the style
// reply (json or sse), until the test ends.
func testbedServer(t testing.TB, reply string) *httptest.Server {
	t.Helper()
	return testbedserver.HTTP(t, testbed.Options{Profile: "good", Seed: 1, Reply: reply})
}

// mcpSession runs a fixed session with the project's client against an
// HTTP endpoint and renders what it saw.
func mcpSession(t *testing.T, url string) string {
	t.Helper()
	return sessionOf(t, mcp.Config{URL: url}, testutil.Hang, "search", map[string]any{"query": "proxy"})
}

// sessionOf runs a fixed session with the project's client: connect, list
// the tools, call echo, the named tool with its arguments and an unknown
// tool. It renders the revision and every reply as received, so a session
// through the proxy can be compared with a direct one byte for byte.
func sessionOf(t *testing.T, cfg mcp.Config, timeout time.Duration, tool string, args map[string]any) string {
	t.Helper()
	// Every wait of the session is the whole session's: the server answers
	// each request, so only a hang reaches one, and a detection probe that
	// timed out on a loaded machine would shift the ids of a session.
	if cfg.RequestTimeout == 0 {
		cfg.RequestTimeout = timeout
	}
	if cfg.DiscoverTimeout == 0 {
		cfg.DiscoverTimeout = timeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	c, err := mcp.Connect(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var b strings.Builder
	fmt.Fprintf(&b, "%+v\n", c.Session().Revision)
	list, err := c.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, raw := range list.Raw {
		b.Write(raw)
	}
	for _, call := range []map[string]any{
		{"name": "echo", "arguments": map[string]any{"text": "hi"}},
		{"name": tool, "arguments": args},
		{"name": "nope", "arguments": map[string]any{}},
	} {
		m, err := c.Call(ctx, "tools/call", call)
		if err != nil {
			fmt.Fprintf(&b, "\nerr %v", err)
			continue
		}
		fmt.Fprintf(&b, "\n%s", m.Raw)
	}
	return b.String()
}

// TestRealClientThroughHTTP: the project's client against the testbed,
// directly and through the proxy, JSON and SSE replies: identical sessions.
func TestRealClientThroughHTTP(t *testing.T) {
	for _, reply := range []string{"json", "sse"} {
		t.Run(reply, func(t *testing.T) {
			up := testbedServer(t, reply)
			px := startHTTPProxy(t, up.URL+"/mcp", Config{Plan: plan(t, "rules:\n  - fault: drop\n    method: nope\n")})
			direct := mcpSession(t, up.URL+"/mcp")
			proxied := mcpSession(t, px.URL+"/mcp")
			if direct != proxied {
				t.Fatalf("proxied session differs:\n%s\n---\n%s", direct, proxied)
			}
			if !strings.Contains(direct, `"name":"echo"`) {
				t.Fatalf("no tools listed:\n%s", direct)
			}
		})
	}
}

// TestHTTPLegacySSE: the 2024-11-05 transport through the proxy: the
// endpoint event points back at the proxy and replies come on the stream.
func TestHTTPLegacySSE(t *testing.T) {
	up := testbedServer(t, "")
	px := startHTTPProxy(t, up.URL+"/mcp", Config{Plan: plan(t, "rules:\n  - fault: error\n    method: tools/call\n")})
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Hang)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, px.URL+"/sse", nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	next := func() jsonrpc.RawEvent {
		for {
			ev, err := jsonrpc.ReadEvent(br, 0, nil)
			if err != nil {
				t.Fatalf("stream: %v", err)
			}
			if ev.HasData {
				return ev
			}
		}
	}
	ep := next()
	if ep.Event.Event != "endpoint" || !strings.HasPrefix(string(ep.Data), "/message") {
		t.Fatalf("endpoint event = %q %q", ep.Event.Event, ep.Data)
	}
	post := func(body string) {
		r, err := http.Post(px.URL+string(ep.Data), "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode/100 != 2 {
			t.Fatalf("POST status %d", r.StatusCode)
		}
	}
	post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if ev := next(); !strings.Contains(string(ev.Data), `"protocolVersion":"2024-11-05"`) {
		t.Fatalf("initialize reply = %s", ev.Data)
	}
	post(initNote)
	post(echoCall)
	if ev := next(); !strings.Contains(string(ev.Data), `"error"`) || !strings.Contains(string(ev.Data), `"id":2`) {
		t.Fatalf("want the injected error on the stream, got %s", ev.Data)
	}
}

func TestHTTPOriginCheck(t *testing.T) {
	up := testbedServer(t, "json")
	h, err := NewHTTP(HTTPOptions{Upstream: up.URL + "/mcp", AllowOrigins: []string{"https://app.example"}})
	if err != nil {
		t.Fatal(err)
	}
	px := httptest.NewServer(h)
	defer px.Close()
	for origin, refused := range map[string]bool{"https://evil.example": true, "http://localhost:3000": false, "https://app.example": false, "": false} {
		hdr := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
		if origin != "" {
			hdr.Set("Origin", origin)
		}
		e := do(http.DefaultClient, http.MethodPost, px.URL+"/mcp", hdr, []byte(initReq))
		// The proxy's own refusal; an allowed origin reaches the upstream,
		// which makes its own decision.
		if got := e.status == 403 && strings.Contains(string(e.body), "mcpdrill: origin"); got != refused {
			t.Errorf("Origin %q: refused by the proxy = %v, want %v (%s)", origin, got, refused, e)
		}
	}
	if _, err := NewHTTP(HTTPOptions{Upstream: "ftp://x"}); err == nil {
		t.Error("non-HTTP upstream accepted")
	}
}

var _ = faults.ToClient

// TestHTTPStreamsEndWhenClientLeaves: through the proxy's own server, a
// client that leaves a GET event stream (with and without a plan, so
// relayed per event and copied through) ends the upstream exchange: the
// upstream sees its request's context end, so no stream or goroutine is
// left behind while the upstream stays silent.
func TestHTTPStreamsEndWhenClientLeaves(t *testing.T) {
	upstreamGone := make(chan string, 4)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if r.Method == http.MethodGet {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			_, _ = io.WriteString(w, ": open\n\n")
			http.NewResponseController(w).Flush()
		} else {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
		}
		select {
		case <-r.Context().Done():
			upstreamGone <- r.Method
		case <-time.After(testutil.Hang):
			upstreamGone <- r.Method + " still open after the client left"
		}
	}))
	defer up.Close()
	for _, c := range []struct {
		name, plan, method string
	}{
		{"stream, no plan", "", http.MethodGet},
		{"stream, per event", "rules:\n  - fault: error\n    method: tools/call\n", http.MethodGet},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := Config{}
			if c.plan != "" {
				cfg.Plan = plan(t, c.plan)
			}
			px := startHTTPProxy(t, up.URL+"/mcp", cfg)
			ctx, cancel := context.WithCancel(context.Background())
			req, _ := http.NewRequestWithContext(ctx, c.method, px.URL, nil)
			req.Header.Set("Accept", "text/event-stream")
			resp, err := px.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
				t.Fatalf("first stream line: %v", err)
			}
			cancel() // the client leaves
			resp.Body.Close()
			if got := <-upstreamGone; got != c.method {
				t.Fatal(got)
			}
		})
	}
}
