package scan

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
	"github.com/mcpdrill/mcpdrill/internal/jsonschema"
	"github.com/mcpdrill/mcpdrill/internal/jsonvalue"
	"github.com/mcpdrill/mcpdrill/internal/mcp"
	"github.com/mcpdrill/mcpdrill/internal/target"
	"github.com/mcpdrill/mcpdrill/internal/telemetry"
	"github.com/mcpdrill/mcpdrill/report"
)

// Tool-invocation rule ids. They belong to the MCP-DRIFT family: a declared
// outputSchema against what a real call returned.
const (
	RuleCallOutputSchema  = "MCP-DRIFT-CALL-OUTPUT-SCHEMA"
	RuleCallNoStructured  = "MCP-DRIFT-CALL-NO-STRUCTURED-CONTENT"
	RuleCallErrorShape    = "MCP-DRIFT-CALL-ERROR-SHAPE"
	RuleCallTextMirror    = "MCP-DRIFT-CALL-TEXT-MIRROR"
	RuleCallNotCompleted  = "MCP-DRIFT-CALL-NOT-COMPLETED"
	RuleCallUnresolved    = "MCP-DRIFT-CALL-UNRESOLVED"
	RuleCallNoArgsCreated = "MCP-DRIFT-CALL-NO-ARGUMENTS"
)

func invokeRules() report.Catalogue {
	return report.Catalogue{
		rule(RuleCallOutputSchema, report.SeverityError, "structuredContent does not conform to the declared outputSchema",
			"An invoked tool returned structuredContent that the declared outputSchema rejects. The finding carries the JSON pointer, the failing keyword and the observed type, never the value: a tool result is arbitrary data and does not reach the report."),
		rule(RuleCallNoStructured, report.SeverityError, "A tool with an outputSchema returned no structuredContent",
			"A tool that declares an outputSchema must return structuredContent conforming to it; this successful result carried none."),
		rule(RuleCallErrorShape, report.SeverityWarn, "A tool failure arrived as a JSON-RPC error",
			"Errors that originate in the tool should be a successful result with isError: true, so the model can see them; a JSON-RPC error is for protocol failures (unknown tool, malformed request). The call used arguments generated to satisfy the declared inputSchema."),
		rule(RuleCallTextMirror, report.SeverityInfo, "structuredContent is not mirrored in a TextContent block",
			"For backwards compatibility a tool returning structuredContent should also return its serialized JSON in a TextContent block; clients that ignore structuredContent see nothing else."),
		rule(RuleCallNotCompleted, report.SeverityWarn, "An invoked tool call did not complete",
			"The tools/call timed out, the connection failed, or the reply could not be read; nothing was established about the result."),
		rule(RuleCallUnresolved, report.SeverityWarn, "A tool named by --invoke-tool was not found",
			"Names are exact and resolve against the declared manifest (drift) or the listed tools (scan), never as patterns. A name that does not resolve is not invoked."),
		rule(RuleCallNoArgsCreated, report.SeverityWarn, "No arguments could be generated for an invoked tool",
			"No instance of the declared inputSchema could be synthesized, so the tool was not invoked."),
	}
}

// InvokeOptions configure the opt-in tool invocation. tools/call has side
// effects: nothing is sent unless Execute is set, and a target that does not
// classify as local, dev or staging also needs AllowProduction. Annotations
// (readOnlyHint …) are never consulted: they are the server's claims.
type InvokeOptions struct {
	// Tools are exact tool names (never patterns); empty invokes nothing.
	Tools []string
	// Execute sends the calls; without it only the plan is recorded.
	Execute bool
	// AllowProduction acknowledges invoking tools on a target that is not
	// classified local, dev or staging (--i-know-this-is-production).
	AllowProduction bool
	// Seed seeds the argument generation; it is recorded in the plan.
	Seed uint64
	// Budget bounds each schema's synthesis and checks (zero: the
	// jsonschema.Budget defaults).
	Budget jsonschema.Budget
}

// Sentinel errors of the invocation gate (the user's mistakes).
var (
	// ErrExecuteWithoutTools: Execute was set with no tool named.
	ErrExecuteWithoutTools = errors.New("scan: executing an invocation needs at least one tool named (there is no wildcard)")
	// ErrProductionNotAcknowledged: Execute on a target that is not
	// local, dev or staging without AllowProduction.
	ErrProductionNotAcknowledged = errors.New("scan: refusing to invoke tools on a target that is not classified local, dev or staging unless production is acknowledged")
	// ErrInvalidToolName: an empty or blank name (a pattern character is
	// taken literally, so such a name simply does not resolve).
	ErrInvalidToolName = errors.New("scan: tools are invoked by their exact names")
)

// CheckInvoke applies the gate before anything is sent.
func CheckInvoke(o InvokeOptions, cls target.Classification) error {
	if o.Execute && len(o.Tools) == 0 {
		return ErrExecuteWithoutTools
	}
	for _, n := range o.Tools {
		if strings.TrimSpace(n) == "" {
			return fmt.Errorf("%w: empty name", ErrInvalidToolName)
		}
	}
	if o.Execute && !cls.Class.Preproduction() && !o.AllowProduction {
		return fmt.Errorf("%w (%s)", ErrProductionNotAcknowledged, cls)
	}
	return nil
}

// Invocation is the plan and, when executed, what each call returned. It
// holds the generated arguments (mcpdrill's own data) and never a value the
// server returned.
type Invocation struct {
	Target   target.Classification `json:"target"`
	Seed     uint64                `json:"seed"`
	Executed bool                  `json:"executed"`
	// ResolvedAgainst is "declared" (a manifest) or "listed" (tools/list).
	ResolvedAgainst string        `json:"resolved_against"`
	Calls           []PlannedCall `json:"calls"`
}

// PlannedCall is one tool call of the plan.
type PlannedCall struct {
	Tool string `json:"tool"`
	// Arguments were generated from the declared inputSchema with Seed.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Outcome is planned, unresolved, no_arguments, result, tool_error,
	// jsonrpc_error or not_completed.
	Outcome   string `json:"outcome"`
	ErrorCode *int   `json:"error_code,omitempty"`
	// Structured says whether the result carried structuredContent.
	Structured bool `json:"structured,omitempty"`
	// Violations counts outputSchema violations.
	Violations int    `json:"violations,omitempty"`
	Detail     string `json:"detail,omitempty"`
	// Reason is set when the run's own deadline ("deadline") or
	// cancellation ("canceled") cut the call (or its argument synthesis)
	// short: nothing about the server is claimed then.
	Reason string `json:"reason,omitempty"`

	tool mcp.Tool
}

// Call outcomes.
const (
	OutcomePlanned      = "planned"
	OutcomeUnresolved   = "unresolved"
	OutcomeNoArguments  = "no_arguments"
	OutcomeResult       = "result"
	OutcomeToolError    = "tool_error"
	OutcomeJSONRPCError = "jsonrpc_error"
	OutcomeNotCompleted = "not_completed"
)

// PlanInvocation resolves the named tools against tools (declared or
// listed) and generates their arguments. Nothing is sent. It is
// PlanInvocationContext without a context.
func PlanInvocation(o InvokeOptions, cls target.Classification, tools []mcp.Tool, against string) (*Invocation, []report.Finding) {
	return PlanInvocationContext(context.Background(), o, cls, tools, against)
}

// PlanInvocationContext is PlanInvocation under ctx: each tool's arguments
// are synthesized under ctx and the default jsonschema.Budget. An inputSchema
// that needs more gets no arguments (no_arguments, "synthesis budget
// exceeded"); once ctx has ended, the remaining calls get none either and
// carry Reason, with no finding.
func PlanInvocationContext(ctx context.Context, o InvokeOptions, cls target.Classification, tools []mcp.Tool, against string) (*Invocation, []report.Finding) {
	inv := &Invocation{Target: cls, Seed: o.Seed, ResolvedAgainst: against, Calls: []PlannedCall{}}
	var fs []report.Finding
	byName := map[string]mcp.Tool{}
	for _, t := range tools {
		if _, dup := byName[t.Name]; !dup {
			byName[t.Name] = t
		}
	}
	seen := map[string]bool{}
	for _, name := range o.Tools {
		if seen[name] {
			continue
		}
		seen[name] = true
		pc := PlannedCall{Tool: name, Outcome: OutcomePlanned}
		t, ok := byName[name]
		if !ok {
			pc.Outcome = OutcomeUnresolved
			pc.Detail = "not in the " + against + " tools"
			fs = append(fs, report.Finding{Rule: RuleCallUnresolved, Severity: report.SeverityWarn, Tool: name,
				Message: "named by --invoke-tool but not found among the " + against + " tools; not invoked"})
			inv.Calls = append(inv.Calls, pc)
			continue
		}
		pc.tool = t
		args, err := generateArgs(ctx, t.InputSchema, o.Seed, o.Budget)
		reason, cut := cutShort(ctx)
		switch {
		case err != nil && cut:
			pc.Outcome, pc.Reason = OutcomeNoArguments, reason
			pc.Detail = notEstablished(reason, "argument synthesis was cut short")
		case errors.Is(err, jsonschema.ErrBudget):
			pc.Outcome, pc.Detail = OutcomeNoArguments, err.Error()
			fs = append(fs, report.Finding{Rule: RuleCallNoArgsCreated, Severity: report.SeverityWarn, Tool: name, Pointer: "/inputSchema",
				Message: "no arguments could be generated from the declared inputSchema (synthesis budget exceeded); not invoked"})
		case err != nil:
			pc.Outcome, pc.Detail = OutcomeNoArguments, err.Error()
			fs = append(fs, report.Finding{Rule: RuleCallNoArgsCreated, Severity: report.SeverityWarn, Tool: name, Pointer: "/inputSchema",
				Message: "no arguments could be generated from the declared inputSchema; not invoked"})
		}
		pc.Arguments = args
		inv.Calls = append(inv.Calls, pc)
	}
	slices.SortStableFunc(inv.Calls, func(a, b PlannedCall) int { return strings.Compare(a.Tool, b.Tool) })
	return inv, fs
}

// generateArgs synthesizes, under ctx and budget, the first valid instance
// of an inputSchema (an absent schema takes {}).
func generateArgs(ctx context.Context, raw json.RawMessage, seed uint64, budget jsonschema.Budget) (json.RawMessage, error) {
	if isAbsent(raw) {
		return json.RawMessage(`{}`), nil
	}
	insts, err := jsonschema.SynthesizeContext(ctx, raw, jsonschema.SynthOptions{Seed: seed, MaxInstances: 1, Budget: budget})
	if err != nil {
		return nil, err
	}
	if _, ok := insts[0].(map[string]any); !ok {
		return nil, errors.New("the inputSchema does not describe an object")
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(insts[0]); err != nil {
		return nil, err
	}
	return json.RawMessage(bytes.TrimSpace(b.Bytes())), nil
}

// ExecuteInvocation sends every planned call over c and checks each reply
// against the tool's declared outputSchema. Calls are stamped with the span
// of their tools/call when tr is set.
func ExecuteInvocation(ctx context.Context, c *mcp.Client, inv *Invocation, tr *telemetry.Tracer) []report.Finding {
	var fs []report.Finding
	rev := c.Session().Revision
	inv.Executed = true
	for i := range inv.Calls {
		pc := &inv.Calls[i]
		if pc.Outcome != OutcomePlanned {
			continue
		}
		mark := tr.Mark()
		msg, err := c.Call(ctx, "tools/call", map[string]any{"name": pc.Tool, "arguments": pc.Arguments})
		if reason, cut := cutShort(ctx); cut && err != nil {
			pc.Outcome, pc.Reason = OutcomeNotCompleted, reason
			pc.Detail = notEstablished(reason, "the call was cut short before a reply")
			continue
		}
		call := lastCall(tr.Since(mark), "", false)
		for _, f := range checkReply(ctx, pc, rev, msgOrHTTP(msg, err)) {
			f.SetTrace(call.IDs())
			fs = append(fs, f)
		}
	}
	report.Sort(fs)
	return fs
}

// reply is a tools/call answer, or the error that replaced it.
type callReply struct {
	result    json.RawMessage
	errorCode *int
	err       error
}

func msgOrHTTP(msg *jsonrpc.Message, err error) callReply {
	msg = errorMessage(msg, err)
	switch {
	case msg != nil && msg.Error != nil:
		code := msg.Error.Code
		return callReply{errorCode: &code}
	case err != nil:
		return callReply{err: err}
	case msg == nil || msg.Result == nil:
		return callReply{err: errors.New("no result")}
	}
	return callReply{result: msg.Result}
}

// checkReply records a call's outcome and grades it; the result is checked
// against the outputSchema under ctx and the default schema budget.
func checkReply(ctx context.Context, pc *PlannedCall, rev string, r callReply) []report.Finding {
	find := func(rule string, ptr, msg string) report.Finding {
		return report.Finding{Rule: rule, Severity: severityOf(rule), Tool: pc.Tool, Pointer: ptr, Message: msg}
	}
	switch {
	case r.errorCode != nil:
		pc.Outcome, pc.ErrorCode = OutcomeJSONRPCError, r.errorCode
		return []report.Finding{find(RuleCallErrorShape, "", fmt.Sprintf("the call with generated valid arguments failed as JSON-RPC error %d, not as a result with isError: true", *r.errorCode))}
	case r.err != nil:
		pc.Outcome, pc.Detail = OutcomeNotCompleted, errText(r.err)
		return []report.Finding{find(RuleCallNotCompleted, "", "tools/call did not complete: "+errText(r.err))}
	}
	var res struct {
		Content           []json.RawMessage `json:"content"`
		StructuredContent json.RawMessage   `json:"structuredContent"`
		IsError           bool              `json:"isError"`
	}
	if err := json.Unmarshal(r.result, &res); err != nil {
		pc.Outcome, pc.Detail = OutcomeNotCompleted, "the result is not a CallToolResult object"
		return []report.Finding{find(RuleCallNotCompleted, "", "the result is not a CallToolResult object")}
	}
	pc.Structured = !isAbsent(res.StructuredContent)
	if res.IsError {
		pc.Outcome = OutcomeToolError
		pc.Detail = "isError: true (the output contract is not checked on a tool error)"
		return nil
	}
	pc.Outcome = OutcomeResult
	var fs []report.Finding
	declared := !isAbsent(pc.tool.OutputSchema)
	if !pc.Structured {
		if declared {
			fs = append(fs, find(RuleCallNoStructured, "/structuredContent", "the tool declares an outputSchema and its result carries no structuredContent"))
		}
		return fs
	}
	value, err := jsonvalue.DecodeJSON(res.StructuredContent)
	if err != nil {
		pc.Detail = "structuredContent could not be decoded"
		return append(fs, find(RuleCallOutputSchema, "", "structuredContent could not be decoded as JSON"))
	}
	if declared {
		sc, err := jsonschema.CompileContext(ctx, pc.tool.OutputSchema, jsonschema.Budget{})
		var vs []jsonschema.Violation
		if err == nil {
			vs = sc.Violations(value)
			if stop := sc.Stopped(); stop != nil {
				err = stop
			}
		}
		switch {
		case errors.Is(err, jsonschema.ErrBudget):
			pc.Detail = "checking the result against the outputSchema exceeded the synthesis budget; the result was not checked"
		case err != nil && ctx.Err() != nil:
			reason, _ := cutShort(ctx)
			pc.Reason, pc.Detail = reason, notEstablished(reason, "the result was not checked against the outputSchema")
		case err != nil:
			pc.Detail = "the declared outputSchema does not compile; the result was not checked"
		default:
			pc.Violations = len(vs)
			for _, v := range vs {
				ptr := v.Pointer
				shown := ptr
				if shown == "" {
					shown = "(root)"
				}
				fs = append(fs, find(RuleCallOutputSchema, ptr, fmt.Sprintf("%s: %s (keyword %s)", shown, v.Message, v.Keyword)))
			}
		}
		if !mcp.IsModern(rev) {
			if _, ok := value.(map[string]any); !ok && len(pc.tool.OutputSchema) > 0 && pc.Violations == 0 {
				fs = append(fs, find(RuleCallOutputSchema, "", "structuredContent must be a JSON object before 2026-07-28"))
			}
		}
	}
	if !mirrored(res.Content, value) {
		fs = append(fs, find(RuleCallTextMirror, "/content", "no TextContent block carries the serialized structuredContent"))
	}
	return fs
}

// mirrored reports whether a text block of content holds JSON equal to value.
func mirrored(content []json.RawMessage, value any) bool {
	want := jsonvalue.Canonical(value)
	for _, raw := range content {
		var b struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(raw, &b) != nil || b.Type != "text" {
			continue
		}
		v, err := jsonvalue.DecodeJSON([]byte(b.Text))
		if err == nil && bytes.Equal(jsonvalue.Canonical(v), want) {
			return true
		}
	}
	return false
}

// planInvocation applies the gate before the scan sends anything.
func (s *scanner) planInvocation() error {
	if len(s.opts.Invoke.Tools) == 0 && !s.opts.Invoke.Execute {
		return nil
	}
	return CheckInvoke(s.opts.Invoke, s.classification())
}

func (s *scanner) classification() target.Classification {
	if s.cfg.URL == "" {
		return target.Stdio().Override(s.opts.TargetClass)
	}
	return target.ClassifyURL(s.cfg.URL).Override(s.opts.TargetClass)
}

// invoke plans (and with Execute sends) the named tool calls, resolved
// against the listed tools.
func (s *scanner) invoke(ctx context.Context) {
	if len(s.opts.Invoke.Tools) == 0 {
		return
	}
	o := s.opts.Invoke
	if o.Budget == (jsonschema.Budget{}) {
		o.Budget = s.opts.Budget
	}
	inv, fs := PlanInvocationContext(ctx, o, s.classification(), s.list.Tools, "listed")
	s.rep.Invocation = inv
	s.rep.Findings = append(s.rep.Findings, fs...)
	if !s.opts.Invoke.Execute || !s.listed {
		return
	}
	s.rep.Findings = append(s.rep.Findings, ExecuteInvocation(ctx, s.c, inv, s.opts.Tracer)...)
	s.mark = s.opts.Tracer.Mark()
}

// InvokeDeclared is the opt-in invocation of a drift comparison: the named
// tools are resolved against the declared tool set (a manifest or a
// baseline: a server cannot offer a name and have it called), a planned
// call of a tool the server does not also serve (served) is unresolved and
// not invoked, and with o.Execute the rest are sent over a new session to
// cfg's server, stamped with tr's spans. The invocation is returned even
// when connecting fails; the error is then mcp.Connect's.
func InvokeDeclared(ctx context.Context, cfg mcp.Config, o InvokeOptions, cls target.Classification, declared []mcp.Tool, served []string, tr *telemetry.Tracer) (*Invocation, []report.Finding, error) {
	inv, fs := PlanInvocation(o, cls, declared, "declared")
	for i := range inv.Calls {
		if inv.Calls[i].Outcome == OutcomePlanned && !slices.Contains(served, inv.Calls[i].Tool) {
			inv.Calls[i].Outcome, inv.Calls[i].Detail = OutcomeUnresolved, "declared but not served; not invoked"
		}
	}
	if !o.Execute {
		return inv, fs, nil
	}
	c, err := mcp.Connect(ctx, cfg)
	if err != nil {
		return inv, nil, err // the caller names the server it could not reach
	}
	defer c.Close()
	return inv, append(fs, ExecuteInvocation(ctx, c, inv, tr)...), nil
}
