package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
)

// ListPage is the parsed part of one tools/list result page.
type ListPage struct {
	Tools      []json.RawMessage `json:"tools"`
	NextCursor *string           `json:"nextCursor"`
	TTLMs      *int64            `json:"ttlMs"`
	CacheScope *string           `json:"cacheScope"`
}

// ParseToolsPage parses one tools/list result.
func ParseToolsPage(raw json.RawMessage) (ListPage, []Tool, error) {
	var p ListPage
	if err := json.Unmarshal(raw, &p); err != nil {
		// A tool nested past encoding/json's limit costs only that tool.
		if !jsonrpc.TooDeep(err, raw) {
			return ListPage{}, nil, fmt.Errorf("mcp: tools/list result: %w", err)
		}
		if p, err = parseDeepPage(raw); err != nil {
			return ListPage{}, nil, fmt.Errorf("mcp: tools/list result: %w", err)
		}
	}
	if p.Tools == nil {
		ms, _ := jsonrpc.SplitObject(raw)
		if !slices.ContainsFunc(ms, func(m jsonrpc.Member) bool { return m.Key == "tools" }) {
			return p, nil, errors.New("mcp: tools/list result has no tools array")
		}
	}
	tools := make([]Tool, 0, len(p.Tools))
	for _, t := range p.Tools {
		tools = append(tools, ParseTool(t))
	}
	return p, tools, nil
}

// parseDeepPage reads a page member by member, its tools array split
// element by element, at any depth.
func parseDeepPage(raw json.RawMessage) (ListPage, error) {
	var p ListPage
	var tools json.RawMessage
	err := jsonrpc.DecodeFields(raw, map[string]any{"tools": &tools, "nextcursor": &p.NextCursor,
		"ttlms": &p.TTLMs, "cachescope": &p.CacheScope})
	if err != nil || tools == nil || string(tools) == "null" {
		return p, err
	}
	p.Tools, err = jsonrpc.SplitArray(tools)
	return p, err
}

// toolFields are the members of a tool object that ParseTool reads.
type toolFields struct {
	Name         string          `json:"name"`
	Title        string          `json:"title"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
	Annotations  json.RawMessage `json:"annotations"`
}

// decodeMembers reads the fields member by member, the schemas and
// annotations raw at any depth.
func (t *toolFields) decodeMembers(raw []byte) error {
	return jsonrpc.DecodeFields(raw, map[string]any{"name": &t.Name, "title": &t.Title,
		"description": &t.Description, "inputschema": &t.InputSchema,
		"outputschema": &t.OutputSchema, "annotations": &t.Annotations})
}

// ParseTool reads the known fields of a tool object; Raw keeps it whole. A
// tool nested deeper than encoding/json takes is read member by member, so
// its name and its (raw) schemas are still there for the caller to judge.
func ParseTool(raw json.RawMessage) Tool {
	var t toolFields
	if err := json.Unmarshal(raw, &t); err != nil && jsonrpc.TooDeep(err, raw) {
		t = toolFields{}
		_ = t.decodeMembers(raw)
	}
	return Tool{Name: t.Name, Title: t.Title, Description: t.Description,
		InputSchema: t.InputSchema, OutputSchema: t.OutputSchema, Annotations: t.Annotations, Raw: raw}
}

// ListTools pages through tools/list, following nextCursor up to
// MaxListPages and stopping at a repeated cursor. On error the pages read so
// far are returned with it; a JSON-RPC error reply is returned as a
// *jsonrpc.Error (errors.As).
func (c *Client) ListTools(ctx context.Context) (ToolList, error) {
	var out ToolList
	seen := map[string]bool{}
	cursor := ""
	for {
		if out.Pages >= c.cfg.MaxListPages {
			out.Capped = true
			return out, nil
		}
		var params any
		if out.Pages > 0 {
			params = map[string]any{"cursor": cursor}
		}
		msg, err := c.Call(ctx, "tools/list", params)
		if err != nil {
			return out, err
		}
		if msg.Error != nil {
			return out, fmt.Errorf("mcp: tools/list page %d: %w", out.Pages+1, msg.Error)
		}
		page, tools, err := ParseToolsPage(msg.Result)
		if err != nil {
			return out, fmt.Errorf("page %d: %w", out.Pages+1, err)
		}
		first := out.Pages == 0
		out.Pages++
		out.Raw = append(out.Raw, msg.Result)
		out.Tools = append(out.Tools, tools...)
		if first {
			out.HasTTL, out.HasCacheScope = page.TTLMs != nil, page.CacheScope != nil
			out.TTLMs = page.TTLMs
			if page.CacheScope != nil {
				out.CacheScope = *page.CacheScope
			}
		} else {
			out.HasTTL = out.HasTTL && page.TTLMs != nil
			out.HasCacheScope = out.HasCacheScope && page.CacheScope != nil
		}
		if page.NextCursor == nil || *page.NextCursor == "" {
			return out, nil
		}
		cursor = *page.NextCursor
		if seen[cursor] {
			out.CursorLoop = true
			return out, nil
		}
		seen[cursor] = true
	}
}
