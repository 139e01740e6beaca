package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mcpdrill/mcpdrill/internal/clientconfig"
	"github.com/mcpdrill/mcpdrill/internal/inputfile"
	"github.com/mcpdrill/mcpdrill/mcpserve"
)

// mcpCommand is `mcpdrill mcp`; run (nil: runMCP) serves what the parsed
// mcpOptions describe.
func mcpCommand(run func(context.Context, *mcpOptions) error) *cli.Command {
	return &cli.Command{
		Name:      "mcp",
		ArgsUsage: " ",
		Usage:     "serve mcpdrill's checks to an agent as a stdio MCP server",
		Description: "Add `mcpdrill mcp` to an MCP client's configuration as a stdio server. Its tools: servers (the\n" +
			"servers the others may use), scan, fingerprint, drift (a saved tools/list against the live server)\n" +
			"and rules. A target is a server of your own client configurations, by name, or an http(s) URL:\n" +
			"the model never gives a command line, a header or a file to read.\n\n" +
			"Configurations read: your own (those `mcpdrill configs` lists in your home and configuration\n" +
			"directories), read afresh at each call; or only the files --config names. A file that is not one\n" +
			"of your own client configurations (a repository's .vscode/mcp.json) needs --trust-workspace, which\n" +
			"also adds the current workspace's configurations to discovery. A configured stdio server is started\n" +
			"as its entry says, by its name.\n\n" +
			"URLs: never with user info, never sent a header, never through a proxy; a link-local address\n" +
			"(cloud metadata) is never dialled, a loopback or private one only for an origin --allow-url names.\n" +
			"Results quote text the scanned server chose, escaped and cut; tool descriptions tell the model it\n" +
			"is untrusted data.\n\n" + exitCodes("", false),
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "config", Usage: "read only this MCP client configuration `FILE` (repeatable); one that is not your own needs --trust-workspace"},
			&cli.BoolFlag{Name: "trust-workspace", Usage: "let the tools start servers of configurations you did not write: --config files, and the current workspace's (.vscode/mcp.json, .cursor/mcp.json, .mcp.json)"},
			&cli.StringSliceFlag{Name: "allow-url", Usage: "let a URL target reach this loopback or private-network `ORIGIN` (scheme://host[:port], repeatable)"},
			&cli.DurationFlag{Name: "timeout", Value: 10 * time.Second, Usage: "per-request timeout towards a scanned server"},
			&cli.DurationFlag{Name: "deadline", Value: 2 * time.Minute, Usage: "bound of one tool call"},
		},
		Action: action(parseMCPOptions, run, runMCP),
	}
}

// mcpOptions is what one `mcpdrill mcp` serves with.
type mcpOptions struct {
	env
	server mcpserve.Options
}

// parseMCPOptions reads and checks mcp's flags: every --config must be a
// configuration that reads, and one the user did not write needs
// --trust-workspace.
func parseMCPOptions(c *cmdLine) (*mcpOptions, error) {
	if err := noArguments(c); err != nil {
		return nil, err
	}
	t := &mcpserve.Targets{TrustWorkspace: c.Bool("trust-workspace"), AllowURLs: c.StringSlice("allow-url")}
	t.Home, _ = os.UserHomeDir()
	t.ConfigDir, _ = os.UserConfigDir()
	if t.TrustWorkspace {
		wd, err := os.Getwd()
		if err != nil {
			return nil, exitErr(exitInternal, err)
		}
		t.Workspace = clientconfig.Workspace(wd)
	}
	for _, p := range c.StringSlice("config") {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, usageErr("--config %s: %v", p, err)
		}
		if _, err := clientconfig.ReadFile(abs, inputfile.Read); err != nil {
			return nil, usageErr("--config: %v", err)
		}
		if !t.TrustWorkspace && !(clientconfig.Platform{Home: t.Home, ConfigDir: t.ConfigDir}).Own(abs) {
			return nil, usageErr("--config %s is not one of your own MCP client configurations: the tools would start the commands it names; review it, then add --trust-workspace", p)
		}
		t.Files = append(t.Files, abs)
	}
	for _, o := range t.AllowURLs {
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.User != nil {
			return nil, usageErr("--allow-url %q: want an origin such as http://127.0.0.1:3000", o)
		}
	}
	if c.Duration("timeout") <= 0 || c.Duration("deadline") <= 0 {
		return nil, usageErr("--timeout and --deadline must be positive")
	}
	cat, err := allRules()
	if err != nil {
		return nil, exitErr(exitInternal, err)
	}
	return &mcpOptions{server: mcpserve.Options{Version: version, Rules: cat, Targets: t,
		Timeout: c.Duration("timeout"), Deadline: c.Duration("deadline")}}, nil
}

// runMCP serves on stdin and stdout until stdin ends.
func runMCP(ctx context.Context, o *mcpOptions) error {
	o.server.Log = o.stderr
	ctx, cancel := runContext(ctx, 0)
	defer cancel()
	if err := mcpserve.Serve(ctx, o.server, o.stdin, o.stdout); err != nil && ctx.Err() == nil {
		return exitErr(exitInternal, fmt.Errorf("mcp: %w", err))
	}
	return nil
}
