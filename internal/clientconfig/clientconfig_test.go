package clientconfig

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
)

// TestParseClientFiles parses a configuration as each client writes it
// (testdata/*.json) and compares what was read with parsed.golden.
func TestParseClientFiles(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	tomls, _ := filepath.Glob(filepath.Join("testdata", "*.toml"))
	files = append(files, tomls...)
	var b strings.Builder
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		c, err := ParseFile(f, data, "/cfg")
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		fmt.Fprintf(&b, "== %s (%s, syntax %d)\n", filepath.Base(f), c.Key, c.Syntax)
		if len(c.Skipped) > 0 {
			fmt.Fprintf(&b, "skipped %q\n", c.Skipped)
		}
		for _, in := range c.Inputs {
			fmt.Fprintf(&b, "input %s: %s %q password=%v\n", in.ID, in.Type, in.Description, in.Password)
		}
		for _, s := range c.Servers {
			fmt.Fprintf(&b, "%s (line %d): %s type=%q disabled=%v argv=%q env=%q cwd=%q url=%q headers=%q env-headers=%v\n",
				s.Name, s.Line, s.Transport(), s.Type, s.Disabled, s.Argv(), s.Env, s.Cwd, s.URL, s.Headers, s.EnvHeaders)
		}
	}
	testutil.Golden(t, "parsed.golden", []byte(b.String()))
}

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		names   []string
		key     string
		wantErr string
	}{
		{"mcpServers", `{"mcpServers":{"b":{"command":"x"},"a":{"url":"http://h/mcp","headers":{"Authorization":"Bearer ${T}"}}}}`, []string{"a", "b"}, "mcpServers", ""},
		{"vscode servers key", `{"servers":{"one":{"type":"stdio","command":"x","args":["--y"]}}}`, []string{"one"}, "servers", ""},
		{"vscode settings", `{"a.b": 1, "mcp": {"servers": {"m": {"command": "x"}}}}`, []string{"m"}, "mcp.servers", ""},
		{"comments and trailing commas", "{// c\n\"servers\": {\"a\": {\"command\": \"x\", /* \"y\" */},},}", []string{"a"}, "servers", ""},
		{"comment markers inside strings", `{"servers": {"a": {"command": "x", "args": ["//not", "/*kept*/", "a,]"]}}}`, []string{"a"}, "servers", ""},
		{"extra top-level keys", `{"inputs":[],"mcpServers":{"a":{"command":"x"}}}`, []string{"a"}, "mcpServers", ""},
		{"empty", `{"mcpServers":{}}`, nil, "mcpServers", ""},
		{"both keys", `{"mcpServers":{"a":{"command":"x"}},"servers":{}}`, nil, "", "not both"},
		{"no key", `{"other":{}}`, nil, "", `no "mcpServers"`},
		{"settings without mcp", `{"mcp":{"other":1}}`, nil, "", `no "mcpServers"`},
		{"null", `{"mcpServers":null}`, nil, "", "not an object"},
		{"top level not an object", `[]`, nil, "", "not a JSON object"},
		{"top level null", `null`, nil, "", "not a JSON object"},
		{"neither command nor url", `{"mcpServers":{"a":{"args":["x"]}}}`, nil, "", `give "command" or "url"`},
		{"command and url", `{"mcpServers":{"a":{"command":"x","url":"http://h"}}}`, nil, "", "not both"},
		{"headers on stdio", `{"mcpServers":{"a":{"command":"x","headers":{"A":"b"}}}}`, nil, "", `"headers" need "url"`},
		{"unknown type", `{"mcpServers":{"a":{"type":"ws","command":"x"}}}`, nil, "", "unknown type"},
		{"type mismatch", `{"mcpServers":{"a":{"type":"stdio","url":"http://h"}}}`, nil, "", "does not match"},
		{"trailing data", `{"mcpServers":{"a":{"command":"x"}}} {}`, nil, "", "trailing"},
		{"not json", `mcpServers`, nil, "", "not a JSON object"},
		{"duplicate name", `{"mcpServers":{"a":{"command":"x"},"b":{"command":"y"},"a":{"command":"z"}}}`, nil, "", `server "a" is given twice`},
		{"names differing in case", `{"mcpServers":{"a":{"command":"x"},"A":{"command":"y"}}}`, []string{"A", "a"}, "mcpServers", ""},
		{"wrong field type", `{"mcpServers":{"a":{"command":"x","args":"y"}}}`, nil, "", `server "a"`},
		{"bad inputs", `{"servers":{"a":{"command":"x"}},"inputs":{}}`, nil, "", "inputs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse([]byte(tt.in), "/spec")
			if testutil.WantErrorText(t, err, tt.wantErr) {
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(c.Names(), tt.names) || c.Key != tt.key {
				t.Fatalf("names = %v, key %q; want %v, %q", c.Names(), c.Key, tt.names, tt.key)
			}
			if !strings.HasPrefix(c.Hash, "sha256:") || len(c.Hash) != 71 {
				t.Fatalf("hash = %q", c.Hash)
			}
		})
	}
	if _, err := Parse([]byte(`{"x":1}`), ""); !errors.Is(err, ErrNoServers) {
		t.Errorf("no servers object: %v, want ErrNoServers", err)
	}
}

func TestParseKeepsStringsAndRaw(t *testing.T) {
	c, err := Parse([]byte(`{"servers": {"a": {"command": "x", "args": ["//not", "/*kept*/", "a,]", "q\"//"], "own": 1, }}}`), "")
	if err != nil {
		t.Fatal(err)
	}
	s := c.Servers[0]
	if want := []string{"//not", "/*kept*/", "a,]", `q"//`}; !slices.Equal(s.Args, want) {
		t.Errorf("args = %q, want %q", s.Args, want)
	}
	var own struct{ Own int }
	if err := json.Unmarshal(s.Raw, &own); err != nil || own.Own != 1 {
		t.Errorf("raw %s: %v, own %d", s.Raw, err, own.Own)
	}
}

func TestExpand(t *testing.T) {
	env := map[string]string{"HOME": "/h", "EMPTY": "", "TOKEN": "tok-123", "PORT": "99"}
	r := Resolver{
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		Vars:      map[string]string{"SPEC_DIR": "/spec"},
		Workspace: "/srv/ws/repo",
		UserHome:  "/home/u",
		Inputs:    map[string]string{"api-key": "key-456"},
		Declared:  []Input{{ID: "other", Description: "Other key"}},
	}
	tests := []struct {
		in, want string
		secrets  []string
		err      string
	}{
		{"plain", "plain", nil, ""},
		{"${HOME}/x", "/h/x", nil, ""}, // neither the name nor a path says secret
		{"${env:HOME}/x", "/h/x", nil, ""},
		{"a${EMPTY}b", "ab", nil, ""},
		{"${SPEC_DIR}/s", "/spec/s", nil, ""},
		{"${UNSET:-fallback}", "fallback", nil, ""},
		{"${EMPTY:-fallback}", "fallback", nil, ""},
		{"${TOKEN:-fallback}", "tok-123", []string{"tok-123"}, ""},
		{"${UNSET:-}x", "x", nil, ""},
		{"${workspaceFolder}/bin", "/srv/ws/repo/bin", nil, ""},
		{"${workspaceFolderBasename}", "repo", nil, ""},
		{"${userHome}/.cfg", "/home/u/.cfg", nil, ""},
		{"a${pathSeparator}b${/}c", "a" + string(filepath.Separator) + "b" + string(filepath.Separator) + "c", nil, ""},
		{"Bearer ${input:api-key}", "Bearer key-456", []string{"key-456"}, ""},
		{"$HOME stays", "$HOME stays", nil, ""},
		{"^[a-z]+$", "^[a-z]+$", nil, ""},
		{"${not valid}", "${not valid}", nil, ""},
		{"${1X}", "${1X}", nil, ""},
		{"${}", "${}", nil, ""},
		{"${HOME", "${HOME", nil, ""},
		{"http://127.0.0.1:${PORT}/mcp", "http://127.0.0.1:99/mcp", nil, ""},
		{"${UNSET}-${UNSET}-${env:OTHER}", "--", nil, "environment variable(s) not set: UNSET, OTHER"},
		{"Bearer ${input:missing}", "Bearer ", nil, `input "missing" has no value`},
		{"${input:other}", "", nil, `input "other" (Other key) has no value`},
		{"${command:pick}", "", nil, "placeholder(s) that cannot be resolved: ${command:pick}"},
		{"${env:}", "", nil, "${env:}"},
	}
	for _, tt := range tests {
		x := NewExpander(r)
		got := x.Expand(tt.in)
		err := x.Err()
		if got != tt.want || !slices.Equal(x.Secrets(), tt.secrets) || (err == nil) != (tt.err == "") || (err != nil && !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("Expand(%q) = %q, secrets %q, err %v; want %q, %q, %q", tt.in, got, x.Secrets(), err, tt.want, tt.secrets, tt.err)
		}
		if err != nil && !errors.Is(err, ErrUnresolved) {
			t.Errorf("Expand(%q): %v is not ErrUnresolved", tt.in, err)
		}
	}
	// Used names what took a value from the environment or an input.
	x := NewExpander(r)
	x.Expand("${HOME} ${env:TOKEN} ${SPEC_DIR} ${UNSET:-d} ${input:api-key} ${HOME}")
	if want := []string{"${HOME}", "${env:TOKEN}", "${input:api-key}"}; !slices.Equal(x.Used(), want) {
		t.Errorf("used %q, want %q", x.Used(), want)
	}
	// Without a workspace or a home those placeholders are unresolved.
	x = NewExpander(Resolver{LookupEnv: func(string) (string, bool) { return "", false }})
	x.Expand("${workspaceFolder} ${userHome}")
	var ue *UnresolvedError
	if !errors.As(x.Err(), &ue) || !slices.Equal(ue.Other, []string{"${workspaceFolder}", "${userHome}"}) {
		t.Errorf("no workspace, no home: %v", x.Err())
	}
}

func TestResolve(t *testing.T) {
	c, err := Parse([]byte(`{"servers": {
		"s": {"command": "./bin/srv", "args": ["--root", "${workspaceFolder}", "${env:POSITIONAL}", "--token", "${env:FLAGGED}"], "cwd": "sub",
		      "env": {"B": "${input:key}", "A": "literal-value", "API_TOKEN": "literal-token", "FSROOT": "/tmp"}},
		"h": {"type": "http", "url": "https://h.test/${env:TENANT}/mcp", "headers": {"x-api-key": "${input:key}", "X-Other": "fixed-header"}}
	}}`), "/cfg")
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"POSITIONAL": "positional", "FLAGGED": "flagged-secret", "TENANT": "acme"}
	r := Resolver{LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }, Workspace: "/ws", Inputs: map[string]string{"key": "input-secret"}}

	s, _ := c.Get("s")
	x := NewExpander(r)
	st := s.Resolve(x, c.Dir)
	if err := x.Err(); err != nil {
		t.Fatal(err)
	}
	if want := []string{"/cfg/bin/srv", "--root", "/ws", "positional", "--token", "flagged-secret"}; !slices.Equal(st.Command, want) {
		t.Errorf("command = %q, want %q", st.Command, want)
	}
	if want := []string{"A=literal-value", "API_TOKEN=literal-token", "B=input-secret", "FSROOT=/tmp"}; !slices.Equal(st.Env, want) {
		t.Errorf("env = %q, want %q", st.Env, want)
	}
	if st.Dir != "/cfg/sub" {
		t.Errorf("dir = %q", st.Dir)
	}
	// Secret by name (API_TOKEN), by position (--token), as an input; not
	// a value whose name and place say nothing (A, POSITIONAL), nor a path.
	if want := []string{"literal-token", "flagged-secret", "input-secret"}; !slices.Equal(st.Secrets, want) {
		t.Errorf("secrets = %q, want %q", st.Secrets, want)
	}
	if want := []string{"${env:POSITIONAL}", "${env:FLAGGED}", "${input:key}"}; !slices.Equal(st.Used, want) {
		t.Errorf("used = %q, want %q", st.Used, want)
	}
	if want := []string{"./bin/srv", "--root", "${workspaceFolder}", "${env:POSITIONAL}", "--token", "${env:FLAGGED}"}; !slices.Equal(s.Argv(), want) {
		t.Errorf("argv as written = %q", s.Argv())
	}

	h, _ := c.Get("h")
	x = NewExpander(r)
	ht := h.Resolve(x, c.Dir)
	if ht.URL != "https://h.test/acme/mcp" || ht.Headers.Get("X-Api-Key") != "input-secret" || ht.Headers.Get("X-Other") != "fixed-header" || ht.Command != nil {
		t.Errorf("http target = %+v", ht)
	}
	if want := []string{"fixed-header", "input-secret"}; !slices.Equal(ht.Secrets, want) {
		t.Errorf("secrets = %q, want %q", ht.Secrets, want)
	}
	if _, ok := c.Get("nope"); ok {
		t.Error("Get found a server that is not there")
	}
}

func TestResolvePath(t *testing.T) {
	tests := []struct{ in, want string }{
		{"node", "node"},
		{"node_modules/.bin/x", "/spec/node_modules/.bin/x"},
		{"./run.sh", "/spec/run.sh"},
		{"/usr/bin/env", "/usr/bin/env"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := ResolvePath(tt.in, "/spec"); got != tt.want {
			t.Errorf("ResolvePath(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestRepoRoot(t *testing.T) {
	dir := t.TempDir()
	deep := filepath.Join(dir, "repo", "a", "b")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	if got, ws := RepoRoot(deep), Workspace(deep); got != "" || ws != deep {
		t.Errorf("no repository: RepoRoot %q, Workspace %q; want none and the directory itself", got, ws)
	}
	if err := os.WriteFile(filepath.Join(dir, "repo", ".git"), []byte("gitdir: elsewhere\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, ws := RepoRoot(deep), Workspace(deep); got != filepath.Join(dir, "repo") || ws != got {
		t.Errorf("RepoRoot %q, Workspace %q; want the directory holding .git", got, ws)
	}
}

// TestLocations lists where each client keeps its servers with the user
// configuration directory of Linux, macOS and Windows.
func TestLocations(t *testing.T) {
	var b strings.Builder
	for _, p := range []struct {
		os string
		Platform
	}{
		{"linux", Platform{Home: "/home/u", ConfigDir: "/home/u/.config", Workspace: "/home/u/src/proj"}},
		{"darwin", Platform{Home: "/Users/u", ConfigDir: "/Users/u/Library/Application Support", Workspace: "/Users/u/proj"}},
		{"windows", Platform{Home: `C:/Users/u`, ConfigDir: `C:/Users/u/AppData/Roaming`}},
		{"workspace is home", Platform{Home: "/home/u", Workspace: "/home/u"}},
	} {
		fmt.Fprintf(&b, "== %s\n", p.os)
		for _, l := range Locations(p.Platform) {
			fmt.Fprintf(&b, "%-16s %-9s %s optional=%v%s\n", l.Client, l.Scope, filepath.ToSlash(l.Path), l.Optional, projectOf(l))
		}
	}
	testutil.Golden(t, "locations.golden", []byte(b.String()))
}

func TestDiscover(t *testing.T) {
	home := t.TempDir()
	ws := filepath.Join(home, "proj")
	write := func(rel, s string) {
		t.Helper()
		p := filepath.Join(home, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfgDir := filepath.Join(home, ".config")
	write(".config/Claude/claude_desktop_config.json", `{"mcpServers": {"fs": {"command": "npx"}}}`)
	write(".claude.json", `{"numStartups": 3}`)                                        // Claude Code state, no servers: left out
	write(".config/Code/User/settings.json", `{"editor.fontSize": 12}`)                // no MCP: left out
	write(".cursor/mcp.json", `{"mcpServers": {"broken": {"args": []}}}`)              // listed with its error
	write("proj/.vscode/mcp.json", "{\"servers\": {\"w\": {\"command\": \"node\"},}}") // JSONC
	write("proj/.mcp.json", `{"mcpServers": {}}`)                                      // listed, no servers
	found := Discover(Platform{Home: home, ConfigDir: cfgDir, Workspace: ws}, os.ReadFile)
	var got []string
	for _, f := range found {
		rel, _ := filepath.Rel(home, f.Path)
		s := f.Client + " " + f.Scope + " " + filepath.ToSlash(rel)
		switch {
		case f.Err != nil:
			s += " error"
		default:
			s += " " + strings.Join(f.Config.Names(), ",")
		}
		got = append(got, s)
	}
	want := []string{
		"Claude Desktop user .config/Claude/claude_desktop_config.json fs",
		"Cursor user .cursor/mcp.json error",
		"Claude Code workspace proj/.mcp.json ",
		"VS Code workspace proj/.vscode/mcp.json w",
	}
	if !slices.Equal(got, want) {
		t.Errorf("found:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(found) == 4 && found[3].Config.Dir != filepath.Join(ws, ".vscode") {
		t.Errorf("dir = %q", found[3].Config.Dir)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"mcpServers":{"a":{"command":"x","args":["${A}"],"env":{"K":"v"}}}}`))
	f.Add([]byte("{// c\n\"servers\":{\"h\":{\"url\":\"http://h/mcp\",},},}"))
	f.Add([]byte(`{"mcp":{"servers":{"":{"command":"x"}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data, "/d")
		if err != nil {
			return
		}
		for i, s := range c.Servers {
			if i > 0 && c.Servers[i-1].Name >= s.Name {
				t.Fatal("servers not sorted by name")
			}
			if (s.Command == "") == (s.URL == "") {
				t.Fatal("accepted an entry without exactly one of command and url")
			}
		}
	})
}

func FuzzExpand(f *testing.F) {
	f.Add("${A}${B}$C${", "api-key")
	f.Add("x${A_1}y${}z${env:Q}${input:k}${X:-d}", "k")
	f.Fuzz(func(t *testing.T, s, id string) {
		none := NewExpander(Resolver{LookupEnv: func(string) (string, bool) { return "", false }})
		got := none.Expand(s)
		if !strings.Contains(s, "${") && got != s {
			t.Fatalf("changed a string without ${: %q -> %q", s, got)
		}
		if len(got) > len(s) {
			t.Fatalf("expanding to empty values grew the string: %q -> %q", s, got)
		}
		// An input with no value is an error naming it, never passed on.
		if id == "" || strings.ContainsAny(id, "}") {
			return
		}
		in := NewExpander(Resolver{LookupEnv: func(string) (string, bool) { return "", false }})
		out := in.Expand("Bearer ${input:" + id + "}")
		var ue *UnresolvedError
		if out != "Bearer " || !errors.As(in.Err(), &ue) || len(ue.Inputs) != 1 || ue.Inputs[0].ID != id {
			t.Fatalf("input %q: %q, %v", id, out, in.Err())
		}
	})
}

// projectOf prints a location's project, if it has one.
func projectOf(l Location) string {
	if l.Project == "" {
		return ""
	}
	return " project=" + filepath.ToSlash(l.Project)
}
