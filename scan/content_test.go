package scan

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/mcp"
	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
	"github.com/mcpdrill/mcpdrill/internal/testbed"
)

// contentRules are the read-only depth's checks.
var contentRules = []string{RuleCapHonesty, RuleCompletion, RuleCompletionUnknown, RuleContentCacheHints, RuleLogLevel, RulePromptGet, RulePromptMissingArgs,
	RulePromptUnknown, RulePromptsList, RuleResourceMissing, RuleResourceRead, RuleResourceTemplates, RuleResourcesList}

// TestReadProblems grades resources/read results of "u://a".
func TestReadProblems(t *testing.T) {
	for _, tc := range []struct{ result, want string }{
		{`{"contents":[{"uri":"u://a","text":"x","mimeType":"text/plain"}]}`, ""},
		{`{"contents":[{"uri":"u://a","blob":"aGk="}]}`, ""},
		{`{"contents":[]}`, "empty contents"},
		{`{}`, "no contents array"},
		{`{"contents":[{"uri":"u://a","text":"x","blob":"aGk="}]}`, "contents/0 has both text and blob"},
		{`{"contents":[{"uri":"u://a"}]}`, "contents/0 has neither text nor blob"},
		{`{"contents":[{"uri":"u://a","blob":"not base64!"}]}`, "contents/0 blob is not base64"},
		{`{"contents":[{"uri":"u://a","text":7}]}`, "contents/0 text is not a string"},
		{`{"contents":[{"text":"x"}]}`, "contents/0 has no uri"},
		{`{"contents":[{"uri":"u://a","text":"x","mimeType":1}]}`, "contents/0 mimeType is not a string"},
		{`{"contents":[{"uri":"u://b","text":"x"}]}`, "no contents item carries the URI that was read"},
		{`{"contents":["x"]}`, "contents/0 is not an object"},
	} {
		got := strings.Join(readProblems(json.RawMessage(tc.result), "u://a"), "; ")
		if got != tc.want {
			t.Errorf("%s: %q, want %q", tc.result, got, tc.want)
		}
	}
}

// TestMessageProblems grades prompts/get results.
func TestMessageProblems(t *testing.T) {
	for _, tc := range []struct{ result, want string }{
		{`{"messages":[{"role":"user","content":{"type":"text","text":"x"}},{"role":"assistant","content":{"type":"image"}}]}`, ""},
		{`{"messages":[]}`, "empty messages"},
		{`{"description":"x"}`, "no messages array"},
		{`{"messages":[{"role":"system","content":{"type":"text"}}]}`, "messages/0 role is not user or assistant"},
		{`{"messages":[{"role":"user","content":"text"}]}`, "messages/0 content has no type"},
		{`{"messages":[{"content":{}}]}`, "messages/0 role is not user or assistant; messages/0 content has no type"},
	} {
		if got := strings.Join(messageProblems(json.RawMessage(tc.result)), "; "); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.result, got, tc.want)
		}
	}
}

// TestListItemProblems grades listed resources, templates and prompts.
func TestListItemProblems(t *testing.T) {
	for _, tc := range []struct {
		need  func(json.RawMessage) []string
		items []string
		want  string
	}{
		{needStrings("uri", "name"), []string{`{"uri":"u://a","name":"a"}`}, ""},
		{needStrings("uri", "name"), []string{`{"uri":"u://a"}`, `{"uri":"u://b","name":"b"}`, `{"name":""}`},
			"2 of 3 resources without a string name (first /resources/0); 1 of 3 resources without a string uri (first /resources/2)"},
		{needStrings("uri", "name"), []string{`7`}, "1 of 1 resources are not objects (first /resources/0)"},
		{templateProblems, []string{`{"name":"t","uriTemplate":"u://x/{id}{?q,r*}"}`}, ""},
		{templateProblems, []string{`{"name":"t","uriTemplate":"u://x/{id"}`}, "1 of 1 resources with a uriTemplate that is not an RFC 6570 template (first /resources/0)"},
		{templateProblems, []string{`{"name":"t","uriTemplate":"u://x/{}"}`}, "1 of 1 resources with a uriTemplate that is not an RFC 6570 template (first /resources/0)"},
		{promptProblems, []string{`{"name":"p","arguments":[{"name":"a","required":true}]}`, `{"name":"q"}`}, ""},
		{promptProblems, []string{`{"name":"p","arguments":{"a":1}}`}, "1 of 1 resources with arguments that are not an array (first /resources/0)"},
		{promptProblems, []string{`{"name":"p","arguments":[{"required":true}]}`}, "1 of 1 resources with an argument without a string name (first /resources/0)"},
	} {
		items := make([]json.RawMessage, len(tc.items))
		for i, it := range tc.items {
			items[i] = json.RawMessage(it)
		}
		if got := strings.Join(itemProblems("resources", items, tc.need), "; "); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.items, got, tc.want)
		}
	}
}

// TestCompletionProblems grades completion/complete results.
func TestCompletionProblems(t *testing.T) {
	many := `{"completion":{"values":[` + strings.TrimSuffix(strings.Repeat(`"v",`, 101), ",") + `]}}`
	for _, tc := range []struct{ result, want string }{
		{`{"completion":{"values":["a","b"],"total":2,"hasMore":false}}`, ""},
		{`{"completion":{"values":[]}}`, ""},
		{`{}`, "no completion object"},
		{`{"completion":{"values":"a"}}`, "completion.values is not an array"},
		{`{"completion":{"values":[1]}}`, "a completion value is not a string"},
		{many, "101 values, more than 100"},
	} {
		if got := completionProblems(json.RawMessage(tc.result)); got != tc.want {
			t.Errorf("%.60s: %q, want %q", tc.result, got, tc.want)
		}
	}
}

// TestContentCacheHints grades the cache hints of resources and prompts
// results from 2026-07-28; an older revision or no declared capability is
// not applicable.
func TestContentCacheHints(t *testing.T) {
	ok := json.RawMessage(`{"resources":[],"ttlMs":0,"cacheScope":"private"}`)
	for _, tc := range []struct {
		rev      string
		declared bool
		results  []json.RawMessage
		want     CheckStatus
		finding  string
	}{
		{Rev20260728, true, []json.RawMessage{ok}, CheckPass, ""},
		{Rev20260728, true, []json.RawMessage{ok, json.RawMessage(`{"prompts":[],"ttlMs":-1,"cacheScope":"shared"}`), json.RawMessage(`{"contents":[]}`)}, CheckFail,
			"resources and prompts results: 2 of 3 page(s) without a valid ttlMs; 1 without cacheScope; 1 with a cacheScope other than public/private"},
		{Rev20260728, true, nil, CheckNotEstablished, ""},
		{Rev20260728, false, nil, CheckNotApplicable, ""},
		{Rev20251125, true, []json.RawMessage{json.RawMessage(`{}`)}, CheckNotApplicable, ""},
	} {
		s := &scanner{sess: mcp.Session{Revision: tc.rev}, rep: &Report{}}
		s.contentCacheHints(context.Background(), tc.declared, tc.results)
		if len(s.rep.Conformance) != 1 || s.rep.Conformance[0].Status != tc.want {
			t.Errorf("%s %v: %+v, want %s", tc.rev, tc.results, s.rep.Conformance, tc.want)
		}
		var msg string
		if len(s.rep.Findings) > 0 {
			msg = s.rep.Findings[0].Message
		}
		if msg != tc.finding {
			t.Errorf("%s %v: finding %q, want %q", tc.rev, tc.results, msg, tc.finding)
		}
	}
}

// TestContentProfiles scans the testbed's content profiles on both eras:
// the conformant one passes every read-only check, the sloppy one fails
// each of its mistakes and nothing else; a capability it did not declare is
// never failed.
func TestContentProfiles(t *testing.T) {
	pass, fail, na := CheckPass, CheckFail, CheckNotApplicable
	all := func(st CheckStatus) map[string]CheckStatus {
		m := map[string]CheckStatus{}
		for _, r := range contentRules {
			m[r] = st
		}
		return m
	}
	with := func(m map[string]CheckStatus, kv ...any) map[string]CheckStatus {
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1].(CheckStatus)
		}
		return m
	}
	tests := []struct {
		profile, rev string
		want         map[string]CheckStatus
		findings     []string // rule:severity, sorted as the report sorts them
	}{
		{"content", Rev20251125, with(all(pass), RuleContentCacheHints, na), nil},
		{"content", Rev20260728, with(all(pass), RuleLogLevel, na), nil},
		// Logging declared but refused (-32601) fails the setLevel check
		// too, but the one finding of it is the honesty check's.
		{"sloppy-content", Rev20251125,
			with(all(pass), RuleCapHonesty, fail, RuleCompletion, na, RuleCompletionUnknown, na, RuleContentCacheHints, na, RuleLogLevel, fail, RulePromptGet, fail,
				RulePromptMissingArgs, fail, RuleResourceMissing, fail, RuleResourceRead, fail),
			[]string{RuleCapHonesty + ":error", RulePromptGet + ":error", RuleResourceRead + ":error", RulePromptMissingArgs + ":warn", RuleResourceMissing + ":warn"}},
		{"sloppy-content", Rev20260728,
			with(all(pass), RuleCapHonesty, fail, RuleCompletion, na, RuleCompletionUnknown, na, RuleLogLevel, na, RulePromptGet, fail, RulePromptMissingArgs, fail,
				RuleResourceMissing, fail, RuleResourceRead, fail),
			[]string{RuleCapHonesty + ":error", RulePromptGet + ":error", RuleResourceMissing + ":error", RuleResourceRead + ":error", RulePromptMissingArgs + ":warn"}},
		{"good", Rev20251125, with(all(na), RuleCapHonesty, pass), nil},
		// Templates refused with -32601 (optional), a listed resource whose
		// read needs a backend (not graded, an info note), an empty
		// prompts/list with prompts undeclared (not served): nothing fails.
		{"typical", Rev20251125,
			with(all(na), RuleCapHonesty, pass, RuleResourcesList, pass, RuleResourceRead, pass, RuleResourceMissing, pass),
			[]string{RuleResourceRead + ":info"}},
		{"typical", Rev20241105,
			with(all(na), RuleCapHonesty, pass, RuleResourcesList, pass, RuleResourceRead, pass, RuleResourceMissing, pass),
			[]string{RuleResourceRead + ":info"}},
	}
	for _, tc := range tests {
		t.Run(tc.profile+"/"+tc.rev, func(t *testing.T) {
			t.Parallel()
			r := runScan(t, stdioConfig(t, testbed.Options{Profile: tc.profile, Revisions: []string{tc.rev}}))
			got := map[string]CheckStatus{}
			for _, c := range r.Conformance {
				if slices.Contains(contentRules, c.ID) {
					got[c.ID] = c.Status
				}
			}
			for _, id := range contentRules {
				if got[id] != tc.want[id] {
					t.Errorf("%s: %s, want %s", id, got[id], tc.want[id])
				}
			}
			var findings []string
			for _, f := range r.Findings {
				if slices.Contains(contentRules, f.Rule) {
					findings = append(findings, f.Rule+":"+string(f.Severity))
				}
			}
			if !slices.Equal(findings, tc.findings) {
				t.Errorf("findings %v, want %v", findings, tc.findings)
			}
		})
	}
}

// TestContentUndeclaredServed: completions served but not declared fail
// the honesty check, named as such; the sloppy profile's finding also names
// logging, declared but refused.
func TestContentUndeclaredServed(t *testing.T) {
	r := runScan(t, httpConfig(t, testbed.Options{Profile: "sloppy-content", Revisions: []string{Rev20251125}}, testbed.PathMCP))
	var msg string
	for _, f := range r.Findings {
		if f.Rule == RuleCapHonesty {
			msg = f.Message
		}
	}
	want := "declared but answered -32601: logging (logging/setLevel); not declared but served: completions (completion/complete)"
	if msg != want {
		t.Errorf("honesty finding %q, want %q", msg, want)
	}
}

// TestContentCutShort: with the scan's context over, every read-only check
// is not established (reason canceled), never failed.
func TestContentCutShort(t *testing.T) {
	cfg := httpConfig(t, testbed.Options{Profile: "content", Revisions: []string{Rev20251125}}, testbed.PathMCP)
	c, err := mcp.Connect(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s := &scanner{c: c, sess: c.Session(), rep: &Report{}}
	s.readDepth(ctx)
	for _, ch := range s.rep.Conformance {
		if ch.ID == RuleContentCacheHints && ch.Status == CheckNotApplicable {
			continue // 2025-11-25 has no cache hints
		}
		if ch.Status != CheckNotEstablished || ch.Reason != ReasonCanceled {
			t.Errorf("%s: %s (%q), want not_established, canceled", ch.ID, ch.Status, ch.Reason)
		}
	}
	if len(s.rep.Findings) != 0 {
		t.Errorf("findings on a cut-short scan: %+v", s.rep.Findings)
	}
}

// TestNPMEverythingContent: the read-only checks on the pinned
// server-everything over stdio, and their findings, exactly.
func TestNPMEverythingContent(t *testing.T) {
	if testing.Short() {
		t.Skip("npm servers start Node.js")
	}
	cmd := testutil.NPMServer(t, "MCPDRILL_NPM_EVERYTHING")
	r := runScan(t, mcp.Config{Command: cmd, RequestTimeout: testutil.Hang})
	goldenRules(t, "npm-everything-content", r, contentRules)
	goldenRules(t, "npm-everything-transport-stdio", r, transportRules)
}

// transportRules are the checks of transport.go.
var transportRules = append([]string{RulePing, RuleNotificationSilent, RuleCancelUnknown, RuleInvalidCursor, RuleDiscover, RuleHTTPContentType}, httpRules...)

// goldenRules compares the checks and findings of rules in r with the
// golden file name.
func goldenRules(t *testing.T, name string, r *Report, rules []string) {
	t.Helper()
	type entry struct {
		Checks   []Check  `json:"checks"`
		Findings []string `json:"findings"`
	}
	var e entry
	for _, c := range r.Conformance {
		if slices.Contains(rules, c.ID) {
			e.Checks = append(e.Checks, c)
		}
	}
	for _, f := range r.Findings {
		if slices.Contains(rules, f.Rule) {
			e.Findings = append(e.Findings, f.Rule+" "+string(f.Severity)+" "+f.Pointer+": "+f.Message)
		}
	}
	b, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, name, append(b, '\n'))
}

// TestLacking: what a refused read's error names as missing, from its
// words; the text itself is never returned, and a huge or hostile one is
// only searched.
func TestLacking(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"connect ECONNREFUSED 127.0.0.1:9200", "a service it connects to (the error names a failed connection)"},
		{`MCP error -32603: getaddrinfo ENOTFOUND cluster.local {"uri":"x"}`, "a service it connects to (the error names a failed connection)"},
		{"Invalid API key", "credentials (the error names authentication or permission)"},
		{"401 Unauthorized", "credentials (the error names authentication or permission)"},
		{"Browser is not running; call browser_launch first", "a browser session (the error names a browser)"},
		{"GITHUB_OWNER environment variable is not set", "configuration (the error names a missing setting)"},
		{"Resource not found", "the resource it listed (the error says it is not found)"},
		{"boom", "something the error does not name"},
		{"", "something the error does not name"},
		{strings.Repeat("\x1b[2J", 1<<20) + "timeout", "a service it connects to (the error names a failed connection)"},
	} {
		if got := lacking(tc.text); got != tc.want {
			t.Errorf("%.60q: %q, want %q", tc.text, got, tc.want)
		}
	}
}
