package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
)

func TestHeaderValue(t *testing.T) {
	tests := []struct{ in, enc string }{
		{"get_weather", "get_weather"},
		{"", ""},
		{"with space", "with space"},
		{" lead", "=?base64?IGxlYWQ=?="},
		{"trail\t", "=?base64?dHJhaWwJ?="},
		{"ünï", "=?base64?w7xuw68=?="},
		{"line\nbreak", "=?base64?bGluZQpicmVhaw==?="},
		{"=?base64?abc?=", "=?base64?PT9iYXNlNjQ/YWJjPz0=?="},
		{"file:///tmp/a b", "file:///tmp/a b"},
	}
	for _, tt := range tests {
		if got := EncodeHeaderValue(tt.in); got != tt.enc {
			t.Errorf("Encode(%q) = %q, want %q", tt.in, got, tt.enc)
		}
		if got, err := DecodeHeaderValue(tt.enc); err != nil || got != tt.in {
			t.Errorf("Decode(%q) = %q, %v", tt.enc, got, err)
		}
	}
	if _, err := DecodeHeaderValue("=?base64?!!!?="); !errors.Is(err, ErrBadHeaderValue) {
		t.Errorf("bad base64: %v", err)
	}
}

func FuzzHeaderValue(f *testing.F) {
	for _, s := range []string{"a", " x", "=?base64?QQ==?=", "ü", "\x00", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		enc := EncodeHeaderValue(s)
		for i := 0; i < len(enc); i++ {
			if c := enc[i]; (c < 0x21 || c > 0x7e) && c != ' ' && c != '\t' {
				t.Fatalf("encoded %q has byte %#x", enc, c)
			}
		}
		dec, err := DecodeHeaderValue(enc)
		if err != nil || dec != s {
			t.Fatalf("round trip %q -> %q -> %q, %v", s, enc, dec, err)
		}
		_, _ = DecodeHeaderValue(s) // never panics
	})
}

func TestClassifyDiscover(t *testing.T) {
	tests := []struct {
		frame string
		want  discoverOutcome
		sup   []string
	}{
		{`{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"],"capabilities":{}}}`, discModern, nil},
		{`{"jsonrpc":"2.0","id":1,"result":{"capabilities":{}}}`, discLegacy, nil},
		{`{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":"2026-07-28"}}`, discLegacy, nil},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"x","data":{"supported":["a"],"requested":"b"}}}`, discUnsupported, []string{"a"}},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32004,"message":"x","data":{"supported":["a"]}}}`, discUnsupported, []string{"a"}},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32004,"message":"x"}}`, discLegacy, nil},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"x"}}`, discModernErr, nil},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"x"}}`, discLegacy, nil},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"x","data":{"supported":["2025-06-18"]}}}`, discLegacy, nil},
	}
	for _, tt := range tests {
		m, err := jsonrpc.Decode([]byte(tt.frame))
		if err != nil {
			t.Fatal(err)
		}
		got, _, sup := classifyDiscover(m)
		if got != tt.want || strings.Join(sup, ",") != strings.Join(tt.sup, ",") {
			t.Errorf("%s: got %v %v", tt.frame, got, sup)
		}
	}
	d, err := ParseDiscoverResult(json.RawMessage(`{"supportedVersions":[],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"n","version":"v","title":"T"}}}`))
	if err != nil || d.Server() != (ServerInfo{"n", "v", "T"}) {
		t.Fatalf("%+v %v", d, err)
	}
}

func FuzzDiscoverResult(f *testing.F) {
	f.Add([]byte(`{"supportedVersions":["2026-07-28"],"capabilities":{},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"x"}}}`))
	f.Add([]byte(`{"supportedVersions":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := ParseDiscoverResult(b)
		if err == nil {
			if d.SupportedVersions == nil {
				t.Fatal("accepted a result without supportedVersions")
			}
			_ = d.Server()
		}
		m := &jsonrpc.Message{Result: b}
		out, _, _ := classifyDiscover(m)
		if (out == discModern) != (err == nil) {
			t.Fatalf("classify %v disagrees with parse %v", out, err)
		}
	})
}

// withDeepMember returns the JSON object b with a first member nested past
// encoding/json's limit, named so that no field reads it; nil when b is not
// an object.
func withDeepMember(b []byte) []byte {
	t := bytes.TrimSpace(b)
	if len(t) < 2 || t[0] != '{' {
		return nil
	}
	rest := bytes.TrimSpace(t[1:])
	sep := ","
	if rest[0] == '}' {
		sep = ""
	}
	return []byte(`{"zz_deep":` + strings.Repeat("[", 10_001) + strings.Repeat("]", 10_001) + sep + string(rest))
}

func FuzzToolsPage(f *testing.F) {
	f.Add([]byte(`{"tools":[{"name":"a","inputSchema":{}}],"nextCursor":"c","ttlMs":5,"cacheScope":"public"}`))
	f.Add([]byte(`{"tools":null}`))
	f.Add([]byte(`{"tools":[{"name":"a","Name":"b","outputSchema":{"x":[1]}},{"title":"t"}],"nextCursor":null,"NEXTCURSOR":"d"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, tools, err := ParseToolsPage(b)
		if err == nil && len(tools) != len(p.Tools) {
			t.Fatal("tool count mismatch")
		}
		// The member-by-member path, taken for pages too deep for
		// encoding/json, reads whatever encoding/json reads the same way:
		// the page with one more member, too deep for encoding/json and
		// read by no field, parses as the page does, and so does each tool.
		deep := withDeepMember(b)
		if deep == nil {
			return
		}
		dp, dtools, derr := ParseToolsPage(deep)
		if (err == nil) != (derr == nil) {
			t.Fatalf("%q: page %v, with a deep member %v", b, err, derr)
		}
		if err != nil {
			return
		}
		if !reflect.DeepEqual(dp, p) || !reflect.DeepEqual(dtools, tools) {
			t.Fatalf("%q: page %+v %+v, with a deep member %+v %+v", b, p, tools, dp, dtools)
		}
		for _, tl := range tools {
			dt := withDeepMember(tl.Raw)
			if dt == nil {
				continue
			}
			got := ParseTool(dt)
			got.Raw = tl.Raw
			if !reflect.DeepEqual(got, tl) {
				t.Fatalf("tool %q: %+v, with a deep member %+v", tl.Raw, tl, got)
			}
		}
	})
}

// TestParseToolExactNames: a tool's members are read by their exact names,
// the last of a repeated one winning, as a JSON parser reads them; a
// case-variant member is no member, deep or not.
func TestParseToolExactNames(t *testing.T) {
	const tool = `{"name":"a","Name":"b","Title":"T","description":"d","description":"e","inputSchema":{"type":"object"},"InputSchema":1,"OUTPUTSCHEMA":{}}`
	for _, raw := range [][]byte{[]byte(tool), withDeepMember([]byte(tool))} {
		got := ParseTool(raw)
		if got.Name != "a" || got.Title != "" || got.Description != "e" || string(got.InputSchema) != `{"type":"object"}` ||
			got.OutputSchema != nil || got.Annotations != nil || got.Page != NoPage || !bytes.Equal(got.Raw, raw) {
			t.Errorf("%.40s…: name %q title %q description %q input %s output %s annotations %s page %d",
				raw, got.Name, got.Title, got.Description, got.InputSchema, got.OutputSchema, got.Annotations, got.Page)
		}
	}
	for _, raw := range []string{`[{"name":"a"}]`, `"a"`, `null`, `{"name":1,"title":["t"]}`, `{"name":`} {
		if got := ParseTool(json.RawMessage(raw)); got.Name != "" || got.Title != "" || got.Page != NoPage {
			t.Errorf("%s: name %q title %q page %d", raw, got.Name, got.Title, got.Page)
		}
	}
}

func TestBuildParams(t *testing.T) {
	c := &Client{cfg: Config{}.withDefaults()}
	p, err := c.buildParams(map[string]any{"name": "x", "_meta": map[string]any{"k": 1}}, Rev20260728)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Name string                     `json:"name"`
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(p, &got); err != nil || got.Name != "x" || string(got.Meta["k"]) != "1" ||
		string(got.Meta[MetaProtocolVersion]) != `"2026-07-28"` || string(got.Meta[MetaClientCapabilities]) != "{}" ||
		string(got.Meta[MetaClientInfo]) != `{"name":"mcpdrill","version":"dev"}` {
		t.Fatalf("params = %s", p)
	}
	if _, err := c.buildParams([]int{1}, Rev20260728); err == nil {
		t.Fatal("non-object params accepted in the modern era")
	}
	if p, _ := c.buildParams(nil, ""); p != nil {
		t.Fatalf("legacy nil params = %s", p)
	}
	h := modernHeaders(Rev20260728, "resources/read", json.RawMessage(`{"uri":"file:///ä"}`))
	if h.Get(HeaderName) != EncodeHeaderValue("file:///ä") || h.Get(HeaderMethod) != "resources/read" {
		t.Fatalf("headers = %v", h)
	}
}

func TestObserverBounded(t *testing.T) {
	o := newObserver()
	for i := 0; i < 1000; i++ {
		o.note("notification", strings.Repeat("m", i%100))
		o.count("stdout-noise", string(rune('a'+i%26)))
	}
	l := o.list()
	if len(l) != maxObsPerKind+1+1 {
		t.Fatalf("%d observations", len(l))
	}
	for i := 1; i < len(l); i++ {
		if l[i-1].Kind > l[i].Kind || (l[i-1].Kind == l[i].Kind && l[i-1].Detail >= l[i].Detail) {
			t.Fatal("not sorted")
		}
	}
}

func TestIsModern(t *testing.T) {
	for rev, want := range map[string]bool{Rev20241105: false, Rev20251125: false, Rev20260728: true, "2027-01-01": true, "draft": false, "": false} {
		if IsModern(rev) != want {
			t.Errorf("IsModern(%q) != %v", rev, want)
		}
	}
}

// TestToolsPageDeep: one tool nested past encoding/json's limit costs only
// that tool's decoding: the page keeps its other tools and its cursor, and
// the deep tool its name and its raw schema, as a shallow page would give.
func TestToolsPageDeep(t *testing.T) {
	deep := strings.Repeat(`{"properties":{"n":`, 6000) + `{}` + strings.Repeat(`}}`, 6000)
	for _, schema := range []string{`{"type":"object"}`, deep} {
		page := `{"tools":[{"name":"a","inputSchema":{}},{"name":"deep","title":"T","outputSchema":` + schema +
			`},{"name":"b"}],"nextCursor":"c","ttlMs":5,"cacheScope":"public"}`
		p, tools, err := ParseToolsPage([]byte(page))
		if err != nil {
			t.Fatalf("depth %d: %v", len(schema), err)
		}
		if len(tools) != 3 || tools[0].Name != "a" || tools[1].Name != "deep" || tools[1].Title != "T" || tools[2].Name != "b" {
			t.Fatalf("tools %+v", tools)
		}
		if string(tools[1].OutputSchema) != schema || *p.NextCursor != "c" || *p.TTLMs != 5 || *p.CacheScope != "public" {
			t.Fatalf("schema %d bytes, page %+v", len(tools[1].OutputSchema), p)
		}
	}
	if _, _, err := ParseToolsPage([]byte(`{"tools":[` + deep[:len(deep)-1] + `]}`)); err == nil {
		t.Fatal("a deep page that is not valid JSON was read")
	}
	// Member names match as encoding/json matches them, deep or not.
	for _, tools := range []string{`"Tools":[]`, `"Tools":null`, `"tools":null`, `"x":1`} {
		_, _, shallow := ParseToolsPage([]byte(`{` + tools + `,"x":{}}`))
		_, _, deepErr := ParseToolsPage([]byte(`{` + tools + `,"x":` + deep + `}`))
		if (shallow == nil) != (deepErr == nil) {
			t.Errorf("%s: shallow page %v, deep page %v", tools, shallow, deepErr)
		}
	}
}

// TestDispatchNotJSONRPC: a line that is JSON but no JSON-RPC 2.0 message
// is noted as an invalid message (stdout purity counts it); one that lacks
// "jsonrpc": "2.0" but answers a request is noted and still delivered.
func TestDispatchNotJSONRPC(t *testing.T) {
	for _, tc := range []struct {
		line      string
		invalid   int
		delivered bool
	}{
		{`{"preamble":true}`, 1, false},
		{`{"name":"elastic-otel-node","level":30,"msg":"start"}`, 1, false},
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, 0, true},
		{`{"id":1,"result":{}}`, 1, true},
		{`{"jsonrpc":"1.0","id":1,"result":{}}`, 1, true},
	} {
		m := newMux(newObserver())
		ch, err := m.register(jsonrpc.IDKey(json.RawMessage("1")), false)
		if err != nil {
			t.Fatal(err)
		}
		m.dispatchFrame([]byte(tc.line))
		invalid := 0
		for _, ob := range m.obs.list() {
			if ob.Kind == "invalid-message" {
				invalid += ob.Count
			}
		}
		delivered := false
		select {
		case d := <-ch:
			delivered = d.msg != nil
		default:
		}
		if invalid != tc.invalid || delivered != tc.delivered {
			t.Errorf("%s: invalid %d, delivered %v; want %d, %v", tc.line, invalid, delivered, tc.invalid, tc.delivered)
		}
	}
}
