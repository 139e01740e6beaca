package install

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpdrill/mcpdrill/studies"
	"github.com/mcpdrill/mcpdrill/studies/proc"
)

// Every npm package-version of a study is installed alone, as a user who
// runs `npx -y NAME@VERSION` gets it: in an npm project of its own,
// NPMDir(NAME, VERSION) under the study directory, whose package.json
// depends on that package alone, resolved by npm as it resolved on the
// study's date (npm --before) and pinned by the project's package-lock.json,
// committed with the study. The lockfile holds versions and integrity
// hashes, no registry URL (.npmrc: omit-lockfile-registry-resolved). No row
// shares a dependency tree with another; the install's store keeps the
// trees from costing a copy each (store.go).

// NPMDir is the project directory of an npm package-version, relative to
// the study directory: npm/NAME@VERSION (a scoped name keeps its slash).
func NPMDir(name, version string) string {
	return path.Join("npm", name+"@"+version)
}

// npmrc is the .npmrc of every project: npm ci reads it too.
const npmrc = "# npm settings of this study project (npm ci reads them too).\n" +
	"omit-lockfile-registry-resolved=true\nfund=false\naudit=false\nupdate-notifier=false\n"

// legacyPeers is added to a project whose package npm resolves only
// without installing peer dependencies (ERESOLVE otherwise).
const legacyPeers = "legacy-peer-deps=true\n"

// LockOptions tune LockNPM.
type LockOptions struct {
	// Before is the study's date: npm resolves every version as it was at
	// the end of that day (UTC). Zero resolves as of now.
	Before time.Time
	// CacheDir holds npm's cache (default: a scratch one).
	CacheDir string
	// Timeout bounds one lock (default 5 minutes).
	Timeout time.Duration
	// TempDir is the parent of the scratch HOME (default os.TempDir()).
	TempDir string
}

// Lock is what an npm project's lockfile says of its package.
type Lock struct {
	// Name and Version are the package's.
	Name, Version string
	// Bins are its executables (name: path in the package).
	Bins map[string]string
	// Dependencies are its direct dependencies (name: range).
	Dependencies map[string]string
	// Scripts are the packages of the tree that declare an install script
	// (which the study does not run), sorted.
	Scripts []string
	// Packages counts the packages of the tree.
	Packages int
	// LegacyPeers: npm resolved the tree only without peer dependencies.
	LegacyPeers bool
}

// LockNPM writes the npm project of name@version into dir (package.json,
// .npmrc) and resolves its package-lock.json with npm install
// --package-lock-only --ignore-scripts, in the environment of every
// install (proc.Env: no credentials), as of o.Before. The name and version
// are checked by npm's grammar first: they reach npm as data in
// package.json, never as arguments.
func LockNPM(ctx context.Context, dir, name, version string, o LockOptions) (*Lock, error) {
	if err := errors.Join(studies.CheckNPMName(name), studies.CheckSemver(version)); err != nil {
		return nil, err
	}
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Minute
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	pj, err := json.MarshalIndent(map[string]any{
		"name":         "mcpdrill-study-package",
		"private":      true,
		"description":  "One package-version of an mcpdrill study, installed alone (studies/install).",
		"dependencies": map[string]string{name: version},
	}, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "package.json"), append(pj, '\n'), 0o644); err != nil {
		return nil, err
	}
	scratch, err := os.MkdirTemp(o.TempDir, "mcpdrill-lock-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(scratch)
	cache := o.CacheDir
	if cache == "" {
		cache = scratch
	}
	args := []string{"install", "--package-lock-only", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"}
	if !o.Before.IsZero() {
		end := time.Date(o.Before.Year(), o.Before.Month(), o.Before.Day(), 23, 59, 59, 0, time.UTC)
		args = append(args, "--before="+end.Format(time.RFC3339))
	}
	run := func(rc string) ([]string, error) {
		if err := os.WriteFile(filepath.Join(dir, ".npmrc"), []byte(rc), 0o644); err != nil {
			return nil, err
		}
		_ = os.Remove(filepath.Join(dir, "package-lock.json"))
		ctx, cancel := context.WithTimeout(ctx, o.Timeout)
		defer cancel()
		out := &proc.Tail{Max: 200}
		cmd := exec.Command("npm", args...)
		cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, installEnv(scratch, cache), out, out
		err := proc.Run(ctx, cmd, 3*time.Second)
		if err != nil && ctx.Err() != nil {
			err = fmt.Errorf("npm did not lock within %s", o.Timeout)
		}
		return out.Lines(), err
	}
	lines, err := run(npmrc)
	legacy := false
	if err != nil && slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, "ERESOLVE") }) {
		legacy = true
		lines, err = run(npmrc + legacyPeers)
	}
	if err != nil {
		return nil, fmt.Errorf("%s", cmp.Or(npmWhy(lines), errorLine(lines), err.Error()))
	}
	l, err := ReadLock(dir, name)
	if err != nil {
		return nil, err
	}
	if l.Version != version {
		return nil, fmt.Errorf("npm locked %s at %q, not %q", name, l.Version, version)
	}
	l.LegacyPeers = legacy
	return l, nil
}

// lockfile is the part of package-lock.json (lockfileVersion 2 and 3)
// ReadLock uses.
type lockfile struct {
	Packages map[string]struct {
		Version          string            `json:"version"`
		Resolved         string            `json:"resolved"`
		Bin              map[string]string `json:"bin"`
		Dependencies     map[string]string `json:"dependencies"`
		HasInstallScript bool              `json:"hasInstallScript"`
		Link             bool              `json:"link"`
	} `json:"packages"`
}

// ReadLock reads the package-lock.json of the project in dir for its
// package name. A lockfile that names a registry URL is refused: the
// study's lockfiles pin versions and hashes, not hosts.
func ReadLock(dir, name string) (*Lock, error) {
	data, err := os.ReadFile(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		return nil, err
	}
	var lf lockfile
	if err := json.Unmarshal(data, &lf); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "package-lock.json"), err)
	}
	l := &Lock{Name: name}
	for key, p := range lf.Packages {
		if key == "" {
			continue
		}
		if strings.Contains(p.Resolved, "://") {
			return nil, fmt.Errorf("%s: %s is resolved from a URL: the study's lockfiles name no registry (omit-lockfile-registry-resolved)", filepath.Join(dir, "package-lock.json"), key)
		}
		l.Packages++
		pkg := key[strings.LastIndex(key, "node_modules/")+len("node_modules/"):]
		if p.HasInstallScript && !slices.Contains(l.Scripts, pkg) {
			l.Scripts = append(l.Scripts, pkg)
		}
		if key == "node_modules/"+name {
			l.Version, l.Bins, l.Dependencies = p.Version, p.Bin, p.Dependencies
		}
	}
	if l.Version == "" {
		return nil, fmt.Errorf("%s does not lock %s", filepath.Join(dir, "package-lock.json"), name)
	}
	slices.Sort(l.Scripts)
	return l, nil
}

// Locked is the lock of one npm project of a study.
type Locked struct {
	// Dir is the project, relative to the study directory; Package the
	// package-version it installs and Servers the entries it serves.
	Dir, Package string
	Servers      []string
	Lock         *Lock
	Err          error
}

// LockSpec locks the npm project of every npm entry of spec that has a
// package and is neither excluded nor disabled (only those named, when
// only is set): the project holding the entry's command, by convention
// NPMDir(NAME, VERSION). jobs bounds how many lock at once; progress, when
// set, is called (never concurrently) after each. A failed lock is a
// result, never an error: LockSpec returns an error only when ctx ends.
func LockSpec(ctx context.Context, spec *studies.Spec, only []string, jobs int, o LockOptions, progress func(Locked)) ([]Locked, error) {
	var units []*unit
	for _, u := range planInstall(spec, only) {
		if u.registry == studies.RegistryNPM {
			units = append(units, u)
		}
	}
	out := make([]Locked, len(units))
	var mu sync.Mutex
	err := proc.Each(ctx, len(units), max(jobs, 1), func(i int) {
		u := units[i]
		r := Locked{Dir: rel(spec.Dir, u.dir), Package: u.pkg}
		for _, e := range u.entries {
			r.Servers = append(r.Servers, e.Name)
		}
		switch {
		case u.dir == "":
			r.Err = u.err // the command is under no node_modules
		case slices.ContainsFunc(u.entries, func(e studies.Entry) bool { return e.Package != u.pkg }):
			r.Err = fmt.Errorf("%s serves more than one package: each package-version is locked alone (%s)", r.Dir, NPMDir("NAME", "VERSION"))
		default:
			e := u.entries[0]
			r.Lock, r.Err = LockNPM(ctx, u.dir, e.PackageName(), e.PackageVersion(), o)
		}
		mu.Lock()
		out[i] = r
		if progress != nil {
			progress(r)
		}
		mu.Unlock()
	})
	if err != nil {
		return nil, fmt.Errorf("lock interrupted: %w", err)
	}
	return out, nil
}

// npmWhy is npm's error code and the line after it that says why
// ("ETARGET: No matching version found for X@^2.0.0…"), registry hosts
// removed; "" when npm named no code.
func npmWhy(lines []string) string {
	code, why := "", ""
	for _, l := range lines {
		t, ok := strings.CutPrefix(strings.TrimSpace(l), "npm error ")
		if !ok {
			continue
		}
		switch {
		case code == "" && strings.HasPrefix(t, "code "):
			code = strings.TrimPrefix(t, "code ")
		case code != "" && why == "" && !strings.HasPrefix(t, "A complete log") && !strings.HasPrefix(t, "In most cases"):
			// "notarget No matching…", "404 Not Found - GET …", "notsup Unsupported platform…"
			_, rest, _ := strings.Cut(t, " ")
			why = hostRE.ReplaceAllString(rest, "<host>")
		}
	}
	if code == "" {
		return ""
	}
	if len(why) > 240 {
		why = why[:240] + "…"
	}
	return strings.TrimSuffix(code+": "+why, ": ")
}
