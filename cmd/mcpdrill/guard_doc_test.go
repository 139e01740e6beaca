package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
)

// The recorded session of docs/guard.md ("A real session, recorded") is a
// ```text block of commands (`$ …`), each followed by what it prints and its
// exit status (`[exit N]`), and a blank line. TestGuardDocSession runs the
// commands in order, as the page says to: in an empty directory holding
// examples/guard/session.sh, with the built mcpdrill first on PATH and USER
// set to the page's operator. Each command's output must be the page's,
// but for what varies from run to run:
//
//   - the directory: the guard's suggestions name the store by its absolute
//     path, which the page shows as guardSessionDir/pins;
//   - times (`DRIFT AT`, the audit log's `TIME`), which compare as equal.
//
// `go test ./cmd/mcpdrill -run TestGuardDocSession -update` records the
// session anew into the page (times and all); review the diff.

const (
	// guardDocHeading is the title of the page that holds the session.
	guardDocHeading = "# Pin your servers (`wrap --guard`, `guard`)"
	// guardSessionDir is the directory the page's session ran in, and
	// guardSessionUser the operator that ran it.
	guardSessionDir, guardSessionUser = "/home/alice/demo", "alice"
)

var (
	// guardDocTime matches the times the guard prints (UTC, to the second).
	guardDocTime = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`)
	// transcriptExit is the last line of a command's output in a session.
	transcriptExit = regexp.MustCompile(`(?m)^\[exit \d+\]\z`)
)

// maskTimes makes the times in s equal.
func maskTimes(s string) string { return guardDocTime.ReplaceAllString(s, "TIME") }

// transcriptStep is one command of a recorded session and what it printed,
// its `[exit N]` line included.
type transcriptStep struct{ cmd, out string }

// parseTranscript splits a recorded session into its commands.
func parseTranscript(t *testing.T, block string) []transcriptStep {
	t.Helper()
	var steps []transcriptStep
	for _, para := range strings.Split(strings.TrimSpace(block), "\n\n") {
		cmd, out, _ := strings.Cut(para, "\n")
		if !strings.HasPrefix(cmd, "$ ") || !transcriptExit.MatchString(out) {
			t.Fatalf("not a command, its output and its [exit N] line:\n%s", para)
		}
		steps = append(steps, transcriptStep{strings.TrimPrefix(cmd, "$ "), out + "\n"})
	}
	return steps
}

func TestGuardDocSession(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	block := readmeBlock(t, guardDocHeading, "text", "./session.sh")
	steps := parseTranscript(t, block)
	if len(steps) < 5 || !strings.HasPrefix(steps[0].cmd, "./session.sh ") {
		t.Fatalf("the recorded session should start with ./session.sh and go on with guard commands: %q", steps)
	}

	dir := t.TempDir()
	script, err := os.ReadFile(filepath.Join(testutil.ModuleRoot(t), "examples", "guard", "session.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "session.sh"), script, 0o755); err != nil {
		t.Fatal(err)
	}
	drop := regexp.MustCompile(`^(PATH|PWD|USER|LOGNAME|LC_ALL|LC_CTYPE|LANG|RUNEWIDTH_EASTASIAN|MCPDRILL_GUARD_DIR)=`)
	var env []string
	for _, kv := range os.Environ() {
		if !drop.MatchString(kv) {
			env = append(env, kv)
		}
	}
	env = append(env, "PATH="+filepath.Dir(testutil.Binary(t))+string(os.PathListSeparator)+os.Getenv("PATH"),
		"PWD="+dir, "USER="+guardSessionUser, "LOGNAME="+guardSessionUser, "LC_ALL=C")
	paths := []string{dir}
	if real, err := filepath.EvalSymlinks(dir); err == nil && real != dir {
		paths = append(paths, real)
	}

	var record strings.Builder
	for i, s := range steps {
		code, out := runLine(t, s.cmd, dir, env)
		out += fmt.Sprintf("[exit %d]\n", code)
		for _, p := range paths {
			out = strings.ReplaceAll(out, p, guardSessionDir)
		}
		fmt.Fprintf(&record, "$ %s\n%s\n", s.cmd, out)
		if maskTimes(out) != maskTimes(s.out) && !testutil.Updating() {
			t.Errorf("step %d, `%s`, prints what docs/guard.md does not show.\nthe page:\n%s\nnow:\n%s", i+1, s.cmd, s.out, out)
		}
	}
	if testutil.Updating() {
		path := filepath.Join(testutil.ModuleRoot(t), "docs", "guard.md")
		page := readDoc(t, filepath.Join("docs", "guard.md"))
		if strings.Count(page, block) != 1 {
			t.Fatal("the recorded session is not once in docs/guard.md")
		}
		if err := os.WriteFile(path, []byte(strings.Replace(page, block, record.String()[:record.Len()-1], 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	} else if t.Failed() {
		t.Log("if the new output is right, record it: go test ./cmd/mcpdrill -run TestGuardDocSession -update, and review the diff")
	}
}
