package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
)

// ListPage is the parsed part of one tools/list result page.
type ListPage struct {
	Tools      []json.RawMessage `json:"tools"`
	NextCursor *string           `json:"nextCursor"`
	TTLMs      *int64            `json:"ttlMs"`
	CacheScope *string           `json:"cacheScope"`
}

// ParseToolsPage parses one tools/list result. A tool nested past
// encoding/json's limit costs only that tool (see jsonrpc.Unmarshal).
func ParseToolsPage(raw json.RawMessage) (ListPage, []Tool, error) {
	var p ListPage
	if err := jsonrpc.Unmarshal(raw, &p); err != nil {
		return ListPage{}, nil, fmt.Errorf("mcp: tools/list result: %w", err)
	}
	if p.Tools == nil {
		var probe map[string]json.RawMessage
		_ = jsonrpc.Unmarshal(raw, &probe)
		if _, ok := probe["tools"]; !ok {
			return p, nil, errors.New("mcp: tools/list result has no tools array")
		}
	}
	tools := make([]Tool, 0, len(p.Tools))
	for _, t := range p.Tools {
		tools = append(tools, ParseTool(t))
	}
	return p, tools, nil
}

// ParseTool reads the known fields of a tool object; Raw keeps it whole. A
// tool nested deeper than encoding/json takes is read member by member, so
// its name and its (raw) schemas are still there for the caller to judge.
func ParseTool(raw json.RawMessage) Tool {
	var t struct {
		Name         string          `json:"name"`
		Title        string          `json:"title"`
		Description  string          `json:"description"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
		Annotations  json.RawMessage `json:"annotations"`
	}
	_ = jsonrpc.Unmarshal(raw, &t)
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
