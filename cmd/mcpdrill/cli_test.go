package main

import (
	"bytes"
	"errors"
	"os"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/testbed"
)

func TestMain(m *testing.M) {
	// Re-executed as a stdio testbed server by testbed.ChildCommand.
	if code, ok := testbed.ServeChild(); ok {
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
	err := app.Run(append([]string{"mcpdrill"}, args...))
	code = exitOK
	if err != nil {
		var ee *exitError
		if errors.As(err, &ee) {
			code = ee.code
			if ee.err != nil {
				errOut.WriteString(ee.err.Error())
			}
		} else {
			code = exitUsage
			errOut.WriteString(err.Error())
		}
	}
	return code, out.String(), errOut.String()
}
