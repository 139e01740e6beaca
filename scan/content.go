package scan

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
	"github.com/mcpdrill/mcpdrill/internal/mcp"
	"github.com/mcpdrill/mcpdrill/report"
)

// Bounds of the read-only depth (METHODOLOGY, Part I §4): at most
// maxResourceReads listed resources are read, at most maxPromptGets prompts
// are got, each listing follows at most maxContentPages pages, and each
// prompt gets at most maxPromptArgs generated arguments.
const (
	maxResourceReads = 3
	maxPromptGets    = 3
	maxContentPages  = 10
	maxPromptArgs    = 8
)

// absentResourcePath is the path of a URI no server serves (under the
// reserved .invalid host, RFC 2606); absentPrompt a prompt name none lists.
const (
	absentResourcePath = "://mcpdrill.invalid/__mcpdrill_absent_resource__"
	absentPrompt       = "__mcpdrill_absent_prompt__"
	generatedArgValue  = "mcpdrill"
)

// maxErrorText bounds how much of an error's message and data is kept to
// be read (answer.text).
const maxErrorText = 4 << 10

// answer is what one read request produced: a result, a JSON-RPC error, or
// no reply at all (err).
type answer struct {
	result json.RawMessage
	code   *int
	err    error
	// text is the error's message and data, the server's words: read to
	// tell what a refusal lacked (lacking), never reported.
	text string
}

func (a answer) is(code int) bool { return a.code != nil && *a.code == code }

// ask sends one read request on the scan's session. It waits at most
// RawProbeTimeout (the request timeout still applies when it is shorter): a
// server that ignores a method it does not serve costs the scan that long.
func (s *scanner) ask(ctx context.Context, method string, params any) answer {
	ctx, cancel := context.WithTimeout(ctx, RawProbeTimeout)
	defer cancel()
	msg, err := s.c.Call(ctx, method, params)
	msg = errorMessage(msg, err)
	switch {
	case msg != nil && msg.Error != nil:
		s.sdk.sawError(msg.Error)
		code := msg.Error.Code
		text := msg.Error.Message + " " + string(msg.Error.Data)
		return answer{code: &code, text: text[:min(len(text), maxErrorText)]}
	case msg != nil && msg.Result != nil:
		return answer{result: msg.Result}
	case err == nil:
		err = fmt.Errorf("%s: a reply with neither result nor error", method)
	}
	return answer{err: err}
}

// listing is a paged list method's outcome.
type listing struct {
	items  []json.RawMessage
	pages  int
	first  answer // the first page's answer when it was not a result
	loop   bool
	capped bool
	bad    string // a page that was not the expected object
	raw    []json.RawMessage
}

// listAll pages through method, reading the array member key of each page.
func (s *scanner) listAll(ctx context.Context, method, key string) listing {
	var l listing
	seen := map[string]bool{}
	cursor := ""
	for {
		if l.pages >= maxContentPages {
			l.capped = true
			return l
		}
		var params any
		if l.pages > 0 {
			params = map[string]any{"cursor": cursor}
		}
		a := s.ask(ctx, method, params)
		if a.result == nil {
			if l.pages == 0 {
				l.first = a
			} else {
				l.bad = fmt.Sprintf("page %d was not answered with a result", l.pages+1)
			}
			return l
		}
		l.pages++
		l.raw = append(l.raw, a.result)
		var page struct {
			NextCursor *string `json:"nextCursor"`
		}
		var members map[string]json.RawMessage
		if json.Unmarshal(a.result, &members) != nil || json.Unmarshal(a.result, &page) != nil {
			l.bad = fmt.Sprintf("page %d is not a JSON object", l.pages)
			return l
		}
		items, err := jsonrpc.SplitArray(members[key])
		if err != nil {
			l.bad = fmt.Sprintf("page %d has no %s array", l.pages, key)
			return l
		}
		l.items = append(l.items, items...)
		if page.NextCursor == nil || *page.NextCursor == "" {
			return l
		}
		if seen[*page.NextCursor] {
			l.loop = true
			return l
		}
		seen[*page.NextCursor] = true
		cursor = *page.NextCursor
	}
}

// declared reads the capability names of a capabilities object.
func declared(caps json.RawMessage) map[string]bool {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(caps, &m)
	out := map[string]bool{}
	for k, v := range m {
		out[k] = string(v) != "null"
	}
	return out
}

// readDepth runs the read-only checks of resources, prompts, logging and
// completion, and the capability-honesty check. Nothing here calls a tool.
func (s *scanner) readDepth(ctx context.Context) {
	caps := declared(s.sess.Capabilities)
	h := depth{}
	templates := s.resources(ctx, caps["resources"], &h)
	ref := s.prompts(ctx, caps["prompts"], caps["completions"], &h)
	if ref == nil {
		ref = templateRef(templates)
	}
	s.logLevel(ctx, caps["logging"], &h)
	s.completion(ctx, caps["completions"], ref, &h)
	s.completionUnknown(ctx, caps["completions"])
	s.undeclared(ctx, caps, ref, &h)
	s.gradeHonesty(ctx, h)
	s.contentCacheHints(ctx, caps["resources"] || caps["prompts"], h.cacheable)
}

// contentCacheHints grades, from 2026-07-28, the ttlMs and cacheScope of
// the resources/list, resources/templates/list, resources/read and
// prompts/list results the read-only checks received.
func (s *scanner) contentCacheHints(ctx context.Context, declaredAny bool, results []json.RawMessage) {
	switch {
	case !mcp.IsModern(s.sess.Revision):
		s.check(RuleContentCacheHints, CheckNotApplicable, "legacy revision")
		return
	case !declaredAny:
		s.check(RuleContentCacheHints, CheckNotApplicable, "neither resources nor prompts declared")
		return
	case len(results) == 0:
		s.notEstablishedCheck(ctx, RuleContentCacheHints, "no resources or prompts result was received")
		return
	}
	noTTL, noScope, badScope, _ := cacheHints(results)
	if text := cacheHintText(noTTL, noScope, badScope, len(results)); text != "" {
		s.find(RuleContentCacheHints, "", "/ttlMs", "resources and prompts results: "+text)
		s.check(RuleContentCacheHints, CheckFail, "")
		return
	}
	s.check(RuleContentCacheHints, CheckPass, fmt.Sprintf("%d result(s)", len(results)))
}

// depth collects what the read-only checks saw along the way: for the
// capability-honesty check the declared capabilities whose methods answered
// -32601, the undeclared ones whose methods answered with a result, and how
// many were answered at all; and the results 2026-07-28 makes cacheable.
type depth struct {
	refused  []string // "resources (resources/list)"
	answered []string
	asked    int

	cacheable []json.RawMessage
}

func (h *depth) saw(capability, method string, a answer, isDeclared bool) {
	if a.err != nil {
		return
	}
	h.asked++
	switch {
	case isDeclared && a.is(jsonrpc.CodeMethodNotFound):
		h.refused = append(h.refused, capability+" ("+method+")")
	case !isDeclared && a.result != nil && !emptyResult(a.result):
		h.answered = append(h.answered, capability+" ("+method+")")
	}
}

// emptyResult reports whether a list or completion result holds nothing:
// its resources, prompts or completion values are absent or empty. A
// server that answers an undeclared capability's method with nothing
// serves nothing (an SDK may install the method for every server).
func emptyResult(result json.RawMessage) bool {
	m := members(result)
	for _, key := range []string{"resources", "prompts"} {
		if items, err := jsonrpc.SplitArray(m[key]); err == nil && len(items) > 0 {
			return false
		}
	}
	if values, err := jsonrpc.SplitArray(members(m["completion"])["values"]); err == nil && len(values) > 0 {
		return false
	}
	return true
}

func (s *scanner) gradeHonesty(ctx context.Context, h depth) {
	var parts []string
	if len(h.refused) > 0 {
		parts = append(parts, "declared but answered -32601: "+strings.Join(h.refused, ", "))
	}
	if len(h.answered) > 0 {
		parts = append(parts, "not declared but served: "+strings.Join(h.answered, ", "))
	}
	switch {
	case len(parts) > 0:
		s.find(RuleCapHonesty, "", "/capabilities", strings.Join(parts, "; "))
		s.check(RuleCapHonesty, CheckFail, "")
	case h.asked == 0:
		if reason, cut := cutShort(ctx); cut {
			s.cutCheck(RuleCapHonesty, reason, "no capability method was answered before the scan ended")
			return
		}
		s.check(RuleCapHonesty, CheckNotEstablished, "no capability method was answered")
	default:
		s.check(RuleCapHonesty, CheckPass, fmt.Sprintf("%d capability method(s) asked", h.asked))
	}
}

// undeclared asks the list methods of the capabilities the server did not
// declare, and completion/complete about ref when completions were not
// declared: a server that serves them must declare them.
func (s *scanner) undeclared(ctx context.Context, caps map[string]bool, ref *completionRef, h *depth) {
	for _, c := range []struct{ capability, method string }{{"resources", "resources/list"}, {"prompts", "prompts/list"}} {
		if caps[c.capability] {
			continue
		}
		h.saw(c.capability, c.method, s.ask(ctx, c.method, nil), false)
	}
	// 2024-11-05 has no completions capability to declare.
	if !caps["completions"] && ref != nil && s.sess.Revision != Rev20241105 {
		h.saw("completions", "completion/complete", s.ask(ctx, "completion/complete", ref.params()), false)
	}
}

// notServed records the check of a declared capability's method that
// answered -32601. The one finding of it is MCP-CONF-CAPABILITY-HONESTY's
// (the capability is declared but not served): one behaviour, one finding.
func (s *scanner) notServed(rule, method string) {
	s.check(rule, CheckFail, method+" answered -32601; the finding is "+RuleCapHonesty+"'s")
}

// unanswered records a check whose request got no reply: cut short by the
// scan, or not established.
func (s *scanner) unanswered(ctx context.Context, rule, what string, err error) {
	if reason, cut := cutShort(ctx); cut {
		s.cutCheck(rule, reason, what+" was cut short")
		return
	}
	s.check(rule, CheckNotEstablished, what+": no answer: "+errText(err))
}

// notEstablishedCheck records a check whose evidence an earlier step did
// not give: cut short by the scan when its context is over.
func (s *scanner) notEstablishedCheck(ctx context.Context, rule, what string) {
	if reason, cut := cutShort(ctx); cut {
		s.cutCheck(rule, reason, what)
		return
	}
	s.check(rule, CheckNotEstablished, what)
}

// gradeList records the check of a listing: refused, not an object page,
// looping, items missing members. It returns false when nothing was listed.
func (s *scanner) gradeList(ctx context.Context, rule, method, key string, l listing, need func(json.RawMessage) []string) bool {
	switch {
	case l.pages == 0 && l.first.err != nil:
		s.unanswered(ctx, rule, method, l.first.err)
		return false
	case l.pages == 0 && l.first.is(jsonrpc.CodeMethodNotFound):
		s.notServed(rule, method)
		return false
	case l.pages == 0:
		s.find(rule, "", "", fmt.Sprintf("%s was refused with %d", method, *l.first.code))
		s.check(rule, CheckFail, "")
		return false
	}
	var problems []string
	if l.bad != "" {
		problems = append(problems, l.bad)
	}
	if l.loop {
		problems = append(problems, fmt.Sprintf("nextCursor repeated after %d page(s)", l.pages))
	}
	problems = append(problems, itemProblems(key, l.items, need)...)
	if len(problems) > 0 {
		s.find(rule, "", "/"+key, method+": "+strings.Join(problems, "; "))
		s.check(rule, CheckFail, "")
		return true
	}
	detail := fmt.Sprintf("%d item(s) on %d page(s)", len(l.items), l.pages)
	if l.capped {
		detail += fmt.Sprintf(", stopped at the page cap (%d)", maxContentPages)
	}
	s.check(rule, CheckPass, detail)
	return true
}

// itemProblems counts, per problem, the items of a listing that have it;
// the first item with each problem gives its index.
func itemProblems(key string, items []json.RawMessage, need func(json.RawMessage) []string) []string {
	type tally struct {
		n     int
		first int
	}
	counts := map[string]*tally{}
	var order []string
	for i, it := range items {
		for _, p := range need(it) {
			t, ok := counts[p]
			if !ok {
				t = &tally{first: i}
				counts[p] = t
				order = append(order, p)
			}
			t.n++
		}
	}
	out := make([]string, 0, len(order))
	for _, p := range order {
		out = append(out, fmt.Sprintf("%d of %d %s %s (first /%s/%d)", counts[p].n, len(items), key, p, key, counts[p].first))
	}
	return out
}

// members decodes an object into its members; nil when it is not an object.
func members(raw json.RawMessage) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	return m
}

// str reads a string member; ok is false when absent or not a string.
func str(m map[string]json.RawMessage, k string) (string, bool) {
	raw, present := m[k]
	if !present {
		return "", false
	}
	var v string
	if json.Unmarshal(raw, &v) != nil {
		return "", false
	}
	return v, true
}

// needStrings returns a check that each item is an object with non-empty
// string members names.
func needStrings(names ...string) func(json.RawMessage) []string {
	return func(raw json.RawMessage) []string {
		m := members(raw)
		if m == nil {
			return []string{"are not objects"}
		}
		var out []string
		for _, n := range names {
			if v, ok := str(m, n); !ok || v == "" {
				out = append(out, "without a string "+n)
			}
		}
		return out
	}
}

// templateProblems checks a resource template: a name, and a uriTemplate
// whose braces pair up (RFC 6570 expressions do not nest).
func templateProblems(raw json.RawMessage) []string {
	out := needStrings("name", "uriTemplate")(raw)
	if len(out) > 0 {
		return out
	}
	t, _ := str(members(raw), "uriTemplate")
	if _, ok := templateVars(t); !ok {
		out = append(out, "with a uriTemplate that is not an RFC 6570 template")
	}
	return out
}

// templateVars lists the variable names of an RFC 6570 template; ok is
// false when its braces do not pair up or an expression is empty.
func templateVars(t string) (vars []string, ok bool) {
	for {
		open := strings.IndexByte(t, '{')
		if closing := strings.IndexByte(t, '}'); open < 0 {
			return vars, closing < 0
		} else if closing < open {
			return nil, false
		}
		rest := t[open+1:]
		end := strings.IndexByte(rest, '}')
		if end <= 0 || strings.ContainsRune(rest[:end], '{') {
			return nil, false
		}
		expr := strings.TrimLeft(rest[:end], "+#./;?&=,!@|")
		for _, v := range strings.Split(expr, ",") {
			v = strings.TrimRight(v, "*")
			if i := strings.IndexByte(v, ':'); i >= 0 {
				v = v[:i]
			}
			if v == "" {
				return nil, false
			}
			vars = append(vars, v)
		}
		t = rest[end+1:]
	}
}

// resources grades resources/list, resources/templates/list, reads of up to
// maxResourceReads listed resources and a read of a URI no server has. It
// returns the listed templates, for the completion check.
func (s *scanner) resources(ctx context.Context, isDeclared bool, h *depth) []json.RawMessage {
	rules := []string{RuleResourcesList, RuleResourceTemplates, RuleResourceRead, RuleResourceMissing}
	if !isDeclared {
		for _, r := range rules {
			s.check(r, CheckNotApplicable, "resources not declared")
		}
		return nil
	}
	l := s.listAll(ctx, "resources/list", "resources")
	h.saw("resources", "resources/list", l.first, true)
	listed := s.gradeList(ctx, RuleResourcesList, "resources/list", "resources", l, needStrings("uri", "name"))
	h.cacheable = append(h.cacheable, l.raw...)
	tl := s.listAll(ctx, "resources/templates/list", "resourceTemplates")
	h.cacheable = append(h.cacheable, tl.raw...)
	if tl.pages == 0 && tl.first.is(jsonrpc.CodeMethodNotFound) {
		// Templates are optional: no revision asks a server that declares
		// resources to offer them.
		s.check(RuleResourceTemplates, CheckNotApplicable, "resources/templates/list answered -32601: no templates offered (optional)")
	} else {
		h.saw("resources", "resources/templates/list", tl.first, true)
		s.gradeList(ctx, RuleResourceTemplates, "resources/templates/list", "resourceTemplates", tl, templateProblems)
	}

	var uris []string
	for _, it := range l.items {
		if u, ok := str(members(it), "uri"); ok && u != "" && len(uris) < maxResourceReads {
			uris = append(uris, u)
		}
	}
	switch {
	case !listed:
		s.notEstablishedCheck(ctx, RuleResourceRead, "resources/list did not list")
	case len(uris) == 0:
		s.notEstablishedCheck(ctx, RuleResourceRead, "no resource listed")
	default:
		s.readListed(ctx, uris, h)
	}
	scheme := "file"
	if len(uris) > 0 {
		if i := strings.Index(uris[0], ":"); i > 0 {
			scheme = uris[0][:i]
		}
	}
	s.readMissing(ctx, scheme+absentResourcePath)
	return tl.items
}

// readListed reads listed resources; i-th of the listing is named by its
// index, never by its URI or content. A read the server refuses (but for
// -32601) is not graded: what a resource needs to be read (a service
// behind it, credentials, a browser) may be missing from where the scan
// runs, and the scan cannot tell that from a fault. It is named in an info
// finding with what the error says was missing.
func (s *scanner) readListed(ctx context.Context, uris []string, h *depth) {
	var problems, refused []string
	read := 0
	for i, u := range uris {
		a := s.ask(ctx, "resources/read", map[string]any{"uri": u})
		switch {
		case a.err != nil:
			s.unanswered(ctx, RuleResourceRead, fmt.Sprintf("resources/read of /resources/%d", i), a.err)
			return
		case a.is(jsonrpc.CodeMethodNotFound):
			problems = append(problems, fmt.Sprintf("/resources/%d: refused with -32601 (resources/read not served)", i))
		case a.result == nil:
			refused = append(refused, fmt.Sprintf("/resources/%d was refused with %d: it needs %s", i, *a.code, lacking(a.text)))
		default:
			read++
			h.cacheable = append(h.cacheable, a.result)
			for _, p := range readProblems(a.result, u) {
				problems = append(problems, fmt.Sprintf("/resources/%d: %s", i, p))
			}
		}
	}
	if len(refused) > 0 {
		s.findSev(RuleResourceRead, report.SeverityInfo, "", "/contents",
			"resources/read not graded where the environment may lack what a read needs: "+strings.Join(refused, "; "))
	}
	switch {
	case len(problems) > 0:
		s.find(RuleResourceRead, "", "/contents", "resources/read of a listed resource: "+strings.Join(problems, "; "))
		s.check(RuleResourceRead, CheckFail, "")
	case read == 0:
		s.check(RuleResourceRead, CheckNotEstablished, fmt.Sprintf("every listed resource read (%d) was refused: %s", len(refused), strings.Join(refused, "; ")))
	case len(refused) > 0:
		s.check(RuleResourceRead, CheckPass, fmt.Sprintf("%d listed resource(s) read; %d refused, not graded", read, len(refused)))
	default:
		s.check(RuleResourceRead, CheckPass, fmt.Sprintf("%d listed resource(s) read", read))
	}
}

// lacking says what an error's text (message and data) shows a refused
// read lacked, from words that name it; the text itself is never quoted.
func lacking(text string) string {
	t := strings.ToLower(text)
	for _, k := range []struct {
		words []string
		what  string
	}{
		{[]string{"econnrefused", "econnreset", "enotfound", "eai_again", "etimedout", "connection", "connect ", "fetch failed", "network", "socket", "unreachable", "timed out", "timeout"},
			"a service it connects to (the error names a failed connection)"},
		{[]string{"api key", "api_key", "apikey", "token", "unauthorized", "unauthenticated", "forbidden", "credential", "auth", "permission", "access denied", "login", "logged in"},
			"credentials (the error names authentication or permission)"},
		{[]string{"browser", "chrome", "chromium", "playwright", "puppeteer"},
			"a browser session (the error names a browser)"},
		{[]string{"not configured", "not set", "missing", "environment variable", "config", "required"},
			"configuration (the error names a missing setting)"},
		{[]string{"not found", "no such", "does not exist", "enoent"},
			"the resource it listed (the error says it is not found)"},
	} {
		for _, w := range k.words {
			if strings.Contains(t, w) {
				return k.what
			}
		}
	}
	return "something the error does not name"
}

// readProblems grades a resources/read result of uri: contents non-empty,
// each with a uri, exactly one of text and blob (blob base64), a string
// mimeType if any; one of them carries the URI asked for.
func readProblems(result json.RawMessage, uri string) []string {
	m := members(result)
	items, err := jsonrpc.SplitArray(m["contents"])
	switch {
	case m == nil || err != nil:
		return []string{"no contents array"}
	case len(items) == 0:
		return []string{"empty contents"}
	}
	var out []string
	echoed := false
	for j, it := range items {
		c := members(it)
		if c == nil {
			out = append(out, fmt.Sprintf("contents/%d is not an object", j))
			continue
		}
		if u, ok := str(c, "uri"); !ok || u == "" {
			out = append(out, fmt.Sprintf("contents/%d has no uri", j))
		} else if u == uri {
			echoed = true
		}
		_, hasText := c["text"]
		blob, hasBlob := c["blob"]
		var b string
		switch {
		case hasText == hasBlob:
			out = append(out, fmt.Sprintf("contents/%d has %s", j, map[bool]string{true: "both text and blob", false: "neither text nor blob"}[hasText]))
		case hasText:
			if _, ok := str(c, "text"); !ok {
				out = append(out, fmt.Sprintf("contents/%d text is not a string", j))
			}
		case json.Unmarshal(blob, &b) != nil:
			out = append(out, fmt.Sprintf("contents/%d blob is not a string", j))
		default:
			if _, err := base64.StdEncoding.DecodeString(b); err != nil {
				out = append(out, fmt.Sprintf("contents/%d blob is not base64", j))
			}
		}
		if _, present := c["mimeType"]; present {
			if _, ok := str(c, "mimeType"); !ok {
				out = append(out, fmt.Sprintf("contents/%d mimeType is not a string", j))
			}
		}
	}
	if !echoed && len(out) == 0 {
		out = append(out, "no contents item carries the URI that was read")
	}
	return out
}

// readMissing reads a URI no server serves. Before 2026-07-28 the spec asks
// (SHOULD) for -32002; 2026-07-28 requires -32602 and forbids -32002. A
// result, empty contents included, is never an answer to it.
func (s *scanner) readMissing(ctx context.Context, uri string) {
	a := s.ask(ctx, "resources/read", map[string]any{"uri": uri})
	modern := mcp.IsModern(s.sess.Revision)
	want := jsonrpc.CodeResourceNotFound
	sev := severityOf(RuleResourceMissing)
	if modern {
		want = jsonrpc.CodeInvalidParams
	} else {
		sev = "warn"
	}
	switch {
	case a.err != nil:
		s.unanswered(ctx, RuleResourceMissing, "resources/read of an absent URI", a.err)
	case a.result != nil:
		what := "a result"
		if p := readProblems(a.result, uri); len(p) == 1 && p[0] == "empty contents" {
			what = "empty contents"
		}
		s.findSev(RuleResourceMissing, sev, "", "/contents", fmt.Sprintf("a read of a URI the server does not have was answered with %s instead of error %d", what, want))
		s.check(RuleResourceMissing, CheckFail, "")
	case a.is(want):
		s.check(RuleResourceMissing, CheckPass, fmt.Sprintf("refused with %d", want))
	default:
		if !modern {
			// Only the code differs from the SHOULD; 2026-07-28 moves to
			// -32602, and clients accept either (info).
			sev = "info"
		}
		msg := fmt.Sprintf("a read of a URI the server does not have was refused with %d instead of %d", *a.code, want)
		if !modern && a.is(jsonrpc.CodeInvalidParams) {
			s.findSDK(tsResourceNotFound, sev, "", "/error/code", msg)
		} else {
			s.findSev(RuleResourceMissing, sev, "", "/error/code", msg)
		}
		s.check(RuleResourceMissing, CheckFail, "")
	}
}

// completionRef is something completion/complete can be asked about: a
// prompt argument or a resource template variable.
type completionRef struct {
	ref map[string]any
	arg string
}

// params is the completion/complete request for the empty value.
func (r *completionRef) params() map[string]any {
	return map[string]any{"ref": r.ref, "argument": map[string]any{"name": r.arg, "value": ""}}
}

// prompts grades prompts/list, prompts/get of up to maxPromptGets listed
// prompts with generated arguments, and prompts/get of an unknown prompt.
// It returns the first prompt argument, for the completion check.
func (s *scanner) prompts(ctx context.Context, isDeclared, completions bool, h *depth) *completionRef {
	if !isDeclared {
		for _, r := range []string{RulePromptsList, RulePromptGet, RulePromptUnknown, RulePromptMissingArgs} {
			s.check(r, CheckNotApplicable, "prompts not declared")
		}
		return nil
	}
	l := s.listAll(ctx, "prompts/list", "prompts")
	h.saw("prompts", "prompts/list", l.first, true)
	h.cacheable = append(h.cacheable, l.raw...)
	if !s.gradeList(ctx, RulePromptsList, "prompts/list", "prompts", l, promptProblems) {
		s.notEstablishedCheck(ctx, RulePromptGet, "prompts/list did not list")
		s.notEstablishedCheck(ctx, RulePromptMissingArgs, "prompts/list did not list")
	} else {
		ref := s.getPrompts(ctx, l.items, completions)
		s.missingArgs(ctx, l.items)
		return ref
	}
	s.unknownPrompt(ctx)
	return nil
}

// missingArgs asks for the first listed prompt that declares a required
// argument without any argument: it should be refused with -32602.
func (s *scanner) missingArgs(ctx context.Context, items []json.RawMessage) {
	for _, it := range items {
		var p struct {
			Name      string      `json:"name"`
			Arguments []promptArg `json:"arguments"`
		}
		if json.Unmarshal(it, &p) != nil || p.Name == "" || !slices.ContainsFunc(p.Arguments, func(a promptArg) bool { return a.Required }) {
			continue
		}
		a := s.ask(ctx, "prompts/get", map[string]any{"name": p.Name})
		s.wantRefusal(ctx, RulePromptMissingArgs, a, "prompts/get of "+p.Name+" without its required arguments", jsonrpc.CodeInvalidParams)
		return
	}
	s.check(RulePromptMissingArgs, CheckNotApplicable, "no listed prompt declares a required argument")
}

// promptProblems checks a listed prompt: a name, and arguments (if any) an
// array of objects with a name.
func promptProblems(raw json.RawMessage) []string {
	out := needStrings("name")(raw)
	if len(out) > 0 {
		return out
	}
	argsRaw, present := members(raw)["arguments"]
	if !present || string(argsRaw) == "null" {
		return nil
	}
	args, err := jsonrpc.SplitArray(argsRaw)
	if err != nil {
		return []string{"with arguments that are not an array"}
	}
	for _, a := range args {
		if p := needStrings("name")(a); len(p) > 0 {
			return []string{"with an argument without a string name"}
		}
	}
	return nil
}

// promptArg is one declared argument of a prompt.
type promptArg struct {
	Name     string `json:"name"`
	Required bool   `json:"required"`
}

func (s *scanner) getPrompts(ctx context.Context, items []json.RawMessage, completions bool) *completionRef {
	var ref *completionRef
	var problems []string
	got, skipped := 0, 0
	for _, it := range items {
		if got+skipped >= maxPromptGets {
			break
		}
		var p struct {
			Name      string      `json:"name"`
			Arguments []promptArg `json:"arguments"`
		}
		if json.Unmarshal(it, &p) != nil || p.Name == "" {
			continue
		}
		args := map[string]string{}
		for _, a := range p.Arguments {
			if ref == nil {
				ref = &completionRef{ref: map[string]any{"type": "ref/prompt", "name": p.Name}, arg: a.Name}
			}
			if !a.Required || len(args) >= maxPromptArgs {
				continue
			}
			args[a.Name] = s.argValue(ctx, completions, p.Name, a.Name, args)
		}
		params := map[string]any{"name": p.Name}
		if len(args) > 0 {
			params["arguments"] = args
		}
		a := s.ask(ctx, "prompts/get", params)
		switch {
		case a.err != nil:
			s.unanswered(ctx, RulePromptGet, "prompts/get of "+p.Name, a.err)
			s.unknownPrompt(ctx)
			return ref
		case a.result == nil:
			// Generated values may not be ones the prompt accepts: a
			// refusal of them is no evidence either way.
			skipped++
		default:
			got++
			for _, m := range messageProblems(a.result) {
				problems = append(problems, p.Name+": "+m)
			}
		}
	}
	switch {
	case len(problems) > 0:
		s.find(RulePromptGet, "", "/messages", "prompts/get: "+strings.Join(problems, "; "))
		s.check(RulePromptGet, CheckFail, "")
	case got == 0:
		s.check(RulePromptGet, CheckNotEstablished, fmt.Sprintf("%d prompt(s) refused the generated arguments", skipped))
	default:
		s.check(RulePromptGet, CheckPass, fmt.Sprintf("%d prompt(s) got, %d refused the generated arguments", got, skipped))
	}
	s.unknownPrompt(ctx)
	return ref
}

// argValue picks a value for a required prompt argument: the first value
// completion/complete offers when completions are declared, else a fixed word.
func (s *scanner) argValue(ctx context.Context, completions bool, prompt, arg string, earlier map[string]string) string {
	if !completions {
		return generatedArgValue
	}
	params := (&completionRef{ref: map[string]any{"type": "ref/prompt", "name": prompt}, arg: arg}).params()
	if len(earlier) > 0 {
		params["context"] = map[string]any{"arguments": earlier}
	}
	a := s.ask(ctx, "completion/complete", params)
	var r struct {
		Completion struct {
			Values []string `json:"values"`
		} `json:"completion"`
	}
	if a.result != nil && json.Unmarshal(a.result, &r) == nil && len(r.Completion.Values) > 0 {
		return r.Completion.Values[0]
	}
	return generatedArgValue
}

// messageProblems grades a prompts/get result: a non-empty messages array,
// each message with role user or assistant and a content object with a type.
func messageProblems(result json.RawMessage) []string {
	items, err := jsonrpc.SplitArray(members(result)["messages"])
	switch {
	case err != nil:
		return []string{"no messages array"}
	case len(items) == 0:
		return []string{"empty messages"}
	}
	var out []string
	for j, it := range items {
		m := members(it)
		if role, _ := str(m, "role"); role != "user" && role != "assistant" {
			out = append(out, fmt.Sprintf("messages/%d role is not user or assistant", j))
		}
		if t, ok := str(members(m["content"]), "type"); !ok || t == "" {
			out = append(out, fmt.Sprintf("messages/%d content has no type", j))
		}
	}
	return out
}

// unknownPrompt asks for a prompt none lists: -32602 (SHOULD).
func (s *scanner) unknownPrompt(ctx context.Context) {
	a := s.ask(ctx, "prompts/get", map[string]any{"name": absentPrompt})
	s.wantRefusal(ctx, RulePromptUnknown, a, "prompts/get of a prompt the server does not list", jsonrpc.CodeInvalidParams)
}

// wantResult grades the answer to a request that must succeed and reports
// whether it is a result. Otherwise the check is not established (method
// got no answer) or fails (what was refused).
func (s *scanner) wantResult(ctx context.Context, rule string, a answer, method, what string) bool {
	switch {
	case a.err != nil:
		s.unanswered(ctx, rule, method, a.err)
		return false
	case a.is(jsonrpc.CodeMethodNotFound):
		s.notServed(rule, method)
		return false
	case a.result == nil:
		s.find(rule, "", "/error/code", fmt.Sprintf("%s was refused with %d", what, *a.code))
		s.check(rule, CheckFail, "")
		return false
	}
	return true
}

// wantRefusal grades the answer to a request that must be refused with
// error want; what names the request in the finding.
func (s *scanner) wantRefusal(ctx context.Context, rule string, a answer, what string, want int) {
	switch {
	case a.err != nil:
		s.unanswered(ctx, rule, what, a.err)
	case a.is(want):
		s.check(rule, CheckPass, fmt.Sprintf("refused with %d", want))
	case a.result != nil:
		s.find(rule, "", "", what+" was answered with a result")
		s.check(rule, CheckFail, "")
	default:
		s.find(rule, "", "/error/code", fmt.Sprintf("%s was refused with %d instead of %d", what, *a.code, want))
		s.check(rule, CheckFail, "")
	}
}

// logLevel sets the level to info, then asks for a level that does not
// exist (-32602, SHOULD). 2026-07-28 has no logging/setLevel: the level
// travels in each request's _meta.
func (s *scanner) logLevel(ctx context.Context, isDeclared bool, h *depth) {
	switch {
	case !isDeclared:
		s.check(RuleLogLevel, CheckNotApplicable, "logging not declared")
		return
	case mcp.IsModern(s.sess.Revision):
		s.check(RuleLogLevel, CheckNotApplicable, "2026-07-28 has no logging/setLevel")
		return
	}
	a := s.ask(ctx, "logging/setLevel", map[string]any{"level": "info"})
	h.saw("logging", "logging/setLevel", a, true)
	if !s.wantResult(ctx, RuleLogLevel, a, "logging/setLevel", "logging/setLevel to a valid level") {
		return
	}
	const what = "logging/setLevel to a level that does not exist"
	bad := s.ask(ctx, "logging/setLevel", map[string]any{"level": "mcpdrill-no-such-level"})
	if bad.is(jsonrpc.CodeInternalError) {
		s.findSDK(tsSetLevelInternal, severityOf(RuleLogLevel), "", "/error/code",
			fmt.Sprintf("%s was refused with %d instead of %d", what, jsonrpc.CodeInternalError, jsonrpc.CodeInvalidParams))
		s.check(RuleLogLevel, CheckFail, "")
		return
	}
	s.wantRefusal(ctx, RuleLogLevel, bad, what, jsonrpc.CodeInvalidParams)
}

// maxCompletionValues is the most values a completion result may carry.
const maxCompletionValues = 100

// completion asks completion/complete about a prompt argument, else a
// resource template variable: a completion object whose values are at most
// 100 strings.
func (s *scanner) completion(ctx context.Context, isDeclared bool, ref *completionRef, h *depth) {
	if !isDeclared {
		s.check(RuleCompletion, CheckNotApplicable, "completions not declared")
		return
	}
	if ref == nil {
		s.notEstablishedCheck(ctx, RuleCompletion, "no prompt argument or resource template variable to complete")
		return
	}
	a := s.ask(ctx, "completion/complete", ref.params())
	h.saw("completions", "completion/complete", a, true)
	if !s.wantResult(ctx, RuleCompletion, a, "completion/complete", fmt.Sprintf("completion/complete of a listed %s", ref.ref["type"])) {
		return
	}
	if p := completionProblems(a.result); p != "" {
		s.find(RuleCompletion, "", "/completion", "completion/complete: "+p)
		s.check(RuleCompletion, CheckFail, "")
		return
	}
	s.check(RuleCompletion, CheckPass, fmt.Sprintf("%s completed", ref.ref["type"]))
}

// completionUnknown asks completion/complete about a prompt the server
// does not list: it should be refused with -32602.
func (s *scanner) completionUnknown(ctx context.Context, isDeclared bool) {
	if !isDeclared {
		s.check(RuleCompletionUnknown, CheckNotApplicable, "completions not declared")
		return
	}
	a := s.ask(ctx, "completion/complete", map[string]any{
		"ref":      map[string]any{"type": "ref/prompt", "name": absentPrompt},
		"argument": map[string]any{"name": "mcpdrill", "value": ""},
	})
	s.wantRefusal(ctx, RuleCompletionUnknown, a, "completion/complete for a prompt the server does not list", jsonrpc.CodeInvalidParams)
}

// templateRef names the first variable of the first listed resource template.
func templateRef(templates []json.RawMessage) *completionRef {
	for _, it := range templates {
		t, _ := str(members(it), "uriTemplate")
		if vars, ok := templateVars(t); ok && len(vars) > 0 {
			return &completionRef{ref: map[string]any{"type": "ref/resource", "uri": t}, arg: vars[0]}
		}
	}
	return nil
}

// completionProblems grades a completion/complete result.
func completionProblems(result json.RawMessage) string {
	c := members(members(result)["completion"])
	if c == nil {
		return "no completion object"
	}
	var values []json.RawMessage
	var err error
	if values, err = jsonrpc.SplitArray(c["values"]); err != nil {
		return "completion.values is not an array"
	}
	if len(values) > maxCompletionValues {
		return fmt.Sprintf("%d values, more than %d", len(values), maxCompletionValues)
	}
	if slices.ContainsFunc(values, func(v json.RawMessage) bool { var s string; return json.Unmarshal(v, &s) != nil }) {
		return "a completion value is not a string"
	}
	return ""
}
