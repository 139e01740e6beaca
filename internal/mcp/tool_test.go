package mcp

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/jsonvalue"
)

// TestToolValue: a parsed tool decodes once, with exact numbers, and its
// copies share the decoding; what cannot be decoded says why and has no
// members.
func TestToolValue(t *testing.T) {
	tl := ParseTool(json.RawMessage(`{"name":"a","inputSchema":{"type":"object","maximum":10},"outputSchema":true,"annotations":{"readOnlyHint":true}}`))
	cp := tl
	var wg sync.WaitGroup
	got := make([]any, 4)
	for i := range got {
		wg.Go(func() { got[i] = cp.InputSchemaValue() })
	}
	wg.Wait()
	in, ok := tl.InputSchemaValue().(map[string]any)
	if !ok || in["maximum"] != json.Number("10") || tl.OutputSchemaValue() != true || tl.AnnotationsValue()["readOnlyHint"] != true {
		t.Fatalf("input %v output %v annotations %v", tl.InputSchemaValue(), tl.OutputSchemaValue(), tl.AnnotationsValue())
	}
	for _, g := range got {
		if reflect.ValueOf(g).Pointer() != reflect.ValueOf(in).Pointer() {
			t.Fatal("a copy of the tool decoded it again")
		}
	}

	for raw, wantErr := range map[string]error{
		`[{"name":"a"}]`: nil,
		`{"name":"a","inputSchema":` + strings.Repeat("[", jsonvalue.MaxJSONDepth+1) + strings.Repeat("]", jsonvalue.MaxJSONDepth+1) + `}`: jsonvalue.ErrTooDeep,
		`{"name":"a","annotations":[1]}`: nil,
	} {
		tl := ParseTool(json.RawMessage(raw))
		if _, err := tl.Value(); !errors.Is(err, wantErr) || (wantErr == nil && err != nil) {
			t.Errorf("%.40s: error %v, want %v", raw, err, wantErr)
		}
		if tl.InputSchemaValue() != nil || tl.AnnotationsValue() != nil {
			t.Errorf("%.40s: input %v annotations %v", raw, tl.InputSchemaValue(), tl.AnnotationsValue())
		}
	}
	if _, err := ParseTool(json.RawMessage(`{"name":`)).Value(); err == nil {
		t.Error("a tool that is not JSON decoded")
	}
}

// TestToolValueWithoutRaw: a Tool built without Raw is the object of its
// members.
func TestToolValueWithoutRaw(t *testing.T) {
	tl := Tool{Name: "a", Description: " ", InputSchema: json.RawMessage(`{"type":"object"}`), Annotations: json.RawMessage(`{"x":1}`)}
	v, err := tl.Value()
	want := map[string]any{"name": "a", "inputSchema": map[string]any{"type": "object"}, "annotations": map[string]any{"x": json.Number("1")}}
	if err != nil || !reflect.DeepEqual(v, want) {
		t.Fatalf("%v, %v; want %v", v, err, want)
	}
	if _, err := (Tool{Name: "a", OutputSchema: json.RawMessage(`{`)}).Value(); err == nil {
		t.Fatal("a member that is not JSON decoded")
	}
}

// TestParseDecodedTool: a tool whose decoding is known is not decoded again.
func TestParseDecodedTool(t *testing.T) {
	known := map[string]any{"name": "a", "inputSchema": map[string]any{"type": "string"}}
	tl := ParseDecodedTool(json.RawMessage(`{"name":"a"}`), known)
	if in, _ := tl.InputSchemaValue().(map[string]any); in["type"] != "string" || tl.Name != "a" || tl.Page != NoPage {
		t.Fatalf("input %v name %q page %d", tl.InputSchemaValue(), tl.Name, tl.Page)
	}
}

// TestToolPages: a name maps to the first page that lists it.
func TestToolPages(t *testing.T) {
	l := ToolList{Tools: []Tool{{Name: "a", Page: 0}, {Name: "b", Page: 1}, {Name: "a", Page: 2}}}
	if got, want := l.ToolPages(), map[string]int{"a": 0, "b": 1}; !reflect.DeepEqual(got, want) {
		t.Fatalf("%v, want %v", got, want)
	}
}
