package proxy

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpdrill/mcpdrill/faults"
	"github.com/mcpdrill/mcpdrill/internal/mcp"
	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
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

// runSession drives 24 sequential echo calls through the proxy with plan p
// and returns the event log (its header line first).
func runSession(t *testing.T, p *faults.Plan) []byte {
	t.Helper()
	var log bytes.Buffer
	rec, err := NewJSONLog(&log, p)
	if err != nil {
		t.Fatal(err)
	}
	in, out, wait := startStdio(t, p, rec, "testbed", "MCPDRILL_PROFILE=good")
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

func mixed(t *testing.T, seed int) *faults.Plan { return plan(t, fmt.Sprintf(mixedPlan, seed)) }

// TestEventLogDeterminism: the same seed gives the same log, byte for byte,
// another seed another log; and the log replays itself: the plan read back
// from its header line gives the same log again.
func TestEventLogDeterminism(t *testing.T) {
	a, b, c := runSession(t, mixed(t, 7)), runSession(t, mixed(t, 7)), runSession(t, mixed(t, 8))
	if !bytes.Equal(a, b) {
		t.Fatalf("same seed, different logs:\n%s\n---\n%s", a, b)
	}
	replay, isLog, err := PlanFromLog(a)
	if !isLog || err != nil {
		t.Fatalf("the log's header did not read back as a plan: %v, %v", isLog, err)
	}
	if again := runSession(t, replay); !bytes.Equal(a, again) {
		t.Fatalf("the replayed log differs:\n%s\n---\n%s", a, again)
	}
	if bytes.Equal(a, c) {
		t.Fatalf("different seeds, same log:\n%s", a)
	}
	if n := bytes.Count(a, []byte("\n")) - 1; n < 6 {
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
	return sessionOf(t, mcp.Config{Command: argv, Env: env}, testutil.Hang, "add", map[string]any{"a": 2, "b": 3})
}

// TestPlanFromLog: only a log's header line is read as a plan; a plan file
// (YAML or one-line JSON) is not mistaken for one, and a header whose plan
// is invalid is reported.
func TestPlanFromLog(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		isLog, bad bool
	}{
		{"yaml plan", "seed: 1\nrules:\n  - fault: drop\n", false, false},
		{"json plan", `{"seed":1,"rules":[{"fault":"drop"}]}` + "\n", false, false},
		{"events only", `{"seed":1,"session":"s","dir":"s2c","index":0}` + "\n", false, false},
		{"null plan", `{"plan":null}` + "\n", false, false},
		{"empty", "", false, false},
		{"header", `{"plan":{"seed":5,"session":"x","rules":[{"fault":"drop","probability":0.5}]}}` + "\n" + `{"seed":5}` + "\n", true, false},
		{"header without a newline", `{"plan":{"seed":5,"rules":[{"fault":"drop"}]}}`, true, false},
		{"invalid header plan", `{"plan":{"rules":[{"fault":"nope"}]}}` + "\n", true, true},
	} {
		p, isLog, err := PlanFromLog([]byte(tc.data))
		if isLog != tc.isLog || (err != nil) != tc.bad || (isLog && !tc.bad && p == nil) {
			t.Errorf("%s: isLog %v, err %v; want isLog %v, bad %v", tc.name, isLog, err, tc.isLog, tc.bad)
		}
	}
}
