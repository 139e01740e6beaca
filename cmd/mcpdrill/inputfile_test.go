package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/inputfile"
)

// TestInputFilesAreBounded is F12 of issue 21: every local input file is
// read with a size limit, so /dev/zero or a huge file is a usage error that
// names the file and the limit instead of gigabytes of memory.
func TestInputFilesAreBounded(t *testing.T) {
	big := filepath.Join(t.TempDir(), "big.json")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(inputfile.MaxSize + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	paths := []string{big}
	if _, err := os.Stat("/dev/zero"); err == nil {
		paths = append(paths, "/dev/zero")
	}
	for _, p := range paths {
		for _, args := range [][]string{
			{"wrap", "--plan", p, "--", "true"},
			{"fingerprint", "--manifest", p},
			{"drift", p, "--url", "http://127.0.0.1:1/mcp"},
			{"drift", "check", "--baseline", p, "--current", p},
			{"drift", "capture", p, "-o", filepath.Join(t.TempDir(), "state.json")},
			{"study", "run", p},
			{"study", "merge", p},
		} {
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				code, _, stderr := runCLI(t, args...)
				if code != exitUsage || !strings.Contains(stderr, p+" is larger than the 64 MiB input file limit") {
					t.Fatalf("exit %d, stderr %q", code, stderr)
				}
			})
		}
	}
}
