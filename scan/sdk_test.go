package scan

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
	"github.com/mcpdrill/mcpdrill/report"
)

// TestSDKMarks: the TypeScript SDK's wording, and what is not it.
func TestSDKMarks(t *testing.T) {
	for _, tc := range []struct {
		code int
		msg  string
		want bool
	}{
		{-32602, "MCP error -32602: Prompt x not found", true},
		{-32603, "MCP error -32603: connect ECONNREFUSED", true},
		{-32602, "MCP error -32603: code differs", false},
		{-32602, "MCP error -32602:no space", false},
		{-32601, "Method not found", false},
		{-32602, "mcp error -32602: lower case", false},
	} {
		if got := mcpErrorWording(tc.code, tc.msg); got != tc.want {
			t.Errorf("%d %q: %v", tc.code, tc.msg, got)
		}
	}
	for _, tc := range []struct {
		result string
		want   bool
	}{
		{`{"isError":true,"content":[{"type":"text","text":"MCP error -32602: Tool __mcpdrill_absent_tool__ not found"}]}`, true},
		{`{"isError":true,"content":[{"type":"text","text":"MCP error -32602: Tool other not found"}]}`, false},
		{`{"isError":false,"content":[{"type":"text","text":"MCP error -32602: Tool __mcpdrill_absent_tool__ not found"}]}`, false},
		{`{"isError":true,"content":[]}`, false},
		{`[1,2]`, false},
	} {
		var k sdkSeen
		k.sawUnknownTool(json.RawMessage(tc.result))
		if k.unknownTool != tc.want {
			t.Errorf("%s: %v", tc.result, k.unknownTool)
		}
	}
	var k sdkSeen
	if k.observed() != nil {
		t.Error("nothing seen, an SDK observed")
	}
	k.sawError(&jsonrpc.Error{Code: -32602, Message: "MCP error -32602: x"})
	k.sawError(&jsonrpc.Error{Code: -32601, Message: "Method not found"})
	if o := k.observed(); o == nil || o.Name != SDKTypeScript || o.Layer != "" || len(o.Evidence) != 1 || !strings.HasPrefix(o.Evidence[0], "1 of 2 ") {
		t.Errorf("observed %+v", o)
	}
}

// TestAttributeSDK: a candidate is the SDK's only when the SDK (and the
// part of it) that has the behaviour was seen; a warning becomes info, an
// error stays one, and each says whose behaviour it is.
func TestAttributeSDK(t *testing.T) {
	run := func(seen sdkSeen) *Report {
		s := &scanner{rep: &Report{}, sdk: seen}
		s.findSDK(tsIgnoresCursor, report.SeverityWarn, "", "", "page served")
		s.findSDK(tsSetLevelInternal, report.SeverityWarn, "", "", "refused with -32603")
		s.findSDK(tsUnknownToolResult, report.SeverityError, "", "", "tool_error")
		s.find(RulePing, "", "", "not empty")
		s.attributeSDK()
		return s.rep
	}
	// McpError wording only: the protocol layer's behaviours, not McpServer's.
	r := run(sdkSeen{errors: 1, mcpErrors: 1})
	want := []report.Severity{report.SeverityWarn, report.SeverityInfo, report.SeverityError, report.SeverityError}
	for i, f := range r.Findings {
		named := strings.Contains(f.Message, "TypeScript SDK")
		if f.Severity != want[i] || named != (i == 1) {
			t.Errorf("McpError only: %d %+v", i, f)
		}
	}
	// McpServer seen: its behaviours too; the error stays an error.
	r = run(sdkSeen{unknownTool: true})
	want = []report.Severity{report.SeverityInfo, report.SeverityInfo, report.SeverityError, report.SeverityError}
	for i, f := range r.Findings {
		named := strings.Contains(f.Message, "TypeScript SDK")
		if f.Severity != want[i] || named != (i < 3) {
			t.Errorf("McpServer: %d %+v", i, f)
		}
	}
	if r.SDK == nil || r.SDK.Layer != "McpServer" {
		t.Errorf("sdk %+v", r.SDK)
	}
	// Nothing seen: nothing attributed.
	r = run(sdkSeen{})
	if r.SDK != nil || r.Findings[0].Severity != report.SeverityWarn || strings.Contains(r.Findings[0].Message, "SDK") {
		t.Errorf("no SDK: %+v %+v", r.SDK, r.Findings[0])
	}
}
