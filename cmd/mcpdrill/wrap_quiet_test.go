package main

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
)

// TestWrapQuietIsQuiet: with --quiet, wrap writes nothing on stderr, its
// seed line included; without it the seed line is there.
func TestWrapQuietIsQuiet(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := testutil.Binary(t)
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--quiet", "--seed", "1", "--faults", "corrupt"}, ""},
		{[]string{"-q", "--seed", "1", "--plan", "testdata/plans/quiet.yaml"}, ""},
		{[]string{"--quiet", "--seed", "1"}, ""},
		{[]string{"--seed", "1", "--faults", "corrupt"}, "mcpdrill wrap: seed 1, session \"default\", 1 rule(s)\n"},
	} {
		cmd := exec.Command(bin, append(append([]string{"wrap"}, tc.flags...), "--", "sh", "-c", "cat >/dev/null")...)
		cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v: %v\n%s", tc.flags, err, stderr.String())
		}
		if got := stderr.String(); got != tc.want {
			t.Errorf("%v: stderr %q, want %q", tc.flags, got, tc.want)
		}
	}
}
