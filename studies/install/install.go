package install

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/clientconfig"
	"github.com/mcpdrill/mcpdrill/studies"
	"github.com/mcpdrill/mcpdrill/studies/proc"
)

// Options tune an install (study install).
type Options struct {
	// Jobs bounds how many install units run at once (default 4).
	Jobs int
	// Timeout bounds one unit (default 10 minutes).
	Timeout time.Duration
	// FindLinks installs PyPI packages from this directory alone
	// (pip --no-index --find-links), with no index: the offline path.
	FindLinks string
	// CacheDir holds the package managers' caches (npm's cache, Go's module
	// and build caches); default .cache beside servers.json.
	CacheDir string
	// Python is the interpreter that makes the venvs (default python3).
	Python string
	// Only installs these entries (by name) when set.
	Only []string
	// Force reinstalls an npm project that an earlier install completed
	// from the same lockfile (by default it is reused).
	Force bool
	// Progress, when set, is called (never concurrently) after each unit.
	Progress func(studies.InstallUnit)
	// Now is the clock of the log (default time.Now).
	Now func() time.Time
	// TempDir is the parent of each unit's scratch HOME (default
	// os.TempDir()).
	TempDir string
	// Scripts runs npm packages' install scripts (by default none runs:
	// their code is the package's, run at install time with no review).
	Scripts bool
	// NoStore leaves each npm tree as npm wrote it instead of sharing its
	// files with the store (CacheDir/store).
	NoStore bool
	// SourceBuilds lets pip build a package from a source distribution,
	// which runs the package's build code at install time; by default pip
	// installs wheels only (--only-binary :all:).
	SourceBuilds bool
}

// unit is a planned install command and the entries it serves.
type unit struct {
	key, registry string
	entries       []studies.Entry
	// dir is the npm project, the Go GOBIN or the venv.
	dir string
	// commands are the resolved paths the unit must leave executable, by
	// entry name ("node:PATH" for a script node runs, which need only exist).
	commands map[string]string
	// pkg is the Go package or PyPI requirement, or the OCI image.
	pkg string
	// requirements is a PyPI lock (name==version --hash=sha256:…).
	requirements string
	// err is a planning failure: the entry cannot be installed.
	err error
}

// planInstall groups the entries that have a package into install units,
// sorted by key. Excluded, disabled and package-less entries have none.
func planInstall(spec *studies.Spec, only []string) []*unit {
	units := map[string]*unit{}
	add := func(u *unit, e studies.Entry, command string) {
		if have, ok := units[u.key]; ok {
			u = have
		} else {
			units[u.key] = u
		}
		u.entries = append(u.entries, e)
		if command != "" {
			if u.commands == nil {
				u.commands = map[string]string{}
			}
			u.commands[e.Name] = command
		}
	}
	for _, e := range spec.Servers {
		if e.Package == "" || e.Disabled || e.Excluded != "" || (len(only) > 0 && !slices.Contains(only, e.Name)) {
			continue
		}
		command := e.Command
		if e.Launch != nil {
			command = e.Launch.Command
		}
		reg := e.PackageRegistry()
		args := e.Args
		if e.Launch != nil {
			args = e.Launch.Args
		}
		// npm's entries may run a package's script with node.
		viaNode := reg == studies.RegistryNPM && command == "node" && len(args) > 0
		if viaNode {
			command = args[0]
		}
		path := ""
		if strings.ContainsRune(command, '/') {
			path = clientconfig.ResolvePath(strings.ReplaceAll(command, "${SPEC_DIR}", spec.Dir), spec.Dir)
		} else if reg == studies.RegistryNPM || reg == studies.RegistryPyPI {
			// A bare command (npx, uvx) installs the package itself when
			// it starts: there is nothing for study install to do.
			continue
		}
		switch reg {
		case studies.RegistryNPM:
			dir, ok := npmProject(path)
			if !ok {
				add(&unit{key: "npm " + e.Name, registry: reg, err: fmt.Errorf("command %q is not under a node_modules directory: nothing to install it from", command)}, e, "")
				continue
			}
			if viaNode {
				// A script node runs need not be executable itself.
				path = "node:" + path
			}
			add(&unit{key: "npm ci " + rel(spec.Dir, dir), registry: reg, dir: dir, pkg: e.Package}, e, path)
		case studies.RegistryGo:
			if path == "" {
				add(&unit{key: "go " + e.Name, registry: reg, err: fmt.Errorf("command %q is not a path: go install needs a GOBIN", command)}, e, "")
				continue
			}
			dir := filepath.Dir(path)
			add(&unit{key: "go install " + e.Package + " " + rel(spec.Dir, dir), registry: reg, dir: dir, pkg: e.Package}, e, path)
		case studies.RegistryPyPI:
			if path == "" || filepath.Base(filepath.Dir(path)) != "bin" {
				add(&unit{key: "pypi " + e.Name, registry: reg, err: fmt.Errorf("command %q is not VENV/bin/SCRIPT: nothing to install it into", command)}, e, "")
				continue
			}
			venv := filepath.Dir(filepath.Dir(path))
			u := &unit{key: "pip install " + rel(spec.Dir, venv), registry: reg, dir: venv, pkg: e.PackageName() + "==" + e.PackageVersion()}
			if req := filepath.Join(filepath.Dir(venv), "requirements.txt"); fileExists(req) {
				u.requirements = req
			}
			add(u, e, path)
		case studies.RegistryOCI:
			add(&unit{key: "docker pull " + e.Package, registry: reg, pkg: e.Package}, e, "")
		}
	}
	var out []*unit
	for _, u := range units {
		if u.registry == studies.RegistryNPM && u.err == nil {
			u.err = isolated(spec.Dir, u)
		}
		out = append(out, u)
	}
	slices.SortFunc(out, func(a, b *unit) int { return cmp.Compare(a.key, b.key) })
	return out
}

// isolated checks that an npm unit installs one package-version alone:
// its entries name one package, and its project's package.json depends on
// that package, at that version, and on nothing else.
func isolated(specDir string, u *unit) error {
	for _, e := range u.entries {
		if e.Package != u.pkg {
			return fmt.Errorf("%s serves %s and %s: each package-version is installed alone, in a project of its own (%s)", rel(specDir, u.dir), u.pkg, e.Package, NPMDir("NAME", "VERSION"))
		}
	}
	var pj struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	data, err := os.ReadFile(filepath.Join(u.dir, "package.json"))
	if err == nil {
		err = json.Unmarshal(data, &pj)
	}
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%s has no package.json: each package-version is installed from a project of its own (%s) with a committed lockfile", rel(specDir, u.dir), NPMDir("NAME", "VERSION"))
	} else if err != nil {
		return fmt.Errorf("%s/package.json cannot be read: %s", rel(specDir, u.dir), strings.ReplaceAll(err.Error(), specDir, "${SPEC_DIR}"))
	}
	name, version := u.entries[0].PackageName(), u.entries[0].PackageVersion()
	if len(pj.Dependencies) != 1 || pj.Dependencies[name] != version {
		return fmt.Errorf("%s/package.json pins %d packages, not %s alone: each package-version is installed alone, in a project of its own (%s)", rel(specDir, u.dir), len(pj.Dependencies), u.pkg, NPMDir("NAME", "VERSION"))
	}
	return nil
}

// npmProject returns the directory holding node_modules in path.
func npmProject(path string) (string, bool) {
	parts := strings.Split(filepath.ToSlash(path), "/")
	for i := len(parts) - 1; i > 0; i-- {
		if parts[i] == "node_modules" {
			return filepath.FromSlash(strings.Join(parts[:i], "/")), true
		}
	}
	return "", false
}

func rel(base, path string) string {
	if r, err := filepath.Rel(base, path); err == nil && !strings.HasPrefix(r, "..") {
		return filepath.ToSlash(r)
	}
	return path
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// Run installs the pinned package of every entry of spec under the
// study directory: npm projects from their committed lockfiles (npm ci,
// install scripts off), Go binaries with go install MODULE/PKG@VERSION
// into the command's directory, PyPI packages into a venv per server with
// pip (hash-checked when a requirements.txt lock sits beside the venv),
// OCI images with docker pull. Each unit runs with a scratch HOME and
// working directory, an environment without credentials, and a time bound.
// A failed unit is a record, never an error: Install returns an error only
// when ctx ends first.
func Run(ctx context.Context, spec *studies.Spec, o Options) (*studies.InstallLog, error) {
	if o.Jobs <= 0 {
		o.Jobs = 4
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Minute
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Python == "" {
		o.Python = "python3"
	}
	if o.CacheDir == "" {
		o.CacheDir = filepath.Join(spec.Dir, ".cache")
	}
	if abs, err := filepath.Abs(o.CacheDir); err == nil {
		o.CacheDir = abs
	}
	units := planInstall(spec, o.Only)
	start := o.Now()
	log := &studies.InstallLog{SpecHash: spec.Hash, StartedAt: start.UTC().Format(time.RFC3339), Jobs: o.Jobs,
		Units: make([]studies.InstallUnit, len(units)), Servers: map[string]studies.InstallRecord{}}
	var mu sync.Mutex
	// npm is the heaviest installer: at most four of its units run at
	// once, whatever -j lets the Go and PyPI units do beside them.
	npmSlots := make(chan struct{}, min(o.Jobs, 4))
	err := proc.Each(ctx, len(units), o.Jobs, func(i int) {
		if units[i].registry == studies.RegistryNPM {
			npmSlots <- struct{}{}
		}
		res := runUnit(ctx, spec, units[i], o)
		if units[i].registry == studies.RegistryNPM {
			<-npmSlots
		}
		mu.Lock()
		log.Units[i] = res
		for _, e := range units[i].entries {
			rec := studies.InstallRecord{Package: e.Package, Unit: res.Key, Status: res.Status, Reason: res.Reason, InstallMS: res.DurationMS, ScriptsSkipped: res.ScriptsSkipped}
			if why, ok := res.Missing[e.Name]; ok {
				rec.Status, rec.Reason = studies.InstallFailed, why
			}
			log.Servers[e.Name] = rec
		}
		if o.Progress != nil {
			o.Progress(res)
		}
		mu.Unlock()
	})
	if err != nil {
		return nil, fmt.Errorf("install interrupted: %w", err)
	}
	end := o.Now()
	log.FinishedAt = end.UTC().Format(time.RFC3339)
	log.DurationMS = end.Sub(start).Milliseconds()
	return log, nil
}

// runUnit runs one unit's commands in a scratch HOME.
func runUnit(ctx context.Context, spec *studies.Spec, u *unit, o Options) studies.InstallUnit {
	res := studies.InstallUnit{Key: u.key, Registry: u.registry, Status: studies.InstallOK}
	for _, e := range u.entries {
		res.Servers = append(res.Servers, e.Name)
	}
	fail := func(reason string, out []string) studies.InstallUnit {
		res.Status, res.Reason, res.Output = studies.InstallFailed, reason, out
		return res
	}
	if u.err != nil {
		return fail(u.err.Error(), nil)
	}
	t0 := time.Now()
	fail = func(reason string, out []string) studies.InstallUnit {
		res.Status, res.Reason, res.Output = studies.InstallFailed, reason, out
		res.DurationMS = time.Since(t0).Milliseconds()
		return res
	}
	scratch, err := os.MkdirTemp(o.TempDir, "mcpdrill-install-")
	if err != nil {
		return fail(fmt.Sprintf("creating a scratch directory: %v", err), nil)
	}
	defer os.RemoveAll(scratch)
	uctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	env := installEnv(scratch, o.CacheDir)
	// The cache may sit inside the spec directory: it is named first.
	clean := strings.NewReplacer(scratch, "${WORK_DIR}", o.CacheDir, "${CACHE_DIR}", spec.Dir, "${SPEC_DIR}").Replace
	// Enough lines to hold npm's error before the usage text it prints
	// after it; the log keeps the last 40.
	out := &proc.Tail{Max: 400}
	run := func(name string, args []string, extra ...string) error {
		cmd := exec.Command(name, args...)
		cmd.Env = append(slices.Clone(env), extra...)
		cmd.Dir = scratch
		cmd.Stdout, cmd.Stderr = out, out
		return proc.Run(uctx, cmd, 3*time.Second)
	}
	var steps [][]string
	var stepEnv []string
	switch u.registry {
	case studies.RegistryNPM:
		if !fileExists(filepath.Join(u.dir, "package-lock.json")) {
			return fail("no package-lock.json in "+rel(spec.Dir, u.dir)+": the study installs npm packages from a committed lockfile only", nil)
		}
		if !o.Force && npmInstalled(u.dir) {
			res.Reused = true
			break
		}
		steps = append(steps, npmCI(u.dir, o.Scripts))
	case studies.RegistryGo:
		if err := os.MkdirAll(u.dir, 0o755); err != nil {
			return fail(err.Error(), nil)
		}
		stepEnv = []string{"GOBIN=" + u.dir}
		steps = append(steps, []string{"go", "install", "--", u.pkg})
	case studies.RegistryPyPI:
		// The venv gets no pip of its own (ensurepip takes most of a
		// minute); the interpreter's pip installs into it (--python).
		steps = append(steps, []string{o.Python, "-m", "venv", "--clear", "--without-pip", u.dir})
		steps = append(steps, pipInstall(u, o))
	case studies.RegistryOCI:
		steps = append(steps, []string{"docker", "pull", "--", u.pkg})
	}
	for _, s := range steps {
		if _, err := exec.LookPath(s[0]); err != nil && !filepath.IsAbs(s[0]) {
			return fail(fmt.Sprintf("%s is not installed on this machine", s[0]), nil)
		}
		err := run(s[0], s[1:], stepEnv...)
		if err != nil && u.registry == studies.RegistryNPM && uctx.Err() == nil && npmOutOfSync(out.Lines()) {
			// npm ci refuses a lockfile that lacks another platform's
			// optional packages (npm locks them only where the registry
			// lists a version for them); npm install from the same
			// lockfile keeps every pinned version and installs. The
			// committed lockfile is put back as it was.
			res.Fallback = "npm install (npm ci: " + npmSyncLine(out.Lines()) + ")"
			err = npmInstallKeepingLock(u.dir, func() error {
				return run("npm", scriptsFlag([]string{"install", "--prefix", u.dir, "--no-save", "--no-audit", "--no-fund", "--loglevel=error"}, o.Scripts), stepEnv...)
			})
		}
		if err != nil {
			lines := out.Lines()
			for i := range lines {
				lines[i] = clean(lines[i])
			}
			reason := installReason(s, err, lines, uctx, o.Timeout, clean)
			return fail(reason, lines[max(0, len(lines)-40):])
		}
	}
	if u.registry == studies.RegistryNPM {
		if l, err := ReadLock(u.dir, u.entries[0].PackageName()); err == nil && !o.Scripts {
			res.ScriptsSkipped = l.Scripts
		}
		if !res.Reused && !o.NoStore {
			st, err := linkTree(filepath.Join(u.dir, "node_modules"), filepath.Join(o.CacheDir, "store"))
			res.Files, res.SavedBytes = st.Files, st.Saved
			if err != nil {
				res.Fallback = "files not shared with the store: " + clean(err.Error())
			}
		}
	}
	for name, c := range u.commands {
		c, script := strings.CutPrefix(c, "node:")
		if st, err := os.Stat(c); err != nil || st.IsDir() || (!script && st.Mode()&0o111 == 0) {
			if res.Missing == nil {
				res.Missing = map[string]string{}
			}
			what := "an executable"
			if script {
				what = "a file"
			}
			res.Missing[name] = fmt.Sprintf("installed, but %s is not %s", clean(c), what)
		}
	}
	res.DurationMS = time.Since(t0).Milliseconds()
	return res
}

// pipInstall is the pip command that installs a PyPI unit into its venv:
// wheels only unless o.SourceBuilds (a source distribution's build code
// runs at install time), hash-checked from the requirements.txt beside the
// venv when there is one, and the package after "--" otherwise.
func pipInstall(u *unit, o Options) []string {
	pip := []string{o.Python, "-m", "pip", "--python", filepath.Join(u.dir, "bin", "python"), "install", "--no-input", "--disable-pip-version-check", "--retries", "1", "--timeout", "15"}
	if !o.SourceBuilds {
		pip = append(pip, "--only-binary", ":all:")
	}
	if o.FindLinks != "" {
		pip = append(pip, "--no-index", "--find-links", o.FindLinks)
	}
	if u.requirements != "" {
		return append(pip, "--require-hashes", "--no-deps", "-r", u.requirements)
	}
	return append(pip, "--", u.pkg)
}

// npmCI is the install command of an npm project.
func npmCI(dir string, scripts bool) []string {
	return scriptsFlag([]string{"npm", "ci", "--prefix", dir, "--no-audit", "--no-fund", "--loglevel=error"}, scripts)
}

// scriptsFlag adds --ignore-scripts unless scripts run.
func scriptsFlag(argv []string, scripts bool) []string {
	if scripts {
		return argv
	}
	return append(argv, "--ignore-scripts")
}

// npmOutOfSync: npm ci said the lockfile does not match package.json.
func npmOutOfSync(lines []string) bool {
	return npmSyncLine(lines) != ""
}

func npmSyncLine(lines []string) string {
	for _, l := range lines {
		if strings.Contains(l, "are in sync") || strings.Contains(l, "from lock file") {
			return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "npm error"))
		}
	}
	return ""
}

// npmInstallKeepingLock runs install and restores dir's package-lock.json
// and package.json byte for byte afterwards.
func npmInstallKeepingLock(dir string, install func() error) error {
	type file struct {
		name string
		data []byte
		mod  time.Time
	}
	var saved []file
	for _, f := range []string{"package-lock.json", "package.json"} {
		p := filepath.Join(dir, f)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		st, err := os.Stat(p)
		if err != nil {
			return err
		}
		saved = append(saved, file{p, b, st.ModTime()})
	}
	err := install()
	// Put back with the old times too, so that the install still reads
	// as newer than the lockfile (npmInstalled).
	for _, f := range saved {
		werr := os.WriteFile(f.name, f.data, 0o644)
		if werr == nil {
			werr = os.Chtimes(f.name, f.mod, f.mod)
		}
		if werr != nil && err == nil {
			err = werr
		}
	}
	return err
}

// npmInstalled: npm ci completed in dir after its lockfile last changed
// (npm writes node_modules/.package-lock.json last).
func npmInstalled(dir string) bool {
	lock, err1 := os.Stat(filepath.Join(dir, "package-lock.json"))
	done, err2 := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json"))
	return err1 == nil && err2 == nil && done.ModTime().After(lock.ModTime())
}

// installReason says why a step failed: the time bound, or the step's exit
// and the line of its output that names the error.
func installReason(step []string, err error, lines []string, ctx context.Context, timeout time.Duration, clean func(string) string) string {
	what := strings.Join(step[:min(len(step), 2)], " ")
	if len(step) > 2 && step[1] == "-m" {
		what = strings.Join(step[:3], " ")
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Sprintf("%s did not finish within %s", what, timeout)
	}
	reason := fmt.Sprintf("%s: %s", what, clean(err.Error()))
	if l := errorLine(lines); l != "" {
		reason += ": " + l
	}
	if unreachable(lines) {
		reason += " (the package index or a host it names could not be reached from this machine: the row needs a run where it can be)"
	}
	return reason
}

var hostRE = regexp.MustCompile(`https?://[^/\s'"]+`)

// unreachable: the installer's output says the registry's host could not
// be reached (name resolution or connection), not that the package is bad.
func unreachable(lines []string) bool {
	for _, l := range lines {
		if strings.Contains(l, "Failed to establish a new connection") || strings.Contains(l, "Name or service not known") ||
			strings.Contains(l, "Temporary failure in name resolution") || strings.Contains(l, "Network is unreachable") ||
			strings.Contains(l, "getaddrinfo ENOTFOUND") || strings.Contains(l, "connect ETIMEDOUT") {
			return true
		}
	}
	return false
}

// errorLine picks the line of an installer's output that names the error:
// npm's "npm error code"/"404" lines, pip's "ERROR:", Go's "go: ".
func errorLine(lines []string) string {
	pick := ""
	for _, l := range lines {
		t := strings.TrimSpace(l)
		low := strings.ToLower(t)
		switch {
		case t == "":
		case strings.HasPrefix(low, "npm error code") || strings.HasPrefix(low, "npm err! code"):
			if pick == "" {
				pick = t
			}
		case strings.HasPrefix(t, "ERROR:") || strings.HasPrefix(t, "go: ") || strings.Contains(low, "error:"):
			pick = t
		}
	}
	if pick == "" && len(lines) > 0 {
		pick = strings.TrimSpace(lines[len(lines)-1])
	}
	// A URL keeps its path, not its host: the reason names no machine.
	pick = hostRE.ReplaceAllString(pick, "<host>")
	if len(pick) > 300 {
		pick = pick[:300] + "…"
	}
	return pick
}

// installEnv is the environment of every install command: proc.Env with
// the installer's inheritance (proxies, Go's module settings) and the
// package managers' caches under cacheDir, so no token or key of the
// caller's reaches an install script or a package manager.
func installEnv(scratch, cacheDir string) []string {
	return proc.Env(scratch, proc.Installer,
		"npm_config_cache="+filepath.Join(cacheDir, "npm"),
		"npm_config_update_notifier=false",
		"npm_config_fund=false",
		"npm_config_audit=false",
		"GOMODCACHE="+filepath.Join(cacheDir, "go", "mod"),
		"GOCACHE="+filepath.Join(cacheDir, "go", "build"),
		"GOPATH="+filepath.Join(cacheDir, "go", "path"),
		"GOFLAGS=-mod=mod",
		"PIP_CACHE_DIR="+filepath.Join(cacheDir, "pip"),
		"PIP_DISABLE_PIP_VERSION_CHECK=1",
		"DO_NOT_TRACK=1",
	)
}

// Summary is the text study install prints at the end.
func Summary(w io.Writer, l *studies.InstallLog) {
	ok, failed := 0, 0
	by := map[string][2]int{}
	for _, u := range l.Units {
		c := by[u.Registry]
		if u.Status == studies.InstallOK {
			ok++
			c[0]++
		} else {
			failed++
			c[1]++
		}
		by[u.Registry] = c
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "installed %d of %d units (%d servers) in %s", ok, ok+failed, len(l.Servers), (time.Duration(l.DurationMS) * time.Millisecond).Round(time.Second))
	regs := make([]string, 0, len(by))
	for r := range by {
		regs = append(regs, r)
	}
	slices.Sort(regs)
	for _, r := range regs {
		fmt.Fprintf(&b, "; %s %d ok, %d failed", r, by[r][0], by[r][1])
	}
	b.WriteString("\n")
	for _, u := range l.Units {
		if u.Status != studies.InstallOK {
			fmt.Fprintf(&b, "  failed: %s (%s): %s\n", u.Key, strings.Join(u.Servers, ", "), u.Reason)
		}
		names := make([]string, 0, len(u.Missing))
		for n := range u.Missing {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			fmt.Fprintf(&b, "  failed: %s: %s\n", n, u.Missing[n])
		}
	}
	_, _ = w.Write(b.Bytes())
}
