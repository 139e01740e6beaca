package drift

import (
	"bytes"

	"github.com/mcpdrill/mcpdrill/internal/jsonvalue"
)

// decodeJSON parses exactly one JSON value with json.Number numbers and a
// bounded depth (internal/jsonvalue.DecodeJSON).
func decodeJSON(b []byte) (any, error) { return jsonvalue.DecodeJSON(b) }

// canonical is the canonical JSON encoding every comparison and fingerprint
// uses: internal/jsonvalue.Canonical (keys in UTF-16 code-unit order, numbers
// normalised from their exact decimal text, minimal string escaping).
func canonical(v any) []byte { return jsonvalue.Canonical(v) }

// equalJSON reports whether two decoded values have the same canonical form.
func equalJSON(a, b any) bool { return bytes.Equal(canonical(a), canonical(b)) }

// short renders a schema value for a message, truncated. It is only ever
// called on values declared in a schema, never on a tool result.
func short(v any) string {
	s := string(canonical(v))
	if len(s) > 48 {
		s = s[:45] + "..."
	}
	return s
}

// joinPointer appends reference tokens to a JSON pointer.
func joinPointer(ptr string, tokens ...string) string {
	for _, t := range tokens {
		ptr = jsonvalue.PointerAppend(ptr, t)
	}
	return ptr
}
