package studies

import (
	_ "embed"
	"fmt"
	"sync"

	"github.com/mcpdrill/mcpdrill/internal/jsonschema"
	"github.com/mcpdrill/mcpdrill/internal/jsonvalue"
)

// ResultsSchema is the JSON Schema (draft 2020-12) of results.json at
// SchemaVersion; it is shipped as studies/results.schema.json.
//
//go:embed results.schema.json
var ResultsSchema []byte

// resultsSchema compiles ResultsSchema once, through the project's one
// compile path (internal/jsonschema: no remote references, bounded).
var resultsSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	s, err := jsonschema.Compile(ResultsSchema)
	if err != nil {
		return nil, fmt.Errorf("results schema: %w", err)
	}
	return s, nil
})

// Validate checks a results.json document against ResultsSchema. The
// error names where the document departs from the schema, never a value.
func Validate(data []byte) error {
	s, err := resultsSchema()
	if err != nil {
		return err
	}
	inst, err := jsonvalue.DecodeJSON(data)
	if err != nil {
		return fmt.Errorf("results.json: %w", err)
	}
	if err := s.Validate(inst); err != nil {
		return fmt.Errorf("results.json does not match its schema: %w", err)
	}
	return nil
}
