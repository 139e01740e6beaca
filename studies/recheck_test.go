package studies_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpdrill/mcpdrill/studies"
)

// TestRecheckPublished compares the rows of a re-run (make study-recheck:
// study run --only, the results.json named by $MCPDRILL_RECHECK) with the
// same rows of the published ecosystem study, outside meta: a published
// row is what HEAD measures. Skipped without the variable.
func TestRecheckPublished(t *testing.T) {
	path := os.Getenv("MCPDRILL_RECHECK")
	if path == "" {
		t.Skip("MCPDRILL_RECHECK names no re-run (make study-recheck)")
	}
	rerun := load(t, path)
	published := load(t, filepath.Join("ecosystem", "results.json"))
	if len(rerun.Only) == 0 || len(rerun.Servers) != len(rerun.Only) {
		t.Fatalf("the re-run is not a run of some rows (only %v, %d rows)", rerun.Only, len(rerun.Servers))
	}
	if rerun.SpecHash != published.SpecHash || rerun.Settings != published.Settings {
		t.Fatalf("the re-run ran another servers.json or other settings (%s %+v, published %s %+v)", rerun.SpecHash, rerun.Settings, published.SpecHash, published.Settings)
	}
	rows := map[string]studies.Row{}
	for _, r := range published.Servers {
		rows[r.Name] = r
	}
	ran := map[string]bool{}
	for _, r := range rerun.Servers {
		ran[r.Name] = true
	}
	for _, r := range rerun.Servers {
		p, ok := rows[r.Name]
		if !ok {
			t.Errorf("%s: not in the published study", r.Name)
			continue
		}
		if vd := p.VersionDrift; vd != nil && !ran[vd.Previous] && r.VersionDrift == nil {
			// The pair is graded only when both releases run: without the
			// previous release the re-run has no pair to compare.
			p.VersionDrift = nil
		}
		got, _ := json.MarshalIndent(r, "", " ")
		want, _ := json.MarshalIndent(p, "", " ")
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from the published row:\nre-run:    %s\npublished: %s", r.Name, got, want)
		}
	}
}

func load(t *testing.T, path string) *studies.Results {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := studies.Load(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return r
}
