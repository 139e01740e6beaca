// Package harness is the part every Go adapter of the client study shares:
// it reads the drill's context, performs its steps through the adapter's
// session and writes one report line per tools/call step.
package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"time"
)

// Context is MCP_CONFORMANCE_CONTEXT.
type Context struct {
	Name      string `json:"name"`
	TimeoutMS int    `json:"timeoutMs"`
	Server    struct {
		URL     string   `json:"url"`
		Command string   `json:"command"`
		Args    []string `json:"args"`
	} `json:"server"`
	Steps []struct {
		Op        string         `json:"op"`
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	} `json:"steps"`
}

// Session is what an adapter supplies.
type Session interface {
	List(ctx context.Context) error
	// Call returns what the application gets for a call.
	Call(ctx context.Context, name string, args map[string]any) (any, error)
	Close() error
}

var timeoutRE = regexp.MustCompile(`(?i)timed? ?out|timeout|deadline exceeded`)

// Drill runs the steps through the session connect returns, then exits.
func Drill(connect func(ctx context.Context, c *Context) (Session, error)) {
	var c Context
	if err := json.Unmarshal([]byte(os.Getenv("MCP_CONFORMANCE_CONTEXT")), &c); err != nil {
		fmt.Fprintln(os.Stderr, "context:", err)
		os.Exit(2)
	}
	ctx := context.Background()
	s, err := connect(ctx, &c)
	if err != nil {
		fmt.Fprintln(os.Stderr, "connect:", err)
		os.Exit(2)
	}
	enc := json.NewEncoder(os.Stdout)
	for _, st := range c.Steps {
		if st.Op == "tools/list" {
			if err := s.List(ctx); err != nil {
				fmt.Fprintln(os.Stderr, "list:", err)
			}
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, time.Duration(c.TimeoutMS)*time.Millisecond)
		v, err := s.Call(cctx, st.Name, st.Arguments)
		cancel()
		switch {
		case err == nil:
			_ = enc.Encode(map[string]any{"call": st.Name, "outcome": "ok", "value": v})
		case timeoutRE.MatchString(err.Error()):
			_ = enc.Encode(map[string]any{"call": st.Name, "outcome": "timeout", "error": err.Error()})
		default:
			_ = enc.Encode(map[string]any{"call": st.Name, "outcome": "error", "error": err.Error()})
		}
	}
	done := make(chan struct{})
	go func() { _ = s.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
	}
	os.Exit(0)
}
