package main

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestExecuteMapsErrors is the test of the one exit-code mapping: what an
// action returns becomes the process's exit code and stderr line.
func TestExecuteMapsErrors(t *testing.T) {
	maps := func(name string, returned error, code int, stderr string) {
		t.Run(name, func(t *testing.T) {
			app := &cli.App{Name: "mcpdrill", Action: func(*cli.Context) error { return returned }, ExitErrHandler: func(*cli.Context, error) {}}
			var got bytes.Buffer
			app.Writer, app.ErrWriter = &bytes.Buffer{}, &got
			if c := execute(app, []string{"mcpdrill"}, &got); c != code {
				t.Errorf("exit code %d, want %d", c, code)
			}
			if got.String() != stderr {
				t.Errorf("stderr %q, want %q", got.String(), stderr)
			}
		})
	}
	maps("success", nil, exitOK, "")
	maps("an untagged error is an internal error", errors.New("bad input"), exitInternal, "mcpdrill: bad input\n")
	maps("urfave's own refusal is a usage error", cli.Exit("No help topic for 'x'", 3), exitUsage, "mcpdrill: No help topic for 'x'\n")
	maps("a usage error", usageErr("--seed takes a number, got %q", "x"), exitUsage, "mcpdrill: --seed takes a number, got \"x\"\n")
	maps("findings exit silently", exitErr(exitFindings, nil), exitFindings, "")
	maps("unreachable", exitErr(exitUnreachable, errors.New("connection refused")), exitUnreachable, "mcpdrill: connection refused\n")
	maps("wrapped: the code survives, the inner message is printed",
		fmt.Errorf("scan: %w", exitErr(exitInternal, errors.New("encode"))), exitInternal, "mcpdrill: encode\n")
}
