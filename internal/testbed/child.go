package testbed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
)

// EnvChild is the environment variable through which ChildCommand hands
// Options (as JSON) to a re-executed test binary.
const EnvChild = "MCPDRILL_TESTBED_CHILD"

// ChildCommand returns a command that re-executes the current binary (a test
// binary, typically) as a stdio testbed server with options o. The binary's
// TestMain must call ServeChild first:
//
//	func TestMain(m *testing.M) {
//		if code, ok := testbed.ServeChild(); ok {
//			os.Exit(code)
//		}
//		os.Exit(m.Run())
//	}
//
// Options.OnCrash does not cross the process boundary.
func ChildCommand(ctx context.Context, o Options) (*exec.Cmd, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("testbed: child: %w", err)
	}
	b, err := json.Marshal(o)
	if err != nil {
		return nil, fmt.Errorf("testbed: child: %w", err)
	}
	cmd := exec.CommandContext(ctx, self, "-test.run=^$")
	cmd.Env = append(os.Environ(), EnvChild+"="+string(b))
	return cmd, nil
}

// ServeChild serves stdio when the process was started by ChildCommand and
// reports the exit code the process should end with (1 for a `crash`
// profile that crashed, 4 for a failure); ok is false, and nothing happens,
// in an ordinary process.
func ServeChild() (code int, ok bool) {
	return serveChild(os.Getenv(EnvChild), os.Stdin, os.Stdout, os.Stderr)
}

func serveChild(env string, in io.Reader, out, errOut io.Writer) (int, bool) {
	if env == "" {
		return 0, false
	}
	var o Options
	if err := json.Unmarshal([]byte(env), &o); err != nil {
		fmt.Fprintln(errOut, "mcpdrill testbed: bad child options:", err)
		return 4, true
	}
	err := ServeStdio(context.Background(), o, in, out, errOut)
	switch {
	case err == nil:
		return 0, true
	case errors.Is(err, ErrCrashed):
		return 1, true
	}
	fmt.Fprintln(errOut, "mcpdrill testbed:", err)
	return 4, true
}
