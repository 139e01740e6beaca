package studies

import (
	"os"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"testing"

	"github.com/mcpdrill/mcpdrill/scan"
)

// writeTree writes files (slash paths relative to root) and makes the
// symlinks (link → target, both relative to root).
func writeTree(t *testing.T, root string, files map[string]string, links map[string]string) {
	t.Helper()
	for p, body := range files {
		p = filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range links {
		l := filepath.Join(root, filepath.FromSlash(link))
		if err := os.MkdirAll(filepath.Dir(l), 0o755); err != nil {
			t.Fatal(err)
		}
		rel, err := filepath.Rel(filepath.Dir(l), filepath.Join(root, filepath.FromSlash(target)))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(rel, l); err != nil {
			t.Fatal(err)
		}
	}
}

func TestObserveSDK(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		links map[string]string
		entry string // servers.json entry
		row   Row
		want  *SDKObserved
	}{{
		name: "typescript sdk through the bin symlink",
		files: map[string]string{
			"node_modules/srv/package.json":                       `{"name":"srv","version":"1.0.0","dependencies":{"@modelcontextprotocol/sdk":"^1.17.0","zod":"^3"}}`,
			"node_modules/srv/dist/index.js":                      ``,
			"node_modules/@modelcontextprotocol/sdk/package.json": `{"name":"@modelcontextprotocol/sdk","version":"1.20.1"}`,
		},
		links: map[string]string{"node_modules/.bin/srv": "node_modules/srv/dist/index.js"},
		entry: `{"command":"node_modules/.bin/srv","package":"srv@1.0.0","sdk":"typescript-sdk"}`,
		want: &SDKObserved{Name: "typescript-sdk", Version: "1.20.1", Evidence: []string{
			"package.json of srv@1.0.0: dependency @modelcontextprotocol/sdk ^1.17.0 (installed 1.20.1)"}},
	}, {
		name: "fastmcp's TypeScript port, nested, and the SDK it brings",
		files: map[string]string{
			"node_modules/fc/package.json":                         `{"name":"fc","version":"3.0.0","dependencies":{"fastmcp":"4.3.2"}}`,
			"node_modules/fc/node_modules/fastmcp/package.json":    `{"name":"fastmcp","version":"4.3.2","dependencies":{"@modelcontextprotocol/sdk":"^1.24.3","xsschema":"^0.4.3"}}`,
			"node_modules/@modelcontextprotocol/sdk/package.json":  `{"name":"@modelcontextprotocol/sdk","version":"1.32.2"}`,
			"node_modules/xsschema/package.json":                   `{"name":"xsschema","version":"0.4.4"}`,
			"node_modules/fc/node_modules/fastmcp/dist/unused.txt": ``,
		},
		entry: `{"command":"npx","args":["fc"],"package":"fc@3.0.0","sdk":"fastmcp"}`,
		want: &SDKObserved{Name: "typescript-sdk", Version: "1.32.2", Framework: "fastmcp-ts", Evidence: []string{
			"package.json of fastmcp@4.3.2: dependency @modelcontextprotocol/sdk ^1.24.3 (installed 1.32.2)",
			"package.json of fastmcp@4.3.2: dependency xsschema ^0.4.3 (installed 0.4.4)",
			"package.json of fc@3.0.0: dependency fastmcp 4.3.2 (installed 4.3.2)"}},
	}, {
		name: "a peer dependency, and a declared label that disagrees",
		files: map[string]string{
			"node_modules/t/package.json":       `{"name":"t","version":"0.1.0","peerDependencies":{"tmcp":"^1"}}`,
			"node_modules/t/node_modules/.keep": ``,
			"node_modules/tmcp/package.json":    `{"name":"tmcp","version":"1.2.0"}`,
		},
		entry: `{"command":"node","args":["node_modules/t/index.js"],"package":"t@0.1.0","sdk":"typescript-sdk"}`,
		want: &SDKObserved{Name: "tmcp", Version: "1.2.0", Evidence: []string{
			"package.json of t@0.1.0: peer dependency tmcp ^1 (installed 1.2.0)"}},
	}, {
		name: "a python venv with fastmcp",
		files: map[string]string{
			"venvs/p/pyvenv.cfg":   "home = /usr/bin\n",
			"venvs/p/bin/p-server": "#!python\n",
			"venvs/p/lib/python3.11/site-packages/fastmcp-2.11.0.dist-info/METADATA": "Name: fastmcp\n",
			"venvs/p/lib/python3.11/site-packages/mcp-1.12.4.dist-info/METADATA":     "Name: mcp\n",
			"venvs/p/lib/python3.11/site-packages/pydantic-2.0.0.dist-info/METADATA": "Name: pydantic\n",
		},
		entry: `{"command":"venvs/p/bin/p-server","package":"p@1.0.0","registry":"pypi"}`,
		row:   Row{Tools: []scan.ToolReport{{Name: "a", Wrapped: true}, {Name: "b"}}},
		want: &SDKObserved{Name: "python-sdk", Version: "1.12.4", Framework: "fastmcp", Evidence: []string{
			"tools/list: 1 of 2 tools' outputSchema carry x-fastmcp-wrap-result",
			"venv dist-info: fastmcp 2.11.0",
			"venv dist-info: mcp 1.12.4"}},
	}, {
		name:  "nothing installed: the scan's output alone",
		entry: `{"command":"uvx","args":["x"],"package":"x@1.0.0"}`,
		row:   Row{Server: &scan.Server{Name: "FastMCP"}, Tools: []scan.ToolReport{{Name: "a", Wrapped: true}}},
		want: &SDKObserved{Name: "python-sdk", Framework: "fastmcp", Evidence: []string{
			`initialize: serverInfo.name "FastMCP" (the Python FastMCP's default)`,
			"tools/list: 1 of 1 tools' outputSchema carry x-fastmcp-wrap-result"}},
	}, {
		name:  "a bundled package names nothing",
		files: map[string]string{"node_modules/b/package.json": `{"name":"b","version":"1.0.0","dependencies":{"zod":"^3"}}`},
		entry: `{"command":"node_modules/b/cli.js","package":"b@1.0.0","sdk":"typescript-sdk"}`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, tc.files, tc.links)
			spec, err := ParseSpec([]byte(`{"mcpServers":{"s":`+tc.entry+`}}`), dir)
			if err != nil {
				t.Fatal(err)
			}
			got := observeSDK(spec, spec.Servers[0], tc.row)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// The test binary's own build info stands in for a server's: the module
// table is given, with the test's own main module in it.
func TestGoClues(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		t.Skip("no build info")
	}
	got := conclude(goClues(exe, map[string]sdkMark{bi.Main.Path: {SDK: "test-sdk"}}))
	want := &SDKObserved{Name: "test-sdk", Version: bi.Main.Version, Evidence: []string{
		"Go build info: main module " + bi.Main.Path + " " + bi.Main.Version}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	if cs := goClues(filepath.Join(t.TempDir(), "missing"), goMarks); cs != nil {
		t.Errorf("a missing file gave clues %v", cs)
	}
}

func TestSDKLabels(t *testing.T) {
	for _, tc := range []struct {
		row       Row
		sdk, fw   string
		disagrees bool
	}{
		{Row{}, "unknown", "unknown", false},
		{Row{SDK: "go-sdk"}, "go-sdk", "unknown", false},
		{Row{SDK: "go-sdk", SDKObserved: &SDKObserved{Name: "mcp-go"}}, "mcp-go", "none", true},
		{Row{SDK: "fastmcp", SDKObserved: &SDKObserved{Name: "typescript-sdk", Framework: "fastmcp-ts"}}, "typescript-sdk", "fastmcp-ts", false},
		{Row{SDK: "typescript-sdk", SDKObserved: &SDKObserved{Name: "typescript-sdk", Framework: "mcp-handler"}}, "typescript-sdk", "mcp-handler", false},
	} {
		if got := tc.row.ObservedSDK(); got != tc.sdk {
			t.Errorf("%+v: sdk %q, want %q", tc.row, got, tc.sdk)
		}
		if got := tc.row.ObservedFramework(); got != tc.fw {
			t.Errorf("%+v: framework %q, want %q", tc.row, got, tc.fw)
		}
		if got := tc.row.SDKDisagrees(); got != tc.disagrees {
			t.Errorf("%+v: disagrees %v, want %v", tc.row, got, tc.disagrees)
		}
	}
}
