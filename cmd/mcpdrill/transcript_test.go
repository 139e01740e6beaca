package main

import (
	"bytes"
	"fmt"
	"os"
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
			for i, file := range ar.Files {
				argv := strings.Fields(file.Name)
				if len(argv) == 0 || argv[0] != "mcpdrill" {
					t.Fatalf("%s: %q is not a mcpdrill command line", f, file.Name)
				}
				if slices.Contains(argv, "--help") {
					helped = append(helped, strings.Join(argv[1:len(argv)-1], " "))
				}
				var args []string
				for _, a := range argv[1:] {
					if v, ok := vars[a]; ok {
						args = append(args, v...)
					} else {
						args = append(args, a)
					}
				}
				code, stdout, stderr := runCLI(t, args...)
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
	out := b.String()
	for _, m := range transcriptMasks() {
		out = m.re.ReplaceAllString(out, m.with)
	}
	return []byte(out)
}
