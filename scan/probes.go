package scan

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
	"github.com/mcpdrill/mcpdrill/internal/mcp"
	"github.com/mcpdrill/mcpdrill/internal/schema"
	"github.com/mcpdrill/mcpdrill/report"
)

// RawProbeTimeout bounds the wait for an answer to a malformed or invalid
// frame (the per-request timeout still applies when it is shorter).
const RawProbeTimeout = 5 * time.Second

// absentTool is a tool name no real server declares.
const absentTool = "__mcpdrill_absent_tool__"

// outcome is what one probe request produced.
type outcome struct {
	verdict Verdict
	code    *int
	status  int
	detail  string
}

// classify maps a reply (or the lack of one) to a verdict.
func classify(msg *jsonrpc.Message, err error) outcome {
	var he *mcp.HTTPError
	switch {
	case errors.As(err, &he):
		o := outcome{verdict: VerdictHTTPError, status: he.Status}
		if he.Body != nil && he.Body.Error != nil {
			code := he.Body.Error.Code
			o.verdict, o.code = VerdictJSONRPCError, &code
		}
		return o
	case errors.Is(err, mcp.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return outcome{verdict: VerdictTimeout, detail: "no reply before the timeout"}
	case err != nil:
		return outcome{verdict: VerdictCrash, detail: errText(err)}
	case msg == nil:
		return outcome{verdict: VerdictCrash, detail: "no message"}
	case msg.Error != nil:
		code := msg.Error.Code
		return outcome{verdict: VerdictJSONRPCError, code: &code}
	}
	var res struct {
		IsError bool `json:"isError"`
	}
	if json.Unmarshal(msg.Result, &res) == nil && res.IsError {
		return outcome{verdict: VerdictToolError}
	}
	return outcome{verdict: VerdictAccepted}
}

// errorMessage folds an HTTP error that carried a JSON-RPC body back into a message.
func errorMessage(msg *jsonrpc.Message, err error) *jsonrpc.Message {
	var he *mcp.HTTPError
	if errors.As(err, &he) && he.Body != nil {
		return he.Body
	}
	return msg
}

// expectation grades an outcome against what the revision asks for.
type expectation struct {
	name  string
	rule  string
	want  string
	grade func(o outcome) (conformant, handled bool)
	tool  string
	skip  string
	send  func(ctx context.Context) (*jsonrpc.Message, error)
}

func wantCode(code int, alsoHTTP bool) func(outcome) (bool, bool) {
	return func(o outcome) (bool, bool) {
		switch {
		case o.verdict == VerdictJSONRPCError && o.code != nil && *o.code == code:
			return true, true
		case alsoHTTP && o.verdict == VerdictHTTPError && o.status >= 400 && o.status < 500:
			return true, true
		}
		return false, o.verdict.Handled()
	}
}

// invalidArgs grades a refusal of bad arguments: isError:true from
// 2025-11-25 on (SEP-1303), either isError or -32602 before.
func invalidArgs(rev string) (string, func(outcome) (bool, bool)) {
	if rev >= mcp.Rev20251125 || mcp.IsModern(rev) {
		return "tool_error (isError: true)", func(o outcome) (bool, bool) {
			return o.verdict == VerdictToolError, o.verdict.Handled()
		}
	}
	return "tool_error or jsonrpc_error -32602", func(o outcome) (bool, bool) {
		ok := o.verdict == VerdictToolError || (o.verdict == VerdictJSONRPCError && o.code != nil && *o.code == jsonrpc.CodeInvalidParams)
		return ok, o.verdict.Handled()
	}
}

func (s *scanner) probes(ctx context.Context) {
	rev := s.sess.Revision
	modern := mcp.IsModern(rev)
	call := func(method string, params any) func(context.Context) (*jsonrpc.Message, error) {
		return func(ctx context.Context) (*jsonrpc.Message, error) { return s.c.Call(ctx, method, params) }
	}
	raw := func(frame string) func(context.Context) (*jsonrpc.Message, error) {
		return func(ctx context.Context) (*jsonrpc.Message, error) {
			// Many servers drop frames they cannot parse; a server that does
			// answer does so at once, so these probes wait less.
			ctx, cancel := context.WithTimeout(ctx, RawProbeTimeout)
			defer cancel()
			return s.c.SendRaw(ctx, []byte(frame))
		}
	}
	argsWant, argsGrade := invalidArgs(rev)
	httpTransport := s.sess.Transport != mcp.TransportStdio

	exps := []expectation{
		{name: "unknown_method", rule: RuleErrUnknownMethod, want: "jsonrpc_error -32601",
			grade: wantCode(jsonrpc.CodeMethodNotFound, false), send: call("mcpdrill/nonexistent_method", map[string]any{})},
		{name: "unknown_tool", rule: RuleErrUnknownTool, want: "jsonrpc_error -32602",
			grade: wantCode(jsonrpc.CodeInvalidParams, false),
			send:  call("tools/call", map[string]any{"name": absentTool, "arguments": map[string]any{}})},
	}
	missing := expectation{name: "missing_required_args", rule: RuleErrMissingArgs, want: argsWant, grade: argsGrade}
	if t, ok := s.pickTool(false); ok {
		missing.tool = t.Name
		missing.send = call("tools/call", map[string]any{"name": t.Name, "arguments": map[string]any{}})
	} else {
		missing.skip = "no listed tool declares required arguments"
	}
	wrong := expectation{name: "wrong_type_args", rule: RuleErrWrongType, want: argsWant, grade: argsGrade}
	if t, ok := s.pickTool(true); ok {
		if args := wrongTypedArgs(t.InputSchema); len(args) > 0 {
			wrong.tool = t.Name
			wrong.send = call("tools/call", map[string]any{"name": t.Name, "arguments": args})
		} else {
			wrong.skip = "no required argument declares a type"
		}
	} else {
		wrong.skip = "no non-destructive tool declares required arguments"
	}
	exps = append(exps, missing, wrong,
		expectation{name: "malformed_json", rule: RuleErrParse, want: "jsonrpc_error -32700",
			grade: wantCode(jsonrpc.CodeParseError, httpTransport), send: raw(`{"jsonrpc":"2.0","id":"mcpdrill-parse","method":"tools/list",`)},
		expectation{name: "invalid_request", rule: RuleErrInvalidRequest, want: "jsonrpc_error -32600",
			grade: wantCode(jsonrpc.CodeInvalidRequest, httpTransport), send: raw(`{"jsonrpc":"2.0","id":"mcpdrill-invalid","params":{}}`)},
	)
	if modern {
		e := expectation{name: "missing_meta", rule: RuleErrMissingMeta, want: "jsonrpc_error -32602",
			grade: wantCode(jsonrpc.CodeInvalidParams, httpTransport), send: raw(`{"jsonrpc":"2.0","id":"mcpdrill-nometa","method":"tools/list","params":{}}`)}
		if s.dualEra() {
			// A dual-era server may read a request without _meta as a
			// legacy one (the spec lets it pick per request): serving it is
			// conformant too.
			e.want = "jsonrpc_error -32602, or served as legacy (dual-era server)"
			strict := e.grade
			e.grade = func(o outcome) (bool, bool) {
				if o.verdict == VerdictAccepted {
					return true, false
				}
				return strict(o)
			}
		}
		exps = append(exps, e)
	}
	if httpTransport {
		for i := range exps {
			if exps[i].name == "malformed_json" || exps[i].name == "invalid_request" || exps[i].name == "missing_meta" {
				exps[i].want += " (or HTTP 4xx)"
			}
		}
	}
	for _, e := range exps {
		s.rep.Probes = append(s.rep.Probes, s.runProbe(ctx, e))
	}
}

// dualEra reports whether the server listed legacy revisions beside modern ones.
func (s *scanner) dualEra() bool {
	for _, v := range s.sess.SupportedVersions {
		if !mcp.IsModern(v) {
			return true
		}
	}
	return false
}

func (s *scanner) runProbe(ctx context.Context, e expectation) Probe {
	p := Probe{Name: e.name, Expected: e.want, Tool: e.tool}
	if e.skip != "" {
		p.Verdict, p.Detail = VerdictSkipped, e.skip
		return p
	}
	msg, err := e.send(ctx)
	if reason, cut := cutShort(ctx); cut && err != nil {
		// The scan's own deadline ended the wait: nothing is known of the
		// server's answer.
		established := false
		p.Verdict, p.Established, p.Reason = VerdictSkipped, &established, reason
		p.Detail = notEstablished(reason, "the probe was cut short before a reply")
		return p
	}
	o := classify(msg, err)
	if o.verdict == VerdictCrash && s.cfg.URL == "" && errors.Is(err, mcp.ErrServerExited) {
		// A crashed stdio server would turn every later probe into a crash too:
		// record this one and reconnect for the rest. A reply that was lost
		// (too large, undecodable) leaves the server running.
		s.reconnect(ctx)
	}
	p.Verdict, p.ErrorCode, p.HTTPStatus, p.Detail = o.verdict, o.code, o.status, o.detail
	conformant, handled := e.grade(o)
	p.Conformant = conformant
	if conformant {
		return p
	}
	got := string(o.verdict)
	if o.code != nil {
		got = fmt.Sprintf("%s %d", got, *o.code)
	}
	if o.status != 0 {
		got += fmt.Sprintf(" (HTTP %d)", o.status)
	}
	sev := severityOf(e.rule)
	if handled {
		sev = report.SeverityWarn
	}
	s.findSev(e.rule, sev, e.tool, "", fmt.Sprintf("%s: expected %s, got %s", e.name, e.want, got))
	return p
}

func (s *scanner) reconnect(ctx context.Context) {
	c, err := mcp.Connect(ctx, s.cfg)
	if err != nil {
		s.find(RuleIncomplete, "", "", "the server exited during a probe and could not be restarted: later probes were run against a dead session")
		return
	}
	s.find(RuleIncomplete, "", "", "the server exited during a probe; a new session was opened for the remaining probes")
	s.observe(s.c, false)
	_ = s.c.Close()
	s.c = c
}

// pickTool chooses the tool the argument probes call: one with required
// arguments, read-only ones first, then by name. When avoidDestructive is set
// tools annotated destructiveHint:true are never chosen (a server that does
// not validate would run them with junk).
func (s *scanner) pickTool(avoidDestructive bool) (mcp.Tool, bool) {
	type cand struct {
		t        mcp.Tool
		readOnly bool
	}
	var cs []cand
	for _, t := range s.list.Tools {
		if len(requiredProps(t.InputSchema)) == 0 {
			continue
		}
		var ann struct {
			ReadOnly    *bool `json:"readOnlyHint"`
			Destructive *bool `json:"destructiveHint"`
		}
		_ = json.Unmarshal(t.Annotations, &ann)
		if avoidDestructive && ann.Destructive != nil && *ann.Destructive {
			continue
		}
		cs = append(cs, cand{t, ann.ReadOnly != nil && *ann.ReadOnly})
	}
	if len(cs) == 0 {
		return mcp.Tool{}, false
	}
	slices.SortFunc(cs, func(a, b cand) int {
		if a.readOnly != b.readOnly {
			if a.readOnly {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.t.Name, b.t.Name)
	})
	return cs[0].t, true
}

func requiredProps(raw json.RawMessage) []string {
	var sc struct {
		Required []string `json:"required"`
	}
	_ = json.Unmarshal(raw, &sc)
	return sc.Required
}

// wrongTypedArgs gives every required argument that declares a type a value
// of another JSON type.
func wrongTypedArgs(raw json.RawMessage) map[string]any {
	root, err := schema.DecodeJSON(raw)
	if err != nil {
		return nil
	}
	obj, _ := root.(map[string]any)
	props, _ := obj["properties"].(map[string]any)
	args := map[string]any{}
	for _, name := range requiredProps(raw) {
		p, _ := props[name].(map[string]any)
		if ref, ok := p["$ref"].(string); ok {
			if r, ok := schema.Resolve(root, ref); ok {
				p, _ = r.(map[string]any)
			}
		}
		var typ string
		switch t := p["type"].(type) {
		case string:
			typ = t
		case []any:
			if len(t) == 1 {
				typ, _ = t[0].(string)
			}
		}
		switch typ {
		case "string":
			args[name] = 987654321
		case "integer", "number":
			args[name] = "mcpdrill-not-a-number"
		case "boolean":
			args[name] = "mcpdrill-not-a-boolean"
		case "object":
			args[name] = "mcpdrill-not-an-object"
		case "array":
			args[name] = "mcpdrill-not-an-array"
		}
	}
	return args
}
