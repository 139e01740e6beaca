package main

import (
	"bytes"
	"os"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/mcptest/hostile"
	"github.com/mcpdrill/mcpdrill/internal/testbed"
)

func TestMain(m *testing.M) {
	// Re-executed as a stdio testbed server by testbed.ChildCommand.
	if code, ok := testbed.ServeChild(); ok {
		os.Exit(code)
	}
	// Re-executed as the hostile stdio server (TestHostileText).
	if code, ok := hostile.ServeChild(); ok {
		os.Exit(code)
	}
	// Tables are fitted to the default width, whatever terminal runs the
	// tests (outputWidth reads $COLUMNS, and so do the subprocesses).
	os.Unsetenv("COLUMNS")
	os.Exit(m.Run())
}

// runCLI runs the CLI in-process and returns the exit code, stdout and stderr.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	app := newApp()
	var out, errOut bytes.Buffer
	app.Writer, app.ErrWriter = &out, &errOut
	code = execute(app, append([]string{"mcpdrill"}, args...), &errOut)
	return code, out.String(), errOut.String()
}
