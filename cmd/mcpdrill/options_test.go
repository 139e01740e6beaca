package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mcpdrill/mcpdrill/report"
)

// withRun is the CLI with one command replaced by a constructor given run.
func withRun(name string, cmd *cli.Command) *cli.App {
	cmds := commands()
	for i, c := range cmds {
		if c.Name == name {
			cmds[i] = cmd
		}
	}
	return appOf(cmds)
}

// parseScan runs `mcpdrill scan ARGS` with a run function that keeps the
// parsed options and scans nothing.
func parseScan(t *testing.T, args ...string) (*scanOptions, int, string) {
	t.Helper()
	var got *scanOptions
	app := withRun("scan", scanCommand(func(_ *cli.Context, o *scanOptions) error { got = o; return nil }))
	var stderr bytes.Buffer
	app.Writer, app.ErrWriter = &bytes.Buffer{}, &stderr
	code := execute(app, append([]string{"mcpdrill", "scan"}, args...), &stderr)
	return got, code, stderr.String()
}

// TestScanFlagsParseIntoOptions: argv becomes scanOptions (nothing is
// started: the command would not exist), and bad flags are usage errors
// before anything runs.
func TestScanFlagsParseIntoOptions(t *testing.T) {
	o, code, stderr := parseScan(t, "--format", "sarif", "--fail-on", "warn", "--deadline", "7s", "--no-second-connection",
		"--probe-any-tool", "--sarif-file", "tools.json", "--target-class", "production", "--", "no-such-server", "--flag")
	if code != exitOK || o == nil {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if o.out.format != "sarif" || o.out.threshold != report.SeverityWarn || o.sarifFile != "tools.json" {
		t.Errorf("output options %+v, sarif file %q", o.out, o.sarifFile)
	}
	if o.scan.Deadline != 7*time.Second || !o.scan.SkipSecondConnection || o.scan.SkipOriginCheck || !o.scan.ProbeAnyTool {
		t.Errorf("scan options %+v", o.scan)
	}
	if len(o.targets) != 1 || strings.Join(o.targets[0].cfg.Command, " ") != "no-such-server --flag" || o.targets[0].gate.class != "production" {
		t.Errorf("targets %+v", o.targets)
	}

	for _, bad := range [][]string{
		{"--format", "yaml", "--", "x"},
		{"--fail-on", "sometimes", "--", "x"},
		{"--target-class", "galaxy", "--", "x"},
		{"--execute", "--", "x"},
		{"--url", "ftp://127.0.0.1/mcp"},
		{"--deadline", "-1s", "--", "x"},
		{},
	} {
		if o, code, _ := parseScan(t, bad...); code != exitUsage || o != nil {
			t.Errorf("%q: exit %d, options %v; want a usage error before running", bad, code, o)
		}
	}
}

// TestDriftFlagsParseIntoOptions: the manifest is read and parsed and the
// target gated before anything connects; flags may follow MANIFEST.
func TestDriftFlagsParseIntoOptions(t *testing.T) {
	parse := func(args ...string) (*driftOptions, int, string) {
		var got *driftOptions
		app := withRun("drift", driftCommand(func(_ *cli.Context, o *driftOptions) error { got = o; return nil }))
		var stderr bytes.Buffer
		app.Writer, app.ErrWriter = &bytes.Buffer{}, &stderr
		code := execute(app, append([]string{"mcpdrill", "drift"}, args...), &stderr)
		return got, code, stderr.String()
	}
	o, code, stderr := parse(ciBase, "--format", "junit", "--url", "http://127.0.0.1:9/mcp", "--fail-on", "info")
	if code != exitOK || o == nil {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if o.manifestPath != ciBase || len(o.manifest.Tools) == 0 || o.out.format != "junit" || o.out.threshold != report.SeverityInfo || o.live.cfg.URL != "http://127.0.0.1:9/mcp" {
		t.Errorf("options %+v", o)
	}
	for _, bad := range [][]string{
		{},
		{"no-such-manifest.json", "--url", "http://127.0.0.1:9/mcp"},
		{"testdata/transcripts/help.txtar", "--url", "http://127.0.0.1:9/mcp"},
		{ciBase},
		{ciBase, "--url", "http://127.0.0.1:9/mcp", "--format", "yaml"},
	} {
		if o, code, _ := parse(bad...); code != exitUsage || o != nil {
			t.Errorf("%q: exit %d, options %v; want a usage error before running", bad, code, o)
		}
	}
}
