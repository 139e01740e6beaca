package clientconfig

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
)

// format is how a client writes one server entry. Sources, read for each
// (the entry's keys, and which of them mcpdrill uses):
//
//   - formatMCPServers: the "mcpServers" shape most clients share (command,
//     args, env, cwd, url, headers, type, disabled). Windsurf also writes a
//     remote server's address as "serverUrl" (docs.windsurf.com, Cascade >
//     MCP, "Remote HTTP MCPs"); Gemini CLI as "httpUrl" for Streamable HTTP
//     and "url" for SSE (geminicli.com/docs/tools/mcp-server). Cline
//     (cline_mcp_settings.json), Roo Code (mcp_settings.json, .roo/mcp.json:
//     docs.roocode.com/features/mcp/using-mcp-in-roo) and Kiro
//     (kiro.dev/docs/mcp/configuration) add keys mcpdrill has no use for
//     (autoApprove, alwaysAllow, disabledTools, timeout).
//   - formatZed: Zed's "context_servers" (zed.dev/docs/ai/mcp): command,
//     args, env, or url and headers; an older entry writes "command" as an
//     object {path, args, env}; an extension's server has neither (Zed starts
//     it) and is skipped; "enabled": false turns one off.
//   - formatOpencode: opencode's "mcp" (opencode.ai/docs/mcp-servers):
//     {"type": "local", "command": [argv…], "environment": {…}} or
//     {"type": "remote", "url", "headers"}; "enabled": false turns one off.
//   - formatCodex: Codex's [mcp_servers.NAME] tables (see ParseTOML).
type format int

const (
	formatMCPServers format = iota
	formatZed
	formatOpencode
	formatCodex
)

// syntax is the placeholder syntax of a format's client.
func (f format) syntax() Syntax {
	switch f {
	case formatZed, formatCodex:
		// Neither documents any substitution: strings are taken as
		// written. (Codex reads a token from the environment by name, in
		// bearer_token_env_var and env_http_headers: see EnvHeaders.)
		return SyntaxLiteral
	case formatOpencode:
		return SyntaxOpencode
	}
	return SyntaxDefault
}

// decode reads one entry; ok is false for an entry that is no server
// mcpdrill can start or reach (it is skipped).
func (f format) decode(name string, raw json.RawMessage) (s Server, ok bool, err error) {
	switch f {
	case formatZed:
		return decodeZed(raw)
	case formatOpencode:
		return decodeOpencode(raw)
	}
	var e struct {
		Server
		ServerURL string `json:"serverUrl"`
		HTTPURL   string `json:"httpUrl"`
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		return Server{}, false, err
	}
	s = e.Server
	for _, u := range []string{e.HTTPURL, e.ServerURL} {
		if u == "" {
			continue
		}
		if s.URL != "" && s.URL != u {
			return Server{}, false, errors.New(`give one of "url", "httpUrl" and "serverUrl"`)
		}
		s.URL = u
	}
	return s, true, nil
}

// decodeZed reads a Zed context server.
func decodeZed(raw json.RawMessage) (Server, bool, error) {
	var e struct {
		Command json.RawMessage   `json:"command"`
		Args    []string          `json:"args"`
		Env     map[string]string `json:"env"`
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers"`
		Enabled *bool             `json:"enabled"`
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		return Server{}, false, err
	}
	s := Server{Args: e.Args, Env: e.Env, URL: e.URL, Headers: e.Headers, Disabled: e.Enabled != nil && !*e.Enabled}
	if len(e.Command) > 0 && string(e.Command) != "null" {
		if err := json.Unmarshal(e.Command, &s.Command); err != nil {
			// The older form: "command": {"path", "args", "env"}.
			var old struct {
				Path string            `json:"path"`
				Args []string          `json:"args"`
				Env  map[string]string `json:"env"`
			}
			if json.Unmarshal(e.Command, &old) != nil {
				return Server{}, false, errors.New(`"command" is neither a string nor {"path", "args", "env"}`)
			}
			s.Command, s.Args, s.Env = old.Path, append(old.Args, s.Args...), mergeEnv(old.Env, s.Env)
		}
	}
	if s.Command == "" && s.URL == "" {
		return Server{}, false, nil // an extension's server
	}
	return s, true, nil
}

func mergeEnv(a, b map[string]string) map[string]string {
	if len(a) == 0 {
		return b
	}
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// opencodeEntries reports whether an "mcp" object is opencode's: every
// entry an object of type local or remote.
func opencodeEntries(m map[string]json.RawMessage) bool {
	if len(m) == 0 {
		return false
	}
	for _, raw := range m {
		var e struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(raw, &e) != nil || (e.Type != "local" && e.Type != "remote") {
			return false
		}
	}
	return true
}

// decodeOpencode reads an opencode server.
func decodeOpencode(raw json.RawMessage) (Server, bool, error) {
	var e struct {
		Type        string            `json:"type"`
		Command     []string          `json:"command"`
		Environment map[string]string `json:"environment"`
		URL         string            `json:"url"`
		Headers     map[string]string `json:"headers"`
		Enabled     *bool             `json:"enabled"`
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		return Server{}, false, err
	}
	s := Server{Env: e.Environment, URL: e.URL, Headers: e.Headers, Disabled: e.Enabled != nil && !*e.Enabled}
	switch e.Type {
	case "local":
		if len(e.Command) == 0 || e.URL != "" {
			return Server{}, false, errors.New(`a local server gives "command" (an array: the program and its arguments) and no "url"`)
		}
		s.Command, s.Args = e.Command[0], e.Command[1:]
	case "remote":
		if len(e.Command) > 0 || len(e.Environment) > 0 {
			return Server{}, false, errors.New(`a remote server gives "url", not "command" or "environment"`)
		}
	default:
		return Server{}, false, fmt.Errorf("unknown type %q (want local or remote)", e.Type)
	}
	return s, true, nil
}

// ParseFile parses a configuration file's bytes by its name: Codex's
// config.toml (a .toml file) with ParseTOML, every other file with Parse.
func ParseFile(path string, data []byte, dir string) (*Config, error) {
	if strings.EqualFold(filepath.Ext(path), ".toml") {
		return ParseTOML(data, dir)
	}
	c, err := Parse(data, dir)
	if err == nil && c.Syntax == SyntaxDefault && isGeminiSettings(path) {
		c.Syntax = SyntaxGemini
	}
	return c, err
}

// isGeminiSettings reports whether path is a Gemini CLI settings.json
// (~/.gemini/settings.json, or a project's .gemini/settings.json), whose
// placeholders are Gemini's.
func isGeminiSettings(path string) bool {
	return filepath.Base(path) == "settings.json" && filepath.Base(filepath.Dir(path)) == ".gemini"
}

// ParseTOML parses Codex's config.toml (developers.openai.com/codex, "MCP";
// the keys are those of codex-rs's RawMcpServerConfig): each
// [mcp_servers.NAME] table is a server. A stdio server gives command, args,
// env (a table) and cwd; a Streamable HTTP server gives url, http_headers
// (a table), env_http_headers (header name: environment variable) and
// bearer_token_env_var (a variable holding the bearer token); enabled =
// false turns one off. Other keys of Codex's (env_vars, the timeouts,
// enabled_tools…) do not change what mcpdrill starts or reaches and are
// left. Strings are taken as written: Codex substitutes no placeholders. A
// file with no mcp_servers table is ErrNoServers.
func ParseTOML(data []byte, dir string) (*Config, error) {
	doc, err := parseTOML(data)
	if err != nil {
		return nil, err
	}
	v, ok := doc.root["mcp_servers"]
	if !ok {
		return nil, ErrNoServers
	}
	servers, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("mcp_servers is not a table")
	}
	c := newConfig(data, dir, "mcp_servers")
	c.Syntax = SyntaxLiteral
	for name, e := range servers {
		entry, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("server %q: mcp_servers.%s is not a table", name, name)
		}
		s, err := decodeCodex(entry)
		if err != nil {
			return nil, fmt.Errorf("server %q: %w", name, err)
		}
		s.Name, s.Line = name, doc.lines[tomlPath([]string{"mcp_servers", name})]
		if s.Raw, err = json.Marshal(entry); err != nil {
			return nil, fmt.Errorf("server %q: %w", name, err)
		}
		if err := s.validate(); err != nil {
			return nil, fmt.Errorf("server %q: %w", name, err)
		}
		c.Servers = append(c.Servers, s)
	}
	c.sort()
	return c, nil
}

// decodeCodex reads one [mcp_servers.NAME] table.
func decodeCodex(e map[string]any) (Server, error) {
	var s Server
	var err error
	str := func(k string) string {
		if err != nil {
			return ""
		}
		v, ok := e[k]
		if !ok {
			return ""
		}
		t, isStr := v.(string)
		if !isStr {
			err = fmt.Errorf("%s is not a string", k)
		}
		return t
	}
	table := func(k string) map[string]string {
		if err != nil {
			return nil
		}
		v, ok := e[k]
		if !ok {
			return nil
		}
		m, isMap := v.(map[string]any)
		if !isMap {
			err = fmt.Errorf("%s is not a table", k)
			return nil
		}
		out := map[string]string{}
		for mk, mv := range m {
			t, isStr := mv.(string)
			if !isStr {
				err = fmt.Errorf("%s.%s is not a string", k, mk)
				return nil
			}
			out[mk] = t
		}
		return out
	}
	s.Command, s.Cwd, s.URL = str("command"), str("cwd"), str("url")
	s.Env, s.Headers = table("env"), table("http_headers")
	envHeaders := table("env_http_headers")
	bearer, bearerVar := str("bearer_token"), str("bearer_token_env_var")
	if err != nil {
		return Server{}, err
	}
	if v, ok := e["args"]; ok {
		arr, isArr := v.([]any)
		if !isArr {
			return Server{}, errors.New("args is not an array")
		}
		for i, a := range arr {
			t, isStr := a.(string)
			if !isStr {
				return Server{}, fmt.Errorf("args[%d] is not a string", i)
			}
			s.Args = append(s.Args, t)
		}
	}
	if v, ok := e["enabled"]; ok {
		b, isBool := v.(bool)
		if !isBool {
			return Server{}, errors.New("enabled is not a boolean")
		}
		s.Disabled = !b
	}
	for _, h := range slices.Sorted(maps.Keys(envHeaders)) {
		s.EnvHeaders = append(s.EnvHeaders, EnvHeader{Name: h, Var: envHeaders[h]})
	}
	switch {
	case bearer != "" && bearerVar != "":
		return Server{}, errors.New("give bearer_token or bearer_token_env_var, not both")
	case bearer != "":
		if s.Headers == nil {
			s.Headers = map[string]string{}
		}
		s.Headers["Authorization"] = "Bearer " + bearer
	case bearerVar != "":
		s.EnvHeaders = append(s.EnvHeaders, EnvHeader{Name: "Authorization", Var: bearerVar, Prefix: "Bearer "})
	}
	for _, h := range s.EnvHeaders {
		if !isIdent(h.Var) {
			return Server{}, fmt.Errorf("%q is not an environment variable name", h.Var)
		}
	}
	return s, nil
}

// ParseClaudeProject reads the servers Claude Code keeps for one project
// in ~/.claude.json (its "local" scope: `claude mcp add --scope local`):
// the "mcpServers" of projects[project], in that file's format. A file
// without that project, or the project without servers, is ErrNoServers.
func ParseClaudeProject(data []byte, dir, project string) (*Config, error) {
	clean := stripJSONC(data)
	top, err := topObject(clean)
	if err != nil {
		return nil, err
	}
	var projects map[string]json.RawMessage
	if json.Unmarshal(top["projects"], &projects) != nil || projects == nil {
		return nil, ErrNoServers
	}
	var entry map[string]json.RawMessage
	if json.Unmarshal(projects[project], &entry) != nil || entry == nil {
		return nil, ErrNoServers
	}
	raw, ok := entry["mcpServers"]
	if !ok {
		return nil, ErrNoServers
	}
	return parseEntries(data, clean, dir, []string{"projects", project, "mcpServers"}, raw, formatMCPServers)
}
