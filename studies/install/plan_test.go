package install

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpdrill/mcpdrill/studies"
)

// TestPlanInstall: entries become install units by registry; the entries of
// one npm project share its unit; bare commands (npx, uvx), excluded and
// disabled entries have none; what cannot be installed is a unit that
// fails with the reason.
func TestPlanInstall(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "pypi", "locked"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pypi", "locked", "requirements.txt"), []byte("x==1 --hash=sha256:00\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for project, deps := range map[string]string{
		"npm/a@1.0.0":    `{"a": "1.0.0"}`,
		"npm/@s/b@2.0.0": `{"@s/b": "2.0.0"}`,
		"npm/g1":         `{"c": "1.0.0", "d": "1.0.0"}`,
		"npm/old":        `{"e": "0.9.0"}`,
	} {
		if err := os.MkdirAll(filepath.Join(dir, project), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, project, "package.json"), []byte(`{"dependencies": `+deps+`}`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	spec, err := studies.ParseSpec([]byte(`{"mcpServers":{
		"a": {"command": "npm/a@1.0.0/node_modules/.bin/a", "package": "a@1.0.0"},
		"a-http": {"command": "npm/a@1.0.0/node_modules/.bin/a", "args": ["--http"], "package": "a@1.0.0"},
		"b": {"command": "node", "args": ["${SPEC_DIR}/npm/@s/b@2.0.0/node_modules/@s/b/dist/index.js"], "package": "@s/b@2.0.0"},
		"c": {"command": "npm/g1/node_modules/.bin/c", "package": "c@1.0.0"},
		"d": {"command": "npm/g1/node_modules/.bin/d", "package": "d@1.0.0"},
		"e": {"command": "npm/old/node_modules/.bin/e", "package": "e@1.0.0"},
		"f": {"command": "npm/none/node_modules/.bin/f", "package": "f@1.0.0"},
		"g": {"command": "npm/a@1.0.0/node_modules/.bin/g", "package": "g@1.0.0"},
		"npx": {"command": "npx", "args": ["-y", "d@1.0.0"], "package": "d@1.0.0"},
		"uvx": {"command": "uvx", "args": ["e@1.0.0"], "package": "e@1.0.0", "registry": "pypi"},
		"lib": {"command": "npx", "package": "lib@1.0.0", "excluded": "library"},
		"off": {"command": "npm/g1/node_modules/.bin/off", "package": "off@1.0.0", "disabled": true},
		"go": {"command": "go/x/x", "package": "github.com/o/m/cmd/x@v1.2.3"},
		"gobare": {"command": "x", "package": "github.com/o/m/cmd/x@v1.2.3"},
		"py": {"command": "pypi/py/venv/bin/py", "package": "py@1.0", "registry": "pypi"},
		"locked": {"command": "pypi/locked/venv/bin/x", "package": "x@1", "registry": "pypi"},
		"badvenv": {"command": "pypi/bad/x", "package": "x@1", "registry": "pypi"},
		"npmloose": {"command": "bin/x", "package": "x@1.0.0"},
		"image": {"command": "docker", "args": ["run", "-i", "--rm", "ghcr.io/o/i:1"], "package": "ghcr.io/o/i:1", "registry": "oci"},
		"nopkg": {"command": "srv"}
	}}`), dir)
	if err != nil {
		t.Fatal(err)
	}
	units := planInstall(spec, nil)
	got := map[string][]string{}
	byKey := map[string]*unit{}
	for _, u := range units {
		var names []string
		for _, e := range u.entries {
			names = append(names, e.Name)
		}
		slices.Sort(names)
		got[u.key] = names
		byKey[u.key] = u
	}
	want := map[string][]string{
		"npm ci npm/a@1.0.0":    {"a", "a-http", "g"},
		"npm ci npm/@s/b@2.0.0": {"b"},
		"npm ci npm/g1":         {"c", "d"},
		"npm ci npm/old":        {"e"},
		"npm ci npm/none":       {"f"},
		"go install github.com/o/m/cmd/x@v1.2.3 go/x": {"go"},
		"go gobare":                    {"gobare"},
		"pip install pypi/py/venv":     {"py"},
		"pip install pypi/locked/venv": {"locked"},
		"pypi badvenv":                 {"badvenv"},
		"npm npmloose":                 {"npmloose"},
		"docker pull ghcr.io/o/i:1":    {"image"},
	}
	if len(got) != len(want) {
		t.Fatalf("units %v, want %v", got, want)
	}
	for k, w := range want {
		if !slices.Equal(got[k], w) {
			t.Errorf("unit %q: %v, want %v", k, got[k], w)
		}
	}
	if u := byKey["npm ci npm/@s/b@2.0.0"]; u.dir != filepath.Join(dir, "npm", "@s", "b@2.0.0") || u.commands["b"] != "node:"+filepath.Join(dir, "npm/@s/b@2.0.0/node_modules/@s/b/dist/index.js") || u.err != nil {
		t.Errorf("npm unit: dir %q commands %v err %v", u.dir, u.commands, u.err)
	}
	// Each package-version is installed alone: a project shared by two
	// packages, one that pins another version, one without a package.json,
	// and two packages in one project are refused.
	for key, want := range map[string]string{
		"npm ci npm/g1":         "npm/g1 serves c@1.0.0 and d@1.0.0",
		"npm ci npm/old":        "npm/old/package.json pins 1 packages, not e@1.0.0 alone",
		"npm ci npm/none":       "npm/none has no package.json",
		"npm ci npm/a@1.0.0":    "npm/a@1.0.0 serves a@1.0.0 and g@1.0.0",
		"npm ci npm/@s/b@2.0.0": "",
	} {
		u := byKey[key]
		if (u.err == nil) != (want == "") || (u.err != nil && !strings.Contains(u.err.Error(), want)) {
			t.Errorf("%s: %v, want %q", key, u.err, want)
		}
	}
	if u := byKey["pip install pypi/py/venv"]; u.pkg != "py==1.0" || u.requirements != "" {
		t.Errorf("pypi unit: %q %q", u.pkg, u.requirements)
	}
	if u := byKey["pip install pypi/locked/venv"]; u.requirements != filepath.Join(dir, "pypi", "locked", "requirements.txt") {
		t.Errorf("locked pypi unit: requirements %q", u.requirements)
	}
	for _, k := range []string{"go gobare", "pypi badvenv", "npm npmloose"} {
		if byKey[k].err == nil {
			t.Errorf("%s: no planning error", k)
		}
	}
	if u := planInstall(spec, []string{"b"}); len(u) != 1 || u[0].key != "npm ci npm/@s/b@2.0.0" {
		t.Errorf("--only b: %v", u)
	}
}

// TestInstallEnvHasNoCredentials: the install environment passes an allow
// list of the caller's, never a token.
func TestInstallEnvHasNoCredentials(t *testing.T) {
	t.Setenv("GITHUB_TOKEN", "ghp_secret")
	t.Setenv("NPM_TOKEN", "npm_secret")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "aws_secret")
	t.Setenv("PIP_FIND_LINKS", "/somewhere")
	env := installEnv("/scratch", "/cache")
	for _, kv := range env {
		if strings.Contains(kv, "secret") || strings.HasPrefix(kv, "PIP_FIND_LINKS=") {
			t.Errorf("install environment carries %q", kv)
		}
	}
	if !slices.Contains(env, "HOME=/scratch") || !slices.Contains(env, "npm_config_cache=/cache/npm") {
		t.Errorf("install environment %v", env)
	}
}

// TestErrorLine picks the line that names an installer's error.
func TestErrorLine(t *testing.T) {
	for in, want := range map[string]string{
		"npm error code E404\nnpm error 404 Not Found - GET x\nnpm error A complete log": "npm error code E404",
		"Collecting x\nERROR: No matching distribution found for x==1":                   "ERROR: No matching distribution found for x==1",
		"go: downloading a\ngo: github.com/x@v1: reading: 403 Forbidden":                 "go: github.com/x@v1: reading: 403 Forbidden",
		"just this": "just this",
	} {
		if got := errorLine(strings.Split(in, "\n")); got != want {
			t.Errorf("errorLine(%q) = %q, want %q", in, got, want)
		}
	}
}
