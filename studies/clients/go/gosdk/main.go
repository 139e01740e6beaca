// Command gosdk is the client study's adapter for the official Go SDK:
// ClientSession.CallTool with a context deadline of the requested timeout;
// the value is the CallToolResult the application gets.
package main

import (
	"context"
	"os/exec"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcpdrill.invalid/studies-clients/go/harness"
)

type session struct{ s *mcp.ClientSession }

func (s session) List(ctx context.Context) error { _, err := s.s.ListTools(ctx, nil); return err }
func (s session) Close() error                   { return s.s.Close() }
func (s session) Call(ctx context.Context, name string, args map[string]any) (any, error) {
	return s.s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
}

func main() {
	harness.Drill(func(ctx context.Context, c *harness.Context) (harness.Session, error) {
		client := mcp.NewClient(&mcp.Implementation{Name: "mcpdrill-adapter", Version: "1.0.0"}, nil)
		var t mcp.Transport
		if c.Server.URL != "" {
			t = &mcp.StreamableClientTransport{Endpoint: c.Server.URL}
		} else {
			t = &mcp.CommandTransport{Command: exec.Command(c.Server.Command, c.Server.Args...)}
		}
		s, err := client.Connect(ctx, t, nil)
		return session{s}, err
	})
}
