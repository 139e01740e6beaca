// Package studies runs mcpdrill's scan over many MCP servers at once: it reads
// a servers.json in the mcpServers format MCP clients already use, scans every
// entry with bounded concurrency (optionally one shard of the list), keeps a
// row for every server including those that never started, and writes a
// versioned results.json with tool-weighted and server-weighted aggregates, a
// Markdown summary and a self-contained HTML scoreboard.
package studies

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/redact"
)

// Spec is a parsed servers.json.
type Spec struct {
	// Dir is the directory servers.json lives in; relative commands and
	// working directories are resolved against it.
	Dir string
	// Hash is "sha256:" and the hex digest of the file's bytes.
	Hash string
	// Servers are the entries sorted by name.
	Servers []Entry
}

// Entry is one server of servers.json. The client keys (command, args, env,
// cwd, url, headers, type, disabled) mean what they mean to MCP clients; the
// study keys (package, sdk, protocol, launch) are ignored by clients.
type Entry struct {
	Name    string            `json:"-"`
	Type    string            `json:"type,omitempty"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Cwd     string            `json:"cwd,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// Disabled entries are kept as skipped rows.
	Disabled bool `json:"disabled,omitempty"`

	// Package is the pinned package the server comes from, "name@version".
	Package string `json:"package,omitempty"`
	// SDK labels the MCP SDK the server is built on (as the study author
	// determined it; it is not detected).
	SDK string `json:"sdk,omitempty"`
	// Protocol forces one protocol revision for this server.
	Protocol string `json:"protocol,omitempty"`
	// VariantOf names another entry this one duplicates over another
	// transport (the same package served over HTTP, say). Variants are
	// scanned and listed, but left out of the tool- and server-weighted
	// figures so that one package is not counted twice.
	VariantOf string `json:"variant_of,omitempty"`
	// Launch starts a local process that serves URL; ${PORT} in URL and in
	// the launch command, arguments and environment is a free loopback port.
	Launch *Launch `json:"launch,omitempty"`
}

// Launch is a local process an HTTP entry needs running while it is scanned.
type Launch struct {
	Command string            `json:"command"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Cwd     string            `json:"cwd,omitempty"`
	// Ready bounds the wait for the port to accept connections, as a Go
	// duration ("20s"); default 30s.
	Ready string `json:"ready,omitempty"`
}

// Transport is "http" for URL entries and "stdio" otherwise.
func (e Entry) Transport() string {
	if e.URL != "" {
		return "http"
	}
	return "stdio"
}

// ReadyTimeout is the launch readiness bound (30s when unset).
func (l *Launch) ReadyTimeout() time.Duration {
	if l == nil || l.Ready == "" {
		return 30 * time.Second
	}
	d, err := time.ParseDuration(l.Ready)
	if err != nil || d <= 0 {
		return 30 * time.Second
	}
	return d
}

// ParseSpec parses servers.json bytes. dir is the file's directory. Both the
// "mcpServers" (Claude, Cursor) and "servers" (VS Code) top-level keys are
// accepted; other top-level keys are ignored.
func ParseSpec(data []byte, dir string) (*Spec, error) {
	var top map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&top); err != nil {
		return nil, fmt.Errorf("servers.json: %w", err)
	}
	if dec.More() {
		return nil, errors.New("servers.json: trailing data after the top-level object")
	}
	raw, ok := top["mcpServers"]
	if other, both := top["servers"]; both {
		if ok {
			return nil, errors.New(`servers.json: give "mcpServers" or "servers", not both`)
		}
		raw, ok = other, true
	}
	if !ok {
		return nil, errors.New(`servers.json: no "mcpServers" object`)
	}
	var entries map[string]json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, fmt.Errorf("servers.json: mcpServers: %w", err)
	}
	if entries == nil {
		return nil, errors.New("servers.json: mcpServers is not an object")
	}
	if name, dup := repeatedKey(raw); dup {
		return nil, fmt.Errorf("servers.json: server %q is given twice (a JSON parser would keep only the last)", name)
	}
	sum := sha256.Sum256(data)
	s := &Spec{Dir: dir, Hash: "sha256:" + hex.EncodeToString(sum[:])}
	for name, r := range entries {
		var e Entry
		if err := json.Unmarshal(r, &e); err != nil {
			return nil, fmt.Errorf("servers.json: server %q: %w", name, err)
		}
		e.Name = name
		if err := e.validate(); err != nil {
			return nil, fmt.Errorf("servers.json: server %q: %w", name, err)
		}
		s.Servers = append(s.Servers, e)
	}
	if len(s.Servers) == 0 {
		return nil, errors.New("servers.json: mcpServers is empty")
	}
	slices.SortFunc(s.Servers, func(a, b Entry) int { return cmp.Compare(a.Name, b.Name) })
	return s, nil
}

// repeatedKey reports the first member name that repeats in the JSON
// object obj (which has already been decoded once, so it is valid).
func repeatedKey(obj json.RawMessage) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if _, err := dec.Token(); err != nil {
		return "", false
	}
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return "", false
		}
		k, _ := t.(string)
		if seen[k] {
			return k, true
		}
		seen[k] = true
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return "", false
		}
	}
	return "", false
}

func (e Entry) validate() error {
	switch {
	case strings.TrimSpace(e.Name) == "":
		return errors.New("empty server name")
	case len(e.Name) > 200 || strings.ContainsAny(e.Name, "\x00\r\n"):
		return errors.New("server name too long or contains a control character")
	case e.Command == "" && e.URL == "":
		return errors.New(`give "command" or "url"`)
	case e.Command != "" && e.URL != "":
		return errors.New(`give "command" or "url", not both`)
	case e.Launch != nil && e.URL == "":
		return errors.New(`"launch" needs "url"`)
	case e.Launch != nil && e.Launch.Command == "":
		return errors.New(`"launch" needs a "command"`)
	case len(e.Headers) > 0 && e.URL == "":
		return errors.New(`"headers" need "url"`)
	}
	switch e.Type {
	case "", "stdio", "http", "streamable-http", "streamableHttp", "sse":
	default:
		return fmt.Errorf("unknown type %q", e.Type)
	}
	if (e.Type == "stdio") != (e.URL == "") && e.Type != "" {
		return fmt.Errorf("type %q does not match the entry (command vs url)", e.Type)
	}
	if e.Launch != nil {
		if e.Launch.Ready != "" {
			if d, err := time.ParseDuration(e.Launch.Ready); err != nil || d <= 0 {
				return fmt.Errorf("launch.ready %q: want a positive duration", e.Launch.Ready)
			}
		}
		// A launched server is local: its URL must stay on loopback.
		u, err := url.Parse(strings.ReplaceAll(e.URL, "${PORT}", "1"))
		if err != nil {
			return fmt.Errorf("url: %w", redact.URLError(err))
		}
		if !isLoopback(u.Hostname()) {
			return fmt.Errorf("a launched server's url must be on loopback (127.0.0.1), got host %q", u.Hostname())
		}
	}
	return nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Vars are the study's own expansion variables; ${NAME} in a command,
// argument, environment value, header value, cwd or URL is replaced by them
// first and by the process environment otherwise.
type Vars struct {
	SpecDir string
	WorkDir string
	Port    string
}

func (v Vars) lookup(env func(string) (string, bool)) func(string) (string, bool) {
	return func(k string) (string, bool) {
		switch k {
		case "SPEC_DIR":
			return v.SpecDir, v.SpecDir != ""
		case "WORK_DIR":
			return v.WorkDir, v.WorkDir != ""
		case "PORT":
			return v.Port, v.Port != ""
		}
		if env == nil {
			return "", false
		}
		return env(k)
	}
}

// Expand replaces every ${NAME} (NAME a shell-style identifier) using lookup
// and reports the names that were not found. A bare $ and any other text are
// kept as they are.
func Expand(s string, lookup func(string) (string, bool)) (string, []string) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var b strings.Builder
	var missing []string
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			break
		}
		j := strings.IndexByte(s[i+2:], '}')
		if j < 0 || !isIdent(s[i+2:i+2+j]) {
			b.WriteString(s[:i+2])
			s = s[i+2:]
			continue
		}
		name := s[i+2 : i+2+j]
		b.WriteString(s[:i])
		if v, ok := lookup(name); ok {
			b.WriteString(v)
		} else if !slices.Contains(missing, name) {
			missing = append(missing, name)
		}
		s = s[i+3+j:]
	}
	return b.String(), missing
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_', r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z':
		case i > 0 && r >= '0' && r <= '9':
		default:
			return false
		}
	}
	return true
}

// resolvePath makes a relative path that names a location (it contains a
// slash) absolute against dir; a bare program name is left for PATH lookup.
func resolvePath(p, dir string) string {
	if p == "" || filepath.IsAbs(p) || !strings.ContainsRune(p, '/') {
		return p
	}
	return filepath.Join(dir, p)
}
