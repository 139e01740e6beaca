package proxy

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
	"github.com/mcpdrill/mcpdrill/internal/mcp"
	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
)

// startBridge serves a bridge to the server role in this test binary.
func startBridge(t *testing.T, role string, cfg Config, env ...string) string {
	t.Helper()
	return startBridgeWith(t, BridgeOptions{Config: cfg}, role, env...)
}

// startBridgeWith is startBridge with more of the options set.
func startBridgeWith(t *testing.T, o BridgeOptions, role string, env ...string) string {
	t.Helper()
	_, url := serveBridge(t, o, nil, role, env...)
	return url
}

// serveBridge serves a bridge to the server role in this test binary,
// after tune (if any) has changed it, and returns it and its URL.
func serveBridge(t *testing.T, o BridgeOptions, tune func(*Bridge), role string, env ...string) (*Bridge, string) {
	t.Helper()
	o.Command, o.Env = self(role, env...)
	o.Stderr, o.OnError = testStderr(), func(err error) { t.Logf("bridge: %v", err) }
	b, err := NewBridge(o)
	if err != nil {
		t.Fatal(err)
	}
	if tune != nil {
		tune(b)
	}
	return b, "http://" + serveLoopback(t, b.Serve) + "/mcp"
}

// TestBridgeServesStdioOverHTTP: a stdio server (on the official Go SDK)
// served as Streamable HTTP by the bridge gives the project's client the
// same session as the server over stdio, and a second session gets a
// server of its own.
func TestBridgeServesStdioOverHTTP(t *testing.T) {
	argv, _ := self("sdk")
	direct := clientSession(t, argv, []string{roleEnv + "=sdk"})
	url := startBridge(t, "sdk", Config{})
	for range 2 {
		bridged := sessionOf(t, mcpConfigURL(url), testutil.Hang, "add", map[string]any{"a": 2, "b": 3})
		if direct != bridged {
			t.Fatalf("differs:\n%s\n---\n%s", direct, bridged)
		}
	}
}

// TestBridgeFaultsApply: the plan's faults apply to bridged sessions as
// over stdio.
func TestBridgeFaultsApply(t *testing.T) {
	url := startBridge(t, "sdk", Config{Plan: plan(t, "rules:\n  - fault: error\n    method: tools/call\n")})
	out := sessionOf(t, mcpConfigURL(url), 30*time.Second, "add", map[string]any{"a": 2, "b": 3})
	if strings.Count(out, `"error"`) < 3 {
		t.Fatalf("the error fault did not fire on every call:\n%s", out)
	}
}

// TestBridgeSessions: a 2026-07-28 request (no session) goes to the server
// that sessionless requests share; any other request without a session
// but initialize is 400; an unknown session is 404, a GET or DELETE
// without one 405, a foreign Origin 403.
func TestBridgeSessions(t *testing.T) {
	url := startBridge(t, "sdk", Config{})
	hdr := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
	if ex := do(http.DefaultClient, http.MethodPost, url, statelessHeader("ping"), []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)); ex.status != http.StatusOK || !strings.Contains(string(ex.body), `"id":1`) {
		t.Errorf("no session, 2026-07-28: %v", ex)
	}
	if ex := do(http.DefaultClient, http.MethodPost, url, hdr, []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)); ex.status != http.StatusBadRequest || !strings.Contains(string(ex.body), "missing Mcp-Session-Id") {
		t.Errorf("no session, legacy: %v", ex)
	}
	for _, m := range []string{http.MethodGet, http.MethodDelete} {
		if ex := do(http.DefaultClient, m, url, http.Header{"Accept": {"text/event-stream"}}, nil); ex.status != http.StatusMethodNotAllowed || ex.header.Get(sessionHeader) != "" {
			t.Errorf("%s without a session: %v", m, ex)
		}
	}
	for body, code := range map[string]string{`{"jsonrpc":"2.0","id":1,"method":`: "-32700", `{"jsonrpc":"2.0","id":2}`: "-32600", `{"jsonrpc":"1.0","id":3,"method":"ping"}`: "-32600"} {
		if ex := do(http.DefaultClient, http.MethodPost, url, hdr, []byte(body)); ex.status != http.StatusBadRequest || !strings.Contains(string(ex.body), code) {
			t.Errorf("%s: %v", body, ex)
		}
	}
	hdr.Set(sessionHeader, "nope")
	if ex := do(http.DefaultClient, http.MethodPost, url, hdr, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)); ex.status != http.StatusNotFound {
		t.Errorf("unknown session: %v", ex)
	}
	hdr.Del(sessionHeader)
	hdr.Set("Origin", "http://evil.example")
	if ex := do(http.DefaultClient, http.MethodPost, url, hdr, []byte(hostileInit)); ex.status != http.StatusForbidden {
		t.Errorf("foreign origin: %v", ex)
	}
}

func mcpConfigURL(url string) mcp.Config { return mcp.Config{URL: url} }

// statelessHeader is the header of a 2026-07-28 POST of method, whose body
// may lack _meta (the bench server reads none).
func statelessHeader(method string) http.Header {
	return http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}, "Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {method}}
}

// TestBridgeStatelessClientsDoNotCollide: two clients of the shared
// stateless process send calls under the same ids at once; each gets the
// answer to its own call.
func TestBridgeStatelessClientsDoNotCollide(t *testing.T) {
	url := startBridge(t, "sdk", Config{})
	var wg sync.WaitGroup
	for c := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), testutil.Hang)
			defer cancel()
			cl, err := mcp.Connect(ctx, mcp.Config{URL: url})
			if err != nil {
				t.Error(err)
				return
			}
			defer cl.Close()
			if cl.Session().Revision != "2026-07-28" {
				t.Errorf("client %d negotiated %s, not the stateless revision", c, cl.Session().Revision)
			}
			for i := range 20 {
				a := 1000*c + i
				m, err := cl.Call(ctx, "tools/call", map[string]any{"name": "add", "arguments": map[string]any{"a": a, "b": 0}})
				if err != nil {
					t.Error(err)
					return
				}
				if want := fmt.Sprintf(`"sum":%d`, a); !strings.Contains(string(m.Result), want) {
					t.Errorf("client %d call %d: %s, want %s", c, i, m.Result, want)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestBridgeFrameCap: a server frame over the frame cap is dropped unread,
// and the POST it answers is told at once rather than waiting out the
// reply timeout: 502, or on an event stream already begun (its status is
// sent) an error answer with the request's id. The session goes on
// reading the frames after it. A POST body over the cap is refused with
// 413 before it is read.
func TestBridgeFrameCap(t *testing.T) {
	const cap = 64 << 10
	c := &http.Client{Timeout: testutil.Hang}
	for _, tt := range []struct {
		name, accept string
		reply, ask   int // sizes of the reply, and of a request of the server's before it
		status       int
		body         string // what the answer holds
	}{
		{"reply under the cap", "application/json", cap - 1024, 0, http.StatusOK, `"result"`},
		{"reply under the cap, event stream", "application/json, text/event-stream", cap - 1024, 0, http.StatusOK, `"result"`},
		{"reply over the cap", "application/json", 4 * cap, 0, http.StatusBadGateway, "over the frame cap"},
		{"reply over the cap, event stream", "application/json, text/event-stream", 4 * cap, 0, http.StatusBadGateway, "over the frame cap"},
		// The server's request before the reply begins the stream.
		{"reply over the cap, event stream begun", "application/json, text/event-stream", 4 * cap, 200, http.StatusOK, `"code":-32603`},
		// A request of the server's over the cap, under the id the POST's
		// request travels under, fails nothing: the reply after it is the
		// POST's.
		{"server request over the cap", "application/json", 1024, 4 * cap, http.StatusOK, `"result"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			url := startBridgeWith(t, BridgeOptions{Config: Config{MaxFrame: cap}}, "bench-server", fmt.Sprintf("MCPDRILL_BENCH_SIZE=%d", tt.reply), fmt.Sprintf("MCPDRILL_BENCH_ASK=%d", tt.ask))
			hdr := statelessHeader("ping")
			hdr.Set("Accept", tt.accept)
			for i := range 3 {
				ex := do(c, http.MethodPost, url, hdr, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i))
				if ex.status != tt.status || !strings.Contains(string(ex.body), tt.body) {
					t.Fatalf("call %d: %v, want %d with %s", i, ex, tt.status, tt.body)
				}
				if tt.status == http.StatusOK && !strings.Contains(string(ex.body), fmt.Sprintf(`"id":%d`, i)) {
					t.Fatalf("call %d: the answer has another id: %.200s", i, ex.body)
				}
			}
			big := []byte(`{"jsonrpc":"2.0","id":9,"method":"ping","params":{"pad":"` + strings.Repeat("p", cap) + `"}}`)
			if ex := do(c, http.MethodPost, url, hdr, big); ex.status != http.StatusRequestEntityTooLarge {
				t.Fatalf("a body over the cap: %v", ex)
			}
		})
	}
}

// TestBridgeMemoryBudget: a POST body that does not fit in the bridge's
// memory budget is refused with 503, and so is an answer, an event stream
// not begun included. What fits is served.
func TestBridgeMemoryBudget(t *testing.T) {
	pad := func(n int) []byte {
		return []byte(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("p", n) + `"}}`)
	}
	for _, tt := range []struct {
		name, accept string
		body, reply  int
		status       int
		want         string
	}{
		{"body within, reply within", "application/json", 16 << 10, 100, http.StatusOK, `"result"`},
		{"body over", "application/json", 40 << 10, 100, http.StatusServiceUnavailable, "memory budget"},
		{"reply over", "application/json", 100, 40 << 10, http.StatusServiceUnavailable, "memory budget"},
		{"reply over, event stream", "application/json, text/event-stream", 100, 40 << 10, http.StatusServiceUnavailable, "memory budget"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			url := startBridgeWith(t, BridgeOptions{MemoryBudget: 32 << 10}, "bench-server", fmt.Sprintf("MCPDRILL_BENCH_SIZE=%d", tt.reply))
			hdr := statelessHeader("ping")
			hdr.Set("Accept", tt.accept)
			if ex := do(http.DefaultClient, http.MethodPost, url, hdr, pad(tt.body)); ex.status != tt.status || !strings.Contains(string(ex.body), tt.want) {
				t.Fatalf("%v, want %d with %s", ex, tt.status, tt.want)
			}
		})
	}
}

// TestBridgeBodyFreedOnceSent: a POST's body leaves the memory budget once
// it is written to the server, not when the answer comes, so a long call
// keeps none of it. The echoing server never answers: it sends each
// request back, which answers nothing and travels on the event stream of
// the initialize still waiting, where the test sees that the call's
// request reached the server while the call waits. The reply timeout is
// testutil.Hang, so the call is still waiting whatever the load; its
// client then leaves. (The reply timeout itself: TestBridgeReplyTimeout.)
func TestBridgeBodyFreedOnceSent(t *testing.T) {
	argv, env := self("cat")
	b, err := NewBridge(BridgeOptions{Command: argv, Env: env, Stderr: testStderr(), ReplyTimeout: testutil.Hang})
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + serveLoopback(t, b.Serve) + "/mcp"
	used := func() int64 {
		b.budget.mu.Lock()
		defer b.budget.mu.Unlock()
		return b.budget.used
	}
	opened := openEchoSession(t, url)
	defer opened.Body.Close()
	callCtx, leave := context.WithCancel(t.Context())
	defer leave()
	done := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(callCtx, http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x","arguments":{"pad":"`+strings.Repeat("p", 512<<10)+`"}}}`))
		req.Header = http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json"}, sessionHeader: {opened.Header.Get(sessionHeader)}}
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		done <- err
	}()
	br := bufio.NewReader(opened.Body)
	for {
		ev, err := jsonrpc.ReadEvent(br, 1<<20, func([]byte) {})
		if err != nil {
			t.Fatalf("the call's request never reached the server: %v", err)
		}
		if bytes.Contains(ev.Data, []byte(`"tools/call"`)) {
			break
		}
	}
	for deadline := time.Now().Add(testutil.Hang); used() != 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d bytes still charged while the call waits for its answer", used())
		}
	}
	select {
	case err := <-done:
		t.Fatalf("the call ended while it waited for its answer: %v", err)
	default:
	}
	leave()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("the call, after its client left: %v", err)
	}
}

// TestBridgeReplyTimeout: a call the server never answers ends with 504
// when the reply timeout runs out.
func TestBridgeReplyTimeout(t *testing.T) {
	argv, env := self("cat")
	b, err := NewBridge(BridgeOptions{Command: argv, Env: env, Stderr: testStderr(), ReplyTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + serveLoopback(t, b.Serve) + "/mcp"
	opened := openEchoSession(t, url)
	defer opened.Body.Close()
	hdr := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json"}, sessionHeader: {opened.Header.Get(sessionHeader)}}
	if ex := do(http.DefaultClient, http.MethodPost, url, hdr, []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x"}}`)); ex.status != http.StatusGatewayTimeout {
		t.Fatalf("the unanswered call: %v", ex)
	}
}

// openEchoSession opens a session on a bridge to the echoing server (role
// cat): its initialize is never answered, and its event stream stays open
// with what the server sends back.
func openEchoSession(t *testing.T, url string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(hostileInit))
	req.Header = http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
	opened, err := http.DefaultClient.Do(req)
	if err != nil || opened.Header.Get(sessionHeader) == "" {
		t.Fatalf("initialize: %v %v", opened, err)
	}
	return opened
}

// TestBridgeBudgetGivenBack: every byte the bridge charges to its budget
// for a frame is given back: answers written, unasked frames written on a
// stream, and those still queued when the stream's client leaves.
func TestBridgeBudgetGivenBack(t *testing.T) {
	argv, env := self("bench-server", fmt.Sprintf("MCPDRILL_BENCH_SIZE=%d", 1<<20))
	b, err := NewBridge(BridgeOptions{Command: argv, Env: env, Stderr: testStderr()})
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + serveLoopback(t, b.Serve) + "/mcp"
	hdr := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json"}}
	ex := do(http.DefaultClient, http.MethodPost, url, hdr, []byte(hostileInit))
	sid := ex.header.Get(sessionHeader)
	if ex.status != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %v", ex)
	}
	hdr.Set(sessionHeader, sid)
	// A GET stream that reads one event and leaves with the rest queued:
	// the bench server answers each notification with a 1 MiB frame the
	// bridge cannot route (its id is empty), so it goes to the stream.
	ctx, cancel := context.WithCancel(t.Context())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header = http.Header{"Accept": {"text/event-stream"}, sessionHeader: {sid}}
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET: %v %v", resp, err)
	}
	for range 24 {
		if ex := do(http.DefaultClient, http.MethodPost, url, hdr, []byte(`{"jsonrpc":"2.0","method":"notifications/progress"}`)); ex.status != http.StatusAccepted {
			t.Fatalf("notification: %v", ex)
		}
	}
	if _, err := jsonrpc.ReadEvent(bufio.NewReader(resp.Body), 2<<20, func([]byte) {}); err != nil {
		t.Fatal(err)
	}
	cancel()
	resp.Body.Close()
	for i := range 4 {
		hdr.Set("Accept", []string{"application/json", "application/json, text/event-stream"}[i%2])
		if ex := do(http.DefaultClient, http.MethodPost, url, hdr, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i)); ex.status != http.StatusOK || len(ex.body) < 1<<20 {
			t.Fatalf("call %d: %v", i, ex)
		}
	}
	used := func() int64 {
		b.budget.mu.Lock()
		defer b.budget.mu.Unlock()
		return b.budget.used
	}
	for deadline := time.Now().Add(testutil.Hang); used() != 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d bytes still charged after every response ended", used())
		}
	}
}

// BenchmarkBridge: one POST and its answer through the bridge (in this
// process) to the bench server (a child over stdio), JSON bodies, at each
// benchmark load; sessionless, so each request and answer also has its id
// replaced. For comparing builds: the client's own costs are in the
// figures too.
func BenchmarkBridge(b *testing.B) {
	for _, l := range benchLoads {
		b.Run(l.name(), func(b *testing.B) {
			argv, env := self("bench-server", fmt.Sprintf("MCPDRILL_BENCH_SIZE=%d", l.replySize()))
			br, err := NewBridge(BridgeOptions{Command: argv, Env: env, Stderr: testStderr()})
			if err != nil {
				b.Fatal(err)
			}
			url := "http://" + serveLoopback(b, br.Serve) + "/mcp"
			body := l.call(1)
			hdr := statelessHeader("tools/call")
			hdr.Set("Accept", "application/json")
			hdr.Set("Mcp-Name", "blob")
			call := func() {
				if ex := do(http.DefaultClient, http.MethodPost, url, hdr, body); ex.status != http.StatusOK || len(ex.body) < l.replySize() {
					b.Fatalf("%v, a body of %d bytes", ex.err, len(ex.body))
				}
			}
			call() // the session's server starts
			b.SetBytes(int64(len(body) + l.replySize()))
			b.ResetTimer()
			for range b.N {
				call()
			}
		})
	}
}
