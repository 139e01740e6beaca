package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mcpdrill/mcpdrill/internal/clientconfig"
	"github.com/mcpdrill/mcpdrill/internal/inputfile"
	"github.com/mcpdrill/mcpdrill/internal/mcp"
	"github.com/mcpdrill/mcpdrill/internal/redact"
	"github.com/mcpdrill/mcpdrill/internal/safetext"
	"github.com/mcpdrill/mcpdrill/scan"
)

// configAuto is the --config value that reads every configuration
// `mcpdrill configs` finds.
const configAuto = "auto"

// configFlags are the flags that take the servers from MCP client
// configurations (scan, drift).
func configFlags() []cli.Flag {
	return append([]cli.Flag{
		&cli.StringFlag{Name: "config", Usage: "take the servers from an MCP client configuration `FILE` (the files `mcpdrill configs` lists: Claude, Cursor, VS Code, Windsurf, Codex, Gemini CLI, Zed, Cline, Roo Code, opencode, Kiro), or \"auto\" for your own (those in your home; a workspace's too with --workspace)"},
		&cli.StringSliceFlag{Name: "server", Usage: "with --config, only the server `NAME` (repeatable)"},
		&cli.BoolFlag{Name: trustFlag, Usage: "let a --config file you did not write (a workspace's) start its commands and send your ${env:…} and ${input:…} values to its URLs"},
	}, placeholderFlags(" With --config auto, DIR's workspace configurations are read too.")...)
}

// placeholderFlags give values to a configuration's placeholders (scan,
// drift, study run); more ends --workspace's usage.
func placeholderFlags(more string) []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "input", Usage: "`ID=VALUE` for ${input:ID} in the configuration (repeatable; values are never printed)"},
		&cli.StringFlag{Name: "workspace", Usage: "`DIR` for ${workspaceFolder} (default: the repository holding the configuration, else its directory)." + more},
	}
}

// liveTarget is a server a command talks to: the one the target flags
// name, or one of the servers of --config.
type liveTarget struct {
	cfg mcp.Config
	// file and server say which configuration entry the target is ("" for
	// the target flags), and line where the entry is in the file (0:
	// unknown).
	file, server string
	line         int
	// argv and url are the server as its configuration writes it, with its
	// placeholders: what is shown of it (redacted).
	argv []string
	url  string
	// secrets are the values no output may show.
	secrets []string
}

// name is the target as shown: its URL or command line, redacted, as the
// configuration writes it.
func (t liveTarget) name() string {
	if t.file == "" {
		return targetName(t.cfg)
	}
	if t.url != "" {
		return redact.URL(t.url)
	}
	return redact.Command(t.argv)
}

// label names a configuration's server for a heading.
func (t liveTarget) label() string {
	return fmt.Sprintf("server %s of %s", safetext.Quote(t.server), safetext.Text(t.file))
}

// show makes a report's target the server as its configuration writes
// it: expanded, it may hold what a placeholder resolved to.
func (t liveTarget) show(rep *scan.Report) {
	if t.file == "" || rep == nil {
		return
	}
	rep.Target.Command = redact.Argv(t.argv)
	if t.url != "" {
		rep.Target.URL = redact.URL(t.url)
	}
}

// liveTargets are the servers the target flags or --config name; command
// is the stdio command given after "--".
func liveTargets(c *cmdLine, command []string) ([]liveTarget, error) {
	source := c.String("config")
	if source == "" {
		for _, f := range []string{"server", "input"} {
			if len(c.StringSlice(f)) > 0 {
				return nil, usageErr("--%s goes with --config", f)
			}
		}
		cfg, err := targetConfigFor(c, command)
		if err != nil {
			return nil, err
		}
		return []liveTarget{{cfg: cfg, secrets: targetSecrets(cfg)}}, nil
	}
	if c.String("url") != "" || len(command) > 0 {
		return nil, usageErr("--config names the servers: give no --url or server command with it")
	}
	base, err := clientConfig(c)
	if err != nil {
		return nil, err
	}
	inputs, err := parseInputs(c.StringSlice("input"))
	if err != nil {
		return nil, err
	}
	files, err := configFiles(c, source)
	if err != nil {
		return nil, err
	}
	workspace := c.String("workspace")
	if workspace != "" {
		if workspace, err = filepath.Abs(workspace); err != nil {
			return nil, exitErr(exitUsage, fmt.Errorf("--workspace: %w", err))
		}
	}
	home, _ := os.UserHomeDir()
	pick := c.StringSlice("server")
	var out []liveTarget
	var problems []string
	var uses []untrustedUse
	needsInput := false
	for _, f := range files {
		r := clientconfig.Resolver{Workspace: workspace, UserHome: home, Inputs: inputs, Declared: f.cfg.Inputs, Syntax: f.cfg.Syntax}
		if r.Workspace == "" {
			r.Workspace = clientconfig.Workspace(f.cfg.Dir)
		}
		for _, s := range f.cfg.Servers {
			switch {
			case len(pick) > 0 && !slices.Contains(pick, s.Name):
				continue
			case len(pick) == 0 && s.Disabled:
				fmt.Fprintf(c.stderr, "mcpdrill: server %s of %s is disabled: not used (name it with --server to use it)\n", safetext.Quote(s.Name), safetext.Text(f.path))
				continue
			}
			x := clientconfig.NewExpander(r)
			t := s.Resolve(x, f.cfg.Dir)
			if err := x.Err(); err != nil {
				var ue *clientconfig.UnresolvedError
				needsInput = needsInput || (errors.As(err, &ue) && len(ue.Inputs) > 0)
				problems = append(problems, fmt.Sprintf("server %q of %s: %v", s.Name, f.path, err))
				continue
			}
			if !f.own {
				if u, ok := untrustedUseOf(f.path, s, t); ok {
					uses = append(uses, u)
				}
			}
			lt := liveTarget{cfg: base, file: f.path, server: s.Name, line: s.Line, argv: s.Argv(), url: s.URL, secrets: t.Secrets}
			lt.cfg.Command, lt.cfg.Dir = t.Command, t.Dir
			if t.URL != "" {
				if err := checkURL(t.URL); err != nil {
					problems = append(problems, fmt.Sprintf("server %q of %s: %v", s.Name, f.path, strings.TrimPrefix(err.Error(), "--url: ")))
					continue
				}
				lt.cfg.URL, lt.cfg.Env = t.URL, nil
				lt.cfg.Headers = mergeHeaders(t.Headers, base.Headers)
			} else {
				// The flags' --env come last: os/exec keeps the last of a repeated key.
				lt.cfg.Env, lt.cfg.Headers = append(t.Env, base.Env...), nil
			}
			lt.secrets = append(lt.secrets, targetSecrets(base)...)
			out = append(out, lt)
		}
	}
	if len(problems) > 0 {
		msg := "unresolved configuration:\n  " + strings.Join(problems, "\n  ")
		if needsInput {
			msg += "\ngive each input with --input ID=VALUE"
		}
		return nil, usageErr("%s", msg)
	}
	for _, name := range pick {
		if !slices.ContainsFunc(files, func(f configFile) bool { _, ok := f.cfg.Get(name); return ok }) {
			return nil, usageErr("--server %q: no such server in %s (servers: %s)", name, describeFiles(files), strings.Join(serverNames(files), ", "))
		}
	}
	if len(out) == 0 {
		return nil, usageErr("no server to use in %s", describeFiles(files))
	}
	if err := requireTrust(c, uses); err != nil {
		return nil, err
	}
	return out, nil
}

// oneLiveTarget is liveTargets for a command that talks to one server.
func oneLiveTarget(c *cmdLine, command []string) (liveTarget, error) {
	ts, err := liveTargets(c, command)
	if err != nil {
		return liveTarget{}, err
	}
	if len(ts) > 1 {
		names := make([]string, len(ts))
		for i, t := range ts {
			names[i] = t.server
		}
		return liveTarget{}, usageErr("%d servers in --config (%s): name one with --server", len(ts), strings.Join(names, ", "))
	}
	return ts[0], nil
}

// configFile is a configuration read for --config.
type configFile struct {
	path string
	cfg  *clientconfig.Config
	// own is true for one of the user's own client configurations (in the
	// home or configuration directory): it needs no trust (trust.go).
	own bool
}

// configFiles reads --config: one file, or every configuration found: the
// user's own, and a workspace's only when --workspace names it.
func configFiles(c *cmdLine, source string) ([]configFile, error) {
	p, err := currentPlatform(c, false)
	if err != nil {
		return nil, err
	}
	if source != configAuto {
		cfg, err := clientconfig.ReadFile(source, inputfile.Read)
		if err != nil {
			return nil, usageErr("--config: %v", err)
		}
		return []configFile{{path: source, cfg: cfg, own: p.Own(source)}}, nil
	}
	var out []configFile
	for _, f := range clientconfig.Discover(p, inputfile.Read) {
		if f.Err != nil {
			fmt.Fprintf(c.stderr, "mcpdrill: skipping %s (%s): %s\n", safetext.Text(f.Path), f.Client, safetext.Text(f.Err.Error()))
			continue
		}
		out = append(out, configFile{path: f.Path, cfg: f.Config, own: f.Scope != "workspace"})
	}
	if len(out) == 0 {
		return nil, usageErr("--config auto: no MCP client configuration of yours found (a workspace's is read only with --workspace DIR; `mcpdrill configs` says where it looks)")
	}
	return out, nil
}

// currentPlatform is where this machine's user keeps configurations; the
// workspace is --workspace, else (when guess is set) the repository
// holding the current directory, else the current directory. Without
// guess and without --workspace there is none: a workspace's files are
// read only when the user names it.
func currentPlatform(c *cmdLine, guess bool) (clientconfig.Platform, error) {
	var p clientconfig.Platform
	p.Home, _ = os.UserHomeDir()
	p.ConfigDir, _ = os.UserConfigDir()
	p.CodexHome = c.getenv("CODEX_HOME")
	ws := c.String("workspace")
	if ws == "" && !guess {
		return p, nil
	}
	if ws == "" {
		wd, err := os.Getwd()
		if err != nil {
			return p, exitErr(exitInternal, err)
		}
		ws = clientconfig.Workspace(wd)
	}
	abs, err := filepath.Abs(ws)
	if err != nil {
		return p, exitErr(exitUsage, fmt.Errorf("--workspace: %w", err))
	}
	p.Workspace = abs
	return p, nil
}

func describeFiles(files []configFile) string {
	if len(files) == 1 {
		return files[0].path
	}
	return fmt.Sprintf("%d configurations", len(files))
}

func serverNames(files []configFile) []string {
	var out []string
	for _, f := range files {
		for _, n := range f.cfg.Names() {
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	return out
}

// parseInputs reads --input ID=VALUE pairs.
func parseInputs(pairs []string) (map[string]string, error) {
	m := map[string]string{}
	for _, p := range pairs {
		id, v, ok := strings.Cut(p, "=")
		if !ok || id == "" {
			return nil, usageErr("--input: want ID=VALUE, got a value without an ID")
		}
		m[id] = v
	}
	return m, nil
}

// mergeHeaders adds the --header flags to a configuration's headers.
func mergeHeaders(cfg, flags http.Header) http.Header {
	if len(cfg) == 0 && len(flags) == 0 {
		return nil
	}
	h := cfg.Clone()
	if h == nil {
		h = http.Header{}
	}
	for k, vs := range flags {
		h[k] = append(h[k], vs...)
	}
	return h
}

// targetSecrets are the secrets of what the target flags give a server
// (--env, --header, --url, the command after --), as the masking rule says
// (redact.Secrets).
func targetSecrets(cfg mcp.Config) []string {
	var s redact.Secrets
	for _, kv := range cfg.Env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			s.Env(k, v)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(cfg.Headers)) {
		for _, v := range cfg.Headers[k] {
			s.Header(k, v)
		}
	}
	s.URL(cfg.URL)
	s.Argv(cfg.Command)
	return s.Values()
}

// maskOf masks the secrets of every target.
func maskOf(ts []liveTarget) func(string) string {
	var all []string
	for _, t := range ts {
		all = append(all, t.secrets...)
	}
	return redact.Values(all)
}

// maskedWriter holds what a command writes and hands it on, masked, at
// Flush, so that no secret a configuration resolved reaches the output
// whatever wrote it (a server's stderr, an error message).
type maskedWriter struct {
	w    io.Writer
	mask func(string) string
	buf  bytes.Buffer
}

func newMaskedWriter(w io.Writer, mask func(string) string) *maskedWriter {
	return &maskedWriter{w: w, mask: mask}
}

// Write implements io.Writer.
func (m *maskedWriter) Write(p []byte) (int, error) { return m.buf.Write(p) }

// Unwrap is the writer the output goes to (for terminal detection).
func (m *maskedWriter) Unwrap() io.Writer { return m.w }

// Flush writes what was held, masked.
func (m *maskedWriter) Flush() error {
	s := m.mask(m.buf.String())
	m.buf.Reset()
	if _, err := io.WriteString(m.w, s); err != nil {
		return exitErr(exitInternal, err)
	}
	return nil
}

// maskedError is an error whose text was masked; it unwraps to the
// original for its exit code.
type maskedError struct {
	msg string
	err error
}

func (e *maskedError) Error() string { return e.msg }
func (e *maskedError) Unwrap() error { return e.err }

// maskErr masks err's text, keeping its exit code.
func maskErr(err error, mask func(string) string) error {
	var ee *exitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ee):
		if ee.err == nil {
			return err
		}
		return &exitError{code: ee.code, err: &maskedError{msg: mask(ee.err.Error()), err: ee.err}}
	}
	return &maskedError{msg: mask(err.Error()), err: err}
}
