package faults

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/jsonvalue"
)

// change is a JSON pointer at which two values differ: a leaf with another
// value, or (structural) a node whose JSON type, keys or length changed.
type change struct {
	ptr        string
	structural bool
}

// leafDiff appends the changes from a to b.
func leafDiff(a, b any, ptr string, out *[]change) {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || !slices.Equal(slices.Sorted(maps.Keys(x)), slices.Sorted(maps.Keys(y))) {
			*out = append(*out, change{ptr, true})
			return
		}
		for _, k := range slices.Sorted(maps.Keys(x)) {
			leafDiff(x[k], y[k], jsonvalue.PointerAppend(ptr, k), out)
		}
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			*out = append(*out, change{ptr, true})
			return
		}
		for i := range x {
			leafDiff(x[i], y[i], ptr+"/"+strconv.Itoa(i), out)
		}
	default:
		if jsonvalue.Type(a) != jsonvalue.Type(b) {
			*out = append(*out, change{ptr, true})
		} else if !bytes.Equal(jsonvalue.Canonical(a), jsonvalue.Canonical(b)) {
			*out = append(*out, change{ptr, false})
		}
	}
}

func diffFrames(t *testing.T, before, after []byte) []string {
	t.Helper()
	a, err := jsonvalue.DecodeJSON(before)
	if err != nil {
		t.Fatalf("before: %v", err)
	}
	b, err := jsonvalue.DecodeJSON(after)
	if err != nil {
		t.Fatalf("after is not JSON: %v\n%s", err, after)
	}
	var cs []change
	leafDiff(a, b, "", &cs)
	var out []string
	for _, c := range cs {
		if c.structural {
			out = append(out, c.ptr+" (type or shape)")
		} else {
			out = append(out, c.ptr)
		}
	}
	return out
}

// TestCorruptChangesOnlyFreeValues: corrupt changes exactly the values the
// MCP schema leaves free (free.go), keeps every JSON type, and is applied
// only when a value changed; schema-break changes types inside data only.
func TestCorruptChangesOnlyFreeValues(t *testing.T) {
	const (
		list = `{"jsonrpc":"2.0","id":"l1","result":{"tools":[{"name":"search","title":"Search","description":"Search docs",` +
			`"annotations":{"title":"Searcher","readOnlyHint":true,"destructiveHint":false},` +
			`"inputSchema":{"type":"object","title":"In","properties":{"q":{"type":"string","description":"query","enum":["a","b"],"default":"a"},` +
			`"description":{"type":"string","title":"a property named description"}},"required":["q"],"$defs":{"x":{"type":"integer","description":"an x","examples":[{"description":"an instance"}]}}},` +
			`"outputSchema":{"type":"object","properties":{"hits":{"type":"array","items":{"type":"string","format":"uri","description":"a hit"}}},"anyOf":[{"description":"branch","required":["hits"]}]},` +
			`"_meta":{"k":"v"}}],"nextCursor":"c2"}}`
		call = `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"{\"n\":42}"},{"type":"text","text":"plain"},` +
			`{"type":"image","data":"aGk=","mimeType":"image/png"},{"type":"resource","resource":{"uri":"file:///a","mimeType":"text/plain","text":"body"}}],` +
			`"structuredContent":{"n":42,"tags":["a"],"ok":true,"none":null},"isError":false,"_meta":{"k":"v"}}}`
		empty    = `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"{ \"a\" :  null }"}],"structuredContent":{"a":null}}}`
		emptyObj = `{"jsonrpc":"2.0","id":7,"result":{"content":[],"structuredContent":{}}}`
		initRes  = `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":true}},` +
			`"serverInfo":{"name":"s","version":"1","title":"S"},"instructions":"Use it"}}`
	)
	cases := []struct {
		name, fault string
		kind        Kind
		method      string
		raw         string
		want        []string // changed pointers; nil: not applied
	}{
		{"tools/list", FaultCorrupt, KindResponse, "tools/list", list, []string{
			"/result/tools/0/annotations/title", "/result/tools/0/description",
			"/result/tools/0/inputSchema/$defs/x/description", "/result/tools/0/inputSchema/properties/description/title",
			"/result/tools/0/inputSchema/properties/q/description", "/result/tools/0/inputSchema/title",
			"/result/tools/0/outputSchema/anyOf/0/description", "/result/tools/0/outputSchema/properties/hits/items/description",
			"/result/tools/0/title"}},
		{"tools/list has no data to break", FaultSchemaBreak, KindResponse, "tools/list", list, nil},
		{"tools/call result", FaultCorrupt, KindResponse, "tools/call", call, []string{
			"/result/content/0/text", "/result/content/1/text", "/result/content/3/resource/text",
			"/result/structuredContent/n", "/result/structuredContent/ok", "/result/structuredContent/tags/0"}},
		{"an unknown request's tool result", FaultCorrupt, KindResponse, "", call, []string{
			"/result/content/0/text", "/result/content/1/text", "/result/content/3/resource/text",
			"/result/structuredContent/n", "/result/structuredContent/ok", "/result/structuredContent/tags/0"}},
		{"only nulls and a JSON text of nulls", FaultCorrupt, KindResponse, "tools/call", empty, nil},
		{"nulls change type under schema-break", FaultSchemaBreak, KindResponse, "tools/call", empty, []string{}},
		{"empty structuredContent stays an object", FaultSchemaBreak, KindResponse, "tools/call", emptyObj, nil},
		{"initialize", FaultCorrupt, KindResponse, "initialize", initRes, []string{"/result/instructions", "/result/serverInfo/title"}},
		{"ping", FaultCorrupt, KindResponse, "ping", `{"jsonrpc":"2.0","id":1,"result":{}}`, nil},
		{"an unknown request's listing", FaultCorrupt, KindResponse, "", list, nil},
		{"a method MCP does not define", FaultCorrupt, KindResponse, "x/stats",
			`{"jsonrpc":"2.0","id":1,"result":{"count":3,"label":"a","_meta":{"k":"v"}}}`, []string{"/result/count", "/result/label"}},
		{"a method MCP does not define, scalar result", FaultCorrupt, KindResponse, "x/n",
			`{"jsonrpc":"2.0","id":1,"result":5}`, []string{"/result"}},
		{"prompts/list", FaultCorrupt, KindResponse, "prompts/list",
			`{"jsonrpc":"2.0","id":1,"result":{"prompts":[{"name":"p","description":"d","arguments":[{"name":"a","description":"ad","required":true}]}]}}`,
			[]string{"/result/prompts/0/arguments/0/description", "/result/prompts/0/description"}},
		{"prompts/get", FaultCorrupt, KindResponse, "prompts/get",
			`{"jsonrpc":"2.0","id":1,"result":{"description":"d","messages":[{"role":"user","content":{"type":"text","text":"hi"}}]}}`,
			[]string{"/result/description", "/result/messages/0/content/text"}},
		{"resources/list", FaultCorrupt, KindResponse, "resources/list",
			`{"jsonrpc":"2.0","id":1,"result":{"resources":[{"uri":"file:///a","name":"a","description":"d","mimeType":"text/plain"}],"nextCursor":"n"}}`,
			[]string{"/result/resources/0/description"}},
		{"resources/read", FaultCorrupt, KindResponse, "resources/read",
			`{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"file:///a","text":"body"},{"uri":"file:///b","blob":"aGk="}]}}`,
			[]string{"/result/contents/0/text"}},
		{"completion/complete", FaultCorrupt, KindResponse, "completion/complete",
			`{"jsonrpc":"2.0","id":1,"result":{"completion":{"values":["ab","ac"],"total":2,"hasMore":false}}}`,
			[]string{"/result/completion/values/0", "/result/completion/values/1"}},
		{"sampling result", FaultCorrupt, KindResponse, "sampling/createMessage",
			`{"jsonrpc":"2.0","id":1,"result":{"role":"assistant","content":{"type":"text","text":"hello"},"model":"m","stopReason":"endTurn"}}`,
			[]string{"/result/content/text"}},
		{"elicitation result", FaultCorrupt, KindResponse, "elicitation/create",
			`{"jsonrpc":"2.0","id":1,"result":{"action":"accept","content":{"name":"x","age":3}}}`,
			[]string{"/result/content/age", "/result/content/name"}},
		{"roots/list result", FaultCorrupt, KindResponse, "roots/list",
			`{"jsonrpc":"2.0","id":1,"result":{"roots":[{"uri":"file:///r","name":"repo"}]}}`, []string{"/result/roots/0/name"}},
		{"tools/call request", FaultCorrupt, KindRequest, "tools/call",
			`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search","arguments":{"q":"x","n":2},"_meta":{"progressToken":1}}}`,
			[]string{"/params/arguments/n", "/params/arguments/q"}},
		{"prompts/get request", FaultCorrupt, KindRequest, "prompts/get",
			`{"jsonrpc":"2.0","id":7,"method":"prompts/get","params":{"name":"p","arguments":{"a":"x"}}}`, []string{"/params/arguments/a"}},
		{"tools/list request", FaultCorrupt, KindRequest, "tools/list",
			`{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"cursor":"c"}}`, nil},
		{"notifications/message", FaultCorrupt, KindNotification, "notifications/message",
			`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"l","data":{"m":"x"}}}`, []string{"/params/data/m"}},
		{"notifications/progress", FaultCorrupt, KindNotification, "notifications/progress",
			`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":2,"total":3,"message":"half"}}`, []string{"/params/message"}},
		{"notifications/initialized", FaultCorrupt, KindNotification, "notifications/initialized",
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name+"/"+tc.fault, func(t *testing.T) {
			f := &Frame{Dir: ToClient, Kind: tc.kind, Method: tc.method, Raw: []byte(tc.raw)}
			a := fire(t, tc.fault, f, nil)
			if tc.want == nil {
				if a.Applied || a.Kind != Forward || !bytes.Equal(a.Out(f.Raw), f.Raw) {
					t.Fatalf("applied (%s): %s", a.Note, a.Bytes)
				}
				if !strings.HasPrefix(a.Note, "not applied: ") {
					t.Errorf("note %q", a.Note)
				}
				return
			}
			if !a.Applied || a.Kind != Replace {
				t.Fatalf("not applied: %+v", a)
			}
			got := diffFrames(t, f.Raw, a.Bytes)
			if tc.fault == FaultSchemaBreak {
				return
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("changed\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
			if want := "fields=" + strconv.Itoa(len(tc.want)); tc.name == "tools/list" && a.Note != want {
				t.Errorf("note %q, want %q", a.Note, want)
			}
		})
	}
}

// TestCorruptedListingStaysAListing: what a protocol-checking client needs
// of a corrupted tools/list is intact: names, schema types and required
// lists, and each description a string of its own length.
func TestCorruptedListingStaysAListing(t *testing.T) {
	f := &Frame{Dir: ToClient, Kind: KindResponse, Method: "tools/list", Raw: listFrame}
	a := fire(t, FaultCorrupt, f, nil)
	var before, after struct {
		Result struct {
			Tools []struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				InputSchema json.RawMessage `json:"inputSchema"`
			} `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(listFrame, &before); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(a.Bytes, &after); err != nil {
		t.Fatalf("%v: %s", err, a.Bytes)
	}
	for i, b := range before.Result.Tools {
		g := after.Result.Tools[i]
		gs, _ := jsonvalue.CanonicalJSON(g.InputSchema)
		bs, _ := jsonvalue.CanonicalJSON(b.InputSchema)
		if g.Name != b.Name || !bytes.Equal(gs, bs) {
			t.Errorf("tool %d: %s %s, was %s %s", i, g.Name, g.InputSchema, b.Name, b.InputSchema)
		}
		if g.Description == b.Description || len([]rune(g.Description)) != len([]rune(b.Description)) {
			t.Errorf("tool %d: description %q from %q", i, g.Description, b.Description)
		}
	}
}

// protocolMembers are the members a payload fault never changes at the top
// of a frame.
var protocolMembers = []string{"jsonrpc", "id", "method", "error"}

// freeLeaf reports whether a changed pointer is one free.go allows outside
// data: it ends in a free text member, or is an offered completion value
// or a root's name.
func freeLeaf(ptr string) bool {
	toks, _ := jsonvalue.SplitPointer(ptr)
	n := len(toks)
	switch last := toks[n-1]; {
	case slices.Contains([]string{"description", "title", "text", "instructions", "value", "message", "systemPrompt"}, last):
		return true
	case n >= 2 && toks[n-2] == "values":
		return true
	case n >= 3 && last == "name" && toks[n-3] == "roots":
		return true
	case n >= 3 && toks[n-3] == "arguments": // prompt and completion argument values
		return true
	}
	return false
}

// inData reports whether ptr lies inside a value free.go treats as data.
func inData(ptr, method string) bool {
	if !mcpMethods[method] {
		return true
	}
	for _, root := range []string{"/result/structuredContent", "/params/arguments", "/params/data", "/result/content"} {
		if ptr == root || strings.HasPrefix(ptr, root+"/") {
			return true
		}
	}
	return false
}

// FuzzPayloadStaysInProtocol: corrupt and schema-break never change the
// JSON-RPC envelope, change only free values, keep every JSON type
// (corrupt), and are applied exactly when the frame's data changed.
func FuzzPayloadStaysInProtocol(f *testing.F) {
	for _, s := range [][]byte{toolResult, listFrame, callReq,
		[]byte(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"},"instructions":"x"}}`),
		[]byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":[1,"a",null]}}`),
		[]byte(`{"jsonrpc":"2.0","id":1,"result":{"prompts":[{"name":"p","description":"d","arguments":[{"name":"a","title":"t"}]}]}}`),
		[]byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"[ ]"}],"structuredContent":{}}}`),
	} {
		f.Add(s, uint8(0), uint64(1))
	}
	methods := []string{"", "tools/call", "tools/list", "initialize", "prompts/list", "prompts/get", "resources/read",
		"completion/complete", "notifications/message", "sampling/createMessage", "elicitation/create", "roots/list", "x/custom"}
	f.Fuzz(func(t *testing.T, raw []byte, which uint8, roll uint64) {
		method := methods[int(which>>2)%len(methods)]
		fault := FaultCorrupt
		if which&1 == 1 {
			fault = FaultSchemaBreak
		}
		kind := KindResponse
		if which&2 == 2 {
			kind = KindRequest
		}
		fr := &Frame{Dir: ToClient, Kind: kind, Method: method, Raw: raw}
		params, _ := resolveParams(mustLookup(t, fault), nil)
		a := Apply(fr, Decision{Fire: true, Fault: fault, Params: params, Roll: roll})
		if !a.Applied {
			if a.Kind != Forward || !bytes.Equal(a.Out(raw), raw) {
				t.Fatalf("not applied but changed: %+v", a)
			}
			return
		}
		before, _ := jsonvalue.DecodeJSON(raw)
		after, err := jsonvalue.DecodeJSON(a.Bytes)
		if err != nil {
			t.Fatalf("%s made invalid JSON: %v", fault, err)
		}
		if bytes.Equal(jsonvalue.Canonical(before), jsonvalue.Canonical(after)) {
			t.Fatalf("%s applied but nothing changed: %s", fault, a.Bytes)
		}
		bm, am := before.(map[string]any), after.(map[string]any)
		for _, k := range protocolMembers {
			if !bytes.Equal(jsonvalue.Canonical(bm[k]), jsonvalue.Canonical(am[k])) {
				t.Fatalf("%s changed %q: %s", fault, k, a.Bytes)
			}
		}
		if kind == KindRequest {
			method, _ = bm["method"].(string)
		}
		var changed []change
		leafDiff(before, after, "", &changed)
		for _, c := range changed {
			p, structural := c.ptr, c.structural
			switch {
			case inData(p, method):
			case structural:
				t.Fatalf("%s changed the type or shape at %q outside data (%s): %s", fault, p, method, a.Bytes)
			case fault == FaultCorrupt && freeLeaf(p):
			case fault == FaultSchemaBreak && strings.HasSuffix(p, "/text"):
			default:
				t.Fatalf("%s changed %q, not a free value of %s: %s", fault, p, method, a.Bytes)
			}
			if structural && fault == FaultCorrupt {
				t.Fatalf("corrupt changed a type at %q: %s", p, a.Bytes)
			}
		}
	})
}
