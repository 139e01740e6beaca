package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/mcpdrill/mcpdrill/internal/jsonvalue"
	"github.com/mcpdrill/mcpdrill/studies"
	"github.com/mcpdrill/mcpdrill/studies/pages"
)

// defaultClientSpec is the client study's list of adapters.
const defaultClientSpec = "studies/clients/clients.json"

// studyClientsCommand is `study clients`; run (nil: runStudyClients) does
// the work once the flags are parsed.
func studyClientsCommand(run func(context.Context, *studyClientsOptions) error) *cli.Command {
	return &cli.Command{
		Name:      "clients",
		ArgsUsage: "[SPEC]",
		Usage:     "drill every MCP client library of a client study and write its matrix",
		Description: "Runs `mcpdrill client` (every scenario, stdio and HTTP) on each adapter listed in SPEC\n" +
			"(default " + defaultClientSpec + "; install its libraries first: npm ci and go build there,\n" +
			"see make study-clients) and writes results.json, SUMMARY.md and index.html to --output.\n\n" +
			exitCodes("a client could not be drilled", false),
		Flags: []cli.Flag{
			outputFlag("studies/clients", "write results.json, SUMMARY.md and index.html to `DIR`"),
			&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Value: 2, Usage: "drill at most `N` clients at once"},
			&cli.StringSliceFlag{Name: "only", Usage: "drill only client `NAME` (repeatable)"},
			&cli.Uint64Flag{Name: "seed", Usage: "seed `N` of the planted values"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress lines on stderr"},
		},
		Action: action(parseStudyClientsOptions, run, runStudyClients),
	}
}

// studyClientsOptions is what one `study clients` asks for.
type studyClientsOptions struct {
	env
	spec  string
	out   string
	run   studies.ClientRunOptions
	quiet bool
}

func parseStudyClientsOptions(c *cmdLine) (*studyClientsOptions, error) {
	if c.NArg() > 1 {
		return nil, usageErr("want at most one SPEC")
	}
	o := &studyClientsOptions{spec: defaultClientSpec, out: c.String("output"), quiet: c.Bool("quiet")}
	if c.NArg() == 1 {
		o.spec = c.Args().First()
	}
	if c.Int("jobs") < 1 {
		return nil, usageErr("--jobs must be at least 1")
	}
	o.run = studies.ClientRunOptions{Jobs: c.Int("jobs"), Only: c.StringSlice("only"), Seed: c.Uint64("seed")}
	return o, nil
}

func runStudyClients(ctx context.Context, o *studyClientsOptions) error {
	spec, err := studies.ReadClientSpec(o.spec)
	if err != nil {
		return usageErr("%v", err)
	}
	exe, err := os.Executable()
	if err != nil {
		return exitErr(exitInternal, err)
	}
	dir, err := filepath.Abs(filepath.Dir(o.spec))
	if err != nil {
		return exitErr(exitInternal, err)
	}
	ro := o.run
	ro.Dir, ro.ServerArgv = dir, []string{exe, "client-server"}
	if !o.quiet {
		ro.Progress = func(r studies.ClientRow) {
			if r.Error != "" {
				fmt.Fprintf(o.stderr, "mcpdrill study clients: %s: not drilled: %s\n", r.Name, r.Error)
				return
			}
			fmt.Fprintf(o.stderr, "mcpdrill study clients: %s: %d cells\n", r.Name, len(r.Results))
		}
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := studies.RunClients(ctx, spec, ro)
	if err != nil {
		return exitErr(exitInternal, err)
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return exitErr(exitInternal, err)
	}
	for name, write := range map[string]func(*os.File) error{
		"results.json": func(f *os.File) error { return jsonvalue.WriteIndented(f, res) },
		"SUMMARY.md":   func(f *os.File) error { return pages.ClientsMarkdown(f, res) },
		"index.html":   func(f *os.File) error { return pages.ClientsHTML(f, res) },
	} {
		f, err := os.Create(filepath.Join(o.out, name))
		if err != nil {
			return exitErr(exitInternal, err)
		}
		werr := write(f)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return exitErr(exitInternal, werr)
		}
	}
	for _, r := range res.Clients {
		if r.Error != "" {
			return exitErr(exitFindings, nil)
		}
	}
	return nil
}
