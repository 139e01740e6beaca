package proxy

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/mcp"
)

const mixedPlan = `
seed: %d
session: determinism
rules:
  - fault: corrupt
    direction: c2s
    kinds: [request]
    method: tools/call
    probability: 0.2
  - fault: error
    method: tools/call
    probability: 0.2
  - fault: corrupt
    method: tools/call
    probability: 0.2
  - fault: duplicate
    method: tools/call
    probability: 0.2
  - fault: latency
    method: tools/call
    params: {latency: 5ms, jitter: 5ms}
    probability: 0.3
  - fault: malformed
    method: tools/call
    params: {variant: result-and-error}
    every: 4
`

// runSession drives 24 sequential echo calls through the proxy and returns
// the event log.
func runSession(t *testing.T, seed int) []byte {
	t.Helper()
	var log bytes.Buffer
	rec := NewJSONL(&log)
	in, out, wait := startStdio(t, plan(t, fmt.Sprintf(mixedPlan, seed)), rec, "testbed", "MCPDRILL_PROFILE=good")
	fmt.Fprintln(in, initReq)
	if _, err := out.ReadBytes('\n'); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(in, initNote)
	for i := 10; i < 34; i++ {
		fmt.Fprintf(in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"m%d"}}}`+"\n", i, i)
		for {
			l, err := out.ReadBytes('\n')
			if err != nil {
				t.Fatalf("call %d: %v", i, err)
			}
			if id, _ := idOf(bytes.TrimSpace(l)); id == fmt.Sprint(i) {
				break
			}
		}
	}
	in.Close()
	wait()
	if err := rec.Err(); err != nil {
		t.Fatal(err)
	}
	return log.Bytes()
}

func TestEventLogDeterminism(t *testing.T) {
	a, b, c := runSession(t, 7), runSession(t, 7), runSession(t, 8)
	if !bytes.Equal(a, b) {
		t.Fatalf("same seed, different logs:\n%s\n---\n%s", a, b)
	}
	if bytes.Equal(a, c) {
		t.Fatalf("different seeds, same log:\n%s", a)
	}
	if n := bytes.Count(a, []byte("\n")); n < 6 {
		t.Fatalf("too few events to mean anything (%d):\n%s", n, a)
	}
	for _, want := range []string{`"fault":"malformed"`, `"dir":"c2s"`, `"session":"determinism"`, `"seed":7`, `"tool":"echo"`} {
		if !strings.Contains(string(a), want) {
			t.Errorf("log lacks %s:\n%s", want, a)
		}
	}
	t.Logf("seed 7 log:\n%s", a)
}

// TestRealClientThroughStdio: the project's MCP client, through the proxy
// (a separate process) with no faults, sees exactly what it sees directly.
func TestRealClientThroughStdio(t *testing.T) {
	argv, denv := self("testbed", "MCPDRILL_PROFILE=good")
	_, penv := self("proxy", "MCPDRILL_CHILD_ROLE=testbed", "MCPDRILL_PROFILE=good")
	session := func(env []string) string { return clientSession(t, argv, env[len(env)-3:]) }
	direct := session(denv)
	proxied := session(penv)
	if direct != proxied {
		t.Fatalf("proxied session differs:\n%s\n---\n%s", direct, proxied)
	}
	if !strings.Contains(direct, `"name":"echo"`) {
		t.Fatalf("session did not list tools: %s", direct)
	}
}

// clientSession runs a fixed session with the project's client against a
// stdio command and renders what it saw.
func clientSession(t *testing.T, argv, env []string) string {
	t.Helper()
	return sessionOf(t, mcp.Config{Command: argv, Env: env}, 30*time.Second, "add", map[string]any{"a": 2, "b": 3})
}
