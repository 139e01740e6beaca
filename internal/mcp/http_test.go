package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
)

// httpFake is a scriptable Streamable HTTP (legacy or modern) server.
type httpFake struct {
	modern   bool                             // answer server/discover and check 2026-07-28 headers
	sse      bool                             // reply with text/event-stream
	discover func(w http.ResponseWriter) bool // custom discover answer (legacy)

	mu        sync.Mutex
	deleted   bool
	headerErr []string
	pingOnce  sync.Once
	pinged    chan struct{} // closed when the client answers the server's ping (make it to be told)
	gotProto  []string
}

func (f *httpFake) problem(format string, a ...any) {
	f.mu.Lock()
	f.headerErr = append(f.headerErr, fmt.Sprintf(format, a...))
	f.mu.Unlock()
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (f *httpFake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodDelete {
		if r.Header.Get(HeaderSessionID) != "sess-1" {
			f.problem("DELETE without session")
		}
		f.mu.Lock()
		f.deleted = true
		f.mu.Unlock()
		w.WriteHeader(http.StatusOK)
		return
	}
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	if r.Header.Get("Authorization") != "Bearer s3cret" {
		f.problem("user header missing")
	}
	if !strings.Contains(r.Header.Get("Accept"), "text/event-stream") || !strings.Contains(r.Header.Get("Accept"), "application/json") {
		f.problem("bad Accept")
	}
	body, _ := io.ReadAll(r.Body)
	var m jsonrpc.Message
	if json.Unmarshal(body, &m) != nil {
		writeJSON(w, 400, map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": -32700, "message": "parse error"}})
		return
	}
	f.mu.Lock()
	f.gotProto = append(f.gotProto, m.Method+"="+r.Header.Get(HeaderProtocolVersion))
	f.mu.Unlock()
	if m.Method == "" { // client reply to a server request
		if string(m.ID) == `"srv-ping"` && string(m.Result) == "{}" {
			if f.pinged != nil {
				f.pingOnce.Do(func() { close(f.pinged) })
			}
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	reply := func(v any) {
		msg := map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": v}
		if !f.sse {
			writeJSON(w, 200, msg)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		fl := w.(http.Flusher)
		fmt.Fprint(w, "id: prime-1\ndata:\n\n: keep-alive\n\n")
		fmt.Fprint(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n")
		if m.Method == "tools/list" && !f.modern {
			fmt.Fprint(w, "data: {\"jsonrpc\":\"2.0\",\"id\":\"srv-ping\",\"method\":\"ping\"}\n\n")
		}
		fl.Flush()
		b, _ := json.Marshal(msg)
		fmt.Fprintf(w, "id: 2\ndata: %s\n\n", b)
		fl.Flush()
	}
	if f.modern {
		if got := r.Header.Get(HeaderMethod); got != m.Method {
			f.problem("Mcp-Method %q for %q", got, m.Method)
			writeJSON(w, 400, map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32020, "message": "header mismatch"}})
			return
		}
		if r.Header.Get(HeaderProtocolVersion) != Rev20260728 {
			f.problem("MCP-Protocol-Version missing on %s", m.Method)
		}
		if r.Header.Get(HeaderSessionID) != "" {
			f.problem("session id sent in modern era")
		}
		var p struct {
			Name string                     `json:"name"`
			Meta map[string]json.RawMessage `json:"_meta"`
		}
		_ = json.Unmarshal(m.Params, &p)
		if m.Method == "tools/call" {
			got, err := DecodeHeaderValue(r.Header.Get(HeaderName))
			if err != nil || got != p.Name {
				f.problem("Mcp-Name %q does not decode to %q", r.Header.Get(HeaderName), p.Name)
			}
		}
		if _, ok := p.Meta[MetaProtocolVersion]; !ok {
			writeJSON(w, 400, map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32602, "message": "missing _meta"}})
			return
		}
		switch m.Method {
		case "server/discover":
			reply(map[string]any{"supportedVersions": []string{Rev20260728}, "capabilities": map[string]any{},
				"_meta": map[string]any{MetaServerInfo: map[string]any{"name": "http-modern", "version": "2"}}, "ttlMs": 0, "cacheScope": "public"})
		case "tools/list":
			reply(map[string]any{"tools": []any{map[string]any{"name": "ünï"}}, "ttlMs": 10, "cacheScope": "public"})
		case "tools/call":
			reply(map[string]any{"content": []any{}, "resultType": "input_required", "inputRequests": map[string]any{}})
		default:
			writeJSON(w, 404, map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "not found"}})
		}
		return
	}
	// legacy
	if m.Method == "server/discover" {
		if f.discover != nil && f.discover(w) {
			return
		}
		writeJSON(w, 400, map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": -32000, "message": "Bad Request: no valid session ID"}})
		return
	}
	if m.Method == "initialize" {
		w.Header().Set(HeaderSessionID, "sess-1")
		reply(map[string]any{"protocolVersion": Rev20251125, "capabilities": map[string]any{}, "serverInfo": map[string]any{"name": "http-legacy", "version": "1"}})
		return
	}
	if r.Header.Get(HeaderSessionID) != "sess-1" {
		f.problem("%s without session id", m.Method)
	}
	if r.Header.Get(HeaderProtocolVersion) != Rev20251125 {
		f.problem("%s without negotiated MCP-Protocol-Version", m.Method)
	}
	if m.ID == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	switch m.Method {
	case "tools/list":
		reply(map[string]any{"tools": []any{map[string]any{"name": "a"}, map[string]any{"name": "b"}}})
	default:
		writeJSON(w, 200, map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "nope"}})
	}
}

func (f *httpFake) check(t *testing.T) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.headerErr) > 0 {
		t.Fatalf("server saw: %v", f.headerErr)
	}
}

func httpCfg(url string) Config {
	return Config{URL: url, Headers: http.Header{"Authorization": {"Bearer s3cret"}}, RequestTimeout: testutil.Hang}
}

func TestHTTPLegacy(t *testing.T) {
	for _, sse := range []bool{false, true} {
		t.Run(fmt.Sprintf("sse=%v", sse), func(t *testing.T) {
			f := &httpFake{sse: sse, pinged: make(chan struct{})}
			srv := httptest.NewServer(f)
			defer srv.Close()
			c := connect(t, httpCfg(srv.URL))
			s := c.Session()
			if s.Era != EraLegacy || s.Revision != Rev20251125 || !s.SessionID || s.Transport != TransportStreamableHTTP || s.Server.Name != "http-legacy" {
				t.Fatalf("session = %+v", s)
			}
			if !strings.Contains(strings.Join(s.Detection, "|"), "server/discover: HTTP 400, error -32000; initialize") {
				t.Fatalf("detection = %q", s.Detection)
			}
			l, err := c.ListTools(context.Background())
			if err != nil || len(l.Tools) != 2 {
				t.Fatalf("list = %+v %v", l, err)
			}
			msg, err := c.Call(context.Background(), "nope", nil)
			if err != nil || msg.Error == nil || msg.Error.Code != -32601 {
				t.Fatalf("nope: %+v %v", msg, err)
			}
			if sse {
				await(t, f.pinged, "the client's answer to the server's ping")
				if _, ok := hasObs(c, "notification"); !ok {
					t.Fatal("SSE notification not counted")
				}
			}
			c.Close()
			f.mu.Lock()
			deleted := f.deleted
			f.mu.Unlock()
			if !deleted {
				t.Fatal("session not DELETEd on Close")
			}
			f.check(t)
			for _, o := range c.Observations() {
				if strings.Contains(o.Detail, "s3cret") {
					t.Fatalf("secret leaked into %+v", o)
				}
			}
		})
	}
}

func TestHTTPModern(t *testing.T) {
	for _, sse := range []bool{false, true} {
		t.Run(fmt.Sprintf("sse=%v", sse), func(t *testing.T) {
			f := &httpFake{modern: true, sse: sse}
			srv := httptest.NewServer(f)
			defer srv.Close()
			c := connect(t, httpCfg(srv.URL))
			defer c.Close()
			s := c.Session()
			if s.Era != EraModern || s.Revision != Rev20260728 || s.SessionID || s.Server.Name != "http-modern" {
				t.Fatalf("session = %+v", s)
			}
			l, err := c.ListTools(context.Background())
			if err != nil || len(l.Tools) != 1 || l.Tools[0].Name != "ünï" || !l.HasTTL || *l.TTLMs != 10 {
				t.Fatalf("list = %+v %v", l, err)
			}
			msg, err := c.Call(context.Background(), "tools/call", map[string]any{"name": " spaced ünï ", "arguments": map[string]any{}})
			if err != nil || ResultType(msg) != "input_required" {
				t.Fatalf("call: %+v %v", msg, err)
			}
			resp, err := c.CallResponse(context.Background(), "bogus/method", nil)
			if err != nil || resp.Status != 404 || resp.Message.Error.Code != -32601 {
				t.Fatalf("bogus: %+v %v", resp, err)
			}
			// raw probe: a JSON-RPC error body with a 4xx status is a message, not an error
			raw, err := c.SendRaw(context.Background(), []byte(`{"jsonrpc":"2.0","id":5,`))
			if err != nil || raw.Error == nil || raw.Error.Code != -32700 {
				t.Fatalf("raw: %+v %v", raw, err)
			}
			// a probe can override a header
			resp, err = c.SendRawHeaders(context.Background(), []byte(`{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`), http.Header{"Mcp-Method": {"other"}})
			if err != nil || resp.Status != 400 || resp.Message.Error.Code != -32020 {
				t.Fatalf("raw hdr: %+v %v", resp, err)
			}
			f.mu.Lock()
			f.headerErr = nil // the override above is expected to be reported
			f.mu.Unlock()
			c.Close()
			if f.deleted {
				t.Fatal("modern session must not DELETE")
			}
		})
	}
}

func TestHTTPClassification(t *testing.T) {
	tests := []struct {
		name     string
		discover func(w http.ResponseWriter) bool
		wantErr  error
		status   int
		era      Era
		detect   string
	}{
		{"401 with WWW-Authenticate", func(w http.ResponseWriter) bool {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="https://x/.well-known"`)
			w.WriteHeader(401)
			return true
		}, nil, 401, "", ""},
		{"400 text body falls back", func(w http.ResponseWriter) bool {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(400)
			io.WriteString(w, "bad request")
			return true
		}, nil, 0, EraLegacy, "HTTP 400 without JSON-RPC body; initialize"},
		{"404 -32601 falls back", func(w http.ResponseWriter) bool {
			writeJSON(w, 404, map[string]any{"jsonrpc": "2.0", "id": 1, "error": map[string]any{"code": -32601, "message": "x"}})
			return true
		}, nil, 0, EraLegacy, "HTTP 404, error -32601; initialize"},
		{"-32022 unusable list", func(w http.ResponseWriter) bool {
			writeJSON(w, 400, map[string]any{"jsonrpc": "2.0", "id": 1, "error": map[string]any{"code": -32022, "message": "x", "data": map[string]any{"supported": []string{"2099-01-01"}}}})
			return true
		}, ErrProtocolRefused, 0, "", ""},
		{"-32021 is modern", func(w http.ResponseWriter) bool {
			writeJSON(w, 400, map[string]any{"jsonrpc": "2.0", "id": 1, "error": map[string]any{"code": -32021, "message": "x"}})
			return true
		}, nil, 0, EraModern, "modern error -32021"},
		{"500 falls back", func(w http.ResponseWriter) bool {
			w.WriteHeader(500)
			return true
		}, nil, 0, EraLegacy, "HTTP 500 without JSON-RPC body"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(&httpFake{discover: tt.discover})
			defer srv.Close()
			c, err := Connect(context.Background(), httpCfg(srv.URL))
			var he *HTTPError
			switch {
			case tt.status != 0:
				if !errors.As(err, &he) || he.Status != tt.status || !strings.Contains(he.Header.Get("WWW-Authenticate"), "resource_metadata") {
					t.Fatalf("err = %v", err)
				}
				if strings.Contains(err.Error(), "s3cret") {
					t.Fatal("secret in error")
				}
				return
			case tt.wantErr != nil:
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v", err)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			defer c.Close()
			s := c.Session()
			if s.Era != tt.era || !strings.Contains(strings.Join(s.Detection, "|"), tt.detect) {
				t.Fatalf("session = %+v", s)
			}
		})
	}
}

func TestHTTPUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL + "/mcp?token=s3cret"
	srv.Close()
	_, err := Connect(context.Background(), Config{URL: url, RequestTimeout: testutil.Hang})
	if !errors.Is(err, ErrUnreachable) || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("err = %v", err)
	}
	if _, err := Connect(context.Background(), Config{URL: "ftp://x"}); err == nil {
		t.Fatal("bad scheme accepted")
	}
}

func TestHTTPTimeout(t *testing.T) {
	block := make(chan struct{})
	var hits atomic.Int32
	srv := httptest.NewServer(&httpFake{modern: true})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if strings.Contains(string(b), "tools/call") {
			hits.Add(1)
			select {
			case <-block:
			case <-r.Context().Done():
			}
			return
		}
		r.Body = io.NopCloser(strings.NewReader(string(b)))
		srv.Config.Handler.ServeHTTP(w, r)
	}))
	defer srv.Close()
	defer slow.Close()
	defer close(block)
	c := connect(t, httpCfg(slow.URL))
	defer c.Close()
	shortenRequests(c, 200*time.Millisecond)
	if _, err := c.Call(context.Background(), "tools/call", map[string]any{"name": "x"}); !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v", err)
	}
}

func TestHTTPOversize(t *testing.T) {
	srv := httptest.NewServer(&httpFake{modern: true})
	defer srv.Close()
	cfg := httpCfg(srv.URL)
	cfg.MaxFrame = 64
	_, err := Connect(context.Background(), cfg)
	if !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("err = %v", err)
	}
}

// sseFake is a 2024-11-05 HTTP+SSE server: GET /sse streams, POST /messages.
type sseFake struct {
	stream chan []byte
}

func (f *sseFake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/sse":
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			w.WriteHeader(401)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		fl := w.(http.Flusher)
		fmt.Fprint(w, "event: endpoint\ndata: /messages?sessionId=abc\n\n")
		fl.Flush()
		for {
			select {
			case b := <-f.stream:
				fmt.Fprintf(w, "event: message\ndata: %s\n\n", b)
				fl.Flush()
			case <-r.Context().Done():
				return
			}
		}
	case r.Method == http.MethodPost && r.URL.Path == "/messages":
		if r.URL.Query().Get("sessionId") != "abc" {
			w.WriteHeader(400)
			return
		}
		var m jsonrpc.Message
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &m)
		w.WriteHeader(http.StatusAccepted)
		if m.ID == nil || m.Method == "" {
			return
		}
		var res any = map[string]any{}
		switch m.Method {
		case "initialize":
			res = map[string]any{"protocolVersion": Rev20241105, "capabilities": map[string]any{}, "serverInfo": map[string]any{"name": "old-sse", "version": "0"}}
		case "tools/list":
			res = map[string]any{"tools": []any{map[string]any{"name": "old"}}}
		}
		out, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": res})
		f.stream <- out
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
}

func TestHTTPPlusSSEFallback(t *testing.T) {
	f := &sseFake{stream: make(chan []byte, 16)}
	srv := httptest.NewServer(f)
	defer srv.Close()
	c := connect(t, httpCfg(srv.URL+"/sse"))
	defer c.Close()
	s := c.Session()
	if s.Transport != TransportSSE || s.Revision != Rev20241105 || s.Server.Name != "old-sse" {
		t.Fatalf("session = %+v", s)
	}
	if !strings.Contains(strings.Join(s.Detection, "|"), "initialize: HTTP 405; trying HTTP+SSE") {
		t.Fatalf("detection = %q", s.Detection)
	}
	l, err := c.ListTools(context.Background())
	if err != nil || len(l.Tools) != 1 || l.Tools[0].Name != "old" {
		t.Fatalf("list = %+v %v", l, err)
	}
	c.Close()
	if _, err := c.Call(context.Background(), "tools/list", nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("after close: %v", err)
	}
}

func TestSSECrossOriginEndpointRefused(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			w.WriteHeader(405)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "event: endpoint\ndata: http://127.0.0.2:1/steal\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer srv.Close()
	_, err := Connect(context.Background(), httpCfg(srv.URL))
	var he *HTTPError
	if !errors.As(err, &he) || he.Status != 405 {
		t.Fatalf("err = %v", err)
	}
}

func TestHTTPSSEResume(t *testing.T) {
	var gets atomic.Int32
	var listID atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			if r.Header.Get("Last-Event-ID") != "e1" || r.Header.Get(HeaderSessionID) != "s" {
				w.WriteHeader(400)
				return
			}
			gets.Add(1)
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "id: e2\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"tools\":[]}}\n\n", listID.Load())
			return
		}
		var m jsonrpc.Message
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &m)
		switch m.Method {
		case "initialize":
			w.Header().Set(HeaderSessionID, "s")
			writeJSON(w, 200, map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"protocolVersion": Rev20251125, "serverInfo": map[string]any{"name": "poll"}}})
		case "tools/list":
			listID.Store(string(m.ID))
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "id: e1\nretry: 10\ndata:\n\n") // priming, then the server drops the stream
		case "server/discover":
			writeJSON(w, 400, map[string]any{"jsonrpc": "2.0", "error": map[string]any{"code": -32000, "message": "no session"}})
		default:
			w.WriteHeader(202)
		}
	}))
	defer srv.Close()
	c := connect(t, Config{URL: srv.URL, RequestTimeout: testutil.Hang})
	defer c.Close()
	l, err := c.ListTools(context.Background())
	if err != nil || l.Pages != 1 || gets.Load() != 1 {
		t.Fatalf("list = %+v %v (gets %d)", l, err, gets.Load())
	}
	if _, ok := hasObs(c, "sse-resume"); !ok {
		t.Fatal("resume not observed")
	}
}
