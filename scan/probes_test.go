package scan

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
	"github.com/mcpdrill/mcpdrill/internal/mcp"
	"github.com/mcpdrill/mcpdrill/report"
)

// A stdio probe that failed is only taken for a dead server (and answered
// with a new session) when the server exited; a reply that was too large or
// undecodable says nothing of the kind.
func TestRunProbeReconnectsOnlyWhenTheServerExited(t *testing.T) {
	tests := []struct {
		name      string
		err       error
		reconnect bool
	}{
		{"exited", fmt.Errorf("%w: stdout closed", mcp.ErrServerExited), true},
		{"oversize reply", fmt.Errorf("%w: reply of 99 bytes discarded", mcp.ErrFrameTooLarge), false},
		{"undecodable reply", fmt.Errorf("%w: nesting", mcp.ErrUndecodable), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// The restart cannot succeed: a finding says whether it was tried.
			s := &scanner{cfg: mcp.Config{Command: []string{"/nonexistent/mcpdrill-test-server"}}, rep: &Report{}}
			p := s.runProbe(context.Background(), expectation{
				name: "unknown_method", rule: RuleErrUnknownMethod, want: "jsonrpc_error -32601",
				grade: wantCode(jsonrpc.CodeMethodNotFound, false),
				send:  func(context.Context) (*mcp.Response, error) { return nil, tc.err },
			})
			if p.Verdict != VerdictCrash {
				t.Fatalf("verdict %s", p.Verdict)
			}
			if got := slices.Contains(rules(s.rep), RuleIncomplete); got != tc.reconnect {
				t.Fatalf("restart attempted %v, want %v: %+v", got, tc.reconnect, s.rep.Findings)
			}
		})
	}
}

// The argument probes never pick a tool that looks destructive, by
// annotation or by name, unless told to; read-only ones come first.
func TestPickToolLimitsRisk(t *testing.T) {
	args := json.RawMessage(`{"type":"object","properties":{"x":{"type":"string"}},"required":["x"]}`)
	tool := func(name, ann string) mcp.Tool {
		t := mcp.Tool{Name: name, InputSchema: args}
		if ann != "" {
			t.Annotations = json.RawMessage(ann)
		}
		return t
	}
	tests := []struct {
		name     string
		tools    []mcp.Tool
		anyTool  bool
		want     string
		wantSkip string
	}{
		{"read-only name first", []mcp.Tool{tool("add", ""), tool("echo", ""), tool("get_user", "")}, false, "get_user", ""},
		{"annotation and name beat either", []mcp.Tool{tool("search", ""), tool("lookup", `{"readOnlyHint":true}`)}, false, "lookup", ""},
		{"annotation alone beats a neutral name", []mcp.Tool{tool("echo", ""), tool("weather", `{"readOnlyHint":true}`)}, false, "weather", ""},
		{"neutral when nothing reads", []mcp.Tool{tool("echo", ""), tool("run_command", "")}, false, "echo", ""},
		{"camel case is split", []mcp.Tool{tool("deleteFile", ""), tool("zeta", "")}, false, "zeta", ""},
		{"destructive hint left out", []mcp.Tool{tool("get_item", `{"destructiveHint":true}`), tool("zz", "")}, false, "zz", ""},
		{"a read-only hint does not clear a destructive name", []mcp.Tool{tool("write_file", `{"readOnlyHint":true}`), tool("zz", "")}, false, "zz", ""},
		{"nothing safe", []mcp.Tool{tool("create_directory", ""), tool("run_command", ""), tool("x", `{"destructiveHint":true}`)}, false, "",
			"not probed: each of the 3 tool(s) with required arguments is annotated destructive or has a destructive-looking name"},
		{"nothing safe, any tool allowed", []mcp.Tool{tool("run_command", ""), tool("create_directory", "")}, true, "create_directory", ""},
		{"no required arguments", []mcp.Tool{{Name: "get", InputSchema: json.RawMessage(`{"type":"object"}`)}}, false, "", "no listed tool declares required arguments"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &scanner{list: mcp.ToolList{Tools: tc.tools}, opts: Options{ProbeAnyTool: tc.anyTool}}
			got, skip := s.pickTool()
			if got.Name != tc.want || skip != tc.wantSkip {
				t.Fatalf("picked %q (skip %q), want %q (skip %q)", got.Name, skip, tc.want, tc.wantSkip)
			}
		})
	}
}

// Grading follows the expectation text, and the severity ladder ranks a
// dropped frame below a hang, a crash or accepted garbage.
func TestProbeGradingAndSeverity(t *testing.T) {
	errMsg := func(code int) *jsonrpc.Message {
		return &jsonrpc.Message{Error: &jsonrpc.Error{Code: code, Message: "x"}}
	}
	tests := []struct {
		name       string
		rule       string
		code       int
		alsoHTTP   bool
		resp       *mcp.Response
		err        error
		verdict    Verdict
		conformant bool
		severity   report.Severity // "" when conformant
	}{
		{"HTTP 400 with another code is a 4xx", RuleErrInvalidRequest, jsonrpc.CodeInvalidRequest, true,
			&mcp.Response{Message: errMsg(jsonrpc.CodeParseError), Status: 400}, nil, VerdictJSONRPCError, true, ""},
		{"HTTP 400 with the code", RuleErrParse, jsonrpc.CodeParseError, true,
			&mcp.Response{Message: errMsg(jsonrpc.CodeParseError), Status: 400}, nil, VerdictJSONRPCError, true, ""},
		{"HTTP 200 with another code", RuleErrInvalidRequest, jsonrpc.CodeInvalidRequest, true,
			&mcp.Response{Message: errMsg(-32000), Status: 200}, nil, VerdictJSONRPCError, false, report.SeverityWarn},
		{"HTTP 202 for a frame taken as a notification", RuleErrParse, jsonrpc.CodeParseError, true,
			&mcp.Response{Status: 202}, nil, VerdictAccepted, false, report.SeverityError},
		{"stdio: the code", RuleErrParse, jsonrpc.CodeParseError, false,
			&mcp.Response{Message: errMsg(jsonrpc.CodeParseError)}, nil, VerdictJSONRPCError, true, ""},
		{"stdio: malformed frame dropped", RuleErrParse, jsonrpc.CodeParseError, false, nil, mcp.ErrIgnored, VerdictIgnored, false, report.SeverityWarn},
		{"stdio: invalid request dropped", RuleErrInvalidRequest, jsonrpc.CodeInvalidRequest, false, nil, mcp.ErrIgnored, VerdictIgnored, false, report.SeverityWarn},
		{"stdio: a request without _meta dropped", RuleErrMissingMeta, jsonrpc.CodeInvalidParams, false, nil, mcp.ErrIgnored, VerdictIgnored, false, report.SeverityError},
		{"stdio: nothing answered", RuleErrParse, jsonrpc.CodeParseError, false, nil, fmt.Errorf("mcp: raw frame: %w", mcp.ErrTimeout), VerdictTimeout, false, report.SeverityError},
		{"stdio: garbage accepted", RuleErrInvalidRequest, jsonrpc.CodeInvalidRequest, false,
			&mcp.Response{Message: &jsonrpc.Message{Result: json.RawMessage(`{}`)}}, nil, VerdictAccepted, false, report.SeverityError},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &scanner{rep: &Report{}, cfg: mcp.Config{URL: "http://127.0.0.1:1/mcp"}}
			p := s.runProbe(context.Background(), expectation{name: "p", rule: tc.rule, want: "w",
				grade: wantCode(tc.code, tc.alsoHTTP),
				send:  func(context.Context) (*mcp.Response, error) { return tc.resp, tc.err }})
			if p.Verdict != tc.verdict || p.Conformant == nil || *p.Conformant != tc.conformant {
				t.Fatalf("probe %+v, want %s conformant=%v", p, tc.verdict, tc.conformant)
			}
			if tc.resp != nil && p.HTTPStatus != tc.resp.Status {
				t.Errorf("http_status %d, want %d", p.HTTPStatus, tc.resp.Status)
			}
			var sev report.Severity
			if len(s.rep.Findings) == 1 {
				sev = s.rep.Findings[0].Severity
			}
			if sev != tc.severity || len(s.rep.Findings) > 1 {
				t.Errorf("findings %+v, want one of severity %q", s.rep.Findings, tc.severity)
			}
		})
	}
	// A skipped probe was not graded: conformant is null.
	s := &scanner{rep: &Report{}}
	if p := s.runProbe(context.Background(), expectation{name: "p", skip: "no tool"}); p.Verdict != VerdictSkipped || p.Conformant != nil {
		t.Fatalf("skipped probe %+v", p)
	}
	b, _ := json.Marshal(Probe{Name: "p", Verdict: VerdictSkipped})
	if !strings.Contains(string(b), `"conformant":null`) {
		t.Fatalf("skipped probe as JSON: %s", b)
	}
}
