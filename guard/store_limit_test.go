package guard

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/inputfile"
	"github.com/mcpdrill/mcpdrill/internal/mcp"
)

// TestStoreFilesAreBounded (F13, issue 35): a store file is read with the
// input-size limit, so a record or an audit log that is huge, or is
// /dev/zero, fails with an error naming it and never exhausts memory; a
// record the store could not read back is never written.
func TestStoreFilesAreBounded(t *testing.T) {
	a := mustSet(t, toolsA)
	setup := func(t *testing.T) (*Store, string, string) {
		st := mustOpen(t, t.TempDir())
		if _, _, err := st.Observe("srv", a, PostureDiscovery, "proxy", t0); err != nil {
			t.Fatal(err)
		}
		return st, st.path("srv"), filepath.Join(st.Dir(), AuditFile)
	}
	huge := func(t *testing.T, p string) {
		t.Helper()
		if err := os.Truncate(p, inputfile.MaxSize+1); err != nil { // sparse: no disk, no time
			t.Fatal(err)
		}
	}
	devZero := func(t *testing.T, p string) {
		t.Helper()
		if _, err := os.Stat("/dev/zero"); err != nil {
			t.Skip("no /dev/zero")
		}
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("/dev/zero", p); err != nil {
			t.Skip(err)
		}
	}
	reads := func(st *Store) map[string]error {
		_, get := st.Get("srv")
		_, list := st.List()
		_, audit := st.Audit("srv")
		_, _, write := st.Quarantine("srv", "", "alice", t1)
		return map[string]error{"get": get, "list": list, "audit": audit, "write": write}
	}
	for _, tc := range []struct {
		name   string
		file   func(rec, audit string) string
		make   func(*testing.T, string)
		failed []string // the operations that must fail
		why    string
	}{
		{"huge record", func(rec, _ string) string { return rec }, huge, []string{"get", "list", "write"}, "larger than the 64 MiB"},
		{"record is /dev/zero", func(rec, _ string) string { return rec }, devZero, []string{"get", "list", "write"}, "not a regular file"},
		{"huge audit log", func(_, audit string) string { return audit }, huge, []string{"audit"}, "larger than the 64 MiB"},
		{"audit log is /dev/zero", func(_, audit string) string { return audit }, devZero, []string{"audit", "write"}, "not a regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, rec, audit := setup(t)
			p := tc.file(rec, audit)
			tc.make(t, p)
			got := reads(st)
			for _, op := range tc.failed {
				err := got[op]
				if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), tc.why) {
					t.Errorf("%s: %v, want an error naming %s: %s", op, err, p, tc.why)
				}
				if strings.HasPrefix(tc.name, "huge") && op != "write" && !errors.Is(err, inputfile.ErrTooLarge) {
					t.Errorf("%s: %v is not ErrTooLarge", op, err)
				}
				if p == rec && !errors.Is(err, ErrCorrupt) {
					t.Errorf("%s: %v is not ErrCorrupt (a record the store cannot read is never reset)", op, err)
				}
			}
		})
	}
}

// TestStoreNeverWritesWhatItCannotRead: a record over the store file limit
// is refused before anything is written, audit line included, so the
// store never holds a record it would refuse to read.
func TestStoreNeverWritesWhatItCannotRead(t *testing.T) {
	defer func(n int64) { maxStoreFile = n }(maxStoreFile)
	maxStoreFile = 4 << 10
	st := mustOpen(t, t.TempDir())
	big := NewToolSet([]mcp.Tool{{Name: "big", Description: strings.Repeat("x", 8<<10), InputSchema: json.RawMessage(`{"type":"object"}`)}})
	if _, _, err := st.Observe("srv", big, PostureDiscovery, "proxy", t0); err == nil || !strings.Contains(err.Error(), "over the 4 KiB") {
		t.Fatalf("a record over the limit: %v", err)
	}
	if r, err := st.Get("srv"); r != nil || err != nil {
		t.Fatalf("a record over the limit was written: %v %v", r, err)
	}
	if evs, err := st.Audit(""); len(evs) != 0 || err != nil {
		t.Fatalf("an audit line for a record never written: %v %v", evs, err)
	}
}
