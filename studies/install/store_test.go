package install

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func writeTree(t *testing.T, root string, files map[string]string, exec ...string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if slices.Contains(exec, name) {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
}

func sameFile(t *testing.T, a, b string) bool {
	t.Helper()
	sa, err := os.Stat(a)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := os.Stat(b)
	if err != nil {
		t.Fatal(err)
	}
	return os.SameFile(sa, sb)
}

// TestLinkTree: two trees holding the same bytes share them through the
// store; bytes that differ, or the same bytes once executable and once
// not, stay apart; every file keeps its content and mode; a tree linked
// before is left as it is.
func TestLinkTree(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	a, b := filepath.Join(dir, "a", "node_modules"), filepath.Join(dir, "b", "node_modules")
	writeTree(t, a, map[string]string{"x/index.js": "shared", "x/README": "a's own", "x/bin.js": "tool"}, "x/bin.js")
	writeTree(t, b, map[string]string{"x/index.js": "shared", "x/README": "b's own", "y/bin.js": "tool"})
	st, err := linkTree(a, store)
	if err != nil || st.Files != 3 || st.New != 3 || st.Saved != 0 {
		t.Fatalf("first tree: %+v %v", st, err)
	}
	st, err = linkTree(b, store)
	if err != nil || st.Files != 3 || st.New != 2 || st.Saved != int64(len("shared")) {
		t.Fatalf("second tree: %+v %v", st, err)
	}
	if !sameFile(t, filepath.Join(a, "x/index.js"), filepath.Join(b, "x/index.js")) {
		t.Error("the same bytes are stored twice")
	}
	if sameFile(t, filepath.Join(a, "x/README"), filepath.Join(b, "x/README")) {
		t.Error("different bytes share a file")
	}
	if sameFile(t, filepath.Join(a, "x/bin.js"), filepath.Join(b, "y/bin.js")) {
		t.Error("an executable shares a file with a non-executable")
	}
	for path, want := range map[string]string{"a/node_modules/x/README": "a's own", "b/node_modules/x/README": "b's own", "b/node_modules/x/index.js": "shared"} {
		if got, _ := os.ReadFile(filepath.Join(dir, path)); string(got) != want {
			t.Errorf("%s = %q, want %q", path, got, want)
		}
	}
	if fi, _ := os.Stat(filepath.Join(a, "x/bin.js")); fi.Mode()&0o111 == 0 {
		t.Error("the executable lost its mode")
	}
	st, err = linkTree(a, store)
	if err != nil || st.New != 0 || st.Saved != 0 || st.Linked != 3 {
		t.Errorf("a linked tree again: %+v %v", st, err)
	}
	left, _ := filepath.Glob(filepath.Join(a, "x", "*.mcpdrill-link"))
	if len(left) > 0 {
		t.Errorf("temporary links left: %v", left)
	}
}

// TestPipWheelsOnly: pip installs wheels only unless told otherwise, and
// reads the package after "--".
func TestPipWheelsOnly(t *testing.T) {
	u := &unit{dir: "/v", pkg: "x==1.0"}
	got := strings.Join(pipInstall(u, Options{Python: "python3"}), " ")
	if !strings.Contains(got, "--only-binary :all:") || !strings.HasSuffix(got, " -- x==1.0") {
		t.Errorf("pip: %s", got)
	}
	if got := strings.Join(pipInstall(u, Options{Python: "python3", SourceBuilds: true}), " "); strings.Contains(got, "--only-binary") {
		t.Errorf("pip with source builds: %s", got)
	}
	u.requirements = "/r.txt"
	if got := strings.Join(pipInstall(u, Options{Python: "python3"}), " "); !strings.Contains(got, "--only-binary :all:") || !strings.HasSuffix(got, "--require-hashes --no-deps -r /r.txt") {
		t.Errorf("pip from a lock: %s", got)
	}
}
