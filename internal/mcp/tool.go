package mcp

import (
	"encoding/json"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
)

// Tool is one MCP tool definition: an entry of a tools/list result, or a
// tool read from a file (a drift manifest, baseline or capture).
type Tool struct {
	// Name, Title and Description are the tool's string members ("" when
	// absent or not a string).
	Name, Title, Description string
	// InputSchema, OutputSchema and Annotations are those members' bytes
	// (nil when absent).
	InputSchema, OutputSchema, Annotations json.RawMessage
	// Raw is the tool object as it was read.
	Raw json.RawMessage
	// Page is the 0-based tools/list page the tool was read out of, or
	// NoPage for a tool that was not read out of a listing (one read from a
	// file).
	Page int
}

// NoPage is the Page of a tool not read out of a tools/list page.
const NoPage = -1

// ParseTool reads the members of a tool object; Raw keeps it whole and
// Page is NoPage. Members are matched by their exact names, as a JSON
// parser reads the object (not under encoding/json's case folding), and a
// repeated member's last value wins. A tool nested deeper than
// encoding/json takes is read member by member, so its name and its (raw)
// schemas are still there for the caller to judge; one that is not an
// object has no members.
func ParseTool(raw json.RawMessage) Tool {
	var m map[string]json.RawMessage
	_ = jsonrpc.Unmarshal(raw, &m)
	str := func(k string) string {
		var s string
		_ = json.Unmarshal(m[k], &s)
		return s
	}
	return Tool{Name: str("name"), Title: str("title"), Description: str("description"),
		InputSchema: m["inputSchema"], OutputSchema: m["outputSchema"], Annotations: m["annotations"],
		Raw: raw, Page: NoPage}
}
