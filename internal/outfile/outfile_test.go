package outfile

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
)

const payload = `{"written":true}` + "\n"

// TestWrite writes into each kind of path Write meets and checks what is
// there afterwards.
func TestWrite(t *testing.T) {
	for _, tc := range []struct {
		name string
		// setup prepares dir and returns the path to write.
		setup func(t *testing.T, dir string) string
		// check looks at dir afterwards (the write succeeded).
		check func(t *testing.T, dir string)
		// wantErr, when set, is the error the write must match.
		wantErr error
	}{
		{
			name:  "new file",
			setup: func(t *testing.T, dir string) string { return filepath.Join(dir, "out.json") },
			check: func(t *testing.T, dir string) {
				wantFile(t, filepath.Join(dir, "out.json"), payload)
				if m := mode(t, filepath.Join(dir, "out.json")); m != 0o644&^umask() {
					t.Errorf("mode %v: the umask was not applied to 0644", m)
				}
			},
		},
		{
			name: "existing file keeps its mode and is replaced, not rewritten",
			setup: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "out.json")
				writeFile(t, p, "old contents that are longer than the new ones\n")
				if err := os.Chmod(p, 0o640); err != nil {
					t.Fatal(err)
				}
				// A second name for the old inode: an atomic replacement leaves it as it was.
				if err := os.Link(p, filepath.Join(dir, "old")); err != nil {
					t.Fatal(err)
				}
				return p
			},
			check: func(t *testing.T, dir string) {
				wantFile(t, filepath.Join(dir, "out.json"), payload)
				wantFile(t, filepath.Join(dir, "old"), "old contents that are longer than the new ones\n")
				if m := mode(t, filepath.Join(dir, "out.json")); m != 0o640 {
					t.Errorf("mode %v, want 0640", m)
				}
			},
		},
		{
			name: "symlink to a file in another directory",
			setup: func(t *testing.T, dir string) string {
				mkdir(t, filepath.Join(dir, "real"))
				writeFile(t, filepath.Join(dir, "real", "target.json"), "old\n")
				symlink(t, filepath.Join("real", "target.json"), filepath.Join(dir, "link.json"))
				return filepath.Join(dir, "link.json")
			},
			check: func(t *testing.T, dir string) {
				wantLink(t, filepath.Join(dir, "link.json"))
				wantFile(t, filepath.Join(dir, "real", "target.json"), payload)
				wantOnly(t, filepath.Join(dir, "real"), "target.json")
			},
		},
		{
			name: "chain of links, relative to each link's directory",
			setup: func(t *testing.T, dir string) string {
				mkdir(t, filepath.Join(dir, "a"))
				mkdir(t, filepath.Join(dir, "b"))
				writeFile(t, filepath.Join(dir, "b", "t"), "old\n")
				symlink(t, "../b/t", filepath.Join(dir, "a", "l2"))
				symlink(t, "a/l2", filepath.Join(dir, "l1"))
				return filepath.Join(dir, "l1")
			},
			check: func(t *testing.T, dir string) {
				wantLink(t, filepath.Join(dir, "l1"))
				wantLink(t, filepath.Join(dir, "a", "l2"))
				wantFile(t, filepath.Join(dir, "b", "t"), payload)
			},
		},
		{
			name: "dangling link creates its target",
			setup: func(t *testing.T, dir string) string {
				symlink(t, "new.json", filepath.Join(dir, "link.json"))
				return filepath.Join(dir, "link.json")
			},
			check: func(t *testing.T, dir string) {
				wantLink(t, filepath.Join(dir, "link.json"))
				wantFile(t, filepath.Join(dir, "new.json"), payload)
			},
		},
		{
			name: "link loop",
			setup: func(t *testing.T, dir string) string {
				symlink(t, "b", filepath.Join(dir, "a"))
				symlink(t, "a", filepath.Join(dir, "b"))
				return filepath.Join(dir, "a")
			},
			wantErr: ErrNotWritable,
		},
		{
			name:    "directory",
			setup:   func(t *testing.T, dir string) string { return dir },
			wantErr: ErrNotWritable,
		},
		{
			name:    "missing parent directory",
			setup:   func(t *testing.T, dir string) string { return filepath.Join(dir, "no", "such", "out.json") },
			wantErr: fs.ErrNotExist,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			err := Write(tc.setup(t, dir), []byte(payload), 0o644)
			if testutil.WantErrorIs(t, err, tc.wantErr) {
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, dir)
			noTemps(t, dir)
		})
	}
}

// readAll opens a reader with open in a goroutine, runs write, and returns
// all the reader got.
func readAll(t *testing.T, open func() (io.ReadCloser, error), write func() error) string {
	t.Helper()
	got := make(chan string, 1)
	go func() {
		r, err := open()
		if err != nil {
			got <- "open: " + err.Error()
			return
		}
		b, err := io.ReadAll(r)
		// Closed before the result is sent: a FIFO still open here would
		// let the next writer in and lose its data to this reader.
		r.Close()
		if err != nil {
			got <- "read: " + err.Error()
			return
		}
		got <- string(b)
	}()
	if err := write(); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-got:
		return s
	case <-time.After(testutil.Hang):
		t.Fatal("the reader got nothing in 10s")
		return ""
	}
}

func writeFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mkdir(t *testing.T, p string) {
	t.Helper()
	if err := os.Mkdir(p, 0o755); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, dest, link string) {
	t.Helper()
	if err := os.Symlink(dest, link); err != nil {
		t.Skipf("no symbolic links: %v", err)
	}
}

func wantFile(t *testing.T, p, want string) {
	t.Helper()
	if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("%s: %v, %v; want a regular file", p, fi, err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != want {
		t.Errorf("%s = %q, want %q", p, b, want)
	}
}

func wantLink(t *testing.T, p string) {
	t.Helper()
	if fi, err := os.Lstat(p); err != nil || fi.Mode().Type() != fs.ModeSymlink {
		t.Errorf("%s: %v, %v; want it still a symbolic link", p, fi, err)
	}
}

func wantOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if strings.Join(got, " ") != strings.Join(names, " ") {
		t.Errorf("%s holds %q, want %q", dir, got, names)
	}
}

// noTemps fails when a temporary file was left anywhere below dir.
func noTemps(t *testing.T, dir string) {
	t.Helper()
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), ".tmp-") {
			t.Errorf("temporary file left: %s", p)
		}
		return nil
	})
}

func mode(t *testing.T, p string) fs.FileMode {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// umask reads the process umask by creating a file with 0777.
func umask() fs.FileMode {
	f, err := os.CreateTemp("", "umask")
	if err != nil {
		return 0o022
	}
	defer os.Remove(f.Name())
	f.Close()
	os.Remove(f.Name())
	g, err := os.OpenFile(f.Name(), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o777)
	if err != nil {
		return 0o022
	}
	defer g.Close()
	fi, err := g.Stat()
	if err != nil {
		return 0o022
	}
	return 0o777 &^ fi.Mode().Perm()
}
