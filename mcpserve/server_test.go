package mcpserve

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
	"github.com/mcpdrill/mcpdrill/internal/jsonschema"
	"github.com/mcpdrill/mcpdrill/internal/jsonvalue"
)

type listed struct {
	Tools []struct {
		Name         string          `json:"name"`
		Title        string          `json:"title"`
		Description  string          `json:"description"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
		Annotations  map[string]any  `json:"annotations"`
	} `json:"tools"`
	NextCursor string `json:"nextCursor"`
	TTL        *int   `json:"ttlMs"`
	ResultType string `json:"resultType"`
}

func list(t *testing.T, m *jsonrpc.Message) listed {
	t.Helper()
	if m.Error != nil {
		t.Fatalf("tools/list: %v", m.Error)
	}
	var l listed
	if err := json.Unmarshal(m.Result, &l); err != nil {
		t.Fatal(err)
	}
	return l
}

// TestLegacyRevisions: initialize negotiates each legacy revision (an
// unknown one gets the newest); outputSchema, title and annotations appear
// from the revision that defines them.
func TestLegacyRevisions(t *testing.T) {
	for _, tc := range []struct {
		asked, got       string
		output, annotate bool
	}{
		{"2025-11-25", "2025-11-25", true, true},
		{"2025-06-18", "2025-06-18", true, true},
		{"2025-03-26", "2025-03-26", false, true},
		{"2024-11-05", "2024-11-05", false, false},
		{"2099-01-01", "2025-11-25", true, true},
	} {
		s := start(t, Options{Targets: &Targets{Home: t.TempDir()}})
		m := s.call("initialize", map[string]any{"protocolVersion": tc.asked, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}})
		var init struct {
			ProtocolVersion string         `json:"protocolVersion"`
			ServerInfo      map[string]any `json:"serverInfo"`
			Instructions    string         `json:"instructions"`
		}
		if m.Error != nil || json.Unmarshal(m.Result, &init) != nil || init.ProtocolVersion != tc.got {
			t.Fatalf("%s: %s %v", tc.asked, m.Result, m.Error)
		}
		l := list(t, s.call("tools/list", nil))
		var names []string
		for _, tool := range l.Tools {
			names = append(names, tool.Name)
			if (tool.OutputSchema != nil) != tc.output || (tool.Title != "") != tc.output || (tool.Annotations != nil) != tc.annotate {
				t.Errorf("%s: tool %s: outputSchema %v, title %q, annotations %v", tc.asked, tool.Name, tool.OutputSchema != nil, tool.Title, tool.Annotations)
			}
		}
		if !slices.Equal(names, []string{"drift", "fingerprint", "rules", "scan", "servers"}) {
			t.Errorf("%s: tools %v", tc.asked, names)
		}
		r := s.tool("rules", map[string]any{"id": "mcp-out-vacuous"})
		if r.IsError || (r.Structured != nil) != tc.output {
			t.Errorf("%s: rules: %+v", tc.asked, r)
		}
	}
}

// TestModernRevision: a request whose _meta names 2026-07-28 is served
// statelessly; discover lists every revision; another modern revision is
// refused with -32022 and the supported list; a modern request without
// _meta is -32602.
func TestModernRevision(t *testing.T) {
	s := start(t, Options{Targets: &Targets{Home: t.TempDir()}})
	meta := func(rev string) map[string]any {
		return map[string]any{"_meta": map[string]any{metaVersion: rev, metaCapabilities: map[string]any{}}}
	}
	m := s.call("server/discover", meta(revModern))
	var d struct {
		Supported  []string       `json:"supportedVersions"`
		ResultType string         `json:"resultType"`
		Meta       map[string]any `json:"_meta"`
	}
	if m.Error != nil || json.Unmarshal(m.Result, &d) != nil || !slices.Equal(d.Supported, allRevisions) || d.ResultType != "complete" || d.Meta[metaServerInfo] == nil {
		t.Fatalf("discover: %s %v", m.Result, m.Error)
	}
	l := list(t, s.call("tools/list", meta(revModern)))
	if len(l.Tools) != 5 || l.TTL == nil || l.ResultType != "complete" {
		t.Errorf("modern tools/list: %+v", l)
	}
	if m := s.call("tools/list", meta("2027-01-01")); m.Error == nil || m.Error.Code != jsonrpc.CodeUnsupportedProtocolVersion || !strings.Contains(string(m.Error.Data), revModern) {
		t.Errorf("unsupported revision: %s %v", m.Result, m.Error)
	}
	if m := s.call("tools/list", map[string]any{}); m.Error == nil || m.Error.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("no _meta: %v", m.Error)
	}
	if m := s.call("tools/list", map[string]any{"cursor": "x", "_meta": meta(revModern)["_meta"]}); m.Error == nil || m.Error.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("invalid cursor: %v", m.Error)
	}
}

// TestSchemas: every schema compiles, and the output schemas are strict
// objects with required members (what makes them enforceable).
func TestSchemas(t *testing.T) {
	tools, err := catalogue()
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools {
		var out map[string]any
		if err := json.Unmarshal(tool.output, &out); err != nil {
			t.Fatal(err)
		}
		if out["type"] != "object" || out["additionalProperties"] != false || len(out["required"].([]any)) == 0 {
			t.Errorf("%s: output schema %s", tool.name, tool.output)
		}
		if !strings.Contains(tool.description, "untrusted") && tool.name != "rules" && tool.name != "servers" {
			t.Errorf("%s: the description does not say results carry untrusted text", tool.name)
		}
	}
}

// TestToolsAgainstTheTestbed: scan, fingerprint and drift of a configured
// stdio server (the testbed) give results that match their outputSchema.
func TestToolsAgainstTheTestbed(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers")
	}
	h := home(t, map[string]any{"tb": child("testbed", map[string]string{"MCPSERVE_PROFILE": "good"})})
	s := start(t, Options{Targets: &Targets{Home: h}})
	s.init("2025-06-18")
	tools, _ := catalogue()
	schema := func(name string) *jsonschema.Schema {
		i := slices.IndexFunc(tools, func(x *tool) bool { return x.name == name })
		return tools[i].out
	}
	check := func(name string, r toolResult) map[string]any {
		t.Helper()
		if r.IsError {
			t.Fatalf("%s: %s", name, r.text())
		}
		v, err := jsonvalue.DecodeJSON(r.Structured)
		if err != nil {
			t.Fatal(err)
		}
		if err := schema(name).Validate(v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if r.text() != string(r.Structured) {
			t.Errorf("%s: the text block is not the structured result's JSON", name)
		}
		return v.(map[string]any)
	}
	srv := check("servers", s.tool("servers", map[string]any{}))
	if srv["count"].(json.Number).String() != "1" {
		t.Errorf("servers: %v", srv)
	}
	sc := check("scan", s.tool("scan", map[string]any{"target": "tb"}))
	if sc["established"] != true || sc["counts"].(map[string]any)["error"].(json.Number).String() != "0" {
		t.Errorf("scan: %v", sc)
	}
	fp := check("fingerprint", s.tool("fingerprint", map[string]any{"target": "tb"}))
	if !strings.HasPrefix(fp["fingerprint"].(string), "sha256:") || fp["complete"] != true {
		t.Errorf("fingerprint: %v", fp)
	}
	dr := check("drift", s.tool("drift", map[string]any{"target": "tb", "manifest": map[string]any{"tools": []any{}}}))
	if dr["compared"] != true || len(dr["findings"].([]any)) == 0 {
		t.Errorf("drift against an empty manifest: %v", dr)
	}
	if r := s.tool("drift", map[string]any{"target": "tb", "manifest": map[string]any{"nothing": 1}}); !r.IsError || !strings.Contains(r.text(), "manifest") {
		t.Errorf("drift with a bad manifest: %+v", r)
	}
	all := check("rules", s.tool("rules", map[string]any{}))
	if all["count"].(json.Number).String() != "1" {
		t.Errorf("rules: %v", all)
	}
	if r := s.tool("rules", map[string]any{"id": "NOPE"}); !r.IsError {
		t.Errorf("unknown rule: %+v", r)
	}
}
