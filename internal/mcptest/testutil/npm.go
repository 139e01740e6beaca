// Package testutil holds helpers shared by mcpdrill's tests: locating the
// pinned npm MCP servers and building the mcpdrill binary for subprocess tests.
package testutil

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// NPMServer returns the command of a pinned npm MCP server named by an
// environment variable (MCPDRILL_NPM_EVERYTHING, MCPDRILL_NPM_FILESYSTEM,
// MCPDRILL_NPM_MEMORY; `make test` sets them). When the server is not
// installed the test is skipped, or fails when MCPDRILL_REQUIRE_NPM is set
// (as CI does), so a missing install step cannot pass unseen.
func NPMServer(t testing.TB, envVar string) []string {
	t.Helper()
	path := os.Getenv(envVar)
	if path == "" {
		path = filepath.Join(ModuleRoot(t), "testdata", "npm", "node_modules", ".bin", defaultBin[envVar])
	}
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("MCPDRILL_REQUIRE_NPM") != "" {
			t.Fatalf("%s: npm server not installed at %s (run `make npm`)", envVar, filepath.Base(path))
		}
		t.Skipf("%s: npm server not installed (run `make npm`)", envVar)
	}
	if _, err := exec.LookPath("node"); err != nil {
		if os.Getenv("MCPDRILL_REQUIRE_NPM") != "" {
			t.Fatalf("node not found")
		}
		t.Skip("node not found")
	}
	return []string{path}
}

var defaultBin = map[string]string{
	"MCPDRILL_NPM_EVERYTHING": "mcp-server-everything",
	"MCPDRILL_NPM_FILESYSTEM": "mcp-server-filesystem",
	"MCPDRILL_NPM_MEMORY":     "mcp-server-memory",
	"MCPDRILL_NPM_CHART":      "mcp-server-chart",
	"MCPDRILL_NPM_CONTEXT7":   "context7-mcp",
}

// ModuleRoot returns the repository root (the directory holding go.mod).
func ModuleRoot(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate module root")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", ".."))
}

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
)

// Binary builds cmd/mcpdrill once per test process into a temporary
// directory and returns its path, for tests that need a real subprocess.
func Binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "mcpdrill-bin-")
		if err != nil {
			buildErr = err
			return
		}
		buildPath = filepath.Join(dir, "mcpdrill")
		cmd := exec.Command("go", "build", "-o", buildPath, "./cmd/mcpdrill")
		cmd.Dir = ModuleRoot(t)
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = &buildError{out: string(out), err: err}
		}
	})
	if buildErr != nil {
		t.Fatalf("building mcpdrill: %v", buildErr)
	}
	return buildPath
}

type buildError struct {
	out string
	err error
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + e.out }
func (e *buildError) Unwrap() error { return e.err }
