package scan

import (
	"context"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/mcpdrill/mcpdrill/internal/mcp"
	"github.com/mcpdrill/mcpdrill/internal/telemetry"
)

// otlpReceiver is an OTLP/HTTP collector decoding protobuf trace exports.
type otlpReceiver struct {
	url   string
	mu    sync.Mutex
	spans map[string]*tracepb.Span
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	t.Helper()
	r := &otlpReceiver{spans: map[string]*tracepb.Span{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		var ex coltrace.ExportTraceServiceRequest
		if req.URL.Path != "/v1/traces" || proto.Unmarshal(b, &ex) != nil {
			http.Error(w, "bad export", http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		for _, rs := range ex.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					r.spans[hex.EncodeToString(s.SpanId)] = s
				}
			}
		}
		r.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	r.url = srv.URL
	return r
}

func (r *otlpReceiver) span(id string) *tracepb.Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.spans[id]
}

func intAttr(s *tracepb.Span, key string) int64 {
	for _, a := range s.Attributes {
		if a.Key == key {
			return a.Value.GetIntValue()
		}
	}
	return 0
}

func tracedScan(t *testing.T, rcv *otlpReceiver, cfg mcp.Config, o Options) *Report {
	t.Helper()
	tr, err := telemetry.New(context.Background(), telemetry.Options{Endpoint: rcv.url})
	if err != nil {
		t.Fatal(err)
	}
	o.Tracer = tr
	rep := scanWith(t, cfg, o)
	if err := tr.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestFindingsNameTheirSpans exports the scan's spans to a real OTLP/HTTP
// receiver and follows every finding's span_id to the call it names.
func TestFindingsNameTheirSpans(t *testing.T) {
	rcv := newOTLPReceiver(t)
	s := newContractServer(t)
	rep := tracedScan(t, rcv, mcp.Config{URL: s.url}, Options{Invoke: InvokeOptions{Tools: allContractTools(), Execute: true}})
	traceID := ""
	listing := map[string]bool{}
	for _, f := range rep.Findings {
		if strings.HasPrefix(f.Rule, "MCP-OUT-") {
			listing[f.SpanID] = true
		}
	}
	for _, f := range rep.Findings {
		sp := rcv.span(f.SpanID)
		if sp == nil {
			t.Errorf("%s %s: span %q was not exported", f.Rule, f.Tool, f.SpanID)
			continue
		}
		if hex.EncodeToString(sp.TraceId) != f.TraceID {
			t.Errorf("%s: trace id %s, span's %x", f.Rule, f.TraceID, sp.TraceId)
		}
		if traceID == "" {
			traceID = f.TraceID
		} else if f.TraceID != traceID {
			t.Errorf("%s: a second trace in one run", f.Rule)
		}
		switch {
		case strings.HasPrefix(f.Rule, "MCP-DRIFT-CALL-"):
			if sp.Name != "tools/call "+f.Tool {
				t.Errorf("%s %s names span %q", f.Rule, f.Tool, sp.Name)
			}
		case strings.HasPrefix(f.Rule, "MCP-OUT-"), f.Rule == RuleAuthAnonymousList:
			if sp.Name != "tools/list" {
				t.Errorf("%s %s names span %q", f.Rule, f.Tool, sp.Name)
			}
		case strings.HasPrefix(f.Rule, "MCP-ERR-"):
			if listing[f.SpanID] {
				t.Errorf("%s names the listing, not its probe", f.Rule)
			}
		}
	}
	if len(rep.Findings) == 0 {
		t.Fatal("no findings")
	}
	// The server saw, in _meta and in the header, the span ids findings name.
	for _, c := range s.called() {
		if c.traceparent == "" || c.traceparent != c.header {
			t.Errorf("%s: traceparent _meta %q header %q", c.name, c.traceparent, c.header)
		}
		found := false
		for _, f := range rep.Findings {
			if f.Tool == c.name && strings.HasPrefix(f.Rule, "MCP-DRIFT-CALL-") && c.traceparent == "00-"+f.TraceID+"-"+f.SpanID+"-01" {
				found = true
			}
		}
		if !found && c.name != "fine" && c.name != "tool_error" {
			t.Errorf("%s: no finding names the call's span %s", c.name, c.traceparent)
		}
	}
}

// TestAuthFindingsNameTheAnonymousRequest: with credentials, the posture
// findings name the stripped request (a 401), and the URL-only plaintext
// finding names none.
func TestAuthFindingsNameTheAnonymousRequest(t *testing.T) {
	rcv := newOTLPReceiver(t)
	f := newAuthFixture(t, "bearer")
	addr := strings.TrimPrefix(strings.TrimSuffix(f.url, "/mcp"), "http://")
	dial := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}}
	rep := tracedScan(t, rcv, withCreds(mcp.Config{URL: "http://staging.acme.com/mcp", HTTPClient: dial}), Options{SkipOriginCheck: true})
	seen := map[string]bool{}
	for _, fd := range rep.Findings {
		switch fd.Rule {
		case RuleAuthEnforced:
			sp := rcv.span(fd.SpanID)
			if sp == nil || intAttr(sp, "http.response.status_code") != 401 {
				t.Errorf("ENFORCED names %v, not the refused anonymous request", sp)
			}
		case RuleAuthPlaintext:
			if fd.TraceID != "" || fd.SpanID != "" {
				t.Errorf("the URL-only finding names a span: %+v", fd)
			}
		default:
			if fd.SpanID == "" {
				t.Errorf("%s has no span", fd.Rule)
			}
		}
		seen[fd.Rule] = true
	}
	if !seen[RuleAuthEnforced] || !seen[RuleAuthPlaintext] {
		t.Errorf("findings %v", seen)
	}
}
