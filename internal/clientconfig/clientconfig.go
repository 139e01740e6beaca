// Package clientconfig reads the MCP server configurations that MCP clients
// keep (Claude Desktop, Cursor and Claude Code's "mcpServers", VS Code's
// "servers" with its "inputs"), resolves the placeholders each client
// defines (see Resolver), and knows where each client keeps its files on
// Linux, macOS and Windows (see Locations).
//
// A study's servers.json is such a file with a few keys of its own; the
// studies package reads those from Server.Raw.
package clientconfig

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpdrill/mcpdrill/internal/jsonvalue"
)

// ErrNoServers is matched (errors.Is) by Parse's error for a file that has
// no server object at all ("mcpServers", "servers" or VS Code settings'
// "mcp.servers").
var ErrNoServers = errors.New(`no "mcpServers" (or "servers") object`)

// Config is a parsed client configuration file.
type Config struct {
	// Dir is the directory the file lives in; relative commands and
	// working directories are resolved against it.
	Dir string
	// Hash is "sha256:" and the hex digest of the file's bytes.
	Hash string
	// Key names the object the servers came from: "mcpServers",
	// "servers" or "mcp.servers".
	Key string
	// Servers are the entries sorted by name.
	Servers []Server
	// Inputs are the values VS Code prompts for (${input:ID}).
	Inputs []Input
	// Skipped names the entries that are no server mcpdrill can start or
	// reach (a Zed extension's server, which Zed itself provides).
	Skipped []string
	// Syntax is the placeholder syntax of the file's client; the Resolver
	// of its servers uses it.
	Syntax Syntax
}

// Server is one entry of a configuration. The keys mean what they mean to
// MCP clients; other keys are left in Raw.
type Server struct {
	Name    string            `json:"-"`
	Type    string            `json:"type,omitempty"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Cwd     string            `json:"cwd,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// Disabled entries are kept; what to do with them is the caller's.
	Disabled bool `json:"disabled,omitempty"`
	// Raw is the entry's JSON object as written (comments removed; a TOML
	// entry, as JSON).
	Raw json.RawMessage `json:"-"`
	// Line is the 1-based line of the entry's name in its file (a TOML
	// entry's table header); 0 when unknown.
	Line int `json:"-"`
	// EnvHeaders are headers whose values come from the environment as the
	// client reads them (Codex's bearer_token_env_var, env_http_headers).
	EnvHeaders []EnvHeader `json:"-"`
}

// EnvHeader is a header a client sets from an environment variable.
type EnvHeader struct {
	// Name is the header; its value is Prefix and the variable Var's value.
	Name, Var, Prefix string
}

// Input is one of VS Code's "inputs": a value the client asks the user for.
type Input struct {
	ID          string `json:"id"`
	Type        string `json:"type,omitempty"`
	Description string `json:"description,omitempty"`
	Password    bool   `json:"password,omitempty"`
}

// Transport is "http" for URL entries and "stdio" otherwise (an "sse"
// entry is HTTP too; the client detects the legacy transport itself).
func (s Server) Transport() string {
	if s.URL != "" {
		return "http"
	}
	return "stdio"
}

// Get returns the server named name.
func (c *Config) Get(name string) (Server, bool) {
	i := slices.IndexFunc(c.Servers, func(s Server) bool { return s.Name == name })
	if i < 0 {
		return Server{}, false
	}
	return c.Servers[i], true
}

// Names lists the servers' names, sorted.
func (c *Config) Names() []string {
	out := make([]string, len(c.Servers))
	for i, s := range c.Servers {
		out[i] = s.Name
	}
	return out
}

// Parse parses a configuration file's bytes as JSON; dir is the file's
// directory. JSON with comments and trailing commas (as VS Code and Zed
// write) is accepted. The servers come from the first of these objects the
// file has (other top-level keys are ignored):
//
//	"mcpServers"       Claude Desktop, Claude Code, Cursor, Windsurf, Gemini CLI,
//	                   Cline, Roo Code, Kiro, and a study's servers.json
//	"servers"          VS Code's mcp.json, with its "inputs"
//	"mcp": {"servers"} a VS Code settings.json
//	"context_servers"  Zed's settings.json
//	"mcp"              opencode's opencode.json (entries of type local or remote)
//
// A file with no servers object is ErrNoServers; an empty one parses, with
// no servers. ParseTOML reads Codex's config.toml, and ParseFile chooses
// between the two by the file's name.
func Parse(data []byte, dir string) (*Config, error) {
	clean := stripJSONC(data)
	top, err := topObject(clean)
	if err != nil {
		return nil, err
	}
	path, raw, inputs, f, err := serversObject(top)
	if err != nil {
		return nil, err
	}
	c, err := parseEntries(data, clean, dir, path, raw, f)
	if err != nil {
		return nil, err
	}
	if len(inputs) > 0 && string(inputs) != "null" {
		if err := json.Unmarshal(inputs, &c.Inputs); err != nil {
			return nil, fmt.Errorf("inputs: %w", err)
		}
	}
	return c, nil
}

// ServerLines maps each server of a JSON configuration (Parse) to the line
// of its entry; nil when data does not parse.
func ServerLines(data []byte) map[string]int {
	c, err := Parse(data, "")
	if err != nil {
		return nil
	}
	out := map[string]int{}
	for _, s := range c.Servers {
		out[s.Name] = s.Line
	}
	return out
}

// topObject decodes a JSON document's top-level object.
func topObject(clean []byte) (map[string]json.RawMessage, error) {
	var top map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(clean))
	if err := dec.Decode(&top); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	if dec.More() {
		return nil, errors.New("trailing data after the top-level object")
	}
	if top == nil {
		return nil, errors.New("not a JSON object")
	}
	return top, nil
}

// parseEntries reads the servers object raw, found at path in the file
// (data as written, clean without its comments), in format f.
func parseEntries(data, clean []byte, dir string, path []string, raw json.RawMessage, f format) (*Config, error) {
	key := strings.Join(path, ".")
	var entries map[string]json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	if entries == nil {
		return nil, fmt.Errorf("%s is not an object", key)
	}
	if p, dup := jsonvalue.RepeatedKey(raw, 1); dup {
		name, _ := jsonvalue.SplitPointer(p)
		return nil, fmt.Errorf("server %q is given twice (a JSON parser would keep only the last)", strings.Join(name, "/"))
	}
	c := newConfig(data, dir, key)
	lines := jsonvalue.MemberLines(clean, path...)
	for name, r := range entries {
		s, ok, err := f.decode(name, r)
		if err != nil {
			return nil, fmt.Errorf("server %q: %w", name, err)
		}
		if !ok {
			c.Skipped = append(c.Skipped, name)
			continue
		}
		s.Name, s.Raw, s.Line = name, r, lines[name]
		if err := s.validate(); err != nil {
			return nil, fmt.Errorf("server %q: %w", name, err)
		}
		c.Servers = append(c.Servers, s)
	}
	c.Syntax = f.syntax()
	c.sort()
	return c, nil
}

// newConfig is a Config of a file's bytes, before its servers.
func newConfig(data []byte, dir, key string) *Config {
	sum := sha256.Sum256(data)
	return &Config{Dir: dir, Hash: "sha256:" + hex.EncodeToString(sum[:]), Key: key}
}

func (c *Config) sort() {
	slices.SortFunc(c.Servers, func(a, b Server) int { return cmp.Compare(a.Name, b.Name) })
	slices.Sort(c.Skipped)
}

// serversObject finds the servers object (and VS Code's inputs) in a
// parsed top level: its path from the top, and its format.
func serversObject(top map[string]json.RawMessage) (path []string, servers, inputs json.RawMessage, f format, err error) {
	mcpServers, hasMCP := top["mcpServers"]
	vscode, hasVSCode := top["servers"]
	switch {
	case hasMCP && hasVSCode:
		return nil, nil, nil, 0, errors.New(`give "mcpServers" or "servers", not both`)
	case hasMCP:
		return []string{"mcpServers"}, mcpServers, top["inputs"], formatMCPServers, nil
	case hasVSCode:
		return []string{"servers"}, vscode, top["inputs"], formatMCPServers, nil
	}
	if zed, ok := top["context_servers"]; ok {
		return []string{"context_servers"}, zed, nil, formatZed, nil
	}
	if nested, ok := top["mcp"]; ok {
		var m map[string]json.RawMessage
		if json.Unmarshal(nested, &m) == nil {
			// A VS Code settings.json: {"mcp": {"servers": {...}, "inputs": [...]}}.
			if s, ok := m["servers"]; ok {
				return []string{"mcp", "servers"}, s, m["inputs"], formatMCPServers, nil
			}
			// opencode's opencode.json: {"mcp": {NAME: {"type": "local", ...}}}.
			if opencodeEntries(m) {
				return []string{"mcp"}, nested, nil, formatOpencode, nil
			}
		}
	}
	return nil, nil, nil, 0, ErrNoServers
}

// Types are the values of "type" clients write: stdio, http (VS Code,
// Claude Code), sse, and older spellings of Streamable HTTP.
var Types = []string{"stdio", "http", "streamable-http", "streamableHttp", "sse"}

func (s Server) validate() error {
	switch {
	case strings.TrimSpace(s.Name) == "":
		return errors.New("empty server name")
	case len(s.Name) > 200 || strings.ContainsAny(s.Name, "\x00\r\n"):
		return errors.New("server name too long or contains a control character")
	case s.Command == "" && s.URL == "":
		return errors.New(`give "command" or "url"`)
	case s.Command != "" && s.URL != "":
		return errors.New(`give "command" or "url", not both`)
	case (len(s.Headers) > 0 || len(s.EnvHeaders) > 0) && s.URL == "":
		return errors.New(`"headers" need "url"`)
	}
	if s.Type != "" && !slices.Contains(Types, s.Type) {
		return fmt.Errorf("unknown type %q", s.Type)
	}
	if s.Type != "" && (s.Type == "stdio") != (s.URL == "") {
		return fmt.Errorf("type %q does not match the entry (command vs url)", s.Type)
	}
	return nil
}

// stripJSONC turns JSON with comments and trailing commas into JSON: each
// comment and each trailing comma becomes spaces (line breaks are kept), so
// offsets and line numbers stay those of the file.
func stripJSONC(b []byte) []byte {
	if !bytes.Contains(b, []byte("/")) && !bytes.Contains(b, []byte(",")) {
		return b
	}
	out := bytes.Clone(b)
	blank := func(i, j int) {
		for k := i; k < j; k++ {
			if out[k] != '\n' && out[k] != '\r' {
				out[k] = ' '
			}
		}
	}
	// Comments first, so that a comment between a comma and a bracket does
	// not hide the trailing comma.
	outsideStrings(out, func(i int) int {
		switch {
		case bytes.HasPrefix(out[i:], []byte("//")):
			j := bytes.IndexByte(out[i:], '\n')
			if j < 0 {
				j = len(out) - i
			}
			blank(i, i+j)
			return i + j - 1
		case bytes.HasPrefix(out[i:], []byte("/*")):
			end := len(out)
			if j := bytes.Index(out[i+2:], []byte("*/")); j >= 0 {
				end = i + 2 + j + 2
			}
			blank(i, end)
			return end - 1
		}
		return i
	})
	outsideStrings(out, func(i int) int {
		if out[i] != ',' {
			return i
		}
		j := i + 1
		for j < len(out) && strings.IndexByte(" \t\r\n", out[j]) >= 0 {
			j++
		}
		if j < len(out) && (out[j] == '}' || out[j] == ']') {
			out[i] = ' '
		}
		return i
	})
	return out
}

// outsideStrings calls f at each byte of b that is not inside a JSON
// string; f returns the index of the last byte it dealt with.
func outsideStrings(b []byte, f func(i int) int) {
	inString := false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		default:
			i = f(i)
		}
	}
}
