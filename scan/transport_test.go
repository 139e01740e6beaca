package scan

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/mcp"
	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
	"github.com/mcpdrill/mcpdrill/internal/testbed"
	"github.com/mcpdrill/mcpdrill/report"
)

// sloppyTransport is a 2025-11-25 Streamable HTTP server that gets the
// transport wrong on purpose: a notification answered 200, a text/plain
// reply, a GET answered with a page, no session or version header checked,
// and (unless ends) a session that outlives its DELETE.
type sloppyTransport struct {
	sessionID string
	ends      bool

	mu    sync.Mutex
	ended map[string]bool
	n     int
}

func (s *sloppyTransport) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, "<html></html>")
		return
	case http.MethodDelete:
		s.mu.Lock()
		if s.ends {
			s.ended[r.Header.Get(mcp.HeaderSessionID)] = true
		}
		s.mu.Unlock()
		return
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	body, _ := io.ReadAll(r.Body)
	if json.Unmarshal(body, &m) != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	ended := s.ended[r.Header.Get(mcp.HeaderSessionID)]
	s.n++
	id := s.sessionID
	if s.ends {
		id += strings.Repeat("x", s.n) // a fresh id per initialize
	}
	s.mu.Unlock()
	if ended {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	var result string
	switch {
	case len(m.ID) == 0:
		return // 200, no body
	case m.Method == "initialize":
		w.Header().Set(mcp.HeaderSessionID, id)
		result = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"sloppy-transport","version":"1"}}`
	case m.Method == "tools/list":
		result = `{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}`
	case m.Method == "ping":
		result = `{}`
	default:
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"error":{"code":-32601,"message":"method not found"}}`)
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":`+result+`}`)
}

// TestTransportChecksFail: each transport mistake fails the check that
// grades it, with a finding that says what was observed.
func TestTransportChecksFail(t *testing.T) {
	tests := []struct {
		name      string
		server    *sloppyTransport
		sessionID string // the finding expected of MCP-CONF-HTTP-SESSION-ID
	}{
		{"id with a space", &sloppyTransport{sessionID: "sess 1"}, "outside visible ASCII"},
		{"id outlives DELETE", &sloppyTransport{sessionID: "sess-1"}, "ended by DELETE was answered HTTP 200 instead of 404"},
		{"id ends with DELETE", &sloppyTransport{sessionID: "sess-1", ends: true}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.server.ended = map[string]bool{}
			srv := httptest.NewServer(tc.server)
			defer srv.Close()
			r := runScan(t, mcp.Config{URL: srv.URL, RequestTimeout: testutil.Hang})
			want := map[string]CheckStatus{
				RulePing:                CheckPass,
				RuleNotificationSilent:  CheckPass,
				RuleCancelUnknown:       CheckPass,
				RuleInvalidCursor:       CheckFail,
				RuleDiscover:            CheckNotApplicable,
				RuleHTTPAccepted:        CheckFail,
				RuleHTTPContentType:     CheckFail,
				RuleHTTPGet:             CheckFail,
				RuleHTTPSessionID:       CheckFail,
				RuleHTTPSessionRequired: CheckFail,
				RuleHTTPVersionHeader:   CheckFail,
				RuleHTTPHeaderMismatch:  CheckNotApplicable,
			}
			if tc.sessionID == "" {
				want[RuleHTTPSessionID] = CheckPass
			}
			for _, c := range r.Conformance {
				if w, ok := want[c.ID]; ok {
					if c.Status != w {
						t.Errorf("%s: %s (%s), want %s", c.ID, c.Status, c.Detail, w)
					}
					if c.ID == RuleHTTPSessionID && tc.sessionID == "" && !strings.Contains(c.Detail, "404") {
						t.Errorf("%s passed as %q, want the ended session answered 404", c.ID, c.Detail)
					}
					delete(want, c.ID)
				}
			}
			for id := range want {
				t.Errorf("%s: no check", id)
			}
			msgs := map[string]string{}
			for _, f := range r.Findings {
				msgs[f.Rule] += f.Message + "\n"
			}
			for rule, text := range map[string]string{
				RuleHTTPAccepted:        "answered HTTP 200 instead of 202",
				RuleHTTPContentType:     "other than application/json or text/event-stream",
				RuleHTTPGet:             "HTTP 200 (text/html)",
				RuleHTTPSessionRequired: "without the session id was answered HTTP 200 instead of 400",
				RuleHTTPVersionHeader:   "1999-01-01 was answered HTTP 200 instead of 400",
				RuleInvalidCursor:       "never issued was answered with a result",
				RuleHTTPSessionID:       tc.sessionID,
			} {
				if text != "" && !strings.Contains(msgs[rule], text) {
					t.Errorf("%s findings %q, want one saying %q", rule, msgs[rule], text)
				}
				if strings.Contains(msgs[rule], tc.server.sessionID) && tc.server.sessionID != "" && rule == RuleHTTPSessionID {
					t.Errorf("the finding quotes the session id: %q", msgs[rule])
				}
			}
		})
	}
}

// TestModernGETIsAWarning: on 2026-07-28 a GET or DELETE answered other
// than 405 breaks REQ-HTTP-05, a SHOULD, so the finding is a warning and
// cites it; before 2026-07-28 the same rule grades a MUST (REQ-HTTP-04).
func TestModernGETIsAWarning(t *testing.T) {
	h, err := testbed.NewHandler(testbed.Options{Profile: "good", Revisions: []string{mcp.Rev20260728}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{}`))
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	r := runScan(t, mcp.Config{URL: srv.URL + testbed.PathMCP, RequestTimeout: testutil.Hang})
	f := finding(r, RuleHTTPGet)
	if f.Severity != report.SeverityWarn || f.Requirement == nil || f.Requirement.ID != "REQ-HTTP-05" || !strings.Contains(f.Message, "GET was answered HTTP 200 instead of 405") {
		t.Fatalf("%+v (protocol %+v)", f, r.Protocol)
	}
}
