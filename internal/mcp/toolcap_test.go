package mcp

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// tinyTools is a tools/list result of n tiny tools.
func tinyTools(n int, cursor string) json.RawMessage {
	var b strings.Builder
	b.WriteString(`{"tools":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"t%d","inputSchema":{"type":"object"}}`, i)
	}
	b.WriteString(`]`)
	if cursor != "" {
		fmt.Fprintf(&b, `,"nextCursor":%q`, cursor)
	}
	b.WriteString(`}`)
	return json.RawMessage(b.String())
}

func TestParseToolsPageN(t *testing.T) {
	for _, tc := range []struct{ n, limit, read, dropped int }{
		{5, 10, 5, 0},
		{10, 10, 10, 0},
		{25, 10, 10, 15},
		{3, 0, 0, 3},
	} {
		_, tools, dropped, err := ParseToolsPageN(tinyTools(tc.n, ""), tc.limit)
		if err != nil || len(tools) != tc.read || dropped != tc.dropped {
			t.Errorf("n=%d limit=%d: read %d dropped %d (%v), want %d %d", tc.n, tc.limit, len(tools), dropped, err, tc.read, tc.dropped)
		}
	}
	if _, _, _, err := ParseToolsPageN(json.RawMessage(`{"nextCursor":"x"}`), 10); err == nil {
		t.Error("a result without tools parsed")
	}
}

// TestListToolsToolCap (F2): a listing stops at the per-page and total
// tool caps, and says so.
func TestListToolsToolCap(t *testing.T) {
	for _, tc := range []struct {
		name            string
		perPage, total  int
		read, pages     int
		capped, dropped int
	}{
		{"under both caps", 100, 1000, 75, 3, 0, 0},
		{"page cap", 10, 1000, 10, 1, 1, 15},
		{"total cap", 100, 60, 60, 3, 1, 15},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := connectFake(t, "many-tools", func(cfg *Config) { cfg.MaxPageTools, cfg.MaxTools = tc.perPage, tc.total })
			l, err := c.ListTools(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if len(l.Tools) != tc.read || l.Pages != tc.pages || l.ToolsCapped != (tc.capped == 1) || l.ToolsDropped != tc.dropped || l.Complete() == (tc.capped == 1) {
				t.Fatalf("read %d tools on %d pages, capped %v dropped %d", len(l.Tools), l.Pages, l.ToolsCapped, l.ToolsDropped)
			}
		})
	}
}
