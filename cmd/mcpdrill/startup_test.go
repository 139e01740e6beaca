package main

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/testbed"
)

// TestStartupAllowance is issue 40's acceptance of the start-up allowance:
// a stdio server that reads nothing for 12 s (longer than the 10 s request
// timeout, as a cold npx is) is scanned with default flags; one that
// outlasts --startup-timeout fails with exit 3 and a line that names the
// server, the allowance it had and the flag that raises it. No wall-clock
// bound is asserted. The subtests run one after the other: runCLI's app
// shares its flags.
func TestStartupAllowance(t *testing.T) {
	t.Run("12s start, default flags", func(t *testing.T) {
		env, cmd := testbedArgs(t, testbed.Options{Profile: "slow-start", StartDelay: 12 * time.Second})
		code, out, errOut := runCLI(t, append([]string{"scan", "--no-second-connection", "--env", env, "--"}, cmd...)...)
		if code != exitOK || !strings.Contains(out, "mcpdrill-testbed") {
			t.Fatalf("exit %d\n%s%s", code, out, errOut)
		}
	})
	t.Run("allowance used up", func(t *testing.T) {
		// The allowance lengthens a reply's wait, never shortens it: with
		// the default 10 s request timeout the handshake would wait 10 s.
		env, cmd := testbedArgs(t, testbed.Options{Profile: "slow-start", StartDelay: time.Hour})
		code, _, errOut := runCLI(t, append([]string{"scan", "--startup-timeout", "1s", "--timeout", "1s", "--no-second-connection", "--env", env, "--"}, cmd...)...)
		for _, want := range []string{cmd[0], "wrote nothing within its start-up allowance of 1s", "--startup-timeout", "a first npx or uvx run downloads the package"} {
			if !strings.Contains(errOut, want) {
				t.Errorf("stderr lacks %q", want)
			}
		}
		if code != exitUnreachable {
			t.Errorf("exit %d, want %d\n%s", code, exitUnreachable, errOut)
		}
	})
}
