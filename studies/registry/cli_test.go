package registry_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
)

// TestStudyImportCLI runs `mcpdrill study import` on the registry fixture:
// to a file and to stdout, both the golden servers.json, which `study run`
// accepts; malformed input is a usage error.
func TestStudyImportCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("subprocess")
	}
	bin := testutil.Binary(t)
	fixture := filepath.Join("testdata", "registry", "servers.json")
	want, err := os.ReadFile(filepath.Join("testdata", "registry", "servers.golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "servers.json")
	var errBuf bytes.Buffer
	run := exec.Command(bin, "study", "import", fixture, "-o", out, "--pypi", "uvx")
	run.Stderr = &errBuf
	if err := run.Run(); err != nil {
		t.Fatalf("study import: %v\n%s", err, errBuf.String())
	}
	stderr := errBuf.String()
	if !strings.Contains(stderr, "13 registry servers (15 documents): 22 rows, 9 excluded; PyPI packages run from uvx") {
		t.Errorf("summary on stderr: %q", stderr)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("study import -o differs from the golden file:\n%s", got)
	}
	cmd := exec.Command(bin, "study", "import", "--pypi", "uvx", fixture)
	stdout, err := cmd.Output()
	if err != nil || !bytes.Equal(stdout, want) {
		t.Errorf("study import to stdout: %v\n%s", err, stdout)
	}

	// Without uvx on PATH the PyPI rows run from venvs.
	cmd = exec.Command(bin, "study", "import", fixture, "-o", filepath.Join(dir, "venv.json"))
	cmd.Env = append(os.Environ(), "PATH="+dir)
	if b, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(b), "PyPI packages run from venvs") {
		t.Errorf("study import without uvx: %v\n%s", err, b)
	}

	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"name": "io.github.a/x", "version": "1.0.0"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"study", "import"},
		{"study", "import", bad},
		{"study", "import", filepath.Join(dir, "absent.json")},
		{"study", "import", fixture, fixture},
		{"study", "import", "--pypi", "pipx", fixture},
	} {
		var ee *exec.ExitError
		if err := exec.Command(bin, args...).Run(); !errors.As(err, &ee) || ee.ExitCode() != 2 {
			t.Errorf("mcpdrill %s: %v, want exit 2", strings.Join(args, " "), err)
		}
	}
}
