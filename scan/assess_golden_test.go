package scan

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdrill/mcpdrill/internal/jsonschema"
	"github.com/mcpdrill/mcpdrill/internal/jsonvalue"
	"github.com/mcpdrill/mcpdrill/internal/mcptest/testutil"
)

// assessInputs lists the schemas under testdata/assess, failing the test
// when there are none.
func assessInputs(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "assess", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no schemas under testdata/assess: %v", err)
	}
	return files
}

// TestAssessGolden assesses every testdata/assess/*.json schema and compares
// the Assessment and the synthesized instances with *.golden.
func TestAssessGolden(t *testing.T) {
	for _, f := range assessInputs(t) {
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
			testutil.Golden(t, filepath.Join("assess", name+".golden"), got)
		})
	}
}
