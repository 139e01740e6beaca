package proxy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
)

const (
	initReq   = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	initNote  = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	echoCall  = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`
	listCall  = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	pingCall  = `{"jsonrpc":"2.0","id":3,"method":"ping"}`
	echoReply = `{"jsonrpc":"2.0","id":2,"result":{"content":[{"text":"{\"length\":5,\"text\":\"hello\"}","type":"text"}],"structuredContent":{"length":5,"text":"hello"}}}`
)

// observation is what a client saw for the call under test (id 2).
type observation struct {
	frames  [][]byte // every frame after the handshake, in arrival order
	call    [][]byte // frames that parse as JSON with id 2, or do not parse at all
	ping    bool     // the ping (id 3), sent right after the call, was answered
	pingIdx int      // position of the ping reply in frames
	eof     bool     // the stream ended
	took    time.Duration
	status  int    // HTTP only
	ctype   string // HTTP only
	err     error  // HTTP only: transport error reading the reply
	hung    bool   // the reply never completed (HTTP), the observation hung (stdio)
}

func (o observation) String() string {
	var b strings.Builder
	for _, f := range o.frames {
		fmt.Fprintf(&b, "  %.200s\n", f)
	}
	return fmt.Sprintf("ping=%v eof=%v status=%d ctype=%q err=%v hung=%v took=%s\n%s", o.ping, o.eof, o.status, o.ctype, o.err, o.hung, o.took, b.String())
}

func idOf(frame []byte) (string, bool) {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(frame, &m) != nil {
		return "", false
	}
	return string(m.ID), true
}

// observeStdio drives the testbed through the proxy: handshake, the call,
// a ping. It reads until the ping is answered and the client has seen what
// the case awaits (stdioAwait), or the stream ends; then for settle more,
// where a frame too many (a second duplicate) would show. Absence is all a
// short settle can miss, never a frame the case needs; only a hang reaches
// testutil.Hang.
func observeStdio(t *testing.T, planSrc, call string, await stdioAwaits, settle time.Duration) observation {
	t.Helper()
	in, out, _ := startStdio(t, plan(t, planSrc), nil, "testbed", "MCPDRILL_PROFILE=good")
	lines := make(chan []byte, 64)
	go func() {
		defer close(lines)
		for {
			l, err := out.ReadBytes('\n')
			if len(l) > 0 {
				lines <- bytes.TrimRight(l, "\n")
			}
			if err != nil {
				return
			}
		}
	}()
	fmt.Fprintln(in, initReq)
	select {
	case <-lines:
	case <-time.After(testutil.Hang):
		t.Fatalf("no initialize reply in %v", testutil.Hang)
	}
	start := time.Now()
	fmt.Fprintln(in, initNote)
	fmt.Fprintln(in, call)
	fmt.Fprintln(in, pingCall)
	var o observation
	hang := time.After(testutil.Hang)
	var settleC <-chan time.Time
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				o.eof = true
				o.took = time.Since(start)
				return o
			}
			o.frames = append(o.frames, l)
			id, valid := idOf(l)
			switch {
			case valid && id == "3":
				o.ping, o.pingIdx = true, len(o.frames)-1
			case !valid || id == "2":
				o.call = append(o.call, l)
			}
			if settleC == nil && o.ping && await.seen(o) {
				settleC = time.After(settle)
			}
		case <-settleC:
			o.took = time.Since(start)
			in.Close()
			return o
		case <-hang:
			o.took, o.hung = time.Since(start), true
			return o
		}
	}
}

// stdioAwaits is what a stdio observation waits for besides the ping's
// answer: call frames (id 2, or not parsing), and a notification.
type stdioAwaits struct {
	calls int
	note  string
}

func (a stdioAwaits) seen(o observation) bool {
	return len(o.call) >= a.calls && (a.note == "" || bytes.Contains(bytes.Join(o.frames, nil), []byte(a.note)))
}

// stdioAwait is stdioAwaits by case name, for the cases that do not await
// one call frame: those whose reply never comes, or comes twice or with a
// notification. A disconnect ends the stream, which ends the observation.
var stdioAwait = map[string]stdioAwaits{
	"timeout":   {calls: 0},
	"drop":      {calls: 0},
	"duplicate": {calls: 2},
	"drop-tool": {calls: 1, note: "notifications/tools/list_changed"},
}

type faultCase struct {
	name  string
	plan  string
	call  string
	check func(t *testing.T, o observation)
}

func hasSentinel(b []byte) bool { return bytes.Contains(b, []byte(`\u0000mcpd`)) }

// commonFaultCases: the faults a client observes alike over stdio and
// Streamable HTTP (JSON or SSE replies), each stating what it observes.
var commonFaultCases = []faultCase{
	{"error", "fault: error\n    tool: echo\n    params: {code: -32001, message: injected}", echoCall, func(t *testing.T, o observation) {
		if len(o.call) != 1 || string(o.call[0]) != `{"error":{"code":-32001,"message":"injected"},"id":2,"jsonrpc":"2.0"}` {
			t.Errorf("want a JSON-RPC error for id 2:\n%v", o)
		}
	}},
	{"duplicate", "fault: duplicate\n    tool: echo", echoCall, func(t *testing.T, o observation) {
		if len(o.call) != 2 || string(o.call[0]) != echoReply || string(o.call[1]) != echoReply {
			t.Errorf("want the reply twice:\n%v", o)
		}
	}},
	{"schema-break", "fault: schema-break\n    tool: echo", echoCall, func(t *testing.T, o observation) {
		if len(o.call) != 1 || string(o.call[0]) == echoReply || !json.Valid(o.call[0]) {
			t.Errorf("want a valid reply with changed types:\n%v", o)
		}
	}},
	{"slow", "fault: slow\n    tool: echo\n    params: {chunk: 40, gap: 20ms}", echoCall, func(t *testing.T, o observation) {
		if len(o.call) != 1 || string(o.call[0]) != echoReply || o.took < 60*time.Millisecond {
			t.Errorf("want the reply intact after dribbling:\n%v", o)
		}
	}},
}

// stdioFaultCases: one per fault, each stating what the client observes
// over stdio: the faults it sees its own way there, then commonFaultCases.
var stdioFaultCases = append([]faultCase{
	{"timeout", "fault: timeout\n    tool: echo", echoCall, func(t *testing.T, o observation) {
		if len(o.call) != 0 || !o.ping {
			t.Errorf("want the call unanswered and the ping answered:\n%v", o)
		}
	}},
	{"latency", "fault: latency\n    tool: echo\n    params: {latency: 300ms}", echoCall, func(t *testing.T, o observation) {
		// That the ping is not held behind the delayed reply (no
		// head-of-line blocking) is TestLatencyTimingNoHeadOfLineBlocking's,
		// in virtual time; here the order would depend on the scheduler.
		if len(o.call) != 1 || string(o.call[0]) != echoReply || o.took < 300*time.Millisecond {
			t.Errorf("want the call 300ms late:\n%v", o)
		}
	}},
	{"corrupt", "fault: corrupt\n    tool: echo", echoCall, func(t *testing.T, o observation) {
		if len(o.call) != 1 || !hasSentinel(o.call[0]) || !bytes.Contains(o.call[0], []byte(`"length":-999999999`)) {
			t.Errorf("want a well-typed reply with sentinel leaves:\n%v", o)
		}
	}},
	{"truncate", "fault: truncate\n    tool: echo\n    params: {keep: 0.5}", echoCall, func(t *testing.T, o observation) {
		if len(o.call) != 1 || json.Valid(o.call[0]) || !strings.HasPrefix(echoReply, string(o.call[0])) || !o.ping {
			t.Errorf("want a cut line (prefix of the reply), then the ping:\n%v", o)
		}
	}},
	{"malformed", "fault: malformed\n    tool: echo\n    params: {variant: result-and-error}", echoCall, func(t *testing.T, o observation) {
		if len(o.call) != 1 || !bytes.Contains(o.call[0], []byte(`"error"`)) || !bytes.Contains(o.call[0], []byte(`"result"`)) {
			t.Errorf("want both result and error:\n%v", o)
		}
	}},
	{"error on the request (server never sees it)", "fault: error\n    direction: c2s\n    kinds: [request]\n    tool: echo", echoCall, func(t *testing.T, o observation) {
		if len(o.call) != 1 || !bytes.Contains(o.call[0], []byte(`-32603`)) {
			t.Errorf("want the proxy's error for id 2:\n%v", o)
		}
	}},
	{"drop", "fault: drop\n    tool: echo", echoCall, func(t *testing.T, o observation) {
		if len(o.call) != 0 || !o.ping {
			t.Errorf("want the reply gone:\n%v", o)
		}
	}},
	{"drop-tool", "fault: drop-tool\n    params: {name: echo, notify: true}", listCall, func(t *testing.T, o observation) {
		if len(o.call) != 1 || bytes.Contains(o.call[0], []byte(`"name":"echo"`)) || !bytes.Contains(o.call[0], []byte(`"name":"add"`)) ||
			!bytes.Contains(bytes.Join(o.frames, nil), []byte("notifications/tools/list_changed")) {
			t.Errorf("want echo missing from tools/list, then list_changed:\n%v", o)
		}
	}},
	{"rug-pull", "fault: rug-pull\n    params: {name: echo}", listCall, func(t *testing.T, o observation) {
		if len(o.call) != 1 || !bytes.Contains(o.call[0], []byte(`changed by mcpdrill rug-pull`)) || !bytes.Contains(o.call[0], []byte(`mcpdrill_rugpull`)) {
			t.Errorf("want echo's description and schema changed:\n%v", o)
		}
	}},
	{"disconnect", "fault: disconnect\n    tool: echo", echoCall, func(t *testing.T, o observation) {
		if !o.eof || len(o.call) != 0 || o.ping {
			t.Errorf("want the stream closed at the reply:\n%v", o)
		}
	}},
	{"disconnect kill", "fault: disconnect\n    tool: echo\n    params: {mode: kill}", echoCall, func(t *testing.T, o observation) {
		if !o.eof || len(o.call) != 0 || o.ping {
			t.Errorf("want the server killed at the reply:\n%v", o)
		}
	}},
}, commonFaultCases...)

func TestStdioFaultsAsObserved(t *testing.T) {
	names := map[string]bool{}
	for _, c := range stdioFaultCases {
		names[c.name] = true
		await, ok := stdioAwait[c.name]
		if !ok {
			await = stdioAwaits{calls: 1}
		}
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			o := observeStdio(t, "seed: 1\nrules:\n  - "+c.plan+"\n", c.call, await, 400*time.Millisecond)
			c.check(t, o)
		})
	}
	for name := range stdioAwait {
		if !names[name] {
			t.Errorf("stdioAwait names %q, which is no case", name)
		}
	}
}

var _ = bufio.NewReader
var _ = io.EOF
