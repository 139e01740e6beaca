package drift

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
	"github.com/mcpdrill/mcpdrill/internal/jsonvalue"
	"github.com/mcpdrill/mcpdrill/internal/mcp"
)

// Manifest shapes ParseManifest accepts.
const (
	shapeListResult = "tools/list result"
	shapeBareArray  = "bare array"
	shapeRPCFrame   = "JSON-RPC response"
)

// Manifest is a declared tool set read from a file.
type Manifest struct {
	// Tools in file order.
	Tools []mcp.Tool
	// Shape is the form the file had (one of the Shape* constants).
	Shape string
	// NextCursor is set when the saved list result still had a cursor: the
	// manifest is one page of a longer list, and tools the server serves
	// beyond it cannot be called undeclared.
	NextCursor string
}

// Truncated reports whether the manifest is one page of a longer list.
func (m Manifest) Truncated() bool { return m.NextCursor != "" }

// MaxManifestTools is the most tools ParseManifest reads: decoding is
// what costs memory (a million tiny tools decode to gigabytes), so a
// longer list is refused before it is decoded.
const MaxManifestTools = 100_000

// toolCount counts the elements of b's tools array, in any accepted shape,
// without decoding them (0 when b is none of the shapes: ParseManifest
// then says why).
func toolCount(b []byte) int {
	var obj map[string]json.RawMessage
	if jsonrpc.Unmarshal(b, &obj) != nil {
		elems, _ := jsonrpc.SplitArray(b)
		return len(elems)
	}
	if res, ok := obj["result"]; ok {
		obj = nil
		if jsonrpc.Unmarshal(res, &obj) != nil {
			return 0
		}
	}
	elems, _ := jsonrpc.SplitArray(obj["tools"])
	return len(elems)
}

// ErrNotManifest reports a file that is none of the accepted shapes.
var ErrNotManifest = errors.New("not a tool manifest")

// ParseManifest reads a manifest: a tools/list result (an object with a
// "tools" array; envelope members such as nextCursor, ttlMs and cacheScope
// are allowed), a bare array of tools, or a whole JSON-RPC response frame
// whose result is a tools/list result. Every tool needs a non-blank string
// name and names must be unique. A drift capture file is also a tools/list
// result and parses as its declared tools.
func ParseManifest(b []byte) (Manifest, error) {
	if n := toolCount(b); n > MaxManifestTools {
		return Manifest{}, fmt.Errorf("%w: it lists %d tools, more than the %d a manifest may hold", ErrNotManifest, n, MaxManifestTools)
	}
	v, err := decodeJSON(b)
	if err != nil {
		return Manifest{}, fmt.Errorf("%w: %w", ErrNotManifest, err)
	}
	var m Manifest
	var list []any
	switch x := v.(type) {
	case []any:
		m.Shape, list = shapeBareArray, x
	case map[string]any:
		if _, ok := x["jsonrpc"]; ok {
			if e, ok := x["error"]; ok && e != nil {
				return Manifest{}, fmt.Errorf("%w: the JSON-RPC frame is an error response", ErrNotManifest)
			}
			res, ok := x["result"].(map[string]any)
			if !ok {
				return Manifest{}, fmt.Errorf("%w: the JSON-RPC frame has no result object", ErrNotManifest)
			}
			m.Shape, x = shapeRPCFrame, res
		} else {
			m.Shape = shapeListResult
		}
		if _, ok := x["mcpServers"]; ok {
			return Manifest{}, fmt.Errorf("%w: this is an MCP client configuration (mcpServers), not a tools/list result", ErrNotManifest)
		}
		tl, ok := x["tools"].([]any)
		if !ok {
			return Manifest{}, fmt.Errorf("%w: no \"tools\" array", ErrNotManifest)
		}
		list = tl
		if c, ok := x["nextCursor"].(string); ok {
			m.NextCursor = c
		}
	default:
		return Manifest{}, fmt.Errorf("%w: expected an object or an array, got %s", ErrNotManifest, jsonvalue.Kind(v))
	}
	seen := map[string]bool{}
	for i, e := range list {
		t, err := toolFromValue(e)
		if err != nil {
			return Manifest{}, fmt.Errorf("tools[%d]: %w", i, err)
		}
		if seen[t.Name] {
			return Manifest{}, fmt.Errorf("tools[%d]: %w: tool %q is listed twice", i, ErrInvalidTool, t.Name)
		}
		seen[t.Name] = true
		m.Tools = append(m.Tools, t)
	}
	return m, nil
}

// ToolNames returns the sorted names of a tool set.
func ToolNames(tools []mcp.Tool) []string {
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = t.Name
	}
	slices.Sort(out)
	return out
}

// ListResult renders tools as a tools/list result document, the form
// ParseManifest reads back.
func ListResult(tools []mcp.Tool) []byte {
	arr := make([]any, len(tools))
	for i, t := range tools {
		arr[i], _ = t.Value()
	}
	return canonical(map[string]any{"tools": arr})
}
