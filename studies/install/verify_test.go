package install

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrill/mcpdrill/studies"
)

// TestVerify: a row is run again alone, from a scratch study directory
// holding only what it pins, and the report says its outcome, the rule
// and the line that decided, and quotes what the server said.
func TestVerify(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the servers are POSIX shells")
	}
	if testing.Short() {
		t.Skip("starts servers")
	}
	dir := t.TempDir()
	spec, err := studies.ParseSpec([]byte(`{"mcpServers": {
		"asks": {"command": "/bin/sh", "args": ["-c", "echo 'Usage: asks --input <file>' >&2; printf '\\033]52;c;aGk=\\007' >&2; exit 2"]},
		"unpinned": {"command": "npm/x@1.0.0/node_modules/.bin/x", "package": "x@1.0.0"},
		"skipped": {"command": "x", "excluded": "library"}
	}}`), dir)
	if err != nil {
		t.Fatal(err)
	}
	o := VerifyOptions{Install: Options{TempDir: dir, Timeout: time.Minute}, Run: studies.Options{Deadline: 20 * time.Second, RequestTimeout: 2 * time.Second, TempDir: dir}}
	for name, want := range map[string][]string{
		"asks":     {"asks: needs-argument", `why:     it asked for an argument or a setting: "Usage: asks --input <file>"`, `"\x1b]52;c;aGk=\a"`},
		"unpinned": {"unpinned: failed-install", "npm/x@1.0.0 has no package.json"},
		"skipped":  {"skipped: excluded", "excluded: library"},
	} {
		v, err := Verify(context.Background(), spec, name, o)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := WriteVerified(&b, name, v); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: the report lacks %q:\n%s", name, w, out)
			}
		}
		if strings.ContainsRune(out, '\x1b') {
			t.Errorf("%s: a terminal escape reached the report:\n%s", name, out)
		}
		if _, err := os.Stat(v.Dir); err == nil {
			t.Errorf("%s: the scratch directory %s is left", name, v.Dir)
		}
	}
	if _, err := Verify(context.Background(), spec, "absent", o); err == nil {
		t.Error("a row that does not exist verified")
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "mcpdrill-verify-*")); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}
