package scan

import (
	"context"
	"encoding/hex"
	"net"
	"net/http"
	"strings"
	"testing"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/mcpdrill/mcpdrill/internal/mcp"
	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
	"github.com/mcpdrill/mcpdrill/internal/telemetry"
)

func intAttr(s *tracepb.Span, key string) int64 {
	for _, a := range s.Attributes {
		if a.Key == key {
			return a.Value.GetIntValue()
		}
	}
	return 0
}

func tracedScan(t *testing.T, rcv *testutil.OTLPReceiver, cfg mcp.Config, o Options) *Report {
	t.Helper()
	tr, err := telemetry.New(context.Background(), telemetry.Options{Endpoint: rcv.URL})
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
	rcv := testutil.NewOTLPReceiver(t)
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
		sp := rcv.Span(f.SpanID)
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
	rcv := testutil.NewOTLPReceiver(t)
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
			sp := rcv.Span(fd.SpanID)
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
