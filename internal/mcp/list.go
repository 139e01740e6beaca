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

// ListTools pages through tools/list, following nextCursor up to
// MaxListPages and stopping at a repeated cursor. On error the pages read so
// far are returned with it; a JSON-RPC error reply is returned as a
// *jsonrpc.Error (errors.As).
func (c *Client) ListTools(ctx context.Context) (ToolList, error) {
	return c.ListToolsMeta(ctx, nil)
}

// ListToolsMeta is ListTools with meta as the params._meta of every page's
// request (nil: none).
func (c *Client) ListToolsMeta(ctx context.Context, meta json.RawMessage) (ToolList, error) {
	var out ToolList
	seen := map[string]bool{}
	names := map[string]bool{}
	cursor := ""
	for {
		if out.Pages >= c.cfg.MaxListPages {
			out.Capped = true
			return out, nil
		}
		params := map[string]any{}
		if meta != nil {
			params["_meta"] = meta
		}
		if out.Pages > 0 {
			params["cursor"] = cursor
		}
		var p any
		if len(params) > 0 {
			p = params
		}
		msg, err := c.Call(ctx, "tools/list", p)
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
		if why := ListAmbiguity(msg.Result); why != "" && out.Ambiguity == "" {
			out.Ambiguity = fmt.Sprintf("page %d: %s", out.Pages+1, why)
		}
		for i := range tools {
			tools[i].Page = out.Pages
			if n := tools[i].Name; n != "" {
				if names[n] && out.Duplicate == "" {
					out.Duplicate = n
				}
				names[n] = true
			}
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

// ListAmbiguity names a member of a tools/list result that parsers could
// read differently (see [jsonrpc.FoldCollision]): in the result, in a tool,
// or at the top of a tool's schemas or annotations, which clients decode
// into structures whose fields encoding/json matches regardless of case.
// It returns "" when there is none or result cannot be split (the parse of
// the result judges it then).
func ListAmbiguity(result json.RawMessage) string {
	if k, ok := jsonrpc.FoldCollision(result); ok {
		return fmt.Sprintf("the result repeats member %q", k)
	}
	var res map[string]json.RawMessage
	if jsonrpc.Unmarshal(result, &res) != nil {
		return ""
	}
	tools, _ := jsonrpc.SplitArray(res["tools"])
	for i, t := range tools {
		if k, ok := jsonrpc.FoldCollision(t); ok {
			return fmt.Sprintf("tool %d repeats member %q", i, k)
		}
		var parts map[string]json.RawMessage
		if jsonrpc.Unmarshal(t, &parts) != nil {
			continue
		}
		for _, m := range []string{"inputSchema", "outputSchema", "annotations"} {
			if k, ok := jsonrpc.FoldCollision(parts[m]); ok {
				return fmt.Sprintf("the %s of tool %d repeats member %q", m, i, k)
			}
		}
	}
	return ""
}
