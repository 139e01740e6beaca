// Command population draws the ecosystem study's population by its rule
// and writes servers.json from it (studies/ecosystem/README.md and
// METHODOLOGY.md, "The ecosystem study"). It works in the study directory
// (-C DIR, default studies/ecosystem):
//
//	go run ./studies/population candidates -npm NPM.tsv -pypi PYPI.tsv -date YYYY-MM-DD
//	    applies the rule to the registries' package lists (name, version,
//	    monthly downloads, summary) and writes candidates.tsv, the snapshot
//	    every later step reads; Go candidates are the example servers of the
//	    two Go SDKs at their tags, listed from the module cache.
//	go run ./studies/population lock -before YYYY-MM-DD
//	    locks every npm candidate alone, in a project of its own
//	    (npm/NAME@VERSION: package.json, .npmrc and a package-lock.json
//	    without registry URLs, resolved as npm resolved on that day), reads
//	    each package's executables from its lockfile, picks the previous
//	    release of the most downloaded ones (kept from probe.json when it
//	    names one; else npm view) and locks those too; writes probe.json.
//	go run ./studies/population servers
//	    writes servers.json from candidates.tsv, probe.json, overrides.json,
//	    toolsets.json,
//	    exclusions.tsv and, where study install has run, the installed
//	    packages' READMEs (the credentials they name are set to "dummy").
//
// Every step is deterministic given its inputs; only lock asks the npm
// registry and the Go module proxy anything.
package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpdrill/mcpdrill/studies"
	"github.com/mcpdrill/mcpdrill/studies/install"
	"github.com/mcpdrill/mcpdrill/studies/proc"
)

// The rule's numbers.
const (
	// npmCandidates is how many npm packages matching the rule are drawn,
	// in order of monthly downloads.
	npmCandidates = 300
	// pypiCandidates is how many PyPI packages are drawn, in order of rank.
	pypiCandidates = 30
	// previousReleases is how many of the most downloaded npm servers (with
	// an executable) get their previous release scanned too.
	previousReleases = 100
	// lockJobs is how many packages lock at once.
	lockJobs = 4
)

// Go candidates: the example servers of the official Go SDK and of mcp-go,
// and gopls (built on the Go SDK; `gopls mcp`), with the previous release
// line of each. gopls is the newest release the Go of this machine (1.26)
// builds: v0.24.0 needs Go 1.27.
var goModules = []struct {
	short, module, version, previous, examples string
}{
	{"go-sdk", "github.com/modelcontextprotocol/go-sdk", "v1.8.0", "v1.7.0", "examples/server"},
	{"mcp-go", "github.com/mark3labs/mcp-go", "v1.2.1", "v1.1.1", "examples"},
}

const goplsModule, goplsVersion, goplsPrevious = "golang.org/x/tools/gopls", "v0.23.0", "v0.22.0"

func main() {
	top := flag.NewFlagSet("population", flag.ExitOnError)
	dir := top.String("C", "studies/ecosystem", "the study directory")
	_ = top.Parse(os.Args[1:])
	args := top.Args()
	if len(args) < 1 {
		fmt.Fprintln(os.Stderr, "usage: population [-C DIR] candidates|lock|servers [flags]")
		os.Exit(2)
	}
	if err := os.Chdir(*dir); err != nil {
		fmt.Fprintln(os.Stderr, "population:", err)
		os.Exit(1)
	}
	os.Args = append([]string{os.Args[0]}, args...)
	var err error
	switch os.Args[1] {
	case "candidates":
		fs := flag.NewFlagSet("candidates", flag.ExitOnError)
		npm := fs.String("npm", "", "npm package list (name, version, downloads a month, summary)")
		pypi := fs.String("pypi", "", "PyPI package list (name, version, month, rank, summary)")
		date := fs.String("date", "", "the day the lists were made (YYYY-MM-DD)")
		_ = fs.Parse(os.Args[2:])
		err = candidates(*npm, *pypi, *date)
	case "lock":
		fs := flag.NewFlagSet("lock", flag.ExitOnError)
		before := fs.String("before", "", "resolve as npm did at the end of this day (YYYY-MM-DD, UTC): the study's date")
		_ = fs.Parse(os.Args[2:])
		var day time.Time
		if day, err = time.Parse(time.DateOnly, *before); err != nil {
			err = fmt.Errorf("lock: -before %q: want YYYY-MM-DD", *before)
			break
		}
		err = lock(day)
	case "servers":
		err = servers()
	default:
		err = fmt.Errorf("unknown step %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "population:", err)
		os.Exit(1)
	}
}

// Candidate is one row of candidates.tsv.
type Candidate struct {
	Registry  string
	Name      string
	Version   string
	Downloads int64
	Summary   string
}

// mcpWord matches "mcp" as a word of a summary (not inside another word).
var mcpWord = regexp.MustCompile(`(?i)(^|[^a-z0-9])mcp([^a-z0-9]|$)|model context protocol`)

// candidates applies the rule: an npm package whose name contains "mcp", or
// whose summary has the word MCP or "Model Context Protocol", in order of
// monthly downloads (ties by name), the first npmCandidates; a PyPI package
// whose name contains "mcp" and that ranks among the 15,000 most downloaded,
// in order of rank, the first pypiCandidates; every example main package of
// the Go SDKs, and gopls.
func candidates(npmPath, pypiPath, date string) error {
	if npmPath == "" || pypiPath == "" || date == "" {
		return errors.New("candidates: give -npm, -pypi and -date")
	}
	var npm, pypi []Candidate
	if err := eachTSV(npmPath, func(f []string) {
		if len(f) < 3 {
			return
		}
		name, summary := f[0], field(f, 3)
		if !strings.Contains(strings.ToLower(name), "mcp") && !mcpWord.MatchString(summary) {
			return
		}
		d, _ := strconv.ParseInt(f[2], 10, 64)
		npm = append(npm, Candidate{"npm", name, f[1], d, summary})
	}); err != nil {
		return err
	}
	slices.SortFunc(npm, func(a, b Candidate) int {
		return cmp.Or(cmp.Compare(b.Downloads, a.Downloads), cmp.Compare(a.Name, b.Name))
	})
	npm = npm[:min(len(npm), npmCandidates)]
	type ranked struct {
		c    Candidate
		rank int
	}
	var py []ranked
	if err := eachTSV(pypiPath, func(f []string) {
		if len(f) < 4 || !strings.Contains(strings.ToLower(f[0]), "mcp") {
			return
		}
		r, _ := strconv.Atoi(f[3])
		if r <= 0 {
			return
		}
		py = append(py, ranked{Candidate{"pypi", f[0], f[1], 0, field(f, 4)}, r})
	}); err != nil {
		return err
	}
	slices.SortFunc(py, func(a, b ranked) int { return cmp.Or(cmp.Compare(a.rank, b.rank), cmp.Compare(a.c.Name, b.c.Name)) })
	for _, r := range py[:min(len(py), pypiCandidates)] {
		pypi = append(pypi, r.c)
	}
	gos, err := goCandidates()
	if err != nil {
		return err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# The ecosystem study's candidates, drawn %s by the rule of METHODOLOGY.md\n", date)
	fmt.Fprintf(&b, "# (studies/population candidates): npm %d by monthly downloads, PyPI %d by rank\n", len(npm), len(pypi))
	// gos ends with gopls, which is no example server.
	fmt.Fprintf(&b, "# among the 15,000 most downloaded (no figure: downloads 0), Go %d example servers and gopls.\n", len(gos)-1)
	b.WriteString("registry\tname\tversion\tdownloads\tsummary\n")
	for _, c := range slices.Concat(npm, pypi, gos) {
		s := strings.Join(strings.Fields(c.Summary), " ")
		if len(s) > 200 {
			s = s[:200]
		}
		fmt.Fprintf(&b, "%s\t%s\t%s\t%d\t%s\n", c.Registry, c.Name, c.Version, c.Downloads, s)
	}
	return os.WriteFile("candidates.tsv", b.Bytes(), 0o644)
}

func field(f []string, i int) string {
	if i < len(f) {
		return f[i]
	}
	return ""
}

func eachTSV(path string, fn func([]string)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	first := true
	for sc.Scan() {
		line := sc.Text()
		if first || strings.HasPrefix(line, "#") {
			first = false
			continue
		}
		fn(strings.Split(line, "\t"))
	}
	return sc.Err()
}

// goCandidates lists the example main packages of the Go SDKs at their
// tags (from the module cache, downloading the module once), and gopls.
func goCandidates() ([]Candidate, error) {
	var out []Candidate
	for _, m := range goModules {
		dir, err := goModDir(m.module + "@" + m.version)
		if err != nil {
			return nil, err
		}
		ents, err := os.ReadDir(filepath.Join(dir, m.examples))
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			if !e.IsDir() {
				continue
			}
			pkg := m.module + "/" + m.examples + "/" + e.Name()
			out = append(out, Candidate{"go", pkg, m.version, 0, m.short + " example: " + goTransport(filepath.Join(dir, m.examples, e.Name()))})
		}
	}
	out = append(out, Candidate{"go", goplsModule, goplsVersion, 0, "the Go language server; `gopls mcp` serves MCP over stdio"})
	return out, nil
}

// goTransport says what the example's main package uses: a stdio server, a
// client, HTTP.
func goTransport(dir string) string {
	var src []byte
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, _ := os.ReadFile(f)
		src = append(src, b...)
	}
	var what []string
	if regexp.MustCompile(`StdioTransport|ServeStdio|NewStdioServer`).Match(src) {
		what = append(what, "stdio server")
	}
	if regexp.MustCompile(`NewStreamableHTTP|NewSSE|SSEHandler|ListenAndServe`).Match(src) {
		what = append(what, "HTTP")
	}
	if regexp.MustCompile(`client\.New|mcp\.NewClient|NewStdioMCPClient`).Match(src) {
		what = append(what, "client")
	}
	if len(what) == 0 {
		return "no transport named in its main package"
	}
	return strings.Join(what, ", ")
}

func goModDir(modVersion string) (string, error) {
	out, err := exec.Command("go", "mod", "download", "-json", modVersion).Output()
	if err != nil {
		return "", fmt.Errorf("go mod download %s: %w", modVersion, err)
	}
	var m struct{ Dir string }
	if err := json.Unmarshal(out, &m); err != nil || m.Dir == "" {
		return "", fmt.Errorf("go mod download %s: no directory", modVersion)
	}
	return m.Dir, nil
}

func readCandidates() ([]Candidate, error) {
	var out []Candidate
	err := eachTSV("candidates.tsv", func(f []string) {
		d, _ := strconv.ParseInt(field(f, 3), 10, 64)
		out = append(out, Candidate{f[0], f[1], f[2], d, field(f, 4)})
	})
	return out, err
}

// Probe is probe.json: what locking found out about each npm package.
type Probe struct {
	// NPM is keyed by package name (the candidates' versions).
	NPM map[string]*NPMProbe `json:"npm"`
	// Previous is keyed by package name: its previous release.
	Previous map[string]*NPMProbe `json:"previous"`
	// Go is keyed by package path: the previous release of a Go candidate
	// that has one.
	Go map[string]string `json:"go_previous"`
}

// NPMProbe is one locked npm package.
type NPMProbe struct {
	Version string `json:"version"`
	// Dir is its npm project (install.NPMDir).
	Dir string `json:"dir,omitempty"`
	// Bins are its executables (name: path in the package).
	Bins map[string]string `json:"bins,omitempty"`
	// MCP lists its direct dependencies on MCP SDKs and frameworks.
	MCP []string `json:"mcp_deps,omitempty"`
	// Scripts are the packages of its tree with an install script (which
	// the study does not run).
	Scripts []string `json:"install_scripts,omitempty"`
	// Packages counts the packages of its tree.
	Packages int `json:"packages,omitempty"`
	// LegacyPeers: npm resolved it only without peer dependencies.
	LegacyPeers bool `json:"legacy_peer_deps,omitempty"`
	// Error is why it could not be locked.
	Error string `json:"error,omitempty"`
}

// lock locks every npm candidate and the previous release of the most
// downloaded servers, each alone, as npm resolved them at the end of day.
func lock(day time.Time) error {
	cands, err := readCandidates()
	if err != nil {
		return err
	}
	var old Probe
	_ = readJSON("probe.json", &old) // the previous releases chosen before
	p := &Probe{NPM: map[string]*NPMProbe{}, Previous: map[string]*NPMProbe{}, Go: map[string]string{}}
	var npm []Candidate
	for _, c := range cands {
		switch c.Registry {
		case "npm":
			npm = append(npm, c)
		case "go":
			if prev := goPrevious(c.Name); prev != "" {
				p.Go[c.Name] = prev
			}
		}
	}
	o := install.LockOptions{Before: day, CacheDir: filepath.Join(mustAbs("."), ".cache", "npm")}
	lockAll(npm, p.NPM, o)
	// The previous release of the most downloaded servers (a package with
	// an executable): the newest version of an earlier minor or major line.
	var servers []Candidate
	for _, c := range npm {
		if pr := p.NPM[c.Name]; pr != nil && pr.Error == "" && len(pr.Bins) > 0 {
			servers = append(servers, c)
		}
	}
	// The most downloaded servers, with room for those without an earlier
	// line; four look-ups at a time, the choice in download order.
	servers = servers[:min(len(servers), previousReleases*3/2)]
	versions := make([]string, len(servers))
	_ = proc.Each(context.Background(), len(servers), lockJobs, func(i int) {
		c := servers[i]
		if pr := old.Previous[c.Name]; pr != nil && pr.Version != "" {
			versions[i] = pr.Version
			return
		}
		v, err := previousVersion(c.Name, c.Version)
		if err != nil {
			fmt.Fprintf(os.Stderr, "population: %s: %v\n", c.Name, err)
		}
		versions[i] = v
	})
	var prev []Candidate
	for i, c := range servers {
		if versions[i] != "" && len(prev) < previousReleases {
			prev = append(prev, Candidate{"npm", c.Name, versions[i], c.Downloads, c.Summary})
		}
	}
	lockAll(prev, p.Previous, o)
	data, _ := json.MarshalIndent(p, "", "  ")
	return os.WriteFile("probe.json", append(data, '\n'), 0o644)
}

func mustAbs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		panic(err)
	}
	return a
}

// goPrevious is the previous release of a Go candidate whose package exists
// there.
func goPrevious(pkg string) string {
	if pkg == goplsModule {
		return goplsPrevious
	}
	for _, m := range goModules {
		if rest, ok := strings.CutPrefix(pkg, m.module+"/"); ok {
			dir, err := goModDir(m.module + "@" + m.previous)
			if err != nil {
				return ""
			}
			if st, err := os.Stat(filepath.Join(dir, rest)); err == nil && st.IsDir() {
				return m.previous
			}
		}
	}
	return ""
}

// lockAll locks each candidate in its own project, lockJobs at a time; a
// project locked before from the same package.json is read, not locked
// again (a rerun after an interruption redoes only what is missing).
func lockAll(cands []Candidate, into map[string]*NPMProbe, o install.LockOptions) {
	res := make([]*NPMProbe, len(cands))
	var mu sync.Mutex
	done := 0
	_ = proc.Each(context.Background(), len(cands), lockJobs, func(i int) {
		c := cands[i]
		dir := install.NPMDir(c.Name, c.Version)
		l, err := lockedBefore(dir, c)
		if l == nil && err == nil {
			l, err = install.LockNPM(context.Background(), dir, c.Name, c.Version, o)
		}
		pr := &NPMProbe{Version: c.Version}
		if err != nil {
			pr.Error = hostRE.ReplaceAllString(err.Error(), "<host>")
			_ = os.RemoveAll(dir)
		} else {
			pr.Dir, pr.Bins, pr.Scripts, pr.Packages, pr.LegacyPeers = dir, l.Bins, l.Scripts, l.Packages, l.LegacyPeers
			for d, v := range l.Dependencies {
				if mcpDep(d) {
					pr.MCP = append(pr.MCP, d+"@"+v)
				}
			}
			slices.Sort(pr.MCP)
		}
		res[i] = pr
		mu.Lock()
		done++
		fmt.Fprintf(os.Stderr, "[%d/%d] %s@%s %s\n", done, len(cands), c.Name, c.Version, cmp.Or(pr.Error, "locked"))
		mu.Unlock()
	})
	for i, c := range cands {
		into[c.Name] = res[i]
	}
}

// lockedBefore reads a project an earlier lock left for c: its
// package.json pins c alone and its lockfile locks it.
func lockedBefore(dir string, c Candidate) (*install.Lock, error) {
	var pj struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := readJSON(filepath.Join(dir, "package.json"), &pj); err != nil || len(pj.Dependencies) != 1 || pj.Dependencies[c.Name] != c.Version {
		return nil, nil
	}
	l, err := install.ReadLock(dir, c.Name)
	if err != nil {
		return nil, nil
	}
	rc, _ := os.ReadFile(filepath.Join(dir, ".npmrc"))
	l.LegacyPeers = bytes.Contains(rc, []byte("legacy-peer-deps=true"))
	return l, nil
}

// mcpDep: a dependency on an MCP SDK or framework.
func mcpDep(name string) bool {
	switch name {
	case "@modelcontextprotocol/sdk", "fastmcp", "mcp-framework", "tmcp", "mcp-handler", "@mastra/mcp", "mcp-proxy", "@rekog/mcp-nest", "@hono/mcp", "xmcp", "mcp-use":
		return true
	}
	return strings.HasPrefix(name, "@modelcontextprotocol/") || strings.HasPrefix(name, "@tmcp/")
}

var hostRE = regexp.MustCompile(`https?://[^/\s'"]+`)

// previousVersion is the newest release (no prerelease) of name whose
// major.minor is below current's: the latest of the previous minor or
// major line; "" when there is none.
func previousVersion(name, current string) (string, error) {
	out, err := exec.Command("npm", "view", name, "versions", "--json", "--prefer-offline").Output()
	if err != nil {
		return "", fmt.Errorf("npm view: %w", err)
	}
	var vs []string
	if err := json.Unmarshal(out, &vs); err != nil {
		var one string
		if json.Unmarshal(out, &one) != nil {
			return "", err
		}
		vs = []string{one}
	}
	cur, ok := semver(current)
	if !ok {
		return "", nil
	}
	best, bestV := "", [3]int{-1}
	for _, v := range vs {
		s, ok := semver(v)
		if !ok || [2]int{s[0], s[1]} == [2]int{cur[0], cur[1]} || cmpVer(s, cur) > 0 {
			continue
		}
		if cmpVer(s, bestV) > 0 {
			best, bestV = v, s
		}
	}
	return best, nil
}

var semverRE = regexp.MustCompile(`^(\d+)\.(\d+)\.(\d+)$`)

func semver(v string) ([3]int, bool) {
	m := semverRE.FindStringSubmatch(v)
	if m == nil {
		return [3]int{}, false
	}
	var s [3]int
	for i := range 3 {
		s[i], _ = strconv.Atoi(m[i+1])
	}
	return s, true
}

func cmpVer(a, b [3]int) int {
	return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]), cmp.Compare(a[2], b[2]))
}

// Entry is a servers.json entry: the study's own type.
type Entry = studies.Entry

// entry is an entry with its command, arguments and environment.
func entry(command string, args []string, env map[string]string) Entry {
	var e Entry
	e.Command, e.Args, e.Env = command, args, env
	return e
}

// Override is the dummy configuration of a package whose server needs
// arguments or settings to start (overrides.json, by package name).
type Override struct {
	Args []string          `json:"args,omitempty"`
	Env  map[string]string `json:"env,omitempty"`
}

// credentialName: an environment variable a README names that holds a key,
// a token or a secret.
var credentialName = regexp.MustCompile(`\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*_(?:API_KEY|APIKEY|KEY|TOKEN|SECRET|ACCESS_TOKEN|API_TOKEN|PAT|PASSWORD|SECRET_KEY|CLIENT_SECRET)\b`)

// maxCredentials bounds how many of a README's credential names are set.
const maxCredentials = 4

func servers() error {
	cands, err := readCandidates()
	if err != nil {
		return err
	}
	var p Probe
	if err := readJSON("probe.json", &p); err != nil {
		return err
	}
	overrides := map[string]Override{}
	if err := readJSON("overrides.json", &overrides); err != nil {
		return err
	}
	excluded := map[string]string{}
	if err := eachTSV("exclusions.tsv", func(f []string) {
		if len(f) >= 2 {
			excluded[f[0]] = f[1]
		}
	}); err != nil {
		return err
	}
	// Toolset switches known per package, each checked in the package's
	// own source or README (the source says where).
	toolsets := map[string][]studies.Configuration{}
	if err := readJSON("toolsets.json", &toolsets); err != nil {
		return err
	}
	out := map[string]Entry{}
	for _, c := range cands {
		switch c.Registry {
		case "npm":
			pr := p.NPM[c.Name]
			e := npmEntry(c, pr, overrides[c.Name], excluded[c.Name], nil)
			if e.Excluded == "" {
				e.Configurations = toolsets[c.Name]
			}
			out[c.Name] = e
			if prev := p.Previous[c.Name]; prev != nil && e.Excluded == "" {
				pc := c
				pc.Version = prev.Version
				pe := npmEntry(pc, prev, overrides[c.Name], "", e.Credentials)
				pe.PreviousOf = c.Name
				out[c.Name+"@"+prev.Version] = pe
			}
		case "pypi":
			e := entry("pypi/"+c.Name+"/venv/bin/"+c.Name, nil, baseEnv())
			e.Package, e.Registry, e.Excluded = c.Name+"@"+c.Version, "pypi", excluded["pypi:"+c.Name]
			if e.Excluded != "" {
				e.Command, e.Env = c.Name, nil
			}
			out["pypi:"+c.Name] = e
		case "go":
			name, e := goEntry(c.Name, c.Version, c.Summary, excluded)
			out[name] = e
			if prev := p.Go[c.Name]; prev != "" && e.Excluded == "" {
				pname, pe := goEntry(c.Name, prev, c.Summary, excluded)
				pe.PreviousOf = name
				out[pname+"@"+prev] = pe
			}
		}
	}
	entries := make([]Entry, 0, len(out))
	for name, e := range out {
		e.Name = name
		entries = append(entries, e)
	}
	var b bytes.Buffer
	if err := studies.WriteServers(&b, entries); err != nil {
		return err
	}
	// What the study reads back is what was written.
	if _, err := studies.ParseSpec(b.Bytes(), "."); err != nil {
		return err
	}
	return os.WriteFile("servers.json", b.Bytes(), 0o644)
}

func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

func baseEnv() map[string]string {
	return map[string]string{"HOME": "${WORK_DIR}", "DO_NOT_TRACK": "1"}
}

// npmEntry is the entry of an npm package: its chosen executable run with
// node (or through its .bin link when it is no JavaScript file), the
// override's arguments and environment, and "dummy" for the credentials its
// README names (or creds, for a previous release: the current one's).
func npmEntry(c Candidate, pr *NPMProbe, o Override, excluded string, creds []string) Entry {
	e := Entry{Package: c.Name + "@" + c.Version, Registry: "npm", Downloads: c.Downloads}
	switch {
	case pr == nil:
		excluded = "not locked (run population lock)"
	case pr.Error != "":
		excluded = "does not install: npm could not lock it (" + pr.Error + ")"
	case len(pr.Bins) == 0 && excluded == "" && platformPackage.MatchString(c.Name):
		excluded = "platform package: a binary another package installs for one platform, with no executable (bin) of its own"
	case len(pr.Bins) == 0 && excluded == "":
		excluded = "library: the package has no executable (bin)"
	}
	if excluded != "" {
		e.Command, e.Excluded = "npx", excluded
		e.Args = []string{"-y", e.Package}
		return e
	}
	bin := pickBin(c.Name, pr.Bins)
	dir := pr.Dir + "/node_modules/"
	target := dir + c.Name + "/" + strings.TrimPrefix(filepath.ToSlash(filepath.Clean(pr.Bins[bin])), "./")
	if isJS(target) {
		e.Command, e.Args = "node", []string{"${SPEC_DIR}/" + target}
	} else {
		e.Command = dir + ".bin/" + bin
	}
	e.Args = append(e.Args, o.Args...)
	e.Env = baseEnv()
	for k, v := range o.Env {
		e.Env[k] = v
		if credentialName.MatchString(k) && !slices.Contains(creds, k) {
			e.Credentials = append(e.Credentials, k)
		}
	}
	if creds == nil {
		creds = readmeCredentials(dir + c.Name)
	}
	for _, k := range creds {
		if _, set := e.Env[k]; !set {
			e.Env[k] = "dummy"
		}
		if !slices.Contains(e.Credentials, k) {
			e.Credentials = append(e.Credentials, k)
		}
	}
	slices.Sort(e.Credentials)
	return e
}

// platformPackage: a name that ends in an operating system and an
// architecture (foo-linux-x64, foo-darwin-arm64, foo-win32-x64-msvc).
var platformPackage = regexp.MustCompile(`-(linux|darwin|win32|windows|freebsd|android)(-[a-z0-9]+)+$`)

// pickBin chooses the executable: the one named like the package (without
// its scope), else the only one, else the first with "mcp" in its name,
// else the first by name.
func pickBin(pkg string, bins map[string]string) string {
	names := make([]string, 0, len(bins))
	for n := range bins {
		names = append(names, n)
	}
	slices.Sort(names)
	base := pkg[strings.LastIndex(pkg, "/")+1:]
	if _, ok := bins[base]; ok {
		return base
	}
	if len(names) == 1 {
		return names[0]
	}
	for _, n := range names {
		if strings.Contains(strings.ToLower(n), "mcp") {
			return n
		}
	}
	return names[0]
}

// isJS: the file is JavaScript (a .js/.cjs/.mjs name, or a node shebang);
// a file not installed yet is taken to be.
func isJS(path string) bool {
	if ext := filepath.Ext(path); ext == ".js" || ext == ".cjs" || ext == ".mjs" {
		return true
	}
	f, err := os.Open(path)
	if err != nil {
		return true
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadString('\n')
	return !strings.HasPrefix(line, "#!") || strings.Contains(line, "node")
}

// readmeCredentials are the credential variables the installed package's
// README names, in order of first mention, at most maxCredentials.
func readmeCredentials(pkgDir string) []string {
	ents, err := os.ReadDir(pkgDir)
	if err != nil {
		return nil
	}
	var text []byte
	for _, e := range ents {
		if n := strings.ToLower(e.Name()); n == "readme.md" || n == "readme" || n == "readme.markdown" {
			text, _ = os.ReadFile(filepath.Join(pkgDir, e.Name()))
			break
		}
	}
	var out []string
	for _, m := range credentialName.FindAll(text, -1) {
		n := string(m)
		if strings.HasPrefix(n, "YOUR_") || strings.HasPrefix(n, "MY_") || strings.HasPrefix(n, "EXAMPLE_") || slices.Contains(out, n) {
			continue
		}
		out = append(out, n)
		if len(out) == maxCredentials {
			break
		}
	}
	return out
}

// goEntry is a Go candidate's entry: its binary in go/NAME (GOBIN), gopls
// with `mcp`.
func goEntry(pkg, version, summary string, excluded map[string]string) (string, Entry) {
	name, args := "go:gopls", []string(nil)
	env := baseEnv()
	if pkg == goplsModule {
		args = []string{"mcp"}
		env["GOTELEMETRY"], env["GOFLAGS"] = "off", "-mod=mod"
	} else {
		for _, m := range goModules {
			if rest, ok := strings.CutPrefix(pkg, m.module+"/"+m.examples+"/"); ok {
				name = "go:" + m.short + "/" + rest
			}
		}
	}
	e := entry("", args, env)
	e.Package, e.Registry, e.Excluded = pkg+"@"+version, "go", excluded[pkg]
	if e.Excluded == "" {
		switch {
		case strings.Contains(summary, "client") && !strings.Contains(summary, "stdio server"):
			e.Excluded = "runs an MCP client (in-process or against another server), not a stdio server"
		case strings.Contains(summary, "HTTP") && !strings.Contains(summary, "stdio server"):
			e.Excluded = "serves HTTP only (no stdio transport in its main package); the study runs stdio servers"
		}
	}
	dir := strings.TrimPrefix(name, "go:")
	if version != goCurrent(pkg) {
		dir += "@" + version
	}
	e.Command = "go/" + dir + "/" + pkg[strings.LastIndex(pkg, "/")+1:]
	return name, e
}

func goCurrent(pkg string) string {
	if pkg == goplsModule {
		return goplsVersion
	}
	for _, m := range goModules {
		if strings.HasPrefix(pkg, m.module+"/") {
			return m.version
		}
	}
	return ""
}
