package scan

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
	"github.com/mcpdrill/mcpdrill/report"
)

// SDKTypeScript names the TypeScript SDK (@modelcontextprotocol/sdk, its 1.x
// line) in ObservedSDK.Name, as studies name it in sdk_observed.
const SDKTypeScript = "typescript-sdk"

// ObservedSDK is the MCP SDK the scan saw the server answer as, from
// wording the SDK itself produces and the server's own code does not pick
// (METHODOLOGY, Part I §4, "Behaviours of an SDK"). Evidence names what was
// seen, never a server's text beyond the SDK's fixed words.
type ObservedSDK struct {
	Name string `json:"name"`
	// Layer is the part of the SDK the evidence shows: "McpServer" (its
	// high-level server, which implements tools/list, tools/call,
	// resources/read and prompts/get itself), "" for its protocol layer
	// only.
	Layer    string   `json:"layer,omitempty"`
	Evidence []string `json:"evidence"`
}

// layerMcpServer is the TypeScript SDK's high-level server (ObservedSDK.Layer).
const layerMcpServer = "McpServer"

// sdkSeen gathers the marks of an SDK the scan's requests came back with.
type sdkSeen struct {
	// errors counts the JSON-RPC errors read with a message; mcpErrors
	// those worded as the TypeScript SDK's McpError words them: "MCP error
	// CODE: …", CODE the error's own code.
	errors, mcpErrors int
	// unknownTool is set when tools/call of a tool that does not exist
	// came back as McpServer returns it: an isError result whose text is
	// "MCP error -32602: Tool NAME not found".
	unknownTool bool
}

// sawError notes a JSON-RPC error the server answered.
func (k *sdkSeen) sawError(e *jsonrpc.Error) {
	if e == nil || e.Message == "" {
		return
	}
	k.errors++
	if mcpErrorWording(e.Code, e.Message) {
		k.mcpErrors++
	}
}

// mcpErrorWording reports whether msg is worded as the TypeScript SDK's
// McpError constructor words it: "MCP error " and the code, a colon, a space.
func mcpErrorWording(code int, msg string) bool {
	return strings.HasPrefix(msg, "MCP error "+strconv.Itoa(code)+": ")
}

// sawUnknownTool notes the result of tools/call of absentTool.
func (k *sdkSeen) sawUnknownTool(result json.RawMessage) {
	var r struct {
		IsError bool `json:"isError"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
	if json.Unmarshal(result, &r) != nil || !r.IsError || len(r.Content) == 0 {
		return
	}
	want := fmt.Sprintf("MCP error %d: Tool %s not found", jsonrpc.CodeInvalidParams, absentTool)
	if r.Content[0].Type == "text" && r.Content[0].Text == want {
		k.unknownTool = true
	}
}

// observed concludes: the TypeScript SDK when its McpServer's or its
// McpError's wording came back, nil otherwise.
func (k *sdkSeen) observed() *ObservedSDK {
	if !k.unknownTool && k.mcpErrors == 0 {
		return nil
	}
	o := &ObservedSDK{Name: SDKTypeScript, Evidence: []string{}}
	if k.unknownTool {
		o.Layer = layerMcpServer
		o.Evidence = append(o.Evidence, `tools/call of a tool that does not exist came back as McpServer returns it: an isError result "MCP error -32602: Tool … not found"`)
	}
	if k.mcpErrors > 0 {
		o.Evidence = append(o.Evidence, fmt.Sprintf(`%d of %d JSON-RPC error message(s) begin "MCP error CODE: ", as the SDK's McpError words them`, k.mcpErrors, k.errors))
	}
	return o
}

// sdkBehaviour is a behaviour a check found that an SDK has of its own: a
// server built on it behaves so unless its author replaces the SDK's code.
type sdkBehaviour struct {
	// rule is the rule whose finding the behaviour explains.
	rule string
	sdk  string
	// layer is the part of the SDK that has it ("" for any part).
	layer string
	// does says what the SDK does, for the finding.
	does string
}

// The TypeScript SDK's own behaviours that the checks grade, each read in
// its source (1.32.2) and seen on the pinned server-everything
// (METHODOLOGY, Part I §4).
var (
	tsIgnoresCursor = sdkBehaviour{RuleInvalidCursor, SDKTypeScript, layerMcpServer,
		"the TypeScript SDK's McpServer answers tools/list without reading its cursor"}
	tsUnknownToolResult = sdkBehaviour{RuleErrUnknownTool, SDKTypeScript, layerMcpServer,
		"the TypeScript SDK's McpServer turns its own -32602 for an unknown tool into an isError result"}
	tsResourceNotFound = sdkBehaviour{RuleResourceMissing, SDKTypeScript, layerMcpServer,
		"the TypeScript SDK's McpServer refuses a URI it does not have with -32602"}
	tsSetLevelInternal = sdkBehaviour{RuleLogLevel, SDKTypeScript, "",
		"the TypeScript SDK validates logging/setLevel before the server's code runs and answers a failed validation with -32603"}
	tsDropsUnparsable = sdkBehaviour{RuleErrParse, SDKTypeScript, "",
		"the TypeScript SDK's stdio transport drops a line it cannot parse without an answer"}
	tsDropsInvalid = sdkBehaviour{RuleErrInvalidRequest, SDKTypeScript, "",
		"the TypeScript SDK's stdio transport drops a line that is no JSON-RPC message without an answer"}
)

// sdkCandidate is a finding that is an SDK's behaviour if the scan saw the
// server run on that SDK.
type sdkCandidate struct {
	finding int // index in Report.Findings
	b       sdkBehaviour
}

// sdkBehaviours are the SDK behaviours the checks know, for the catalogue:
// a warning of their rules may become an info note (attributeSDK).
var sdkBehaviours = []sdkBehaviour{tsIgnoresCursor, tsUnknownToolResult, tsResourceNotFound, tsSetLevelInternal, tsDropsUnparsable, tsDropsInvalid}

// findSDK records a finding of b's rule, and that it is b's if the server
// turns out to run on b's SDK.
func (s *scanner) findSDK(b sdkBehaviour, sev report.Severity, tool, pointer, msg string) {
	s.findSev(b.rule, sev, tool, pointer, msg)
	s.sdkCandidates = append(s.sdkCandidates, sdkCandidate{finding: len(s.rep.Findings) - 1, b: b})
}

// attributeSDK settles the candidates once the scan is over: when the
// server was seen to run on the SDK (and the part of it) that has the
// behaviour, the finding says so, and a warning becomes an info note. Its
// author cannot change the SDK's behaviour in the server's code; the check
// and the requirement still fail, so the accounting stays what the server
// does.
func (s *scanner) attributeSDK() {
	o := s.sdk.observed()
	s.rep.SDK = o
	if o == nil {
		return
	}
	for _, c := range s.sdkCandidates {
		if c.b.sdk != o.Name || (c.b.layer != "" && c.b.layer != o.Layer) {
			continue
		}
		f := &s.rep.Findings[c.finding]
		f.Message += "; " + c.b.does + ", so every server built on it does the same: the fix is the SDK's"
		if f.Severity == report.SeverityWarn {
			f.Severity = report.SeverityInfo
		}
	}
}
