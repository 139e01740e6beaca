package scan

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/mcp"
	"github.com/mcpdrill/mcpdrill/internal/target"
)

// TestInvokeDeclared: a drift's invocation resolves names against the
// declared tools; a declared tool the server does not serve is unresolved
// and not invoked; a name nobody declared is a finding; executing against
// a server that cannot be reached returns the plan and the error.
func TestInvokeDeclared(t *testing.T) {
	obj := json.RawMessage(`{"type":"object"}`)
	declared := []mcp.Tool{{Name: "a", InputSchema: obj}, {Name: "b", InputSchema: obj}}
	cls := target.Classification{Class: target.Local}
	inv, fs, err := InvokeDeclared(context.Background(), mcp.Config{}, InvokeOptions{Tools: []string{"b", "a", "c"}, Seed: 1}, cls, declared, []string{"a"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if inv.Executed || inv.ResolvedAgainst != "declared" || len(inv.Calls) != 3 {
		t.Fatalf("plan %+v", inv)
	}
	want := map[string]string{"a": OutcomePlanned, "b": OutcomeUnresolved, "c": OutcomeUnresolved}
	for _, c := range inv.Calls {
		if c.Outcome != want[c.Tool] {
			t.Errorf("%s: outcome %s, want %s", c.Tool, c.Outcome, want[c.Tool])
		}
		if c.Tool == "b" && c.Detail != "declared but not served; not invoked" {
			t.Errorf("b: detail %q", c.Detail)
		}
	}
	if len(fs) != 1 || fs[0].Rule != RuleCallUnresolved || fs[0].Tool != "c" {
		t.Errorf("findings %+v, want one %s for c", fs, RuleCallUnresolved)
	}

	cfg := mcp.Config{URL: "http://127.0.0.1:1/mcp", RequestTimeout: time.Minute}
	inv, fs, err = InvokeDeclared(context.Background(), cfg, InvokeOptions{Tools: []string{"a"}, Execute: true}, cls, declared, []string{"a"}, nil)
	if err == nil || inv == nil || len(inv.Calls) != 1 || fs != nil {
		t.Errorf("unreachable server: invocation %+v, findings %v, error %v; want the plan and an error", inv, fs, err)
	}
}
