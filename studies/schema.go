package studies

import (
	"bytes"
	_ "embed"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// ResultsSchema is the JSON Schema (draft 2020-12) of results.json at
// SchemaVersion; it is shipped as studies/results.schema.json.
//
//go:embed results.schema.json
var ResultsSchema []byte

var (
	schemaOnce sync.Once
	schemaC    *jsonschema.Schema
	schemaErr  error
)

// Validate checks a results.json document against ResultsSchema.
func Validate(data []byte) error {
	schemaOnce.Do(func() {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(ResultsSchema))
		if err != nil {
			schemaErr = fmt.Errorf("results schema: %w", err)
			return
		}
		c := jsonschema.NewCompiler()
		if err := c.AddResource("results.schema.json", doc); err != nil {
			schemaErr = fmt.Errorf("results schema: %w", err)
			return
		}
		schemaC, schemaErr = c.Compile("results.schema.json")
	})
	if schemaErr != nil {
		return schemaErr
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("results.json: %w", err)
	}
	if err := schemaC.Validate(inst); err != nil {
		return fmt.Errorf("results.json does not match its schema: %w", err)
	}
	return nil
}
