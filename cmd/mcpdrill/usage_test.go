package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestBadURLsAreUsageErrors: a --url that is not an absolute http(s) URL
// with a host is a usage error (exit 2), not an unreachable target, and
// draws no plain-HTTP warning (issue 21).
func TestBadURLsAreUsageErrors(t *testing.T) {
	for _, u := range []string{"ftp://127.0.0.1/mcp", "http://[::1", "http:///mcp", "http://:8080/mcp", "127.0.0.1:8080/mcp", "http:opaque"} {
		for _, cmd := range [][]string{{"scan"}, {"fingerprint"}, {"drift", "manifest.json"}} {
			args := append(append([]string(nil), cmd...), "--url", u)
			code, out, stderr := runCLI(t, args...)
			if code != exitUsage || !strings.Contains(stderr, "--url") {
				t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
			}
			if strings.Contains(strings.ToLower(out+stderr), "plain") {
				t.Errorf("%v: a plain-HTTP warning for a URL that was refused: %q %q", args, out, stderr)
			}
		}
	}
}

// TestNegativeDurationsAreRefused: every duration flag of every command
// refuses a negative value with exit 2 (issue 21: --deadline -1s was
// accepted while --timeout -5s was refused).
func TestNegativeDurationsAreRefused(t *testing.T) {
	n := 0
	var walk func(path []string, cmds []*cli.Command)
	walk = func(path []string, cmds []*cli.Command) {
		for _, c := range cmds {
			p := append(append([]string(nil), path...), c.Name)
			var required []string
			for _, f := range c.Flags {
				if r, ok := f.(cli.RequiredFlag); ok && r.IsRequired() {
					required = append(required, "--"+f.Names()[0], "x")
				}
			}
			for _, f := range c.Flags {
				d, ok := f.(*cli.DurationFlag)
				if !ok {
					continue
				}
				n++
				args := append(append(append([]string(nil), p...), required...), "--"+d.Name, "-1s")
				code, _, stderr := runCLI(t, args...)
				if code != exitUsage || !strings.Contains(stderr, "--"+d.Name+" must not be negative") {
					t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
				}
			}
			walk(p, c.Subcommands)
		}
	}
	walk(nil, newApp().Commands)
	if n < 8 {
		t.Fatalf("only %d duration flags found", n)
	}
}

// TestStudyRefusesDuplicateNames: a servers.json that names a server twice
// is refused (exit 2) rather than silently keeping the last.
func TestStudyRefusesDuplicateNames(t *testing.T) {
	p := filepath.Join(t.TempDir(), "servers.json")
	if err := os.WriteFile(p, []byte(`{"mcpServers":{"a":{"command":"x"},"a":{"command":"y"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "study", "run", p)
	if code != exitUsage || !strings.Contains(stderr, `server "a" is given twice`) {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}

// TestFaultFlagProblemsNameTheFlags: faults.PlanFromFlags reports problems
// by option field; wrap words each as its own flag, every one at once.
func TestFaultFlagProblemsNameTheFlags(t *testing.T) {
	code, _, stderr := runCLI(t, "wrap", "--faults", "nope,latency:latency", "--rate", "2", "--only", "[x", "--tool", "[y", "--", "true")
	if code != exitUsage {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	for _, want := range []string{
		"--rate: want a number within [0,1], got 2", `--only: bad glob "[x"`, `--tool: bad glob "[y"`,
		`--faults: unknown fault "nope"`, `--faults latency: parameter "latency": want key=value`,
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}
