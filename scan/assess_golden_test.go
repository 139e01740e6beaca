package scan

import (
	"bytes"
	"encoding/json"
	"github.com/mcpdrill/mcpdrill/internal/jsonschema"
	"github.com/mcpdrill/mcpdrill/internal/jsonvalue"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAssessGolden assesses every testdata/assess/*.json schema and compares
// the Assessment and the synthesized instances with *.golden.
func TestAssessGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "assess", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden inputs: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			type golden struct {
				Assessment Assessment        `json:"assessment"`
				Instances  []json.RawMessage `json:"instances"`
			}
			g := golden{Assessment: Assess(raw)}
			if insts, err := jsonschema.Synthesize(raw, jsonschema.SynthOptions{}); err == nil {
				for _, in := range insts {
					g.Instances = append(g.Instances, jsonvalue.Canonical(in))
				}
			}
			got, err := json.MarshalIndent(g, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			path := strings.TrimSuffix(f, ".json") + ".golden"
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -run TestAssessGolden -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from golden:\n got: %s\nwant: %s", name, got, want)
			}
		})
	}
}
