package jsonschema

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/jsonvalue"
)

func decode(t *testing.T, s string) any {
	t.Helper()
	v, err := jsonvalue.DecodeJSON([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestWalkVisitsEverySubschemaWhereWritten(t *testing.T) {
	doc := decode(t, `{"type":"object","properties":{"a":{"$ref":"#/$defs/x"},"b/c":{"type":"array","items":{"type":"string"}}},
		"anyOf":[true],"$defs":{"x":{"type":"integer"}}}`)
	var got []string
	Walk(doc, func(n Node) bool {
		got = append(got, fmt.Sprintf("%s %s %s %d", n.Pointer, n.Keyword, n.Member, n.Depth))
		return true
	})
	want := []string{"   0", "/anyOf/0 anyOf 0 1", "/properties/a properties a 1", "/properties/b~1c properties b/c 1",
		"/properties/b~1c/items items  2", "/$defs/x $defs x 1"}
	if !slices.Equal(got, want) {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestWalkSkipsChildrenOnFalse(t *testing.T) {
	doc := decode(t, `{"properties":{"a":{"properties":{"b":{}}}}}`)
	n := 0
	Walk(doc, func(nd Node) bool { n++; return nd.Pointer == "" })
	if n != 2 {
		t.Fatalf("visited %d nodes, want 2", n)
	}
}

func TestWalkResolvedFollowsRefsAndReportsCycles(t *testing.T) {
	tests := []struct {
		name, doc string
		want      []string // references met: pointer keyword cycle unresolved
	}{
		{"local", `{"properties":{"a":{"$ref":"#/$defs/x"}},"$defs":{"x":{"type":"string"}}}`, []string{"/properties/a $ref false false"}},
		{"root cycle", `{"properties":{"child":{"$ref":"#"}}}`, []string{"/properties/child $ref true false"}},
		{"def cycle", `{"properties":{"t":{"$ref":"#/$defs/n"}},"$defs":{"n":{"properties":{"k":{"items":{"$ref":"#/$defs/n"}}}}}}`,
			[]string{"/properties/t $ref false false", "/$defs/n/properties/k/items $ref true false"}},
		{"anchor cycle", `{"properties":{"t":{"$ref":"#node"}},"$defs":{"n":{"$anchor":"node","properties":{"k":{"$ref":"#node"}}}}}`,
			[]string{"/properties/t $ref false false", "#node/properties/k $ref true false"}},
		{"remote", `{"properties":{"r":{"$ref":"https://example.invalid/x.json"}}}`, []string{"/properties/r $ref false true"}},
		{"dangling", `{"properties":{"r":{"$ref":"#/$defs/none"}}}`, []string{"/properties/r $ref false true"}},
		{"dynamic root", `{"properties":{"r":{"$dynamicRef":"#"}}}`, []string{"/properties/r $dynamicRef true false"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			complete := WalkResolved(decode(t, tt.doc), 1000, func(Node) bool { return true }, func(r Ref) {
				got = append(got, fmt.Sprintf("%s %s %v %v", r.Pointer, r.Keyword, r.Cycle, r.Unresolved))
			})
			if !complete || !slices.Equal(got, tt.want) {
				t.Fatalf("complete %v, refs\n%s\nwant\n%s", complete, strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestWalkResolvedIsBounded: definitions that reference each other twice
// over expand to 2^n nodes; the walk stops at its budget.
func TestWalkResolvedIsBounded(t *testing.T) {
	defs := map[string]any{"d0": map[string]any{"type": "string"}}
	for i := 1; i <= 40; i++ {
		prev := fmt.Sprintf("#/$defs/d%d", i-1)
		defs[fmt.Sprintf("d%d", i)] = map[string]any{"properties": map[string]any{"a": map[string]any{"$ref": prev}, "b": map[string]any{"$ref": prev}}}
	}
	raw, _ := json.Marshal(map[string]any{"$ref": "#/$defs/d40", "$defs": defs})
	visited := 0
	complete := WalkResolved(decode(t, string(raw)), 5000, func(Node) bool { visited++; return true }, nil)
	if complete || visited > 5000 {
		t.Fatalf("complete %v after %d nodes; want a walk stopped at the budget", complete, visited)
	}
}

func TestPatternFeatures(t *testing.T) {
	tests := []struct {
		pattern string
		want    PatternFeatures
	}{
		{`^[a-z]+$`, PatternFeatures{}},
		{`^(?=a)`, PatternFeatures{Lookaround: true}},
		{`(?<!x)y`, PatternFeatures{Lookaround: true}},
		{`[(?=]`, PatternFeatures{}},
		{`(a)\1`, PatternFeatures{Backreference: true}},
		{`(?<n>a)\k<n>`, PatternFeatures{Backreference: true}},
		{`\bword\B`, PatternFeatures{WordBoundary: true}},
		{`[\b]`, PatternFeatures{}},
		{`\\b`, PatternFeatures{}},
	}
	for _, tt := range tests {
		if got := PatternFeaturesOf(tt.pattern); got != tt.want {
			t.Errorf("%q: %+v, want %+v", tt.pattern, got, tt.want)
		}
	}
}
