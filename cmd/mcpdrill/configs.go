package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mcpdrill/mcpdrill/internal/clientconfig"
	"github.com/mcpdrill/mcpdrill/internal/inputfile"
	"github.com/mcpdrill/mcpdrill/internal/safetext"
)

// configsCommand is the `mcpdrill configs` command; run (nil:
// runConfigs) lists what the parsed configsOptions ask for.
func configsCommand(run func(context.Context, *configsOptions) error) *cli.Command {
	return &cli.Command{
		Name:  "configs",
		Usage: "list the MCP client configurations on this machine and their servers",
		Description: "Looks where MCP clients keep their servers on this OS, for the user and for the workspace\n" +
			"(--workspace, default the repository holding the current directory): Claude Desktop; Claude Code\n" +
			"(~/.claude.json, its local scope for the workspace, .mcp.json); Cursor; VS Code (user mcp.json and\n" +
			"settings.json, .vscode/mcp.json); Windsurf (~/.codeium/windsurf/mcp_config.json); Codex\n" +
			"($CODEX_HOME or ~/.codex/config.toml, .codex/config.toml); Gemini CLI (~/.gemini/settings.json,\n" +
			".gemini/settings.json); Zed (settings.json context_servers, .zed/settings.json); Cline and Roo Code\n" +
			"(VS Code extension storage, .roo/mcp.json); opencode (opencode.json); Kiro (~/.kiro/settings/mcp.json,\n" +
			".kiro/settings/mcp.json). Each file found is listed with its servers: name and transport only, never\n" +
			"a command line, an environment value or a header value. `mcpdrill scan --config auto` scans the\n" +
			"user's; a workspace's only with --workspace DIR and --trust-workspace (see scan --help).\n\n" +
			exitCodes("", false),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "workspace", Usage: "look for workspace configurations in `DIR`"},
			&cli.BoolFlag{Name: "json", Usage: "write the list as JSON"},
			&cli.BoolFlag{Name: "all", Usage: "also list the places looked in that hold nothing"},
		},
		Action: action(parseConfigsOptions, run, runConfigs),
	}
}

// configsOptions is what one `mcpdrill configs` asks for: where to look
// (home, configuration and workspace directories), --all and --json.
type configsOptions struct {
	env
	platform  clientconfig.Platform
	all, json bool
}

// parseConfigsOptions reads configs' flags; problems are usage errors.
func parseConfigsOptions(c *cmdLine) (*configsOptions, error) {
	if err := noArguments(c); err != nil {
		return nil, err
	}
	p, err := currentPlatform(c, true)
	if err != nil {
		return nil, err
	}
	return &configsOptions{platform: p, all: c.Bool("all"), json: c.Bool("json")}, nil
}

// configEntry is one configuration file in `mcpdrill configs --json`.
type configEntry struct {
	Client string `json:"client"`
	Scope  string `json:"scope"`
	Path   string `json:"path"`
	// Project is the project of Claude Code's local scope in Path.
	Project string         `json:"project,omitempty"`
	Found   bool           `json:"found"`
	Servers []configServer `json:"servers,omitempty"`
	Error   string         `json:"error,omitempty"`
}

// configServer is a server as `mcpdrill configs` shows it: nothing that
// may be secret.
type configServer struct {
	Name      string `json:"name"`
	Transport string `json:"transport"`
	Type      string `json:"type,omitempty"`
	Disabled  bool   `json:"disabled,omitempty"`
}

// runConfigs lists the configuration files found and their servers.
func runConfigs(ctx context.Context, o *configsOptions) error {
	p := o.platform
	found := clientconfig.Discover(p, inputfile.Read)
	var entries []configEntry
	for _, l := range clientconfig.Locations(p) {
		e := configEntry{Client: l.Client, Scope: l.Scope, Path: l.Path, Project: l.Project}
		for _, f := range found {
			if f.Path != l.Path || f.Project != l.Project {
				continue
			}
			e.Found = true
			if f.Err != nil {
				e.Error = strings.TrimPrefix(f.Err.Error(), f.Path+": ")
				break
			}
			for _, s := range f.Config.Servers {
				e.Servers = append(e.Servers, configServer{Name: s.Name, Transport: s.Transport(), Type: s.Type, Disabled: s.Disabled})
			}
		}
		if !e.Found && o.all && l.Project == "" {
			// A file about more than MCP (~/.claude.json) with no servers.
			_, err := os.Stat(l.Path)
			e.Found = err == nil
		}
		if e.Found || o.all {
			entries = append(entries, e)
		}
	}
	if o.json {
		if entries == nil {
			entries = []configEntry{}
		}
		return writeJSON(o.stdout, map[string]any{"configs": entries})
	}
	return renderConfigs(o.stdout, entries, p.Home)
}

// renderConfigs prints one row per server (or per file without servers);
// paths under home start with "~".
func renderConfigs(w io.Writer, entries []configEntry, home string) error {
	if len(entries) == 0 {
		fmt.Fprintln(w, "No MCP client configuration found (--all lists where mcpdrill looked).")
		return nil
	}
	g := newGrid(gridColumn{name: "client"}, gridColumn{name: "scope"}, gridColumn{name: "file", long: true, label: true},
		gridColumn{name: "server"}, gridColumn{name: "transport"})
	for _, e := range entries {
		path := shortPath(e.Path, home)
		switch {
		case !e.Found:
			g.add(e.Client, e.Scope, path, "-", "(not found)")
		case e.Error != "":
			g.add(e.Client, e.Scope, path, "-", "(unreadable: see below)")
		case len(e.Servers) == 0:
			g.add(e.Client, e.Scope, path, "-", "(no servers)")
		}
		for _, s := range e.Servers {
			tr := s.Transport
			if s.Type == "sse" {
				tr += " (sse)"
			}
			if s.Disabled {
				tr += ", disabled"
			}
			g.add(e.Client, e.Scope, path, s.Name, tr)
		}
	}
	if err := g.render(w, outputWidth(w)); err != nil {
		return err
	}
	for _, e := range entries {
		if e.Error != "" {
			fmt.Fprintf(w, "%s: %s\n", safetext.Text(shortPath(e.Path, home)), safetext.Text(e.Error))
		}
	}
	return nil
}

// shortPath writes a path under home with "~" for home.
func shortPath(p, home string) string {
	if home == "" {
		return p
	}
	if rel, err := filepath.Rel(home, p); err == nil && filepath.IsLocal(rel) {
		return "~" + string(os.PathSeparator) + rel
	}
	return p
}
