package scan

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
	"github.com/mcpdrill/mcpdrill/internal/mcp"
)

// A stdio probe that failed is only taken for a dead server (and answered
// with a new session) when the server exited; a reply that was too large or
// undecodable says nothing of the kind.
func TestRunProbeReconnectsOnlyWhenTheServerExited(t *testing.T) {
	tests := []struct {
		name      string
		err       error
		reconnect bool
	}{
		{"exited", fmt.Errorf("%w: stdout closed", mcp.ErrServerExited), true},
		{"oversize reply", fmt.Errorf("%w: reply of 99 bytes discarded", mcp.ErrFrameTooLarge), false},
		{"undecodable reply", fmt.Errorf("%w: nesting", mcp.ErrUndecodable), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// The restart cannot succeed: a finding says whether it was tried.
			s := &scanner{cfg: mcp.Config{Command: []string{"/nonexistent/mcpdrill-test-server"}}, rep: &Report{}}
			p := s.runProbe(context.Background(), expectation{
				name: "unknown_method", rule: RuleErrUnknownMethod, want: "jsonrpc_error -32601",
				grade: wantCode(jsonrpc.CodeMethodNotFound, false),
				send:  func(context.Context) (*jsonrpc.Message, error) { return nil, tc.err },
			})
			if p.Verdict != VerdictCrash {
				t.Fatalf("verdict %s", p.Verdict)
			}
			if got := slices.Contains(rules(s.rep), RuleIncomplete); got != tc.reconnect {
				t.Fatalf("restart attempted %v, want %v: %+v", got, tc.reconnect, s.rep.Findings)
			}
		})
	}
}
