package mcpserve

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/clientconfig"
	"github.com/mcpdrill/mcpdrill/internal/inputfile"
	"github.com/mcpdrill/mcpdrill/internal/mcp"
	"github.com/mcpdrill/mcpdrill/internal/redact"
)

// Targets is what the tools may reach. The model names a target; it never
// gives a command line, a header, an environment value or a file to read.
//
// Configurations: with Files empty, the user's own client configurations
// (the "user" locations of clientconfig.Locations under Home and
// ConfigDir), read afresh at each call; with TrustWorkspace, also those of
// Workspace (.vscode/mcp.json, .cursor/mcp.json, .mcp.json). With Files,
// exactly those files. A server of one of them may be started (stdio) or
// connected to (HTTP, with the headers its entry gives) by its name: it is
// a server the user configured for their own client. Its disabled entries
// are not used.
//
// URLs: an http(s) URL with no user info, connected to with no header,
// through no proxy, only when every address it reaches is public (or
// loopback or private and allowed: AllowURLs), never link-local, multicast
// or unspecified. The address is checked when each connection is dialled,
// so a name that resolves elsewhere later (DNS rebinding) or a redirect is
// held to the same rule.
type Targets struct {
	// Files are the configuration files named at start; empty: discover.
	Files []string
	// TrustWorkspace adds Workspace's configurations to discovery.
	TrustWorkspace bool
	// Home, ConfigDir and Workspace locate the configurations (see
	// clientconfig.Platform).
	Home, ConfigDir, Workspace string
	// AllowURLs are the origins (scheme://host[:port]) of loopback or
	// private-network servers the user allows by URL.
	AllowURLs []string
	// LookupEnv reads the environment for placeholders (os.LookupEnv when
	// nil).
	LookupEnv func(string) (string, bool)
}

// configFile is one configuration the tools may read, as read now.
type configFile struct {
	Path   string
	Client string // the client that keeps it ("" for a file named at start)
	Scope  string // "user", "workspace" or "named at start"
	Config *clientconfig.Config
	Err    error
}

// files reads the configurations the tools may use.
func (t *Targets) files() []configFile {
	if len(t.Files) > 0 {
		out := make([]configFile, 0, len(t.Files))
		for _, p := range t.Files {
			cfg, err := clientconfig.ReadFile(p, inputfile.Read)
			out = append(out, configFile{Path: p, Scope: "named at start", Config: cfg, Err: err})
		}
		return out
	}
	p := clientconfig.Platform{Home: t.Home, ConfigDir: t.ConfigDir}
	if t.TrustWorkspace {
		p.Workspace = t.Workspace
	}
	var out []configFile
	for _, f := range clientconfig.Discover(p, inputfile.Read) {
		out = append(out, configFile{Path: f.Path, Client: f.Client, Scope: f.Scope, Config: f.Config, Err: f.Err})
	}
	return out
}

// Bounds of the model's target and config arguments.
const (
	maxTargetBytes = 2048
	maxPathBytes   = 4096
)

// resolved is a target ready to connect to.
type resolved struct {
	cfg mcp.Config
	// kind is "server" or "url"; server and file name a configured one.
	kind, server, file string
	// shown is the target as it may be shown: the URL redacted, or the
	// server's name.
	shown string
	// mask hides every secret the target was resolved with.
	mask func(string) string
}

// userError is a refusal the model reads as a tool error.
type userError struct{ msg string }

func (e *userError) Error() string { return e.msg }

func refuse(format string, a ...any) error { return &userError{fmt.Sprintf(format, a...)} }

// resolve turns the model's target (a server name or a URL) and optional
// configuration path into a connection, or refuses.
func (t *Targets) resolve(target, config string, base mcp.Config) (*resolved, error) {
	target = strings.TrimSpace(target)
	switch {
	case target == "":
		return nil, refuse("target is empty: give a server name (the servers tool lists them) or an http(s) URL")
	case len(target) > maxTargetBytes:
		return nil, refuse("target is over %d bytes", maxTargetBytes)
	case len(config) > maxPathBytes:
		return nil, refuse("config is over %d bytes", maxPathBytes)
	}
	if strings.HasPrefix(strings.ToLower(target), "http://") || strings.HasPrefix(strings.ToLower(target), "https://") {
		if config != "" {
			return nil, refuse("config goes with a server name, not with a URL")
		}
		return t.resolveURL(target, base)
	}
	if strings.Contains(target, "://") {
		return nil, refuse("only http:// and https:// URLs are accepted")
	}
	return t.resolveServer(target, config, base)
}

func (t *Targets) resolveServer(name, config string, base mcp.Config) (*resolved, error) {
	files := t.files()
	if config != "" {
		i := slices.IndexFunc(files, func(f configFile) bool { return samePath(f.Path, config) })
		if i < 0 {
			return nil, refuse("config %s is not one of the configurations this server may read (the servers tool lists them)", quote(config))
		}
		files = files[i : i+1]
	}
	var hits []configFile
	for _, f := range files {
		if f.Config != nil {
			if _, ok := f.Config.Get(name); ok {
				hits = append(hits, f)
			}
		}
	}
	switch {
	case len(hits) == 0:
		return nil, refuse("no server named %s in %s (the servers tool lists them)", quote(name), describe(files))
	case len(hits) > 1:
		var paths []string
		for _, h := range hits {
			paths = append(paths, h.Path)
		}
		return nil, refuse("server %s is in %d configurations (%s): give config", quote(name), len(hits), strings.Join(paths, ", "))
	}
	s, _ := hits[0].Config.Get(name)
	return t.connect(hits[0], s, base)
}

// connect resolves server s of configuration f: its placeholders
// expanded (an ${input:ID} has no value here: the server is refused), a
// stdio command to start or a URL with the entry's headers.
func (t *Targets) connect(f configFile, s clientconfig.Server, base mcp.Config) (*resolved, error) {
	if s.Disabled {
		return nil, refuse("server %s is disabled in %s", quote(s.Name), f.Path)
	}
	x := clientconfig.NewExpander(clientconfig.Resolver{LookupEnv: t.LookupEnv, Workspace: clientconfig.Workspace(f.Config.Dir),
		UserHome: t.Home, Declared: f.Config.Inputs})
	res := s.Resolve(x, f.Config.Dir)
	if err := x.Err(); err != nil {
		return nil, refuse("server %s of %s cannot be resolved here: %v (scan it with `mcpdrill scan --config FILE --server NAME --input ID=VALUE`)", quote(s.Name), f.Path, err)
	}
	cfg := base
	if res.URL != "" {
		if _, err := checkURL(res.URL); err != nil {
			return nil, refuse("server %s of %s: %v", quote(s.Name), f.Path, err)
		}
		cfg.URL, cfg.Headers = res.URL, res.Headers
	} else {
		cfg.Command, cfg.Env, cfg.Dir = res.Command, res.Env, res.Dir
	}
	return &resolved{cfg: cfg, kind: "server", server: s.Name, file: f.Path, shown: s.Name, mask: redact.Values(res.Secrets)}, nil
}

// checkURL parses an http(s) URL with a host and no user info.
func checkURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, errors.New("not a valid URL")
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, errors.New("only http:// and https:// URLs are accepted")
	case u.Hostname() == "":
		return nil, errors.New("the URL names no host")
	case u.User != nil:
		return nil, errors.New("a URL with user info (credentials) is refused: configure the server in your MCP client and name it instead")
	}
	return u, nil
}

func (t *Targets) resolveURL(raw string, base mcp.Config) (*resolved, error) {
	u, err := checkURL(raw)
	if err != nil {
		return nil, refuse("%v", err)
	}
	allowed := t.allowedOrigin(u)
	cfg := base
	cfg.URL = raw
	cfg.HTTPClient = &http.Client{Transport: guardedTransport(allowed)}
	var secrets []string
	for _, vs := range u.Query() {
		secrets = append(secrets, vs...)
	}
	return &resolved{cfg: cfg, kind: "url", shown: redact.URL(raw), mask: redact.Values(secrets)}, nil
}

// allowedOrigin reports whether the user allowed u's origin by URL
// (AllowURLs), which lets it reach loopback and private addresses.
func (t *Targets) allowedOrigin(u *url.URL) bool {
	o := origin(u)
	for _, a := range t.AllowURLs {
		if p, err := url.Parse(a); err == nil && origin(p) == o {
			return true
		}
	}
	return false
}

// origin is scheme://host:port with the default port written out.
func origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
	}
	return strings.ToLower(u.Scheme) + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// errAddress is the dial refusal of an address the rule forbids.
var errAddress = errors.New("address refused")

// guardedTransport dials only addresses addressAllowed accepts (checked on
// the connected address, after resolution), through no proxy.
func guardedTransport(private bool) *http.Transport {
	d := &net.Dialer{Timeout: 30 * time.Second, Control: func(_, address string, _ syscall.RawConn) error {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			return fmt.Errorf("%w: %s", errAddress, address)
		}
		ip, err := netip.ParseAddr(host)
		if err != nil {
			return fmt.Errorf("%w: %s", errAddress, host)
		}
		if why := addressRefused(ip, private); why != "" {
			return fmt.Errorf("%w: %s is %s (start `mcpdrill mcp --allow-url ORIGIN` to allow a loopback or private server)", errAddress, ip, why)
		}
		return nil
	}}
	return &http.Transport{
		Proxy:               nil,
		DialContext:         d.DialContext,
		ForceAttemptHTTP2:   true,
		MaxIdleConns:        4,
		IdleConnTimeout:     30 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
	}
}

// addressRefused says why ip may not be dialled ("" when it may): never a
// link-local (cloud metadata lives there), multicast or unspecified
// address; a loopback or private one only when private is set.
func addressRefused(ip netip.Addr, private bool) string {
	ip = ip.Unmap()
	switch {
	case ip.IsUnspecified():
		return "unspecified"
	case ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast():
		return "link-local"
	case ip.IsMulticast(), ip.IsInterfaceLocalMulticast():
		return "multicast"
	case private:
		return ""
	case ip.IsLoopback():
		return "loopback"
	case ip.IsPrivate(), sharedSpace.Contains(ip):
		return "private"
	}
	return ""
}

// sharedSpace is RFC 6598's carrier-grade NAT range, private in practice.
var sharedSpace = netip.MustParsePrefix("100.64.0.0/10")

func samePath(a, b string) bool {
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	if err1 != nil || err2 != nil {
		return false
	}
	if aa == bb {
		return true
	}
	ra, err1 := filepath.EvalSymlinks(aa)
	rb, err2 := filepath.EvalSymlinks(bb)
	return err1 == nil && err2 == nil && ra == rb
}

func describe(files []configFile) string {
	switch len(files) {
	case 0:
		return "no configuration"
	case 1:
		return files[0].Path
	}
	return fmt.Sprintf("%d configurations", len(files))
}
