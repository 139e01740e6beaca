package clientconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Platform says where a user's files are.
type Platform struct {
	// Home is the user's home directory.
	Home string
	// ConfigDir is the user configuration directory, as os.UserConfigDir
	// gives it: $XDG_CONFIG_HOME or ~/.config on Linux, ~/Library/Application
	// Support on macOS, %APPDATA% on Windows.
	ConfigDir string
	// CodexHome is Codex's directory ($CODEX_HOME); "" for ~/.codex.
	CodexHome string
	// Workspace is the project whose own configurations are looked for
	// (.vscode/mcp.json, .cursor/mcp.json, .mcp.json…); "" for none.
	Workspace string
}

// Location is a place an MCP client keeps its servers.
type Location struct {
	// Client names the client ("Claude Code", "Codex", "Windsurf"…).
	Client string
	// Scope is "user" (the user's own, in the home or configuration
	// directory), "local" (the user's own file, for one project: Claude
	// Code's local scope) or "workspace" (a file of the project, which the
	// user may not have written).
	Scope string
	Path  string
	// Project, when set, is the key of Claude Code's "projects" map in Path
	// whose servers this location is (ParseClaudeProject).
	Project string
	// Optional marks a file that is about more than MCP (VS Code's
	// settings.json, ~/.claude.json, Gemini's and Zed's settings.json,
	// Codex's config.toml, opencode.json): without servers in it, it is
	// not a configuration to list.
	Optional bool
}

// Locations lists, in a fixed order, where MCP clients keep their servers
// for the user and for the workspace, on the platform p describes. The
// places, from each client's documentation: Claude Desktop and Claude Code
// (code.claude.com/docs/en/mcp: user scope in ~/.claude.json, local scope
// in its "projects" entry for the project, project scope in .mcp.json);
// Cursor; VS Code (user mcp.json and settings.json, .vscode/mcp.json);
// Windsurf (~/.codeium/windsurf/mcp_config.json); Codex
// ($CODEX_HOME/config.toml, default ~/.codex, and a project's
// .codex/config.toml); Gemini CLI (~/.gemini/settings.json,
// .gemini/settings.json); Zed (~/.config/zed/settings.json, %APPDATA%\Zed
// on Windows, and .zed/settings.json); Cline and Roo Code (their VS Code
// extension storage, and Roo's .roo/mcp.json); opencode
// (~/.config/opencode/opencode.json or .jsonc, and the project's own);
// Kiro (~/.kiro/settings/mcp.json, .kiro/settings/mcp.json).
func Locations(p Platform) []Location {
	var out []Location
	add := func(client, scope, path string, optional bool) {
		for _, l := range out {
			if l.Path == path && l.Project == "" {
				return
			}
		}
		out = append(out, Location{Client: client, Scope: scope, Path: path, Optional: optional})
	}
	vscode := []struct{ client, dir string }{{"VS Code", "Code"}, {"VS Code Insiders", "Code - Insiders"}}
	if p.ConfigDir != "" {
		add("Claude Desktop", "user", filepath.Join(p.ConfigDir, "Claude", "claude_desktop_config.json"), false)
	}
	if p.Home != "" {
		add("Claude Code", "user", filepath.Join(p.Home, ".claude.json"), true)
		add("Cursor", "user", filepath.Join(p.Home, ".cursor", "mcp.json"), false)
	}
	if p.ConfigDir != "" {
		for _, app := range vscode {
			add(app.client, "user", filepath.Join(p.ConfigDir, app.dir, "User", "mcp.json"), false)
			add(app.client, "user", filepath.Join(p.ConfigDir, app.dir, "User", "settings.json"), true)
		}
	}
	if p.Home != "" {
		add("Windsurf", "user", filepath.Join(p.Home, ".codeium", "windsurf", "mcp_config.json"), false)
		codex := p.CodexHome
		if codex == "" {
			codex = filepath.Join(p.Home, ".codex")
		}
		add("Codex", "user", filepath.Join(codex, "config.toml"), true)
		add("Gemini CLI", "user", filepath.Join(p.Home, ".gemini", "settings.json"), true)
	}
	if p.ConfigDir != "" {
		add("Zed", "user", filepath.Join(p.ConfigDir, "zed", "settings.json"), true)
	}
	if p.Home != "" {
		// Zed and opencode keep ~/.config on macOS too.
		add("Zed", "user", filepath.Join(p.Home, ".config", "zed", "settings.json"), true)
	}
	if p.ConfigDir != "" {
		storage := filepath.Join(p.ConfigDir, "Code", "User", "globalStorage")
		add("Cline", "user", filepath.Join(storage, "saoudrizwan.claude-dev", "settings", "cline_mcp_settings.json"), false)
		add("Roo Code", "user", filepath.Join(storage, "rooveterinaryinc.roo-cline", "settings", "mcp_settings.json"), false)
	}
	var xdg []string
	if p.ConfigDir != "" {
		xdg = append(xdg, p.ConfigDir)
	}
	if p.Home != "" {
		xdg = append(xdg, filepath.Join(p.Home, ".config"))
	}
	for _, dir := range xdg {
		add("opencode", "user", filepath.Join(dir, "opencode", "opencode.json"), true)
		add("opencode", "user", filepath.Join(dir, "opencode", "opencode.jsonc"), true)
	}
	if p.Home != "" {
		add("Kiro", "user", filepath.Join(p.Home, ".kiro", "settings", "mcp.json"), false)
	}
	if p.Workspace != "" {
		if p.Home != "" {
			out = append(out, Location{Client: "Claude Code", Scope: "local", Path: filepath.Join(p.Home, ".claude.json"), Project: p.Workspace, Optional: true})
		}
		add("Claude Code", "workspace", filepath.Join(p.Workspace, ".mcp.json"), false)
		add("Cursor", "workspace", filepath.Join(p.Workspace, ".cursor", "mcp.json"), false)
		add("VS Code", "workspace", filepath.Join(p.Workspace, ".vscode", "mcp.json"), false)
		add("VS Code", "workspace", filepath.Join(p.Workspace, ".vscode", "settings.json"), true)
		add("Codex", "workspace", filepath.Join(p.Workspace, ".codex", "config.toml"), true)
		add("Gemini CLI", "workspace", filepath.Join(p.Workspace, ".gemini", "settings.json"), true)
		add("Zed", "workspace", filepath.Join(p.Workspace, ".zed", "settings.json"), true)
		add("Roo Code", "workspace", filepath.Join(p.Workspace, ".roo", "mcp.json"), false)
		add("opencode", "workspace", filepath.Join(p.Workspace, "opencode.json"), true)
		add("opencode", "workspace", filepath.Join(p.Workspace, "opencode.jsonc"), true)
		add("Kiro", "workspace", filepath.Join(p.Workspace, ".kiro", "settings", "mcp.json"), false)
	}
	return out
}

// Found is a configuration file that exists.
type Found struct {
	Location
	// Config is the parsed file; nil when Err is set.
	Config *Config
	// Err says why the file could not be read or parsed.
	Err error
}

// Discover reads every location of p that exists, in the order of
// Locations. read reads a file (it bounds the size); an optional file
// without servers is left out.
func Discover(p Platform, read func(string) ([]byte, error)) []Found {
	var out []Found
	for _, l := range Locations(p) {
		fi, err := os.Stat(l.Path)
		if errors.Is(err, fs.ErrNotExist) || (err == nil && fi.IsDir()) {
			continue
		}
		f := Found{Location: l}
		switch {
		case err != nil:
			f.Err = err
		case l.Project != "":
			f.Config, f.Err = readProject(l.Path, l.Project, read)
		default:
			f.Config, f.Err = ReadFile(l.Path, read)
		}
		if l.Optional && (errors.Is(f.Err, ErrNoServers) || (f.Err == nil && len(f.Config.Servers) == 0)) {
			continue
		}
		out = append(out, f)
	}
	return out
}

// ReadFile reads and parses (ParseFile) the configuration at path with
// read; the Config's Dir is the file's absolute directory.
func ReadFile(path string, read func(string) ([]byte, error)) (*Config, error) {
	data, err := read(path)
	if err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	c, err := ParseFile(path, data, dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// readProject reads Claude Code's servers of one project in the file at
// path (ParseClaudeProject). Its relative commands run in the project.
func readProject(path, project string, read func(string) ([]byte, error)) (*Config, error) {
	data, err := read(path)
	if err != nil {
		return nil, err
	}
	c, err := ParseClaudeProject(data, project, project)
	if err != nil {
		return nil, fmt.Errorf("%s (project %s): %w", path, project, err)
	}
	return c, nil
}

// Own reports whether path is one of the user's own client configurations:
// a "user" location of Locations(p) (in the home or configuration
// directory), compared by absolute path and by where symbolic links lead.
// Every other file, a workspace's above all, is one the user may not have
// written.
func (p Platform) Own(path string) bool {
	abs, err := filepath.Abs(path)
	if err != nil {
		return false
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		real = abs
	}
	for _, l := range Locations(Platform{Home: p.Home, ConfigDir: p.ConfigDir, CodexHome: p.CodexHome}) {
		if l.Scope != "user" {
			continue
		}
		if l.Path == abs || l.Path == real {
			return true
		}
		if r, err := filepath.EvalSymlinks(l.Path); err == nil && r == real {
			return true
		}
	}
	return false
}
