package testutil

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

// update is the -update flag of every test binary that imports testutil:
// `go test ./pkg -update` rewrites that package's golden files.
var update = flag.Bool("update", false, "rewrite the golden files instead of comparing with them")

// Updating reports whether the test binary runs with -update, for a test
// that keeps its expected output in a file of its own format.
func Updating() bool { return *update }

// Golden compares got with the golden file testdata/name of the calling
// package, or rewrites the file (making its directory) under -update.
// Every package's golden files go through it.
func Golden(t testing.TB, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (run with -update after review):\n%s", path, got)
	}
}
