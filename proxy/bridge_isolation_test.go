package proxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
)

// isolationBridge serves the bridge fixture; a wait that goes wrong ends
// within the reply timeout rather than the test binary's.
func isolationBridge(t *testing.T, env ...string) string {
	t.Helper()
	return startBridgeWith(t, BridgeOptions{ReplyTimeout: time.Minute}, "bridge-fixture", env...)
}

// firstEvent waits for r's first event (nil when the response ended
// without one).
func firstEvent(r *sseRead) []byte {
	ev, ok := <-r.events
	if !ok {
		return nil
	}
	return ev
}

// drain waits for r to end and returns what it got.
func drain(r *sseRead) exchange {
	for range r.events {
	}
	return <-r.done
}

var holdingAs = regexp.MustCompile(`holding \w+ as (\\?"[^"\\]*\\?")`)

// TestBridgeSessionlessCrossTalk (F1): two sessionless (2026-07-28)
// clients share the server process. A's call sends progress, a log and a
// sampling request while B's call is in flight, B's POST being the latest
// open. None of it may reach B, nor may B answer A's sampling request; A
// gets its own progress (its token restored: A's token is the only
// reference that names A's request).
func TestBridgeSessionlessCrossTalk(t *testing.T) {
	url := isolationBridge(t)
	a := post(url, modernHeaders("tools/call", "chatty"), modernCall(t, 1, "chatty", map[string]any{"tag": "secret-a", "after": "b-started", "ask": true}, "tok-a"))
	if ev := firstEvent(a); !bytes.Contains(ev, []byte("chatty started")) {
		t.Fatalf("A's call: %q %v", ev, drain(a))
	}
	b := post(url, modernHeaders("tools/call", "hold"), modernCall(t, 1, "hold", map[string]any{"key": "b", "release": "b-started"}, "tok-b"))
	var aDone exchange
	bev := b.events
	for aDone.status == 0 && aDone.err == nil {
		select {
		case _, ok := <-a.events:
			if !ok {
				aDone = <-a.done // ends the loop
			}
		case ev, ok := <-bev:
			if !ok {
				bev = nil
				continue
			}
			if bytes.Contains(ev, []byte("sampling/createMessage")) {
				// B answers A's sampling request.
				var ask struct{ ID json.RawMessage }
				_ = json.Unmarshal(ev, &ask)
				answer := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":{"role":"assistant","content":{"type":"text","text":"from-b"},"model":"m"}}`, ask.ID)
				do(http.DefaultClient, http.MethodPost, url, modernHeaders("", ""), answer)
			}
		}
	}
	// B forges an answer to the server's own request id anyway.
	forged := do(http.DefaultClient, http.MethodPost, url, modernHeaders("", ""), []byte(`{"jsonrpc":"2.0","id":"ask-1","result":{"role":"assistant","content":{"type":"text","text":"from-b"},"model":"m"}}`))
	if forged.status == http.StatusAccepted {
		t.Errorf("an answer to a server request B was never given was accepted: %v", forged)
	}
	if ex := do(http.DefaultClient, http.MethodPost, url, modernHeaders("tools/call", "release"), modernCall(t, 9, "release", map[string]any{"key": "b"}, "")); ex.status != http.StatusOK {
		t.Fatalf("release: %v", ex)
	}
	bDone := drain(b)
	for _, leak := range []string{"secret-a", "tok-a", "sampling/createMessage"} {
		if bytes.Contains(bDone.body, []byte(leak)) {
			t.Errorf("B's response holds %q of A's exchange:\n%s", leak, bDone.body)
		}
	}
	if !bytes.Contains(bDone.body, []byte("held b")) {
		t.Errorf("B's call: %v", bDone)
	}
	all := aDone.body
	if bytes.Contains(all, []byte("from-b")) {
		t.Errorf("B's answer reached A's sampling request:\n%s", all)
	}
	if !bytes.Contains(all, []byte(`"progressToken":"tok-a"`)) {
		t.Errorf("A did not get its progress under its own token:\n%s", all)
	}
	if !bytes.Contains(all, []byte("chatty secret-a answered")) {
		t.Errorf("A's call: %s", all)
	}
}

// TestBridgeBatchMemberForgery (F2): B learns the id A's call travels
// under (the server here tells A, and the test tells B) and sends it as a
// batch member, a single request, an answer and a cancellation, while
// A's call is in flight, to a server that answers batch members one by one.
// A gets its own answer, and B none of A's.
func TestBridgeBatchMemberForgery(t *testing.T) {
	url := isolationBridge(t, "MCPDRILL_BATCH_SPLIT=1")
	a := post(url, modernHeaders("tools/call", "hold"), modernCall(t, 1, "hold", map[string]any{"key": "a"}, ""))
	ev := firstEvent(a)
	m := holdingAs.FindSubmatch(ev)
	if m == nil {
		t.Fatalf("A's call: no log naming its id: %q %v", ev, drain(a))
	}
	id := strings.ReplaceAll(string(m[1]), `\"`, `"`)
	member := func(text string) string {
		return string(modernCall(t, json.RawMessage(id), "echo", map[string]any{"text": text}, ""))
	}
	for name, body := range map[string]string{
		"batch":        "[" + member("forged-batch") + "]",
		"single":       member("forged-single"),
		"answer":       `{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"forged-answer"}]}}`,
		"cancellation": `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `}}`,
	} {
		ex := do(http.DefaultClient, http.MethodPost, url, modernHeaders("tools/call", "echo"), []byte(body))
		if bytes.Contains(ex.body, []byte("held a")) {
			t.Errorf("%s: B got A's answer: %v", name, ex)
		}
	}
	if ex := do(http.DefaultClient, http.MethodPost, url, modernHeaders("tools/call", "release"), modernCall(t, 9, "release", map[string]any{"key": "a"}, "")); ex.status != http.StatusOK {
		t.Fatalf("release: %v", ex)
	}
	got := drain(a)
	if !bytes.Contains(got.body, []byte("held a")) || bytes.Contains(got.body, []byte("forged")) {
		t.Fatalf("A's call got another answer than its own: %v", got)
	}
}

// TestBridgeBatchesOfTwoClients (F2): sessionless batches of two clients
// answered out of order are never matched to each other's POSTs.
func TestBridgeBatchesOfTwoClients(t *testing.T) {
	url := isolationBridge(t)
	a := post(url, modernHeaders("", ""), []byte("["+string(modernCall(t, 1, "hold", map[string]any{"key": "fa"}, ""))+"]"))
	firstEvent(a) // A's batch is in flight (or refused)
	b := drain(post(url, modernHeaders("", ""), []byte("["+string(modernCall(t, 1, "echo", map[string]any{"text": "b-batch"}, ""))+"]")))
	do(http.DefaultClient, http.MethodPost, url, modernHeaders("tools/call", "release"), modernCall(t, 9, "release", map[string]any{"key": "fa"}, ""))
	got := drain(a)
	if bytes.Contains(got.body, []byte("b-batch")) || bytes.Contains(b.body, []byte("held fa")) {
		t.Fatalf("the two clients' batches got each other's answers:\nA: %v\nB: %v", got, b)
	}
}

// TestBridgeBatchesOfOneSession: in a session, batches answered out of
// order each get their own answers (routed by their members' ids, never
// by the order they were sent in).
func TestBridgeBatchesOfOneSession(t *testing.T) {
	url := isolationBridge(t)
	hdr := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
	ex := do(http.DefaultClient, http.MethodPost, url, hdr, []byte(hostileInit))
	if ex.status != http.StatusOK || ex.header.Get(sessionHeader) == "" {
		t.Fatalf("initialize: %v", ex)
	}
	hdr.Set(sessionHeader, ex.header.Get(sessionHeader))
	hdr.Set("Mcp-Protocol-Version", "2025-06-18")
	call := func(id int, tool string, args map[string]any) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, must(json.Marshal(args)))
	}
	first := post(url, hdr, []byte("["+call(1, "hold", map[string]any{"key": "s1"})+"]"))
	if ev := firstEvent(first); !bytes.Contains(ev, []byte("holding s1")) {
		t.Fatalf("the first batch: %q %v", ev, drain(first))
	}
	second := do(http.DefaultClient, http.MethodPost, url, hdr, []byte("["+call(2, "echo", map[string]any{"text": "s2"})+"]"))
	do(http.DefaultClient, http.MethodPost, url, hdr, []byte(call(3, "release", map[string]any{"key": "s1"})))
	got := drain(first)
	if !bytes.Contains(second.body, []byte(`"text":"s2"`)) || !bytes.Contains(got.body, []byte("held s1")) {
		t.Fatalf("batches matched out of order:\nfirst: %v\nsecond: %v", got, second)
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// TestBridgeInitializeFloodKeepsSessions (F11): initializes past the
// session limit do not end a session that was just used: they are
// refused (503), and the session goes on.
func TestBridgeInitializeFloodKeepsSessions(t *testing.T) {
	url := startBridgeWith(t, BridgeOptions{MaxSessions: 2, ReplyTimeout: time.Minute}, "bridge-fixture")
	hdr := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json"}}
	ex := do(http.DefaultClient, http.MethodPost, url, hdr, []byte(hostileInit))
	sid := ex.header.Get(sessionHeader)
	if ex.status != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %v", ex)
	}
	mine := hdr.Clone()
	mine.Set(sessionHeader, sid)
	mine.Set("Mcp-Protocol-Version", "2025-06-18")
	echo := []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"still here"}}}`)
	if ex := do(http.DefaultClient, http.MethodPost, url, mine, echo); ex.status != http.StatusOK {
		t.Fatalf("a call in the session: %v", ex)
	}
	refused := 0
	for range 4 {
		ex := do(http.DefaultClient, http.MethodPost, url, hdr, []byte(hostileInit))
		switch ex.status {
		case http.StatusOK:
		case http.StatusServiceUnavailable:
			refused++
		default:
			t.Fatalf("flood initialize: %v", ex)
		}
	}
	if ex := do(http.DefaultClient, http.MethodPost, url, mine, echo); ex.status != http.StatusOK || !bytes.Contains(ex.body, []byte("still here")) {
		t.Fatalf("the session after the flood: %v", ex)
	}
	if refused != 3 {
		t.Fatalf("%d of 4 flood initializes refused, want 3 (the limit is 2)", refused)
	}
}

// TestBridgeAttributesToTheOnlyCall: what the shared process sends while a
// call is the only one in flight, and has been since it was sent, is that
// call's: its progress (under its own token again), its log, and the
// server's sampling request, which it answers under the id the bridge
// gave it. A reply with nothing before it is JSON even to a client that
// takes an event stream. Nothing is withheld.
func TestBridgeAttributesToTheOnlyCall(t *testing.T) {
	b, url := serveBridge(t, BridgeOptions{ReplyTimeout: time.Minute}, nil, "bridge-fixture")
	if ex := do(http.DefaultClient, http.MethodPost, url, modernHeaders("tools/call", "echo"), modernCall(t, 5, "echo", map[string]any{"text": "hi"}, "")); ex.status != http.StatusOK ||
		ex.header.Get("Content-Type") != "application/json" || !bytes.Contains(ex.body, []byte(`"id":5`)) {
		t.Fatalf("echo: %v", ex)
	}
	a := post(url, modernHeaders("tools/call", "chatty"), modernCall(t, 7, "chatty", map[string]any{"tag": "mine", "ask": true}, "tok"))
	var seen [][]byte
	for ev := range a.events {
		seen = append(seen, ev)
		if !bytes.Contains(ev, []byte("sampling/createMessage")) {
			continue
		}
		var ask struct{ ID json.RawMessage }
		_ = json.Unmarshal(ev, &ask)
		if !bytes.HasPrefix(ask.ID, []byte(`"mcpdrill-`)) {
			t.Errorf("the server's request reached the client under the server's id %s", ask.ID)
		}
		answer := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":{"role":"assistant","content":{"type":"text","text":"from-a"},"model":"m"}}`, ask.ID)
		if ex := do(http.DefaultClient, http.MethodPost, url, modernHeaders("", ""), answer); ex.status != http.StatusAccepted {
			t.Errorf("the answer to the server's request: %v", ex)
		}
		if ex := do(http.DefaultClient, http.MethodPost, url, modernHeaders("", ""), answer); ex.status != http.StatusBadRequest {
			t.Errorf("a second answer to the server's request: %v", ex)
		}
	}
	got := <-a.done
	all := bytes.Join(seen, []byte("\n"))
	for _, want := range []string{`"progressToken":"tok"`, "log of mine", `"id":7`, `chatty mine answered`, `from-a`, `\"id\":\"ask-1\"`} {
		if !bytes.Contains(all, []byte(want)) {
			t.Errorf("missing %s from the call's stream:\n%s\n%v", want, all, got)
		}
	}
	if n := b.Withheld(); n != 0 {
		t.Errorf("%d messages withheld", n)
	}
}

// TestBridgeStrayAnswersAreNobodys: on the shared process an answer no
// call waits for, and a line that is no message, are withheld even while a
// call is alone in flight: only notifications and requests are attributed.
func TestBridgeStrayAnswersAreNobodys(t *testing.T) {
	b, url := serveBridge(t, BridgeOptions{ReplyTimeout: time.Minute}, nil, "bridge-fixture")
	got := drain(post(url, modernHeaders("tools/call", "stray"), modernCall(t, 1, "stray", nil, "")))
	if !bytes.Contains(got.body, []byte("strayed")) || bytes.Contains(got.body, []byte("stray answer")) || bytes.Contains(got.body, []byte("stray line")) {
		t.Fatalf("%v", got)
	}
	if n := b.Withheld(); n != 2 {
		t.Fatalf("%d withheld, want 2", n)
	}
}

// TestBridgeAbandonedCallKeepsItsMessages: a sessionless client that goes
// away ends its call: the server is told (notifications/cancelled under
// the id the call travelled under), and until the server answers, the
// call stays in flight, so a call after it is not alone and gets none of
// the unnamed messages (which are withheld and counted), only those that
// name it.
func TestBridgeAbandonedCallKeepsItsMessages(t *testing.T) {
	b, url := serveBridge(t, BridgeOptions{ReplyTimeout: time.Minute}, nil, "bridge-fixture")
	ctx, cancel := context.WithCancel(t.Context())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(modernCall(t, 1, "hold", map[string]any{"key": "gone"}, "")))
	req.Header = modernHeaders("tools/call", "hold")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := jsonrpc.ReadEvent(bufio.NewReader(resp.Body), 1<<20, func([]byte) {})
	m := holdingAs.FindSubmatch(ev.Data)
	if err != nil || m == nil {
		t.Fatalf("the call: %q %v", ev.Data, err)
	}
	cancel()
	resp.Body.Close()
	id := strings.ReplaceAll(string(m[1]), `\"`, `"`)
	// The next call starts once the server has the cancellation.
	got := drain(post(url, modernHeaders("tools/call", "chatty"), modernCall(t, 2, "chatty", map[string]any{"tag": "next", "after": "cancelled " + id}, "t2")))
	if !bytes.Contains(got.body, []byte(`"progressToken":"t2"`)) || !bytes.Contains(got.body, []byte("chatty next")) {
		t.Fatalf("the next call: %v", got)
	}
	if bytes.Contains(got.body, []byte("log of next")) || bytes.Contains(got.body, []byte("chatty started")) {
		t.Fatalf("the next call got unnamed messages while the abandoned call was in flight: %v", got)
	}
	if n := b.Withheld(); n < 2 {
		t.Fatalf("%d messages withheld, want the two logs", n)
	}
}

// TestBridgeRefusesAmbiguousBodies: a sessionless request the bridge and
// the server could read differently (which id, which progress token,
// which name the header must match) is refused with 400 before the server
// sees it.
func TestBridgeRefusesAmbiguousBodies(t *testing.T) {
	url := isolationBridge(t)
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}`
	for name, body := range map[string]string{
		"two ids":          `{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/call","params":{"name":"echo",` + meta + `}}}`,
		"id and ID":        `{"jsonrpc":"2.0","id":1,"ID":"mcpdrill-x","method":"tools/call","params":{"name":"echo",` + meta + `}}}`,
		"two tokens":       `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo",` + meta + `,"progressToken":1,"ProgressToken":2}}}`,
		"two names":        `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","Name":"hold",` + meta + `}}}`,
		"two _meta":        `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo",` + meta + `},"_META":{}}}`,
		"two methods":      `{"jsonrpc":"2.0","id":1,"method":"tools/call","Method":"tools/list","params":{"name":"echo",` + meta + `}}}`,
		"a batch":          `[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo",` + meta + `}}}]`,
		"no session, 2025": `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`,
	} {
		hdr := modernHeaders("tools/call", "echo")
		if name == "no session, 2025" {
			hdr.Set("Mcp-Protocol-Version", "2025-11-25")
		}
		if ex := do(http.DefaultClient, http.MethodPost, url, hdr, []byte(body)); ex.status != http.StatusBadRequest || !bytes.Contains(ex.body, []byte(`"code":-32600`)) {
			t.Errorf("%s: %v", name, ex)
		}
	}
}

// TestBridgeHeaderRules: the transport's header rules, as the bridge
// enforces them for the stdio server behind it.
func TestBridgeHeaderRules(t *testing.T) {
	url := isolationBridge(t)
	legacy := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
	ex := do(http.DefaultClient, http.MethodPost, url, legacy, []byte(hostileInit))
	if ex.status != http.StatusOK {
		t.Fatalf("initialize: %v", ex)
	}
	legacy.Set(sessionHeader, ex.header.Get(sessionHeader))
	echo := func(id int) []byte {
		return modernCall(t, id, "echo", map[string]any{"text": "é"}, "")
	}
	legacyEcho := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`)
	for _, tt := range []struct {
		name   string
		body   []byte
		set    map[string][]string // headers set (nil value: removed)
		legacy bool
		status int
		code   string
	}{
		{"legacy, no version header", legacyEcho, nil, true, 200, ""},
		{"legacy, a known version", legacyEcho, map[string][]string{"Mcp-Protocol-Version": {"2025-03-26"}}, true, 200, ""},
		{"legacy, a bogus version", legacyEcho, map[string][]string{"Mcp-Protocol-Version": {"1999-01-01"}}, true, 400, ""},
		{"legacy, two versions", legacyEcho, map[string][]string{"Mcp-Protocol-Version": {"2025-06-18", "2025-03-26"}}, true, 400, ""},
		{"2026-07-28", echo(2), nil, false, 200, ""},
		{"no version header", echo(3), map[string][]string{"Mcp-Protocol-Version": nil}, false, 400, "-32020"},
		{"version header differs from _meta", echo(4), map[string][]string{"Mcp-Protocol-Version": {"2027-01-01"}}, false, 400, "-32020"},
		{"no Mcp-Method", echo(5), map[string][]string{"Mcp-Method": nil}, false, 400, "-32020"},
		{"Mcp-Method differs", echo(6), map[string][]string{"Mcp-Method": {"tools/list"}}, false, 400, "-32020"},
		{"no Mcp-Name", echo(7), map[string][]string{"Mcp-Name": nil}, false, 400, "-32020"},
		{"Mcp-Name differs", echo(8), map[string][]string{"Mcp-Name": {"hold"}}, false, 400, "-32020"},
		{"Mcp-Name in base64", echo(9), map[string][]string{"Mcp-Name": {"=?base64?ZWNobw==?="}}, false, 200, ""},
		{"Mcp-Name in bad base64", echo(10), map[string][]string{"Mcp-Name": {"=?base64?!!?="}}, false, 400, "-32020"},
		{"an unknown method", []byte(`{"jsonrpc":"2.0","id":11,"method":"nope/nope","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`),
			map[string][]string{"Mcp-Method": {"nope/nope"}, "Mcp-Name": nil}, false, 404, "-32601"},
		{"a notification", []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`),
			map[string][]string{"Mcp-Method": {"notifications/cancelled"}, "Mcp-Name": nil}, false, 202, ""},
		{"a notification, Mcp-Method differs", []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`),
			map[string][]string{"Mcp-Method": {"tools/call"}, "Mcp-Name": nil}, false, 400, "-32020"},
	} {
		hdr := modernHeaders("tools/call", "echo")
		if tt.legacy {
			hdr = legacy.Clone()
		}
		for k, v := range tt.set {
			if v == nil {
				hdr.Del(k)
			} else {
				hdr[http.CanonicalHeaderKey(k)] = v
			}
		}
		ex := do(http.DefaultClient, http.MethodPost, url, hdr, tt.body)
		if ex.status != tt.status || tt.code != "" && !bytes.Contains(ex.body, []byte(`"code":`+tt.code)) {
			t.Errorf("%s: %v, want %d %s", tt.name, ex, tt.status, tt.code)
		}
	}
}

// TestBridgeEndsOnlyIdleSessions: past MaxSessions a new session ends the
// one used least recently once it has been idle IdleGrace, never one with
// a stream open.
func TestBridgeEndsOnlyIdleSessions(t *testing.T) {
	url := startBridgeWith(t, BridgeOptions{MaxSessions: 1, IdleGrace: time.Nanosecond}, "bridge-fixture")
	hdr := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json"}}
	open := func() string {
		ex := do(http.DefaultClient, http.MethodPost, url, hdr, []byte(hostileInit))
		if ex.status != http.StatusOK {
			t.Fatalf("initialize: %v", ex)
		}
		return ex.header.Get(sessionHeader)
	}
	first := open()
	ctx, cancel := context.WithCancel(t.Context())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header = http.Header{"Accept": {"text/event-stream"}, sessionHeader: {first}}
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET: %v %v", resp, err)
	}
	if ex := do(http.DefaultClient, http.MethodPost, url, hdr, []byte(hostileInit)); ex.status != http.StatusServiceUnavailable {
		t.Fatalf("a session past the limit while the first has a stream open: %v", ex)
	}
	cancel()
	resp.Body.Close()
	var second string
	for second == "" { // the stream's end reaches the bridge in its own time
		ex := do(http.DefaultClient, http.MethodPost, url, hdr, []byte(hostileInit))
		switch ex.status {
		case http.StatusOK:
			second = ex.header.Get(sessionHeader)
		case http.StatusServiceUnavailable:
			time.Sleep(10 * time.Millisecond)
		default:
			t.Fatalf("initialize: %v", ex)
		}
	}
	ping := http.Header{"Content-Type": {"application/json"}, sessionHeader: {first}}
	if ex := do(http.DefaultClient, http.MethodPost, url, ping, []byte(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)); ex.status != http.StatusNotFound {
		t.Fatalf("the idle session that made room: %v", ex)
	}
}

// TestBridgeIDsAreTheBridges: what a sessionless request travels under on
// the shared process is the bridge's own id, 128 random bits, fresh for
// every request whatever id the client sent; a session id is 128 random
// bits too.
func TestBridgeIDsAreTheBridges(t *testing.T) {
	url := isolationBridge(t)
	sessions := map[string]bool{}
	for range 2 {
		ex := do(http.DefaultClient, http.MethodPost, url, http.Header{"Content-Type": {"application/json"}}, []byte(hostileInit))
		sid := ex.header.Get(sessionHeader)
		if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(sid) || sessions[sid] {
			t.Fatalf("session id %q (before: %v)", sid, sessions)
		}
		sessions[sid] = true
	}
	shape := regexp.MustCompile(`^"mcpdrill-[0-9a-f]{32}"$`)
	seen := map[string]bool{}
	for range 4 {
		ex := do(http.DefaultClient, http.MethodPost, url, modernHeaders("tools/call", "echo"), modernCall(t, "same", "echo", map[string]any{"text": "x"}, ""))
		var r struct {
			ID     json.RawMessage
			Result struct{ StructuredContent struct{ ID json.RawMessage } }
		}
		if err := json.Unmarshal(ex.body, &r); err != nil || string(r.ID) != `"same"` {
			t.Fatalf("%v", ex)
		}
		own := string(r.Result.StructuredContent.ID)
		if !shape.MatchString(own) || seen[own] {
			t.Fatalf("the server saw %s (before: %v)", own, seen)
		}
		seen[own] = true
	}
}

// TestBridgeErrorsNameNoCommand: what a client is told when the server
// cannot start names neither the command nor its path.
func TestBridgeErrorsNameNoCommand(t *testing.T) {
	b, err := NewBridge(BridgeOptions{Command: []string{"/nonexistent/secret-tool", "--token=hunter2"}, Stderr: testStderr(), OnError: func(error) {}})
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + serveLoopback(t, b.Serve) + "/mcp"
	for _, ex := range []exchange{
		do(http.DefaultClient, http.MethodPost, url, http.Header{"Content-Type": {"application/json"}}, []byte(hostileInit)),
		do(http.DefaultClient, http.MethodPost, url, modernHeaders("tools/call", "echo"), modernCall(t, 1, "echo", nil, "")),
	} {
		if ex.status < 500 || bytes.Contains(ex.body, []byte("secret-tool")) || bytes.Contains(ex.body, []byte("hunter2")) || bytes.Contains(ex.body, []byte("/nonexistent")) {
			t.Errorf("%v", ex)
		}
	}
}

// TestBridgeBoundsStreamsAndCalls: a session holds at most maxStreams GET
// streams, and a server process at most its call limit in flight; past
// either the bridge answers 503. (The limit is then raised, for the call
// that releases the two held.)
func TestBridgeBoundsStreamsAndCalls(t *testing.T) {
	b, url := serveBridge(t, BridgeOptions{ReplyTimeout: time.Minute}, func(b *Bridge) { b.callLimit = 2 }, "bridge-fixture")
	hdr := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json"}}
	ex := do(http.DefaultClient, http.MethodPost, url, hdr, []byte(hostileInit))
	if ex.status != http.StatusOK {
		t.Fatalf("initialize: %v", ex)
	}
	get := http.Header{"Accept": {"text/event-stream"}, sessionHeader: {ex.header.Get(sessionHeader)}}
	for i := range maxStreams + 1 {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
		req.Header = get
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if want := map[bool]int{true: http.StatusServiceUnavailable, false: http.StatusOK}[i == maxStreams]; resp.StatusCode != want {
			t.Fatalf("stream %d: %d, want %d", i+1, resp.StatusCode, want)
		}
	}
	var held []*sseRead
	for i := range 2 {
		r := post(url, modernHeaders("tools/call", "hold"), modernCall(t, i, "hold", map[string]any{"key": "k"}, ""))
		held = append(held, r)
	}
	inFlight := func() int {
		b.mu.Lock()
		s := b.shared
		b.mu.Unlock()
		if s == nil {
			return 0
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.live)
	}
	for inFlight() < 2 {
		for _, r := range held {
			select {
			case ex := <-r.done:
				t.Fatalf("a held call ended: %v", ex)
			default:
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	if ex := do(http.DefaultClient, http.MethodPost, url, modernHeaders("tools/call", "echo"), modernCall(t, 3, "echo", map[string]any{"text": "x"}, "")); ex.status != http.StatusServiceUnavailable {
		t.Fatalf("a third call: %v", ex)
	}
	b.mu.Lock()
	s := b.shared
	b.mu.Unlock()
	s.mu.Lock() // the limit is read under it
	b.callLimit = 3
	s.mu.Unlock()
	do(http.DefaultClient, http.MethodPost, url, modernHeaders("tools/call", "release"), modernCall(t, 9, "release", map[string]any{"key": "k"}, ""))
	for _, r := range held {
		drain(r)
	}
}
