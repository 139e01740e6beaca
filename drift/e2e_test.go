package drift

import (
	"context"
	"fmt"
	"maps"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/mcp"
	"github.com/mcpdrill/mcpdrill/internal/mcptest/sdkserver"
	"github.com/mcpdrill/mcpdrill/internal/mcptest/testbedserver"
	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
	"github.com/mcpdrill/mcpdrill/internal/testbed"
	"github.com/mcpdrill/mcpdrill/report"
)

// serveTestbed serves a testbed profile on a loopback port.
func serveTestbed(t *testing.T, o testbed.Options) string {
	t.Helper()
	return testbedserver.HTTP(t, o).URL + testbed.PathMCP
}

func testConfig(url string) mcp.Config {
	return mcp.Config{URL: url, RequestTimeout: testutil.Hang, MaxListPages: 50}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Hang)
	t.Cleanup(cancel)
	return ctx
}

func findingLines(fs []report.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, fmt.Sprintf("%s %s %s %s %s", f.Severity, f.Rule, f.Tool, f.Pointer, KindOf(f.Change)))
	}
	slices.Sort(out)
	return out
}

func assertFindings(t *testing.T, got []report.Finding, want []string) {
	t.Helper()
	g := findingLines(got)
	slices.Sort(want)
	if strings.Join(g, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n got:\n  %s\nwant:\n  %s", strings.Join(g, "\n  "), strings.Join(want, "\n  "))
	}
	for _, f := range got {
		if f.Change != "" && !strings.Contains(f.Evidence, "BRK-") {
			t.Errorf("%s has no grading rule: %+v", f.Rule, f)
		}
	}
}

// The testbed's drifting profile plants six changes between tool sets 1 and
// 2: a renamed parameter, a removed enum value, a new required property, a
// changed description, a removed tool and an added tool. Every one must be
// reported with its grade, and nothing else.
var wantDriftingV1toV2 = []string{
	"error MCP-DRIFT-SCHEMA search /inputSchema/properties/q CHG-PROPERTY-RENAMED",
	"error MCP-DRIFT-SCHEMA weather /inputSchema/properties/units/enum CHG-ENUM-VALUE-REMOVED",
	"info MCP-DRIFT-SCHEMA-COMPATIBLE weather /outputSchema/properties/units/enum CHG-ENUM-VALUE-REMOVED",
	"error MCP-DRIFT-SCHEMA get_user /inputSchema/properties/tenant CHG-PROPERTY-ADDED",
	"warn MCP-DRIFT-SCHEMA-COMPATIBLE echo /description CHG-DESCRIPTION-CHANGED",
	"error MCP-DRIFT-TOOL-MISSING export_csv  CHG-TOOL-REMOVED",
	"warn MCP-DRIFT-TOOL-UNDECLARED summarize  CHG-TOOL-ADDED",
}

func TestEndToEndDriftingTestbed(t *testing.T) {
	ctx := testCtx(t)
	v1 := serveTestbed(t, testbed.Options{Profile: "drifting", Version: "1", DriftAfter: -1})
	v2 := serveTestbed(t, testbed.Options{Profile: "drifting", Version: "2", DriftAfter: -1})
	spec := Spec{Canaries: []Canary{{Name: "search", Tool: "search", Args: map[string]any{"query": "widget"}}}}

	base, _, err := RunCapture(ctx, spec, testConfig(v1), CaptureOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The capture, written and read back, is the manifest.
	state, err := LoadState(mustJSON(t, base))
	if err != nil {
		t.Fatal(err)
	}
	obs, err := Observe(ctx, testConfig(v2))
	if err != nil {
		t.Fatal(err)
	}
	if obs.Session.Era != mcp.EraModern || len(obs.SessionFindings()) != 0 {
		t.Errorf("session %+v findings %+v", obs.Session, obs.SessionFindings())
	}
	fs := Compare(Side{Tools: state.ToolSet()}, Side{Tools: obs.Tools})
	assertFindings(t, fs, wantDriftingV1toV2)

	// drift check live: schema findings plus the search canary, whose
	// argument was renamed and now fails.
	cur, _, err := RunCapture(ctx, spec, testConfig(v2), CaptureOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := append(slices.Clone(wantDriftingV1toV2), "error MCP-DRIFT-CANARY-ERROR search  ")
	assertFindings(t, Check(state, cur), want)

	// Same version, different data: no drift at all.
	v1b := serveTestbed(t, testbed.Options{Profile: "drifting", Version: "1", DriftAfter: -1, Seed: 99})
	again, _, err := RunCapture(ctx, spec, testConfig(v1b), CaptureOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if fs := Check(state, again); len(fs) != 0 {
		t.Errorf("data-only change drifted: %+v", fs)
	}
}

func TestEndToEndLegacyAndCapped(t *testing.T) {
	ctx := testCtx(t)
	url := serveTestbed(t, testbed.Options{Profile: "drifting", Version: "1", DriftAfter: -1,
		Revisions: []string{mcp.Rev20250618}, PageSize: 2})
	cfg := testConfig(url)
	cfg.MaxListPages = 1
	obs, err := Observe(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var rules []string
	for _, f := range obs.SessionFindings() {
		rules = append(rules, f.Rule)
	}
	if strings.Join(rules, ",") != ruleLegacyServer+","+rulePaginationCapped {
		t.Fatalf("session findings %v", rules)
	}
	// A declared tool beyond the cap is not reported missing.
	declared := []mcp.Tool{{Name: "export_csv"}, {Name: "zzz_not_there"}}
	for _, f := range Compare(Side{Tools: declared}, Side{Tools: obs.Tools, Incomplete: obs.Capped}) {
		if f.Rule == ruleToolMissing {
			t.Errorf("missing reported under a page cap: %+v", f)
		}
	}
}

func TestEndToEndRefused(t *testing.T) {
	ctx := testCtx(t)
	url := serveTestbed(t, testbed.Options{Profile: "drifting", Version: "1", DriftAfter: -1, Revisions: []string{mcp.Rev20260728}})
	cfg := testConfig(url)
	cfg.Protocol = mcp.Rev20250618
	_, err := Observe(ctx, cfg)
	if err == nil {
		t.Skip("the testbed accepted a revision outside its list; nothing to test")
	}
	if !IsRefused(err) {
		t.Fatalf("err = %v, want a refused revision", err)
	}
	if f := refusedFinding(err); f.Rule != ruleProtocolUnsupported || f.Severity != report.SeverityError {
		t.Errorf("%+v", f)
	}
}

// A real npm server (the pinned server-memory, located by internal/mcptest/testutil)
// compared with an edited manifest of itself.
func TestEndToEndNPMMemory(t *testing.T) {
	ctx := testCtx(t)
	cfg := mcp.Config{Command: testutil.NPMServer(t, "MCPDRILL_NPM_MEMORY"), RequestTimeout: testutil.Hang, DiscoverTimeout: testutil.Hang,
		Env: []string{"MEMORY_FILE_PATH=" + t.TempDir() + "/memory.jsonl"}}
	obs, err := Observe(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(obs.Tools) < 2 {
		t.Fatalf("server lists %d tools", len(obs.Tools))
	}
	// Edit a manifest of the served set: drop one input property from the
	// declaration (the served side then has it as an added property, graded
	// by whether it is required), change the last tool's description, and
	// declare a tool the server does not have.
	m, err := ParseManifest(ListResult(obs.Tools))
	if err != nil {
		t.Fatal(err)
	}
	tools := m.Tools
	slices.SortFunc(tools, func(a, b mcp.Tool) int { return strings.Compare(a.Name, b.Name) })
	var want []string
	edited := false
	for i := range tools {
		in, _ := tools[i].InputSchemaValue().(map[string]any)
		props, _ := in["properties"].(map[string]any)
		if edited || len(props) == 0 {
			continue
		}
		name := sortedKeys(props)[0]
		req := requiredSet(in)[name]
		cp := map[string]any{}
		for k, v := range in {
			cp[k] = v
		}
		np := map[string]any{}
		for k, v := range props {
			if k != name {
				np[k] = v
			}
		}
		cp["properties"] = np
		if req {
			var r []any
			for n := range requiredSet(in) {
				if n != name {
					r = append(r, n)
				}
			}
			cp["required"] = r
		}
		tools[i] = withMember(t, tools[i], "inputSchema", cp)
		ptr := joinPointer("/inputSchema/properties", name)
		if req {
			want = append(want, "error MCP-DRIFT-SCHEMA "+tools[i].Name+" "+ptr+" CHG-PROPERTY-ADDED")
		} else {
			want = append(want, "info MCP-DRIFT-SCHEMA-COMPATIBLE "+tools[i].Name+" "+ptr+" CHG-PROPERTY-ADDED")
		}
		edited = true
	}
	last := tools[len(tools)-1]
	tools[len(tools)-1] = withMember(t, last, "description", last.Description+" (edited)")
	want = append(want, "warn MCP-DRIFT-SCHEMA-COMPATIBLE "+tools[len(tools)-1].Name+" /description CHG-DESCRIPTION-CHANGED")
	tools = append(tools, valueTool(t, map[string]any{"name": "zz_declared_only", "inputSchema": map[string]any{"type": "object"}}))
	want = append(want, "error MCP-DRIFT-TOOL-MISSING zz_declared_only  CHG-TOOL-REMOVED")
	assertFindings(t, Compare(Side{Tools: tools}, Side{Tools: obs.Tools}), want)
}

// serveSDK serves the official-Go-SDK fixture on a loopback port.
func serveSDK(t *testing.T, variant string) string {
	t.Helper()
	srv := httptest.NewServer(sdkserver.Handler(sdkserver.Options{Variant: variant}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// The SDK fixture's v2 renames greet's parameter and rewords word_count's
// description; the SDK derives every schema from Go structs, so this checks
// the classifier against schemas mcpdrill did not write.
func TestEndToEndSDKFixture(t *testing.T) {
	ctx := testCtx(t)
	o1, err := Observe(ctx, testConfig(serveSDK(t, "v1")))
	if err != nil {
		t.Fatal(err)
	}
	o2, err := Observe(ctx, testConfig(serveSDK(t, "v2")))
	if err != nil {
		t.Fatal(err)
	}
	if len(o1.Tools) != 4 {
		t.Fatalf("v1 lists %d tools", len(o1.Tools))
	}
	assertFindings(t, Compare(Side{Tools: o1.Tools}, Side{Tools: o2.Tools}), []string{
		"error MCP-DRIFT-SCHEMA greet /inputSchema/properties/who CHG-PROPERTY-RENAMED",
		"warn MCP-DRIFT-SCHEMA-COMPATIBLE word_count /description CHG-DESCRIPTION-CHANGED",
	})
	// A second listing of the same server is identical.
	again, err := Observe(ctx, testConfig(serveSDK(t, "v1")))
	if err != nil {
		t.Fatal(err)
	}
	if Fingerprint(again.Tools) != Fingerprint(o1.Tools) || len(Diff(o1.Tools, again.Tools)) != 0 {
		t.Error("two v1 listings differ")
	}
}

// TestUnreadableServedTool: a served tool whose schema is nested past the
// decoder's limits (2,000 levels: past internal/jsonvalue's 1,000; 10,000: past
// encoding/json's too) is reported as unreadable, by name, and not as
// missing; the other tools are still compared.
func TestUnreadableServedTool(t *testing.T) {
	for _, depth := range []int{2000, testbed.DefaultSchemaDepth} {
		t.Run(fmt.Sprint(depth), func(t *testing.T) {
			url := serveTestbed(t, testbed.Options{Profile: "deep-schema", SchemaDepth: depth})
			obs, err := Observe(testCtx(t), testConfig(url))
			if err != nil {
				t.Fatal(err)
			}
			if len(obs.Unreadable) != 1 || obs.Unreadable[0].Name != "deep" || !strings.Contains(obs.Unreadable[0].Reason, "too deep") {
				t.Fatalf("unreadable %+v, want the deep tool, too deep", obs.Unreadable)
			}
			if names := ToolNames(obs.Tools); !slices.Equal(names, []string{"echo"}) {
				t.Fatalf("readable tools %v, want [echo]", names)
			}
			declared := append(slices.Clone(obs.Tools), valueTool(t, map[string]any{"name": "deep", "inputSchema": map[string]any{"type": "object"}}))
			fs := Compare(Side{Tools: declared}, Side{Tools: obs.Tools, Unreadable: obs.Unreadable})
			assertFindings(t, fs, []string{"error MCP-DRIFT-TOOL-UNREADABLE deep  "})
			if !strings.Contains(fs[0].Message, "declared tool is served") {
				t.Errorf("message %q", fs[0].Message)
			}
			capt := newCapture(obs, CaptureOptions{})
			if capt.Complete {
				t.Error("a capture missing an unreadable tool claims to be complete")
			}
		})
	}
	// An entry with no readable name is reported once, without a tool.
	fs := Compare(Side{}, Side{Unreadable: []Unreadable{{Reason: "x"}}})
	assertFindings(t, fs, []string{"error MCP-DRIFT-TOOL-UNREADABLE   "})
}

// withMember is tl with its member k set to v.
func withMember(t testing.TB, tl mcp.Tool, k string, v any) mcp.Tool {
	t.Helper()
	obj, err := tl.Value()
	if err != nil {
		t.Fatal(err)
	}
	m := maps.Clone(obj.(map[string]any))
	m[k] = v
	return valueTool(t, m)
}
