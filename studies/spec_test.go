package studies

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/clientconfig"
	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
)

// TestParseSpec: the client keys are clientconfig's (tested there); these
// are the study's own keys and how clientconfig's errors are reported.
func TestParseSpec(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		wantErr string
	}{
		{"launch", `{"mcpServers":{"h":{"url":"http://127.0.0.1:${PORT}/mcp","launch":{"command":"srv","args":["--port","${PORT}"],"ready":"5s"}}}}`, ""},
		{"vscode servers with inputs", `{"inputs":[{"id":"k"}],"servers":{"one":{"type":"stdio","command":"x","package":"p@1.0.0"}}}`, ""},
		{"empty", `{"mcpServers":{}}`, "servers.json: mcpServers is empty"},
		{"client error", `{"mcpServers":{"a":{"args":["x"]}}}`, `servers.json: server "a": give "command" or "url"`},
		{"not json", `mcpServers`, "servers.json: not a JSON object"},
		{"launch without url", `{"mcpServers":{"a":{"command":"x","launch":{"command":"y"}}}}`, `"launch" needs "url"`},
		{"launch without command", `{"mcpServers":{"a":{"url":"http://127.0.0.1:1/mcp","launch":{}}}}`, `needs a "command"`},
		{"launch off loopback", `{"mcpServers":{"a":{"url":"http://example.test/mcp","launch":{"command":"y"}}}}`, "loopback"},
		{"bad ready", `{"mcpServers":{"a":{"url":"http://127.0.0.1:${PORT}/","launch":{"command":"y","ready":"soon"}}}}`, "launch.ready"},
		{"wrong study field type", `{"mcpServers":{"a":{"command":"x","sdk":1}}}`, `server "a"`},
		{"population keys", `{"mcpServers":{"a":{"command":"x","registry":"pypi","excluded":"library","credentials":["K"],"downloads":5,"previous_of":"b"}}}`, ""},
		{"unknown registry", `{"mcpServers":{"a":{"command":"x","registry":"cargo"}}}`, `registry "cargo"`},
		{"negative downloads", `{"mcpServers":{"a":{"command":"x","downloads":-1}}}`, `"downloads"`},
		{"previous of itself", `{"mcpServers":{"a":{"command":"x","previous_of":"a"}}}`, `"previous_of"`},
		// Registry text is data: a package outside its registry's grammar is refused.
		{"npm option as a package", `{"mcpServers":{"a":{"command":"npx","package":"--call=id@1.0.0"}}}`, "not an npm package name"},
		{"npm range", `{"mcpServers":{"a":{"command":"npx","package":"x@^1.0.0"}}}`, "not an exact semantic version"},
		{"PyPI URL", `{"mcpServers":{"a":{"command":"x","registry":"pypi","package":"git+https://h/x@1.0"}}}`, "not a PyPI distribution name"},
		{"Go flag", `{"mcpServers":{"a":{"command":"x","registry":"go","package":"-toolexec=x@v1.0.0"}}}`, "not a Go package path"},
		{"Go version", `{"mcpServers":{"a":{"command":"x","package":"github.com/a/b@latest"}}}`, "not a Go module version"},
		{"image flag", `{"mcpServers":{"a":{"command":"docker","registry":"oci","package":"--privileged"}}}`, "not an image reference"},
		{"scoped npm prerelease", `{"mcpServers":{"a":{"command":"x","package":"@s/x@1.0.0-rc.1"}}}`, ""},
		{"PyPI post release", `{"mcpServers":{"b":{"command":"x","registry":"pypi","package":"mcp_server.x@1.0.post1"}}}`, ""},
		{"Go path", `{"mcpServers":{"c":{"command":"x","package":"golang.org/x/tools/gopls@v0.23.0"}}}`, ""},
		{"image by tag and digest", `{"mcpServers":{"d":{"command":"docker","registry":"oci","package":"ghcr.io/o/i:1.2@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}}}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ParseSpec([]byte(tt.in), "/spec")
			if testutil.WantErrorText(t, err, tt.wantErr) {
				return
			}
			if err != nil || len(s.Servers) != 1 {
				t.Fatalf("%v, %+v", err, s)
			}
		})
	}
	s, err := ParseSpec([]byte(`{"inputs":[{"id":"k","description":"Key"}],"servers":{"one":{"command":"x","package":"p@1.0.0","sdk":"go","args":["a"]}}}`), "/spec")
	if err != nil {
		t.Fatal(err)
	}
	e := s.Servers[0]
	if e.Name != "one" || e.Package != "p@1.0.0" || e.SDK != "go" || !slices.Equal(e.Args, []string{"a"}) || len(s.Inputs) != 1 || s.Inputs[0].Description != "Key" {
		t.Errorf("entry %+v, inputs %+v", e, s.Inputs)
	}
}

// TestPackageRegistry: an empty registry is inferred from the package, a
// module path whose first element has a dot being Go.
func TestPackageRegistry(t *testing.T) {
	for _, tt := range []struct{ registry, pkg, want, name, version string }{
		{"", "github.com/x/y/cmd/z@v1.2.3", "go", "github.com/x/y/cmd/z", "v1.2.3"},
		{"", "golang.org/x/tools/gopls@v0.23.0", "go", "golang.org/x/tools/gopls", "v0.23.0"},
		{"", "@scope/pkg@1.0.0", "npm", "@scope/pkg", "1.0.0"},
		{"", "mcp-hello-world@1.1.2", "npm", "mcp-hello-world", "1.1.2"},
		{"", "@scope.with.dot/pkg@2", "npm", "@scope.with.dot/pkg", "2"},
		{"", "unpinned", "npm", "unpinned", ""},
		{"pypi", "mcp-server-fetch@2025.4.7", "pypi", "mcp-server-fetch", "2025.4.7"},
		{"", "", "", "", ""},
	} {
		e := Entry{Package: tt.pkg, Registry: tt.registry}
		if got := e.PackageRegistry(); got != tt.want {
			t.Errorf("%q: registry %q, want %q", tt.pkg, got, tt.want)
		}
		if e.PackageName() != tt.name || e.PackageVersion() != tt.version {
			t.Errorf("%q: name %q version %q", tt.pkg, e.PackageName(), e.PackageVersion())
		}
	}
}

func TestSpecHashFollowsBytes(t *testing.T) {
	a, _ := ParseSpec([]byte(`{"mcpServers":{"a":{"command":"x"}}}`), "")
	b, _ := ParseSpec([]byte(`{"mcpServers":{"a":{"command":"x"}}}`), "/elsewhere")
	c, _ := ParseSpec([]byte(`{"mcpServers":{"a":{"command":"y"}}}`), "")
	if a.Hash != b.Hash {
		t.Fatal("same bytes, different hash")
	}
	if a.Hash == c.Hash {
		t.Fatal("different bytes, same hash")
	}
}

func TestVarsTakePrecedence(t *testing.T) {
	v := Vars{SpecDir: "/spec", WorkDir: "/work", Port: "1234"}
	env := func(k string) (string, bool) { return "env-" + k, true }
	x := clientconfig.NewExpander(clientconfig.Resolver{Vars: v.vars(), LookupEnv: env})
	if got, want := x.Expand("${SPEC_DIR} ${WORK_DIR} ${PORT} ${USER} ${API_TOKEN}"), "/spec /work 1234 env-USER env-API_TOKEN"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if s := x.Secrets(); !slices.Equal(s, []string{"env-API_TOKEN"}) {
		t.Fatalf("secrets = %q: the study's own variables are not secret, the environment's are when their names say so", s)
	}
	if u := x.Used(); !slices.Equal(u, []string{"${USER}", "${API_TOKEN}"}) {
		t.Fatalf("used = %q: the study's own variables come from no environment", u)
	}
	// Without a launch there is no port: ${PORT} is then an ordinary variable.
	x = clientconfig.NewExpander(clientconfig.Resolver{Vars: Vars{}.vars(), LookupEnv: func(string) (string, bool) { return "", false }})
	x.Expand("${PORT}")
	var ue *clientconfig.UnresolvedError
	if !errors.As(x.Err(), &ue) || !slices.Equal(ue.Env, []string{"PORT"}) {
		t.Fatalf("err = %v", x.Err())
	}
}

func FuzzParseSpec(f *testing.F) {
	f.Add([]byte(`{"mcpServers":{"a":{"command":"x","args":["${A}"],"env":{"K":"v"}}}}`))
	f.Add([]byte(`{"servers":{"h":{"url":"http://127.0.0.1:${PORT}/mcp","launch":{"command":"s"}}}}`))
	f.Add([]byte(`{"mcpServers":{"":{"command":"x"}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseSpec(data, "/d")
		if err != nil {
			return
		}
		if len(s.Servers) == 0 {
			t.Fatal("accepted an empty spec")
		}
		for i, e := range s.Servers {
			if i > 0 && s.Servers[i-1].Name >= e.Name {
				t.Fatal("servers not sorted by name")
			}
			if (e.Command == "") == (e.URL == "") {
				t.Fatal("accepted an entry without exactly one of command and url")
			}
		}
	})
}

// FuzzCheckPackage: no package a grammar accepts begins with '-', holds a
// space or a control character, or makes a validator panic.
func FuzzCheckPackage(f *testing.F) {
	for _, s := range []string{"@s/x@1.0.0", "--call=id@1.0.0", "x@^1", "ghcr.io/a/b:1", "golang.org/x/y@v1.0.0", "mcp_x@1.0.post1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, pkg string) {
		for _, reg := range []string{RegistryNPM, RegistryPyPI, RegistryGo, RegistryOCI} {
			if checkPackage(reg, pkg) != nil {
				continue
			}
			if strings.HasPrefix(pkg, "-") || strings.ContainsFunc(pkg, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
				t.Fatalf("%s accepts %q", reg, pkg)
			}
		}
	})
}
