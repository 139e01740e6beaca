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

// ParseToolsPage parses one tools/list result, reading at most
// DefaultMaxPageTools tools of it (ParseToolsPageN).
func ParseToolsPage(raw json.RawMessage) (ListPage, []Tool, error) {
	p, tools, _, err := ParseToolsPageN(raw, DefaultMaxPageTools)
	return p, tools, err
}

// ParseToolsPageN parses one tools/list result and reads its first limit
// tools; dropped counts the tools of the page past limit, which are not
// read. A tool nested past encoding/json's limit costs only that tool (see
// jsonrpc.Unmarshal).
func ParseToolsPageN(raw json.RawMessage, limit int) (_ ListPage, _ []Tool, dropped int, _ error) {
	var page struct {
		Tools      json.RawMessage `json:"tools"`
		NextCursor *string         `json:"nextCursor"`
		TTLMs      *int64          `json:"ttlMs"`
		CacheScope *string         `json:"cacheScope"`
	}
	if err := jsonrpc.Unmarshal(raw, &page); err != nil {
		return ListPage{}, nil, 0, fmt.Errorf("mcp: tools/list result: %w", err)
	}
	p := ListPage{NextCursor: page.NextCursor, TTLMs: page.TTLMs, CacheScope: page.CacheScope}
	if len(page.Tools) == 0 || string(page.Tools) == "null" {
		return p, nil, 0, errors.New("mcp: tools/list result has no tools array")
	}
	// The elements are sub-slices of the page: a page of a million tools
	// costs a slice header each here, and only the first limit are read.
	elems, err := jsonrpc.SplitArray(page.Tools)
	if err != nil {
		return ListPage{}, nil, 0, fmt.Errorf("mcp: tools/list result: tools: %w", err)
	}
	if limit >= 0 && len(elems) > limit {
		dropped = len(elems) - limit
		elems = elems[:limit]
	}
	p.Tools = elems
	tools := make([]Tool, 0, len(elems))
	for _, t := range elems {
		tools = append(tools, ParseTool(t))
	}
	return p, tools, dropped, nil
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
		room := min(c.cfg.MaxPageTools, c.cfg.MaxTools-len(out.Tools))
		page, tools, dropped, err := ParseToolsPageN(msg.Result, room)
		if err != nil {
			return out, fmt.Errorf("page %d: %w", out.Pages+1, err)
		}
		first := out.Pages == 0
		for i := range tools {
			tools[i].Page = out.Pages
		}
		out.Pages++
		out.Raw = append(out.Raw, msg.Result)
		out.Tools = append(out.Tools, tools...)
		if dropped > 0 {
			// Past the tool cap: the listing stops, and nothing is
			// claimed about the tools not read.
			out.Capped, out.ToolsCapped, out.ToolsDropped = true, true, dropped
			return out, nil
		}
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
