package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
	"golang.org/x/tools/txtar"

	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
	"github.com/mcpdrill/mcpdrill/internal/testbed"
)

// A transcript is a txtar archive under testdata/transcripts: each file's
// name is a command line ("mcpdrill scan --help"), its content what the
// command printed (stdout, then stderr after a "[stderr]" line) and its exit
// status. $TESTBED_GOOD and $TESTBED_SLOPPY stand for stdio testbed servers
// (the good and sloppy-errors profiles), $TESTBED_ENV for the environment
// they need. go test -run TestTranscripts -update rewrites the outputs from
// the command lines; a new command line is added by adding an empty file.
//
// The commands of an archive share a working directory of their own. A
// file named "file NAME" is not a command: its content is written to NAME
// there before the first command runs. A command line ending "< NAME" runs
// the built binary as a process of its own, in that directory, with NAME as
// its stdin and the binary first on PATH (so "-- mcpdrill testbed" is a
// server): wrap, which serves a client on its stdin and stdout, runs this
// way. "cat NAME" shows a file a command wrote (an event log).

// transcriptMasks replace what varies from run to run or machine to
// machine: the build's version, durations, JUnit times, and whether a
// loaded machine made the testbed answer server/discover after the
// probe's timeout (the revision is the same, the detection log says how).
func transcriptMasks() []struct {
	re   *regexp.Regexp
	with string
} {
	masks := []struct {
		re   *regexp.Regexp
		with string
	}{
		{regexp.MustCompile(`\b\d+(\.\d+)?(ms|µs|s)\b`), "DURATION"},
		{regexp.MustCompile(`time="[0-9.]+"`), `time="T"`},
		{regexp.MustCompile(`server/discover: no reply in DURATION; initialize; server/discover answered late, before initialize's reply \(([0-9-]+)\); using it`),
			"server/discover answered ($1)"},
	}
	if version != "" {
		masks = append(masks, struct {
			re   *regexp.Regexp
			with string
		}{regexp.MustCompile(`\b` + regexp.QuoteMeta(version) + `\b`), "VERSION"})
	}
	return masks
}

func TestTranscripts(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "transcripts", "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	good, goodCmd := testbedArgs(t, testbed.Options{Profile: "good"})
	_, sloppyCmd := testbedArgs(t, testbed.Options{Profile: "sloppy-errors"})
	vars := map[string][]string{
		"$TESTBED_ENV":    {good},
		"$TESTBED_GOOD":   goodCmd,
		"$TESTBED_SLOPPY": sloppyCmd,
	}
	var helped []string
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(f)
			if err != nil {
				t.Fatal(err)
			}
			work := t.TempDir()
			for _, file := range ar.Files {
				if name, ok := strings.CutPrefix(file.Name, "file "); ok {
					if err := os.WriteFile(filepath.Join(work, filepath.Base(name)), file.Data, 0o600); err != nil {
						t.Fatal(err)
					}
				}
			}
			for i, file := range ar.Files {
				argv := strings.Fields(file.Name)
				if len(argv) > 0 && argv[0] == "file" {
					continue
				}
				if len(argv) == 2 && argv[0] == "cat" {
					data, err := os.ReadFile(filepath.Join(work, filepath.Base(argv[1])))
					if err != nil {
						t.Fatal(err)
					}
					got := maskTranscript(string(data))
					if testutil.Updating() {
						ar.Files[i].Data = got
					} else if !bytes.Equal(got, file.Data) {
						t.Errorf("%s differs (go test -run TestTranscripts -update):\n--- got\n%s--- want\n%s", file.Name, got, file.Data)
					}
					continue
				}
				if len(argv) == 0 || argv[0] != "mcpdrill" {
					t.Fatalf("%s: %q is not a mcpdrill command line", f, file.Name)
				}
				if slices.Contains(argv, "--help") {
					helped = append(helped, strings.Join(argv[1:len(argv)-1], " "))
				}
				stdin := ""
				if n := len(argv); n > 2 && argv[n-2] == "<" {
					stdin, argv = argv[n-1], argv[:n-2]
				}
				var args []string
				for _, a := range argv[1:] {
					if v, ok := vars[a]; ok {
						args = append(args, v...)
					} else {
						args = append(args, a)
					}
				}
				var code int
				var stdout, stderr string
				if stdin != "" {
					code, stdout, stderr = runBinary(t, work, filepath.Join(work, filepath.Base(stdin)), args...)
				} else {
					code, stdout, stderr = runCLI(t, args...)
				}
				got := transcriptOutput(code, strings.ReplaceAll(stdout, goodCmd[0], "TESTBED"), strings.ReplaceAll(stderr, goodCmd[0], "TESTBED"))
				if testutil.Updating() {
					ar.Files[i].Data = got
					continue
				}
				if !bytes.Equal(got, file.Data) {
					t.Errorf("%s differs (go test -run TestTranscripts -update):\n--- got\n%s--- want\n%s", file.Name, got, file.Data)
				}
			}
			if testutil.Updating() {
				if err := os.WriteFile(f, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
	// Every command's help is in a transcript.
	var walk func(prefix string, cmds []*cli.Command)
	walk = func(prefix string, cmds []*cli.Command) {
		for _, c := range cmds {
			if c.Hidden || c.Name == "help" {
				continue
			}
			name := strings.TrimSpace(prefix + " " + c.Name)
			if !slices.Contains(helped, name) {
				t.Errorf("no transcript shows %q (add a file named \"mcpdrill %s --help\")", name, name)
			}
			walk(name, c.Subcommands)
		}
	}
	if !slices.Contains(helped, "") {
		t.Error(`no transcript shows "mcpdrill --help"`)
	}
	walk("", newApp().Commands)
}

// transcriptOutput is what a transcript records of one run, masked.
func transcriptOutput(code int, stdout, stderr string) []byte {
	var b strings.Builder
	b.WriteString(stdout)
	if stdout != "" && !strings.HasSuffix(stdout, "\n") {
		b.WriteString("\n")
	}
	if stderr != "" {
		b.WriteString("[stderr]\n")
		b.WriteString(stderr)
		if !strings.HasSuffix(stderr, "\n") {
			b.WriteString("\n")
		}
	}
	fmt.Fprintf(&b, "[exit %d]\n", code)
	return maskTranscript(b.String())
}

// maskTranscript applies transcriptMasks to out.
func maskTranscript(out string) []byte {
	for _, m := range transcriptMasks() {
		out = m.re.ReplaceAllString(out, m.with)
	}
	return []byte(out)
}

// runBinary runs the built binary with args in dir, stdin read from the
// file stdin and the binary first on PATH, and returns its exit status and
// output. A transcript runs wrap this way: it serves its client on the
// process's own stdin and stdout.
func runBinary(t *testing.T, dir, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the binary")
	}
	in, err := os.Open(stdin)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	cmd := exec.Command(testutil.Binary(t), args...)
	var out, errOut bytes.Buffer
	cmd.Dir, cmd.Env, cmd.Stdin, cmd.Stdout, cmd.Stderr = dir, pathWithBinary(t), in, &out, &errOut
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return code, out.String(), errOut.String()
}
