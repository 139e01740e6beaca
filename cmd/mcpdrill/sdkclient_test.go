package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpdrill/mcpdrill/internal/jsonvalue"
	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
)

// sdkClientRun is what testdata/npm/sdk-client.mjs, a client on the
// official TypeScript SDK, printed.
type sdkClientRun struct {
	List struct {
		Tools []struct {
			Name         string          `json:"name"`
			Description  string          `json:"description"`
			InputSchema  json.RawMessage `json:"inputSchema"`
			OutputSchema json.RawMessage `json:"outputSchema"`
		} `json:"tools"`
	} `json:"list"`
	ListError string `json:"listError"`
	Call      struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		StructuredContent any `json:"structuredContent"`
	} `json:"call"`
	CallError    string `json:"callError"`
	Checked      bool   `json:"checked"`
	CheckedError string `json:"checkedError"`
}

// sdkClient runs the TypeScript SDK client against the stdio server argv,
// calling tool with args, with env added to the environment; it skips when the pinned SDK is not installed
// (fails under MCPDRILL_REQUIRE_NPM, as in CI).
func sdkClient(t *testing.T, tool, args string, env []string, argv ...string) sdkClientRun {
	t.Helper()
	dir := filepath.Join(testutil.ModuleRoot(t), "testdata", "npm")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		if os.Getenv("MCPDRILL_REQUIRE_NPM") != "" {
			t.Fatal("the TypeScript SDK is not installed (run `make npm`)")
		}
		t.Skip("the TypeScript SDK is not installed (run `make npm`)")
	}
	if _, err := exec.LookPath("node"); err != nil {
		if os.Getenv("MCPDRILL_REQUIRE_NPM") != "" {
			t.Fatal("node not found")
		}
		t.Skip("node not found")
	}
	cmd := exec.Command("node", append([]string{"sdk-client.mjs"}, argv...)...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "MCPDRILL_TOOL="+tool, "MCPDRILL_ARGS="+args), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, stderr.String())
	}
	var r sdkClientRun
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return r
}

// typeSkeleton is v with every leaf replaced by its JSON type.
func typeSkeleton(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = typeSkeleton(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = typeSkeleton(e)
		}
		return out
	}
	return jsonvalue.Type(v)
}

func canonical(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	if raw == nil {
		return ""
	}
	b, err := jsonvalue.CanonicalJSON(raw)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPayloadFaultsStayInsideTheProtocol: through `wrap --faults corrupt`,
// the official TypeScript SDK client still accepts the tools/list result
// (same names and schemas, descriptions garbled at their own length), and
// a tools/call result is well-typed garbage: the protocol schema accepts
// it, its structuredContent has the direct result's JSON types with other
// values, and only the tool's outputSchema catches it. schema-break leaves
// the listing alone and breaks the result's types, not the protocol.
func TestPayloadFaultsStayInsideTheProtocol(t *testing.T) {
	if testing.Short() {
		t.Skip("runs node and the binary")
	}
	bin := testutil.Binary(t)
	const tool, args = "add", `{"a":1,"b":2}`
	direct := sdkClient(t, tool, args, nil, bin, "testbed")
	if direct.ListError != "" || direct.CallError != "" || !direct.Checked || len(direct.List.Tools) == 0 {
		t.Fatalf("direct: %+v", direct)
	}
	for _, fault := range []string{"corrupt", "schema-break"} {
		t.Run(fault, func(t *testing.T) {
			got := sdkClient(t, tool, args, nil, bin, "wrap", "--quiet", "--seed", "1", "--faults", fault, "--", bin, "testbed")
			if got.ListError != "" || got.CallError != "" {
				t.Fatalf("the SDK refused: list %q, call %q", got.ListError, got.CallError)
			}
			if len(got.List.Tools) != len(direct.List.Tools) {
				t.Fatalf("%d tools, want %d", len(got.List.Tools), len(direct.List.Tools))
			}
			for i, d := range direct.List.Tools {
				g := got.List.Tools[i]
				if g.Name != d.Name || canonical(t, g.OutputSchema) != canonical(t, d.OutputSchema) {
					t.Errorf("tool %d: %s %s, want %s %s", i, g.Name, g.OutputSchema, d.Name, d.OutputSchema)
				}
				if fault == "schema-break" {
					if g.Description != d.Description || canonical(t, g.InputSchema) != canonical(t, d.InputSchema) {
						t.Errorf("schema-break changed tool %s: %q %s", d.Name, g.Description, g.InputSchema)
					}
					continue
				}
				if g.Description == d.Description || utf8.RuneCountInString(g.Description) != utf8.RuneCountInString(d.Description) {
					t.Errorf("tool %s: description %q, from %q", d.Name, g.Description, d.Description)
				}
				if withoutText(t, g.InputSchema) != withoutText(t, d.InputSchema) {
					t.Errorf("tool %s: input schema %s, want %s but for its descriptions and titles", d.Name, g.InputSchema, d.InputSchema)
				}
			}
			gs, ds := typeSkeleton(got.Call.StructuredContent), typeSkeleton(direct.Call.StructuredContent)
			sameTypes := canonicalValue(gs) == canonicalValue(ds)
			if fault == "corrupt" && !sameTypes {
				t.Errorf("corrupt changed types: %v, want %v", got.Call.StructuredContent, direct.Call.StructuredContent)
			}
			if fault == "schema-break" && sameTypes {
				t.Errorf("schema-break kept every type: %v", got.Call.StructuredContent)
			}
			if canonicalValue(got.Call.StructuredContent) == canonicalValue(direct.Call.StructuredContent) {
				t.Errorf("%s left the result as it was: %v", fault, got.Call.StructuredContent)
			}
			if got.Checked || !strings.Contains(got.CheckedError, "output schema") {
				t.Errorf("the outputSchema did not catch it: checked %v, %q", got.Checked, got.CheckedError)
			}
		})
	}
}

func canonicalValue(v any) string { return string(jsonvalue.Canonical(v)) }

// withoutText is a schema's canonical JSON with its description and title
// strings removed.
func withoutText(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	v, err := jsonvalue.DecodeJSON(raw)
	if err != nil {
		t.Fatal(err)
	}
	var strip func(any)
	strip = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if _, isText := e.(string); isText && (k == "description" || k == "title") {
					delete(x, k)
					continue
				}
				strip(e)
			}
		case []any:
			for _, e := range x {
				strip(e)
			}
		}
	}
	strip(v)
	return canonicalValue(v)
}

// TestMCPServerWithTheTypeScriptSDK: the official TypeScript SDK client
// lists `mcpdrill mcp`'s tools and accepts each result against the tool's
// outputSchema (its own validator, a second opinion on the schemas).
func TestMCPServerWithTheTypeScriptSDK(t *testing.T) {
	if testing.Short() {
		t.Skip("runs node and the binary")
	}
	bin := testutil.Binary(t)
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".cursor"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := `{"mcpServers":{"tb":{"command":` + strconv.Quote(bin) + `,"args":["testbed"]}}}`
	if err := os.WriteFile(filepath.Join(home, ".cursor", "mcp.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ tool, args string }{
		{"servers", `{}`}, {"rules", `{"id":"MCP-OUT-VACUOUS"}`}, {"scan", `{"target":"tb"}`},
		{"fingerprint", `{"target":"tb"}`}, {"drift", `{"target":"tb","manifest":{"tools":[]}}`},
	} {
		r := sdkClient(t, tc.tool, tc.args, []string{"HOME=" + home}, bin, "mcp")
		if r.ListError != "" || len(r.List.Tools) != 5 || r.CallError != "" || !r.Checked {
			t.Errorf("%s: list %q (%d tools), call %q, checked %v %q", tc.tool, r.ListError, len(r.List.Tools), r.CallError, r.Checked, r.CheckedError)
		}
	}
}
