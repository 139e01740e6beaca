package scan

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/mcp"
	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
	"github.com/mcpdrill/mcpdrill/internal/target"
	"github.com/mcpdrill/mcpdrill/report"
)

// secretResult is a value a fixture tool returns; no report may quote it.
const secretResult = "RESULT-SECRET-c0ffee"

// contractTool is a fixture tool with a declared outputSchema and a fixed
// reply that honours or breaks it in a known way.
type contractTool struct {
	name   string
	output string          // outputSchema ("" for none)
	ann    string          // annotations
	reply  json.RawMessage // result, or nil for a JSON-RPC error
}

var contractTools = []contractTool{
	{name: "hits_wrong", output: `{"type":"object","properties":{"hits":{"type":"array"},"total":{"type":"integer","minimum":0}},"required":["hits","total"]}`,
		reply: json.RawMessage(`{"content":[{"type":"text","text":"{\"hits\":\"` + secretResult + `\",\"total\":-5}"}],"structuredContent":{"hits":"` + secretResult + `","total":-5}}`)},
	{name: "missing_id", output: `{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`,
		reply: json.RawMessage(`{"content":[{"type":"text","text":"{}"}],"structuredContent":{}}`)},
	{name: "no_structured", output: `{"type":"object","properties":{"n":{"type":"integer"}}}`,
		reply: json.RawMessage(`{"content":[{"type":"text","text":"` + secretResult + `"}]}`)},
	{name: "rpc_error", output: `{"type":"object"}`},
	{name: "no_mirror", output: `{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`,
		reply: json.RawMessage(`{"content":[{"type":"text","text":"done"}],"structuredContent":{"n":3}}`)},
	{name: "tool_error", output: `{"type":"object","required":["n"]}`,
		reply: json.RawMessage(`{"content":[{"type":"text","text":"failed"}],"isError":true}`)},
	{name: "fine", output: `{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`, ann: `{"readOnlyHint":true}`,
		reply: json.RawMessage(`{"content":[{"type":"text","text":"{\"n\":1}"}],"structuredContent":{"n":1}}`)},
}

// contractServer is a minimal 2025-06-18 Streamable HTTP server (JSON
// replies, no session) serving contractTools. It records every tools/call.
type contractServer struct {
	url   string
	mu    sync.Mutex
	calls []recordedCall
	reqs  int
}

type recordedCall struct {
	name        string
	args        json.RawMessage
	traceparent string // params._meta.traceparent
	header      string // traceparent HTTP header
}

// called returns the tools/call requests other than the scan's own
// unknown-tool probe.
func (s *contractServer) called() []recordedCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []recordedCall
	for _, c := range s.calls {
		if c.name != absentTool {
			out = append(out, c)
		}
	}
	return out
}

func newContractServer(t *testing.T) *contractServer {
	t.Helper()
	s := &contractServer{}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.url = srv.URL + "/mcp"
	return s
}

func (s *contractServer) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.reqs++
	s.mu.Unlock()
	if r.Method != http.MethodPost {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
			Meta      struct {
				Traceparent string `json:"traceparent"`
			} `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &req) != nil || req.ID == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	result := func(v string) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":`+v+`}`)
	}
	rpcErr := func(code int) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"error":{"code":`+jsonInt(code)+`,"message":"failed"}}`)
	}
	switch req.Method {
	case "initialize":
		result(`{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"contract","version":"1"}}`)
	case "tools/list":
		var ts []string
		for _, t := range contractTools {
			tj := `{"name":"` + t.name + `","inputSchema":{"type":"object","properties":{"query":{"type":"string","minLength":3},"limit":{"type":"integer","minimum":1,"maximum":5}}}`
			if t.output != "" {
				tj += `,"outputSchema":` + t.output
			}
			if t.ann != "" {
				tj += `,"annotations":` + t.ann
			}
			ts = append(ts, tj+"}")
		}
		result(`{"tools":[` + strings.Join(ts, ",") + `]}`)
	case "tools/call":
		s.mu.Lock()
		s.calls = append(s.calls, recordedCall{name: req.Params.Name, args: req.Params.Arguments, traceparent: req.Params.Meta.Traceparent, header: r.Header.Get("Traceparent")})
		s.mu.Unlock()
		for _, t := range contractTools {
			if t.name == req.Params.Name {
				if t.reply == nil {
					rpcErr(-32603)
				} else {
					result(string(t.reply))
				}
				return
			}
		}
		rpcErr(-32602)
	default:
		rpcErr(-32601)
	}
}

func jsonInt(n int) string { b, _ := json.Marshal(n); return string(b) }

func allContractTools() []string {
	var out []string
	for _, t := range contractTools {
		out = append(out, t.name)
	}
	return out
}

func callFindings(fs []report.Finding) []string {
	var out []string
	for _, f := range fs {
		if strings.HasPrefix(f.Rule, "MCP-DRIFT-CALL-") {
			out = append(out, f.Rule+" "+f.Tool+" "+f.Pointer)
		}
	}
	slices.Sort(out)
	return out
}

func TestInvokeDryRunSendsNothing(t *testing.T) {
	s := newContractServer(t)
	rep := scanWith(t, mcp.Config{URL: s.url}, Options{Invoke: InvokeOptions{Tools: append(allContractTools(), "absent"), Seed: 7}, SkipOriginCheck: true})
	if got := s.called(); len(got) != 0 {
		t.Fatalf("dry run sent %d tools/call (first %s)", len(got), got[0].name)
	}
	inv := rep.Invocation
	if inv == nil || inv.Executed || inv.Seed != 7 || inv.ResolvedAgainst != "listed" || len(inv.Calls) != len(contractTools)+1 {
		t.Fatalf("plan %+v", inv)
	}
	for _, c := range inv.Calls {
		switch {
		case c.Tool == "absent":
			if c.Outcome != OutcomeUnresolved {
				t.Errorf("absent: %+v", c)
			}
		case c.Outcome != OutcomePlanned || len(c.Arguments) == 0:
			t.Errorf("%s: %+v", c.Tool, c)
		}
	}
	if got := callFindings(rep.Findings); !slices.Equal(got, []string{"MCP-DRIFT-CALL-UNRESOLVED absent "}) {
		t.Errorf("findings %v", got)
	}
	// The plan is reproducible for a seed.
	again := scanWith(t, mcp.Config{URL: s.url}, Options{Invoke: InvokeOptions{Tools: allContractTools(), Seed: 7}, SkipOriginCheck: true})
	for i, c := range again.Invocation.Calls {
		if string(c.Arguments) != string(inv.Calls[i+boolInt(inv.Calls[0].Tool == "absent")].Arguments) {
			t.Errorf("%s: arguments differ between runs with one seed", c.Tool)
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestInvokeExecuteChecksReplies(t *testing.T) {
	s := newContractServer(t)
	rep := scanWith(t, mcp.Config{URL: s.url}, Options{Invoke: InvokeOptions{Tools: allContractTools(), Execute: true, Seed: 3}, SkipOriginCheck: true})
	want := []string{
		"MCP-DRIFT-CALL-ERROR-SHAPE rpc_error ",
		"MCP-DRIFT-CALL-NO-STRUCTURED-CONTENT no_structured /structuredContent",
		"MCP-DRIFT-CALL-OUTPUT-SCHEMA hits_wrong /hits",
		"MCP-DRIFT-CALL-OUTPUT-SCHEMA hits_wrong /total",
		"MCP-DRIFT-CALL-OUTPUT-SCHEMA missing_id ",
		"MCP-DRIFT-CALL-TEXT-MIRROR no_mirror /content",
	}
	if got := callFindings(rep.Findings); !slices.Equal(got, want) {
		t.Errorf("findings\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, f := range rep.Findings {
		if f.Rule == RuleCallOutputSchema && f.Pointer == "/hits" && !strings.Contains(f.Message, "expected array, got string") {
			t.Errorf("/hits message %q", f.Message)
		}
	}
	calls := s.called()
	var names []string
	for _, c := range calls {
		names = append(names, c.name)
		var args map[string]any
		if json.Unmarshal(c.args, &args) != nil || len(args) == 0 {
			t.Errorf("%s called with %s", c.name, c.args)
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, allContractTools()) && !slices.Equal(names, sorted(allContractTools())) {
		t.Errorf("called %v", names)
	}
	b, _ := json.Marshal(rep)
	if strings.Contains(string(b), secretResult) {
		t.Error("a tool result value reached the report")
	}
	outcomes := map[string]string{}
	for _, c := range rep.Invocation.Calls {
		outcomes[c.Tool] = c.Outcome
	}
	if outcomes["rpc_error"] != OutcomeJSONRPCError || outcomes["tool_error"] != OutcomeToolError || outcomes["fine"] != OutcomeResult {
		t.Errorf("outcomes %v", outcomes)
	}
}

func sorted(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }

// TestInvokeGate: annotations authorize nothing, only named tools run, and
// a production target needs the acknowledgement before anything is sent.
func TestInvokeGate(t *testing.T) {
	s := newContractServer(t)
	rep := scanWith(t, mcp.Config{URL: s.url}, Options{Invoke: InvokeOptions{Tools: []string{"hits_wrong"}, Execute: true}, SkipOriginCheck: true})
	if got := s.called(); len(got) != 1 || got[0].name != "hits_wrong" {
		t.Errorf("calls %+v (the read-only tool must not be called unnamed)", got)
	}
	if rep.Invocation == nil || !rep.Invocation.Executed {
		t.Errorf("invocation %+v", rep.Invocation)
	}
	for _, pattern := range []string{"*", "hits_*", "HITS_WRONG"} {
		rep := scanWith(t, mcp.Config{URL: s.url}, Options{Invoke: InvokeOptions{Tools: []string{pattern}, Execute: true}, SkipOriginCheck: true})
		if rep.Invocation.Calls[0].Outcome != OutcomeUnresolved {
			t.Errorf("%q resolved: %+v", pattern, rep.Invocation.Calls[0])
		}
	}
	if len(s.called()) != 1 {
		t.Errorf("a pattern invoked a tool: %+v", s.called())
	}

	addr := strings.TrimPrefix(strings.TrimSuffix(s.url, "/mcp"), "http://")
	dial := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}}
	before := s.reqs
	for _, o := range []Options{
		{Invoke: InvokeOptions{Tools: []string{"fine"}, Execute: true}},
		{Invoke: InvokeOptions{Tools: []string{"fine"}, Execute: true}, TargetClass: target.Unknown},
		{Invoke: InvokeOptions{Execute: true}, TargetClass: target.Local},
	} {
		_, err := Run(context.Background(), mcp.Config{URL: "http://mcp.acme.com/mcp", HTTPClient: dial}, o)
		if !errors.Is(err, ErrProductionNotAcknowledged) && !errors.Is(err, ErrExecuteWithoutTools) {
			t.Errorf("%+v: err %v", o.Invoke, err)
		}
	}
	s.mu.Lock()
	sent := s.reqs - before
	s.mu.Unlock()
	if sent != 0 {
		t.Errorf("a refused invocation still sent %d request(s)", sent)
	}
	rep = scanWith(t, mcp.Config{URL: "http://mcp.acme.com/mcp", HTTPClient: dial, RequestTimeout: testutil.Hang},
		Options{Invoke: InvokeOptions{Tools: []string{"fine"}, Execute: true, AllowProduction: true}, SkipOriginCheck: true})
	if rep.Invocation == nil || !rep.Invocation.Executed || rep.Invocation.Target.Class != target.Production {
		t.Errorf("acknowledged production run: %+v", rep.Invocation)
	}
}
