package studies

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/clientconfig"
	"github.com/mcpdrill/mcpdrill/internal/mcp"
	"github.com/mcpdrill/mcpdrill/internal/redact"
	"github.com/mcpdrill/mcpdrill/scan"
	"github.com/mcpdrill/mcpdrill/studies/proc"
)

// ScanFunc is the scanner the runner calls; scan.Run in production.
type ScanFunc func(ctx context.Context, cfg mcp.Config, o scan.Options) (*scan.Report, error)

// Options tune a study run.
type Options struct {
	// Jobs bounds how many servers are scanned at once (default NumCPU).
	Jobs int
	// Deadline bounds one server's scan (default 2 minutes); a launched
	// server also gets its launch's readiness bound.
	Deadline time.Duration
	// RequestTimeout bounds each request (default 10s).
	RequestTimeout time.Duration
	// SkipSecondConnection turns off the scan's tool-set stability check.
	SkipSecondConnection bool
	// Shard runs one shard of the list; the zero value runs all.
	Shard Shard
	// ToolVersion is recorded in Meta and sent as clientInfo.version.
	ToolVersion string
	// Population is the rule the servers were chosen by, recorded in Meta.
	Population string
	// Progress, when set, is called (never concurrently) as servers start
	// and finish.
	Progress func(Event)
	// Now is the clock for Meta (default time.Now).
	Now func() time.Time
	// LookupEnv resolves ${NAME} and ${env:NAME} (default os.LookupEnv).
	LookupEnv func(string) (string, bool)
	// Workspace is ${workspaceFolder} (default: the repository holding
	// servers.json, else its directory; see clientconfig.Workspace).
	Workspace string
	// UserHome is ${userHome} (default os.UserHomeDir).
	UserHome string
	// Inputs are the values of ${input:ID}; a server that needs one not
	// given fails as a configuration error.
	Inputs map[string]string
	// Scan replaces scan.Run (tests).
	Scan ScanFunc
	// TempDir is the parent of each server's scratch directory (default
	// os.TempDir()).
	TempDir string
	// Installed is study install's log: a server whose install failed is a
	// failed row (failure "install") without being started, and each
	// server's install time goes to Meta beside its scan time.
	Installed *InstallLog
	// GradePairs grades the version pairs (rows joined by previous_of)
	// once every row is done, while the rows still hold their scans'
	// listings (Row.Listing): studies/versiondrift.Grade. Nil leaves the
	// pairs ungraded (no version_drift).
	GradePairs func(rows []Row, entries []Entry)
	// Only, when not empty, runs the entries of these names alone (a
	// subset to check against a published run); the others are not rows.
	// A name that is not an entry is an error.
	Only []string
	// Commit names the commit of mcpdrill that runs the study (recorded in
	// Meta, with "-dirty" when its work tree had changes).
	Commit string
}

// EventKind says what an Event reports.
type EventKind int

// Event kinds.
const (
	EventStart EventKind = iota
	EventDone
)

// Event is a progress report.
type Event struct {
	Kind EventKind
	Name string
	// Done and Total count servers of this run (this shard).
	Done, Total int
	// Running lists the servers being scanned after this event, sorted.
	Running []string
	// Row is the finished row (EventDone only).
	Row *Row
	// Elapsed is the server's wall time (EventDone only).
	Elapsed time.Duration
}

func (o *Options) defaults() {
	if o.Jobs <= 0 {
		o.Jobs = runtime.NumCPU()
	}
	if o.Deadline <= 0 {
		o.Deadline = 2 * time.Minute
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = 10 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.LookupEnv == nil {
		o.LookupEnv = os.LookupEnv
	}
	if o.Scan == nil {
		o.Scan = scan.Run
	}
	if o.UserHome == "" {
		o.UserHome, _ = os.UserHomeDir()
	}
}

// workspace is ${workspaceFolder} for spec.
func (o *Options) workspace(spec *Spec) string {
	if o.Workspace != "" {
		return o.Workspace
	}
	return clientconfig.Workspace(spec.Dir)
}

// Run scans every server of spec (or of one shard) and returns the results.
// A server's failure is a row, never an error; Run returns an error only when
// ctx ends before every server finished.
func Run(ctx context.Context, spec *Spec, o Options) (*Results, error) {
	o.defaults()
	entries := o.Shard.Select(spec.Servers)
	if len(o.Only) > 0 {
		var err error
		if entries, err = only(entries, spec.Servers, o.Only); err != nil {
			return nil, err
		}
	}
	start := o.Now()
	res := &Results{
		SchemaVersion:     SchemaVersion,
		ScanSchemaVersion: scan.SchemaVersion,
		SpecHash:          spec.Hash,
		SpecServers:       len(spec.Servers),
		Settings: Settings{
			DeadlineMS:       o.Deadline.Milliseconds(),
			RequestTimeoutMS: o.RequestTimeout.Milliseconds(),
			SecondConnection: !o.SkipSecondConnection,
		},
		Servers: make([]Row, len(entries)),
		Meta: Meta{
			ToolVersion: o.ToolVersion, Commit: o.Commit, Population: o.Population, GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH,
			CPUs: runtime.NumCPU(), Jobs: o.Jobs, StartedAt: start.UTC().Format(time.RFC3339),
			Servers: map[string]ServerMeta{},
		},
	}
	if o.Shard.Count > 1 {
		sh := o.Shard
		res.Shard = &sh
	}
	if len(o.Only) > 0 {
		res.Only = slices.Compact(slices.Sorted(slices.Values(o.Only)))
	}

	var mu sync.Mutex
	running := map[string]bool{}
	done := 0
	report := func(ev Event) {
		if ev.Kind == EventStart {
			running[ev.Name] = true
		} else {
			delete(running, ev.Name)
			done++
		}
		if o.Progress == nil {
			return
		}
		ev.Done, ev.Total = done, len(entries)
		for n := range running {
			ev.Running = append(ev.Running, n)
		}
		slices.Sort(ev.Running)
		o.Progress(ev)
	}

	err := proc.Each(ctx, len(entries), o.Jobs, func(i int) {
		e := entries[i]
		mu.Lock()
		report(Event{Kind: EventStart, Name: e.Name})
		mu.Unlock()
		t0 := time.Now()
		row, sm := runOne(ctx, spec, e, o)
		row.SDKObserved = observeSDK(spec, e, row)
		el := time.Since(t0)
		mu.Lock()
		res.Servers[i] = row
		res.Meta.Servers[e.Name] = sm
		report(Event{Kind: EventDone, Name: e.Name, Row: &row, Elapsed: el})
		mu.Unlock()
	})
	if err != nil {
		return nil, fmt.Errorf("study interrupted after %d of %d servers: %w", done, len(entries), err)
	}
	end := o.Now()
	res.Meta.FinishedAt = end.UTC().Format(time.RFC3339)
	res.Meta.DurationMS = end.Sub(start).Milliseconds()
	// Each row kept its scan's listing (Row.base): the pairs joined by
	// previous_of are graded here, once both releases are scanned.
	if o.GradePairs != nil {
		o.GradePairs(res.Servers, entries)
	}
	res.Finalize()
	return res, nil
}

// only keeps the entries named in names (of the shard's entries); a name
// that no entry of servers.json has is an error.
func only(entries, all []Entry, names []string) ([]Entry, error) {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	for _, e := range all {
		delete(want, e.Name)
	}
	if len(want) > 0 {
		return nil, fmt.Errorf("--only: no entry named %s in servers.json", strings.Join(slices.Sorted(maps.Keys(want)), ", "))
	}
	for _, n := range names {
		want[n] = true
	}
	return slices.DeleteFunc(slices.Clone(entries), func(e Entry) bool { return !want[e.Name] }), nil
}

// runOne launches (when needed) and scans one server. sm is a named result
// so that the launch's deferred stop can still record its output tail.
func runOne(ctx context.Context, spec *Spec, e Entry, o Options) (out Row, sm ServerMeta) {
	// Registered first, run last: the launch's stop has recorded its
	// stderr by then.
	// evidence is everything the server said, cleaned; sm.Stderr keeps
	// its last lines.
	var evidence []string
	var installed *InstallRecord
	defer func() { out.Outcome, out.OutcomeWhy = classify(e, out, evidence, installed) }()
	row := identity(e)
	if e.Disabled || e.Excluded != "" {
		row.Status, row.Reason = StatusSkipped, "disabled in servers.json"
		if e.Excluded != "" {
			row.Reason = "excluded: " + e.Excluded
		}
		row.Tools, row.Probes, row.Conformance, row.Findings = []scan.ToolReport{}, []scan.Probe{}, []scan.Check{}, map[string]int{}
		return row, sm
	}
	if rec, ok := o.Installed.Record(e); ok {
		installed = &rec
		sm.InstallMS = rec.InstallMS
		if rec.Status != InstallOK {
			return failedRow(row, FailInstall, rec.Reason), sm
		}
	}
	work, err := os.MkdirTemp(o.TempDir, "mcpdrill-study-")
	if err != nil {
		return failedRow(row, FailInternal, fmt.Sprintf("creating a scratch directory: %v", err)), sm
	}
	defer os.RemoveAll(work)
	vars := Vars{SpecDir: spec.Dir, WorkDir: work}
	if e.Launch != nil || strings.Contains(e.URL, "${PORT}") {
		if vars.Port, err = freePort(); err != nil {
			return failedRow(row, FailInternal, err.Error()), sm
		}
	}
	x := clientconfig.NewExpander(clientconfig.Resolver{
		LookupEnv: o.LookupEnv,
		Vars:      vars.vars(),
		Workspace: o.workspace(spec),
		UserHome:  o.UserHome,
		Inputs:    o.Inputs,
		Declared:  spec.Inputs,
	})
	t := e.Resolve(x, spec.Dir)
	// A stdio server gets the environment of every program the study
	// starts (proc.Env): a scratch HOME, the allow-list and its own env.
	cfg := mcp.Config{
		URL:            t.URL,
		Command:        t.Command,
		Env:            proc.Env(work, nil, t.Env...),
		CleanEnv:       true,
		Headers:        t.Headers,
		Protocol:       e.Protocol,
		RequestTimeout: o.RequestTimeout,
		// The per-server deadline covers a stdio server's start-up too: a
		// study of cold npx and uvx servers downloads each one first.
		StartupTimeout: o.Deadline,
		ClientName:     "mcpdrill",
		ClientVersion:  o.ToolVersion,
		Dir:            work,
	}
	if t.Dir != "" {
		cfg.Dir = t.Dir
	}
	var launchArgv, launchEnv []string
	launchDir := work
	if e.Launch != nil {
		launchArgv = append([]string{clientconfig.ResolvePath(x.Expand(e.Launch.Command), spec.Dir)}, x.All(e.Launch.Args)...)
		launchEnv = clientconfig.ExpandEnv(x, e.Launch.Env)
		if e.Launch.Cwd != "" {
			launchDir = clientconfig.ResolveDir(x.Expand(e.Launch.Cwd), spec.Dir)
		}
	}
	if err := x.Err(); err != nil {
		return failedRow(row, FailConfig, err.Error()), sm
	}
	// The secrets (redact.Secrets) of the entry, of its launch and of what
	// placeholders read are masked wherever the server's words are
	// recorded, in every field of the row; the study's own variables are
	// not secret, and are named by the cleaner.
	var sec redact.Secrets
	for _, v := range append(t.Secrets, x.Secrets()...) {
		sec.Add(v)
	}
	for _, kv := range launchEnv {
		k, v, _ := strings.Cut(kv, "=")
		sec.Env(k, v)
	}
	sec.Argv(launchArgv)
	secrets := slices.DeleteFunc(sec.Values(), func(v string) bool { return v == vars.Port || v == vars.SpecDir || v == vars.WorkDir })
	mask, clean := redact.Values(secrets), cleaner(vars)
	cl := func(s string) string { return mask(clean(s)) }

	deadline := o.Deadline
	if e.Launch != nil {
		deadline += e.Launch.ReadyTimeout()
	}
	sctx, cancel := context.WithTimeout(ctx, deadline+5*time.Second)
	defer cancel()

	if e.Launch != nil {
		t0 := time.Now()
		l, err := startLaunch(launchArgv, launchEnv, launchDir, work)
		if err != nil {
			return failedRow(row, FailLaunch, cl(err.Error())), sm
		}
		defer func() {
			l.stop(3 * time.Second)
			evidence = cleanLines(l.tail.Lines(), cl)
			sm.Stderr = lastLines(evidence, 10)
		}()
		addr, err := addrOf(cfg.URL)
		if err != nil {
			return failedRow(row, FailConfig, err.Error()), sm
		}
		if err := l.waitReady(sctx, addr, e.Launch.ReadyTimeout()); err != nil {
			return failedRow(row, FailLaunch, cl(err.Error())), sm
		}
		sm.LaunchMS = time.Since(t0).Milliseconds()
	}

	t0 := time.Now()
	rep, err := o.Scan(sctx, cfg, scan.Options{
		Deadline:             o.Deadline,
		SkipSecondConnection: o.SkipSecondConnection,
		ToolVersion:          o.ToolVersion,
		Now:                  o.Now,
	})
	sm.ScanMS = time.Since(t0).Milliseconds()
	if err != nil {
		return failedRow(row, FailInternal, cl(err.Error())), sm
	}
	if e.Launch == nil {
		evidence = cleanLines(rep.Meta.Stderr, cl)
		sm.Stderr = lastLines(evidence, 10)
	}
	if rep.Meta.Timing != nil {
		sm.StartupMS = rep.Meta.Timing.StartupMS
	}
	out = rowFromReport(row, rep, cl)
	if out.Status == StatusScanned {
		out.Configurations = scanConfigurations(ctx, e, cfg, x, o, cl)
	}
	return maskRow(out, mask), sm
}

// cleaner returns a function that replaces the run-dependent parts of a
// message (scratch directory, spec directory, port) with their variable
// names, so results do not depend on where or when the study ran.
func cleaner(v Vars) func(string) string {
	var pairs []string
	add := func(val, name string) {
		if val == "" {
			return
		}
		pairs = append(pairs, val, name)
		if real, err := filepath.EvalSymlinks(val); err == nil && real != val {
			pairs = append(pairs, real, name)
		}
	}
	add(v.WorkDir, "${WORK_DIR}")
	add(v.SpecDir, "${SPEC_DIR}")
	if v.Port != "" {
		pairs = append(pairs, "127.0.0.1:"+v.Port, "127.0.0.1:${PORT}", "localhost:"+v.Port, "localhost:${PORT}", "[::1]:"+v.Port, "[::1]:${PORT}")
	}
	r := strings.NewReplacer(pairs...)
	return func(s string) string {
		s = r.Replace(s)
		// The scan cuts what a server said at a bound (…): a path cut
		// there is a prefix of a directory the replacer did not see whole.
		for i := 0; i+1 < len(pairs); i += 2 {
			if strings.Contains(s, "…") {
				s = cutDir(s, pairs[i], pairs[i+1])
			}
		}
		return clock.ReplaceAllString(pidTag.ReplaceAllString(s, "[pid]"), "<time>")
	}
}

// cutDir replaces a prefix of dir (four bytes or more) that ends where s
// was cut (…) by name.
func cutDir(s, dir, name string) string {
	if !strings.HasPrefix(dir, "/") {
		return s
	}
	for k := len(dir) - 1; k >= 4; k-- {
		if p := dir[:k] + "…"; strings.Contains(s, p) {
			return strings.ReplaceAll(s, p, name+"…")
		}
	}
	return s
}

// What a server's log lines stamp that changes from run to run: the time
// of day (with a date, ISO or Go's log format, or alone) and a bracketed
// process id; cleaner replaces them, so a quoted stderr line is the same
// in every run.
var (
	clock  = regexp.MustCompile(`\b(\d{4}[-/]\d{2}[-/]\d{2}[T ])?\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?`)
	pidTag = regexp.MustCompile(`\[\d{2,7}\]`)
)

func lastLines(lines []string, n int) []string {
	if len(lines) > n {
		return lines[len(lines)-n:]
	}
	return lines
}

func cleanLines(lines []string, cl func(string) string) []string {
	var out []string
	for _, l := range lines {
		out = append(out, cl(l))
	}
	return out
}
