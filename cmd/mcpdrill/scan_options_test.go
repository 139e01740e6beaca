package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mcpdrill/mcpdrill/report"
)

// parseScan runs `mcpdrill scan ARGS` with a run function that keeps the
// parsed options and scans nothing.
func parseScan(t *testing.T, args ...string) (*scanOptions, int, string) {
	t.Helper()
	var got *scanOptions
	cmds := commands()
	for i, c := range cmds {
		if c.Name == "scan" {
			cmds[i] = scanCommand(func(_ *cli.Context, o *scanOptions) error { got = o; return nil })
		}
	}
	app := appOf(cmds)
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
