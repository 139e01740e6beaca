package intercept

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrill/mcpdrill/guard"
	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
)

// TestGuardHintsNameTheStore: with a store other than the default, the
// commands a refusal suggests name it, quoted for a shell.
func TestGuardHintsNameTheStore(t *testing.T) {
	st, _ := guard.Open(t.TempDir())
	g, err := New(Options{Store: st, Server: "drifting", Hint: func(verb string, args ...string) string {
		return "mcpdrill guard " + verb + " --dir '/srv/pins dir' " + strings.Join(args, " ")
	}, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if _, _, err := st.Quarantine("drifting", "", "alice", time.Now()); err != nil {
		t.Fatal(err)
	}
	g.mu.Lock()
	g.confirmed = true // as after a listing: the store's status decides
	g.mu.Unlock()
	msg, _ := g.callAllowed("echo")
	b := g.refusal([]byte("1"), guard.StatusQuarantined, msg)
	for _, want := range []string{`mcpdrill guard release --dir '/srv/pins dir' drifting`, `"approve":"mcpdrill guard approve --dir '/srv/pins dir' drifting"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("refusal %s does not hold %s", b, want)
		}
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
