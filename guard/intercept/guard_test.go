package intercept

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrill/mcpdrill/guard"
	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
	"github.com/mcpdrill/mcpdrill/internal/mcp"
)

// TestGuardHintsNameTheStore: with a store other than the default, the
// commands a refusal suggests name it, quoted for a shell; the approve it
// suggests names the fingerprint of the set to review (F14, issue 35).
func TestGuardHintsNameTheStore(t *testing.T) {
	st, _ := guard.Open(t.TempDir())
	g, err := New(Options{Store: st, Server: "drifting", Hint: func(c guard.Command) string {
		s := "mcpdrill guard " + c.Verb + " --dir '/srv/pins dir' "
		if c.Fingerprint != "" {
			s += "--fingerprint " + c.Fingerprint + " "
		}
		return s + c.Server
	}, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	g.mu.Lock()
	g.confirmed = true // as after a listing: the store's status decides
	g.mu.Unlock()
	one := guard.NewToolSet([]mcp.Tool{{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)}})
	two := guard.NewToolSet([]mcp.Tool{{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)}, {Name: "rm", InputSchema: json.RawMessage(`{"type":"object"}`)}})
	for _, ts := range []guard.ToolSet{one, two} {
		if _, _, err := st.Observe("drifting", ts, guard.PostureDiscovery, "test", time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	msg, r := g.callAllowed("echo")
	b := string(g.refusal([]byte("1"), r, msg))
	approve := "mcpdrill guard approve --dir '/srv/pins dir' --fingerprint " + two.Fingerprint + " drifting"
	for _, want := range []string{"`" + approve + "`", `"approve":"` + approve + `"`, `"review":"mcpdrill guard diff --dir '/srv/pins dir' drifting"`} {
		if !strings.Contains(b, want) {
			t.Errorf("refusal %s does not hold %s", b, want)
		}
	}
	if _, _, err := st.Quarantine("drifting", "", "alice", time.Now()); err != nil {
		t.Fatal(err)
	}
	msg, r = g.callAllowed("echo")
	b = string(g.refusal([]byte("1"), r, msg))
	if !strings.Contains(b, `mcpdrill guard release --dir '/srv/pins dir' drifting`) || strings.Contains(b, `"approve"`) {
		t.Errorf("refusal of a quarantined server %s: want release, and no approve", b)
	}
}

// TestWithheldKeepsTheID: the withheld answer keeps the request's id and
// drops only what cannot be written back, whatever sits nested past
// encoding/json's limit.
func TestWithheldKeepsTheID(t *testing.T) {
	st, _ := guard.Open(t.TempDir())
	g, err := New(Options{Store: st, Server: "drifting", Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	deep := strings.Repeat(`[`, 10_001) + strings.Repeat(`]`, 10_001)
	for _, frame := range []string{
		`{"jsonrpc":"2.0","id":9,"result":{"tools":[` + deep + `],"ttlMs":5}}`,
		`{"jsonrpc":"2.0","id":9,"result":{"tools":[],"x":` + deep + `}}`,
		`{"jsonrpc":"2.0","id":9,"extra":` + deep + `,"result":{"tools":[{"name":"a"}]}}`,
		`{"jsonrpc":"2.0","id":9,"result":{"tools":[{"name":"a"}],"_meta":{"k":` + deep + `}}}`,
	} {
		out := g.withheld([]byte(frame), nil, "the tools/list answer could not be read as a tool list")
		m, err := jsonrpc.Decode(out)
		if err != nil || string(m.ID) != "9" {
			t.Fatalf("withheld answer %.80s: id %s, %v", out, m.ID, err)
		}
		var res struct {
			Tools []json.RawMessage          `json:"tools"`
			Meta  map[string]json.RawMessage `json:"_meta"`
		}
		if err := json.Unmarshal(m.Result, &res); err != nil || res.Tools == nil || len(res.Tools) != 0 || res.Meta["io.mcpdrill/guard"] == nil {
			t.Fatalf("withheld result %.120s: %v", m.Result, err)
		}
	}
}
