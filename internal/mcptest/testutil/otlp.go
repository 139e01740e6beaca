package testutil

import (
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// OTLPReceiver is an OTLP/HTTP trace collector on a loopback port until the
// test ends: it decodes the protobuf exports posted to URL/v1/traces (any
// other path or content type is a 400) and keeps their spans.
type OTLPReceiver struct {
	URL   string
	mu    sync.Mutex
	spans map[string]*tracepb.Span
}

// NewOTLPReceiver starts a receiver.
func NewOTLPReceiver(t testing.TB) *OTLPReceiver {
	t.Helper()
	r := &OTLPReceiver{spans: map[string]*tracepb.Span{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "unexpected export", http.StatusBadRequest)
			return
		}
		b, _ := io.ReadAll(req.Body)
		var ex coltrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &ex); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
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
		out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

// Spans returns the spans received so far, by hex span id.
func (r *OTLPReceiver) Spans() map[string]*tracepb.Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := make(map[string]*tracepb.Span, len(r.spans))
	for id, s := range r.spans {
		m[id] = s
	}
	return m
}

// Span returns the span of the hex id, or nil when none was received.
func (r *OTLPReceiver) Span(id string) *tracepb.Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.spans[id]
}
