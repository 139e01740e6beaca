// Package studies runs mcpdrill's scan over many MCP servers at once: it reads
// a servers.json in the mcpServers format MCP clients already use, scans every
// entry with bounded concurrency (optionally one shard of the list), keeps a
// row for every server including those that never started, and writes a
// versioned results.json with tool-weighted and server-weighted aggregates, a
// Markdown summary and a self-contained HTML scoreboard.
package studies

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/clientconfig"
	"github.com/mcpdrill/mcpdrill/internal/jsonvalue"
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
	// Inputs are the VS Code inputs the file declares (${input:ID}).
	Inputs []clientconfig.Input
}

// Entry is one server of servers.json: a client configuration's entry
// (command, args, env, cwd, url, headers, type, disabled mean what they
// mean to MCP clients) and the study keys (package, sdk, protocol,
// variant_of, launch, registry, excluded, credentials, downloads,
// previous_of, configurations), which clients ignore.
type Entry struct {
	clientconfig.Server

	// Package is the pinned package the server comes from, "name@version".
	Package string `json:"package,omitempty"`
	// SDK is the declared label of the MCP SDK the server is built on, as
	// the study author determined it; the row's sdk_observed is what the
	// evidence shows, and wins in the aggregates (see SDKObserved).
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

	// Registry is where Package comes from: "npm", "pypi", "go" or "oci";
	// empty is inferred from Package (see PackageRegistry).
	Registry string `json:"registry,omitempty"`
	// Excluded is why this candidate of the population is not scanned. The
	// entry is kept: its row is skipped with this reason.
	Excluded string `json:"excluded,omitempty"`
	// Credentials name the environment variables the server needs for real
	// use (a hint: a server that exits naming one of them needs
	// credentials, it did not fail to start).
	Credentials []string `json:"credentials,omitempty"`
	// Downloads is the package's monthly download figure when the
	// population was drawn (0: unknown).
	Downloads int64 `json:"downloads,omitempty"`
	// PreviousOf names the entry this one is the previous release of. Like
	// variants, previous releases are scanned and listed but left out of
	// the tool- and server-weighted figures.
	PreviousOf string `json:"previous_of,omitempty"`
	// Configurations are the settings known to make the server list
	// another tool set (configs.go); its tools are listed under each too.
	Configurations []Configuration `json:"configurations,omitempty"`
}

// Registries an entry's package can come from.
const (
	RegistryNPM  = "npm"
	RegistryPyPI = "pypi"
	RegistryGo   = "go"
	RegistryOCI  = "oci"
)

// PackageRegistry is e.Registry, or when it is empty the registry Package
// names: a module path whose first element holds a dot (github.com/…,
// golang.org/x/…) is Go, any other package npm; "" without a package.
func (e Entry) PackageRegistry() string {
	if e.Registry != "" || e.Package == "" {
		return e.Registry
	}
	first, _, _ := strings.Cut(e.PackageName(), "/")
	if !strings.HasPrefix(first, "@") && strings.Contains(first, ".") {
		return RegistryGo
	}
	return RegistryNPM
}

// PackageName and PackageVersion split Package ("name@version"; an npm
// scope's leading @ is part of the name); the version is empty when
// Package pins none.
func (e Entry) PackageName() string {
	name, _ := splitPackage(e.Package)
	return name
}

// PackageVersion is the version Package pins ("" when none).
func (e Entry) PackageVersion() string {
	_, v := splitPackage(e.Package)
	return v
}

func splitPackage(p string) (name, version string) {
	i := strings.LastIndex(p, "@")
	if i <= 0 {
		return p, ""
	}
	return p[:i], p[i+1:]
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

// ParseSpec parses servers.json bytes (clientconfig.Parse: "mcpServers" or
// VS Code's "servers", comments allowed) and the study keys of each entry.
// dir is the file's directory.
func ParseSpec(data []byte, dir string) (*Spec, error) {
	c, err := clientconfig.Parse(data, dir)
	if err != nil {
		return nil, fmt.Errorf("servers.json: %w", err)
	}
	if len(c.Servers) == 0 {
		return nil, fmt.Errorf("servers.json: %s is empty", c.Key)
	}
	s := &Spec{Dir: dir, Hash: c.Hash, Inputs: c.Inputs}
	for _, srv := range c.Servers {
		var e Entry
		if err := json.Unmarshal(srv.Raw, &e); err != nil {
			return nil, fmt.Errorf("servers.json: server %q: %w", srv.Name, err)
		}
		e.Server = srv
		if err := e.validate(); err != nil {
			return nil, fmt.Errorf("servers.json: server %q: %w", srv.Name, err)
		}
		s.Servers = append(s.Servers, e)
	}
	return s, nil
}

// validate checks the study keys (clientconfig checked the client ones).
func (e Entry) validate() error {
	switch {
	case e.Launch != nil && e.URL == "":
		return errors.New(`"launch" needs "url"`)
	case e.Launch != nil && e.Launch.Command == "":
		return errors.New(`"launch" needs a "command"`)
	case e.Downloads < 0:
		return errors.New(`"downloads" must not be negative`)
	case e.PreviousOf != "" && e.PreviousOf == e.Name:
		return errors.New(`"previous_of" names the entry itself`)
	}
	if err := e.validateConfigurations(); err != nil {
		return err
	}
	switch e.Registry {
	case "", RegistryNPM, RegistryPyPI, RegistryGo, RegistryOCI:
	default:
		return fmt.Errorf("registry %q: want npm, pypi, go or oci", e.Registry)
	}
	if e.Package != "" {
		if err := checkPackage(e.PackageRegistry(), e.Package); err != nil {
			return fmt.Errorf("package: %w", err)
		}
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

// Vars are the study's own expansion variables: ${SPEC_DIR}, ${WORK_DIR}
// and ${PORT} in a command, argument, environment value, header value, cwd
// or URL are replaced by them before the environment is consulted (see
// clientconfig.Resolver for every placeholder).
type Vars struct {
	SpecDir string
	WorkDir string
	Port    string
}

// vars is v as clientconfig.Resolver.Vars; an empty one is not set (so
// ${PORT} without a launch is an ordinary variable).
func (v Vars) vars() map[string]string {
	m := map[string]string{}
	for k, val := range map[string]string{"SPEC_DIR": v.SpecDir, "WORK_DIR": v.WorkDir, "PORT": v.Port} {
		if val != "" {
			m[k] = val
		}
	}
	return m
}

// WriteServers writes entries as a servers.json ({"mcpServers": {...}},
// keys sorted, two-space indent) that ParseSpec reads back.
func WriteServers(w io.Writer, entries []Entry) error {
	m := make(map[string]Entry, len(entries))
	for _, e := range entries {
		if _, dup := m[e.Name]; dup {
			return fmt.Errorf("servers.json: %q given twice", e.Name)
		}
		m[e.Name] = e
	}
	var b bytes.Buffer
	if err := jsonvalue.WriteIndented(&b, map[string]any{"mcpServers": m}); err != nil {
		return fmt.Errorf("writing servers.json: %w", err)
	}
	_, err := w.Write(b.Bytes())
	return err
}
