package testbed

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
)

func startHTTP(t *testing.T, o Options) *httptest.Server {
	t.Helper()
	h, err := NewHandler(o)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

type resp struct {
	status int
	header http.Header
	body   []byte
	events []jsonrpc.Event
	frame  map[string]any // the JSON body, or the last SSE event's data
}

func do(t *testing.T, method, url, body string, hdr map[string]string) resp {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), waitReply)
	defer cancel()
	r, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		if v == "" {
			r.Header.Del(k)
		} else {
			r.Header.Set(k, v)
		}
	}
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	out := resp{status: res.StatusCode, header: res.Header, body: b}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		sr := jsonrpc.NewSSEReader(bytes.NewReader(b), 0)
		for {
			ev, err := sr.Next()
			if err != nil {
				break
			}
			out.events = append(out.events, ev)
		}
		if n := len(out.events); n > 0 {
			out.frame = decode(t, out.events[n-1].Data)
		}
	} else if len(bytes.TrimSpace(b)) > 0 && bytes.HasPrefix(bytes.TrimSpace(b), []byte("{")) {
		out.frame = decode(t, b)
	}
	return out
}

// mh returns the 2026-07-28 request headers for method (and Mcp-Name).
func mh(method, name string) map[string]string {
	h := map[string]string{"MCP-Protocol-Version": Rev20260728, "Mcp-Method": method}
	if name != "" {
		h["Mcp-Name"] = name
	}
	return h
}

func with(h map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range h {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

type httpCase struct {
	name   string
	method string // default POST
	path   string // default /mcp
	body   string
	hdr    map[string]string
	status int
	ctype  string // prefix of Content-Type, when checked
	want   *want
}

func runHTTPCases(t *testing.T, o Options, cases []httpCase) {
	t.Helper()
	srv := startHTTP(t, o)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, p := tc.method, tc.path
			if m == "" {
				m = http.MethodPost
			}
			if p == "" {
				p = PathMCP
			}
			r := do(t, m, srv.URL+p, tc.body, tc.hdr)
			if r.status != tc.status {
				t.Fatalf("status = %d, want %d; body %.300s", r.status, tc.status, r.body)
			}
			if tc.ctype != "" && !strings.HasPrefix(r.header.Get("Content-Type"), tc.ctype) {
				t.Errorf("Content-Type = %q, want %s", r.header.Get("Content-Type"), tc.ctype)
			}
			if tc.want != nil {
				if r.frame == nil {
					t.Fatalf("no JSON-RPC frame in %.300s", r.body)
				}
				tc.want.check(t, r.frame)
			}
		})
	}
}

func b64(s string) string { return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?=" }

func TestHTTPModern(t *testing.T) {
	discover := mreq(1, "server/discover", nil)
	echo := mreq(2, "tools/call", call("echo", echoArgs))
	runHTTPCases(t, Options{}, []httpCase{
		{name: "discover", body: discover, hdr: mh("server/discover", ""), status: 200, ctype: "application/json",
			want: &want{id: 1, eq: map[string]any{"result.resultType": "complete"}, has: []string{"result.supportedVersions"}}},
		{name: "missing version header", body: discover, hdr: map[string]string{"Mcp-Method": "server/discover"}, status: 400,
			want: &want{id: 1, code: -32020}},
		{name: "version header differs", body: discover, hdr: with(mh("server/discover", ""), "MCP-Protocol-Version", Rev20250618), status: 400,
			want: &want{id: 1, code: -32020}},
		{name: "missing method header", body: discover, hdr: map[string]string{"MCP-Protocol-Version": Rev20260728}, status: 400,
			want: &want{id: 1, code: -32020}},
		{name: "method header differs", body: discover, hdr: mh("tools/list", ""), status: 400, want: &want{id: 1, code: -32020}},
		{name: "method header is case-sensitive", body: discover, hdr: mh("Server/Discover", ""), status: 400, want: &want{id: 1, code: -32020}},
		{name: "call", body: echo, hdr: mh("tools/call", "echo"), status: 200,
			want: &want{id: 2, eq: map[string]any{"result.structuredContent.text": "hi"}}},
		{name: "name header missing", body: echo, hdr: mh("tools/call", ""), status: 400, want: &want{id: 2, code: -32020}},
		{name: "name header differs", body: echo, hdr: mh("tools/call", "add"), status: 400, want: &want{id: 2, code: -32020}},
		{name: "name header base64", body: echo, hdr: mh("tools/call", b64("echo")), status: 200, want: &want{id: 2}},
		{name: "name header base64 differs", body: echo, hdr: mh("tools/call", b64("ech0")), status: 400, want: &want{id: 2, code: -32020}},
		{name: "name header bad base64", body: echo, hdr: mh("tools/call", "=?base64?!!!?="), status: 400, want: &want{id: 2, code: -32020}},
		{name: "missing _meta", body: req(3, "tools/list", nil), hdr: mh("tools/list", ""), status: 400, want: &want{id: 3, code: -32602}},
		{name: "unsupported version", body: mreqRev(4, "tools/list", nil, "2099-01-01"), hdr: with(mh("tools/list", ""), "MCP-Protocol-Version", "2099-01-01"),
			status: 400, want: &want{id: 4, code: -32022, eq: map[string]any{"error.data.requested": "2099-01-01"}}},
		{name: "unknown method", body: mreq(5, "prompts/list", nil), hdr: mh("prompts/list", ""), status: 404, want: &want{id: 5, code: -32601}},
		{name: "unknown tool", body: mreq(6, "tools/call", call("nope", nil)), hdr: mh("tools/call", "nope"), status: 200, want: &want{id: 6, code: -32602}},
		{name: "invalid args", body: mreq(7, "tools/call", call("add", badAdd)), hdr: mh("tools/call", "add"), status: 200,
			want: &want{id: 7, eq: map[string]any{"result.isError": true}}},
		{name: "tools/list", body: mreq(8, "tools/list", nil), hdr: mh("tools/list", ""), status: 200,
			want: &want{id: 8, eq: map[string]any{"result.ttlMs": 60000, "result.cacheScope": "public"}, has: []string{"result.nextCursor"}}},
		{name: "notification accepted", body: notif("notifications/cancelled", map[string]any{"requestId": 1}), status: 202},
		{name: "parse error", body: "{", status: 200, want: &want{id: nil, code: -32700}},
		{name: "batch refused", body: "[" + discover + "]", status: 400},
		{name: "foreign origin", body: discover, hdr: with(mh("server/discover", ""), "Origin", "https://evil.example"), status: 403},
		{name: "null origin", body: discover, hdr: with(mh("server/discover", ""), "Origin", "null"), status: 403},
		{name: "loopback origin", body: discover, hdr: with(mh("server/discover", ""), "Origin", "http://localhost:3000"), status: 200},
		{name: "PUT", method: http.MethodPut, status: 405},
		{name: "session header ignored on a modern request", body: discover, hdr: with(mh("server/discover", ""), "Mcp-Session-Id", "stale"), status: 200,
			want: &want{id: 1}},
		{name: "session header honoured on a legacy request", body: req(9, "ping", nil), hdr: map[string]string{"Mcp-Session-Id": "stale"}, status: 404},
	})
}

func TestHTTPLegacySession(t *testing.T) {
	srv := startHTTP(t, Options{Profile: "drifting", DriftAfter: 2})
	url := srv.URL + PathMCP
	r := do(t, "POST", url, initReq(1, Rev20251125), nil)
	want{id: 1, eq: map[string]any{"result.protocolVersion": Rev20251125}}.check(t, r.frame)
	sid := r.header.Get("Mcp-Session-Id")
	if sid == "" || len(sid) < 32 {
		t.Fatalf("session id %q", sid)
	}
	sh := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": Rev20251125}
	if r := do(t, "POST", url, notif("notifications/initialized", nil), sh); r.status != 202 {
		t.Fatalf("initialized: %d", r.status)
	}

	// The GET stream carries the list_changed of the rug pull.
	ctx, cancel := context.WithTimeout(t.Context(), waitReply)
	defer cancel()
	g, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	g.Header.Set("Accept", "text/event-stream")
	g.Header.Set("Mcp-Session-Id", sid)
	gres, err := http.DefaultClient.Do(g)
	if err != nil || gres.StatusCode != 200 {
		t.Fatalf("GET stream: %v %v", err, gres)
	}
	defer gres.Body.Close()
	events := jsonrpc.NewSSEReader(gres.Body, 0)

	for i := 2; i <= 3; i++ {
		r := do(t, "POST", url, req(i, "tools/list", nil), sh)
		want{id: i, not: []string{"result.resultType", "result.ttlMs"}, has: []string{"result.tools.0.outputSchema"}}.check(t, r.frame)
	}
	ev, err := events.Next()
	if err != nil {
		t.Fatal(err)
	}
	want{eq: map[string]any{"method": "notifications/tools/list_changed"}}.checkNotification(t, decode(t, ev.Data))

	cases := []httpCase{
		{name: "bad version header", body: req(9, "tools/list", nil), hdr: with(sh, "MCP-Protocol-Version", "1999-01-01"), status: 400},
		{name: "unknown session", body: req(9, "tools/list", nil), hdr: with(sh, "Mcp-Session-Id", "nope"), status: 404},
		{name: "no session", body: req(9, "tools/list", nil), status: 400, want: &want{id: 9, code: -32602}},
		{name: "GET without session", method: "GET", status: 405},
		{name: "ping", body: req(10, "ping", nil), hdr: sh, status: 200, want: &want{id: 10, eq: map[string]any{"result": map[string]any{}}}},
		{name: "sse reply", body: req(11, "tools/call", call("echo", echoArgs)), hdr: sh, status: 200, ctype: "text/event-stream",
			want: &want{id: 11, has: []string{"result.structuredContent"}}},
		{name: "json when sse is not accepted", body: req(12, "ping", nil), hdr: with(sh, "Accept", "application/json"), status: 200,
			ctype: "application/json", want: &want{id: 12}},
		{name: "delete", method: "DELETE", hdr: sh, status: 200},
		{name: "after delete", body: req(13, "ping", nil), hdr: sh, status: 404},
		{name: "delete again", method: "DELETE", hdr: sh, status: 404},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.method
			if m == "" {
				m = "POST"
			}
			r := do(t, m, url, tc.body, tc.hdr)
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.body)
			}
			if tc.ctype != "" && !strings.HasPrefix(r.header.Get("Content-Type"), tc.ctype) {
				t.Errorf("Content-Type %q", r.header.Get("Content-Type"))
			}
			if tc.want != nil {
				tc.want.check(t, r.frame)
			}
		})
	}
}

func TestHTTPProfiles(t *testing.T) {
	t.Run("modern", func(t *testing.T) {
		runHTTPCases(t, Options{Profile: "modern"}, []httpCase{
			{name: "initialize refused", body: initReq(1, Rev20251125), status: 400,
				want: &want{id: 1, code: -32022, eq: map[string]any{"error.data.supported": []string{Rev20260728}}}},
			{name: "GET", method: "GET", status: 405},
			{name: "DELETE", method: "DELETE", hdr: map[string]string{"Mcp-Session-Id": "x"}, status: 405},
			{name: "session header ignored", body: mreq(2, "tools/list", nil), hdr: with(mh("tools/list", ""), "Mcp-Session-Id", "x"), status: 200,
				want: &want{id: 2}},
			{name: "no 2024 transport", method: "GET", path: PathSSE, status: 404},
		})
	})
	t.Run("legacy", func(t *testing.T) {
		runHTTPCases(t, Options{Profile: "legacy"}, []httpCase{
			{name: "no streamable http", body: initReq(1, Rev20241105), status: 404},
			{name: "message needs a session", path: PathMessage + "?sessionId=x", body: initReq(1, Rev20241105), status: 404},
		})
	})
	t.Run("sloppy", func(t *testing.T) {
		runHTTPCases(t, Options{Profile: "sloppy-errors"}, []httpCase{
			{name: "unknown method 200", body: mreq(1, "prompts/list", nil), hdr: mh("prompts/list", ""), status: 200, want: &want{id: 1}},
			{name: "missing _meta 200", body: req(2, "tools/list", nil), status: 200, want: &want{id: 2, code: -32603}},
			{name: "header mismatch", body: mreq(3, "tools/list", nil), hdr: mh("tools/call", ""), status: 200, want: &want{id: 3, code: -32600}},
			{name: "parse error dropped", body: "{", status: 202},
		})
	})
	t.Run("vacuous sse", func(t *testing.T) {
		runHTTPCases(t, Options{Profile: "vacuous"}, []httpCase{
			{name: "sse", body: mreq(1, "tools/list", nil), hdr: mh("tools/list", ""), status: 200, ctype: "text/event-stream",
				want: &want{id: 1, eq: map[string]any{"result.tools.0.outputSchema.type": "object"}}},
			{name: "errors stay json", body: mreq(2, "nope", nil), hdr: mh("nope", ""), status: 404, ctype: "application/json"},
		})
		runHTTPCases(t, Options{Profile: "vacuous", Reply: "json"}, []httpCase{
			{name: "json override", body: mreq(1, "tools/list", nil), hdr: mh("tools/list", ""), status: 200, ctype: "application/json"},
		})
	})
	t.Run("allowed origin", func(t *testing.T) {
		runHTTPCases(t, Options{AllowedOrigins: []string{"https://app.example"}}, []httpCase{
			{name: "allowed", body: mreq(1, "server/discover", nil), hdr: with(mh("server/discover", ""), "Origin", "https://app.example"), status: 200},
			{name: "other", body: mreq(1, "server/discover", nil), hdr: with(mh("server/discover", ""), "Origin", "https://app.example:444"), status: 403},
		})
	})
}

// oldSSE is a client of the 2024-11-05 HTTP+SSE transport.
type oldSSE struct {
	t        *testing.T
	base     string
	endpoint string
	events   *jsonrpc.SSEReader
}

func openOldSSE(t *testing.T, srv *httptest.Server) *oldSSE {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	r, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+PathSSE, nil)
	r.Header.Set("Accept", "text/event-stream")
	res, err := http.DefaultClient.Do(r)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("GET /sse: %v %v", err, res)
	}
	t.Cleanup(func() { res.Body.Close() })
	c := &oldSSE{t: t, base: srv.URL, events: jsonrpc.NewSSEReader(res.Body, 256<<20)}
	ev, err := c.events.Next()
	if err != nil || ev.Event != "endpoint" || !strings.HasPrefix(string(ev.Data), PathMessage+"?sessionId=") {
		t.Fatalf("endpoint event: %+v %v", ev, err)
	}
	c.endpoint = string(ev.Data)
	return c
}

func (c *oldSSE) post(body string) {
	c.t.Helper()
	r := do(c.t, "POST", c.base+c.endpoint, body, nil)
	if r.status != 202 {
		c.t.Fatalf("POST message: %d %s", r.status, r.body)
	}
}

func (c *oldSSE) next() jsonrpc.Event {
	c.t.Helper()
	ev, err := c.events.Next()
	if err != nil {
		c.t.Fatalf("event: %v", err)
	}
	return ev
}

func TestHTTPOldSSE(t *testing.T) {
	for _, profile := range []string{"legacy", "good"} {
		t.Run(profile, func(t *testing.T) {
			c := openOldSSE(t, startHTTP(t, Options{Profile: profile}))
			c.post(initReq(1, Rev20241105))
			c.post(notif("notifications/initialized", nil))
			c.post(req(2, "tools/list", nil))
			c.post(req(3, "tools/call", call("add", map[string]any{"a": 1, "b": 2})))
			ev := c.next()
			if ev.Event != "message" {
				t.Fatalf("event %q", ev.Event)
			}
			want{id: 1, eq: map[string]any{"result.protocolVersion": Rev20241105}}.check(t, decode(t, ev.Data))
			want{id: 2, not: []string{"result.tools.0.outputSchema"}}.check(t, decode(t, c.next().Data))
			want{id: 3, eq: map[string]any{"result.content.0.text": `{"a":1,"b":2,"sum":3}`}}.check(t, decode(t, c.next().Data))
		})
	}
}

func TestHTTPListen(t *testing.T) {
	srv := startHTTP(t, Options{Profile: "drifting", DriftAfter: 1})
	ctx, cancel := context.WithTimeout(t.Context(), waitReply)
	defer cancel()
	body := mreq("L1", "subscriptions/listen", map[string]any{"notifications": map[string]any{"toolsListChanged": true}})
	r, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+PathMCP, strings.NewReader(body))
	for k, v := range mh("subscriptions/listen", "") {
		r.Header.Set(k, v)
	}
	r.Header.Set("Accept", "application/json, text/event-stream")
	res, err := http.DefaultClient.Do(r)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("listen: %v %v", err, res)
	}
	defer res.Body.Close()
	events := jsonrpc.NewSSEReader(res.Body, 0)
	ev, err := events.Next()
	if err != nil {
		t.Fatal(err)
	}
	want{eq: map[string]any{"method": "notifications/subscriptions/acknowledged", "params._meta." + metaSubscription: "L1"}}.checkNotification(t, decode(t, ev.Data))
	do(t, "POST", srv.URL+PathMCP, mreq(1, "tools/list", nil), mh("tools/list", ""))
	ev, err = events.Next()
	if err != nil {
		t.Fatal(err)
	}
	want{eq: map[string]any{"method": "notifications/tools/list_changed", "params._meta." + metaSubscription: "L1"}}.checkNotification(t, decode(t, ev.Data))
	r2 := do(t, "POST", srv.URL+PathMCP, mreq(2, "tools/list", nil), mh("tools/list", ""))
	if d, _ := get(r2.frame, "result.tools.2.description"); d != rugPullDesc {
		t.Fatalf("description after drift: %v", d)
	}
}

func TestHTTPHostile(t *testing.T) {
	t.Run("hang", func(t *testing.T) {
		srv := startHTTP(t, Options{Profile: "hang"})
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer cancel()
		r, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+PathMCP, strings.NewReader(mreq(1, "server/discover", nil)))
		_, err := http.DefaultClient.Do(r)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("want a timeout, got %v", err)
		}
	})
	t.Run("crash", func(t *testing.T) {
		var crashed atomic.Bool
		srv := startHTTP(t, Options{Profile: "crash", OnCrash: func() { crashed.Store(true) }})
		r, _ := http.NewRequest("POST", srv.URL+PathMCP, strings.NewReader(mreq(1, "tools/list", nil)))
		for k, v := range mh("tools/list", "") {
			r.Header.Set(k, v)
		}
		res, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err == nil || !crashed.Load() || !bytes.HasPrefix(b, []byte(`{"jsonrpc":"2.0","id":1`)) {
			t.Fatalf("want a cut body and a read error, got %v, %d bytes, crashed=%v", err, len(b), crashed.Load())
		}
	})
	t.Run("hugeline", func(t *testing.T) {
		srv := startHTTP(t, Options{Profile: "hugeline", HugeBytes: 1 << 20})
		r := do(t, "POST", srv.URL+PathMCP, mreq(1, "tools/list", nil), mh("tools/list", ""))
		if len(r.body) < 1<<20-64 || r.frame == nil {
			t.Fatalf("body %d bytes", len(r.body))
		}
	})
	t.Run("flood", func(t *testing.T) {
		srv := startHTTP(t, Options{Profile: "flood", Delay: 20 * time.Millisecond, NoiseBytes: 256})
		r := do(t, "POST", srv.URL+PathMCP, mreq(1, "server/discover", nil), mh("server/discover", ""))
		if len(r.events) < 2 {
			t.Fatalf("want noise before the answer, got %d events", len(r.events))
		}
		want{eq: map[string]any{"method": "notifications/message"}}.checkNotification(t, decode(t, r.events[0].Data))
		want{id: 1}.check(t, r.frame)
	})
	t.Run("noisy", func(t *testing.T) {
		srv := startHTTP(t, Options{Profile: "noisy-stdout"})
		r := do(t, "POST", srv.URL+PathMCP, mreq(1, "server/discover", nil), mh("server/discover", ""))
		if len(r.events) != 2 || !strings.HasPrefix(string(r.events[0].Data), "[testbed]") {
			t.Fatalf("events %+v", r.events)
		}
		want{id: 1}.check(t, r.frame)
	})
}
