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
	dir := t.TempDir()
	sparse := func(name string, size int64) string {
		p := filepath.Join(dir, name)
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := f.Truncate(size); err != nil {
			t.Fatal(err)
		}
		return p
	}
	big := sparse("big.json", inputfile.MaxSize+1)
	// results.json, read by study merge and report, has a limit of its own.
	bigResults := sparse("big-results.json", maxResults+1)
	devZero := ""
	if _, err := os.Stat("/dev/zero"); err == nil {
		devZero = "/dev/zero"
	}
	tests := []struct {
		args  func(p string) []string
		path  string
		limit string
	}{
		{func(p string) []string { return []string{"wrap", "--plan", p, "--", "true"} }, big, "64 MiB"},
		{func(p string) []string { return []string{"fingerprint", "--manifest", p} }, big, "64 MiB"},
		{func(p string) []string { return []string{"drift", p, "--url", "http://127.0.0.1:1/mcp"} }, big, "64 MiB"},
		{func(p string) []string { return []string{"drift", "check", "--baseline", p, "--current", p} }, big, "64 MiB"},
		{func(p string) []string {
			return []string{"drift", "capture", p, "-o", filepath.Join(dir, "state.json")}
		}, big, "64 MiB"},
		{func(p string) []string { return []string{"study", "run", p} }, big, "64 MiB"},
		{func(p string) []string { return []string{"study", "merge", p} }, bigResults, "1024 MiB"},
		{func(p string) []string { return []string{"study", "report", p, "-o", filepath.Join(dir, "out")} }, bigResults, "1024 MiB"},
	}
	for _, tc := range tests {
		paths := []string{tc.path}
		// /dev/zero is read up to the limit: only where that is 64 MiB.
		if devZero != "" && tc.path == big {
			paths = append(paths, devZero)
		}
		for _, p := range paths {
			args := tc.args(p)
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				code, _, stderr := runCLI(t, args...)
				if code != exitUsage || !strings.Contains(stderr, p+" is larger than the "+tc.limit+" input file limit") {
					t.Fatalf("exit %d, stderr %q", code, stderr)
				}
			})
		}
	}
}
