// Command mcpgo is the client study's adapter for mark3labs/mcp-go's
// client: Client.CallTool with a context deadline of the requested timeout;
// the value is the CallToolResult the application gets.
package main

import (
	"context"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"mcpdrill.invalid/studies-clients/go/harness"
)

type session struct{ c *client.Client }

func (s session) List(ctx context.Context) error {
	_, err := s.c.ListTools(ctx, mcp.ListToolsRequest{})
	return err
}
func (s session) Close() error { return s.c.Close() }
func (s session) Call(ctx context.Context, name string, args map[string]any) (any, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = name, args
	return s.c.CallTool(ctx, req)
}

func main() {
	harness.Drill(func(ctx context.Context, c *harness.Context) (harness.Session, error) {
		var cl *client.Client
		var err error
		if c.Server.URL != "" {
			cl, err = client.NewStreamableHttpClient(c.Server.URL)
			if err == nil {
				err = cl.Start(ctx)
			}
		} else {
			cl, err = client.NewStdioMCPClient(c.Server.Command, nil, c.Server.Args...)
		}
		if err != nil {
			return nil, err
		}
		init := mcp.InitializeRequest{}
		init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
		init.Params.ClientInfo = mcp.Implementation{Name: "mcpdrill-adapter", Version: "1.0.0"}
		if _, err := cl.Initialize(ctx, init); err != nil {
			return nil, err
		}
		return session{cl}, nil
	})
}
