package guard

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
)

// TestDiffAgainstLastSeen: Diff grades the last-seen set against the
// approved baseline, and says when there is nothing to compare or a set is
// corrupt, as typed errors.
func TestDiffAgainstLastSeen(t *testing.T) {
	st := mustOpen(t, filepath.Join(t.TempDir(), "guard"))
	a, b := mustSet(t, toolsA), mustSet(t, toolsB)
	if _, _, err := st.Observe("srv", a, PostureDiscovery, "proxy", t0); err != nil {
		t.Fatal(err)
	}
	r, err := st.Get("srv")
	if err != nil {
		t.Fatal(err)
	}
	same, err := Diff(context.Background(), "srv", r, nil)
	if err != nil {
		t.Fatal(err)
	}
	if same.Against != "last-seen" || same.Baseline != a.Fingerprint || same.Current != a.Fingerprint || len(same.Changes) != 0 || same.Changes == nil {
		t.Errorf("unchanged set: %+v", same)
	}
	if _, _, err := st.Observe("srv", b, PostureDiscovery, "proxy", t1); err != nil {
		t.Fatal(err)
	}
	if r, err = st.Get("srv"); err != nil {
		t.Fatal(err)
	}
	changed, err := Diff(context.Background(), "srv", r, nil)
	if err != nil {
		t.Fatal(err)
	}
	if changed.Status != StatusChanged.String() || changed.Current != b.Fingerprint || len(changed.Changes) == 0 {
		t.Errorf("changed set: %+v", changed)
	}
	if _, err := Diff(context.Background(), "srv", &Record{}, nil); !errors.Is(err, ErrNothingToApprove) {
		t.Errorf("no last-seen set: %v", err)
	}
	bad := *r
	ls := *r.LastSeen
	ls.Tools = append(ls.Tools[:0:0], []byte(`"not a tool"`))
	bad.LastSeen = &ls
	if _, err := Diff(context.Background(), "srv", &bad, nil); !errors.Is(err, ErrCorrupt) {
		t.Errorf("corrupt last-seen set: %v", err)
	}
}
