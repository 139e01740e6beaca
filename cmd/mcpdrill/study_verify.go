package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mcpdrill/mcpdrill/studies"
	"github.com/mcpdrill/mcpdrill/studies/install"
)

// studyVerifyCommand is `study verify`; run (nil: runStudyVerify) checks
// the row the parsed studyVerifyOptions name.
func studyVerifyCommand(run func(context.Context, *studyVerifyOptions) error) *cli.Command {
	return &cli.Command{
		Name:      "verify",
		Usage:     "reinstall one servers.json row alone in a scratch directory, run it again, and say its outcome and why",
		ArgsUsage: "SERVERS.json ROW",
		Description: "ROW is a server's name in SERVERS.json. What the row's install pins (its npm project's\n" +
			"package.json, package-lock.json and .npmrc, or a PyPI requirements.txt) is copied into a\n" +
			"scratch study directory and installed there alone, as study install does (scripts off,\n" +
			"package caches shared, a tree of its own); the row is then scanned as study run does and\n" +
			"classified by the study's rules. The output names the outcome, the rule and the line that\n" +
			"decided it, the reinstall, and the server's last lines on stderr. With --expect OUTCOME the\n" +
			"command exits 1 when the outcome differs.\n\n" +
			exitCodes("with --expect OUTCOME: the row's outcome is another", false),
		Flags: append([]cli.Flag{
			&cli.DurationFlag{Name: "timeout", Value: time.Minute, Usage: "deadline for the row's scan"},
			&cli.DurationFlag{Name: "request-timeout", Value: 10 * time.Second, Usage: "per-request timeout"},
			&cli.DurationFlag{Name: "install-timeout", Value: 10 * time.Minute, Usage: "bound on the reinstall"},
			&cli.StringFlag{Name: "cache-dir", Usage: "package managers' caches in `DIR`", DefaultText: ".cache beside servers.json"},
			&cli.StringFlag{Name: "find-links", Usage: "install PyPI packages from `DIR` alone (pip --no-index --find-links)"},
			&cli.BoolFlag{Name: "scripts", Usage: "run npm install scripts (off in a study: their code runs at install time)"},
			&cli.StringFlag{Name: "expect", Usage: "exit 1 unless the outcome is `OUTCOME`"},
			&cli.BoolFlag{Name: "keep", Usage: "keep the scratch study directory and print where it is"},
		}, placeholderFlags("")...),
		Action: action(parseStudyVerifyOptions, run, runStudyVerify),
	}
}

// studyVerifyOptions is what one `mcpdrill study verify` asks for.
type studyVerifyOptions struct {
	env
	studySpec
	// row names the server; expect is --expect.
	row, expect string
	verify      install.VerifyOptions
}

// parseStudyVerifyOptions reads and checks study verify's flags, its
// servers.json and its row; problems are usage errors.
func parseStudyVerifyOptions(c *cmdLine) (*studyVerifyOptions, error) {
	args, err := interspersed(c)
	if err != nil {
		return nil, err
	}
	if len(args) != 2 {
		return nil, usageErr("study verify: give a servers.json and the name of one of its servers")
	}
	s, err := readStudySpec(args[0], "study verify")
	if err != nil {
		return nil, err
	}
	o := &studyVerifyOptions{studySpec: s, row: args[1], expect: c.String("expect"), verify: install.VerifyOptions{
		Keep:    c.Bool("keep"),
		Install: install.Options{Timeout: c.Duration("install-timeout"), CacheDir: c.String("cache-dir"), Scripts: c.Bool("scripts")},
		Run:     studies.Options{Deadline: c.Duration("timeout"), RequestTimeout: c.Duration("request-timeout"), ToolVersion: version},
	}}
	if !slices.ContainsFunc(s.spec.Servers, func(e studies.Entry) bool { return e.Name == o.row }) {
		return nil, usageErr("study verify: %s has no server %q", s.path, o.row)
	}
	if o.expect != "" && !slices.Contains(studies.Outcomes, o.expect) {
		return nil, usageErr("study verify: --expect %q: want one of %v", o.expect, studies.Outcomes)
	}
	if fl := c.String("find-links"); fl != "" {
		if o.verify.Install.FindLinks, err = filepath.Abs(fl); err != nil {
			return nil, exitErr(exitUsage, err)
		}
	}
	if o.verify.Run.Inputs, err = parseInputs(c.StringSlice("input")); err != nil {
		return nil, err
	}
	if ws := c.String("workspace"); ws != "" {
		if o.verify.Run.Workspace, err = filepath.Abs(ws); err != nil {
			return nil, exitErr(exitUsage, fmt.Errorf("--workspace: %w", err))
		}
	}
	if o.verify.Run.Deadline <= 0 || o.verify.Run.RequestTimeout <= 0 || o.verify.Install.Timeout <= 0 {
		return nil, usageErr("study verify: --timeout, --request-timeout and --install-timeout must be positive")
	}
	return o, nil
}

// runStudyVerify reinstalls and runs the row, and prints what it found.
func runStudyVerify(ctx context.Context, o *studyVerifyOptions) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	v, err := install.Verify(ctx, o.spec, o.row, o.verify)
	if err != nil {
		return exitErr(exitInternal, err)
	}
	var b bytes.Buffer
	if err := install.WriteVerified(&b, o.row, v); err != nil {
		return exitErr(exitInternal, err)
	}
	if o.verify.Keep {
		fmt.Fprintf(&b, "  kept:    %s\n", v.Dir)
	}
	if _, err := o.stdout.Write(b.Bytes()); err != nil {
		return exitErr(exitInternal, err)
	}
	if o.expect != "" && v.Row.Outcome != o.expect {
		return exitErr(exitFindings, fmt.Errorf("study verify: %s is %s, not %s", o.row, v.Row.Outcome, o.expect))
	}
	return nil
}
