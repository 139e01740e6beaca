package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrill/mcpdrill/drift"
	"github.com/mcpdrill/mcpdrill/report"
)

// testEnv is an env for a run called without urfave/cli: its output in
// buffers, a fixed clock and an empty environment.
func testEnv() (env, *bytes.Buffer, *bytes.Buffer) {
	var stdout, stderr bytes.Buffer
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return env{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr,
		now: func() time.Time { return at }, lookupEnv: func(string) (string, bool) { return "", false }}, &stdout, &stderr
}

// loadTestState is the drift state of a tools/list result.
func loadTestState(t *testing.T, manifest string) *drift.Capture {
	t.Helper()
	c, err := drift.LoadState([]byte(manifest))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestRunDriftCheckWithoutCLI: `drift check` run from options built here,
// no command line parsed: a property that became required is a breaking change
// (exit 1) the report names; the same state twice is no drift (exit 0).
func TestRunDriftCheckWithoutCLI(t *testing.T) {
	const before = `{"tools":[{"name":"search","inputSchema":{"type":"object","properties":{"q":{"type":"string"},"limit":{"type":"integer"}}}}]}`
	const after = `{"tools":[{"name":"search","inputSchema":{"type":"object","properties":{"q":{"type":"string"},"limit":{"type":"integer"}},"required":["limit"]}}]}`
	tests := []struct {
		name     string
		current  string
		format   string
		exit     int
		contains []string
	}{
		{"became required", after, "table", exitFindings, []string{"mcpdrill drift check base.json vs current.json", "MCP-DRIFT-SCHEMA", "became required", "/properties/limit"}},
		{"became required, json", after, "json", exitFindings, []string{`"command": "drift check"`, `"breaking": true`}},
		{"no drift", before, "table", exitOK, []string{"No drift."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, stdout, stderr := testEnv()
			o := &driftCheckOptions{env: e, out: outputFormat{format: tt.format, threshold: report.SeverityError},
				baselinePath: "base.json", base: loadTestState(t, before), currentPath: "current.json", current: loadTestState(t, tt.current)}
			err := runDriftCheck(context.Background(), o)
			code := exitOK
			var ee *exitError
			switch {
			case errors.As(err, &ee):
				code = ee.code
			case err != nil:
				t.Fatalf("runDriftCheck: %v", err)
			}
			if code != tt.exit {
				t.Errorf("exit %d (%v), want %d\n%s", code, err, tt.exit, stdout)
			}
			for _, s := range tt.contains {
				if !strings.Contains(stdout.String(), s) {
					t.Errorf("stdout lacks %q:\n%s", s, stdout)
				}
			}
			if stderr.Len() != 0 {
				t.Errorf("stderr: %s", stderr)
			}
		})
	}
}
