package scan

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpdrill/mcpdrill/internal/mcp"
	"github.com/mcpdrill/mcpdrill/report"
)

// Revisions the requirements table covers.
const (
	Rev20241105 = "2024-11-05"
	Rev20250326 = "2025-03-26"
	Rev20250618 = "2025-06-18"
	Rev20251125 = "2025-11-25"
	Rev20260728 = "2026-07-28"
)

// Why a requirement is not graded (Requirement.Reason).
const (
	UngradedNotObservable  = "not observable black-box"
	UngradedNeedsInvoke    = "needs invocation"
	UngradedClientFeature  = "needs a client feature"
	UngradedNotImplemented = "not implemented yet"
)

// Requirement levels.
const (
	LevelMust   = "MUST"
	LevelShould = "SHOULD"
)

// Requirement is one server-side requirement of the MCP specification: where
// it comes from, and either the checks that grade it or why none does. The
// summary is a short paraphrase, never the spec's prose.
type Requirement struct {
	ID        string   `json:"id"`
	Revisions []string `json:"revisions"`
	// Section is the spec page under docs/specification/<rev>/ and its
	// heading anchor, e.g. "basic/lifecycle#version-negotiation". Where a
	// revision keeps it on another page (2024-11-05's basic/messages),
	// Requirements(rev) gives that revision's.
	Section string `json:"section"`
	Level   string `json:"level"`
	Summary string `json:"summary"`
	// Checks are the rule ids whose checks, probes or findings grade it.
	Checks []string `json:"checks,omitempty"`
	// Reason says why it is not graded, when Checks is empty.
	Reason string `json:"reason,omitempty"`
	// Capability is the server capability it depends on ("tools",
	// "resources", …); a server that did not declare it is not graded on it.
	Capability string `json:"capability,omitempty"`
	// Transport limits it to "stdio" or "http"; "" is any transport.
	Transport string `json:"transport,omitempty"`

	// sections are the revisions whose section differs from Section.
	sections map[string]string
}

var (
	revAll    = []string{Rev20241105, Rev20250326, Rev20250618, Rev20251125, Rev20260728}
	revLegacy = []string{Rev20241105, Rev20250326, Rev20250618, Rev20251125}
	revOld    = []string{Rev20241105, Rev20250326}
	rev0326up = []string{Rev20250326, Rev20250618, Rev20251125, Rev20260728}
	rev0618up = []string{Rev20250618, Rev20251125, Rev20260728}
	rev1125up = []string{Rev20251125, Rev20260728}
	revModern = []string{Rev20260728}
	// revStreamable are the legacy revisions of Streamable HTTP (2024-11-05
	// has HTTP+SSE instead); rev0618 those from the MUST-level operation
	// rules and the version header to 2026-07-28.
	revStreamable = []string{Rev20250326, Rev20250618, Rev20251125}
	rev0618       = []string{Rev20250618, Rev20251125}
)

// req builds a graded requirement (checks) or an ungraded one (a reason:
// one of the Ungraded constants as the single element of checks).
func req(id string, revs []string, section, level, summary string, checks ...string) Requirement {
	r := Requirement{ID: "REQ-" + id, Revisions: revs, Section: section, Level: level, Summary: summary}
	if len(checks) == 1 && isReason(checks[0]) {
		r.Reason = checks[0]
	} else {
		r.Checks = checks
	}
	return r
}

func isReason(s string) bool {
	switch s {
	case UngradedNotObservable, UngradedNeedsInvoke, UngradedClientFeature, UngradedNotImplemented:
		return true
	}
	return false
}

func capReq(capability string, r Requirement) Requirement { r.Capability = capability; return r }
func onReq(transport string, r Requirement) Requirement   { r.Transport = transport; return r }

// in1105 gives r 2024-11-05's section: that revision keeps the JSON-RPC
// message rules on a page of their own, basic/messages.
func in1105(section string, r Requirement) Requirement {
	r.sections = map[string]string{Rev20241105: section}
	return r
}

// requirementTable is the table itself; Requirements returns a copy.
var requirementTable = []Requirement{
	// Lifecycle and version negotiation.
	req("LIFECYCLE-01", revLegacy, "basic/lifecycle#version-negotiation", LevelMust,
		"initialize is answered with the requested revision if supported, else another supported one", RuleVersionNeg),
	req("LIFECYCLE-02", revLegacy, "basic/lifecycle#initialization", LevelMust,
		"the initialize result carries serverInfo (name, version)", RuleServerInfo),
	req("LIFECYCLE-03", rev0618, "basic/lifecycle#operation", LevelMust,
		"the server uses only the negotiated revision and capabilities (no requests for client capabilities not declared)", RuleServerRequest),
	req("LIFECYCLE-07", revOld, "basic/lifecycle#operation", LevelShould,
		"the server uses only the negotiated revision and capabilities (no requests for client capabilities not declared)", RuleServerRequest),
	req("LIFECYCLE-04", revLegacy, "basic/lifecycle#initialization", LevelShould,
		"before initialized the server sends nothing but ping and logging", UngradedNotImplemented),
	req("LIFECYCLE-05", revLegacy, "basic/lifecycle#operation", LevelShould,
		"a reply on an older revision carries no 2026-07-28 fields (resultType, ttlMs, cacheScope)", RuleLegacyReply),
	req("LIFECYCLE-06", revLegacy, "basic/lifecycle#capability-negotiation", LevelMust,
		"a method of a capability the server did not declare is refused; a declared one answers", RuleCapHonesty),
	req("VERSION-01", revModern, "basic/versioning#protocol-version-negotiation", LevelMust,
		"a request naming an unsupported revision is refused with -32022 listing the supported ones", RuleVersionNeg),
	req("DISCOVER-01", revModern, "server/discover", LevelMust,
		"server/discover is implemented and returns supportedVersions and capabilities", RuleDiscover),
	req("DISCOVER-02", revModern, "server/discover#response", LevelShould,
		"results name the server in _meta io.modelcontextprotocol/serverInfo", RuleServerInfo),
	req("DISCOVER-03", revModern, "basic/index#error-codes", LevelMust,
		"a declared capability's methods answer; an undeclared one's are refused with -32601", RuleCapHonesty),

	// 2026-07-28 stateless rules.
	req("STATELESS-01", revModern, "basic/index#_meta", LevelMust,
		"a request whose params._meta lacks protocolVersion or clientCapabilities is refused with -32602", RuleErrMissingMeta),
	req("STATELESS-02", revModern, "basic/index#resulttype", LevelMust,
		"every result carries resultType (complete or input_required)", RuleResultType),
	req("STATELESS-03", revModern, "server/utilities/caching#cacheable-results", LevelMust,
		"tools/list results carry ttlMs (integer >= 0) and cacheScope (public or private)", RuleCacheHints),
	req("STATELESS-04", revModern, "server/utilities/caching#cacheable-results", LevelMust,
		"prompts/list, resources/list, resources/templates/list, resources/read and server/discover carry ttlMs and cacheScope", RuleContentCacheHints),
	req("STATELESS-05", revModern, "basic/index#statelessness", LevelMust,
		"each request is served on its own, never relying on earlier requests on the connection", UngradedNotObservable),
	req("STATELESS-06", revModern, "basic/transports/stdio#receiving-messages", LevelMust,
		"the server sends no JSON-RPC requests", RuleServerRequest),
	onReq("http", req("STATELESS-07", revModern, "basic/transports/streamable-http#server-validation", LevelMust,
		"a missing or mismatched MCP-Protocol-Version, Mcp-Method or Mcp-Name header is refused with 400 and -32020", RuleHTTPHeaderMismatch)),
	capReq("logging", req("STATELESS-08", revModern, "server/utilities/logging#per-request-log-level", LevelMust,
		"no notifications/message for a request without _meta io.modelcontextprotocol/logLevel", UngradedNotImplemented)),

	// JSON-RPC base.
	in1105("basic/messages#responses", req("JSONRPC-01", revLegacy, "basic/index#responses", LevelMust,
		"an unknown method is answered with error -32601", RuleErrUnknownMethod)),
	onReq("http", req("JSONRPC-02", revModern, "basic/transports/streamable-http#protocol-version-header", LevelMust,
		"an unknown method is answered 404 with error -32601", RuleErrUnknownMethod)),
	req("JSONRPC-06", revModern, "basic/index#error-codes", LevelMust,
		"an unknown method is answered with error -32601", RuleErrUnknownMethod),
	in1105("basic/messages#responses", req("JSONRPC-03", revAll, "basic/index#responses", LevelShould,
		"a frame that is not JSON is answered with -32700 (a 4xx on HTTP)", RuleErrParse)),
	in1105("basic/messages#requests", req("JSONRPC-04", revAll, "basic/index#requests", LevelShould,
		"an object that is not a valid request is answered with -32600 (a 4xx on HTTP)", RuleErrInvalidRequest)),
	in1105("basic/messages#notifications", req("JSONRPC-05", revAll, "basic/index#notifications", LevelMust,
		"a notification gets no response", RuleNotificationSilent)),
	req("JSONRPC-07", []string{Rev20250326}, "basic/index#batching", LevelMust,
		"a JSON-RPC batch is received, each request in it answered", UngradedNotImplemented),

	// stdio.
	onReq("stdio", req("STDIO-01", revLegacy, "basic/transports#stdio", LevelMust,
		"stdout carries only MCP messages, one per line with no embedded newline", RuleStdoutPurity)),
	onReq("stdio", req("STDIO-02", revModern, "basic/transports/stdio", LevelMust,
		"stdout carries only MCP messages, one per line with no embedded newline", RuleStdoutPurity)),
	onReq("stdio", req("STDIO-03", revModern, "basic/transports/stdio#shutdown", LevelShould,
		"the server exits when its stdin closes", RuleStdioShutdown)),

	// HTTP+SSE (2024-11-05) and Streamable HTTP.
	onReq("http", req("HTTP-13", []string{Rev20241105}, "basic/transports#http-with-sse", LevelMust,
		"the SSE stream opens with an endpoint event naming the URI to POST to", UngradedNotImplemented)),
	onReq("http", req("HTTP-01", revStreamable, "basic/transports#sending-messages-to-the-server", LevelMust,
		"a POST of notifications only is answered 202 with no body (or an error status when not accepted)", RuleHTTPAccepted)),
	onReq("http", req("HTTP-02", revModern, "basic/transports/streamable-http#sending-messages", LevelMust,
		"a POST of a notification is answered 202 with no body (or an error status when not accepted)", RuleHTTPAccepted)),
	onReq("http", req("HTTP-03", revStreamable, "basic/transports#sending-messages-to-the-server", LevelMust,
		"a request is answered with Content-Type application/json or text/event-stream", RuleHTTPContentType)),
	onReq("http", req("HTTP-04", revStreamable, "basic/transports#listening-for-messages-from-the-server", LevelMust,
		"GET on the endpoint returns text/event-stream or 405", RuleHTTPGet)),
	onReq("http", req("HTTP-05", revModern, "basic/transports/streamable-http#earlier-streamable-http-revisions", LevelShould,
		"GET and DELETE are answered 405; Mcp-Session-Id is never minted or echoed", RuleHTTPGet)),
	onReq("http", req("HTTP-06", revStreamable, "basic/transports#session-management", LevelMust,
		"a session id is visible ASCII only; an ended session's id is answered 404", RuleHTTPSessionID)),
	onReq("http", req("HTTP-07", revStreamable, "basic/transports#session-management", LevelShould,
		"a non-initialize request without the required session id is answered 400", RuleHTTPSessionRequired)),
	onReq("http", req("HTTP-08", rev0618, "basic/transports#protocol-version-header", LevelMust,
		"an invalid or unsupported MCP-Protocol-Version header is answered 400", RuleHTTPVersionHeader)),
	onReq("http", req("HTTP-09", []string{Rev20241105, Rev20250326, Rev20250618}, "basic/transports#security-warning", LevelMust,
		"the Origin header is validated on every connection", UngradedNotImplemented)),
	onReq("http", req("HTTP-10", []string{Rev20251125}, "basic/transports#security-warning", LevelMust,
		"a present and invalid Origin is refused with 403", RuleAuthOriginAccepted)),
	onReq("http", req("HTTP-11", revModern, "basic/transports/streamable-http", LevelMust,
		"a present and invalid Origin is refused with 403", RuleAuthOriginAccepted)),
	onReq("http", req("HTTP-12", revModern, "basic/transports/streamable-http#cancellation", LevelMust,
		"a client disconnect cancels the request: no more is sent for it", UngradedNotObservable)),

	// Utilities.
	req("PING-01", revLegacy, "basic/utilities/ping#behavior-requirements", LevelMust,
		"ping is answered promptly with an empty result", RulePing),
	req("CANCEL-01", revLegacy, "basic/utilities/cancellation#behavior-requirements", LevelShould,
		"a cancellation of an unknown or finished request is ignored (no response, no failure)", RuleCancelUnknown),
	req("CANCEL-02", revLegacy, "basic/utilities/cancellation#behavior-requirements", LevelShould,
		"a cancelled request's work stops and it gets no response", UngradedNeedsInvoke),
	onReq("stdio", req("CANCEL-03", revModern, "basic/patterns/cancellation#transport-specific-cancellation", LevelMust,
		"on stdio notifications/cancelled cancels the request it names", UngradedNeedsInvoke)),
	req("PROGRESS-01", revLegacy, "basic/utilities/progress#behavior-requirements", LevelMust,
		"progress notifications carry the request's token, increase each time and stop at completion", UngradedNeedsInvoke),
	req("PROGRESS-02", revModern, "basic/patterns/progress#behavior-requirements", LevelMust,
		"progress notifications carry the request's token, increase each time and stop at completion", UngradedNeedsInvoke),
	req("PAGINATION-01", revAll, "server/utilities/pagination#implementation-guidelines", LevelShould,
		"cursors are stable: a nextCursor never leads back to a page already returned", RuleCursorLoop),
	req("PAGINATION-02", revAll, "server/utilities/pagination#error-handling", LevelShould,
		"an invalid cursor is refused with -32602", RuleInvalidCursor),

	// Tools.
	capReq("tools", req("TOOLS-01", rev1125up, "server/tools#tool-names", LevelShould,
		"tool names are 1-128 characters of A-Z, a-z, 0-9, _, - and .", RuleToolName)),
	capReq("tools", req("TOOLS-02", rev1125up, "server/tools#tool-names", LevelShould,
		"tool names are unique within a server", RuleDuplicateTool)),
	capReq("tools", req("TOOLS-14", []string{Rev20241105, Rev20250326, Rev20250618}, "server/tools#tool", LevelMust,
		"a tool's name is its unique identifier: no two listed tools share it", RuleDuplicateTool)),
	capReq("tools", req("TOOLS-03", revAll, "server/tools#tool", LevelMust,
		"inputSchema is a JSON Schema object with type object", RuleInputSchemaType)),
	capReq("tools", req("TOOLS-04", rev1125up, "basic/index#json-schema-usage", LevelMust,
		"declared schemas are valid in their dialect (2020-12 by default)", RuleSchemaInvalid)),
	capReq("tools", req("TOOLS-15", []string{Rev20241105, Rev20250326, Rev20250618}, "server/tools#tool", LevelMust,
		"declared schemas are JSON Schema (the revision names no dialect)", RuleSchemaInvalid)),
	capReq("tools", req("TOOLS-05", rev0618, "server/tools#output-schema", LevelMust,
		"an outputSchema has type object at its root", RuleOutputRootObject)),
	capReq("tools", req("TOOLS-06", rev0618up, "server/tools#output-schema", LevelMust,
		"a tool with an outputSchema returns structuredContent conforming to it", RuleCallOutputSchema, RuleCallNoStructured)),
	capReq("tools", req("TOOLS-07", rev0618up, "server/tools#structured-content", LevelShould,
		"structuredContent is mirrored as serialized JSON in a TextContent block", RuleCallTextMirror)),
	capReq("tools", req("TOOLS-08", revAll, "server/tools#error-handling", LevelShould,
		"a tool's own failure is a result with isError true, not a JSON-RPC error", RuleCallErrorShape)),
	capReq("tools", req("TOOLS-09", revAll, "server/tools#error-handling", LevelShould,
		"tools/call of an unknown tool is refused with a JSON-RPC error (-32602)", RuleErrUnknownTool)),
	capReq("tools", req("TOOLS-10", revAll, "server/tools#security-considerations", LevelMust,
		"tool inputs are validated: missing or wrong-typed arguments are refused (isError from 2025-11-25)", RuleErrMissingArgs, RuleErrWrongType)),
	capReq("tools", req("TOOLS-11", revModern, "server/tools#capabilities", LevelMust,
		"the tool set does not vary per connection", RuleToolSetStable)),
	capReq("tools", req("TOOLS-12", revModern, "server/tools#capabilities", LevelShould,
		"tools are listed in a deterministic order", RuleToolOrder)),
	capReq("tools", req("TOOLS-13", rev0618up, "server/tools#list-changed-notification", LevelMust,
		"notifications/tools/list_changed only when tools.listChanged was declared", UngradedNotImplemented)),

	// Resources.
	capReq("resources", req("RESOURCES-01", revAll, "server/resources#listing-resources", LevelMust,
		"resources/list returns resources with uri and name, paginated", RuleResourcesList)),
	capReq("resources", req("RESOURCES-02", revAll, "server/resources#reading-resources", LevelMust,
		"resources/read of a listed resource returns non-empty contents, each with its uri and exactly one of text and blob", RuleResourceRead)),
	capReq("resources", req("RESOURCES-03", revLegacy, "server/resources#error-handling", LevelShould,
		"a read of a missing URI is refused with -32002, never an empty contents list", RuleResourceMissing)),
	capReq("resources", req("RESOURCES-04", revModern, "server/resources#error-handling", LevelMust,
		"a read of a missing URI is refused with -32602 (never -32002, never an empty contents list)", RuleResourceMissing)),
	capReq("resources", req("RESOURCES-05", revAll, "server/resources#resource-templates", LevelMust,
		"resources/templates/list, when served, returns RFC 6570 uriTemplate entries (templates are optional: -32601 is no failure)", RuleResourceTemplates)),
	capReq("resources", req("RESOURCES-06", revLegacy, "server/resources#subscriptions", LevelMust,
		"resources/subscribe and update notifications only when resources.subscribe was declared", UngradedClientFeature)),

	// Prompts.
	capReq("prompts", req("PROMPTS-01", revAll, "server/prompts#listing-prompts", LevelMust,
		"prompts/list returns prompts with name and their arguments, paginated", RulePromptsList)),
	capReq("prompts", req("PROMPTS-02", revAll, "server/prompts#getting-a-prompt", LevelMust,
		"prompts/get with the declared arguments returns messages with role user or assistant and typed content", RulePromptGet)),
	capReq("prompts", req("PROMPTS-03", revAll, "server/prompts#error-handling", LevelShould,
		"an unknown prompt or missing required arguments are refused with -32602", RulePromptUnknown, RulePromptMissingArgs)),

	// Logging and completion.
	capReq("logging", req("LOGGING-01", revLegacy, "server/utilities/logging#error-handling", LevelShould,
		"logging/setLevel is accepted; an invalid level is refused with -32602", RuleLogLevel)),
	capReq("logging", req("LOGGING-02", revAll, "server/utilities/logging#security", LevelMust,
		"log messages carry no credentials or secrets", UngradedNotObservable)),
	capReq("completions", req("COMPLETION-01", rev0326up, "server/utilities/completion#completion-results", LevelMust,
		"completion/complete returns at most 100 values", RuleCompletion)),
	capReq("completions", req("COMPLETION-02", rev0326up, "server/utilities/completion#error-handling", LevelShould,
		"a completion for an unknown prompt or resource is refused with -32602", RuleCompletionUnknown)),
	req("COMPLETION-03", []string{Rev20241105}, "server/utilities/completion#completion-results", LevelMust,
		"completion/complete, served without a capability to declare, returns at most 100 values", UngradedNotImplemented),
	req("ELICITATION-01", rev0618, "client/elicitation", LevelMust,
		"elicitation requests are sent only to a client that declared the capability", UngradedClientFeature),
	req("ELICITATION-02", revModern, "basic/patterns/mrtr#server-requirements-basic-workflow", LevelMust,
		"an input_required result asks only for inputs the request's client capabilities declare", UngradedNeedsInvoke),
}

// Requirements returns the requirements that apply to rev, in table order;
// all of them when rev is "".
func Requirements(rev string) []Requirement {
	var out []Requirement
	for _, r := range requirementTable {
		if rev == "" || slices.Contains(r.Revisions, rev) {
			r.Section = r.SectionOf(rev)
			r.Revisions = slices.Clone(r.Revisions)
			r.Checks = slices.Clone(r.Checks)
			r.sections = nil
			out = append(out, r)
		}
	}
	return out
}

// SectionOf is the requirement's section in revision rev (Section for ""
// and for the revisions that keep it there).
func (r Requirement) SectionOf(rev string) string {
	if s, ok := r.sections[rev]; ok {
		return s
	}
	return r.Section
}

// RequirementRevisions lists the revisions the table covers.
func RequirementRevisions() []string { return slices.Clone(revAll) }

// GradesConformance reports whether a catalogue rule grades specification
// conformance and must therefore cite a requirement. Output-contract
// quality (MCP-OUT-*), authorization posture, the scan's own state
// (MCP-SCAN-*, mcpdrill's frame cap among them) go beyond what the spec requires.
func GradesConformance(id string) bool {
	switch id {
	case RuleAuthOriginAccepted, RuleCallOutputSchema, RuleCallNoStructured, RuleCallTextMirror, RuleCallErrorShape:
		return true
	}
	return strings.HasPrefix(id, "MCP-CONF-") || strings.HasPrefix(id, "MCP-ERR-")
}

// requirementFor is the requirement a finding of rule grades on revision
// rev over transport: the first of the table that applies to the three (a
// transport's own requirement comes before the general one); nil when none
// does.
func requirementFor(rule, rev, transport string) *report.Requirement {
	for _, q := range requirementTable {
		if slices.Contains(q.Checks, rule) && slices.Contains(q.Revisions, rev) && (q.Transport == "" || q.Transport == transportClass(transport)) {
			section := q.SectionOf(rev)
			return &report.Requirement{ID: q.ID, Revision: rev, Level: q.Level, Section: section, URL: report.SpecURL(rev, section)}
		}
	}
	return nil
}

// citeRequirements names, in each finding, the requirement it grades on
// the report's revision and transport.
func citeRequirements(r *Report) {
	for i := range r.Findings {
		r.Findings[i].Requirement = requirementFor(r.Findings[i].Rule, r.Protocol.Revision, r.Protocol.Transport)
	}
}

// adviceOnly lowers to info the findings of conformance rules (MCP-CONF-*,
// MCP-ERR-*) that grade no requirement of the report's revision and
// transport, and says so: what the negotiated revision does not ask for is
// advice, never a warning or an error (METHODOLOGY, Part I §4, severity
// ladder). Run after citeRequirements.
func adviceOnly(r *Report) {
	if r.Protocol.Revision == "" {
		return
	}
	for i := range r.Findings {
		f := &r.Findings[i]
		if f.Requirement != nil || f.Severity == report.SeverityInfo || !advisable(f.Rule) {
			continue
		}
		f.Severity = report.SeverityInfo
		f.Message += " (advice: " + r.Protocol.Revision + " has no requirement for this)"
	}
}

// advisable reports whether adviceOnly may make a finding of rule id
// advice: a conformance rule (MCP-CONF-*, MCP-ERR-*) that grades
// requirements.
func advisable(id string) bool {
	return GradesConformance(id) && (strings.HasPrefix(id, "MCP-CONF-") || strings.HasPrefix(id, "MCP-ERR-"))
}

// mayBeAdvice reports whether a finding of rule id can be advice: it is
// advisable, and some revision grades no requirement with it over a
// transport its requirements name (all, when one of them names none).
func mayBeAdvice(id string) bool {
	if !advisable(id) {
		return false
	}
	transports := map[string]bool{}
	for _, q := range requirementTable {
		if slices.Contains(q.Checks, id) {
			transports[q.Transport] = true
		}
	}
	if len(transports) == 0 || transports[""] {
		transports = map[string]bool{"stdio": true, "http": true}
	}
	for _, rev := range mcp.Revisions {
		for t := range transports {
			if requirementFor(id, rev, t) == nil {
				return true
			}
		}
	}
	return false
}

// ruleRequirements lists the requirements rule grades, one entry per
// requirement and section, with the revisions where it is there.
func ruleRequirements(rule string) []report.RuleRequirement {
	var out []report.RuleRequirement
	for _, q := range requirementTable {
		if !slices.Contains(q.Checks, rule) {
			continue
		}
		at := map[string]int{}
		for _, rev := range q.Revisions {
			section := q.SectionOf(rev)
			i, ok := at[section]
			if !ok {
				i = len(out)
				at[section] = i
				out = append(out, report.RuleRequirement{ID: q.ID, Level: q.Level, Section: section})
			}
			out[i].Revisions = append(out[i].Revisions, rev)
		}
	}
	return out
}

// RequirementCounts is the NOT VERIFIED accounting of one scan: how the
// requirements of the revision it graded came out (METHODOLOGY, Part I §4).
type RequirementCounts struct {
	Revision     string `json:"revision"`
	Requirements int    `json:"requirements"`
	// Checked is Passed + Failed.
	Checked int `json:"checked"`
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	// NotApplicable counts requirements of a capability the server did
	// not declare, or of the other transport.
	NotApplicable int `json:"not_applicable"`
	// NotVerified counts requirements with a reason, and graded ones
	// whose checks were not established.
	NotVerified int `json:"not_verified"`
	// Outcomes says how each requirement of the revision came out, in
	// table order.
	Outcomes []RequirementOutcome `json:"outcomes"`
}

// RequirementOutcome is how one requirement came out in a scan.
type RequirementOutcome struct {
	ID      string `json:"id"`
	Level   string `json:"level"`
	Section string `json:"section"`
	// Outcome is passed, failed, not_applicable or not_verified.
	Outcome string `json:"outcome"`
	// Rules are the rules that grade it (none for an ungraded one).
	Rules []string `json:"rules,omitempty"`
	// Why says why it is not applicable or not verified: the capability
	// or transport it depends on, its reason, or what its checks lacked.
	Why string `json:"why,omitempty"`
}

// Requirement outcome values (RequirementOutcome.Outcome).
const (
	OutcomePassed        = "passed"
	OutcomeFailed        = "failed"
	OutcomeNotApplicable = "not_applicable"
	OutcomeNotVerified   = "not_verified"
)

// AccountRequirements counts how the requirements of r's revision came out,
// given the capabilities object the server declared. A requirement of an
// undeclared capability is not applicable, never failed; one graded by
// several checks fails if any failed and passes if none failed and one
// passed. It returns nil when the table does not cover the revision.
func AccountRequirements(r *Report, capabilities json.RawMessage) *RequirementCounts {
	reqs := Requirements(r.Protocol.Revision)
	if len(reqs) == 0 {
		return nil
	}
	rc := &RequirementCounts{Revision: r.Protocol.Revision, Requirements: len(reqs), Outcomes: []RequirementOutcome{}}
	var declared map[string]json.RawMessage
	_ = json.Unmarshal(capabilities, &declared)
	statuses := evidence(r)
	for _, q := range reqs {
		o := requirementOutcome(q, declared, r.Protocol.Transport, statuses)
		switch o.Outcome {
		case OutcomePassed:
			rc.Passed++
		case OutcomeFailed:
			rc.Failed++
		case OutcomeNotApplicable:
			rc.NotApplicable++
		default:
			rc.NotVerified++
		}
		rc.Outcomes = append(rc.Outcomes, o)
	}
	rc.Checked = rc.Passed + rc.Failed
	return rc
}

// requirementOutcome decides how requirement q came out, from the
// capabilities the server declared, the session's transport and the
// outcomes of the rules' checks.
func requirementOutcome(q Requirement, declared map[string]json.RawMessage, transport string, statuses map[string][]CheckStatus) RequirementOutcome {
	o := RequirementOutcome{ID: q.ID, Level: q.Level, Section: q.Section, Rules: q.Checks}
	if q.Capability != "" {
		if _, ok := declared[q.Capability]; !ok {
			o.Outcome, o.Why = OutcomeNotApplicable, q.Capability+" not declared"
			return o
		}
	}
	if q.Transport != "" && q.Transport != transportClass(transport) {
		o.Outcome, o.Why = OutcomeNotApplicable, "not "+q.Transport
		return o
	}
	if q.Reason != "" {
		o.Outcome, o.Why = OutcomeNotVerified, q.Reason
		return o
	}
	var pass, na, all int
	for _, id := range q.Checks {
		for _, st := range statuses[id] {
			all++
			switch st {
			case CheckFail:
				o.Outcome = OutcomeFailed
				return o
			case CheckPass:
				pass++
			case CheckNotApplicable:
				na++
			}
		}
	}
	switch {
	case pass > 0:
		o.Outcome = OutcomePassed
	case all > 0 && na == all:
		o.Outcome, o.Why = OutcomeNotApplicable, "its checks do not apply"
	case all == 0:
		o.Outcome, o.Why = OutcomeNotVerified, "not checked"
	default:
		o.Outcome, o.Why = OutcomeNotVerified, "not established"
	}
	return o
}

// transportClass folds a session transport into "stdio" or "http".
func transportClass(t string) string {
	if t == "" || t == string(mcp.TransportStdio) {
		return "stdio"
	}
	return "http"
}

// evidence gathers, per rule id, the outcomes the report holds: its
// conformance checks, its graded probes, and a finding at warn or error
// for a rule no check or probe decided (the invocation and Origin rules).
func evidence(r *Report) map[string][]CheckStatus {
	m := map[string][]CheckStatus{}
	for _, c := range r.Conformance {
		m[c.ID] = append(m[c.ID], c.Status)
	}
	for _, p := range r.Probes {
		if p.rule == "" {
			continue
		}
		switch {
		case p.Conformant == nil:
			m[p.rule] = append(m[p.rule], CheckNotEstablished)
		case *p.Conformant:
			m[p.rule] = append(m[p.rule], CheckPass)
		default:
			m[p.rule] = append(m[p.rule], CheckFail)
		}
	}
	for _, f := range r.Findings {
		if _, decided := m[f.Rule]; decided || f.Severity == report.SeverityInfo {
			continue
		}
		m[f.Rule] = []CheckStatus{CheckFail}
	}
	return m
}

// String is the counts as one line, e.g. "2025-11-25: 12 checked
// (11 passed, 1 failed), 3 n/a, 40 not verified of 55".
func (rc *RequirementCounts) String() string {
	return fmt.Sprintf("%s: %d checked (%d passed, %d failed), %d n/a, %d not verified of %d requirements",
		rc.Revision, rc.Checked, rc.Passed, rc.Failed, rc.NotApplicable, rc.NotVerified, rc.Requirements)
}
