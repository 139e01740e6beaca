package studies

import (
	"cmp"
	"debug/buildinfo"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/mcpdrill/mcpdrill/internal/clientconfig"
)

// SDKObserved is the SDK and framework a server was found to be built on,
// and the evidence for it (METHODOLOGY, "Observed SDKs"). Name is the MCP
// SDK (typescript-sdk, go-sdk, mcp-go, mcp-golang, python-sdk, tmcp);
// Framework a layer over it (fastmcp-ts, fastmcp, mcp-framework, mastra,
// mcp-handler), "" when none was seen. Evidence is sorted; every line names
// its source (a package.json, Go build info, a venv's dist-info, the
// server's tools/list or initialize reply) and never a path of the machine.
type SDKObserved struct {
	Name      string   `json:"name,omitempty"`
	Version   string   `json:"version,omitempty"`
	Framework string   `json:"framework,omitempty"`
	Evidence  []string `json:"evidence"`
}

// sdkMark is what one dependency says: the SDK it is (or is built on) and
// the framework it is, if any.
type sdkMark struct {
	SDK, Framework string
}

// npmMarks are the npm packages whose presence among a server package's
// dependencies names its SDK or framework. xsschema (the schema converter
// FastMCP's TypeScript port uses) is recorded but names neither.
var npmMarks = map[string]sdkMark{
	"@modelcontextprotocol/sdk":    {SDK: "typescript-sdk"},
	"@modelcontextprotocol/server": {SDK: "typescript-sdk"},
	"fastmcp":                      {SDK: "typescript-sdk", Framework: "fastmcp-ts"},
	"mcp-framework":                {SDK: "typescript-sdk", Framework: "mcp-framework"},
	"@mastra/mcp":                  {SDK: "typescript-sdk", Framework: "mastra"},
	"mcp-handler":                  {SDK: "typescript-sdk", Framework: "mcp-handler"},
	"@vercel/mcp-adapter":          {SDK: "typescript-sdk", Framework: "mcp-handler"},
	"tmcp":                         {SDK: "tmcp"},
	"xsschema":                     {},
}

// goMarks are the Go modules that name a binary's SDK.
var goMarks = map[string]sdkMark{
	"github.com/modelcontextprotocol/go-sdk": {SDK: "go-sdk"},
	"github.com/mark3labs/mcp-go":            {SDK: "mcp-go"},
	"github.com/metoro-io/mcp-golang":        {SDK: "mcp-golang"},
}

// pyMarks are the Python distributions (normalised names) that name a
// venv's SDK or framework.
var pyMarks = map[string]sdkMark{
	"mcp":     {SDK: "python-sdk"},
	"fastmcp": {SDK: "python-sdk", Framework: "fastmcp"},
}

// sdkOrder ranks SDKs when a server shows more than one: the first wins.
var sdkOrder = []string{"typescript-sdk", "tmcp", "go-sdk", "mcp-go", "mcp-golang", "python-sdk"}

// clue is one piece of evidence.
type clue struct {
	mark    sdkMark
	version string
	// direct is false for what a framework's own package says.
	direct bool
	text   string
}

// staticClues reads what the installed server says of its SDK: the
// package.json of its npm package (found from the command, or under
// dir's node_modules), a Go binary's build info, or the dist-info of the
// venv the command lives in. pkg is the entry's package name ("" when
// none); argv the resolved command line.
func staticClues(argv []string, dir, pkg string) []clue {
	if len(argv) == 0 {
		return nil
	}
	exe := argv[0]
	if base := filepath.Base(exe); (base == "node" || base == "python" || base == "python3") && len(argv) > 1 {
		exe = argv[1]
		if !filepath.IsAbs(exe) {
			exe = filepath.Join(dir, exe)
		}
	}
	// A bare command name (npx, uvx) is looked up on PATH: it is not the
	// server's file, only servers.json's directory may hold its package.
	if !filepath.IsAbs(exe) {
		return npmClues("", dir, pkg)
	}
	if cs := goClues(exe, goMarks); cs != nil {
		return cs
	}
	if cs := pyClues(exe); cs != nil {
		return cs
	}
	return npmClues(exe, dir, pkg)
}

// goClues reads a Go binary's build info; nil when exe is not one.
func goClues(exe string, marks map[string]sdkMark) []clue {
	bi, err := buildinfo.ReadFile(exe)
	if err != nil {
		return nil
	}
	cs := []clue{}
	for i, d := range append([]*debug.Module{&bi.Main}, bi.Deps...) {
		word := "dependency"
		if i == 0 {
			word = "main module"
		}
		if m, ok := marks[d.Path]; ok {
			cs = append(cs, clue{mark: m, version: d.Version, direct: true,
				text: fmt.Sprintf("Go build info: %s %s %s", word, d.Path, d.Version)})
		}
	}
	return cs
}

// pyClues reads the dist-info directories of the venv exe lives in (a
// directory above it holding pyvenv.cfg); nil when there is none.
func pyClues(exe string) []clue {
	root := ""
	for d := filepath.Dir(exe); ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "pyvenv.cfg")); err == nil {
			root = d
			break
		}
		if filepath.Dir(d) == d {
			return nil
		}
	}
	infos, _ := filepath.Glob(filepath.Join(root, "lib", "python*", "site-packages", "*.dist-info"))
	win, _ := filepath.Glob(filepath.Join(root, "Lib", "site-packages", "*.dist-info"))
	cs := []clue{}
	for _, p := range append(infos, win...) {
		name, version, ok := strings.Cut(strings.TrimSuffix(filepath.Base(p), ".dist-info"), "-")
		if !ok {
			continue
		}
		name = strings.ToLower(strings.NewReplacer("_", "-", ".", "-").Replace(name))
		if m, ok := pyMarks[name]; ok {
			cs = append(cs, clue{mark: m, version: version, direct: true,
				text: fmt.Sprintf("venv dist-info: %s %s", name, version)})
		}
	}
	return cs
}

type packageJSON struct {
	Name             string            `json:"name"`
	Version          string            `json:"version"`
	Dependencies     map[string]string `json:"dependencies"`
	PeerDependencies map[string]string `json:"peerDependencies"`
}

func readPackageJSON(path string) (*packageJSON, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, false
	}
	var p packageJSON
	if json.Unmarshal(b, &p) != nil {
		return nil, false
	}
	return &p, true
}

// npmPackageDir finds the server's package: the directory above the
// command (symlinks followed) holding a package.json named pkg (any name
// when pkg is ""), else dir/node_modules/pkg.
func npmPackageDir(exe, dir, pkg string) (string, *packageJSON) {
	if real, err := filepath.EvalSymlinks(exe); exe != "" && err == nil {
		for d := filepath.Dir(real); filepath.Dir(d) != d; d = filepath.Dir(d) {
			if p, ok := readPackageJSON(filepath.Join(d, "package.json")); ok && (pkg == "" || p.Name == pkg) {
				return d, p
			}
		}
	}
	if pkg != "" {
		d := filepath.Join(dir, "node_modules", filepath.FromSlash(pkg))
		if p, ok := readPackageJSON(filepath.Join(d, "package.json")); ok {
			return d, p
		}
	}
	return "", nil
}

// installedVersion resolves dep from dir as Node does (each node_modules
// from dir up) and returns its installed version, "" when not found.
func installedVersion(dir, dep string) (string, string) {
	for d := dir; ; d = filepath.Dir(d) {
		if filepath.Base(d) != "node_modules" {
			p := filepath.Join(d, "node_modules", filepath.FromSlash(dep))
			if pj, ok := readPackageJSON(filepath.Join(p, "package.json")); ok {
				return p, pj.Version
			}
		}
		if filepath.Dir(d) == d {
			return "", ""
		}
	}
}

// npmClues reads the dependencies of the server's package.json, and of the
// framework packages it depends on (one level), for npmMarks.
func npmClues(exe, dir, pkg string) []clue {
	pdir, p := npmPackageDir(exe, dir, pkg)
	if p == nil {
		return nil
	}
	cs := []clue{}
	var deps func(owner string, p *packageJSON, from string, direct bool)
	deps = func(owner string, p *packageJSON, from string, direct bool) {
		for _, kind := range []struct {
			m    map[string]string
			word string
		}{{p.Dependencies, "dependency"}, {p.PeerDependencies, "peer dependency"}} {
			for _, dep := range slices.Sorted(maps.Keys(kind.m)) {
				m, ok := npmMarks[dep]
				if !ok {
					continue
				}
				at, v := installedVersion(from, dep)
				text := fmt.Sprintf("package.json of %s: %s %s %s", owner, kind.word, dep, kind.m[dep])
				if v != "" {
					text += " (installed " + v + ")"
				}
				cs = append(cs, clue{mark: m, version: v, direct: direct, text: text})
				if direct && m.Framework != "" && at != "" {
					if fp, ok := readPackageJSON(filepath.Join(at, "package.json")); ok {
						deps(dep+"@"+fp.Version, fp, at, false)
					}
				}
			}
		}
	}
	deps(cmp.Or(p.Name, pkg)+"@"+p.Version, p, pdir, true)
	return cs
}

// runtimeClues is what the scan itself showed: tools whose outputSchema
// carries FastMCP's wrap marker, and the Python FastMCP's default
// serverInfo name.
func runtimeClues(r Row) []clue {
	var cs []clue
	wrapped := 0
	for _, t := range r.Tools {
		if t.Wrapped {
			wrapped++
		}
	}
	if wrapped > 0 {
		cs = append(cs, clue{mark: sdkMark{Framework: "fastmcp"},
			text: fmt.Sprintf("tools/list: %d of %d tools' outputSchema carry x-fastmcp-wrap-result", wrapped, len(r.Tools))})
	}
	if r.Server != nil && r.Server.Name == "FastMCP" {
		cs = append(cs, clue{mark: sdkMark{SDK: "python-sdk", Framework: "fastmcp"},
			text: `initialize: serverInfo.name "FastMCP" (the Python FastMCP's default)`})
	}
	return cs
}

// conclude turns clues into an observation; nil when there are none that
// name anything.
func conclude(cs []clue) *SDKObserved {
	o := &SDKObserved{Evidence: []string{}}
	rank := func(c clue) int {
		i := slices.Index(sdkOrder, c.mark.SDK)
		if i < 0 {
			i = len(sdkOrder)
		}
		// A package that is the SDK says more of it (and of its version)
		// than a framework that implies it; a direct dependency more than
		// a framework's own.
		if !c.direct {
			i += len(sdkOrder) + 1
		}
		if c.mark.Framework != "" {
			i += 2 * (len(sdkOrder) + 1)
		}
		return i
	}
	best, fw := -1, -1
	for i, c := range cs {
		o.Evidence = append(o.Evidence, c.text)
		if c.mark.SDK != "" && (best < 0 || rank(c) < rank(cs[best])) {
			best = i
		}
		// A framework found among the installed dependencies wins over
		// one inferred from the server's output.
		if c.mark.Framework != "" && (fw < 0 || c.version != "" && cs[fw].version == "") {
			fw = i
		}
	}
	if best < 0 && fw < 0 {
		return nil
	}
	if best >= 0 {
		o.Name, o.Version = cs[best].mark.SDK, cs[best].version
	}
	if fw >= 0 {
		o.Framework = cs[fw].mark.Framework
		if o.Name == "" {
			o.Name = cs[fw].mark.SDK
		}
	}
	slices.Sort(o.Evidence)
	o.Evidence = slices.Compact(o.Evidence)
	return o
}

// ObservedSDK is the row's SDK for the aggregates: the observed one, else
// the declared label, else "unknown".
func (r Row) ObservedSDK() string {
	if r.SDKObserved != nil && r.SDKObserved.Name != "" {
		return r.SDKObserved.Name
	}
	return cmp.Or(r.SDK, "unknown")
}

// ObservedFramework is the row's framework for the aggregates: the
// observed one, "none" when an SDK was observed without one, else
// "unknown".
func (r Row) ObservedFramework() string {
	switch {
	case r.SDKObserved == nil:
		return "unknown"
	case r.SDKObserved.Framework != "":
		return r.SDKObserved.Framework
	}
	return "none"
}

// SDKDisagrees says whether the declared label names neither the observed
// SDK nor the observed framework (a framework's "-ts" suffix aside: a
// declared "fastmcp" agrees with an observed fastmcp-ts).
func (r Row) SDKDisagrees() bool {
	o := r.SDKObserved
	if r.SDK == "" || o == nil || o.Name == "" {
		return false
	}
	return r.SDK != o.Name && r.SDK != o.Framework && r.SDK != strings.TrimSuffix(o.Framework, "-ts")
}

// observeSDK gathers the evidence for an entry's row: the installed
// package (from the command, or the launch command of an HTTP entry,
// resolved against servers.json's directory) and the scan's output.
func observeSDK(spec *Spec, e Entry, row Row) *SDKObserved {
	cmd, args, cwd := e.Command, e.Args, e.Cwd
	if e.Launch != nil {
		cmd, args, cwd = e.Launch.Command, e.Launch.Args, e.Launch.Cwd
	}
	var cs []clue
	if cmd != "" {
		expand := strings.NewReplacer("${SPEC_DIR}", spec.Dir).Replace
		dir := spec.Dir
		if cwd != "" && !strings.Contains(cwd, "${") {
			dir = clientconfig.ResolveDir(expand(cwd), spec.Dir)
		}
		argv := []string{clientconfig.ResolvePath(expand(cmd), spec.Dir)}
		for _, a := range args {
			argv = append(argv, expand(a))
		}
		cs = staticClues(argv, dir, e.PackageName())
	}
	return conclude(append(cs, runtimeClues(row)...))
}
