package studies

import (
	"bytes"
	_ "embed"
	"encoding/json"
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

// Load checks a results.json document against ResultsSchema and reads it.
// A document of an older schema version that Read upgrades (2) is read
// first and its upgrade checked.
func Load(data []byte) (*Results, error) {
	var head struct {
		SchemaVersion string `json:"schema_version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("results.json: %w", err)
	}
	if head.SchemaVersion == SchemaVersion {
		if err := Validate(data); err != nil {
			return nil, err
		}
	}
	r, err := Read(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	if head.SchemaVersion != SchemaVersion {
		var b bytes.Buffer
		if err := Write(&b, r); err != nil {
			return nil, err
		}
		if err := Validate(b.Bytes()); err != nil {
			return nil, fmt.Errorf("schema_version %s, upgraded: %w", head.SchemaVersion, err)
		}
	}
	return r, nil
}
