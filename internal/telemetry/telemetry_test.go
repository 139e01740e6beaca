package telemetry

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
)

// flushed flushes tr and returns the spans rcv received, by span id; there
// must be want of them.
func flushed(t *testing.T, tr *Tracer, rcv *testutil.OTLPReceiver, want int) map[string]*tracepb.Span {
	t.Helper()
	if err := tr.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	spans := rcv.Spans()
	if len(spans) != want {
		t.Fatalf("%d spans exported, want %d", len(spans), want)
	}
	return spans
}

func attr(s *tracepb.Span, key string) string {
	for _, a := range s.Attributes {
		if a.Key == key {
			if v := a.Value.GetStringValue(); v != "" {
				return v
			}
			if a.Value.GetIntValue() != 0 {
				return strings.TrimSpace(a.Value.String())
			}
		}
	}
	return ""
}

// echoServer answers every POST with an empty result and records what it got.
type echoServer struct {
	url    string
	mu     sync.Mutex
	bodies [][]byte
	heads  []http.Header
}

func newEchoServer(t *testing.T) *echoServer {
	e := &echoServer{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		e.mu.Lock()
		e.bodies = append(e.bodies, b)
		e.heads = append(e.heads, r.Header.Clone())
		e.mu.Unlock()
		if r.Header.Get("X-Fail") != "" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	}))
	t.Cleanup(srv.Close)
	e.url = srv.URL + "/mcp"
	return e
}

func post(ctx context.Context, t *testing.T, c *http.Client, url, body string, hdr map[string]string) int {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func TestSpansExportedAndPropagated(t *testing.T) {
	rcv := testutil.NewOTLPReceiver(t)
	mcpSrv := newEchoServer(t)
	tr, err := New(context.Background(), Options{Endpoint: rcv.URL, ServiceVersion: "test"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, end := tr.Start(context.Background(), "mcpdrill test")
	c := tr.Client(nil)
	call := func(body string, hdr map[string]string) { post(ctx, t, c, mcpSrv.url, body, hdr) }
	rev := map[string]string{"MCP-Protocol-Version": "2025-06-18"}
	call(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"q":"<a&b>"}}}`, rev)
	probe := `{"jsonrpc":"2.0","id":"mcpdrill-probe","method":"tools/list","params":{}}`
	call(probe, rev)
	call(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, map[string]string{"MCP-Protocol-Version": "2025-03-26"})
	call(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`, map[string]string{"MCP-Protocol-Version": "2025-06-18", "X-Fail": "1"})
	call(`{"jsonrpc":"2.0","id":9,"result":{}}`, rev) // a reply to a server request: untraced
	end()

	calls := tr.Since(0)
	if len(calls) != 4 {
		t.Fatalf("calls %+v", calls)
	}
	if calls[0].Method != "tools/call" || calls[0].Tool != "search" || calls[3].Status != 401 {
		t.Errorf("calls %+v", calls)
	}
	// The first request carries the traceparent in _meta and in the header,
	// both naming its own span; its arguments are untouched.
	var first struct {
		Params struct {
			Arguments json.RawMessage `json:"arguments"`
			Meta      map[string]string
		} `json:"params"`
	}
	mcpSrv.mu.Lock()
	bodies, heads := mcpSrv.bodies, mcpSrv.heads
	mcpSrv.mu.Unlock()
	if err := json.Unmarshal(bodies[0], &first); err != nil {
		t.Fatal(err)
	}
	var meta struct {
		Params struct {
			Meta map[string]string `json:"_meta"`
		} `json:"params"`
	}
	json.Unmarshal(bodies[0], &meta)
	want := "00-" + calls[0].TraceID + "-" + calls[0].SpanID + "-01"
	if meta.Params.Meta["traceparent"] != want || heads[0].Get("Traceparent") != want {
		t.Errorf("traceparent _meta %q header %q, want %q", meta.Params.Meta["traceparent"], heads[0].Get("Traceparent"), want)
	}
	if string(first.Params.Arguments) != `{"q":"<a&b>"}` {
		t.Errorf("arguments rewritten: %s", first.Params.Arguments)
	}
	if string(bodies[1]) != probe {
		t.Errorf("a probe frame was rewritten: %s", bodies[1])
	}
	if bytes.Contains(bodies[2], []byte("_meta")) || heads[2].Get("Traceparent") == "" {
		t.Errorf("2025-03-26 request: %s (header %q)", bodies[2], heads[2].Get("Traceparent"))
	}
	if heads[4].Get("Traceparent") != "" {
		t.Error("a client reply was traced")
	}

	spans := flushed(t, tr, rcv, 5) // 4 calls + the root
	for _, c := range calls {
		s, ok := spans[c.SpanID]
		if !ok || hex.EncodeToString(s.TraceId) != c.TraceID || s.Kind != tracepb.Span_SPAN_KIND_CLIENT {
			t.Fatalf("call %+v not exported as a client span", c)
		}
		if attr(s, "mcp.method.name") != c.Method {
			t.Errorf("span %s: mcp.method.name %q", s.Name, attr(s, "mcp.method.name"))
		}
	}
	s := spans[calls[0].SpanID]
	if s.Name != "tools/call search" || attr(s, "gen_ai.tool.name") != "search" || attr(s, "gen_ai.operation.name") != "execute_tool" ||
		attr(s, "mcp.protocol.version") != "2025-06-18" || attr(s, "jsonrpc.request.id") != "1" {
		t.Errorf("tools/call span %s %v", s.Name, s.Attributes)
	}
	if st := spans[calls[3].SpanID].Status; st == nil || st.Code != tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("401 span status %v", st)
	}
	if err := tr.Flush(context.Background()); err != nil {
		t.Errorf("second flush: %v", err)
	}
}

func TestCollectorDownIsAWarning(t *testing.T) {
	down := "http://" + testutil.FreeAddr(t)
	// The export is attempted once and fails at once: a retry would run
	// into the timeout, long enough that only retrying reaches it.
	tr, err := New(context.Background(), Options{Endpoint: down, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	mcpSrv := newEchoServer(t)
	if code := post(context.Background(), t, tr.Client(nil), mcpSrv.url, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, nil); code != 200 {
		t.Fatalf("status %d", code)
	}
	err = tr.Flush(context.Background())
	if err == nil || !strings.Contains(err.Error(), "findings are unaffected") {
		t.Errorf("flush error %v", err)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("the export ran into its timeout instead of failing at once: %v", err)
	}
}

func TestNilTracerDoesNothing(t *testing.T) {
	var tr *Tracer
	base := &http.Client{}
	if tr.Client(base) != base || tr.Mark() != 0 || tr.Since(0) != nil || tr.Flush(context.Background()) != nil {
		t.Error("nil tracer is not inert")
	}
	ctx := context.Background()
	if got, end := tr.Start(ctx, "x"); got != ctx {
		t.Error("nil tracer changed the context")
	} else {
		end()
	}
	if tid, sid := (Call{}).IDs(); tid != "" || sid != "" {
		t.Error("zero call has ids")
	}
}

func TestTracesURL(t *testing.T) {
	tests := map[string]string{
		"http://127.0.0.1:4318":            "http://127.0.0.1:4318/v1/traces",
		"http://127.0.0.1:4318/":           "http://127.0.0.1:4318/v1/traces",
		"https://otel.example/custom/path": "https://otel.example/custom/path",
		"ftp://x":                          "",
		"127.0.0.1:4318":                   "",
		"":                                 "",
	}
	for in, want := range tests {
		got, err := TracesURL(in)
		if got != want || (want == "") != (err != nil) {
			t.Errorf("TracesURL(%q) = %q, %v", in, got, err)
		}
	}
}

func FuzzWithMetaTraceparent(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":1,"method":"m"}`, `{"id":1,"params":{"_meta":{"a":1},"x":"<>"}}`, `{"params":null}`, `{"params":[]}`, `[]`, `{"params":{"_meta":"s"}}`} {
		f.Add([]byte(s))
	}
	const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	f.Fuzz(func(t *testing.T, b []byte) {
		out, ok := withMetaTraceparent(b, tp)
		if !ok {
			return
		}
		// Exact member names: encoding/json matches struct fields
		// case-insensitively, a frame's members are case-sensitive.
		var frame, params, meta map[string]json.RawMessage
		if err := json.Unmarshal(out, &frame); err != nil {
			t.Fatalf("output is not a JSON object: %v", err)
		}
		if json.Unmarshal(frame["params"], &params) != nil || json.Unmarshal(params["_meta"], &meta) != nil ||
			string(meta["traceparent"]) != `"`+tp+`"` {
			t.Fatalf("traceparent missing in %s", out)
		}
		var in, res map[string]json.RawMessage
		json.Unmarshal(b, &in)
		json.Unmarshal(out, &res)
		for k := range in {
			if _, ok := res[k]; !ok {
				t.Fatalf("member %q dropped", k)
			}
		}
	})
}

// TestStdioObserver traces frames as the stdio transport hands them over:
// one span per client request or notification (raw frames included),
// traceparent in _meta only on the client's own requests from 2025-06-18,
// the JSON-RPC error code and a timeout on the span.
func TestStdioObserver(t *testing.T) {
	rcv := testutil.NewOTLPReceiver(t)
	tr, err := New(context.Background(), Options{Endpoint: rcv.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx, end := tr.Start(context.Background(), "mcpdrill test")
	obs := tr.Observer()
	type step struct {
		frame, rev string
		raw        bool
		reply      *jsonrpc.Message
		err        error
		meta       bool // params._meta.traceparent expected
	}
	steps := []step{
		{frame: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`, reply: &jsonrpc.Message{}, meta: true},
		{frame: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, rev: "2025-06-18"},
		{frame: `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{"q":"<a&b>"}}}`, rev: "2025-06-18",
			reply: &jsonrpc.Message{Error: &jsonrpc.Error{Code: -32602, Message: "bad"}}, meta: true},
		{frame: `{"jsonrpc":"2.0","id":"mcpdrill-probe","method":"tools/list","params":{}}`, rev: "2025-06-18", raw: true, reply: &jsonrpc.Message{}},
		{frame: `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`, rev: "2025-03-26", reply: &jsonrpc.Message{}},
		{frame: `{"jsonrpc":"2.0","id":4,"method":"ping"}`, rev: "2025-06-18", err: context.DeadlineExceeded, meta: true},
		{frame: `{"jsonrpc":"2.0","id":9,"result":{}}`, rev: "2025-06-18"}, // a reply to a server request: untraced
	}
	for i, s := range steps {
		send, done := obs(ctx, []byte(s.frame), s.rev, s.raw)
		var meta struct {
			Params struct {
				Meta map[string]string `json:"_meta"`
			} `json:"params"`
		}
		json.Unmarshal(send, &meta)
		tp := meta.Params.Meta["traceparent"]
		if s.meta != (tp != "") || (!s.meta && string(send) != s.frame) {
			t.Errorf("step %d: sent %s", i, send)
		}
		done(s.reply, s.err)
		done(s.reply, s.err) // a second call is harmless
		if calls := tr.Since(0); s.meta && (len(calls) != i+1 || tp != "00-"+calls[i].TraceID+"-"+calls[i].SpanID+"-01") {
			t.Errorf("step %d: traceparent %q does not name the call %+v", i, tp, calls)
		}
		if i == 2 && !bytes.Contains(send, []byte(`"arguments":{"q":"<a&b>"}`)) {
			t.Errorf("arguments rewritten: %s", send)
		}
	}
	end()
	calls := tr.Since(0)
	if len(calls) != 6 {
		t.Fatalf("calls %+v", calls)
	}
	if calls[2].Method != "tools/call" || calls[2].Tool != "search" || calls[3].Method != "tools/list" {
		t.Errorf("calls %+v", calls)
	}
	spans := flushed(t, tr, rcv, 7) // 6 calls + the root
	for _, c := range calls {
		s, ok := spans[c.SpanID]
		if !ok || hex.EncodeToString(s.TraceId) != c.TraceID || s.Kind != tracepb.Span_SPAN_KIND_CLIENT ||
			attr(s, "network.transport") != "pipe" || attr(s, "mcp.method.name") != c.Method {
			t.Fatalf("call %+v not exported as a stdio client span", c)
		}
	}
	if s := spans[calls[0].SpanID]; attr(s, "mcp.protocol.version") != "2025-06-18" {
		t.Errorf("initialize span %v", s.Attributes)
	}
	s := spans[calls[2].SpanID]
	if s.Name != "tools/call search" || attr(s, "gen_ai.tool.name") != "search" || attr(s, "jsonrpc.request.id") != "2" ||
		attr(s, "rpc.response.status_code") != "-32602" || attr(s, "error.type") != "-32602" || s.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("tools/call span %s %v %v", s.Name, s.Attributes, s.Status)
	}
	if s := spans[calls[5].SpanID]; attr(s, "error.type") != "timeout" || s.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("timed-out span %v %v", s.Attributes, s.Status)
	}
	if s := spans[calls[4].SpanID]; s.Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("answered span %v", s.Status)
	}
	if tr.Observer() == nil {
		t.Error("no observer")
	}
	var none *Tracer
	if none.Observer() != nil {
		t.Error("a nil tracer observes")
	}
}

// A POST whose body is too large to inspect and whose length is not declared
// reaches the server whole (untraced), not cut at the inspection cap.
func TestOversizeBodyOfUnknownLengthPassesWhole(t *testing.T) {
	tr, err := New(context.Background(), Options{Endpoint: testutil.NewOTLPReceiver(t).URL})
	if err != nil {
		t.Fatal(err)
	}
	mcpSrv := newEchoServer(t)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"s":"` +
		strings.Repeat("a", maxTracedBody) + `"}}}`
	// A reader of unknown type leaves ContentLength undeclared.
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, mcpSrv.url, io.MultiReader(strings.NewReader(body)))
	resp, err := tr.Client(nil).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	mcpSrv.mu.Lock()
	defer mcpSrv.mu.Unlock()
	if len(mcpSrv.bodies) != 1 {
		t.Fatalf("server got %d bodies", len(mcpSrv.bodies))
	}
	if got := len(mcpSrv.bodies[0]); got != len(body) {
		t.Errorf("server got %d bytes of %d", got, len(body))
	}
	if calls := tr.Since(0); len(calls) != 0 {
		t.Errorf("an uninspected body was traced: %+v", calls)
	}
}
