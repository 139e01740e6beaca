//go:build unix

package main

import (
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
	"github.com/mcpdrill/mcpdrill/internal/testbed"
)

// disabledServers is a servers.json whose one server is disabled: a study
// of it runs no server and still writes a full results.json.
const disabledServers = `{"mcpServers": {"off": {"command": "true", "disabled": true}}}`

// TestOutputsIntoFIFO runs each command that writes an -o file into a FIFO
// read by a goroutine: the data arrives and the FIFO is still a FIFO.
func TestOutputsIntoFIFO(t *testing.T) {
	dir := t.TempDir()
	servers := filepath.Join(dir, "servers.json")
	writeTestFile(t, servers, disabledServers)
	childEnv, childCmd := testbedArgs(t, testbed.Options{Profile: "good"})
	quoted := make([]string, len(childCmd))
	for i, a := range childCmd {
		quoted[i] = quoteYAML(a)
	}
	name, value, _ := strings.Cut(childEnv, "=")
	spec := filepath.Join(dir, "spec.yaml")
	writeTestFile(t, spec, "server:\n  command: ["+strings.Join(quoted, ", ")+"]\n  env:\n    "+name+": "+quoteYAML(value)+"\n")
	for _, tc := range []struct {
		name string
		args func(out string) []string
		want string // a member the JSON written must have
	}{
		{"study run", func(out string) []string { return []string{"study", "run", servers, "-q", "-o", out} }, "servers"},
		{"drift capture", func(out string) []string { return []string{"drift", "capture", spec, "-o", out} }, "fingerprint"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fifo := filepath.Join(t.TempDir(), "out.fifo")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			got := readFIFO(fifo)
			code, _, errOut := runCLI(t, tc.args(fifo)...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			select {
			case s := <-got:
				var doc map[string]json.RawMessage
				if err := json.Unmarshal([]byte(s), &doc); err != nil || doc[tc.want] == nil {
					t.Fatalf("the FIFO's reader got %q (%v), want JSON with %q", s, err, tc.want)
				}
			case <-time.After(testutil.Hang):
				t.Fatal("nothing came out of the FIFO")
			}
			if fi, err := os.Lstat(fifo); err != nil || fi.Mode().Type() != fs.ModeNamedPipe {
				t.Fatalf("after the run: %v, %v; want the FIFO still there", fi, err)
			}
		})
	}
}

// TestWrapLogIntoFIFO: wrap --log appends its session to a FIFO as it is
// (the plan line first), never replacing it.
func TestWrapLogIntoFIFO(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	bin := testutil.Binary(t)
	childEnv, childCmd := testbedArgs(t, testbed.Options{Profile: "good"})
	fifo := filepath.Join(t.TempDir(), "events.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	got := readFIFO(fifo)
	// No client: stdin is empty, so the session ends at once.
	cmd := exec.Command(bin, append([]string{"wrap", "--quiet", "--log", fifo, "--faults", "latency", "--seed", "1", "--"}, childCmd...)...)
	cmd.Env = append(os.Environ(), childEnv)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("wrap: %v\n%s", err, out)
	}
	select {
	case s := <-got:
		if !strings.Contains(s, `"seed":1`) {
			t.Fatalf("the FIFO's reader got %q, want the session's plan line", s)
		}
	case <-time.After(testutil.Hang):
		t.Fatal("nothing came out of the FIFO")
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode().Type() != fs.ModeNamedPipe {
		t.Fatalf("after the run: %v, %v; want the FIFO still there", fi, err)
	}
}

// TestStudyOutputDevNull is `study run -o /dev/null`, which once replaced
// the machine's /dev/null with a regular file. As root it runs in a private
// mount namespace with a /dev of its own (testutil.DevNullSafe).
func TestStudyOutputDevNull(t *testing.T) {
	if !testutil.DevNullSafe(t) {
		return
	}
	servers := filepath.Join(t.TempDir(), "servers.json")
	writeTestFile(t, servers, disabledServers)
	for _, args := range [][]string{
		{"study", "run", servers, "-q", "-o", "/dev/null"},
		{"study", "run", "-o", "/dev/null", "-q", servers},
	} {
		code, out, errOut := runCLI(t, args...)
		if code != exitOK || out != "" {
			t.Fatalf("%q: exit %d, stdout %q, stderr %s", args, code, out, errOut)
		}
		testutil.AssertCharDevice(t, "/dev/null")
	}
}

// TestStudyOutputThroughSymlink: -o naming a link replaces the link's
// target, in the target's directory, and leaves the link a link.
func TestStudyOutputThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	servers := filepath.Join(dir, "servers.json")
	writeTestFile(t, servers, disabledServers)
	if err := os.Mkdir(filepath.Join(dir, "kept"), 0o755); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "kept", "results.json")
	writeTestFile(t, target, "old")
	link := filepath.Join(dir, "results.json")
	if err := os.Symlink(filepath.Join("kept", "results.json"), link); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCLI(t, "study", "run", servers, "-q", "-o", link); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode().Type() != fs.ModeSymlink {
		t.Fatalf("the link was replaced (%v)", err)
	}
	b, err := os.ReadFile(target)
	if err != nil || !strings.Contains(string(b), `"servers"`) {
		t.Fatalf("the target holds %q (%v), want results.json", b, err)
	}
}

// readFIFO reads the FIFO at path in a goroutine (opening it waits for a
// writer) and sends all it got, or the error, on the channel.
func readFIFO(path string) <-chan string {
	got := make(chan string, 1)
	go func() {
		f, err := os.Open(path)
		if err != nil {
			got <- err.Error()
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		got <- string(b)
	}()
	return got
}

func writeTestFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}
