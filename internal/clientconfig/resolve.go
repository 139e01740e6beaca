package clientconfig

import (
	"maps"
	"net/http"
	"net/textproto"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcpdrill/mcpdrill/internal/redact"
)

// Target is a server entry with its placeholders expanded: what to start,
// or where to connect.
type Target struct {
	// Command is the stdio server's argv; Env its extra KEY=VALUE entries,
	// sorted by key; Dir its working directory ("" when the entry names
	// none).
	Command []string
	Env     []string
	Dir     string
	// URL and Headers are an HTTP server's.
	URL     string
	Headers http.Header
	// Secrets are the values no output may show, as the masking rule says
	// (redact.Secrets): every header value and input, what placeholders
	// read from the environment under a secret-looking name, environment
	// values under one, and what sits where a secret goes in the command
	// line and the URL.
	Secrets []string
	// Used are the placeholders, as written, that took a value from the
	// user's environment or from an input (Expander.Used).
	Used []string
}

// Resolve expands the entry with x. dir is the configuration's directory:
// a relative command that names a location (it holds a slash) and a
// relative cwd are resolved against it; a bare program name is left for
// PATH. The caller checks x.Err before using the target.
func (s Server) Resolve(x *Expander, dir string) Target {
	var t Target
	if s.Command != "" {
		t.Command = append([]string{ResolvePath(x.Expand(s.Command), dir)}, x.All(s.Args)...)
		t.Env = ExpandEnv(x, s.Env)
		if s.Cwd != "" {
			t.Dir = ResolveDir(x.Expand(s.Cwd), dir)
		}
	}
	t.URL = x.Expand(s.URL)
	var sec redact.Secrets
	if len(s.Headers) > 0 || len(s.EnvHeaders) > 0 {
		t.Headers = http.Header{}
		for _, k := range slices.Sorted(maps.Keys(s.Headers)) {
			v := x.Expand(s.Headers[k])
			t.Headers.Add(textproto.CanonicalMIMEHeaderKey(k), v)
			sec.Header(k, v)
		}
		for _, h := range s.EnvHeaders {
			v, found := x.env(h.Var, "$"+h.Var)
			if !found {
				x.missing.Env = appendNew(x.missing.Env, h.Var)
			}
			t.Headers.Set(textproto.CanonicalMIMEHeaderKey(h.Name), h.Prefix+v)
			sec.Header(h.Name, v)
		}
	}
	for _, kv := range t.Env {
		k, v, _ := strings.Cut(kv, "=")
		sec.Env(k, v)
	}
	sec.URL(t.URL)
	sec.Argv(t.Command)
	for _, v := range x.Secrets() {
		sec.Add(v)
	}
	t.Secrets, t.Used = sec.Values(), x.Used()
	return t
}

// Argv is the entry's command line as written (placeholders unexpanded),
// for display.
func (s Server) Argv() []string {
	if s.Command == "" {
		return nil
	}
	return append([]string{s.Command}, s.Args...)
}

// ExpandEnv expands an environment map into KEY=VALUE entries sorted by key.
func ExpandEnv(x *Expander, m map[string]string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, k+"="+x.Expand(m[k]))
	}
	return out
}

// ResolvePath makes a relative path that names a location (it contains a
// slash) absolute against dir; a bare program name is left for PATH lookup.
func ResolvePath(p, dir string) string {
	if p == "" || filepath.IsAbs(p) || !strings.ContainsAny(p, "/"+string(filepath.Separator)) {
		return p
	}
	return filepath.Join(dir, p)
}

// ResolveDir makes a relative directory absolute against dir.
func ResolveDir(p, dir string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

// RepoRoot is the nearest directory at or above dir that holds .git, or ""
// when there is none. It, or else the configuration's own directory, is a
// configuration's default ${workspaceFolder} (see Workspace).
func RepoRoot(dir string) string {
	for d := dir; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

// Workspace is the ${workspaceFolder} of a configuration in dir when the
// user names none: the repository holding it, else dir itself.
func Workspace(dir string) string {
	if root := RepoRoot(dir); root != "" {
		return root
	}
	return dir
}
