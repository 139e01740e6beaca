package drift

import (
	"errors"
	"strings"
	"testing"
)

func TestParseManifestShapes(t *testing.T) {
	tool := `{"name":"search","inputSchema":{"type":"object"}}`
	cases := []struct {
		name, doc, shape, cursor string
	}{
		{"list result", `{"tools":[` + tool + `],"ttlMs":1000,"cacheScope":"session"}`, shapeListResult, ""},
		{"list result with cursor", `{"tools":[` + tool + `],"nextCursor":"p2"}`, shapeListResult, "p2"},
		{"bare array", `[` + tool + `]`, shapeBareArray, ""},
		{"rpc frame", `{"jsonrpc":"2.0","id":1,"result":{"tools":[` + tool + `]}}`, shapeRPCFrame, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := ParseManifest([]byte(tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			if m.Shape != tc.shape || m.NextCursor != tc.cursor || m.Truncated() != (tc.cursor != "") {
				t.Errorf("got %+v", m)
			}
			if len(m.Tools) != 1 || m.Tools[0].Name != "search" || m.Tools[0].InputSchema == nil {
				t.Errorf("tools %+v", m.Tools)
			}
		})
	}
}

func TestParseManifestErrors(t *testing.T) {
	cases := map[string]string{
		"not json":        `{`,
		"trailing":        `[] []`,
		"scalar":          `42`,
		"no tools":        `{"x":1}`,
		"client config":   `{"mcpServers":{},"tools":[]}`,
		"rpc error":       `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"nope"}}`,
		"rpc no result":   `{"jsonrpc":"2.0","id":1}`,
		"tool not object": `[1]`,
		"blank name":      `[{"name":"  "}]`,
		"duplicate":       `[{"name":"a"},{"name":"a"}]`,
	}
	for name, doc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := ParseManifest([]byte(doc))
			if err == nil {
				t.Fatal("accepted")
			}
			if !errors.Is(err, ErrNotManifest) && !errors.Is(err, ErrInvalidTool) {
				t.Errorf("unwrapped error %v", err)
			}
		})
	}
}

func TestListResultRoundTrip(t *testing.T) {
	m, err := ParseManifest([]byte(`[{"name":"b","description":"x","inputSchema":{"type":"object"}},{"name":"a","annotations":{"readOnlyHint":true}}]`))
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseManifest(ListResult(m.Tools))
	if err != nil {
		t.Fatal(err)
	}
	if Fingerprint(back.Tools) != Fingerprint(m.Tools) || len(Diff(m.Tools, back.Tools)) != 0 {
		t.Error("round trip changed the tools")
	}
	if got := strings.Join(ToolNames(back.Tools), ","); got != "a,b" {
		t.Errorf("names %s", got)
	}
}

func FuzzParseManifest(f *testing.F) {
	f.Add([]byte(`{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}`))
	f.Add([]byte(`[{"name":"a"}]`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseManifest(b)
		if err != nil {
			return
		}
		if len(Diff(m.Tools, m.Tools)) != 0 {
			t.Fatal("diff of a manifest with itself is not empty")
		}
		_ = Fingerprint(m.Tools)
	})
}

// TestParseManifestToolCap (F2): a list longer than MaxManifestTools is
// refused before it is decoded, in every shape.
func TestParseManifestToolCap(t *testing.T) {
	tools := "[" + strings.TrimSuffix(strings.Repeat(`{"name":"t"},`, MaxManifestTools+1), ",") + "]"
	for _, doc := range []string{tools, `{"tools":` + tools + `}`, `{"jsonrpc":"2.0","id":1,"result":{"tools":` + tools + `}}`} {
		_, err := ParseManifest([]byte(doc))
		if !errors.Is(err, ErrNotManifest) || !strings.Contains(err.Error(), "more than") {
			t.Fatalf("%.40s…: %v", doc, err)
		}
	}
}
