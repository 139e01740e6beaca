package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mcpdrill/mcpdrill/report"
)

// parseInto runs `mcpdrill ARGV` on the CLI whose command mk makes (argv's
// first word, or a subcommand of it) runs with a run function that keeps
// the parsed options and runs nothing. It returns them (nil when parsing
// failed), the exit code and stderr.
func parseInto[O any](t *testing.T, mk func(func(*cli.Context, *O) error) *cli.Command, argv ...string) (*O, int, string) {
	t.Helper()
	var got *O
	cmd := mk(func(_ *cli.Context, o *O) error { got = o; return nil })
	cmds := commands()
	replaced := false
	for i, c := range cmds {
		if c.Name != argv[0] {
			continue
		}
		if cmd.Name == c.Name {
			cmds[i], replaced = cmd, true
		}
		for j, sub := range c.Subcommands {
			if sub.Name == cmd.Name {
				c.Subcommands[j], replaced = cmd, true
			}
		}
	}
	if !replaced {
		t.Fatalf("no command %q under %q", cmd.Name, argv[0])
	}
	app := appOf(cmds)
	var stderr bytes.Buffer
	app.Writer, app.ErrWriter = &bytes.Buffer{}, &stderr
	code := execute(app, append([]string{"mcpdrill"}, argv...), &stderr)
	return got, code, stderr.String()
}

// refused reports whether `mcpdrill ARGV` is a usage error found while
// parsing, before mk's run would run.
func refused[O any](t *testing.T, mk func(func(*cli.Context, *O) error) *cli.Command, argv ...string) bool {
	t.Helper()
	o, code, _ := parseInto(t, mk, argv...)
	return code == exitUsage && o == nil
}

// parseScan parses `mcpdrill scan ARGS` into scanOptions.
func parseScan(t *testing.T, args ...string) (*scanOptions, int, string) {
	t.Helper()
	return parseInto(t, scanCommand, append([]string{"scan"}, args...)...)
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
		return parseInto(t, driftCommand, append([]string{"drift"}, args...)...)
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
