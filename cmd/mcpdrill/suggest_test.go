package main

import (
	"net"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

func TestNearest(t *testing.T) {
	cmds := []string{"completion", "configs", "drift", "faults", "fingerprint", "guard", "rules", "scan", "study", "testbed", "version", "wrap"}
	for _, tc := range []struct{ typed, want string }{
		{"scna", "scan"}, {"sacn", "scan"}, {"scan", "scan"}, {"drfit", "drift"}, {"finger", "fingerprint"},
		{"stduy", "study"}, {"testbd", "testbed"}, {"xyz", ""}, {"s", ""}, {"config", "configs"}, {"SCAN", "scan"},
	} {
		if got := nearest(tc.typed, cmds); got != tc.want {
			t.Errorf("nearest(%q) = %q, want %q", tc.typed, got, tc.want)
		}
	}
	if got := nearest("urll", []string{"url", "header", "protocol"}); got != "url" {
		t.Errorf("urll: %q", got)
	}
	if got := nearest(strings.Repeat("a", 1000), cmds); got != "" {
		t.Errorf("a long word: %q", got)
	}
}

// TestMistakesAreExplained: what a new user mistypes gets a message that
// says what was meant, and exit 2 (issue 40: raw parser messages).
func TestMistakesAreExplained(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"scna"}, "unknown command \"scna\"; did you mean `mcpdrill scan`? (mcpdrill --help lists the commands)"},
		{[]string{"xyzzy"}, `unknown command "xyzzy" (mcpdrill --help lists the commands)`},
		{[]string{"study", "rnu"}, "unknown command \"rnu\"; did you mean `mcpdrill study run`? (mcpdrill study --help lists the commands)"},
		{[]string{"guard", "stauts"}, "did you mean `mcpdrill guard status`?"},
		{[]string{"scan", "--urll", "http://127.0.0.1:1/mcp"}, "unknown flag --urll; did you mean --url? (mcpdrill scan --help lists the flags)"},
		{[]string{"drift", "check", "--baselin", "x"}, "unknown flag --baselin; did you mean --baseline?"},
		{[]string{"scan", "--timeout", "5", "--url", "http://127.0.0.1:1/mcp"}, "--timeout 5: a duration needs a unit: 5s? (ns, us, ms, s, m, h; 1m30s)"},
		{[]string{"scan", "--deadline", "soon", "--url", "http://127.0.0.1:1/mcp"}, `--deadline "soon": not a duration`},
		{[]string{"scan", "--url"}, "--url needs a value"},
		{[]string{"scan"}, "no target: give --url URL, a server command after --, or --config FILE"},
		{[]string{"fingerprint"}, "no target: give --url URL or a server command after --"},
		{[]string{"drift", "chek"}, "(did you mean `mcpdrill drift check`?)"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, errOut := runCLI(t, tc.args...)
			if code != exitUsage || !strings.Contains(errOut, tc.want) {
				t.Fatalf("exit %d, stderr %q; want exit 2 and %q", code, errOut, tc.want)
			}
			if strings.Contains(errOut, "flag provided but not defined") || strings.Contains(errOut, "No help topic") {
				t.Errorf("a raw parser message: %q", errOut)
			}
		})
	}
	if code, out, _ := runCLI(t); code != exitOK || !strings.Contains(out, "COMMANDS:") {
		t.Errorf("mcpdrill alone: exit %d, want the help", code)
	}
	if code, out, _ := runCLI(t, "study"); code != exitOK || !strings.Contains(out, "run") {
		t.Errorf("mcpdrill study alone: exit %d, want its help:\n%s", code, out)
	}
}

// TestNoRequiredFlags: urfave/cli's error for a missing required flag
// carries no exit code, which execute reads as internal; every command
// checks its own required flags in its parse (a usage error).
func TestNoRequiredFlags(t *testing.T) {
	var walk func(cmds []*cli.Command)
	walk = func(cmds []*cli.Command) {
		for _, c := range cmds {
			for _, f := range c.Flags {
				if r, ok := f.(cli.RequiredFlag); ok && r.IsRequired() {
					t.Errorf("%s --%s is Required: check it in the command's parse instead", c.Name, f.Names()[0])
				}
			}
			walk(c.Subcommands)
		}
	}
	walk(newApp().Commands)
	if code, _, errOut := runCLI(t, "drift", "check", "--current", "x.json"); code != exitUsage || !strings.Contains(errOut, "missing --baseline FILE") {
		t.Errorf("drift check without --baseline: exit %d, %q", code, errOut)
	}
}

// TestBusyPortIsTheEnvironment: testbed --http and wrap --listen on a port
// another process holds exit 3 (the environment), not 4 (issue 40) nor 2.
func TestBusyPortIsTheEnvironment(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	for _, args := range [][]string{
		{"testbed", "--http", addr},
		{"wrap", "--listen", addr, "--upstream", "http://127.0.0.1:1/mcp"},
	} {
		code, _, errOut := runCLI(t, args...)
		if code != exitEnvironment || !strings.Contains(errOut, addr+": cannot listen: the port is in use by another process") {
			t.Errorf("%v: exit %d, stderr %q; want 3 and the port in use", args, code, errOut)
		}
	}
}
