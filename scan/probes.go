package scan

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
	"github.com/mcpdrill/mcpdrill/internal/jsonschema"
	"github.com/mcpdrill/mcpdrill/internal/jsonvalue"
	"github.com/mcpdrill/mcpdrill/internal/mcp"
	"github.com/mcpdrill/mcpdrill/report"
)

// RawProbeTimeout bounds the wait for an answer to a malformed or invalid
// frame (the per-request timeout still applies when it is shorter). On
// stdio a barrier follows the frame (mcp.SendRawBarrier), so only a server
// that answers nothing at all is waited for this long.
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

// classify maps a reply (or the lack of one) to a verdict. resp carries
// the HTTP status of an HTTP reply (0 on stdio).
func classify(resp *mcp.Response, err error) outcome {
	var he *mcp.HTTPError
	var msg *jsonrpc.Message
	status := 0
	if resp != nil {
		msg, status = resp.Message, resp.Status
	}
	switch {
	case errors.As(err, &he):
		o := outcome{verdict: VerdictHTTPError, status: he.Status}
		if he.Body != nil && he.Body.Error != nil {
			code := he.Body.Error.Code
			o.verdict, o.code = VerdictJSONRPCError, &code
		}
		return o
	case errors.Is(err, mcp.ErrIgnored):
		return outcome{verdict: VerdictIgnored, detail: "no reply; the ping sent after it was answered"}
	case errors.Is(err, mcp.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return outcome{verdict: VerdictTimeout, detail: "no reply before the timeout"}
	case err != nil:
		return outcome{verdict: VerdictCrash, detail: errText(err)}
	case msg == nil && status >= 200 && status < 300:
		// e.g. 202: the server took the frame for a notification.
		return outcome{verdict: VerdictAccepted, status: status, detail: fmt.Sprintf("HTTP %d without a JSON-RPC body", status)}
	case msg == nil:
		return outcome{verdict: VerdictCrash, status: status, detail: "no message"}
	case msg.Error != nil:
		code := msg.Error.Code
		return outcome{verdict: VerdictJSONRPCError, code: &code, status: status}
	}
	var res struct {
		IsError bool `json:"isError"`
	}
	if json.Unmarshal(msg.Result, &res) == nil && res.IsError {
		return outcome{verdict: VerdictToolError, status: status}
	}
	return outcome{verdict: VerdictAccepted, status: status}
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
	send  func(ctx context.Context) (*mcp.Response, error)
}

// wantCode grades a refusal with code; alsoHTTP accepts any HTTP 4xx as
// well, whatever its body says (the expectation reads "or HTTP 4xx").
func wantCode(code int, alsoHTTP bool) func(outcome) (bool, bool) {
	return func(o outcome) (bool, bool) {
		switch {
		case o.verdict == VerdictJSONRPCError && o.code != nil && *o.code == code:
			return true, true
		case alsoHTTP && o.status >= 400 && o.status < 500:
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
	call := func(method string, params any) func(context.Context) (*mcp.Response, error) {
		return func(ctx context.Context) (*mcp.Response, error) { return s.c.CallResponse(ctx, method, params) }
	}
	httpTransport := s.sess.Transport != mcp.TransportStdio
	raw := func(frame string) func(context.Context) (*mcp.Response, error) {
		return func(ctx context.Context) (*mcp.Response, error) {
			// Many servers drop frames they cannot parse; a server that does
			// answer does so at once, so these probes wait less, and on
			// stdio a barrier tells a dropped frame from a dead server.
			ctx, cancel := context.WithTimeout(ctx, RawProbeTimeout)
			defer cancel()
			if httpTransport {
				return s.c.SendRawHeaders(ctx, []byte(frame), nil)
			}
			msg, err := s.c.SendRawBarrier(ctx, []byte(frame), mcp.BarrierGrace)
			if err != nil {
				return nil, err
			}
			return &mcp.Response{Message: msg}, nil
		}
	}
	argsWant, argsGrade := invalidArgs(rev)

	exps := []expectation{
		{name: "unknown_method", rule: RuleErrUnknownMethod, want: "jsonrpc_error -32601",
			grade: wantCode(jsonrpc.CodeMethodNotFound, false), send: call("mcpdrill/nonexistent_method", map[string]any{})},
		{name: "unknown_tool", rule: RuleErrUnknownTool, want: "jsonrpc_error -32602",
			grade: wantCode(jsonrpc.CodeInvalidParams, false),
			send:  call("tools/call", map[string]any{"name": absentTool, "arguments": map[string]any{}})},
	}
	target, skip := s.pickTool()
	missing := expectation{name: "missing_required_args", rule: RuleErrMissingArgs, want: argsWant, grade: argsGrade, skip: skip}
	wrong := expectation{name: "wrong_type_args", rule: RuleErrWrongType, want: argsWant, grade: argsGrade, skip: skip}
	if skip == "" {
		missing.tool = target.Name
		missing.send = call("tools/call", map[string]any{"name": target.Name, "arguments": map[string]any{}})
		if args := wrongTypedArgs(target.InputSchema); len(args) > 0 {
			wrong.tool = target.Name
			wrong.send = call("tools/call", map[string]any{"name": target.Name, "arguments": args})
		} else {
			wrong.skip = "no required argument of " + target.Name + " declares a type"
		}
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
	p := Probe{Name: e.name, Expected: e.want, Tool: e.tool, rule: e.rule}
	if e.skip != "" {
		p.Verdict, p.Detail = VerdictSkipped, e.skip
		return p
	}
	resp, err := e.send(ctx)
	s.noteSDK(e, resp, err)
	if reason, cut := cutShort(ctx); cut && err != nil {
		// The scan's own deadline ended the wait: nothing is known of the
		// server's answer.
		established := false
		p.Verdict, p.Established, p.Reason = VerdictSkipped, &established, reason
		p.Detail = notEstablished(reason, "the probe was cut short before a reply")
		return p
	}
	o := classify(resp, err)
	if o.verdict == VerdictCrash && s.cfg.URL == "" && errors.Is(err, mcp.ErrServerExited) {
		// A crashed stdio server would turn every later probe into a crash too:
		// record this one and reconnect for the rest. A reply that was lost
		// (too large, undecodable) leaves the server running.
		s.reconnect(ctx)
	}
	p.Verdict, p.ErrorCode, p.HTTPStatus, p.Detail = o.verdict, o.code, o.status, o.detail
	conformant, handled := e.grade(o)
	p.Conformant = &conformant
	if conformant {
		return p
	}
	got := string(o.verdict)
	if o.code != nil {
		got = fmt.Sprintf("%s %d", got, *o.code)
	}
	if o.status != 0 && o.status != http.StatusOK {
		got += fmt.Sprintf(" (HTTP %d)", o.status)
	}
	if o.verdict == VerdictIgnored {
		got += " (no reply; the ping sent after it was answered)"
	}
	msg := fmt.Sprintf("%s: expected %s, got %s", e.name, e.want, got)
	if b, ok := s.probeSDKBehaviour(e.rule, o.verdict); ok {
		s.findSDK(b, probeSeverity(e.rule, o.verdict, handled), e.tool, "", msg)
		return p
	}
	s.findSev(e.rule, probeSeverity(e.rule, o.verdict, handled), e.tool, "", msg)
	return p
}

// noteSDK reads a probe's answer for an SDK's wording (see sdkSeen).
func (s *scanner) noteSDK(e expectation, resp *mcp.Response, err error) {
	var msg *jsonrpc.Message
	if resp != nil {
		msg = resp.Message
	}
	msg = errorMessage(msg, err)
	switch {
	case msg == nil:
	case msg.Error != nil:
		s.sdk.sawError(msg.Error)
	case e.rule == RuleErrUnknownTool:
		s.sdk.sawUnknownTool(msg.Result)
	}
}

// probeSDKBehaviour names the SDK behaviour a non-conformant probe answer
// is, when an SDK is known to answer so.
func (s *scanner) probeSDKBehaviour(rule string, v Verdict) (sdkBehaviour, bool) {
	stdio := s.sess.Transport == mcp.TransportStdio
	switch {
	case rule == RuleErrUnknownTool && v == VerdictToolError:
		return tsUnknownToolResult, true
	case rule == RuleErrParse && v == VerdictIgnored && stdio:
		return tsDropsUnparsable, true
	case rule == RuleErrInvalidRequest && v == VerdictIgnored && stdio:
		return tsDropsInvalid, true
	}
	return sdkBehaviour{}, false
}

// probeSeverity is the severity ladder of a non-conformant probe answer
// (METHODOLOGY, Part I §3): a refusal in another form than the revision
// asks for is a warning; so is a frame that does not parse, or is no
// request, that a live stdio server dropped (ignored: no real client sends
// one and waits on its answer; the reference SDK drops them). Everything a
// client would act on, or wait on for ever, keeps the rule's severity
// (error): garbage accepted, a crash, a hang, a well-formed request dropped.
func probeSeverity(rule string, v Verdict, handled bool) report.Severity {
	switch {
	case handled:
		return report.SeverityWarn
	case v == VerdictIgnored && (rule == RuleErrParse || rule == RuleErrInvalidRequest):
		return report.SeverityWarn
	}
	return severityOf(rule)
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

// pickTool chooses the tool both argument probes call, or says why none
// is: a tool with required arguments that looks safe to call with junk.
// Tools annotated destructiveHint: true, or whose name has a
// destructive-looking word (see toolRisk), are left out unless
// Options.ProbeAnyTool; among the rest, read-only ones (annotated
// readOnlyHint: true, or named with a read-only word) come first, then by
// name. Annotations only narrow the choice: a read-only hint does not make
// a destructive name safe.
func (s *scanner) pickTool() (mcp.Tool, string) {
	type cand struct {
		t    mcp.Tool
		rank int // 0 read-only by annotation and name, 1 by one of them, 2 neither
	}
	var cs []cand
	withArgs, risky := 0, 0
	for _, t := range s.list.Tools {
		if len(requiredProps(t.InputSchema)) == 0 {
			continue
		}
		withArgs++
		r := toolRisk(t)
		if r.destructive && !s.opts.ProbeAnyTool {
			risky++
			continue
		}
		rank := 2
		switch {
		case r.readOnlyHint && r.readOnlyName:
			rank = 0
		case r.readOnlyHint || r.readOnlyName:
			rank = 1
		}
		cs = append(cs, cand{t, rank})
	}
	switch {
	case withArgs == 0:
		return mcp.Tool{}, "no listed tool declares required arguments"
	case len(cs) == 0:
		return mcp.Tool{}, fmt.Sprintf("not probed: each of the %d tool(s) with required arguments is annotated destructive or has a destructive-looking name", risky)
	}
	slices.SortFunc(cs, func(a, b cand) int {
		return cmp.Or(cmp.Compare(a.rank, b.rank), cmp.Compare(a.t.Name, b.t.Name))
	})
	return cs[0].t, ""
}

// risk is what a tool's annotations and name say about calling it.
type risk struct {
	destructive  bool // destructiveHint: true, or a destructive-looking word
	readOnlyHint bool // readOnlyHint: true
	readOnlyName bool // a read-only word in its name
}

// Words of a tool name that make it look destructive, or read-only. A name
// is split into words at '_', '-', '.', '/', spaces, digits and lower-to-
// upper case changes ("deleteFile", "run_command").
var (
	destructiveWords = wordSet("add", "append", "apply", "clear", "commit", "create", "delete", "deploy", "destroy",
		"drop", "edit", "erase", "exec", "execute", "insert", "install", "kill", "merge", "modify", "move", "mv",
		"overwrite", "patch", "post", "publish", "purge", "push", "put", "remove", "rename", "replace", "reset",
		"restart", "revoke", "rm", "run", "save", "send", "set", "shutdown", "start", "stop", "submit", "terminate",
		"truncate", "uninstall", "update", "upload", "upsert", "write")
	readOnlyWords = wordSet("browse", "count", "describe", "fetch", "find", "get", "info", "inspect", "list",
		"lookup", "peek", "query", "read", "search", "show", "stat", "status", "view")
)

func wordSet(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// toolRisk reads a tool's annotations and name.
func toolRisk(t mcp.Tool) risk {
	var ann struct {
		ReadOnly    *bool `json:"readOnlyHint"`
		Destructive *bool `json:"destructiveHint"`
	}
	_ = json.Unmarshal(t.Annotations, &ann)
	r := risk{
		destructive:  ann.Destructive != nil && *ann.Destructive,
		readOnlyHint: ann.ReadOnly != nil && *ann.ReadOnly,
	}
	for _, w := range nameWords(t.Name) {
		r.destructive = r.destructive || destructiveWords[w]
		r.readOnlyName = r.readOnlyName || readOnlyWords[w]
	}
	if r.destructive {
		r.readOnlyName = false
	}
	return r
}

// nameWords splits a tool name into lower-case words.
func nameWords(name string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	var prev rune
	for _, r := range name {
		switch {
		case !unicode.IsLetter(r):
			flush()
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
		prev = r
	}
	flush()
	return words
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
	root, err := jsonvalue.DecodeJSON(raw)
	if err != nil {
		return nil
	}
	obj, _ := root.(map[string]any)
	props, _ := obj["properties"].(map[string]any)
	args := map[string]any{}
	for _, name := range requiredProps(raw) {
		p, _ := props[name].(map[string]any)
		if ref, ok := p["$ref"].(string); ok {
			if r, _, ok := jsonschema.ResolveRef(root, ref); ok {
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
