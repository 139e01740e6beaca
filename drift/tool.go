package drift

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/mcpdrill/mcpdrill/internal/jsonvalue"
	"github.com/mcpdrill/mcpdrill/internal/mcp"
)

// A tool that drift compares is an mcp.Tool: one read out of a live listing
// keeps its page, one read from a file (a manifest, a baseline, a capture)
// has Page mcp.NoPage.

// ErrInvalidTool reports a tool object that cannot be compared.
var ErrInvalidTool = errors.New("invalid tool definition")

// ParseTool reads one tool object and checks that it can be compared
// (checkTool). raw is copied.
func ParseTool(raw []byte) (mcp.Tool, error) {
	t := mcp.ParseTool(bytes.Clone(raw))
	return t, checkTool(t)
}

// checkTool reports why a tool cannot be compared: it does not decode
// (mcp.Tool.Value: too deep, a number too large), it is not a JSON object,
// or it has no non-blank string name.
func checkTool(t mcp.Tool) error {
	v, err := t.Value()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidTool, err)
	}
	if _, ok := v.(map[string]any); !ok {
		return fmt.Errorf("%w: a tool must be a JSON object, got %s", ErrInvalidTool, jsonvalue.Kind(v))
	}
	if strings.TrimSpace(t.Name) == "" {
		return fmt.Errorf("%w: a tool needs a non-blank string \"name\"", ErrInvalidTool)
	}
	return nil
}

// toolFromValue makes the tool of an already decoded tool object, its Raw
// the canonical encoding.
func toolFromValue(v any) (mcp.Tool, error) {
	t := mcp.ParseDecodedTool(canonical(v), v)
	return t, checkTool(t)
}
