package clientdrill

import (
	"sort"
	"strings"

	"github.com/mcpdrill/mcpdrill/report"
)

// Outcome is the primary verdict of one scenario: what the application (or,
// for the wire scenarios, the client library) did with the fault. METHODOLOGY
// ("The client drill") defines each by observation.
type Outcome string

// Outcomes decided from the application's report of the faulted call.
const (
	// Surfaced: the application got an error for the faulted call (an
	// error outcome, or a value carrying the tool error's text).
	Surfaced Outcome = "surfaced"
	// TimedOut: the application's own timeout ended the faulted call.
	TimedOut Outcome = "timed-out"
	// Accepted: the application got the faulty value as a success.
	Accepted Outcome = "accepted"
	// Delivered: the application got the true value as a success.
	Delivered Outcome = "delivered"
	// Lost: the application got a success that carries neither the true
	// nor the faulty value (the result was dropped on the way).
	Lost Outcome = "lost"
	// ContentOnly, StructuredOnly and Both: which of two disagreeing
	// halves of one result reached the application.
	ContentOnly    Outcome = "content-only"
	StructuredOnly Outcome = "structured-only"
	Both           Outcome = "both"
	// Hung: no outcome for the faulted call by the scenario's deadline,
	// and the client still running.
	Hung Outcome = "hung"
	// Crashed: the client process ended before reporting the faulted call.
	Crashed Outcome = "crashed"
	// Completed: the client wrote no result lines and exited 0; without
	// lines the application's view cannot be told.
	Completed Outcome = "completed"
	// NoCall: the client never made the faulted call.
	NoCall Outcome = "no-call"
	// NotApplicable: the negotiated revision lacks what the scenario
	// tests (outputSchema before 2025-06-18), or the client declared every
	// capability the scenario could ask for.
	NotApplicable Outcome = "not-applicable"
)

// Outcomes decided from the wire.
const (
	// ReListed: after notifications/tools/list_changed the client sent
	// tools/list on its own.
	ReListed Outcome = "re-listed"
	// Stale: it did not.
	Stale Outcome = "stale"
	// Refused: the client answered an unsolicited request for a capability
	// it did not declare with a JSON-RPC error.
	Refused Outcome = "refused"
	// Complied: it answered with a result.
	Complied Outcome = "complied"
	// Ignored: it did not answer within the scenario's wait.
	Ignored Outcome = "ignored"
)

// Tag is a behaviour seen on the wire after the fault, reported beside the
// outcome; a cell can carry several.
type Tag string

// Tags, in the order a report lists them.
const (
	// Cancelled: notifications/cancelled for the faulted call's id.
	TagCancelled Tag = "cancelled"
	// Retried: the faulted call sent again (same tool, same arguments) to
	// a tool annotated read-only and idempotent.
	TagRetried Tag = "retried"
	// BlindRetry: the same to a tool annotated destructive and not
	// idempotent.
	TagBlindRetry Tag = "blind-retry"
	// ReListedTag: tools/list after the faulted call, which no step asked for.
	TagReListed Tag = "re-listed"
	// Reconnected: a new stdio server process or a new HTTP session after
	// the faulted call.
	TagReconnected Tag = "reconnected"
	// Closed: the client closed the faulted call's connection (stdin EOF,
	// HTTP DELETE) before its next request.
	TagClosed Tag = "closed"
	// Recovered: the call after the faulted one succeeded.
	TagRecovered Tag = "recovered"
)

var tagOrder = []Tag{TagCancelled, TagRetried, TagBlindRetry, TagReListed, TagReconnected, TagClosed, TagRecovered}

// fault is the server behaviour of a scenario.
type fault uint8

const (
	faultDrop fault = iota + 1
	faultLate
	faultSchemaLie
	faultNoStructured
	faultDisagree
	faultTruncate
	faultMalformed
	faultExit
	faultLarge
	faultRPCError
	faultIsError
	faultListChanged
	faultUnsolicited
	faultDuplicate
	faultUnknownID
)

// Tool names the scenario server lists.
const (
	// ToolLookup is read-only and idempotent, and declares an outputSchema.
	ToolLookup = "lookup"
	// ToolRecord is destructive and not idempotent.
	ToolRecord = "record"
	// ToolReadLog is read-only and returns text.
	ToolReadLog = "read_log"
)

// Scenario is one server behaviour and what a careful client observes.
type Scenario struct {
	// ID is the stable name (`--only ID`, MCP_CONFORMANCE_SCENARIO).
	ID string `json:"id"`
	// Behaviour is what the server does to the faulted call.
	Behaviour string `json:"behaviour"`
	// Tool is the faulted call's tool.
	Tool string `json:"tool"`
	// Expect lists the outcomes a careful client reaches.
	Expect []Outcome `json:"expect"`
	// Severity is the severity of a finding for any other outcome (hung
	// and crashed are always errors).
	Severity report.Severity `json:"severity"`
	// Grades names the requirement or practice the scenario grades.
	Grades string `json:"grades"`
	// Wire marks a scenario whose outcome is read from the wire.
	Wire bool `json:"wire,omitempty"`

	fault fault
	// schema marks a scenario that needs outputSchema (2025-06-18 on).
	schema bool
}

// Rule is the rule id of a finding about the scenario.
func (s Scenario) Rule() string { return "MCP-CLIENT-" + strings.ToUpper(s.ID) }

// expected reports whether o is one of the scenario's expected outcomes.
func (s Scenario) expected(o Outcome) bool {
	for _, e := range s.Expect {
		if e == o {
			return true
		}
	}
	return o == NotApplicable
}

var catalogue = []Scenario{
	{ID: "dropped-reply", fault: faultDrop, Tool: ToolRecord, Expect: []Outcome{TimedOut, Surfaced}, Severity: report.SeverityError,
		Behaviour: "the server never answers the call (over HTTP the POST stays open)",
		Grades:    "a request's sender SHOULD set a timeout and, when it fires, send notifications/cancelled (basic/lifecycle, Timeouts)"},
	{ID: "late-reply", fault: faultLate, Tool: ToolLookup, Expect: []Outcome{TimedOut, Surfaced}, Severity: report.SeverityWarn,
		Behaviour: "the server answers 1.5 s after the timeout the client was asked to use (at once if the client sends another call first)",
		Grades:    "a reply to a request the client gave up on must not break the connection (basic/lifecycle, Timeouts; basic/utilities/cancellation)"},
	{ID: "schema-lie", fault: faultSchemaLie, Tool: ToolLookup, schema: true, Expect: []Outcome{Surfaced}, Severity: report.SeverityError,
		Behaviour: "structuredContent is well-formed JSON of the right shape that violates the declared outputSchema (a string where an integer is required)",
		Grades:    "clients SHOULD validate structured results against the tool's outputSchema (server/tools, Output Schema)"},
	{ID: "structured-missing", fault: faultNoStructured, Tool: ToolLookup, schema: true, Expect: []Outcome{Surfaced}, Severity: report.SeverityWarn,
		Behaviour: "the tool declares an outputSchema but the result has content and no structuredContent",
		Grades:    "servers MUST return structured results conforming to a declared outputSchema; a validating client rejects the result (server/tools, Output Schema)"},
	{ID: "content-disagree", fault: faultDisagree, Tool: ToolLookup, schema: true, Expect: []Outcome{StructuredOnly, ContentOnly, Both, Surfaced}, Severity: report.SeverityInfo,
		Behaviour: "content text and structuredContent carry different values; which one the application gets is the outcome",
		Grades:    "which half of a result reaches the application (server/tools, Structured Content: the text block SHOULD carry the same JSON)"},
	{ID: "truncated-frame", fault: faultTruncate, Tool: ToolLookup, Expect: []Outcome{Surfaced, TimedOut}, Severity: report.SeverityWarn,
		Behaviour: "the reply is cut at half its length: a cut line on stdio, a short body on a closed connection over HTTP",
		Grades:    "a broken frame fails the call, not the client (basic/transports)"},
	{ID: "malformed-frame", fault: faultMalformed, Tool: ToolLookup, Expect: []Outcome{Surfaced, TimedOut}, Severity: report.SeverityWarn,
		Behaviour: "the reply is not valid JSON (its last closing brace becomes a bracket)",
		Grades:    "a parse error fails the call, not the client (JSON-RPC 2.0)"},
	{ID: "server-exit", fault: faultExit, Tool: ToolRecord, Expect: []Outcome{Surfaced}, Severity: report.SeverityWarn,
		Behaviour: "the server dies mid-call: the stdio server process exits; over HTTP the response is aborted and every session is forgotten (a restarted server answers 404 to the old session id)",
		Grades:    "a dead server fails pending calls at once rather than at their timeout (basic/transports, stdio and Session Management)"},
	{ID: "large-result", fault: faultLarge, Tool: ToolReadLog, Expect: []Outcome{Delivered, Surfaced}, Severity: report.SeverityWarn,
		Behaviour: "the result is one 10 MiB text block whose first and last bytes are markers (every call of the tool, a retry too)",
		Grades:    "a large result is delivered whole or refused, never cut short or fatal"},
	{ID: "tool-error-rpc", fault: faultRPCError, Tool: ToolLookup, Expect: []Outcome{Surfaced}, Severity: report.SeverityError,
		Behaviour: "the tool fails with a JSON-RPC error (-32603) whose message is a marker",
		Grades:    "an error response reaches the application as an error (JSON-RPC 2.0, server/tools Error Handling)"},
	{ID: "tool-error-result", fault: faultIsError, Tool: ToolLookup, Expect: []Outcome{Surfaced}, Severity: report.SeverityError,
		Behaviour: "the tool fails with a result that has isError: true and a marker in its text",
		Grades:    "a tool execution error reaches the application, and the model, as an error (server/tools, Error Handling)"},
	{ID: "list-changed", fault: faultListChanged, Tool: ToolLookup, Wire: true, Expect: []Outcome{ReListed}, Severity: report.SeverityInfo,
		Behaviour: "before answering, the server sends notifications/tools/list_changed and changes the tool: a new description and a new required argument",
		Grades:    "a client that got notifications/tools/list_changed re-lists before relying on the old definition (server/tools, List Changed Notification)"},
	{ID: "unsolicited-request", fault: faultUnsolicited, Tool: ToolLookup, Wire: true, Expect: []Outcome{Refused}, Severity: report.SeverityWarn,
		Behaviour: "before answering, the server sends a request for a capability the client did not declare (sampling, else elicitation, else roots) and waits 2 s for the answer",
		Grades:    "a receiver MUST answer every request; one for an undeclared capability gets an error, never a result (basic, Requests; client/sampling, client/elicitation, client/roots)"},
	{ID: "duplicate-reply", fault: faultDuplicate, Tool: ToolLookup, Expect: []Outcome{Delivered}, Severity: report.SeverityWarn,
		Behaviour: "the reply is sent twice with the same id (over HTTP as an SSE stream of two events)",
		Grades:    "a second response to one id is ignored (JSON-RPC 2.0)"},
	{ID: "unknown-id-reply", fault: faultUnknownID, Tool: ToolLookup, Expect: []Outcome{Delivered}, Severity: report.SeverityWarn,
		Behaviour: "a response with an id the client never sent, carrying a decoy value, comes before the true reply",
		Grades:    "a response to no pending request is ignored and does not stand in for another (JSON-RPC 2.0)"},
}

// Catalogue returns every scenario, sorted by id. The slice is a copy.
func Catalogue() []Scenario {
	out := make([]Scenario, len(catalogue))
	copy(out, catalogue)
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Lookup returns the scenario with the id.
func Lookup(id string) (Scenario, bool) {
	for _, s := range catalogue {
		if s.ID == id {
			return s, true
		}
	}
	return Scenario{}, false
}

// RulesCatalogue documents the rules of the client drill: one per scenario,
// and MCP-CLIENT-BLIND-RETRY.
func RulesCatalogue() report.Catalogue {
	var c report.Catalogue
	for _, s := range Catalogue() {
		c = append(c, report.Rule{ID: s.Rule(), Severity: s.Severity,
			Title:  "client scenario " + s.ID + ": " + s.Behaviour,
			Detail: "Expected outcome: " + joinOutcomes(s.Expect) + ". Grades: " + s.Grades + ". A hung or crashed client is an error in every scenario."})
	}
	c = append(c, report.Rule{ID: RuleBlindRetry, Severity: report.SeverityError,
		Title:  "the client re-sent a call to a tool annotated destructive and not idempotent",
		Detail: "After a fault the client sent the same tools/call again to a tool whose annotations say it is destructive and not idempotent: the action may now have happened twice. Retry only idempotent tools, or ask."})
	sort.Slice(c, func(i, j int) bool { return c[i].ID < c[j].ID })
	return c
}

// RuleBlindRetry is the rule of a retried destructive call.
const RuleBlindRetry = "MCP-CLIENT-BLIND-RETRY"

func joinOutcomes(os []Outcome) string {
	s := make([]string, len(os))
	for i, o := range os {
		s[i] = string(o)
	}
	return strings.Join(s, " or ")
}
