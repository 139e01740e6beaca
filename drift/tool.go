package drift

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Tool is one MCP tool definition, decoded. Schema values are decoded JSON
// (map[string]any, []any, string, json.Number, bool, nil).
type Tool struct {
	Name        string
	Title       string
	Description string
	// InputSchema is the decoded inputSchema; nil when absent.
	InputSchema any
	// OutputSchema is the decoded outputSchema; nil when absent.
	OutputSchema any
	// Annotations is the decoded annotations object; nil when absent.
	Annotations map[string]any
	// Raw is the tool object as it was read.
	Raw json.RawMessage
}

// ErrInvalidTool reports a tool object that cannot be compared.
var ErrInvalidTool = errors.New("invalid tool definition")

// ParseTool decodes one tool object. It needs a non-blank string name; the
// other members are optional and kept as decoded JSON.
func ParseTool(raw []byte) (Tool, error) {
	v, err := decodeJSON(raw)
	if err != nil {
		return Tool{}, fmt.Errorf("%w: %w", ErrInvalidTool, err)
	}
	return toolFromValue(v, raw)
}

func toolFromValue(v any, raw []byte) (Tool, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return Tool{}, fmt.Errorf("%w: a tool must be a JSON object, got %s", ErrInvalidTool, describeType(v))
	}
	name, _ := m["name"].(string)
	if strings.TrimSpace(name) == "" {
		return Tool{}, fmt.Errorf("%w: a tool needs a non-blank string \"name\"", ErrInvalidTool)
	}
	t := Tool{Name: name, InputSchema: m["inputSchema"], OutputSchema: m["outputSchema"]}
	if s, ok := m["title"].(string); ok {
		t.Title = s
	}
	if s, ok := m["description"].(string); ok {
		t.Description = s
	}
	if a, ok := m["annotations"].(map[string]any); ok {
		t.Annotations = a
	}
	if raw == nil {
		raw = canonical(v)
	}
	t.Raw = append(json.RawMessage(nil), raw...)
	return t, nil
}
