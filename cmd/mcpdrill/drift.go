package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mcpdrill/mcpdrill/drift"
	"github.com/mcpdrill/mcpdrill/internal/inputfile"
	"github.com/mcpdrill/mcpdrill/internal/mcp"
	"github.com/mcpdrill/mcpdrill/internal/outfile"
	"github.com/mcpdrill/mcpdrill/internal/redact"
	"github.com/mcpdrill/mcpdrill/internal/safetext"
	tgt "github.com/mcpdrill/mcpdrill/internal/target"
	"github.com/mcpdrill/mcpdrill/report"
	"github.com/mcpdrill/mcpdrill/scan"
)

const driftDescription = `Compares a declared tool manifest (a tools/list result, a bare tools array, or a JSON-RPC
response frame) with what a live server serves now. Every difference is classified by the change
catalogue (CHG-* kinds graded by BRK-* rules; input and output schemas grade oppositely) and
reported as MCP-DRIFT-* findings. "mcpdrill rules ID" explains any id.

It says nothing it did not establish: a refused protocol revision stops before any comparison
(MCP-DRIFT-PROTOCOL-UNSUPPORTED, exit 3); a capped tools/list (--max-list-pages) suppresses
missing-tool findings; a manifest saved with a nextCursor suppresses undeclared-tool findings.

Flags may come before or after MANIFEST; a stdio server command goes after "--".

Subcommands "capture" and "check" add behavioural canaries (see their --help).`

// driftOutputFlags are the output and gating flags shared by drift commands.
func driftOutputFlags() []cli.Flag {
	return formatFlags("the report as JSON (schema_version "+drift.SchemaVersion+")", "error")
}

// driftCommand is the `mcpdrill drift` command. run does the comparison
// once the flags are parsed into driftOptions (nil: runDrift).
func driftCommand(run func(context.Context, *driftOptions) error) *cli.Command {
	return &cli.Command{
		Name:        "drift",
		Usage:       "compare a manifest or baseline with the live server: graded schema and behaviour drift",
		ArgsUsage:   "MANIFEST [--url URL | --config FILE [--server NAME] | -- COMMAND ARGS...]",
		Description: driftDescription + "\n\n" + configHelp + " The live side is the one server of --config (or --server's).\n\n" + exitCodesHelp,
		Flags:       append(append(append(append(append(targetFlags(), configFlags()...), driftOutputFlags()...), gateFlags()...), expectFlags()...), structuralFlag("drift")),
		Action:      action(parseDriftOptions, run, runDrift),
		Subcommands: []*cli.Command{driftCaptureCommand(nil), driftCheckCommand(nil)},
	}
}

// driftCaptureCommand is `drift capture`; run (nil: runDriftCapture)
// captures what the parsed driftCaptureOptions name.
func driftCaptureCommand(run func(context.Context, *driftCaptureOptions) error) *cli.Command {
	return &cli.Command{
		Name:      "capture",
		Usage:     "snapshot tools/list and canary fingerprints of the server named in a YAML spec",
		ArgsUsage: "SPEC -o STATE.json",
		Description: `Connects to spec.server (url with headers, or command with env; ${ENV} is expanded in
header and env values), records the served tools/list and runs each canary once. Each response
is reduced to a value-tolerant fingerprint: outcome, content kind, structure hash (keys, types
and nesting, values dropped), size bucket (empty, small < 1 KiB, medium < 64 KiB, large) and,
for errors, a normalised error signature. No tool result value and no header value is written.

` + exitCodes("", true),
		Flags: append(captureLimitFlags(),
			outputFlag("", "write the capture to `FILE` (- for stdout); required"),
		),
		Action: action(parseDriftCaptureOptions, run, runDriftCapture),
	}
}

// driftCheckCommand is `drift check`; run (nil: runDriftCheck) compares
// what the parsed driftCheckOptions name.
func driftCheckCommand(run func(context.Context, *driftCheckOptions) error) *cli.Command {
	return &cli.Command{
		Name:      "check",
		Usage:     "diff a current capture (or a live capture from --spec) against a baseline",
		ArgsUsage: "--baseline STATE.json (--current STATE.json | --spec SPEC.yaml)",
		Description: `Compares schema (the same catalogue as "mcpdrill drift") and behaviour. Behavioural drift is
a shape change (MCP-DRIFT-CANARY-SHAPE), an empty-result regression (-CANARY-EMPTY) or a new or
changed error (-CANARY-ERROR), all errors; a size-bucket move alone is a warning, so a healthy
server whose data changed passes. --current compares two files offline (any manifest works
too); --spec captures live first.

` + exitCodesHelp,
		Flags: append(append(captureLimitFlags(),
			&cli.StringFlag{Name: "baseline", Usage: "baseline capture or manifest `FILE` (required)"},
			&cli.StringFlag{Name: "current", Usage: "current capture or manifest `FILE` (offline)"},
			&cli.StringFlag{Name: "spec", Usage: "capture live from this YAML spec `FILE` first"},
		), append(append(driftOutputFlags(), expectFlags()...), structuralFlag("drift"))...),
		Action: action(parseDriftCheckOptions, run, runDriftCheck),
	}
}

// structuralFlag is --structural of a command that compares or
// fingerprints tool sets (what names it).
func structuralFlag(what string) cli.Flag {
	return &cli.BoolFlag{Name: "structural", Usage: what + " without descriptions and titles (the tools' and every schema's): a rewording is no change; a name, a type or a constraint is"}
}

// captureLimitFlags are the client limits a spec-driven capture takes.
func captureLimitFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "protocol", Usage: "force a protocol `REVISION` (" + strings.Join(mcp.Revisions, ", ") + "); default: detect"},
		&cli.DurationFlag{Name: "timeout", Value: 10 * time.Second, Usage: "per-request timeout (a canary that times out is recorded as a timeout)"},
		startupTimeoutFlag(),
		&cli.DurationFlag{Name: "deadline", Value: 2 * time.Minute, Usage: "whole-run deadline"},
		&cli.IntFlag{Name: "max-list-pages", Value: 50, Usage: "tools/list page cap"},
	}
}

// driftOptions is what one `mcpdrill drift MANIFEST` asks for.
type driftOptions struct {
	env
	out outputFormat
	// expect is the expected-findings gate (nil: none).
	expect *expectGate
	// manifestPath names the manifest, data is its bytes and manifest what
	// they parse to.
	manifestPath string
	data         []byte
	manifest     drift.Manifest
	// live is the server to compare with, gated by its flags.
	live gatedTarget
	// deadline bounds the whole run (0: none), counted from start: reading
	// a 64 MiB manifest is part of the run.
	deadline time.Duration
	start    time.Time
	// structural is --structural.
	structural bool
}

// parseDriftOptions reads and checks drift's flags and arguments and the
// manifest they name; problems are usage errors.
func parseDriftOptions(c *cmdLine) (*driftOptions, error) {
	args, err := interspersed(c)
	if err != nil {
		return nil, err
	}
	if len(args) == 0 {
		return nil, usageErr("missing MANIFEST (see --help)")
	}
	o := &driftOptions{manifestPath: args[0], deadline: c.Duration("deadline"), start: c.now(), structural: c.Bool("structural")}
	if o.out, err = outputOptions(c); err != nil {
		return nil, err
	}
	if o.expect, err = parseExpectGate(c); err != nil {
		return nil, err
	}
	if _, err := os.Stat(o.manifestPath); errors.Is(err, fs.ErrNotExist) {
		// "drift chek" is no manifest called chek.
		if s := nearest(o.manifestPath, []string{"capture", "check"}); s != "" {
			return nil, usageErr("no manifest %q (did you mean `mcpdrill drift %s`?)", o.manifestPath, s)
		}
	}
	live, err := oneLiveTarget(c, args[1:])
	if err != nil {
		return nil, err
	}
	if o.data, err = inputfile.Read(o.manifestPath); err != nil {
		return nil, usageErr("read manifest: %v", err)
	}
	// Decoding 100,000 tools takes seconds on a busy machine: it is part
	// of the run the deadline bounds.
	ctx, cancel := runContextFrom(c.ctx, o.start, o.deadline)
	defer cancel()
	var parseErr error
	if err := beforeDeadline(ctx, func() { o.manifest, parseErr = drift.ParseManifest(o.data) }); err != nil {
		return nil, exitErr(exitUnreachable, fmt.Errorf("reading the manifest %s: %w", o.manifestPath, err))
	}
	if parseErr != nil {
		return nil, usageErr("%s: %v", o.manifestPath, parseErr)
	}
	g, err := gateOptions(c, live.cfg)
	if err != nil {
		return nil, err
	}
	o.live = gatedTarget{live, g}
	return o, nil
}

// runDrift compares the manifest with the live server and writes the report.
func runDrift(ctx context.Context, o *driftOptions) (err error) {
	cfg, g := o.live.cfg, o.live.gate
	mask := maskOf([]liveTarget{o.live.liveTarget})
	defer func() { err = maskErr(err, mask) }()
	w := newMaskedWriter(o.stdout, mask)
	defer func() {
		if ferr := w.Flush(); err == nil {
			err = ferr
		}
	}()
	place := newDriftPlace(o.manifestPath, o.data, o.manifest.Tools, o.now)
	ctx, cancel := runContextFrom(ctx, o.start, o.deadline)
	defer cancel()
	defer flushTracer(o.stderr, g.tracer)
	opts := drift.RunOptions{Baseline: o.manifestPath, Live: o.live.name(), HeaderNames: headerNames(cfg.Headers), Tracer: g.tracer, Structural: o.structural,
		Posture: func(ctx context.Context, l drift.Listing) (*tgt.Posture, []report.Finding) {
			res := scan.ProbeAuth(ctx, cfg, scan.AuthOptions{Class: g.class, SkipAnonymousProbe: g.skipAuthProbe, Revision: l.Revision, Tracer: g.tracer},
				scan.Primary{Listed: l.Listed, Tools: l.Tools, Err: l.Err, Call: l.Call})
			return res.Posture, res.Findings
		}}
	if len(g.invoke.Tools) > 0 {
		opts.Invoke = func(ctx context.Context, declared []mcp.Tool, served []string, rep *drift.Report) ([]report.Finding, error) {
			return driftInvoke(ctx, cfg, g, declared, served, rep)
		}
	}
	rep, err := drift.Run(ctx, cfg, &o.manifest, opts)
	if err != nil {
		if rep == nil {
			return connectError(o.live.name(), err)
		}
		if werr := writeDriftBy(ctx, w, rep, o.out, place); werr != nil {
			return werr
		}
		return connectError(o.live.name(), err)
	}
	place.add(rep.Served)
	return judgeDrift(ctx, w, o.stderr, rep, o.out, place, o.expect, rep.Target == nil || rep.Target.Complete)
}

// writeDriftBy is writeDrift within ctx's deadline: the report is placed
// (driftOutput) and rendered aside (100,000 findings take seconds) and
// written only when it was rendered before the deadline ended; otherwise
// nothing is written and the run ends with exit 3.
func writeDriftBy(ctx context.Context, w io.Writer, rep *drift.Report, out outputFormat, place *driftPlace) error {
	o, err := driftOutputBy(ctx, rep, place, out)
	if err != nil {
		return err
	}
	return writePlacedDriftBy(ctx, w, rep, out, o)
}

// driftOutputBy is driftOutput within ctx's deadline (exit 3 after it).
func driftOutputBy(ctx context.Context, rep *drift.Report, place *driftPlace, out outputFormat) (report.Output, error) {
	var o report.Output
	if err := beforeDeadline(ctx, func() { o = driftOutput(rep, place, out) }); err != nil {
		return o, lateReport(rep, err)
	}
	return o, nil
}

// lateReport is the error of a drift report not written before the
// deadline ended.
func lateReport(rep *drift.Report, err error) error {
	return exitErr(exitUnreachable, fmt.Errorf("writing the report of %d finding(s): %w", len(rep.Findings), err))
}

// writePlacedDriftBy writes a placed drift report (o) within ctx's
// deadline, as writeDriftBy does.
func writePlacedDriftBy(ctx context.Context, w io.Writer, rep *drift.Report, out outputFormat, o report.Output) error {
	h := &heldWriter{to: w}
	if u, ok := w.(interface{ Unwrap() io.Writer }); ok {
		h.to = u.Unwrap()
	}
	var werr error
	if err := beforeDeadline(ctx, func() { werr = writeDrift(h, rep, out, o) }); err != nil {
		return lateReport(rep, err)
	}
	if werr != nil {
		return werr
	}
	_, err := w.Write(h.Bytes())
	return err
}

// heldWriter holds what is written to it; Unwrap names the writer it will
// go to, so that a table is still fitted and coloured for its terminal.
type heldWriter struct {
	bytes.Buffer
	to io.Writer
}

// Unwrap is the writer the output goes to.
func (h *heldWriter) Unwrap() io.Writer { return h.to }

// driftInvoke is the opt-in invocation of a drift (scan.InvokeDeclared),
// recorded in rep.
func driftInvoke(ctx context.Context, cfg mcp.Config, g gate, declared []mcp.Tool, served []string, rep *drift.Report) ([]report.Finding, error) {
	inv, fs, err := scan.InvokeDeclared(ctx, cfg, g.invoke, g.target, declared, served, g.tracer)
	rep.Invocation = inv
	if err != nil {
		return nil, connectError(targetName(cfg), err)
	}
	return fs, nil
}

// liveSpec is a spec-driven live server: the spec, the client
// configuration it gives with the capture limit flags, and the whole-run
// deadline.
type liveSpec struct {
	spec     drift.Spec
	cfg      mcp.Config
	deadline time.Duration
}

// driftCaptureOptions is what one `mcpdrill drift capture` asks for.
type driftCaptureOptions struct {
	env
	liveSpec
	// output is -o: the capture's file ("-": stdout).
	output string
}

// parseDriftCaptureOptions reads and checks capture's flags and its spec;
// problems are usage errors.
func parseDriftCaptureOptions(c *cmdLine) (*driftCaptureOptions, error) {
	args, err := interspersed(c)
	if err != nil {
		return nil, err
	}
	switch {
	case len(args) == 0:
		return nil, usageErr("missing SPEC (see --help)")
	case len(args) > 1:
		return nil, usageErr("unexpected argument %q after SPEC", args[1])
	}
	o := &driftCaptureOptions{output: c.String("output")}
	if o.output == "" {
		return nil, usageErr("missing -o FILE")
	}
	if o.liveSpec, err = loadSpec(c, args[0]); err != nil {
		return nil, err
	}
	return o, nil
}

// runDriftCapture captures the spec's server and writes the capture.
func runDriftCapture(ctx context.Context, o *driftCaptureOptions) error {
	ctx, cancel := runContext(ctx, o.deadline)
	defer cancel()
	capt, obs, err := drift.RunCapture(ctx, o.spec, o.cfg, drift.CaptureOptions{Now: time.Now, Version: version})
	if err != nil {
		return connectError(targetName(o.cfg), err)
	}
	for _, u := range obs.Unreadable {
		fmt.Fprintf(o.stderr, "mcpdrill: warning: a tool entry (%s) could not be read and is not in the capture, which is marked incomplete: %s\n", entryName(u.Name), safetext.Text(u.Reason))
	}
	if o.output == "-" {
		return writeJSON(o.stdout, capt)
	}
	var buf bytes.Buffer
	if err := writeJSON(&buf, capt); err != nil {
		return err
	}
	if err := outfile.Write(o.output, buf.Bytes(), 0o644); err != nil {
		return usageErr("-o: %w", err)
	}
	fmt.Fprintf(o.stderr, "captured %d tool(s), %d canary(ies), fingerprint %s -> %s\n",
		len(capt.Tools), len(capt.Canaries), capt.Fingerprint, o.output)
	return nil
}

// driftCheckOptions is what one `mcpdrill drift check` asks for.
type driftCheckOptions struct {
	env
	out outputFormat
	// expect is the expected-findings gate (nil: none).
	expect *expectGate
	// baselinePath names the baseline and base is what it loads to.
	baselinePath string
	base         *drift.Capture
	// currentPath and current are --current, loaded (offline); otherwise
	// live is --spec's server, captured by the run.
	currentPath string
	current     *drift.Capture
	live        *liveSpec
	// structural is --structural.
	structural bool
}

// parseDriftCheckOptions reads and checks check's flags and the files they
// name; problems are usage errors.
func parseDriftCheckOptions(c *cmdLine) (*driftCheckOptions, error) {
	if err := noArguments(c); err != nil {
		return nil, err
	}
	out, err := outputOptions(c)
	if err != nil {
		return nil, err
	}
	o := &driftCheckOptions{out: out, baselinePath: c.String("baseline"), currentPath: c.String("current"), structural: c.Bool("structural")}
	if o.baselinePath == "" {
		return nil, usageErr("missing --baseline FILE (the capture or manifest to compare with)")
	}
	if o.expect, err = parseExpectGate(c); err != nil {
		return nil, err
	}
	spec := c.String("spec")
	if (o.currentPath == "") == (spec == "") {
		return nil, usageErr("give exactly one of --current FILE or --spec FILE")
	}
	if o.base, err = loadState(o.baselinePath); err != nil {
		return nil, err
	}
	if o.currentPath != "" {
		if o.current, err = loadState(o.currentPath); err != nil {
			return nil, err
		}
		return o, nil
	}
	live, err := loadSpec(c, spec)
	if err != nil {
		return nil, err
	}
	o.live = &live
	return o, nil
}

// runDriftCheck compares the current capture (taken live with --spec) with
// the baseline and writes the report.
func runDriftCheck(ctx context.Context, o *driftCheckOptions) error {
	place := newDriftPlace(o.baselinePath, nil, o.base.ToolSet(), o.now)
	current, live := o.current, o.currentPath
	var deadline time.Duration
	if o.live != nil {
		deadline = o.live.deadline
	}
	ctx, cancel := runContext(ctx, deadline)
	defer cancel()
	if o.live != nil {
		live = targetName(o.live.cfg)
		var err error
		if current, _, err = drift.RunCapture(ctx, o.live.spec, o.live.cfg, drift.CaptureOptions{Version: version}); err != nil {
			if !drift.IsRefused(err) {
				return connectError(live, err)
			}
			refused := drift.CheckRefusedReport(o.baselinePath, live, o.base, err)
			if werr := writeDriftBy(ctx, o.stdout, refused, o.out, place); werr != nil {
				return werr
			}
			return connectError(live, err)
		}
	}
	base := o.base
	if o.structural {
		base, current = base.Structural(), current.Structural()
	}
	rep := drift.CheckReport(o.baselinePath, live, base, current)
	rep.Structural = o.structural
	place.add(drift.ToolNames(current.ToolSet()))
	return judgeDrift(ctx, o.stdout, o.stderr, rep, o.out, place, o.expect, o.base.Complete && current.Complete)
}

func loadState(path string) (*drift.Capture, error) {
	b, err := inputfile.Read(path)
	if err != nil {
		return nil, usageErr("read %s: %v", path, err)
	}
	s, err := drift.LoadState(b)
	if err != nil {
		return nil, usageErr("%s: %v", path, err)
	}
	return s, nil
}

// loadSpec reads and parses the spec at path and the capture limit flags
// that go with it; problems are usage errors.
func loadSpec(c *cmdLine, path string) (liveSpec, error) {
	b, err := inputfile.Read(path)
	if err != nil {
		return liveSpec{}, usageErr("read spec: %v", err)
	}
	spec, err := drift.ParseSpec(b, c.lookupEnv)
	if err != nil {
		return liveSpec{}, usageErr("%s: %v", path, err)
	}
	if p := c.String("protocol"); p != "" && !mcp.IsKnown(p) {
		return liveSpec{}, usageErr("unknown --protocol %q (known: %s)", p, strings.Join(mcp.Revisions, ", "))
	}
	if c.Duration("timeout") <= 0 || c.Duration("startup-timeout") <= 0 || c.Int("max-list-pages") <= 0 {
		return liveSpec{}, usageErr("--timeout, --startup-timeout and --max-list-pages must be positive")
	}
	cfg := spec.Config(mcp.Config{Protocol: c.String("protocol"), RequestTimeout: c.Duration("timeout"), StartupTimeout: c.Duration("startup-timeout"),
		MaxListPages: c.Int("max-list-pages"), ClientName: "mcpdrill", ClientVersion: version})
	return liveSpec{spec: spec, cfg: cfg, deadline: c.Duration("deadline")}, nil
}

// runContext is the context of a run that talks to a server: ctx, ended
// by an interrupt or SIGTERM and, when deadline is positive, after it.
func runContext(ctx context.Context, deadline time.Duration) (context.Context, context.CancelFunc) {
	return runContextFrom(ctx, time.Now(), deadline)
}

// runContextFrom is runContext with the deadline counted from start.
func runContextFrom(parent context.Context, start time.Time, deadline time.Duration) (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
	if deadline > 0 {
		ctx2, cancel := context.WithDeadline(ctx, start.Add(deadline))
		return ctx2, func() { cancel(); stop() }
	}
	return ctx, stop
}

// beforeDeadline runs f, pure work on data in memory, and returns nil once
// it has, or ctx's error as soon as ctx ends first. f then goes on in the
// background and whatever it writes must not be read: the command is about
// to end with that error.
func beforeDeadline(ctx context.Context, f func()) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		select {
		case <-done: // both ready: the work is done, use it
			return nil
		default:
			return ctx.Err()
		}
	}
}

// connectError maps a failure to connect to or list the server named name
// (as targetName gives it) to exit 3: unreachable, timed out, exited,
// refused, HTTP 401/403, or a tools/list the server answered with an error
// or an unreadable result. In every case no tool set was obtained, so
// nothing is compared. The line names the server and, for a stdio server
// that used up its start-up allowance, the flag that raises it.
func connectError(name string, err error) error {
	return exitErr(exitUnreachable, fmt.Errorf("%s: %w%s", name, err, startupFlagHint(err)))
}

// startupFlagHint is what an error about a stdio server that wrote nothing
// within its start-up allowance adds: the flag that raises it.
func startupFlagHint(err error) string {
	var st *mcp.StartupTimeoutError
	if errors.As(err, &st) {
		return startupHintText
	}
	return ""
}

// startupHintText ends a line about a stdio server that used up its
// start-up allowance.
const startupHintText = " (raise the start-up allowance with --startup-timeout: a first npx or uvx run downloads the package)"

// targetName names the live server for a report's header and its "live"
// field, without secrets: the redacted URL or command line.
func targetName(cfg mcp.Config) string {
	if cfg.URL != "" {
		return redact.URL(cfg.URL)
	}
	return redact.Command(cfg.Command)
}

func headerNames(h http.Header) []string {
	var out []string
	for k := range h {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// driftPlace is what a drift report's CI formats need besides the report:
// the file its findings are attached to (the manifest or the baseline), the
// line of each tool's entry in it, and the tools of both sides (one JUnit
// case each).
type driftPlace struct {
	path string
	// data is the file's content when already read; lines are found in it
	// only when a format asks for them (lines).
	data  []byte
	tools []string
	seen  map[string]bool // the names in tools, so that add stays linear
	// start is when the run began by the clock now: a report's duration.
	start time.Time
	now   func() time.Time
}

// newDriftPlace places a report in the file at path; data is its content
// when already read; now is the run's clock.
func newDriftPlace(path string, data []byte, tools []mcp.Tool, now func() time.Time) *driftPlace {
	p := &driftPlace{path: path, data: data, now: now, start: now(), seen: map[string]bool{}}
	p.add(drift.ToolNames(tools))
	return p
}

// lines finds the line of each tool's entry in the file.
func (p *driftPlace) lines() map[string]int {
	if p.data != nil {
		return report.ToolLines(p.data)
	}
	return fileToolLines(p.path)
}

func (p *driftPlace) add(names []string) {
	for _, n := range names {
		if !p.seen[n] {
			p.seen[n] = true
			p.tools = append(p.tools, n)
		}
	}
}

// driftOutput is a drift report for the CI formats: its findings placed in
// the manifest or baseline, one check per tool of either side. The file's
// lines are found only for a format that shows them (out): the gate does
// not need them.
func driftOutput(rep *drift.Report, place *driftPlace, out outputFormat) report.Output {
	var lines map[string]int
	if out.format != "json" && out.format != "table" {
		lines = place.lines()
	}
	o := report.Output{Command: rep.Command, Results: report.Locate(rep.Plain(), artifactPath(place.path), lines), Duration: place.now().Sub(place.start)}
	tools := slices.Sorted(slices.Values(place.tools))
	for _, t := range tools {
		o.Checks = append(o.Checks, report.Check{Class: "tools", Name: t, Claims: claimTool(t)})
	}
	return o
}

// writeDrift writes a drift report in out's format; o is the report for
// the CI formats (driftOutput).
func writeDrift(w io.Writer, rep *drift.Report, out outputFormat, o report.Output) error {
	switch out.format {
	case "json":
		return writeJSON(w, rep)
	case "table":
		return renderDrift(w, rep, outputWidth(w))
	}
	_, err := writeFindings(w, out, o)
	return err
}

// judgeDrift gates a compared drift report (against --expected-findings,
// when given), writes it and returns its exit: 1 when the gate fails.
// complete says whether both sides were read whole, so that a finding's
// absence is evidence.
func judgeDrift(ctx context.Context, w, stderr io.Writer, rep *drift.Report, out outputFormat, place *driftPlace, g *expectGate, complete bool) error {
	o, err := driftOutputBy(ctx, rep, place, out)
	if err != nil {
		return err
	}
	failing, err := gateFails(g, stderr, o.Results, out.threshold, func(string) bool { return complete })
	if err != nil {
		return err
	}
	if err := writePlacedDriftBy(ctx, w, rep, out, o); err != nil {
		return err
	}
	if failing {
		return exitErr(exitFindings, nil)
	}
	return nil
}

// renderDrift prints a drift report, its tables fitted to width.
func renderDrift(w io.Writer, rep *drift.Report, width int) error {
	p := newPainter(w)
	fmt.Fprintf(w, "%s %s vs %s\n", p.paint("mcpdrill "+rep.Command, 1), safetext.Text(rep.Baseline), safetext.Text(rep.Live))
	if t := rep.Target; t != nil {
		name := t.Server
		if name == "" {
			name = "(unnamed server)"
		}
		fmt.Fprintln(w, wrap(fmt.Sprintf("server %s %s, protocol %s (%s era, %s), %d list page(s)", safetext.Text(name), safetext.Text(t.Version), t.Revision, t.Era, t.Transport, t.Pages), width))
	}
	if rep.Structural {
		fmt.Fprintln(w, "structural: descriptions and titles left out of the comparison and the fingerprints")
	}
	fmt.Fprintf(w, "fingerprint baseline %s (%d tools)\n", orDash(rep.Fingerprint.Baseline), rep.Tools.Baseline)
	fmt.Fprintf(w, "fingerprint live     %s (%d tools)\n\n", orDash(rep.Fingerprint.Live), rep.Tools.Live)
	renderPosture(w, rep.AuthPosture, width)
	if inv, ok := rep.Invocation.(*scan.Invocation); ok {
		if err := renderInvocation(w, inv, width); err != nil {
			return err
		}
	}
	if len(rep.Findings) == 0 {
		fmt.Fprintln(w, "No drift.")
		return nil
	}
	g := newGrid(gridColumn{name: "severity", painted: true}, gridColumn{name: "rule"}, gridColumn{name: "tool"},
		gridColumn{name: "pointer", long: true, label: true}, gridColumn{name: "change"}, gridColumn{name: "message", long: true})
	for _, f := range rep.Findings {
		g.add(p.severity(f.Severity), f.Rule, f.Tool, f.Pointer, f.Change, f.Message)
	}
	if err := g.render(w, width); err != nil {
		return err
	}
	cnt := report.Count(rep.Plain())
	fmt.Fprintf(w, "%d error(s), %d warning(s), %d info\n", cnt[report.SeverityError], cnt[report.SeverityWarn], cnt[report.SeverityInfo])
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
