package drift

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/mcp"
	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
)

func readManifest(t *testing.T, name string) Manifest {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	m, err := ParseManifest(b)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestDiffGolden(t *testing.T) {
	old := readManifest(t, "diff/old.json")
	nw := readManifest(t, "diff/new.json")
	out, err := json.MarshalIndent(Diff(old.Tools, nw.Tools), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, "diff/changes.golden.json", append(out, '\n'))
}

func FuzzDiff(f *testing.F) {
	f.Add([]byte(`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`),
		[]byte(`{"type":"object","properties":{"b":{"type":"integer"}}}`))
	f.Add([]byte(`{"$ref":"#/$defs/a","$defs":{"a":{"$ref":"#/$defs/a"}}}`), []byte(`{"anyOf":[true,false,{"enum":[1,true]}]}`))
	f.Add([]byte(`{"items":{"minimum":1},"multipleOf":0}`), []byte(`{"items":[{"maximum":"x"}],"multipleOf":-1}`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		av, err1 := decodeJSON(a)
		bv, err2 := decodeJSON(b)
		if err1 != nil || err2 != nil {
			return
		}
		ta := valueTool(t, map[string]any{"name": "t", "inputSchema": av, "outputSchema": bv})
		tb := valueTool(t, map[string]any{"name": "t", "inputSchema": bv, "outputSchema": av})
		if cs := Diff([]mcp.Tool{ta}, []mcp.Tool{ta}); len(cs) != 0 {
			t.Fatalf("diff(a, a) = %+v", cs)
		}
		for _, c := range Diff([]mcp.Tool{ta}, []mcp.Tool{tb}) {
			if c.RuleID == "" || c.RuleID == "BRK-UNGRADED" || c.Message == "" {
				t.Fatalf("ungraded change %+v", c)
			}
		}
	})
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
