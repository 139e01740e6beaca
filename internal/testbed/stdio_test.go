package testbed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
)

var (
	echoArgs = map[string]any{"text": "hi"}
	badAdd   = map[string]any{"a": "one"}
	p2cursor = encodeCursor(3)
)

// stdioCase sends frames and expects replies in order; then a sentinel
// request proves that nothing else was written.
type stdioCase struct {
	name   string
	o      Options
	frames []string
	wants  []want
}

func runStdioCases(t *testing.T, cases []stdioCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := startStdio(t, tc.o)
			p.send(tc.frames...)
			for i, w := range tc.wants {
				f := p.frame()
				t.Logf("reply %d: %s", i, short(f))
				w.check(t, f)
			}
			p.send(mreq("sentinel", "server/discover", nil))
			f := p.frame()
			if f["id"] != "sentinel" {
				t.Fatalf("unexpected extra frame %s", short(f))
			}
			if err := p.close(); err != nil {
				t.Fatalf("ServeStdio: %v", err)
			}
		})
	}
}

func TestStdioGoodModern(t *testing.T) {
	runStdioCases(t, []stdioCase{
		{name: "discover", frames: []string{mreq(1, "server/discover", nil)}, wants: []want{{id: 1,
			eq: map[string]any{"result.resultType": "complete", "result.cacheScope": "public",
				"result.supportedVersions": AllRevisions, "result._meta." + metaServerInfo + ".name": serverName},
			has: []string{"result.ttlMs", "result.capabilities.tools"}}}},
		{name: "discover without _meta", frames: []string{req(1, "server/discover", nil)},
			wants: []want{{id: 1, code: -32602}}},
		{name: "missing clientCapabilities", frames: []string{req(1, "tools/list", map[string]any{"_meta": map[string]any{metaVersion: Rev20260728}})},
			wants: []want{{id: 1, code: -32602}}},
		{name: "unsupported version", frames: []string{mreqRev("a", "tools/list", nil, "2099-01-01")},
			wants: []want{{id: "a", code: -32022, eq: map[string]any{"error.data.requested": "2099-01-01", "error.data.supported": AllRevisions}}}},
		{name: "legacy version in _meta", frames: []string{mreqRev(1, "tools/list", nil, Rev20250618)},
			wants: []want{{id: 1, code: -32022}}},
		{name: "tools/list pages", frames: []string{mreq(1, "tools/list", nil), mreq(2, "tools/list", map[string]any{"cursor": p2cursor})},
			wants: []want{
				{id: 1, eq: map[string]any{"result.resultType": "complete", "result.ttlMs": 60000, "result.cacheScope": "public",
					"result.nextCursor": p2cursor, "result.tools.0.name": "echo", "result.tools.2.name": "search"},
					has: []string{"result.tools.0.outputSchema", "result._meta." + metaServerInfo}, not: []string{"result.tools.3"}},
				{id: 2, eq: map[string]any{"result.tools.0.name": "weather", "result.tools.1.name": "get_user"},
					not: []string{"result.nextCursor", "result.tools.2"}},
			}},
		{name: "invalid cursor", frames: []string{mreq(1, "tools/list", map[string]any{"cursor": "nope"})},
			wants: []want{{id: 1, code: -32602}}},
		{name: "call echo", frames: []string{mreq(1, "tools/call", call("echo", echoArgs))}, wants: []want{{id: 1,
			eq: map[string]any{"result.structuredContent": map[string]any{"text": "hi", "length": 2},
				"result.content.0.text": `{"length":2,"text":"hi"}`, "result.resultType": "complete"}, not: []string{"result.isError"}}}},
		{name: "invalid args are isError", frames: []string{mreq(1, "tools/call", call("add", badAdd))},
			wants: []want{{id: 1, eq: map[string]any{"result.isError": true}, not: []string{"result.structuredContent"}}}},
		{name: "unknown tool", frames: []string{mreq(1, "tools/call", call("nope", nil))}, wants: []want{{id: 1, code: -32602}}},
		{name: "arguments not an object", frames: []string{mreq(1, "tools/call", call("echo", []any{1}))}, wants: []want{{id: 1, code: -32602}}},
		{name: "tool runtime error", frames: []string{mreq(1, "tools/call", call("get_user", map[string]any{"id": 101}))},
			wants: []want{{id: 1, eq: map[string]any{"result.isError": true}}}},
		{name: "ping is gone in 2026", frames: []string{mreq(1, "ping", nil)}, wants: []want{{id: 1, code: -32601}}},
		{name: "unknown method", frames: []string{mreq(1, "resources/list", nil)}, wants: []want{{id: 1, code: -32601}}},
		{name: "notification gets nothing", frames: []string{notif("notifications/cancelled", map[string]any{"requestId": 9})}},
	})
}

func TestStdioGoodEnvelope(t *testing.T) {
	runStdioCases(t, []stdioCase{
		{name: "parse error", frames: []string{`{"jsonrpc":"2.0","id":1,`}, wants: []want{{id: nil, code: -32700}}},
		{name: "not an object", frames: []string{`[1,2]`, `"x"`}, wants: []want{{id: nil, code: -32600}, {id: nil, code: -32600}}},
		{name: "no method", frames: []string{`{"jsonrpc":"2.0","id":7}`}, wants: []want{{id: 7, code: -32600}}},
		{name: "wrong jsonrpc", frames: []string{`{"jsonrpc":"1.0","id":8,"method":"ping"}`}, wants: []want{{id: 8, code: -32600}}},
		{name: "bad id", frames: []string{`{"jsonrpc":"2.0","id":true,"method":"ping"}`, `{"jsonrpc":"2.0","id":null,"method":"ping"}`},
			wants: []want{{id: nil, code: -32600}, {id: nil, code: -32600}}},
		{name: "method not a string", frames: []string{`{"jsonrpc":"2.0","id":1,"method":5}`}, wants: []want{{id: 1, code: -32600}}},
		{name: "params not an object", frames: []string{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":[1]}`}, wants: []want{{id: 1, code: -32602}}},
		{name: "client response ignored", frames: []string{`{"jsonrpc":"2.0","id":1,"result":{}}`}},
		{name: "blank line ignored", frames: []string{"", "   "}},
	})
}

func TestStdioGoodLegacy(t *testing.T) {
	runStdioCases(t, []stdioCase{
		{name: "echo supported version", frames: []string{initReq(1, Rev20250618), notif("notifications/initialized", nil)},
			wants: []want{{id: 1, eq: map[string]any{"result.protocolVersion": Rev20250618, "result.serverInfo.name": serverName},
				has: []string{"result.capabilities.tools", "result.instructions", "result.serverInfo.title"}, not: []string{"result.resultType"}}}},
		{name: "unknown version gets latest legacy", frames: []string{initReq(1, "1999-01-01")},
			wants: []want{{id: 1, eq: map[string]any{"result.protocolVersion": Rev20251125}}}},
		{name: "modern version in initialize gets latest legacy", frames: []string{initReq(1, Rev20260728)},
			wants: []want{{id: 1, eq: map[string]any{"result.protocolVersion": Rev20251125}}}},
		{name: "initialize without version", frames: []string{req(1, "initialize", map[string]any{})}, wants: []want{{id: 1, code: -32602}}},
		{name: "ping before and after", frames: []string{req(1, "ping", nil), initReq(2, Rev20251125), req(3, "ping", nil)},
			wants: []want{{id: 1, eq: map[string]any{"result": map[string]any{}}}, {id: 2}, {id: 3, eq: map[string]any{"result": map[string]any{}}}}},
		{name: "2025-06-18 invalid args are -32602", frames: []string{initReq(1, Rev20250618), req(2, "tools/call", call("add", badAdd))},
			wants: []want{{id: 1}, {id: 2, code: -32602}}},
		{name: "2025-11-25 invalid args are isError", frames: []string{initReq(1, Rev20251125), req(2, "tools/call", call("add", badAdd))},
			wants: []want{{id: 1}, {id: 2, eq: map[string]any{"result.isError": true}}}},
		{name: "2024-11-05 tools are bare", frames: []string{initReq(1, Rev20241105), req(2, "tools/list", nil), req(3, "tools/call", call("echo", echoArgs))},
			wants: []want{{id: 1, not: []string{"result.instructions", "result.serverInfo.title"}},
				{id: 2, has: []string{"result.tools.0.inputSchema", "result.nextCursor"}, not: []string{"result.tools.0.outputSchema", "result.tools.0.annotations", "result.tools.0.title", "result.ttlMs", "result.resultType"}},
				{id: 3, has: []string{"result.content.0.text"}, not: []string{"result.structuredContent"}}}},
		{name: "2025-03-26 has annotations only", frames: []string{initReq(1, Rev20250326), req(2, "tools/list", nil)},
			wants: []want{{id: 1}, {id: 2, has: []string{"result.tools.0.annotations"}, not: []string{"result.tools.0.outputSchema"}}}},
		{name: "discover after initialize needs _meta", frames: []string{initReq(1, Rev20251125), req(2, "server/discover", nil), mreq(3, "tools/list", nil)},
			wants: []want{{id: 1}, {id: 2, code: -32601}, {id: 3, eq: map[string]any{"result.resultType": "complete"}}}},
		{name: "unknown method", frames: []string{initReq(1, Rev20251125), req(2, "prompts/list", nil)}, wants: []want{{id: 1}, {id: 2, code: -32601}}},
	})
}

func TestStdioProfiles(t *testing.T) {
	runStdioCases(t, []stdioCase{
		{name: "modern refuses initialize", o: Options{Profile: "modern"}, frames: []string{initReq(1, Rev20251125), req(2, "ping", nil), mreq(3, "tools/list", nil)},
			wants: []want{{id: 1, code: -32022, eq: map[string]any{"error.data.supported": []string{Rev20260728}, "error.data.requested": Rev20251125}},
				{id: 2, code: -32601}, {id: 3, has: []string{"result.tools.0"}}}},
		{name: "legacy has no discover", o: Options{Profile: "legacy"}, frames: []string{mreq(1, "server/discover", nil), initReq(2, Rev20250618), req(3, "tools/list", nil), req(4, "tools/call", call("add", badAdd))},
			wants: []want{{id: 1, code: -32601}, {id: 2, eq: map[string]any{"result.protocolVersion": Rev20241105}},
				{id: 3, not: []string{"result.tools.0.outputSchema", "result.nextCursor"}}, {id: 4, code: -32602}}},
		{name: "sloppy errors", o: Options{Profile: "sloppy-errors"}, frames: []string{
			mreq(1, "tools/call", call("nope", nil)), mreq(2, "resources/list", nil), mreq(3, "tools/call", call("add", badAdd)),
			"{oops", `{"jsonrpc":"2.0","id":5}`, req(6, "tools/list", nil), mreqRev(7, "tools/list", nil, "2099-01-01")},
			wants: []want{{id: 1, has: []string{"result.content.0.text"}, not: []string{"result.isError"}},
				{id: 2, eq: map[string]any{"result.resultType": "complete"}}, {id: 3, code: -32603},
				{id: 5, code: -32000}, {id: 6, code: -32603}, {id: 7, code: -32603}}},
		{name: "sloppy legacy", o: Options{Profile: "sloppy-errors"}, frames: []string{initReq(1, Rev20250618), req(2, "nope/nope", nil), req(3, "tools/call", call("add", badAdd))},
			wants: []want{{id: 1}, {id: 2, eq: map[string]any{"result": map[string]any{}}}, {id: 3, code: -32603}}},
		{name: "vacuous", o: Options{Profile: "vacuous"}, frames: []string{mreq(1, "tools/list", nil), mreq(2, "tools/call", call("run_query", map[string]any{"sql": "select 1"}))},
			wants: []want{{id: 1, eq: map[string]any{"result.tools.0.outputSchema": map[string]any{"type": "object"},
				"result.tools.2.outputSchema.x-fastmcp-wrap-result": true, "result.tools.1.outputSchema.$ref": "#/$defs/item"}},
				{id: 2, has: []string{"result.structuredContent.result.0"}}}},
		{name: "ref-cycle", o: Options{Profile: "ref-cycle"}, frames: []string{mreq(1, "tools/list", nil), mreq(2, "tools/call", call("loop", nil))},
			wants: []want{{id: 1, eq: map[string]any{"result.tools.1.name": "loop", "result.tools.1.outputSchema.$defs.a.$ref": "#/$defs/b",
				"result.tools.1.outputSchema.$defs.b.$ref": "#/$defs/a", "result.tools.2.name": "tree"}},
				{id: 2, eq: map[string]any{"result.structuredContent.ok": true}}}},
		{name: "bad-schema", o: Options{Profile: "bad-schema"}, frames: []string{mreq(1, "tools/list", nil), mreq(2, "tools/call", call("bad name", nil))},
			wants: []want{{id: 1, eq: map[string]any{"result.tools.1.outputSchema.properties.count.type": "integr",
				"result.tools.3.inputSchema": map[string]any{"type": "string"}, "result.tools.4.name": "echo",
				"result.tools.5.name": "bad name", "result.tools.9.name": ""}},
				{id: 2, eq: map[string]any{"result.content.0.text": "ok"}}}},
	})
}

func TestStdioDriftingVersions(t *testing.T) {
	list := func(version string) map[string]map[string]any {
		p := startStdio(t, Options{Profile: "drifting", Version: version, DriftAfter: -1})
		p.send(mreq(1, "tools/list", nil))
		f := p.frame()
		tools := map[string]map[string]any{}
		raw, _ := get(f, "result.tools")
		for _, t := range raw.([]any) {
			m := t.(map[string]any)
			tools[m["name"].(string)] = m
		}
		if v, _ := get(f, "result._meta."+metaServerInfo+".version"); v != version {
			t.Errorf("serverInfo.version = %v, want %s", v, version)
		}
		return tools
	}
	v1, v2 := list("1"), list("2")
	checks := []struct {
		what string
		ok   bool
	}{
		{"export_csv removed", v1["export_csv"] != nil && v2["export_csv"] == nil},
		{"summarize added", v1["summarize"] == nil && v2["summarize"] != nil},
		{"query renamed to q", has(v1["search"], "inputSchema.properties.query") && has(v2["search"], "inputSchema.properties.q") && !has(v2["search"], "inputSchema.properties.query")},
		{"kelvin removed", len(at(v1["weather"], "inputSchema.properties.units.enum")) == 3 && len(at(v2["weather"], "inputSchema.properties.units.enum")) == 2},
		{"tenant required", len(at(v1["get_user"], "inputSchema.required")) == 1 && len(at(v2["get_user"], "inputSchema.required")) == 2},
		{"echo description changed", v1["echo"]["description"] != v2["echo"]["description"]},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("drift %s: not so", c.what)
		}
	}
}

func has(m map[string]any, path string) bool { _, ok := get(m, path); return ok }

func at(m map[string]any, path string) []any {
	v, _ := get(m, path)
	a, _ := v.([]any)
	return a
}

func TestStdioRugPull(t *testing.T) {
	t.Run("legacy", func(t *testing.T) {
		p := startStdio(t, Options{Profile: "drifting", DriftAfter: 2})
		p.send(initReq(1, Rev20251125), notif("notifications/initialized", nil))
		p.frame()
		p.send(req(2, "tools/list", nil))
		if d, _ := get(p.frame(), "result.tools.2.description"); d != weatherDesc {
			t.Fatalf("first list: weather description %q", d)
		}
		p.send(req(3, "tools/list", nil))
		if d, _ := get(p.frame(), "result.tools.2.description"); d != weatherDesc {
			t.Fatalf("second list: weather description %q", d)
		}
		f := p.frame()
		if f["method"] != "notifications/tools/list_changed" {
			t.Fatalf("want list_changed after the Nth list, got %s", short(f))
		}
		p.send(req(4, "tools/list", nil))
		if d, _ := get(p.frame(), "result.tools.2.description"); d != rugPullDesc {
			t.Fatalf("after drift: weather description %q", d)
		}
		if err := p.close(); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("modern listen", func(t *testing.T) {
		p := startStdio(t, Options{Profile: "drifting", DriftAfter: 1})
		p.send(mreq("L", "subscriptions/listen", map[string]any{"notifications": map[string]any{"toolsListChanged": true}}))
		want{eq: map[string]any{"method": "notifications/subscriptions/acknowledged", "params.notifications.toolsListChanged": true,
			"params._meta." + metaSubscription: "L"}}.checkNotification(t, p.frame())
		p.send(mreq(1, "tools/list", nil))
		want{id: 1, eq: map[string]any{"result.ttlMs": 0}}.check(t, p.frame())
		want{eq: map[string]any{"method": "notifications/tools/list_changed", "params._meta." + metaSubscription: "L"}}.checkNotification(t, p.frame())
		// Cancelling the listen stops the notifications.
		p.send(notif("notifications/cancelled", map[string]any{"requestId": "L"}))
		if err := p.close(); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("no drift when negative", func(t *testing.T) {
		p := startStdio(t, Options{Profile: "drifting", DriftAfter: -1})
		p.send(initReq(1, Rev20251125))
		p.frame()
		for i := 2; i < 6; i++ {
			p.send(req(i, "tools/list", nil))
			if d, _ := get(p.frame(), "result.tools.2.description"); d != weatherDesc {
				t.Fatalf("list %d: description changed", i)
			}
		}
	})
}

func (w want) checkNotification(t *testing.T, f map[string]any) {
	t.Helper()
	if _, ok := f["id"]; ok {
		t.Errorf("notification has an id: %s", short(f))
	}
	for p, v := range w.eq {
		if got, ok := get(f, p); !ok || !jsonEqual(got, v) {
			t.Errorf("%s = %v, want %v in %s", p, got, v, short(f))
		}
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(norm(a))
	y, _ := json.Marshal(norm(b))
	return bytes.Equal(x, y)
}

func TestStdioHostile(t *testing.T) {
	t.Run("hugeline", func(t *testing.T) {
		p := startStdio(t, Options{Profile: "hugeline", HugeBytes: 1 << 20})
		p.send(mreq(1, "tools/list", nil))
		line := p.recv()
		if len(line) < 1<<20-64 || len(line) > 1<<20+64 {
			t.Fatalf("line is %d bytes, want about %d", len(line), 1<<20)
		}
		want{id: 1, has: []string{"result.tools.4"}}.check(t, decode(t, line))
		p.send(mreq(2, "tools/call", call("echo", echoArgs)))
		want{id: 2}.check(t, p.frame())
	})
	t.Run("crash", func(t *testing.T) {
		p := startStdio(t, Options{Profile: "crash"})
		p.send(mreq(1, "server/discover", nil))
		want{id: 1}.check(t, p.frame())
		p.send(mreq(2, "tools/list", nil))
		line := p.recv()
		if json.Valid(line) || !bytes.HasPrefix(line, []byte(`{"jsonrpc":"2.0","id":2`)) {
			t.Fatalf("want half a frame, got %.100s", line)
		}
		if err := <-p.done; !errors.Is(err, ErrCrashed) {
			t.Fatalf("ServeStdio = %v, want ErrCrashed", err)
		}
	})
	t.Run("cursor-loop", func(t *testing.T) {
		p := startStdio(t, Options{Profile: "cursor-loop"})
		seen := map[string]int{}
		cursor := ""
		for i := range 6 {
			params := map[string]any{}
			if cursor != "" {
				params["cursor"] = cursor
			}
			p.send(mreq(i, "tools/list", params))
			next, ok := get(p.frame(), "result.nextCursor")
			if !ok {
				t.Fatalf("page %d ended the listing", i)
			}
			cursor = next.(string)
			seen[cursor]++
		}
		if len(seen) != 2 {
			t.Fatalf("cursors %v, want two cycling", seen)
		}
	})
	t.Run("deep-schema", func(t *testing.T) {
		p := startStdio(t, Options{Profile: "deep-schema"})
		p.send(mreq(1, "tools/list", nil), mreq(2, "tools/call", call("deep", nil)))
		line := p.recv()
		if n := bytes.Count(line, []byte(`"properties":{"n":`)); n != DefaultSchemaDepth-1 {
			t.Fatalf("nesting = %d, want %d", n, DefaultSchemaDepth-1)
		}
		if !bytes.HasPrefix(line, []byte(`{"jsonrpc":"2.0","id":1,"result":{`)) || !bytes.HasSuffix(line, []byte("}")) {
			t.Fatalf("frame shape: %.60s … %s", line, line[max(0, len(line)-60):])
		}
		// Deeper than encoding/json will decode (the point), yet the cheap
		// peek still finds the id so a client can fail the request at once.
		var v any
		if err := json.Unmarshal(line, &v); err == nil {
			t.Fatal("encoding/json decoded a 10,000-deep schema; the profile is not deep enough")
		}
		if p, err := jsonrpc.PeekFrame(line); err != nil || string(p.ID) != "1" {
			t.Fatalf("peek of the deep frame: %+v %v", p, err)
		}
		want{id: 2, has: []string{"result.structuredContent.n"}}.check(t, p.frame())
	})
	t.Run("deep-schema small", func(t *testing.T) {
		p := startStdio(t, Options{Profile: "deep-schema", SchemaDepth: 3})
		p.send(mreq(1, "tools/list", nil))
		want{id: 1, eq: map[string]any{"result.tools.1.outputSchema.properties.n.properties.n": map[string]any{"type": "object"}}}.check(t, p.frame())
	})
	t.Run("noisy-stdout", func(t *testing.T) {
		p := startStdio(t, Options{Profile: "noisy-stdout"})
		if l := p.recv(); json.Valid(l) {
			t.Fatalf("want a start-up log line, got %s", l)
		}
		p.send(mreq(1, "server/discover", nil))
		if l := p.recv(); !strings.HasPrefix(string(l), "[testbed] INFO") {
			t.Fatalf("want a log line before the frame, got %.80s", l)
		}
		want{id: 1}.check(t, p.frame())
	})
	t.Run("flood", func(t *testing.T) {
		p := startStdio(t, Options{Profile: "flood", Delay: 1, NoiseBytes: 512})
		p.send(mreq(1, "server/discover", nil))
		noise := 0
		for {
			l := p.recv()
			if !json.Valid(l) {
				noise++
				continue
			}
			f := decode(t, l)
			if f["method"] == "notifications/message" {
				noise++
				continue
			}
			want{id: 1}.check(t, f)
			break
		}
		for noise < 100 { // the noise goes on after the answer
			p.recv()
			noise++
		}
		p.in.Close()
		p.outR.Close()
		if err := <-p.done; err != nil {
			t.Fatalf("ServeStdio = %v", err)
		}
	})
}

func TestStdioOversizeLine(t *testing.T) {
	p := startStdio(t, Options{})
	p.send(strings.Repeat("x", maxInFrame+10), mreq(1, "server/discover", nil))
	want{id: nil, code: -32600}.check(t, p.frame())
	want{id: 1}.check(t, p.frame())
}

func TestStdioReturns(t *testing.T) {
	var out bytes.Buffer
	err := ServeStdio(t.Context(), Options{}, strings.NewReader(mreq(1, "server/discover", nil)), &out, io.Discard)
	if err != nil || !json.Valid(bytes.TrimSpace(out.Bytes())) {
		t.Fatalf("err = %v, out = %s", err, out.Bytes())
	}
	if err := ServeStdio(t.Context(), Options{Profile: "nope"}, strings.NewReader(""), &out, io.Discard); err == nil {
		t.Fatal("unknown profile accepted")
	}
	if err := ServeStdio(t.Context(), Options{Revisions: []string{"1999-01-01"}}, strings.NewReader(""), &out, io.Discard); err == nil {
		t.Fatal("unknown revision accepted")
	}
	// Cancellation returns even while stdin stays open.
	ctx, cancel := context.WithCancel(t.Context())
	r, w := io.Pipe()
	defer w.Close()
	errc := make(chan error, 1)
	go func() { errc <- ServeStdio(ctx, Options{}, r, io.Discard, io.Discard) }()
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("after cancel: %v", err)
	}
}

func TestStdioHang(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inR, inW := io.Pipe()
		var out bytes.Buffer
		done := make(chan error, 1)
		go func() { done <- ServeStdio(t.Context(), Options{Profile: "hang"}, inR, &out, io.Discard) }()
		if _, err := io.WriteString(inW, mreq(1, "server/discover", nil)+"\n"+initReq(2, Rev20251125)+"\n"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Hour)
		synctest.Wait()
		if out.Len() != 0 {
			t.Fatalf("hang answered: %s", out.Bytes())
		}
		inW.Close()
		if err := <-done; err != nil {
			t.Fatalf("ServeStdio = %v", err)
		}
	})
}

// TestStdioSlowStart: slow-start reads nothing for its start-up delay,
// then answers what came meanwhile in order, server/discover first; the
// delay is fake time, so the order is all the test sees.
func TestStdioSlowStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inR, inW := io.Pipe()
		out := &testutil.SyncBuffer{}
		done := make(chan error, 1)
		go func() {
			done <- ServeStdio(t.Context(), Options{Profile: "slow-start", StartDelay: 3 * time.Second}, inR, out, io.Discard)
		}()
		go func() {
			_, _ = io.WriteString(inW, mreq(1, "server/discover", nil)+"\n")
			time.Sleep(2 * time.Second) // a client's discover timeout
			_, _ = io.WriteString(inW, initReq(2, Rev20251125)+"\n")
		}()
		time.Sleep(2999 * time.Millisecond)
		synctest.Wait()
		if out.String() != "" {
			t.Fatalf("answered before its start-up delay: %s", out.String())
		}
		time.Sleep(time.Second)
		synctest.Wait()
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if len(lines) != 2 {
			t.Fatalf("replies %q", lines)
		}
		want{id: 1, eq: map[string]any{"result.resultType": "complete"}}.check(t, decode(t, []byte(lines[0])))
		want{id: 2, eq: map[string]any{"result.protocolVersion": Rev20251125}}.check(t, decode(t, []byte(lines[1])))
		inW.Close()
		if err := <-done; err != nil {
			t.Fatalf("ServeStdio = %v", err)
		}
	})
}

// TestStdioLinger: linger stays up after its stdin closed, until its
// context ends.
func TestStdioLinger(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() {
			done <- ServeStdio(ctx, Options{Profile: "linger"}, strings.NewReader(""), io.Discard, io.Discard)
		}()
		time.Sleep(time.Hour)
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("linger returned at the end of its stdin: %v", err)
		default:
		}
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("ServeStdio = %v, want canceled", err)
		}
	})
}

// TestStdioPreamble: json-preamble writes its JSON line before anything
// else, then serves as good does.
func TestStdioPreamble(t *testing.T) {
	var out bytes.Buffer
	in := strings.NewReader(mreq(1, "server/discover", nil) + "\n")
	if err := ServeStdio(t.Context(), Options{Profile: "json-preamble"}, in, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || lines[0] != `{"preamble":true}` {
		t.Fatalf("stdout %q", lines)
	}
	want{id: 1, eq: map[string]any{"result.resultType": "complete"}}.check(t, decode(t, []byte(lines[1])))
}

// TestStdioTypical: the typical profile's answers, as the TypeScript SDK's
// McpServer words them.
func TestStdioTypical(t *testing.T) {
	legacy := req
	runStdioCases(t, []stdioCase{{
		name: "typical",
		o:    Options{Profile: "typical"},
		frames: []string{initReq(1, Rev20251125),
			legacy(2, "tools/call", call("nope", nil)),
			legacy(3, "resources/templates/list", nil),
			legacy(4, "resources/read", map[string]any{"uri": "testbed://cluster/health"}),
			legacy(5, "prompts/list", nil),
			legacy(6, "prompts/get", map[string]any{"name": "nope"}),
		},
		wants: []want{
			{id: 1, eq: map[string]any{"result.protocolVersion": Rev20251125}},
			{id: 2, eq: map[string]any{"result.isError": true, "result.content.0.text": "MCP error -32602: Tool nope not found"}},
			{id: 3, code: -32601, eq: map[string]any{"error.message": "Method not found"}},
			{id: 4, code: -32603, eq: map[string]any{"error.message": "MCP error -32603: connect ECONNREFUSED 127.0.0.1:9200"}},
			{id: 5, eq: map[string]any{"result.prompts": []any{}}},
			{id: 6, code: -32602, eq: map[string]any{"error.message": "MCP error -32602: unknown prompt"}},
		},
	}})
}
