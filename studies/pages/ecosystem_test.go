package pages

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpdrill/mcpdrill/studies"
)

func loadStudy(t *testing.T, name string) *studies.Results {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "ecosystem", name))
	if err != nil {
		t.Fatal(err)
	}
	r, err := studies.Load(data)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return r
}

// TestEcosystemPagesAreGenerated: every figure of the published
// SUMMARY.md, index.html and CHANGES.md is the one study report computes
// from results.json (and previous-results.json): the committed pages are
// exactly what it writes, so none can drift from the data.
func TestEcosystemPagesAreGenerated(t *testing.T) {
	cur := loadStudy(t, "results.json")
	prev := loadStudy(t, "previous-results.json")
	want := map[string][]byte{ChangesFile: Changes(prev, cur)}
	ps, err := Pages(cur)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range ps {
		want[name] = b
	}
	for name, b := range want {
		got, err := os.ReadFile(filepath.Join("..", "ecosystem", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, b) {
			t.Errorf("studies/ecosystem/%s is not what study report writes from results.json (make study-ecosystem, or study report --previous)", name)
		}
	}
}
