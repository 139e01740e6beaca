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
	cases := []struct {
		name       string
		err        error
		code       int
		wantStderr string
	}{
		{"success", nil, exitOK, ""},
		{"a plain error is a usage error", errors.New("bad input"), exitUsage, "mcpdrill: bad input\n"},
		{"a usage error", usageErr("--seed takes a number, got %q", "x"), exitUsage, "mcpdrill: --seed takes a number, got \"x\"\n"},
		{"findings exit silently", exitErr(exitFindings, nil), exitFindings, ""},
		{"unreachable", exitErr(exitUnreachable, errors.New("connection refused")), exitUnreachable, "mcpdrill: connection refused\n"},
		{"wrapped: the code survives, the inner message is printed", fmt.Errorf("scan: %w", exitErr(exitInternal, errors.New("encode"))), exitInternal, "mcpdrill: encode\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			app := &cli.App{Name: "mcpdrill", Action: func(*cli.Context) error { return tc.err }}
			var stderr bytes.Buffer
			app.Writer, app.ErrWriter = &bytes.Buffer{}, &stderr
			if code := execute(app, []string{"mcpdrill"}, &stderr); code != tc.code {
				t.Errorf("exit code %d, want %d", code, tc.code)
			}
			if stderr.String() != tc.wantStderr {
				t.Errorf("stderr %q, want %q", stderr.String(), tc.wantStderr)
			}
		})
	}
}
