package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mcpdrill/mcpdrill/internal/safetext"
	"github.com/mcpdrill/mcpdrill/report"
	"github.com/mcpdrill/mcpdrill/scan"
	"github.com/mcpdrill/mcpdrill/scan/provider"
)

// scanCommand is the `mcpdrill scan` command. run does the work once the
// flags are parsed into scanOptions (nil: runScan); a test passes its own to
// see what an argv asks for without scanning anything.
func scanCommand(run func(context.Context, *scanOptions) error) *cli.Command {
	return &cli.Command{
		Name:      "scan",
		Usage:     "score a live MCP server: output contracts, error and specification conformance",
		ArgsUsage: "[--url URL | --config FILE|auto [--server NAME] | -- COMMAND ARGS...]",
		Description: "Connects to the server (stdio command after --, or --url), lists its tools, assesses each\n" +
			"outputSchema (does it reject a corrupted but well-typed payload?), sends error probes and checks\n" +
			"conformance for the negotiated protocol revision. Nothing is called with valid arguments unless\n" +
			"--invoke-tool NAME --execute asks for it (without --execute the plan is printed and nothing is sent).\n\n" +
			"Over HTTP it records the authentication posture (auth_posture): whether an anonymous tools/list\n" +
			"gets the inventory (with --header, one extra tools/list is sent with the headers stripped; header\n" +
			"values are never printed), the WWW-Authenticate challenge and protected-resource metadata of a\n" +
			"refusal, and whether a foreign Origin is refused. Findings are graded by target class (--target-class).\n\n" +
			configHelp + "\n\n" + exitCodesHelp + "\n" + scanServersExitHelp,
		Flags: append(append(append(targetFlags(), configFlags()...), formatFlags("the report as JSON (schema_version "+scan.SchemaVersion+")", "error")...), append(append(gateFlags(), expectFlags()...),
			&cli.StringFlag{Name: "sarif-file", Usage: "attach the findings of --format sarif and github to `PATH`, a file of your repository (a manifest JSON gets each tool's line); default " + defaultScanArtifact},
			&cli.BoolFlag{Name: "no-second-connection", Usage: "skip the tool-set stability check (it opens a second session)"},
			&cli.BoolFlag{Name: "no-origin-check", Usage: "skip the foreign-Origin handshake (HTTP)"},
			&cli.BoolFlag{Name: "probe-any-tool", Usage: "let the argument probes call a tool annotated destructive or with a destructive-looking name (by default they never do)"},
			&cli.StringFlag{Name: "providers", Usage: "report as findings (MCP-PROV-*, gated by --fail-on) whether these model provider `PROFILES` accept each tool: " + strings.Join(provider.IDs(), ", ") + " or all (comma-separated); every profile's verdicts are in the JSON whatever is named"},
		)...),
		Action: action(parseScanOptions, run, runScan),
	}
}

// scanServersExitHelp ends scan's EXIT CODES: the code of a run of several
// servers (scansExit).
const scanServersExitHelp = `   With several servers (--config): 1 when a finding about any of them
   fails, though another could not be reached; else 3 when one could not
   (stderr names each, and counts them); else 0.`

// scanOptions is what one `mcpdrill scan` asks for.
type scanOptions struct {
	env
	out outputFormat
	// targets are the servers to scan, each with its gate (target class,
	// auth probe, invocation and tracer flags checked against it).
	targets []gatedTarget
	// sarifFile is the file the CI formats attach findings to.
	sarifFile string
	// expect is the expected-findings gate (nil: none).
	expect *expectGate
	// scan holds the target-independent scan options.
	scan scan.Options
}

// gatedTarget is a target with the gate its flags give it.
type gatedTarget struct {
	liveTarget
	gate gate
}

// parseScanOptions reads and checks scan's flags and arguments; problems
// are usage errors.
func parseScanOptions(c *cmdLine) (*scanOptions, error) {
	out, err := outputOptions(c)
	if err != nil {
		return nil, err
	}
	targets, err := liveTargets(c, c.Args().Slice())
	if err != nil {
		return nil, err
	}
	var profiles []string
	for _, p := range strings.Split(c.String("providers"), ",") {
		if p = strings.TrimSpace(p); p != "" {
			profiles = append(profiles, p)
		}
	}
	if _, err := provider.Lookup(profiles); err != nil {
		return nil, usageErr("--providers: %v", err)
	}
	expect, err := parseExpectGate(c)
	if err != nil {
		return nil, err
	}
	o := &scanOptions{out: out, expect: expect, sarifFile: c.String("sarif-file"), scan: scan.Options{
		Providers:            profiles,
		Deadline:             c.Duration("deadline"),
		SkipSecondConnection: c.Bool("no-second-connection"),
		SkipOriginCheck:      c.Bool("no-origin-check"),
		ProbeAnyTool:         c.Bool("probe-any-tool"),
		ToolVersion:          version,
	}}
	for _, t := range targets {
		g, err := gateOptions(c, t.cfg)
		if err != nil {
			return nil, err
		}
		o.targets = append(o.targets, gatedTarget{t, g})
	}
	return o, nil
}

// runScan scans every target in turn, judges the findings (against
// --expected-findings, when given) and writes the reports.
func runScan(ctx context.Context, o *scanOptions) (err error) {
	targets := make([]liveTarget, len(o.targets))
	for i, t := range o.targets {
		targets[i] = t.liveTarget
	}
	mask := maskOf(targets)
	defer func() { err = maskErr(err, mask) }()
	w := newMaskedWriter(o.stdout, mask)
	errw := newMaskedWriter(o.stderr, mask)
	defer errw.Flush()
	reps := make([]*scan.Report, len(o.targets))
	for i, t := range o.targets {
		if reps[i], err = scanOne(ctx, o.stderr, t, o.scan); err != nil {
			return err
		}
	}
	addToolCollisions(targets, reps)
	out, err := scanOutput(targets, reps, o.sarifFile)
	if err != nil {
		return err
	}
	failing, err := gateFails(o.expect, errw, graded(out.Results), o.out.threshold, scansEstablished(targets, reps))
	if err != nil {
		return err
	}
	if err := writeScans(w, targets, reps, o.out, out); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return scansExit(targets, reps, failing)
}

// addToolCollisions compares the tool names of the servers of each
// configuration of a --config run (scan.AddToolCollisions).
func addToolCollisions(ts []liveTarget, reps []*scan.Report) {
	byFile := map[string][]scan.ConfigServer{}
	var files []string
	for i, t := range ts {
		if t.file == "" {
			continue
		}
		if _, ok := byFile[t.file]; !ok {
			files = append(files, t.file)
		}
		byFile[t.file] = append(byFile[t.file], scan.ConfigServer{Name: t.server, Report: reps[i]})
	}
	for _, f := range files {
		scan.AddToolCollisions(byFile[f])
	}
}

// graded are the results a gate judges: all but the lines that say a
// server opened no session (their exit is 3, whatever a file expects).
// The results are the run's own, so that a mark the gate sets on one is
// in the report written after it.
func graded(rs []report.Result) []report.Result {
	out := rs[:0:0]
	for i := range rs {
		if rs[i].Rule != scan.RuleUnreachable && rs[i].Rule != scan.RuleRefused {
			out = append(out, rs[i])
		}
	}
	if len(out) == len(rs) {
		return rs
	}
	return out
}

// scansEstablished says whether the scan of a server ("": every server)
// completed: it opened a session and nothing was cut short. Only then is a
// finding's absence evidence.
func scansEstablished(ts []liveTarget, reps []*scan.Report) func(string) bool {
	done := func(r *scan.Report) bool {
		if sessionFailure(r) != "" {
			return false
		}
		for _, f := range r.Findings {
			if f.Rule == scan.RuleIncomplete {
				return false
			}
		}
		return true
	}
	return func(server string) bool {
		for i, r := range reps {
			if (server == "" || ts[i].server == server) && !done(r) {
				return false
			}
		}
		return true
	}
}

// scanOne scans one target.
func scanOne(ctx context.Context, stderr io.Writer, t gatedTarget, so scan.Options) (*scan.Report, error) {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	so.TargetClass, so.SkipAuthProbe, so.Invoke, so.Tracer = t.gate.class, t.gate.skipAuthProbe, t.gate.invoke, t.gate.tracer
	rep, err := scan.Run(ctx, t.cfg, so)
	flushTracer(stderr, t.gate.tracer)
	if err != nil {
		switch { // the gate's refusals, worded with the flags that lift them
		case errors.Is(err, scan.ErrExecuteWithoutTools):
			return nil, usageErr("--execute needs at least one --invoke-tool NAME (there is no wildcard)")
		case errors.Is(err, scan.ErrProductionNotAcknowledged):
			return nil, usageErr("%v: pass --i-know-this-is-production to go ahead", err)
		case errors.Is(err, scan.ErrInvalidToolName):
			return nil, usageErr("--invoke-tool: %v", err)
		}
		return nil, exitErr(exitInternal, err)
	}
	t.show(rep)
	return rep, nil
}

// scanOutput is a run's reports for the CI formats: without --config, the
// findings placed in artifact (defaultScanArtifact when empty; a manifest
// gives each tool its line); with it, see writeScans.
func scanOutput(ts []liveTarget, reps []*scan.Report, artifact string) (report.Output, error) {
	if ts[0].file != "" {
		return configScanOutput(ts, reps, artifact)
	}
	rep := reps[0]
	// The default is a path from the repository's root, wherever scan runs.
	path, lines := defaultScanArtifact, map[string]int(nil)
	if artifact != "" {
		path, lines = artifactPath(artifact), fileToolLines(artifact)
	}
	return report.Output{Command: "scan", Checks: scanChecks(rep),
		Results: report.Locate(rep.Findings, path, lines), Duration: time.Duration(rep.Meta.DurationMS) * time.Millisecond}, nil
}

// writeScan writes one scan report as JSON or a table.
func writeScan(w io.Writer, rep *scan.Report, format string) error {
	if format == "json" {
		return writeJSON(w, rep)
	}
	return renderScan(w, rep, outputWidth(w))
}

// scanChecks are the JUnit cases of a scan: each requirement of the
// revision graded (a failed one claims the findings that cite it; one not
// applicable or not verified is skipped with why), each conformance check
// and error probe of a rule that grades none of its requirements (its
// findings share its id; a probe's finding is of an MCP-ERR-* rule and its
// message starts with the probe's name) and each tool (every other finding
// about it). Checks are not timed one by one.
func scanChecks(r *scan.Report) []report.Check {
	cs, graded := requirementChecks(r)
	for _, ch := range r.Conformance {
		id := ch.ID
		if graded[id] {
			continue
		}
		c := report.Check{Class: "conformance", Name: id, Claims: func(x report.Result) bool { return x.Rule == id }}
		if ch.Status == scan.CheckNotApplicable || ch.Status == scan.CheckNotEstablished {
			c.Skipped = strings.TrimSuffix(string(ch.Status)+": "+ch.Detail, ": ")
		}
		cs = append(cs, c)
	}
	for _, p := range r.Probes {
		name := p.Name
		if graded[p.Rule()] {
			continue
		}
		c := report.Check{Class: "probes", Name: name, Claims: func(x report.Result) bool {
			return strings.HasPrefix(x.Rule, "MCP-ERR-") && strings.HasPrefix(x.Message, name+":")
		}}
		if p.Verdict == scan.VerdictSkipped {
			c.Skipped = strings.TrimSuffix("skipped: "+p.Detail, ": ")
		}
		cs = append(cs, c)
	}
	cs = append(cs, providerChecks(r)...)
	for _, t := range r.Tools {
		cs = append(cs, report.Check{Class: "tools", Name: t.Name, Claims: claimTool(t.Name)})
	}
	return cs
}

// requirementChecks are the JUnit cases of the requirements of the
// revision a scan graded, in table order, and the rules that grade them.
func requirementChecks(r *scan.Report) ([]report.Check, map[string]bool) {
	graded := map[string]bool{}
	if r.Requirements == nil {
		return nil, graded
	}
	cited := map[string]bool{}
	for _, f := range r.Findings {
		if f.Requirement != nil {
			cited[f.Requirement.ID] = true
		}
	}
	var cs []report.Check
	for _, o := range r.Requirements.Outcomes {
		for _, rule := range o.Rules {
			graded[rule] = true
		}
		id, failed := o.ID, o.Outcome == scan.OutcomeFailed
		c := report.Check{Class: "requirements", Name: id, Claims: func(x report.Result) bool {
			return failed && x.Requirement != nil && x.Requirement.ID == id
		}}
		switch o.Outcome {
		case scan.OutcomeFailed:
			if !cited[id] {
				c.Failed = fmt.Sprintf("%s (%s, %s %s) failed: %s", id, o.Level, r.Requirements.Revision, o.Section, strings.Join(o.Rules, ", "))
			}
		case scan.OutcomeNotApplicable, scan.OutcomeNotVerified:
			c.Skipped = strings.TrimSuffix(o.Outcome+": "+o.Why, ": ")
		}
		cs = append(cs, c)
	}
	return cs, graded
}

// scansExit maps a run to the exit code contract. One line on stderr
// names each server that opened no session (unreachable, or the protocol
// refused) and says why. failing (a finding at or above the threshold that
// no expected-findings entry excuses, or a stale entry) is exit 1, the
// worst verdict: a finding established about one server is not hidden by
// another that could not be reached. Without one, a server that opened no
// session is exit 3; else 0. With several servers, a last line counts
// those unreachable.
func scansExit(ts []liveTarget, reps []*scan.Report, failing bool) error {
	var lines []string
	for i, rep := range reps {
		if line := sessionFailure(rep); line != "" {
			lines = append(lines, scanSubject(ts[i], rep)+": "+line+startupHint(rep))
		}
	}
	if len(lines) > 0 && len(reps) > 1 {
		lines = append(lines, fmt.Sprintf("%d of %d servers unreachable or refused the protocol; the findings of the others are in the report", len(lines), len(reps)))
	}
	switch {
	case failing && len(lines) > 0:
		return exitErr(exitFindings, errors.New(strings.Join(lines, "\n")))
	case failing:
		return exitErr(exitFindings, nil)
	case len(lines) > 0:
		// One line per server that opened no session is what the user
		// reads, on stderr, whatever the format.
		return exitErr(exitUnreachable, errors.New(strings.Join(lines, "\n")))
	}
	return nil
}

// scanSubject names the server a report is about for a line of stderr:
// its configuration entry, or its URL or command line (redacted).
func scanSubject(t liveTarget, rep *scan.Report) string {
	if t.file != "" {
		return t.label()
	}
	return scanTarget(rep)
}

// sessionFailure is the line that says why a scan opened no session (the
// server unreachable, or the protocol refused), or "" when it opened one.
func sessionFailure(r *scan.Report) string {
	for _, f := range r.Findings {
		if f.Rule == scan.RuleUnreachable || f.Rule == scan.RuleRefused {
			return f.Message
		}
	}
	return ""
}

// scanTarget names a report's target (already redacted) for a message.
func scanTarget(r *scan.Report) string {
	if r.Target.URL != "" {
		return r.Target.URL
	}
	return strings.Join(r.Target.Command, " ")
}

// renderScan prints a scan report, its tables fitted to width.
func renderScan(w io.Writer, r *scan.Report, width int) error {
	if sessionFailure(r) != "" {
		// Nothing was scanned: the reason is the one line scansExit
		// gives, not a scorecard of zeros.
		return nil
	}
	p := newPainter(w)
	name := r.Server.Name
	if name == "" {
		name = "(unnamed server)"
	}
	fmt.Fprintf(w, "%s %s\n", p.paint(safetext.Text(name), 1), safetext.Text(r.Server.Version))
	if r.Protocol.Revision != "" {
		forced := ""
		if r.Protocol.Forced {
			forced = ", forced"
		}
		fmt.Fprintf(w, "protocol %s (%s era, %s%s)\n", r.Protocol.Revision, r.Protocol.Era, r.Protocol.Transport, forced)
	}
	if len(r.Protocol.Detection) > 0 {
		fmt.Fprintf(w, "detection: %s\n", safetext.Text(strings.Join(r.Protocol.Detection, "; ")))
	}
	fmt.Fprintln(w)

	if len(r.Tools) > 0 {
		t := newGrid(gridColumn{name: "tool"}, gridColumn{name: "output contract", painted: true}, gridColumn{name: "leaf rate", label: true}, gridColumn{name: "note", long: true})
		for _, tr := range r.Tools {
			leaf := "-"
			if tr.LeafRate != nil && tr.Leaves > 0 {
				leaf = fmt.Sprintf("%d/%d", tr.LeavesRejected, tr.Leaves)
				if tr.LeavesSampled {
					leaf += " (sampled)"
				}
			}
			var notes []string
			if tr.OutputContract == scan.ContractPartial {
				notes = append(notes, fmt.Sprintf("%d/%d shapes rejected", tr.ShapesRejected, tr.Shapes))
			}
			if tr.Wrapped {
				notes = append(notes, "SDK-wrapped")
			}
			note := strings.Join(notes, "; ")
			t.add(tr.Name, contractCell(p, tr.OutputContract), leaf, note)
		}
		if err := t.render(w, width); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}

	if len(r.Probes) > 0 {
		t := newGrid(gridColumn{name: "probe"}, gridColumn{name: "verdict"}, gridColumn{name: "code"},
			gridColumn{name: "expected", long: true, label: true}, gridColumn{name: "conformant", label: true, painted: true})
		for _, pr := range r.Probes {
			code := ""
			if pr.ErrorCode != nil {
				code = fmt.Sprint(*pr.ErrorCode)
			}
			if pr.HTTPStatus != 0 {
				code = strings.TrimSpace(code + fmt.Sprintf(" HTTP %d", pr.HTTPStatus))
			}
			conf := p.paint("yes", 32)
			switch {
			case pr.Conformant == nil:
				conf = "skipped"
			case !*pr.Conformant:
				conf = p.paint("no", 31)
			}
			t.add(pr.Name, string(pr.Verdict), code, pr.Expected, conf)
		}
		if err := t.render(w, width); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}

	// The figures are rendered from the exact shares (scan.Tally), rounded
	// once here, not from the document's four-decimal scores.
	tl := scan.TallyOf(r.Tools, r.Probes, r.Conformance)
	sh := tl.Shares()
	var b strings.Builder
	writeItems(&b, width, "", "  ", fmt.Sprintf("tools %d", tl.Tools), fmt.Sprintf("declared %d", tl.Declared()), fmt.Sprintf("enforceable %d", tl.Enforceable),
		fmt.Sprintf("partial %d", tl.Partial), fmt.Sprintf("vacuous %d", tl.Vacuous), fmt.Sprintf("invalid %d", tl.Invalid))
	writeItems(&b, width, "", "  ", "output coverage "+pct(sh.OutputCoverage), fmt.Sprintf("enforceable %s of tools (%s of declared)", pct(sh.EnforceableShare), pct(sh.EnforceableOfDeclared)),
		"rejects at least one "+pct(sh.RejectsAnyShare), "leaf rate "+pct(sh.LeafRate))
	writeItems(&b, width, "", "  ", "error handling "+pct(sh.ErrorHandling), "error conformance "+pct(sh.ErrorConformance), "spec conformance "+pct(sh.SpecConformance))
	if rc := r.Requirements; rc != nil {
		writeWrapped(&b, fmt.Sprintf("requirements %s", rc), "", "  ", width)
		var failed []string
		for _, o := range rc.Outcomes {
			if o.Outcome == scan.OutcomeFailed {
				failed = append(failed, fmt.Sprintf("%s (%s, %s)", o.ID, o.Level, o.Section))
			}
		}
		if len(failed) > 0 {
			writeItems(&b, width, "  failed: ", "    ", failed...)
		}
	}
	writeProviders(&b, r.Providers, width)
	b.WriteString("\n")
	io.WriteString(w, b.String())
	renderPosture(w, r.AuthPosture, width)
	if err := renderInvocation(w, r.Invocation, width); err != nil {
		return err
	}
	return renderFindings(w, r.Findings, width)
}

func contractCell(p painter, c scan.Contract) string {
	switch c {
	case scan.ContractEnforceable:
		return p.paint(string(c), 32)
	case scan.ContractPartial, scan.ContractVacuous, scan.ContractInvalid:
		return p.paint(string(c), 33)
	}
	return string(c)
}

// startupHint is what a line about a stdio server that opened no session
// adds when the server used up its start-up allowance: the flag that
// raises it.
func startupHint(rep *scan.Report) string {
	if f := rep.StartupFailure; f != nil && f.StartupTimeoutMS > 0 {
		return startupHintText
	}
	return ""
}
