package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mcpdrill/mcpdrill/internal/inputfile"
	"github.com/mcpdrill/mcpdrill/internal/outfile"
	"github.com/mcpdrill/mcpdrill/studies"
)

func init() {
	register(&cli.Command{
		Name:  "study",
		Usage: "scan many servers from a servers.json, merge shards, and report",
		Subcommands: []*cli.Command{
			{
				Name:      "run",
				Usage:     "scan every server of a servers.json (mcpServers format) into results.json",
				ArgsUsage: "SERVERS.json",
				Description: "Each entry is a stdio server (command, args, env, cwd) or an HTTP one (url, headers); an\n" +
					"HTTP entry may carry \"launch\" to start a local process first, with ${PORT} a free loopback port.\n" +
					"${NAME} expands from the environment; ${SPEC_DIR} is the directory of servers.json and\n" +
					"${WORK_DIR} a scratch directory per server (also the default working directory). Relative\n" +
					"commands with a slash resolve against ${SPEC_DIR}. Every server becomes a row, failures\n" +
					"included; rows are sorted by name. Exit 0 when the study completed, whatever the servers did.",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "-", Usage: "write results.json to `FILE` (- for stdout)"},
					&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Usage: "scan `N` servers at once", DefaultText: "number of CPUs"},
					&cli.DurationFlag{Name: "timeout", Value: 2 * time.Minute, Usage: "per-server deadline for the whole scan"},
					&cli.DurationFlag{Name: "request-timeout", Value: 10 * time.Second, Usage: "per-request timeout"},
					&cli.StringFlag{Name: "shard", Usage: "run shard `K/N` only (every N-th server in name order, from the K-th)"},
					&cli.BoolFlag{Name: "no-second-connection", Usage: "skip the tool-set stability check (one connection per server)"},
					&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress on stderr"},
				},
				Action: studyRun,
			},
			{
				Name:      "merge",
				Usage:     "join shard results into one results.json, identical to an unsharded run outside meta",
				ArgsUsage: "SHARD.json...",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "-", Usage: "write the merged results to `FILE` (- for stdout)"},
				},
				Action: studyMerge,
			},
			{
				Name:      "report",
				Usage:     "write SUMMARY.md and a self-contained HTML scoreboard (index.html) from results.json",
				ArgsUsage: "RESULTS.json",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: ".", Usage: "write into directory `DIR`"},
				},
				Action: studyReport,
			},
		},
	})
}

func studyRun(c *cli.Context) error {
	args, err := interspersed(c)
	if err != nil {
		return err
	}
	if len(args) != 1 {
		return usageErr("study run: give exactly one servers.json")
	}
	path := args[0]
	data, err := inputfile.Read(path)
	if err != nil {
		return usageErr("study run: %v", err)
	}
	abs, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return exitErr(exitInternal, err)
	}
	spec, err := studies.ParseSpec(data, abs)
	if err != nil {
		return exitErr(exitUsage, err)
	}
	o := studies.Options{
		Jobs:                 c.Int("jobs"),
		Deadline:             c.Duration("timeout"),
		RequestTimeout:       c.Duration("request-timeout"),
		SkipSecondConnection: c.Bool("no-second-connection"),
		ToolVersion:          version,
	}
	if o.Jobs < 0 || o.Deadline <= 0 || o.RequestTimeout <= 0 {
		return usageErr("study run: --jobs must be >= 0, --timeout and --request-timeout positive")
	}
	if s := c.String("shard"); s != "" {
		if o.Shard, err = studies.ParseShard(s); err != nil {
			return exitErr(exitUsage, err)
		}
	}
	if !c.Bool("quiet") {
		o.Progress = newProgress(c.App.ErrWriter)
	}
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := studies.Run(ctx, spec, o)
	if err != nil {
		return exitErr(exitInternal, err)
	}
	var buf bytes.Buffer
	if err := studies.Write(&buf, res); err != nil {
		return exitErr(exitInternal, err)
	}
	return writeOutput(c, c.String("output"), buf.Bytes())
}

func studyMerge(c *cli.Context) error {
	args, err := interspersed(c)
	if err != nil {
		return err
	}
	if len(args) == 0 {
		return usageErr("study merge: give the shard results to merge")
	}
	var parts []*studies.Results
	for _, p := range args {
		r, err := readResults(p)
		if err != nil {
			return exitErr(exitUsage, err)
		}
		parts = append(parts, r)
	}
	merged, err := studies.Merge(parts)
	if err != nil {
		return exitErr(exitUsage, err)
	}
	var buf bytes.Buffer
	if err := studies.Write(&buf, merged); err != nil {
		return exitErr(exitInternal, err)
	}
	return writeOutput(c, c.String("output"), buf.Bytes())
}

func studyReport(c *cli.Context) error {
	args, err := interspersed(c)
	if err != nil {
		return err
	}
	if len(args) != 1 {
		return usageErr("study report: give exactly one results.json")
	}
	r, err := readResults(args[0])
	if err != nil {
		return exitErr(exitUsage, err)
	}
	dir := c.String("output")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return exitErr(exitInternal, err)
	}
	var md, page bytes.Buffer
	if err := studies.Markdown(&md, r); err != nil {
		return exitErr(exitInternal, err)
	}
	if err := studies.HTML(&page, r); err != nil {
		return exitErr(exitInternal, err)
	}
	for name, b := range map[string][]byte{"SUMMARY.md": md.Bytes(), "index.html": page.Bytes()} {
		if err := outfile.Write(filepath.Join(dir, name), b, 0o644); err != nil {
			return exitErr(exitInternal, err)
		}
	}
	return nil
}

// readResults reads and schema-checks one results.json.
func readResults(path string) (*studies.Results, error) {
	data, err := inputfile.Read(path)
	if err != nil {
		return nil, err
	}
	if err := studies.Validate(data); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	r, err := studies.Read(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// writeOutput writes b to path ("-" is stdout) with outfile.Write: a
// regular file is replaced atomically, so an interrupted run never leaves
// half a results.json; a device or FIFO is written to as it is.
func writeOutput(c *cli.Context, path string, b []byte) error {
	if path == "-" || path == "" {
		_, err := c.App.Writer.Write(b)
		return err
	}
	if err := outfile.Write(path, b, 0o644); err != nil {
		return exitErr(exitInternal, err)
	}
	return nil
}

// newProgress reports progress: a live status line on a terminal, one plain
// line per finished server otherwise.
func newProgress(w io.Writer) func(studies.Event) {
	tty := false
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			tty = true
		}
	}
	return func(ev studies.Event) {
		if ev.Kind == studies.EventDone {
			if tty {
				fmt.Fprint(w, "\r\033[K")
			}
			fmt.Fprintf(w, "study: [%d/%d] %s: %s in %.1fs\n", ev.Done, ev.Total, ev.Name, rowOutcome(ev.Row), ev.Elapsed.Seconds())
		}
		if tty {
			running := strings.Join(ev.Running, ", ")
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
