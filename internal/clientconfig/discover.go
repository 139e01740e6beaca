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
	// Workspace is the project whose own configurations are looked for
	// (.vscode/mcp.json, .cursor/mcp.json, .mcp.json); "" for none.
	Workspace string
}

// Location is a place an MCP client keeps its servers.
type Location struct {
	// Client is "Claude Desktop", "Claude Code", "Cursor", "VS Code" or
	// "VS Code Insiders".
	Client string
	// Scope is "user" or "workspace".
	Scope string
	Path  string
	// Optional marks a file that is about more than MCP (VS Code's
	// settings.json, Claude Code's ~/.claude.json): without servers in it,
	// it is not a configuration to list.
	Optional bool
}

// Locations lists, in a fixed order, where Claude Desktop, Claude Code,
// Cursor and VS Code keep their MCP servers for the user and for the
// workspace, on the platform p describes.
func Locations(p Platform) []Location {
	var out []Location
	add := func(client, scope, path string, optional bool) {
		for _, l := range out {
			if l.Path == path {
				return
			}
		}
		out = append(out, Location{Client: client, Scope: scope, Path: path, Optional: optional})
	}
	if p.ConfigDir != "" {
		add("Claude Desktop", "user", filepath.Join(p.ConfigDir, "Claude", "claude_desktop_config.json"), false)
	}
	if p.Home != "" {
		add("Claude Code", "user", filepath.Join(p.Home, ".claude.json"), true)
		add("Cursor", "user", filepath.Join(p.Home, ".cursor", "mcp.json"), false)
	}
	if p.ConfigDir != "" {
		for _, app := range []struct{ client, dir string }{{"VS Code", "Code"}, {"VS Code Insiders", "Code - Insiders"}} {
			add(app.client, "user", filepath.Join(p.ConfigDir, app.dir, "User", "mcp.json"), false)
			add(app.client, "user", filepath.Join(p.ConfigDir, app.dir, "User", "settings.json"), true)
		}
	}
	if p.Workspace != "" {
		add("Claude Code", "workspace", filepath.Join(p.Workspace, ".mcp.json"), false)
		add("Cursor", "workspace", filepath.Join(p.Workspace, ".cursor", "mcp.json"), false)
		add("VS Code", "workspace", filepath.Join(p.Workspace, ".vscode", "mcp.json"), false)
		add("VS Code", "workspace", filepath.Join(p.Workspace, ".vscode", "settings.json"), true)
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
		if err == nil {
			f.Config, f.Err = ReadFile(l.Path, read)
		} else {
			f.Err = err
		}
		if l.Optional && (errors.Is(f.Err, ErrNoServers) || (f.Err == nil && len(f.Config.Servers) == 0)) {
			continue
		}
		out = append(out, f)
	}
	return out
}

// ReadFile reads and parses the configuration at path with read; the
// Config's Dir is the file's absolute directory.
func ReadFile(path string, read func(string) ([]byte, error)) (*Config, error) {
	data, err := read(path)
	if err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	c, err := Parse(data, dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
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
	for _, l := range Locations(Platform{Home: p.Home, ConfigDir: p.ConfigDir}) {
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
