package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mcpdrill/mcpdrill/internal/clientconfig"
	"github.com/mcpdrill/mcpdrill/internal/inputfile"
	"github.com/mcpdrill/mcpdrill/internal/outfile"
	"github.com/mcpdrill/mcpdrill/internal/safetext"
	"github.com/mcpdrill/mcpdrill/report"
	"github.com/mcpdrill/mcpdrill/studies"
	"github.com/mcpdrill/mcpdrill/studies/pages"
	"github.com/mcpdrill/mcpdrill/studies/registry"
	"github.com/mcpdrill/mcpdrill/studies/versiondrift"
)

// studyCommand is the `mcpdrill study` command.
func studyCommand() *cli.Command {
	return &cli.Command{
		Name:  "study",
		Usage: "scan many servers from a servers.json, merge shards, and report",
		Subcommands: []*cli.Command{studyRunCommand(nil), studyLockCommand(nil), studyInstallCommand(nil), studyVerifyCommand(nil), studyMergeCommand(nil),
			studyReportCommand(nil), studyImportCommand(nil), studyClientsCommand(nil)},
	}
}

// outputFlag is the -o flag of a command that writes a document (or a
// directory), def when not given.
func outputFlag(def, usage string) cli.Flag {
	return &cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: def, Usage: usage}
}

// studyRunCommand is `study run`; run (nil: runStudy) does the work once
// the flags are parsed into studyRunOptions.
func studyRunCommand(run func(context.Context, *studyRunOptions) error) *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "scan every server of a servers.json (mcpServers format) into results.json",
		ArgsUsage: "SERVERS.json",
		Description: "Each entry is a stdio server (command, args, env, cwd) or an HTTP one (url, headers); an\n" +
			"HTTP entry may carry \"launch\" to start a local process first, with ${PORT} a free loopback port.\n" +
			"${NAME} expands from the environment; ${SPEC_DIR} is the directory of servers.json and\n" +
			"${WORK_DIR} a scratch directory per server (also the default working directory); the clients'\n" +
			"placeholders work too (${env:X}, ${X:-default}, ${userHome}, ${workspaceFolder} from --workspace,\n" +
			"${input:ID} from --input ID=VALUE; a server short of one fails as a config row). Relative\n" +
			"commands with a slash resolve against ${SPEC_DIR}. Every server becomes a row, failures\n" +
			"included; rows are sorted by name.\n\n" +
			"--format json (the default) writes results.json to -o; any other format goes to stdout, and\n" +
			"results.json then only to -o FILE. With --fail-on LEVEL the run exits 1 when a server could\n" +
			"not be scanned or a finding is at or above LEVEL; by default (never) it exits 0 when the study\n" +
			"completed, whatever the servers did.\n\n" +
			exitCodes("with --fail-on LEVEL: a server not scanned, or a finding at or above LEVEL (default: never)", false),
		Flags: append([]cli.Flag{
			outputFlag("-", "write results.json to `FILE` (- for stdout)"),
			&cli.StringFlag{Name: "format", Value: "json", Usage: "output `FORMAT`: " + formatList + " (json is results.json)"},
			&cli.BoolFlag{Name: "json", Usage: "write results.json; same as --format json"},
			&cli.StringFlag{Name: "fail-on", Value: "never", Usage: "exit 1 when a server was not scanned or a finding is at or above `LEVEL`: error, warn, info or never"},
			&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Usage: "scan `N` servers at once", DefaultText: "number of CPUs"},
			&cli.DurationFlag{Name: "timeout", Value: 2 * time.Minute, Usage: "per-server deadline for the whole scan"},
			&cli.DurationFlag{Name: "request-timeout", Value: 10 * time.Second, Usage: "per-request timeout"},
			&cli.StringFlag{Name: "shard", Usage: "run shard `K/N` only (every N-th server in name order, from the K-th); auto or auto/N: K is $" + studies.EnvShardIndex + "+1 (a Kubernetes Indexed Job), N from $" + studies.EnvShardCount + " or auto/N"},
			&cli.BoolFlag{Name: "no-second-connection", Usage: "skip the tool-set stability check (one connection per server)"},
			&cli.StringFlag{Name: "population", Usage: "the rule the servers were chosen by, `TEXT` recorded in meta and shown on the scoreboard"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress on stderr"},
			&cli.StringFlag{Name: "install-log", Usage: "read study install's log from `FILE`", DefaultText: studies.InstallLogName + " beside servers.json, if present"},
			&cli.StringSliceFlag{Name: "only", Usage: "run only the entry named `NAME` (repeatable): a subset to compare with a published run (study compare)"},
		}, placeholderFlags("")...),
		Action: action(parseStudyRunOptions, run, runStudy),
	}
}

// studyMergeCommand is `study merge`; run (nil: runStudyMerge) merges the
// parsed studyMergeOptions.
func studyMergeCommand(run func(context.Context, *studyMergeOptions) error) *cli.Command {
	return &cli.Command{
		Name:      "merge",
		Usage:     "join shard results into one results.json, identical to an unsharded run outside meta",
		ArgsUsage: "SHARD.json...",
		Flags:     []cli.Flag{outputFlag("-", "write the merged results to `FILE` (- for stdout)")},
		Action:    action(parseStudyMergeOptions, run, runStudyMerge),
	}
}

// studyReportCommand is `study report`; run (nil: runStudyReport) writes
// the pages of the parsed studyReportOptions.
func studyReportCommand(run func(context.Context, *studyReportOptions) error) *cli.Command {
	return &cli.Command{
		Name:      "report",
		Usage:     "write " + pages.SummaryFile + " and a self-contained HTML scoreboard (" + pages.ScoreboardFile + ") from results.json",
		ArgsUsage: "RESULTS.json",
		Flags: []cli.Flag{outputFlag(".", "write into directory `DIR`"),
			&cli.StringFlag{Name: "previous", Usage: "also write " + pages.ChangesFile + ": what changed since the previous run in `RESULTS.json`"}},
		Action: action(parseStudyReportOptions, run, runStudyReport),
	}
}

// studyImportCommand is `study import`; run (nil: runStudyImport) imports
// the parsed studyImportOptions.
func studyImportCommand(run func(context.Context, *studyImportOptions) error) *cli.Command {
	return &cli.Command{
		Name:      "import",
		Usage:     "turn a saved MCP Registry list (GET /v0.1/servers) into a servers.json",
		ArgsUsage: "REGISTRY.json",
		Description: "REGISTRY.json is the body of the registry's GET /v0.1/servers (server.json documents under\n" +
			"\"servers\"), or a JSON array of such pages. Each server's latest version becomes a row: npm packages\n" +
			"run with npx -y -- NAME@VERSION, pypi with uvx --from NAME==VERSION NAME, oci with docker run -i\n" +
			"--rm -- IMAGE, packageArguments after the package; remotes become url rows. Registry text is data:\n" +
			"a name or version outside its registry's grammar (npm names, PEP 508 and PEP 440, image references,\n" +
			"semantic versions) makes an excluded row; runtimeArguments pass only when known (npx: -y and\n" +
			"--node-options memory limits; uvx: --python VERSION; docker: options that stay inside the\n" +
			"container); those that widen a container's reach are dropped unless --allow-container-reach.\n" +
			"A second package or remote is a variant_of row, the release before the latest a previous_of row.\n" +
			"Secret environment variables, and required ones without a default, are listed as \"credentials\"\n" +
			"and left unset; a required one with a default is set to it. What cannot be launched is kept as\n" +
			"an \"excluded\" row with the reason. The output is sorted and does not depend on the order of the\n" +
			"input.\n\n" +
			exitCodes("", false),
		Flags: []cli.Flag{
			outputFlag("-", "write servers.json to `FILE` (- for stdout)"),
			&cli.StringFlag{Name: "pypi", Usage: "launch PyPI packages with `HOW`: uvx, or venv (pypi/NAME/venv/bin/SCRIPT, which study install fills)", DefaultText: "uvx when it is on PATH, else venv"},
			&cli.BoolFlag{Name: "allow-container-reach", Usage: "keep the docker runtime arguments that widen a container's reach (mounts, --privileged, host namespaces, devices, capabilities, ports)"},
		},
		Action: action(parseStudyImportOptions, run, runStudyImport),
	}
}

// studySpec is a servers.json given as a command's one argument.
type studySpec struct {
	// path names it as given, data is its bytes, dir its directory made
	// absolute (${SPEC_DIR}) and spec what it parses to.
	path, dir string
	data      []byte
	spec      *studies.Spec
}

// parseStudySpec reads and parses the one servers.json that command (as
// its usage messages name it) takes, its flags before or after it.
func parseStudySpec(c *cmdLine, command string) (studySpec, error) {
	args, err := interspersed(c)
	if err != nil {
		return studySpec{}, err
	}
	if len(args) != 1 {
		return studySpec{}, usageErr("%s: give exactly one servers.json", command)
	}
	return readStudySpec(args[0], command)
}

// readStudySpec reads and parses the servers.json at path for command.
func readStudySpec(path, command string) (studySpec, error) {
	s := studySpec{path: path}
	var err error
	if s.data, err = inputfile.Read(s.path); err != nil {
		return studySpec{}, usageErr("%s: %v", command, err)
	}
	if s.dir, err = filepath.Abs(filepath.Dir(s.path)); err != nil {
		return studySpec{}, exitErr(exitInternal, err)
	}
	if s.spec, err = studies.ParseSpec(s.data, s.dir); err != nil {
		return studySpec{}, exitErr(exitUsage, err)
	}
	return s, nil
}

// studyRunOptions is what one `mcpdrill study run` asks for.
type studyRunOptions struct {
	env
	out outputFormat
	studySpec
	// output is -o: where results.json goes ("-" or "": stdout).
	output string
	// quiet is --quiet: no progress on stderr.
	quiet bool
	// run are the study's options but for Progress, which runStudy sets.
	run studies.Options
}

// parseStudyRunOptions reads and checks study run's flags and its
// servers.json; problems are usage errors.
func parseStudyRunOptions(c *cmdLine) (*studyRunOptions, error) {
	s, err := parseStudySpec(c, "study run")
	if err != nil {
		return nil, err
	}
	out, err := outputOptions(c)
	if err != nil {
		return nil, err
	}
	o := &studyRunOptions{out: out, studySpec: s, output: c.String("output"), quiet: c.Bool("quiet"), run: studies.Options{
		Jobs:                 c.Int("jobs"),
		Deadline:             c.Duration("timeout"),
		RequestTimeout:       c.Duration("request-timeout"),
		SkipSecondConnection: c.Bool("no-second-connection"),
		ToolVersion:          version,
		Commit:               buildCommit(),
		Population:           c.String("population"),
		GradePairs:           versiondrift.Grade,
		Only:                 c.StringSlice("only"),
	}}
	if out.format != "json" && c.IsSet("output") && (o.output == "-" || o.output == "") {
		return nil, usageErr("study run: --format %s writes to stdout: give -o FILE for results.json", out.format)
	}
	if o.run.Inputs, err = parseInputs(c.StringSlice("input")); err != nil {
		return nil, err
	}
	if o.run.Installed, err = installLogOf(c.String("install-log"), s.dir); err != nil {
		return nil, exitErr(exitUsage, err)
	}
	if ws := c.String("workspace"); ws != "" {
		if o.run.Workspace, err = filepath.Abs(ws); err != nil {
			return nil, exitErr(exitUsage, fmt.Errorf("--workspace: %w", err))
		}
	}
	if o.run.Jobs < 0 || o.run.Deadline <= 0 || o.run.RequestTimeout <= 0 {
		return nil, usageErr("study run: --jobs must be >= 0, --timeout and --request-timeout positive")
	}
	if sh := c.String("shard"); sh != "" {
		if o.run.Shard, err = studies.ParseShard(sh, nil); err != nil {
			return nil, exitErr(exitUsage, err)
		}
	}
	return o, nil
}

// runStudy runs the study and writes results.json and the chosen format.
func runStudy(ctx context.Context, o *studyRunOptions) error {
	so := o.run
	if !o.quiet {
		so.Progress = newProgress(o.stderr, o.stderrTTY)
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := o.now()
	res, err := studies.Run(ctx, o.spec, so)
	if err != nil {
		return exitErr(exitInternal, err)
	}
	var buf bytes.Buffer
	if err := studies.Write(&buf, res); err != nil {
		return exitErr(exitInternal, err)
	}
	if o.out.format == "json" || (o.output != "-" && o.output != "") {
		if err := writeOutput(o.stdout, o.output, buf.Bytes()); err != nil {
			return err
		}
	}
	if err := writeStudy(o.stdout, res, o.out, o.path, o.data, o.now().Sub(start)); err != nil {
		return err
	}
	return studyExit(res, o.out.threshold)
}

// studyResults places every row's findings at the row's entry in
// servers.json, the row's name as their subject.
func studyResults(res *studies.Results, path string, data []byte) []report.Result {
	lines := clientconfig.ServerLines(data)
	file := artifactPath(path)
	var rs []report.Result
	for _, row := range res.Servers {
		line := max(lines[row.Name], 1)
		for _, f := range row.Found() {
			rs = append(rs, report.Result{Finding: f, Location: report.Location{Path: file, Line: line}, Subject: row.Name})
		}
	}
	return rs
}

// writeStudy writes a finished study in a format other than json (which is
// results.json itself, written by the caller).
func writeStudy(w io.Writer, res *studies.Results, out outputFormat, path string, data []byte, took time.Duration) error {
	if out.format == "json" {
		return nil
	}
	rs := studyResults(res, path, data)
	if out.format == "table" {
		return renderStudy(w, res, rs, outputWidth(w))
	}
	o := report.Output{Command: "study run", Threshold: out.threshold, Results: rs, Duration: took}
	for _, row := range res.Servers {
		name := row.Name
		c := report.Check{Class: "servers", Name: name, Claims: func(r report.Result) bool { return r.Subject == name },
			Time: time.Duration(res.Meta.Servers[name].ScanMS) * time.Millisecond}
		switch row.Status {
		case studies.StatusFailed:
			c.Failed = "failed (" + row.Failure + "): " + row.Reason
		case studies.StatusSkipped:
			c.Skipped = row.Reason
		}
		o.Checks = append(o.Checks, c)
	}
	_, err := writeFindings(w, out, o)
	return err
}

// studyExit is 1 when --fail-on is set and a row failed or a finding
// reached the level.
func studyExit(res *studies.Results, threshold report.Severity) error {
	if threshold == "" {
		return nil
	}
	for _, row := range res.Servers {
		if row.Status == studies.StatusFailed || report.Fails(row.Found(), threshold) {
			return exitErr(exitFindings, nil)
		}
	}
	return nil
}

// renderStudy prints one line per server, then every finding with its
// server, the tables fitted to width.
func renderStudy(w io.Writer, res *studies.Results, rs []report.Result, width int) error {
	g := newGrid(gridColumn{name: "server"}, gridColumn{name: "status"}, gridColumn{name: "tools", label: true},
		gridColumn{name: "errors", label: true}, gridColumn{name: "warnings", label: true}, gridColumn{name: "info", label: true},
		gridColumn{name: "reason", long: true})
	for _, row := range res.Servers {
		c := report.Count(row.Found())
		status := row.Status
		if row.Failure != "" {
			status += " (" + row.Failure + ")"
		}
		g.add(row.Name, status, fmt.Sprint(len(row.Tools)), fmt.Sprint(c[report.SeverityError]),
			fmt.Sprint(c[report.SeverityWarn]), fmt.Sprint(c[report.SeverityInfo]), row.Reason)
	}
	if err := g.render(w, width); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return renderResults(w, rs, width)
}

// studyMergeOptions is what one `mcpdrill study merge` asks for.
type studyMergeOptions struct {
	env
	// parts are the shard results, read and schema-checked.
	parts []*studies.Results
	// output is -o ("-" or "": stdout).
	output string
}

// parseStudyMergeOptions reads and checks every shard results.json;
// problems are usage errors.
func parseStudyMergeOptions(c *cmdLine) (*studyMergeOptions, error) {
	args, err := interspersed(c)
	if err != nil {
		return nil, err
	}
	if len(args) == 0 {
		return nil, usageErr("study merge: give the shard results to merge")
	}
	o := &studyMergeOptions{output: c.String("output")}
	for _, p := range args {
		r, err := readResults(p)
		if err != nil {
			return nil, exitErr(exitUsage, err)
		}
		o.parts = append(o.parts, r)
	}
	return o, nil
}

// runStudyMerge merges the shards and writes the merged results.json.
func runStudyMerge(ctx context.Context, o *studyMergeOptions) error {
	merged, err := studies.Merge(o.parts)
	if err != nil {
		return exitErr(exitUsage, err)
	}
	var buf bytes.Buffer
	if err := studies.Write(&buf, merged); err != nil {
		return exitErr(exitInternal, err)
	}
	return writeOutput(o.stdout, o.output, buf.Bytes())
}

// studyReportOptions is what one `mcpdrill study report` asks for.
type studyReportOptions struct {
	env
	// results is the results.json, read and schema-checked.
	results *studies.Results
	// dir is -o: the directory the pages go into.
	dir string
	// previous is --previous: a previous run of the study, read and
	// schema-checked, for CHANGES.md; nil without the flag.
	previous *studies.Results
}

// parseStudyReportOptions reads and checks the one results.json; problems
// are usage errors.
func parseStudyReportOptions(c *cmdLine) (*studyReportOptions, error) {
	args, err := interspersed(c)
	if err != nil {
		return nil, err
	}
	if len(args) != 1 {
		return nil, usageErr("study report: give exactly one results.json")
	}
	r, err := readResults(args[0])
	if err != nil {
		return nil, exitErr(exitUsage, err)
	}
	o := &studyReportOptions{results: r, dir: c.String("output")}
	if p := c.String("previous"); p != "" {
		if o.previous, err = readResults(p); err != nil {
			return nil, exitErr(exitUsage, err)
		}
	}
	return o, nil
}

// runStudyReport writes the study's pages into the directory.
func runStudyReport(_ context.Context, o *studyReportOptions) error {
	ps, err := pages.Pages(o.results)
	if err != nil {
		return exitErr(exitInternal, err)
	}
	if o.previous != nil {
		ps[pages.ChangesFile] = pages.Changes(o.previous, o.results)
	}
	if err := os.MkdirAll(o.dir, 0o755); err != nil {
		return exitErr(exitInternal, err)
	}
	for name, b := range ps {
		if err := outfile.Write(filepath.Join(o.dir, name), b, 0o644); err != nil {
			return exitErr(exitInternal, err)
		}
	}
	return nil
}

// studyImportOptions is what one `mcpdrill study import` asks for.
type studyImportOptions struct {
	env
	// path names the saved registry list and data is its bytes.
	path string
	data []byte
	// output is -o ("-" or "": stdout).
	output string
	// imp are the import's options, --pypi resolved.
	imp registry.Options
}

// parseStudyImportOptions reads the saved registry list and checks the
// flags; problems are usage errors.
func parseStudyImportOptions(c *cmdLine) (*studyImportOptions, error) {
	args, err := interspersed(c)
	if err != nil {
		return nil, err
	}
	if len(args) != 1 {
		return nil, usageErr("study import: give exactly one saved registry list (REGISTRY.json)")
	}
	o := &studyImportOptions{path: args[0], output: c.String("output")}
	if o.data, err = inputfile.Read(o.path); err != nil {
		return nil, usageErr("study import: %v", err)
	}
	switch how := c.String("pypi"); how {
	case "":
		_, err := exec.LookPath("uvx")
		o.imp.PyPIVenv = err != nil
	case "uvx", "venv":
		o.imp.PyPIVenv = how == "venv"
	default:
		return nil, usageErr("study import: --pypi %q: want uvx or venv", how)
	}
	o.imp.ContainerReach = c.Bool("allow-container-reach")
	return o, nil
}

// runStudyImport imports the registry list and writes servers.json.
func runStudyImport(ctx context.Context, o *studyImportOptions) error {
	im, err := registry.Import(o.data, o.imp)
	if err != nil {
		return exitErr(exitUsage, fmt.Errorf("%s: %w", o.path, err))
	}
	var buf bytes.Buffer
	if err := studies.WriteServers(&buf, im.Servers); err != nil {
		return exitErr(exitInternal, err)
	}
	excluded := 0
	for _, e := range im.Servers {
		if e.Excluded != "" {
			excluded++
		}
	}
	pypi := "uvx"
	if o.imp.PyPIVenv {
		pypi = "venvs"
	}
	fmt.Fprintf(o.stderr, "study import: %d registry servers (%d documents): %d rows, %d excluded; PyPI packages run from %s\n",
		im.Names, im.Documents, len(im.Servers), excluded, pypi)
	what := "dropped (they widen the container's reach into this machine; --allow-container-reach keeps them)"
	if im.Kept {
		what = "kept (--allow-container-reach)"
	}
	for _, d := range im.Dropped {
		fmt.Fprintf(o.stderr, "  %s: %q %s\n", d.Row, d.Args, what)
	}
	return writeOutput(o.stdout, o.output, buf.Bytes())
}

// maxResults bounds a results.json read (by merge and report): 1 GiB,
// where the 64 MiB of other inputs would stop a study at about 6,000
// servers (about 11 KB a row).
const maxResults = 1 << 30

// readResults reads and schema-checks one results.json (studies.Load).
func readResults(path string) (*studies.Results, error) {
	data, err := inputfile.ReadLimit(path, maxResults)
	if err != nil {
		return nil, err
	}
	r, err := studies.Load(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// writeOutput writes b to path ("-" is stdout) with outfile.Write: a
// regular file is replaced atomically, so an interrupted run never leaves
// half a results.json; a device or FIFO is written to as it is.
func writeOutput(stdout io.Writer, path string, b []byte) error {
	if path == "-" || path == "" {
		_, err := stdout.Write(b)
		return err
	}
	if err := outfile.Write(path, b, 0o644); err != nil {
		return exitErr(exitInternal, err)
	}
	return nil
}

// newProgress reports progress: a live status line on a terminal, one plain
// line per finished server otherwise.
func newProgress(w io.Writer, tty bool) func(studies.Event) {
	return func(ev studies.Event) {
		if ev.Kind == studies.EventDone {
			if tty {
				fmt.Fprint(w, "\r\033[K")
			}
			fmt.Fprintf(w, "study: [%d/%d] %s: %s in %.1fs\n", ev.Done, ev.Total, safetext.Text(ev.Name), safetext.Text(rowOutcome(ev.Row)), ev.Elapsed.Seconds())
		}
		if tty {
			running := safetext.Text(strings.Join(ev.Running, ", "))
			if len(running) > 60 {
				running = running[:57] + "..."
			}
			fmt.Fprintf(w, "\r\033[K[%d/%d] running: %s", ev.Done, ev.Total, running)
			if ev.Done == ev.Total {
				fmt.Fprint(w, "\r\033[K")
			}
		}
	}
}

func rowOutcome(r *studies.Row) string {
	if r == nil {
		return "?"
	}
	switch r.Status {
	case studies.StatusScanned:
		return fmt.Sprintf("scanned, %d tools", len(r.Tools))
	case studies.StatusFailed:
		reason := r.Reason
		if len(reason) > 120 {
			reason = reason[:117] + "..."
		}
		return "failed (" + r.Failure + "): " + reason
	}
	return r.Status
}
