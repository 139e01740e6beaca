package drift

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/mcp"
)

func tool(t *testing.T, s string) mcp.Tool {
	t.Helper()
	if !json.Valid([]byte(s)) {
		t.Fatalf("not JSON: %s", s)
	}
	return mcp.ParseTool(json.RawMessage(s))
}

// TestStructural: descriptions and titles, the tool's and every schema's,
// make no difference structurally; a property named "description", a
// type, a constraint or an annotation hint still do.
func TestStructural(t *testing.T) {
	base := `{"name":"search","title":"Search","description":"Search the catalogue.","annotations":{"title":"Search","readOnlyHint":true},
		"inputSchema":{"type":"object","description":"args","properties":{"q":{"type":"string","description":"the query","title":"Q"},
		"description":{"type":"string"}},"$defs":{"x":{"type":"integer","description":"an x"}}},
		"outputSchema":{"type":"object","properties":{"hits":{"type":"array","items":{"type":"string","description":"a hit"}}}}}`
	reworded := strings.NewReplacer(`"Search the catalogue."`, `"Find things."`, `"the query"`, `"what to look for"`, `"Q"`, `"Query"`,
		`"a hit"`, `"one result"`, `"an x"`, `"x"`, `"args"`, `"arguments"`, `"title":"Search"`, `"title":"Find"`).Replace(base)
	old, now := []mcp.Tool{tool(t, base)}, []mcp.Tool{tool(t, reworded)}
	if Fingerprint(old) == Fingerprint(now) || len(Diff(old, now)) == 0 {
		t.Fatal("the rewording is a change when compared in full")
	}
	if Fingerprint(Structural(old)) != Fingerprint(Structural(now)) {
		t.Error("structural fingerprints differ for a rewording")
	}
	if cs := Diff(Structural(old), Structural(now)); len(cs) != 0 {
		t.Errorf("structural diff of a rewording: %+v", cs)
	}
	for name, change := range map[string][2]string{
		"a property named description":  {`"description":{"type":"string"}`, `"description":{"type":"integer"}`},
		"a type":                        {`"q":{"type":"string"`, `"q":{"type":"number"`},
		"a hint":                        {`"readOnlyHint":true`, `"readOnlyHint":false`},
		"a constraint in an array item": {`"items":{"type":"string"`, `"items":{"type":"string","maxLength":3`},
	} {
		changed := []mcp.Tool{tool(t, strings.Replace(base, change[0], change[1], 1))}
		if len(Diff(Structural(old), Structural(changed))) == 0 {
			t.Errorf("%s: no structural change", name)
		}
		// The fingerprint leaves annotations out, structural or not.
		if name != "a hint" && Fingerprint(Structural(old)) == Fingerprint(Structural(changed)) {
			t.Errorf("%s: the structural fingerprint did not change", name)
		}
	}
	// The tools given are left alone.
	if old[0].Description != "Search the catalogue." || !strings.Contains(string(old[0].Raw), "the query") {
		t.Error("Structural changed its input")
	}
	if v, _ := old[0].Value(); !strings.Contains(string(mustJSON(t, v)), "the query") {
		t.Error("Structural changed its input's shared decoded value")
	}
}
