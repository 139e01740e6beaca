package mcp

import (
	"encoding/json"
	"strings"
	"sync"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
	"github.com/mcpdrill/mcpdrill/internal/jsonvalue"
)

// Tool is one MCP tool definition: an entry of a tools/list result, or a
// tool read from a file (a drift manifest, baseline or capture). Its
// members are kept as read; Value and the *Value accessors decode it when
// first asked, and the copies of a Tool that ParseTool made share what was
// decoded (a Tool is read-only once parsed).
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

	decoded *decodedTool
}

// decodedTool is a tool's decoding, made once and shared by its copies.
type decodedTool struct {
	once sync.Once
	v    any
	err  error
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
		Raw: raw, Page: NoPage, decoded: &decodedTool{}}
}

// ParseDecodedTool is ParseTool of raw whose decoding v (as
// jsonvalue.DecodeJSON gives it) is already known: Value gives v without
// decoding raw again.
func ParseDecodedTool(raw json.RawMessage, v any) Tool {
	t := ParseTool(raw)
	t.decoded.once.Do(func() { t.decoded.v = v })
	return t
}

// Value is the tool decoded with jsonvalue.DecodeJSON (json.Number numbers,
// at most jsonvalue.MaxJSONDepth deep), or why it cannot be: Raw, or for a
// Tool built without Raw the object of its members (name; title and
// description when not blank; the schemas and annotations when present).
// The value is shared: the caller must not change it.
func (t Tool) Value() (any, error) {
	if t.decoded == nil {
		return t.decode()
	}
	t.decoded.once.Do(func() { t.decoded.v, t.decoded.err = t.decode() })
	return t.decoded.v, t.decoded.err
}

func (t Tool) decode() (any, error) {
	if t.Raw != nil {
		return jsonvalue.DecodeJSON(t.Raw)
	}
	m := map[string]any{"name": t.Name}
	if t.Title != "" {
		m["title"] = t.Title
	}
	if strings.TrimSpace(t.Description) != "" {
		m["description"] = t.Description
	}
	for _, mb := range []struct {
		k   string
		raw json.RawMessage
	}{{"inputSchema", t.InputSchema}, {"outputSchema", t.OutputSchema}, {"annotations", t.Annotations}} {
		if mb.raw == nil {
			continue
		}
		v, err := jsonvalue.DecodeJSON(mb.raw)
		if err != nil {
			return nil, err
		}
		m[mb.k] = v
	}
	return m, nil
}

// member is the decoded member k of the tool (nil: absent, or the tool is
// not a decodable object).
func (t Tool) member(k string) any {
	v, _ := t.Value()
	m, _ := v.(map[string]any)
	return m[k]
}

// InputSchemaValue is the decoded inputSchema (nil when absent or the tool
// cannot be decoded; see Value).
func (t Tool) InputSchemaValue() any { return t.member("inputSchema") }

// OutputSchemaValue is the decoded outputSchema (nil when absent or the
// tool cannot be decoded; see Value).
func (t Tool) OutputSchemaValue() any { return t.member("outputSchema") }

// AnnotationsValue is the decoded annotations object (nil when absent, not
// an object, or the tool cannot be decoded; see Value).
func (t Tool) AnnotationsValue() map[string]any {
	a, _ := t.member("annotations").(map[string]any)
	return a
}
