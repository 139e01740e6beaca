package registry

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
	"github.com/mcpdrill/mcpdrill/studies"
)

func importFixture(t *testing.T, data []byte) []byte {
	t.Helper()
	return importWith(t, data, Options{})
}

func importWith(t *testing.T, data []byte, o Options) []byte {
	t.Helper()
	im, err := Import(data, o)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := studies.WriteServers(&b, im.Servers); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestImportRegistry imports a saved /v0.1/servers list (npm, pypi and oci
// packages, remote-only servers, several packages to one server, secrets,
// three versions of one server) against the golden servers.json, and reads
// the output back as a study spec.
func TestImport(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "registry", "servers.json"))
	if err != nil {
		t.Fatal(err)
	}
	got := importFixture(t, data)
	testutil.Golden(t, filepath.Join("registry", "servers.golden.json"), got)

	spec, err := studies.ParseSpec(got, "/nonexistent")
	if err != nil {
		t.Fatalf("the import does not parse as servers.json: %v", err)
	}
	byName := map[string]studies.Entry{}
	for _, e := range spec.Servers {
		byName[e.Name] = e
	}
	// What every row must say, whatever the golden holds.
	checks := []struct {
		name string
		ok   func(studies.Entry) bool
	}{
		{"weather", func(e studies.Entry) bool {
			return e.Package == "@acme/weather-mcp@1.10.0" && e.Registry == studies.RegistryNPM && e.Command == "npx" &&
				strings.Join(e.Args, " ") == "-y --node-options=--max-old-space-size=256 -- @acme/weather-mcp@1.10.0 --cache-dir ${WORK_DIR}" &&
				strings.Join(e.Credentials, ",") == "WEATHER_ACCOUNT,WEATHER_API_KEY" &&
				e.Env["WEATHER_REGION"] == "eu-west-1" && e.Env["WEATHER_UNITS"] == "" && e.Env["WEATHER_API_KEY"] == "" && e.Excluded == ""
		}},
		// The release before the latest by publication, not by text (1.9.3, not 1.2.0).
		{"weather-previous", func(e studies.Entry) bool {
			return e.Package == "@acme/weather-mcp@1.9.3" && e.PreviousOf == "weather" && e.VariantOf == ""
		}},
		{"time", func(e studies.Entry) bool {
			return e.Registry == studies.RegistryPyPI && e.Package == "mcp-server-time@0.6.2" && e.Command == "uvx" &&
				strings.Join(e.Args, " ") == "--from mcp-server-time==0.6.2 mcp-server-time --local-timezone UTC"
		}},
		{"filesystem", func(e studies.Entry) bool {
			return strings.Join(e.Args, " ") == "-y -- @modelcontextprotocol/server-filesystem@2025.8.21 ${WORK_DIR}" && e.Env == nil
		}},
		{"filesystem-oci", func(e studies.Entry) bool {
			return e.VariantOf == "filesystem" && e.Registry == studies.RegistryOCI && e.Package == "docker.io/mcp/filesystem:1.0.2" && e.Command == "docker" &&
				strings.Join(e.Args, " ") == "run -i --rm -e LOG_LEVEL -- docker.io/mcp/filesystem:1.0.2 /project" &&
				e.Env["LOG_LEVEL"] == "info"
		}},
		{"acme-analytics", func(e studies.Entry) bool {
			return e.Type == "http" && e.URL == "https://analytics.example.com/mcp" && e.Headers["X-Client"] == "mcpdrill" &&
				len(e.Headers) == 1 && strings.Join(e.Credentials, ",") == "AUTHORIZATION"
		}},
		{"acme-analytics-sse", func(e studies.Entry) bool { return e.Type == "sse" && e.VariantOf == "acme-analytics" }},
		// The first remote needs a tenant: the launchable one leads.
		{"tenant-search", func(e studies.Entry) bool { return e.URL == "https://eu.search.example.com/mcp" && e.Excluded == "" }},
		{"tenant-search-remote", func(e studies.Entry) bool {
			return e.VariantOf == "tenant-search" && strings.Contains(e.Excluded, "{tenant}")
		}},
		{"hybrid-mcp", func(e studies.Entry) bool {
			return strings.Join(e.Args, " ") == "-y -- @example/hybrid-mcp-server@1.5.0 --stdio" && strings.Join(e.Credentials, ",") == "API_KEY"
		}},
		{"hybrid-mcp-remote", func(e studies.Entry) bool {
			return e.URL == "https://mcp.example.com/http" && e.VariantOf == "hybrid-mcp"
		}},
		{"hybrid-mcp-npm", func(e studies.Entry) bool {
			return strings.Contains(e.Excluded, "streamable-http") && e.VariantOf == "hybrid-mcp"
		}},
		// Served over HTTP: launched with the port variable set to ${PORT}.
		{"http-notes", func(e studies.Entry) bool {
			return e.Type == "http" && e.URL == "http://localhost:${PORT}/mcp" && e.Command == "" && e.Launch != nil &&
				e.Launch.Command == "uvx" && strings.Join(e.Launch.Args, " ") == "--from http-notes-mcp==0.4.1 http-notes-mcp --port ${PORT} --host 127.0.0.1" &&
				strings.Join(e.Credentials, ",") == "NOTES_TOKEN" && e.Excluded == ""
		}},
		{"http-notes-npm-sse", func(e studies.Entry) bool {
			return e.Type == "sse" && e.URL == "http://127.0.0.1:${PORT}/sse" && e.VariantOf == "http-notes" &&
				e.Launch != nil && e.Launch.Env["NOTES_PORT"] == "${PORT}" && strings.Join(e.Launch.Args, " ") == "-y -- http-notes-mcp@0.4.1"
		}},
		{"http-notes-npm", func(e studies.Entry) bool {
			return strings.Contains(e.Excluded, "http://localhost:8000/mcp") && e.VariantOf == "http-notes"
		}},
		{"database-manager", func(e studies.Entry) bool {
			return e.Package == "example/database-manager-mcp:3.1.0" && strings.Contains(e.Excluded, `"database_name" is required`)
		}},
		{"knapcode-samplemcpserver", func(e studies.Entry) bool {
			return e.Registry == "" && e.Command == "dnx" && strings.Contains(e.Excluded, `registryType "nuget"`)
		}},
		{"knapcode-samplemcpserver-mcpb", func(e studies.Entry) bool { return strings.Contains(e.Excluded, `registryType "mcpb"`) }},
		{"alice-notes", func(e studies.Entry) bool { return strings.Contains(e.Excluded, `runtimeHint "bunx"`) }},
		{"bob-notes", func(e studies.Entry) bool {
			return e.Command == "uvx" && e.Package == "bob-notes@2.0.0b1" && e.Excluded == ""
		}},
		{"legacy", func(e studies.Entry) bool { return e.Excluded == "deleted from the registry" }},
		{"docs-only", func(e studies.Entry) bool { return strings.Contains(e.Excluded, "no package and no remote") }},
	}
	if len(spec.Servers) != len(checks) {
		t.Errorf("%d rows, want %d", len(spec.Servers), len(checks))
	}
	for _, c := range checks {
		e, ok := byName[c.name]
		if !ok {
			t.Errorf("no row %q", c.name)
			continue
		}
		if !c.ok(e) {
			b, _ := json.Marshal(e)
			t.Errorf("%s: %s", c.name, b)
		}
	}
}

// TestImportRegistryVenv: with PyPIVenv the PyPI rows launch the script of
// a venv of their own, in the layout study install fills; nothing else
// changes.
func TestImportRegistryVenv(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "registry", "servers.json"))
	if err != nil {
		t.Fatal(err)
	}
	read := func(b []byte) map[string]studies.Entry {
		spec, err := studies.ParseSpec(b, "/nonexistent")
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]studies.Entry{}
		for _, e := range spec.Servers {
			e.Raw = nil
			m[e.Name] = e
		}
		return m
	}
	uvx, venv := read(importFixture(t, data)), read(importWith(t, data, Options{PyPIVenv: true}))
	want := map[string][2]string{
		"time":      {"pypi/time/venv/bin/mcp-server-time", "--local-timezone UTC"},
		"bob-notes": {"pypi/bob-notes/venv/bin/bob-notes", ""},
		// A launched one: its launch command is the venv's script.
		"http-notes": {"pypi/http-notes/venv/bin/http-notes-mcp", "--port ${PORT} --host 127.0.0.1"},
	}
	for name, e := range venv {
		w, ok := want[name]
		if !ok {
			if b, _ := json.Marshal(e); string(b) != func() string { b, _ := json.Marshal(uvx[name]); return string(b) }() {
				t.Errorf("%s differs between the modes: %s", name, b)
			}
			continue
		}
		cmd, args := e.Command, e.Args
		if e.Launch != nil {
			cmd, args = e.Launch.Command, e.Launch.Args
		}
		if cmd != w[0] || strings.Join(args, " ") != w[1] || e.Registry != studies.RegistryPyPI || e.Package != uvx[name].Package {
			t.Errorf("%s: %s %v (%s %s)", name, cmd, args, e.Registry, e.Package)
		}
	}
}

// TestImportRegistryOrder: the output depends on the servers listed, not on
// their order, nor on how they were split into pages.
func TestImportRegistryOrder(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "registry", "servers.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := importFixture(t, data)
	var page struct {
		Servers []json.RawMessage `json:"servers"`
	}
	if err := json.Unmarshal(data, &page); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 5 {
		s := append([]json.RawMessage(nil), page.Servers...)
		r.Shuffle(len(s), func(a, b int) { s[a], s[b] = s[b], s[a] })
		cut := 1 + i%(len(s)-1)
		pages := []map[string]any{{"servers": s[:cut]}, {"servers": s[cut:], "metadata": map[string]any{"count": len(s) - cut}}}
		in, err := json.Marshal(pages)
		if err != nil {
			t.Fatal(err)
		}
		if got := importFixture(t, in); !bytes.Equal(got, want) {
			t.Fatalf("shuffle %d gives another servers.json:\n%s", i, got)
		}
	}
}

func TestImportRegistryNames(t *testing.T) {
	list := func(names ...string) []byte {
		var items []map[string]any
		for _, n := range names {
			items = append(items, map[string]any{"server": map[string]any{"name": n, "version": "1.0.0",
				"remotes": []any{map[string]any{"type": "streamable-http", "url": "https://example.com/" + n}}}})
		}
		b, _ := json.Marshal(map[string]any{"servers": items})
		return b
	}
	tests := []struct {
		in   []string
		want []string
	}{
		{[]string{"io.github.a/x"}, []string{"x"}},
		{[]string{"io.github.a/x", "io.github.b/x"}, []string{"a-x", "b-x"}},
		{[]string{"io.github.a/x", "com.github.a/x"}, []string{"com.github.a-x", "io.github.a-x"}},
		// a-x is b's short name and a's qualified one: a falls back to its full name.
		{[]string{"io.github.a/x", "io.github.c/x", "io.github.b/a-x"}, []string{"a-x", "c-x", "io.github.a-x"}},
		{[]string{"io.github.a/Weather Server!"}, []string{"weather-server"}},
		{[]string{"io.github.a/***"}, []string{"server"}},
	}
	for _, tt := range tests {
		im, err := Import(list(tt.in...), Options{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range im.Servers {
			got = append(got, e.Name)
		}
		if strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("%v: names %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestImportRegistryErrors(t *testing.T) {
	tests := []struct {
		in, err string
	}{
		{``, "want the JSON object"},
		{`"servers"`, "want the JSON object"},
		{`{"servers": [`, "page 1"},
		{`{"name": "io.github.a/x", "version": "1"}`, `no "servers" list`},
		{`{"servers": []}`, "holds no servers"},
		{`{"servers": [{"server": {"version": "1"}}]}`, "server 1 has no name"},
		{`{"servers": [{"server": {"name": "a/\u0001"}}]}`, "control character"},
		{`{"servers": {"a": 1}}`, "page 1"},
		{`{"servers": []} {}`, "after top-level value"},
		{`[{"servers": []}, 3]`, "page 2"},
		{`{"servers": [{"server": {"name": "a/b", "version": "1"}}, {"server": {"name": "a/b", "version": "1"}}]}`, "listed twice"},
		{`{"servers": [{"server": {"name": "a/b", "version": "1"}, "_meta": {"io.modelcontextprotocol.registry/official": {"isLatest": true}}},
		  {"server": {"name": "a/b", "version": "2"}, "_meta": {"io.modelcontextprotocol.registry/official": {"isLatest": true}}}]}`, "2 versions are marked isLatest"},
		{`{"servers": [{"server": {"name": "a/b", "version": "1"}, "_meta": {"io.modelcontextprotocol.registry/official": {"publishedAt": "yesterday"}}}]}`, "publishedAt"},
	}
	for _, tt := range tests {
		_, err := Import([]byte(tt.in), Options{})
		if err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("Import(%q) = %v, want an error saying %q", tt.in, err, tt.err)
		}
	}
}

// FuzzImportRegistry: any input is an error or a servers.json that parses
// back as a study spec with the same names.
func FuzzImport(f *testing.F) {
	if data, err := os.ReadFile(filepath.Join("testdata", "registry", "servers.json")); err == nil {
		f.Add(data, false)
		f.Add(data, true)
	}
	f.Add([]byte(`{"servers": [{"server": {"name": "a/b", "version": "1", "packages": [{"registryType": "pypi", "identifier": "x", "version": "1"}]}}]}`), true)
	f.Add([]byte(`[{"servers": [{"server": {"name": "a/b", "remotes": [{"type": "sse", "url": "{x}"}]}}]}]`), false)
	f.Fuzz(func(t *testing.T, data []byte, venv bool) {
		im, err := Import(data, Options{PyPIVenv: venv})
		if err != nil {
			return
		}
		var b bytes.Buffer
		if err := studies.WriteServers(&b, im.Servers); err != nil {
			t.Fatalf("WriteServers: %v", err)
		}
		spec, err := studies.ParseSpec(b.Bytes(), "/nonexistent")
		if err != nil {
			t.Fatalf("the import does not parse back: %v\n%s", err, b.Bytes())
		}
		if len(spec.Servers) != len(im.Servers) {
			t.Fatalf("%d entries written, %d read back", len(im.Servers), len(spec.Servers))
		}
		for i, e := range spec.Servers {
			if e.Name != im.Servers[i].Name {
				t.Fatalf("entry %d: %q read back as %q", i, im.Servers[i].Name, e.Name)
			}
		}
	})
}
