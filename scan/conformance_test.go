package scan

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
	"github.com/mcpdrill/mcpdrill/internal/mcp"
	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
	"github.com/mcpdrill/mcpdrill/internal/testbed"
)

// strictHeaders refuses, before anything else, a modern request whose
// MCP-Protocol-Version header differs from its _meta revision (-32020, HTTP
// 400), as a 2026-07-28 server may.
func strictHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var m struct {
			ID     json.RawMessage `json:"id"`
			Params struct {
				Meta map[string]json.RawMessage `json:"_meta"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &m) == nil {
			var rev string
			if raw, ok := m.Params.Meta[mcp.MetaProtocolVersion]; ok && json.Unmarshal(raw, &rev) == nil && rev != r.Header.Get(mcp.HeaderProtocolVersion) {
				b, _ := jsonrpc.NewErrorResponse(m.ID, &jsonrpc.Error{Code: jsonrpc.CodeHeaderMismatch, Message: "header mismatch"})
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				_, _ = w.Write(b)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// The unknown-revision probe must be a coherent request: over HTTP its
// MCP-Protocol-Version header names the same revision as its _meta, so a
// server that checks the headers first still reaches the revision.
func TestVersionNegotiationHeaderMatchesBody(t *testing.T) {
	h, err := testbed.NewHandler(testbed.Options{Profile: "good"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(strictHeaders(h))
	t.Cleanup(srv.Close)
	cfg := mcp.Config{URL: srv.URL + testbed.PathMCP, RequestTimeout: testutil.Hang}
	r, err := Run(t.Context(), cfg, Options{ToolVersion: "test", Deadline: time.Minute, SkipSecondConnection: true, SkipOriginCheck: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.Protocol.Revision != mcp.Rev20260728 {
		t.Fatalf("protocol %+v", r.Protocol)
	}
	for _, c := range r.Conformance {
		if c.ID == RuleVersionNeg {
			if c.Status != CheckPass {
				t.Fatalf("version negotiation: %+v", c)
			}
			return
		}
	}
	t.Fatal("no version negotiation check")
}
