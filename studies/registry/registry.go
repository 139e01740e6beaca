package registry

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/mcpdrill/mcpdrill/studies"
)

// A saved MCP Registry list response (GET /v0.1/servers): each item is a
// server.json document under "server", with the registry's own metadata
// under "_meta". Only the fields the import reads are declared.
type registryList struct {
	Servers []registryItem `json:"servers"`
}

type registryItem struct {
	Server registryServer `json:"server"`
	Meta   struct {
		Official *registryOfficial `json:"io.modelcontextprotocol.registry/official"`
	} `json:"_meta"`
}

type registryOfficial struct {
	Status      string `json:"status"`
	PublishedAt string `json:"publishedAt"`
	IsLatest    bool   `json:"isLatest"`
}

type registryServer struct {
	Name     string              `json:"name"`
	Version  string              `json:"version"`
	Packages []registryPackage   `json:"packages"`
	Remotes  []registryTransport `json:"remotes"`
}

type registryPackage struct {
	RegistryType         string             `json:"registryType"`
	Identifier           string             `json:"identifier"`
	Version              string             `json:"version"`
	RuntimeHint          string             `json:"runtimeHint"`
	Transport            registryTransport  `json:"transport"`
	RuntimeArguments     []registryArgument `json:"runtimeArguments"`
	PackageArguments     []registryArgument `json:"packageArguments"`
	EnvironmentVariables []registryArgument `json:"environmentVariables"`
}

type registryTransport struct {
	Type      string                   `json:"type"`
	URL       string                   `json:"url"`
	Headers   []registryArgument       `json:"headers"`
	Variables map[string]registryInput `json:"variables"`
}

// registryInput is the schema's Input: a value, or what a client would ask
// the user for.
type registryInput struct {
	Format     string `json:"format"`
	Value      string `json:"value"`
	Default    string `json:"default"`
	IsRequired bool   `json:"isRequired"`
	IsSecret   bool   `json:"isSecret"`
}

// registryArgument is a positional or named argument, an environment
// variable or a header (KeyValueInput): an Input with a name, a type and
// variables for the {curly} parts of its value.
type registryArgument struct {
	registryInput
	Type      string                   `json:"type"`
	Name      string                   `json:"name"`
	ValueHint string                   `json:"valueHint"`
	Variables map[string]registryInput `json:"variables"`
}

// launchers are the runtime commands the import knows, by registryType;
// the first is the default when a package gives no runtimeHint.
var launchers = map[string][]string{
	"npm":  {"npx"},
	"pypi": {"uvx"},
	"oci":  {"docker", "podman"},
}

// Options tune Import.
type Options struct {
	// PyPIVenv launches PyPI packages from a venv per row,
	// pypi/NAME/venv/bin/SCRIPT under the study directory (the layout
	// study install fills), instead of with uvx. SCRIPT is the package's
	// name, as uvx assumes; uvx's runtime arguments are dropped.
	PyPIVenv bool
	// ContainerReach keeps the docker runtime arguments that widen a
	// container's reach into the host (mounts, --privileged, host
	// namespaces, devices, capabilities, published ports); by default
	// they are dropped and listed in Result.Dropped.
	ContainerReach bool
}

// Result is servers.json made from a registry list.
type Result struct {
	// Servers are the entries, sorted by name.
	Servers []studies.Entry
	// Registry servers read (every version) and distinct names among them.
	Documents, Names int
	// Dropped lists, by row, the container options that widen a
	// container's reach, which the import left out (or, with
	// Options.ContainerReach, kept: Kept says so).
	Dropped []Dropped
	Kept    bool
}

// Dropped is one row's container options that widen its reach.
type Dropped struct {
	Row  string
	Args []string
}

// Import turns a saved MCP Registry list response (the body of GET
// /v0.1/servers, or a JSON array of such pages) into servers.json entries.
//
// For each server name the latest version (isLatest, else the last
// published) gives a row per package and remote: the first
// launchable package (by the publisher's order) is the server's row, the
// other packages and the remotes are variants of it. A remote-only server's
// first remote is its row. When the list holds an older version too, the
// release just before the latest is a row with previous_of. Packages map
// to launch commands by registryType and runtimeHint (npm: npx -y --
// name@version; pypi: uvx --from name==version name, or a venv's script;
// oci: docker run -i --rm -- image); a package served over HTTP on a port
// it takes as an argument or variable is launched on ${PORT}. Registry
// text is data: identifiers and versions must pass their registry's
// grammar, and runtime arguments pass only when known (runtime.go).
// Environment variables that are secret, or required with no value,
// become credentials; a required non-secret variable with a default is set
// to it. What cannot be launched (an unknown registryType or runtimeHint,
// registry text refused, an unknown runner option, a required argument
// without a value, a deleted server) is an excluded row with the reason.
func Import(data []byte, o Options) (*Result, error) {
	items, err := readRegistry(data)
	if err != nil {
		return nil, err
	}
	byName := map[string][]registryItem{}
	for i, it := range items {
		s := it.Server
		switch {
		case s.Name == "":
			return nil, fmt.Errorf("registry: server %d has no name", i+1)
		case strings.ContainsFunc(s.Name, func(r rune) bool { return r < ' ' || r == 0x7f }):
			return nil, fmt.Errorf("registry: server %d: name %q holds a control character", i+1, s.Name)
		}
		byName[s.Name] = append(byName[s.Name], it)
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	slices.Sort(names)

	bases := rowBases(names)
	var rows []importRow
	for _, n := range names {
		latest, previous, deleted, err := pickVersions(n, byName[n])
		if err != nil {
			return nil, err
		}
		if deleted {
			latest = registryServer{Name: n}
		}
		rs := serverRows(bases[n], latest, o)
		if deleted {
			rs[0].entry.Excluded = "deleted from the registry"
		}
		if previous != nil {
			prev := serverRows(bases[n]+"-previous", *previous, o)[0]
			prev.previousOf = rs[0].key
			rs = append(rs, prev)
		}
		rows = append(rows, rs...)
	}
	// A derived name that is still taken gets -2, -3, … in registry-name
	// order, which does not depend on the order of the input.
	taken := map[string]int{}
	for _, r := range rows {
		taken[r.entry.Name]++
	}
	seen := map[string]int{}
	final := map[string]string{}
	for i := range rows {
		n := rows[i].entry.Name
		if seen[n]++; seen[n] > 1 {
			for k := seen[n]; ; k++ {
				if c := fmt.Sprintf("%s-%d", n, k); taken[c] == 0 {
					taken[c] = 1
					rows[i].entry.Name = c
					break
				}
			}
		}
		final[rows[i].key] = rows[i].entry.Name
	}
	out := &Result{Documents: len(items), Names: len(names), Kept: o.ContainerReach}
	for _, r := range rows {
		e := r.entry
		if len(r.wide) > 0 {
			out.Dropped = append(out.Dropped, Dropped{Row: e.Name, Args: r.wide})
		}
		if r.variantOf != "" {
			e.VariantOf = final[r.variantOf]
		}
		if r.previousOf != "" {
			e.PreviousOf = final[r.previousOf]
		}
		if o.PyPIVenv && e.Registry == studies.RegistryPyPI && e.Excluded == "" {
			// The command was the script's name until the row's name was final.
			cmd := &e.Command
			if e.Launch != nil {
				cmd = &e.Launch.Command
			}
			*cmd = path.Join("pypi", e.Name, "venv", "bin", *cmd)
		}
		out.Servers = append(out.Servers, e)
	}
	slices.SortFunc(out.Servers, func(a, b studies.Entry) int { return cmp.Compare(a.Name, b.Name) })
	return out, nil
}

// readRegistry reads one list page or an array of pages.
func readRegistry(data []byte) ([]registryItem, error) {
	data = bytes.TrimSpace(data)
	var pages []json.RawMessage
	switch {
	case len(data) > 0 && data[0] == '[':
		if err := json.Unmarshal(data, &pages); err != nil {
			return nil, fmt.Errorf("registry: not a JSON array of list pages: %w", err)
		}
	case len(data) > 0 && data[0] == '{':
		pages = []json.RawMessage{data}
	default:
		return nil, errors.New(`registry: want the JSON object GET /v0.1/servers returns ({"servers": [...]}) or an array of them`)
	}
	var items []registryItem
	for i, p := range pages {
		var probe map[string]json.RawMessage
		if err := json.Unmarshal(p, &probe); err != nil {
			return nil, fmt.Errorf("registry: page %d: %w", i+1, err)
		}
		if _, ok := probe["servers"]; !ok {
			return nil, fmt.Errorf(`registry: page %d has no "servers" list (a single server.json is not a list response)`, i+1)
		}
		var l registryList
		if err := json.Unmarshal(p, &l); err != nil {
			return nil, fmt.Errorf("registry: page %d: %w", i+1, err)
		}
		items = append(items, l.Servers...)
	}
	if len(items) == 0 {
		return nil, errors.New("registry: the list holds no servers")
	}
	return items, nil
}

// pickVersions returns the latest version of one server (the one marked
// isLatest, else the last published) and the release published before it,
// (the next older one), if listed and not deleted; deleted says the latest version is. Versions
// without a publication time count as older than those with one, in the
// order listed (the registry lists a server's versions oldest first).
func pickVersions(name string, items []registryItem) (latest registryServer, previous *registryServer, deleted bool, err error) {
	type version struct {
		it        registryItem
		published time.Time
		order     int
	}
	vs := make([]version, 0, len(items))
	flagged := 0
	seen := map[string]bool{}
	for i, it := range items {
		v := version{it: it, order: i}
		if o := it.Meta.Official; o != nil && o.PublishedAt != "" {
			if v.published, err = time.Parse(time.RFC3339Nano, o.PublishedAt); err != nil {
				return latest, nil, false, fmt.Errorf("registry: %s %s: publishedAt: %w", name, it.Server.Version, err)
			}
		}
		if it.latest() {
			flagged++
		}
		if seen[it.Server.Version] {
			return latest, nil, false, fmt.Errorf("registry: %s: version %q is listed twice", name, it.Server.Version)
		}
		seen[it.Server.Version] = true
		vs = append(vs, v)
	}
	if flagged > 1 {
		return latest, nil, false, fmt.Errorf("registry: %s: %d versions are marked isLatest", name, flagged)
	}
	// Newest first.
	slices.SortFunc(vs, func(a, b version) int {
		if c := b.published.Compare(a.published); c != 0 {
			return c
		}
		return cmp.Compare(b.order, a.order)
	})
	top := max(slices.IndexFunc(vs, func(v version) bool { return v.it.latest() }), 0)
	latest = vs[top].it.Server
	if vs[top].it.deleted() {
		return latest, nil, true, nil
	}
	if top+1 < len(vs) && !vs[top+1].it.deleted() {
		previous = &vs[top+1].it.Server
	}
	return latest, previous, false, nil
}

func (it registryItem) latest() bool {
	return it.Meta.Official != nil && it.Meta.Official.IsLatest
}

func (it registryItem) deleted() bool {
	return it.Meta.Official != nil && it.Meta.Official.Status == "deleted"
}

// importRow is an entry being built: key identifies it before names are
// final (registry name, derived name, position); variantOf and previousOf
// are keys of other rows.
type importRow struct {
	key, variantOf, previousOf string
	entry                      studies.Entry
	// wide are the container options that widen its reach.
	wide []string
}

var unsafeName = regexp.MustCompile(`[^a-z0-9._-]+`)

// maxBase bounds a derived name, leaving room for the suffixes of variants
// and previous releases within servers.json's 200 bytes.
const maxBase = 160

// rowBases derives a servers.json name for each registry name: the part
// after the slash, lowercased; when two servers share it, the last element
// of the namespace goes before it; when that is shared too, the whole name.
func rowBases(names []string) map[string]string {
	clean := func(s string) string {
		s = unsafeName.ReplaceAllString(strings.ToLower(s), "-")
		s = strings.Trim(s[:min(len(s), maxBase)], "-.")
		if s == "" {
			return "server"
		}
		return s
	}
	short := func(n string) string {
		_, after, _ := strings.Cut(n, "/")
		if after == "" {
			after = n
		}
		return clean(after)
	}
	qualified := func(n string) string {
		ns, _, _ := strings.Cut(n, "/")
		return clean(ns[strings.LastIndex(ns, ".")+1:] + "-" + short(n))
	}
	out := map[string]string{}
	assigned := map[string]bool{}
	for _, derive := range []func(string) string{short, qualified, clean} {
		count := map[string]int{}
		for _, n := range names {
			if _, done := out[n]; !done {
				count[derive(n)]++
			}
		}
		for _, n := range names {
			if _, done := out[n]; !done && count[derive(n)] == 1 && !assigned[derive(n)] {
				out[n] = derive(n)
				assigned[out[n]] = true
			}
		}
	}
	for _, n := range names {
		if _, done := out[n]; !done {
			out[n] = clean(n) // numbered later, like any other clash
		}
	}
	return out
}

// serverRows makes the rows of one server version: its launchable packages
// and remotes, the first the main row and the rest its variants, then what
// cannot be launched, excluded. A server with no package and no remote is
// one excluded row.
func serverRows(base string, s registryServer, o Options) []importRow {
	var ok, excluded []importRow
	entries := make([]importRow, 0, len(s.Packages)+len(s.Remotes))
	for _, p := range s.Packages {
		e, wide := packageEntry(p, o)
		entries = append(entries, importRow{entry: e, wide: wide})
	}
	for _, r := range s.Remotes {
		entries = append(entries, importRow{entry: remoteEntry(r)})
	}
	for _, r := range entries {
		if r.entry.Excluded != "" {
			excluded = append(excluded, r)
		} else {
			ok = append(ok, r)
		}
	}
	all := append(ok, excluded...)
	if len(all) == 0 {
		// A row needs a command or a url; .invalid never resolves.
		e := studies.Entry{Excluded: "the registry lists no package and no remote"}
		e.URL = "https://registry.invalid/"
		all = []importRow{{entry: e}}
	}
	rows := make([]importRow, len(all))
	used := map[string]int{}
	for i, r := range all {
		e := r.entry
		rows[i] = importRow{key: fmt.Sprintf("%s\x00%s\x00%d", s.Name, base, i), entry: e, wide: r.wide}
		if i == 0 {
			rows[i].entry.Name = base
			continue
		}
		suffix := variantSuffix(e)
		if used[suffix]++; used[suffix] > 1 {
			suffix = fmt.Sprintf("%s-%d", suffix, used[suffix])
		}
		rows[i].entry.Name = base + "-" + suffix
		rows[i].variantOf = rows[0].key
	}
	return rows
}

// variantSuffix says what a variant row is: its registry (or for an
// unknown one its command), or the remote's transport.
func variantSuffix(e studies.Entry) string {
	switch {
	case e.Launch != nil:
		return e.Registry + "-" + e.Type
	case e.Type == "sse":
		return "sse"
	case e.URL != "":
		return "remote"
	}
	return cmp.Or(e.Registry, strings.Trim(unsafeName.ReplaceAllString(strings.ToLower(e.Command), "-"), "-."), "package")
}

// packageEntry maps one package to a launch command (for a PyPI package
// in a venv, the command is the script's name: Import makes it a path
// once the row's name is final). Registry text reaches the command line
// only as data: the identifier and version pass their registry's grammar
// (else the row is excluded and has no package), the runner reads the
// package after "--" (npx, docker) or as the value of its own package
// option (uvx --from), and runtime arguments pass only when the import
// knows them (runtime.go). wide are the container options left out (or
// kept, with Options.ContainerReach) because they widen its reach.
func packageEntry(p registryPackage, o Options) (e studies.Entry, wide []string) {
	typ := strings.ToLower(p.RegistryType)
	known, ok := launchers[typ]
	if !ok {
		e.Command = cmp.Or(launcherOr(p.RuntimeHint, ""), launcherOr(typ, ""), "unknown")
		e.Excluded = fmt.Sprintf("registryType %q (%q): the study launches npm, pypi and oci packages", quoteArg(p.RegistryType), quoteArg(packageRef(p.Identifier, p.Version)))
		return e, nil
	}
	e.Registry = typ
	launcher := cmp.Or(p.RuntimeHint, known[0])
	e.Command = launcherOr(launcher, known[0])
	var ref string
	var refErr error
	switch typ {
	case studies.RegistryOCI:
		ref = imageRef(p.Identifier, p.Version)
		refErr = studies.CheckOCIRef(ref)
	case studies.RegistryNPM:
		ref = packageRef(p.Identifier, p.Version)
		refErr = errors.Join(studies.CheckNPMName(p.Identifier), studies.CheckSemver(p.Version))
	case studies.RegistryPyPI:
		ref = packageRef(p.Identifier, p.Version)
		refErr = errors.Join(studies.CheckPyPIName(p.Identifier), studies.CheckPEP440(p.Version))
	}
	switch {
	case p.Identifier == "":
		e.Excluded = "the package has no identifier"
		return e, nil
	case refErr != nil:
		e.Excluded = "registry text refused: " + strings.ReplaceAll(refErr.Error(), "\n", "; ")
		return e, nil
	}
	e.Package = ref
	if !slices.Contains(known, launcher) {
		e.Excluded = fmt.Sprintf("runtimeHint %q: the study runs %s packages with %s", quoteArg(p.RuntimeHint), typ, strings.Join(known, " or "))
		return e, nil
	}
	url := ""
	switch t := p.Transport.Type; {
	case t == "" || t == "stdio":
	case t != "streamable-http" && t != "sse":
		e.Excluded = fmt.Sprintf("package transport %q: want stdio, streamable-http or sse", quoteArg(t))
		return e, nil
	case typ == studies.RegistryOCI:
		e.Excluded = fmt.Sprintf("package transport %q: an image served over HTTP needs a published container port, which the import does not map", t)
		return e, nil
	default:
		u, err := bindPort(&p)
		if err != nil {
			e.Excluded = err.Error()
			return e, nil
		}
		url = u
	}

	env := map[string]string{}
	var creds, problems []string
	for _, v := range p.EnvironmentVariables {
		switch val, need := inputValue(v.registryInput, v.Variables); {
		case v.Name == "":
			problems = append(problems, "an environment variable has no name")
		case !envVarName.MatchString(v.Name):
			problems = append(problems, fmt.Sprintf("environment variable %q: not a variable name", quoteArg(v.Name)))
		case need:
			creds = append(creds, v.Name)
		case val != "":
			env[v.Name] = val
		}
	}
	runtimeArgs, c1, err1 := argumentList(p.RuntimeArguments)
	pkgArgs, c2, err2 := argumentList(p.PackageArguments)
	creds = append(append(creds, c1...), c2...)
	for _, err := range []error{err1, err2} {
		if err != nil {
			problems = append(problems, err.Error())
		}
	}
	var err error
	switch {
	case typ == studies.RegistryPyPI && o.PyPIVenv:
		e.Args = pkgArgs
		e.Command = p.Identifier
		if len(runtimeArgs) > 0 {
			_, err = uvxRuntime(runtimeArgs) // checked, then left out: no uvx runs
		}
	case launcher == "npx":
		runtimeArgs, err = npxRuntime(runtimeArgs)
		e.Args = slices.Concat([]string{"-y"}, runtimeArgs, []string{"--", ref}, pkgArgs)
	case launcher == "uvx":
		runtimeArgs, err = uvxRuntime(runtimeArgs)
		e.Args = slices.Concat(runtimeArgs, []string{"--from", p.Identifier + "==" + p.Version, p.Identifier}, pkgArgs)
	default: // docker, podman: the container sees only the variables passed in
		runtimeArgs, wide, err = dockerRuntime(runtimeArgs, o.ContainerReach)
		e.Args = append([]string{"run", "-i", "--rm"}, runtimeArgs...)
		for _, k := range sortedKeys(env, creds) {
			e.Args = append(e.Args, "-e", k)
		}
		e.Args = append(append(e.Args, "--", ref), pkgArgs...)
	}
	if err != nil {
		problems = append(problems, err.Error())
	}
	if len(env) > 0 {
		e.Env = env
	}
	if url != "" {
		// Served over HTTP: started as the entry's launch, scanned at url.
		e.Launch = &studies.Launch{Command: e.Command, Args: e.Args, Env: e.Env}
		e.Command, e.Args, e.Env, e.URL = "", nil, nil, url
		e.Type = "http"
		if p.Transport.Type == "sse" {
			e.Type = "sse"
		}
	}
	slices.Sort(creds)
	e.Credentials = slices.Compact(creds)
	if len(problems) > 0 {
		e.Excluded = strings.Join(problems, "; ")
	}
	return e, wide
}

var localURL = regexp.MustCompile(`^http://(localhost|127\.0\.0\.1|\[::1\]):\{([A-Za-z_][A-Za-z0-9_.-]*)\}(/[^{}]*)?$`)

// bindPort makes a package served over HTTP listen where the study says:
// its transport URL must be http://localhost:{VAR}/…, VAR one of the
// package's arguments (by value hint or flag name) or environment
// variables, which is set to ${PORT} (a free loopback port per run).
func bindPort(p *registryPackage) (string, error) {
	m := localURL.FindStringSubmatch(p.Transport.URL)
	if m == nil {
		return "", fmt.Errorf("package transport %s at %q: a local HTTP package is launched only at http://localhost:{VARIABLE}/…, its port a variable the study sets", p.Transport.Type, p.Transport.URL)
	}
	bound := false
	bind := func(in []registryArgument) []registryArgument {
		out := slices.Clone(in)
		for i, a := range out {
			if a.ValueHint == m[2] || a.Name == m[2] || (strings.HasPrefix(a.Name, "-") && strings.TrimLeft(a.Name, "-") == m[2]) {
				out[i].Value, out[i].Variables, out[i].IsSecret = "${PORT}", nil, false
				bound = true
			}
		}
		return out
	}
	p.RuntimeArguments = bind(p.RuntimeArguments)
	p.PackageArguments = bind(p.PackageArguments)
	p.EnvironmentVariables = bind(p.EnvironmentVariables)
	if !bound {
		return "", fmt.Errorf("package transport %s at %q: {%s} is none of the package's arguments or environment variables, so its port cannot be set", p.Transport.Type, p.Transport.URL, m[2])
	}
	return "http://" + m[1] + ":${PORT}" + m[3], nil
}

// remoteEntry maps one remote to a URL row.
func remoteEntry(r registryTransport) studies.Entry {
	var e studies.Entry
	switch r.Type {
	case "streamable-http":
		e.Type = "http"
	case "sse":
		e.Type = "sse"
	default:
		e.URL = "https://registry.invalid/"
		e.Excluded = fmt.Sprintf("remote type %q: want streamable-http or sse", r.Type)
		return e
	}
	url, missing := substitute(r.URL, r.Variables)
	e.URL = url
	if len(missing) > 0 {
		e.Excluded = fmt.Sprintf("remote url needs {%s}, which has no value or default", strings.Join(missing, "}, {"))
	}
	if url == "" {
		e.URL = "https://registry.invalid/"
		e.Excluded = "remote has no url"
	}
	headers := map[string]string{}
	for _, h := range r.Headers {
		val, need := inputValue(h.registryInput, h.Variables)
		switch {
		case need:
			e.Credentials = append(e.Credentials, envName(h.Name))
		case val != "" && h.Name != "":
			headers[h.Name] = val
		}
	}
	if len(headers) > 0 {
		e.Headers = headers
	}
	slices.Sort(e.Credentials)
	e.Credentials = slices.Compact(e.Credentials)
	return e
}

// inputValue is what the study sets an input to: its fixed value, else the
// default of a required non-secret one (a study runs on dummy
// configuration; a filepath becomes the server's scratch directory). need
// reports a credential: a secret, or a required input with nothing to
// give.
func inputValue(in registryInput, vars map[string]registryInput) (val string, need bool) {
	switch {
	case in.Value != "":
		v, missing := substitute(in.Value, vars)
		return v, len(missing) > 0
	case in.IsSecret:
		return "", true
	case !in.IsRequired:
		return "", false
	case in.Format == "filepath":
		return "${WORK_DIR}", false
	case in.Default != "":
		return in.Default, false
	}
	return "", true
}

// argumentList renders runtime or package arguments: a positional one is
// its value, a named one its name and value (or the name alone for a
// required flag without one). An optional argument without a fixed value is
// left out, and so is a secret one, which is a credential (named as the
// variable that would hold it). A required argument with nothing to give
// cannot be launched.
func argumentList(args []registryArgument) (out, creds []string, err error) {
	for _, a := range args {
		val, need := inputValue(a.registryInput, a.Variables)
		label := cmp.Or(a.Name, a.ValueHint, "?")
		switch {
		case a.Type != "positional" && a.Type != "named":
			return nil, nil, fmt.Errorf("argument %q has type %q: want positional or named", label, a.Type)
		case a.Type == "named" && a.Name == "":
			return nil, nil, errors.New("a named argument has no name")
		case need && a.IsSecret:
			creds = append(creds, envName(label))
		case need && a.Type == "named" && a.Value == "":
			out = append(out, a.Name) // a required flag
		case need:
			return nil, nil, fmt.Errorf("argument %q is required and has no value or default", label)
		case val == "":
		case a.Type == "named":
			out = append(out, a.Name, val)
		default:
			out = append(out, val)
		}
	}
	return out, creds, nil
}

var curly = regexp.MustCompile(`\{([A-Za-z_][A-Za-z0-9_.-]*)\}`)

// substitute replaces {name} in s by the variable's value or default; it
// returns the variables that have neither (left in place). ${NAME} is the
// study's own placeholder, not a registry variable, and is left alone.
func substitute(s string, vars map[string]registryInput) (string, []string) {
	var b strings.Builder
	var missing []string
	last := 0
	for _, m := range curly.FindAllStringSubmatchIndex(s, -1) {
		if m[0] > 0 && s[m[0]-1] == '$' {
			continue
		}
		b.WriteString(s[last:m[0]])
		last = m[1]
		name := s[m[2]:m[3]]
		v := vars[name]
		switch {
		case v.Value != "":
			b.WriteString(v.Value)
		case v.Default != "" && !v.IsSecret:
			b.WriteString(v.Default)
		case v.Format == "filepath":
			b.WriteString("${WORK_DIR}")
		default:
			missing = append(missing, name)
			b.WriteString(s[m[0]:m[1]])
		}
	}
	b.WriteString(s[last:])
	slices.Sort(missing)
	return b.String(), slices.Compact(missing)
}

// packageRef is name@version ("name" when the version is empty).
func packageRef(name, version string) string {
	if version == "" {
		return name
	}
	return name + "@" + version
}

// imageRef is the image reference docker runs, and the Package of an OCI
// entry (what study install pulls): the identifier carries its tag or
// digest in the current schema; an older document gives the tag as
// version.
func imageRef(identifier, version string) string {
	name, _, hasDigest := strings.Cut(identifier, "@")
	if hasDigest || strings.LastIndex(name, ":") > strings.LastIndex(name, "/") || version == "" {
		return identifier
	}
	return identifier + ":" + version
}

// launcherOr is a runner's name from the registry when it is one (a
// lowercase word), else def: an excluded row still says what it would run.
func launcherOr(name, def string) string {
	if launcherName.MatchString(name) {
		return name
	}
	return def
}

var (
	launcherName = regexp.MustCompile(`^[a-z][a-z0-9-]{0,30}$`)
	envVarName   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// envName turns a header name into the environment variable that would
// hold it (X-API-Key: X_API_KEY).
func envName(header string) string {
	return strings.Trim(strings.ToUpper(nonAlnum.ReplaceAllString(header, "_")), "_")
}

var nonAlnum = regexp.MustCompile(`[^A-Za-z0-9]+`)

func sortedKeys(env map[string]string, more []string) []string {
	keys := slices.Clone(more)
	for k := range env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}
