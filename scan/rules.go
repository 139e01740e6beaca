package scan

import (
	"strings"
	"sync"

	"github.com/mcpdrill/mcpdrill/report"
)

// Rule ids the scanner emits. They are stable: a rule is never renumbered or
// reused for another meaning.
const (
	RuleToolName         = "MCP-CONF-TOOL-NAME"
	RuleDuplicateTool    = "MCP-CONF-DUPLICATE-TOOL"
	RuleInputSchemaType  = "MCP-CONF-INPUT-SCHEMA-OBJECT"
	RuleSchemaInvalid    = "MCP-CONF-SCHEMA-INVALID"
	RuleOutputRootObject = "MCP-CONF-OUTPUT-ROOT-OBJECT"
	RuleCacheHints       = "MCP-CONF-CACHE-HINTS"
	RuleToolSetStable    = "MCP-CONF-TOOLSET-STABLE"
	RuleToolOrder        = "MCP-CONF-TOOL-ORDER"
	RuleStdoutPurity     = "MCP-CONF-STDOUT-PURITY"
	RuleVersionNeg       = "MCP-CONF-VERSION-NEGOTIATION"
	RuleResultType       = "MCP-CONF-RESULT-TYPE"
	RuleCursorLoop       = "MCP-CONF-CURSOR-LOOP"
	RuleServerInfo       = "MCP-CONF-SERVER-INFO"
	RuleOversizeFrame    = "MCP-SCAN-OVERSIZE-FRAME"
	RuleServerRequest    = "MCP-CONF-SERVER-REQUEST"
	RuleStdioShutdown    = "MCP-CONF-STDIO-SHUTDOWN"
	RuleLegacyReply      = "MCP-CONF-LEGACY-REPLY"

	RuleResourcesList     = "MCP-CONF-RESOURCES-LIST"
	RuleResourceTemplates = "MCP-CONF-RESOURCE-TEMPLATES"
	RuleResourceRead      = "MCP-CONF-RESOURCE-READ"
	RuleResourceMissing   = "MCP-CONF-RESOURCE-NOT-FOUND"
	RulePromptsList       = "MCP-CONF-PROMPTS-LIST"
	RulePromptGet         = "MCP-CONF-PROMPT-GET"
	RulePromptUnknown     = "MCP-CONF-PROMPT-UNKNOWN"
	RulePromptMissingArgs = "MCP-CONF-PROMPT-MISSING-ARGS"
	RuleLogLevel          = "MCP-CONF-LOG-LEVEL"
	RuleCompletion        = "MCP-CONF-COMPLETION"
	RuleCapHonesty        = "MCP-CONF-CAPABILITY-HONESTY"
	RuleContentCacheHints = "MCP-CONF-CONTENT-CACHE-HINTS"

	RulePing                = "MCP-CONF-PING"
	RuleNotificationSilent  = "MCP-CONF-NOTIFICATION-SILENT"
	RuleCancelUnknown       = "MCP-CONF-CANCEL-UNKNOWN"
	RuleInvalidCursor       = "MCP-CONF-INVALID-CURSOR"
	RuleDiscover            = "MCP-CONF-DISCOVER"
	RuleHTTPAccepted        = "MCP-CONF-HTTP-NOTIFICATION-202"
	RuleHTTPContentType     = "MCP-CONF-HTTP-CONTENT-TYPE"
	RuleHTTPGet             = "MCP-CONF-HTTP-GET"
	RuleHTTPSessionID       = "MCP-CONF-HTTP-SESSION-ID"
	RuleHTTPSessionRequired = "MCP-CONF-HTTP-SESSION-REQUIRED"
	RuleHTTPVersionHeader   = "MCP-CONF-HTTP-VERSION-HEADER"
	RuleHTTPHeaderMismatch  = "MCP-CONF-HTTP-HEADER-MISMATCH"
	RuleCompletionUnknown   = "MCP-CONF-COMPLETION-UNKNOWN"

	RuleNoOutputSchema = "MCP-OUT-NO-SCHEMA"
	RuleVacuous        = "MCP-OUT-VACUOUS"
	RuleUnconstrained  = "MCP-OUT-UNCONSTRAINED-FIELDS"
	RuleWrapped        = "MCP-OUT-WRAPPED"
	RuleUnassessed     = "MCP-OUT-UNASSESSED"

	// RulePartialContract is the partial verdict (some sampled shapes'
	// corrupted payloads rejected, others not); RuleUnconstrained is about
	// the single-leaf corruptions of an enforceable schema (it was
	// MCP-OUT-PARTIAL, a name that read as the partial verdict).
	RulePartialContract = "MCP-OUT-PARTIAL-CONTRACT"

	RuleErrUnknownMethod  = "MCP-ERR-UNKNOWN-METHOD"
	RuleErrUnknownTool    = "MCP-ERR-UNKNOWN-TOOL"
	RuleErrMissingArgs    = "MCP-ERR-MISSING-ARGS"
	RuleErrWrongType      = "MCP-ERR-WRONG-TYPE"
	RuleErrParse          = "MCP-ERR-PARSE"
	RuleErrInvalidRequest = "MCP-ERR-INVALID-REQUEST"
	RuleErrMissingMeta    = "MCP-ERR-MISSING-META"

	RuleIncomplete  = "MCP-SCAN-INCOMPLETE"
	RuleUnreachable = "MCP-SCAN-UNREACHABLE"
	RuleRefused     = "MCP-SCAN-PROTOCOL-REFUSED"
)

// Catalogue documents every rule the scanner can emit, each with the
// specification requirements it grades.
func Catalogue() report.Catalogue {
	cat := append(append(append(baseRules(), authRules()...), invokeRules()...), providerRules()...)
	for i := range cat {
		cat[i].Requirements = ruleRequirements(cat[i].ID)
		cat[i].Graded = gradedSeverities(cat[i].ID, cat[i].Severity)
	}
	return cat
}

// gradedBeyondDefault are the severities, besides its default, that a
// check gives a rule's findings where it grades them by what it found
// (each site passes its severity to findSev): STDIO-SHUTDOWN (info when
// the server exits on its stdin closing), AUTH-ANONYMOUS-LIST (by target
// class), AUTH-PLAINTEXT (error with credentials), AUTH-REDIRECT (by where
// it leads), SERVER-REQUEST (by revision and method), RESOURCE-READ (info
// for what no revision asks), RESOURCE-MISSING (warn and info before
// 2026-07-28, by the answer) and TOOLSET-STABLE (warn before 2026-07-28).
var gradedBeyondDefault = map[string][]report.Severity{
	RuleStdioShutdown:     {report.SeverityInfo},
	RuleAuthAnonymousList: {report.SeverityInfo, report.SeverityError},
	RuleAuthPlaintext:     {report.SeverityError},
	RuleAuthRedirect:      {report.SeverityInfo, report.SeverityError},
	RuleServerRequest:     {report.SeverityWarn, report.SeverityError},
	RuleResourceRead:      {report.SeverityInfo},
	RuleResourceMissing:   {report.SeverityWarn, report.SeverityInfo},
	RuleToolSetStable:     {report.SeverityWarn},
	RuleHTTPGet:           {report.SeverityWarn},
}

// gradedSeverities lists every severity a finding of rule id may carry,
// most serious first, when there is more than its default def: those of
// gradedBeyondDefault; warn for an error probe's answer refused in another
// form or dropped (probeSeverity: every probe's rule is MCP-ERR-*); info
// for a conformance rule some revision asks nothing of (adviceOnly,
// mayBeAdvice), and for a warning an SDK's own behaviour explains
// (attributeSDK). TestFindingsCarryTheirRulesSeverities holds the scans of
// the testbed's profiles to the list.
func gradedSeverities(id string, def report.Severity) []report.Severity {
	set := map[report.Severity]bool{def: true}
	for _, s := range gradedBeyondDefault[id] {
		set[s] = true
	}
	if strings.HasPrefix(id, "MCP-ERR-") {
		set[report.SeverityWarn] = true
	}
	if mayBeAdvice(id) {
		set[report.SeverityInfo] = true
	}
	for _, b := range sdkBehaviours {
		if b.rule == id && set[report.SeverityWarn] {
			set[report.SeverityInfo] = true
		}
	}
	if len(set) == 1 {
		return nil
	}
	var out []report.Severity
	for _, s := range []report.Severity{report.SeverityError, report.SeverityWarn, report.SeverityInfo} {
		if set[s] {
			out = append(out, s)
		}
	}
	return out
}

func baseRules() report.Catalogue {
	return report.Catalogue{
		rule(RuleToolName, report.SeverityWarn, "Tool name breaks the naming rules",
			"Tool names should be 1-128 characters of A-Z, a-z, 0-9, '_', '-' and '.' (2025-11-25 and later: a warning; before it, advice at info). Other characters break clients that key tools by name or mirror them in headers."),
		rule(RuleDuplicateTool, report.SeverityError, "Two tools share a name",
			"tools/list returned the same name twice. A client cannot tell which definition a call reaches."),
		rule(RuleInputSchemaType, report.SeverityError, "inputSchema is not an object schema",
			"Every tool's inputSchema must be a JSON Schema object whose type is \"object\"; arguments are always a JSON object."),
		rule(RuleSchemaInvalid, report.SeverityError, "A declared schema does not compile",
			"The inputSchema or outputSchema is not a valid JSON Schema (or uses a remote $ref, which mcpdrill never fetches). An output contract that does not compile is reported as invalid, never as vacuous."),
		rule(RuleOutputRootObject, report.SeverityError, "outputSchema root is not an object",
			"Before 2026-07-28, structuredContent is a JSON object, so an outputSchema must have type \"object\" at its root."),
		rule(RuleCacheHints, report.SeverityError, "tools/list lacks ttlMs or cacheScope",
			"From 2026-07-28 every tools/list page must carry ttlMs (integer >= 0) and cacheScope (public or private)."),
		rule(RuleToolSetStable, report.SeverityError, "The tool set differs between two connections",
			"A second connection with the same credentials listed a different tool set. From 2026-07-28 the set must not vary per connection (error); before it no revision asks that, and a varying set, which defeats manifest pinning, is advice (info)."),
		rule(RuleToolOrder, report.SeverityInfo, "Tools are listed in a different order on a second connection",
			"Servers should list tools in a deterministic order so clients and caches can compare lists cheaply."),
		rule(RuleStdoutPurity, report.SeverityError, "The stdio server wrote non-protocol output to stdout",
			"On stdio the server must write only MCP messages to stdout; logs belong on stderr. Every line that is not a JSON-RPC 2.0 message counts: text, a blank line, and JSON that is no JSON-RPC message (a log record such as {\"preamble\":true}, an object without \"jsonrpc\": \"2.0\"). Clients may drop the line or fail the session."),
		rule(RuleVersionNeg, report.SeverityError, "Protocol version negotiation misbehaved",
			"A modern (2026-07-28) server must refuse an unknown revision with -32022 and list its supported versions; a legacy server must answer initialize with a revision it supports."),
		rule(RuleResultType, report.SeverityWarn, "A modern result lacks resultType",
			"From 2026-07-28 every result must carry resultType (complete or input_required)."),
		rule(RuleCursorLoop, report.SeverityError, "tools/list pagination loops",
			"A nextCursor returned a page already seen. A naive client pages forever."),
		rule(RuleServerInfo, report.SeverityWarn, "The server does not identify itself",
			"No serverInfo name/version came back from initialize or server/discover; reports and pins cannot name the build."),
		renamed(rule(RuleOversizeFrame, report.SeverityWarn, "A message exceeded the size cap",
			"A message larger than --max-frame was discarded; whatever it carried was not established. The cap is mcpdrill's, not the specification's (which sets no message size), so this grades the scan's completeness, not the server's conformance."), "MCP-CONF-OVERSIZE-FRAME"),
		rule(RuleServerRequest, report.SeverityInfo, "The server sent requests to the client",
			"The server asked the client something (ping, roots, sampling, elicitation) during the scan; the scan declares no client capability. From 2026-07-28 a server must not send requests at all (error). Before it a ping is allowed (info), and any other request uses a capability the client did not declare: an error from 2025-06-18 (MUST), a warning before it (SHOULD)."),
		rule(RuleStdioShutdown, report.SeverityWarn, "The stdio server did not exit when its stdin closed",
			"A client ends a stdio server by closing its stdin, then waits, then sends SIGTERM, then SIGKILL. A server that exits once its stdin closes is recorded at info; one that needed SIGTERM or SIGKILL is a warning from 2026-07-28, which asks it to exit (SHOULD), and advice (info) before it, which does not: every client that stops it waits out its grace, and a client that does not signal leaves it running. The time it took is in the report's meta (timing.shutdown_ms)."),

		rule(RuleLegacyReply, report.SeverityWarn, "A reply on an older revision carries 2026-07-28 fields",
			"On a revision before 2026-07-28 the server must speak the revision it negotiated; a tools/list page carrying resultType, ttlMs or cacheScope mixes eras, and a dual-era client may read the reply as a modern one."),

		rule(RuleResourcesList, report.SeverityError, "resources/list is refused or malformed",
			"A server that declares resources must answer resources/list with a resources array whose items carry a uri and a name, paginated by nextCursor without repeating a cursor (at most 10 pages are read)."),
		rule(RuleResourceTemplates, report.SeverityError, "resources/templates/list is refused or malformed",
			"A server that declares resources and offers templates answers resources/templates/list with resourceTemplates whose items carry a name and an RFC 6570 uriTemplate. Templates are optional: -32601 (no templates offered) makes the check not applicable, never a failure."),
		rule(RuleResourceRead, report.SeverityError, "A listed resource does not read back",
			"resources/read of a listed resource (the first 3 are read) must return a non-empty contents array; each item carries a uri, exactly one of text and blob (blob base64), a string mimeType if any, and one of them the URI that was read. A read the server refuses with an error (but -32601) is not graded: what the resource needs (a service behind it, credentials, a browser session) may be missing where the scan runs; an info finding says what the error names as missing, and the check is not established when every read was refused. Findings name the resource by its index in the listing, never its URI or content."),
		rule(RuleResourceMissing, report.SeverityError, "A read of a missing resource is not refused",
			"resources/read of a URI the server does not have must be an error, never a result or an empty contents list: -32002 before 2026-07-28 (SHOULD: a result is a warning, another error code an info note), -32602 from 2026-07-28 (MUST, -32002 included)."),
		rule(RulePromptsList, report.SeverityError, "prompts/list is refused or malformed",
			"A server that declares prompts must answer prompts/list with a prompts array whose items carry a name, and arguments (if any) as an array of objects with a name."),
		rule(RulePromptGet, report.SeverityError, "A listed prompt does not come back as messages",
			"prompts/get of a listed prompt (the first 3), with its required arguments filled in (from completion/complete when completions are declared, else a fixed word), must return a non-empty messages array, each message with role user or assistant and a typed content block. A refusal of the generated values is not graded."),
		rule(RulePromptUnknown, report.SeverityWarn, "An unknown prompt is not refused with -32602",
			"prompts/get of a prompt the server does not list should be refused with -32602."),
		rule(RulePromptMissingArgs, report.SeverityWarn, "A prompt is served without its required arguments",
			"prompts/get of a listed prompt that declares a required argument, sent without any argument, should be refused with -32602 (Invalid params); a result is a warning, as is another error code."),
		rule(RuleLogLevel, report.SeverityWarn, "logging/setLevel misbehaves",
			"Before 2026-07-28 a server that declares logging accepts logging/setLevel with a valid level and should refuse an invalid one with -32602."),
		rule(RuleCompletion, report.SeverityError, "completion/complete misbehaves",
			"A server that declares completions answers completion/complete for a listed prompt argument (else a resource template variable) with a completion object of at most 100 string values."),
		rule(RuleCapHonesty, report.SeverityError, "Declared capabilities and served methods disagree",
			"A declared capability whose method (resources/list, prompts/list, logging/setLevel, completion/complete) answers -32601 claims a feature the server lacks: this finding is the one finding of it (the method's own check fails without a second). An undeclared resources or prompts capability whose list method lists something, or undeclared completions that complete something, break the rule that a server that supports a capability must declare it; an empty list serves nothing. resources/templates/list is optional and not graded here; 2024-11-05 has no completions capability to declare."),

		rule(RuleContentCacheHints, report.SeverityError, "A resources or prompts result lacks ttlMs or cacheScope",
			"From 2026-07-28 resources/list, resources/templates/list, resources/read and prompts/list results must carry ttlMs (integer >= 0) and cacheScope (public or private), as tools/list pages do; the results the read-only checks received are graded."),

		rule(RulePing, report.SeverityError, "ping is not answered with an empty result",
			"Before 2026-07-28 a ping request must be answered promptly with an empty result (an object with nothing but _meta)."),
		rule(RuleNotificationSilent, report.SeverityError, "A notification was answered",
			"A notification gets no response. mcpdrill sends notifications/cancelled naming a request it never sent; on stdio a ping written after it shows whether anything answered the notification first."),
		rule(RuleCancelUnknown, report.SeverityWarn, "A cancellation of an unknown request was not ignored",
			"A notifications/cancelled naming a request the server does not know (never sent, or finished) should be ignored: no response, and the server goes on serving."),
		rule(RuleInvalidCursor, report.SeverityWarn, "An invalid cursor is not refused with -32602",
			"tools/list with a cursor the server never issued should be refused with -32602, not served a page (a client that lost its place would read the list from the start and not know it). The TypeScript SDK's McpServer serves tools/list without reading the cursor: on a server seen to run on it the finding names the SDK and is an info note (see the scan's sdk)."),
		rule(RuleDiscover, report.SeverityError, "server/discover's result is incomplete",
			"From 2026-07-28 a server must implement server/discover and return supportedVersions and capabilities; graded on the discover result the session was opened with."),
		rule(RuleHTTPAccepted, report.SeverityError, "The POST of a notification is not answered 202",
			"A Streamable HTTP server that accepts a POSTed notification must answer 202 Accepted with no body; one that does not accept it answers an error status (4xx), which is allowed."),
		rule(RuleHTTPContentType, report.SeverityError, "A reply came with the wrong Content-Type",
			"Every reply to a POSTed request must be application/json or text/event-stream; counted over every request of the scan."),
		rule(RuleHTTPGet, report.SeverityError, "GET or DELETE on the endpoint is answered wrongly",
			"Before 2026-07-28 a GET on the endpoint opens an event stream or is refused with 405 (MUST). From 2026-07-28 GET and DELETE should be answered 405 and no answer mints an Mcp-Session-Id (a warning)."),
		rule(RuleHTTPSessionID, report.SeverityError, "The session id is malformed or outlives its session",
			"An Mcp-Session-Id must be visible ASCII (0x21 to 0x7E) only, and once a client has ended the session with DELETE a request carrying its id must be answered 404. The ended session is one mcpdrill opens for the check; the id is never reported."),
		rule(RuleHTTPSessionRequired, report.SeverityWarn, "A request without the session id is not refused with 400",
			"A server that issued a session id should answer a request (other than initialize) that lacks it with 400 Bad Request."),
		rule(RuleHTTPVersionHeader, report.SeverityError, "An unsupported MCP-Protocol-Version header is not refused",
			"From 2025-06-18 (through 2025-11-25) a request whose MCP-Protocol-Version header names a revision the server does not support must be answered 400 Bad Request."),
		rule(RuleHTTPHeaderMismatch, report.SeverityError, "A mismatched Mcp-Method header is not refused",
			"From 2026-07-28 a request whose Mcp-Method header disagrees with its body's method must be refused with 400 and JSON-RPC error -32020 (HeaderMismatch)."),

		rule(RuleCompletionUnknown, report.SeverityWarn, "A completion for an unknown prompt is not refused with -32602",
			"A server that declares completions should refuse completion/complete for a prompt it does not list with -32602."),

		rule(RuleNoOutputSchema, report.SeverityInfo, "Tool declares no outputSchema",
			"Without an outputSchema a client has nothing to validate a result against; an agent acts on whatever comes back."),
		rule(RuleVacuous, report.SeverityWarn, "outputSchema accepts corrupted data",
			"For no shape of the schema that mcpdrill sampled (every branch, the minimal instance, nullable values null, arrays empty) was the corrupted payload rejected: with every leaf replaced by a same-typed sentinel it still validated. The contract promises shape, not meaning."),
		rule(RulePartialContract, report.SeverityWarn, "outputSchema accepts corrupted data of some shapes",
			"The schema rejects the corrupted payload of some shapes a server can send, and accepts that of others (a branch, the minimal instance without optional properties, nullable values null, empty arrays). A result of those shapes goes unchecked; the reason names the first one."),
		renamed(rule(RuleUnconstrained, report.SeverityInfo, "outputSchema leaves some fields unconstrained",
			"The contract is enforceable (every sampled shape's fully corrupted payload is rejected), but some single-leaf corruptions pass: those fields take any value of their type (see the per-leaf rate). Advice, about fields; a contract that some shapes do not enforce is MCP-OUT-PARTIAL-CONTRACT."), "MCP-OUT-PARTIAL"),
		rule(RuleWrapped, report.SeverityInfo, "The SDK wrapped a plain result",
			"The outputSchema is an SDK auto-wrapper around an unstructured return value (e.g. x-fastmcp-wrap-result)."),
		rule(RuleUnassessed, report.SeverityWarn, "An outputSchema could not be assessed",
			"No valid instance of the schema could be synthesized, or the schema needed more than its synthesis budget (work steps and generated bytes, see METHODOLOGY.md), so enforceability was not established."),

		rule(RuleErrUnknownMethod, report.SeverityError, "Unknown method not refused with -32601",
			"A request for a method the server does not implement must get JSON-RPC error -32601 (HTTP 404 from 2026-07-28)."),
		rule(RuleErrUnknownTool, report.SeverityError, "Unknown tool not refused with -32602",
			"tools/call for a tool that does not exist should get JSON-RPC error -32602. A tool_error result (isError: true) is a refusal in another form: warn, and info when the server's SDK is known to answer so (the TypeScript SDK does: the fix is the SDK's). A success is an error."),
		rule(RuleErrMissingArgs, report.SeverityError, "Missing required arguments not refused",
			"tools/call without required arguments must be refused: isError:true from 2025-11-25 (-32602 tolerated, warn), either form before."),
		rule(RuleErrWrongType, report.SeverityError, "Wrong-typed arguments not refused",
			"tools/call with arguments of the wrong JSON type must be refused like missing arguments."),
		rule(RuleErrParse, report.SeverityError, "Malformed JSON not answered with -32700",
			"A frame that is not valid JSON should get a -32700 parse error with a null id (on HTTP, a 4xx is accepted). A stdio server that stays alive and drops the frame (verdict ignored: it answered the ping sent after it) is a warning; accepting it, crashing or hanging on it is an error."),
		rule(RuleErrInvalidRequest, report.SeverityError, "Invalid JSON-RPC envelope not answered with -32600",
			"A JSON object that is not a valid JSON-RPC request should get -32600 (on HTTP, a 4xx is accepted). A stdio server that stays alive and drops the frame (verdict ignored) is a warning; accepting it, crashing or hanging on it is an error."),
		rule(RuleErrMissingMeta, report.SeverityError, "A modern request without _meta was not refused",
			"From 2026-07-28, a request whose params._meta lacks the protocol version and client capabilities is malformed: -32602."),

		rule(RuleIncomplete, report.SeverityWarn, "Part of the scan was not established",
			"Something the scan needed did not complete (a capped or looping tool list, a failed second connection, a probe that timed out, work the scan deadline cut short); the figures cover only what was observed. What the deadline cut short is named and not graded."),
		rule(RuleUnreachable, report.SeverityError, "The server could not be reached or started",
			"No MCP session could be opened: the process did not start, exited, or the URL did not answer."),
		rule(RuleRefused, report.SeverityError, "No protocol revision could be agreed",
			"The server refused every revision mcpdrill speaks; no comparison or probe was run."),
		rule(RuleToolCollision, report.SeverityWarn, "Two servers of one configuration list the same tool name",
			"With --config, the servers of one client configuration are compared: a tool name that two of them list reaches only one of them in a client that merges their tools into one list, and which one is the client's choice, so a server can shadow another's tool. Clients that prefix each tool with its server's name keep them apart; rename one, or keep the servers in separate configurations."),
	}
}

func rule(id string, sev report.Severity, title, detail string) report.Rule {
	return report.Rule{ID: id, Severity: sev, Title: title, Detail: detail}
}

// renamed is r with the ids it had before.
func renamed(r report.Rule, formerly ...string) report.Rule {
	r.Formerly = formerly
	return r
}

var defaultSeverity = sync.OnceValue(func() map[string]report.Severity {
	m := map[string]report.Severity{}
	for _, r := range Catalogue() {
		m[r.ID] = r.Severity
	}
	return m
})

// severityOf returns the catalogue's default severity for a rule.
func severityOf(id string) report.Severity {
	if s, ok := defaultSeverity()[id]; ok {
		return s
	}
	return report.SeverityWarn
}
