package drift

import (
	"encoding/json"

	"github.com/mcpdrill/mcpdrill/internal/jsonschema"
	"github.com/mcpdrill/mcpdrill/internal/jsonvalue"
	"github.com/mcpdrill/mcpdrill/internal/mcp"
)

// Structural is tools with the words written for people left out: each
// tool's title and description, its annotations' title, and the
// "description" and "title" keywords of every schema and subschema of its
// inputSchema and outputSchema (a property named "description" is a
// property, and stays). What is left is what a client validates and calls
// with: names, schemas' constraints, behavioural annotations. Compared or
// fingerprinted structurally, an edit of wording is no change.
//
// A tool that cannot be decoded is kept as it is. The tools given are not
// changed.
func Structural(tools []mcp.Tool) []mcp.Tool {
	out := make([]mcp.Tool, len(tools))
	for i, t := range tools {
		out[i] = structuralTool(t)
	}
	return out
}

func structuralTool(t mcp.Tool) mcp.Tool {
	v, err := t.Value()
	if err != nil {
		return t
	}
	// A copy of its own: the decoded value is shared by the tool's copies.
	b, err := json.Marshal(v)
	if err != nil {
		return t
	}
	c, err := jsonvalue.DecodeJSON(b)
	m, ok := c.(map[string]any)
	if err != nil || !ok {
		return t
	}
	delete(m, "title")
	delete(m, "description")
	if a, ok := m["annotations"].(map[string]any); ok {
		delete(a, "title")
	}
	for _, k := range []string{"inputSchema", "outputSchema"} {
		if s, ok := m[k]; ok {
			jsonschema.Walk(s, func(n jsonschema.Node) bool {
				if o := n.Object(); o != nil {
					delete(o, "description")
					delete(o, "title")
				}
				return true
			})
		}
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return t
	}
	s := mcp.ParseDecodedTool(raw, m)
	s.Page = t.Page
	return s
}

// Structural is the capture with its tools made structural (Structural)
// and its fingerprint theirs; its canaries are its own.
func (c *Capture) Structural() *Capture {
	s := *c
	s.tools = Structural(c.tools)
	s.Tools = make([]json.RawMessage, len(s.tools))
	for i, t := range s.tools {
		s.Tools[i] = t.Raw
	}
	s.Fingerprint = Fingerprint(s.tools)
	return &s
}
