package faults

import (
	"maps"
	"slices"
)

// What the payload faults (corrupt, schema-break) may change: only values
// the MCP schema leaves free, so that a faulted frame is still a valid MCP
// message and a client that checks messages against the protocol schema
// (the official SDKs do) accepts it. Never the JSON-RPC envelope (jsonrpc,
// id, method), never a name another message refers to (a tool, prompt or
// argument name, a URI, a cursor), never a value the schema enumerates (a
// content block's type, a role, a protocol revision, a schema's type
// keyword), never a tool annotation's hint (a flipped readOnlyHint or
// destructiveHint could make a client run a destructive tool unasked), and
// never _meta. What is left, by message:
//
//	tools/call result       structuredContent (data, stays an object); the text of text
//	                        blocks and of embedded text resources (document)
//	tools/list result       each tool's description and title, annotations.title, and the
//	                        title and description keywords inside its input and output schemas
//	prompts/list result     each prompt's description and title, and its arguments'
//	prompts/get result      description; the text of each message's content
//	resources/list,         each resource's (template's) description and title
//	resources/templates/list
//	resources/read result   the text of each text content
//	completion/complete     each value offered
//	initialize result       instructions, serverInfo.title and serverInfo.description
//	server/discover result  instructions
//	sampling/createMessage  result: the text of its content; request: the text of each
//	                        message's content and systemPrompt
//	elicitation/create      result: content (data, stays an object); request: message
//	roots/list result       each root's name
//	tools/call request      arguments (data, stays an object)
//	prompts/get request     each argument's value
//	completion/complete req argument.value and each value of context.arguments
//	notifications/message   data
//	notifications/progress  message
//	a method MCP does not define   every member of its params or result but _meta (data)
//	a response whose request is unknown   as a tools/call result when it has content or
//	                        structuredContent, else nothing
//
// Every other MCP method (ping, logging/setLevel, subscriptions, tasks…)
// has nothing free.

// freeKind says what a fault may do to a free value.
type freeKind uint8

const (
	// freeText is a string whose content is free: it stays a string.
	freeText freeKind = iota
	// freeDocument is a string that may hold JSON (a text block): a JSON
	// object or array in it is data, anything else is text.
	freeDocument
	// freeData is a value of any shape the protocol leaves open.
	freeData
	// freeObject is data whose root the protocol requires to be an object.
	freeObject
)

// freeSlot is one free value of a decoded frame.
type freeSlot struct {
	kind freeKind
	get  func() any
	set  func(any)
}

// slots collects free values in a fixed order (object members by sorted
// key), so that a seeded fault visits them in the same order every time.
type slots []freeSlot

// member adds m[key] when present and of the shape kind needs.
func (s *slots) member(m map[string]any, key string, kind freeKind) {
	v, ok := m[key]
	if !ok || !fits(v, kind) {
		return
	}
	*s = append(*s, freeSlot{kind: kind, get: func() any { return m[key] }, set: func(x any) { m[key] = x }})
}

// texts adds every string member of m (by sorted key) as text.
func (s *slots) texts(m map[string]any) {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		s.member(m, k, freeText)
	}
}

// items adds every string item of arr as text.
func (s *slots) items(arr []any) {
	for i := range arr {
		if _, ok := arr[i].(string); ok {
			*s = append(*s, freeSlot{kind: freeText, get: func() any { return arr[i] }, set: func(x any) { arr[i] = x }})
		}
	}
}

// fits reports whether v has the shape kind needs.
func fits(v any, kind freeKind) bool {
	switch kind {
	case freeText, freeDocument:
		_, ok := v.(string)
		return ok
	case freeObject:
		_, ok := v.(map[string]any)
		return ok
	}
	return true
}

// object is v as an object (nil when it is not one).
func object(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// objects are the object items of v when v is an array (none otherwise).
func objects(v any) []map[string]any {
	arr, _ := v.([]any)
	var out []map[string]any
	for _, e := range arr {
		if m, ok := e.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// described adds the description and title of each object item of v.
func (s *slots) described(v any) {
	for _, m := range objects(v) {
		s.member(m, "description", freeText)
		s.member(m, "title", freeText)
	}
}

// content adds the free text of a content block, or of each block of an
// array of them (sampling results and messages may hold either).
func (s *slots) content(v any) {
	blocks := objects(v)
	if m := object(v); m != nil {
		blocks = []map[string]any{m}
	}
	for _, b := range blocks {
		switch b["type"] {
		case "text":
			s.member(b, "text", freeDocument)
		case "resource":
			if r := object(b["resource"]); r != nil {
				s.member(r, "text", freeDocument)
			}
		}
	}
}

// toolResult adds a CallToolResult's free values.
func (s *slots) toolResult(res map[string]any) {
	s.member(res, "structuredContent", freeObject)
	s.content(res["content"])
}

// schemaKeywords are the members of a JSON Schema object that hold
// subschemas: an object of them, an array of them, or one.
var (
	schemaMaps   = []string{"$defs", "definitions", "dependentSchemas", "patternProperties", "properties"}
	schemaArrays = []string{"allOf", "anyOf", "oneOf", "prefixItems"}
	schemaOnes   = []string{"additionalItems", "additionalProperties", "contains", "else", "if", "items", "not", "propertyNames", "then", "unevaluatedItems", "unevaluatedProperties"}
)

// schema adds the title and description keywords of a JSON Schema and of
// its subschemas (never a value of const, enum, default or examples, which
// are instances, not schemas), to a bounded depth.
func (s *slots) schema(v any, depth int) {
	m := object(v)
	if m == nil || depth > maxSchemaDepth {
		return
	}
	s.member(m, "title", freeText)
	s.member(m, "description", freeText)
	for _, k := range schemaMaps {
		sub := object(m[k])
		for _, name := range slices.Sorted(maps.Keys(sub)) {
			s.schema(sub[name], depth+1)
		}
	}
	for _, k := range schemaArrays {
		for _, sub := range objects(m[k]) {
			s.schema(sub, depth+1)
		}
	}
	for _, k := range schemaOnes {
		if arr, ok := m[k].([]any); ok { // draft-04 tuple items
			for _, sub := range arr {
				s.schema(sub, depth+1)
			}
			continue
		}
		s.schema(m[k], depth+1)
	}
}

// maxSchemaDepth bounds the walk of a schema (decoding already bounds
// nesting; this keeps the walk's own cost in line with it).
const maxSchemaDepth = 64

// mcpMethods are the methods the MCP schema defines, across revisions.
var mcpMethods = map[string]bool{
	"initialize": true, "ping": true, "server/discover": true, "subscriptions/listen": true,
	"tools/list": true, "tools/call": true, "prompts/list": true, "prompts/get": true,
	"resources/list": true, "resources/templates/list": true, "resources/read": true,
	"resources/subscribe": true, "resources/unsubscribe": true, "completion/complete": true,
	"logging/setLevel": true, "sampling/createMessage": true, "elicitation/create": true, "roots/list": true,
	"tasks/get": true, "tasks/result": true, "tasks/list": true, "tasks/cancel": true,
	"notifications/initialized": true, "notifications/cancelled": true, "notifications/progress": true,
	"notifications/message": true, "notifications/tools/list_changed": true,
	"notifications/prompts/list_changed": true, "notifications/resources/list_changed": true,
	"notifications/resources/updated": true, "notifications/roots/list_changed": true,
	"notifications/elicitation/complete": true, "notifications/tasks/status": true,
	"notifications/subscriptions/acknowledged": true,
}

// resultSlots are the free values of a success response to method ("":
// the request is unknown).
func resultSlots(obj map[string]any, method string) slots {
	var s slots
	res := object(obj["result"])
	if res == nil {
		if method != "" && !mcpMethods[method] {
			s.member(obj, "result", freeData)
		}
		return s
	}
	switch method {
	case "tools/call":
		s.toolResult(res)
	case "":
		_, content := res["content"]
		_, structured := res["structuredContent"]
		if content || structured {
			s.toolResult(res)
		}
	case "tools/list":
		for _, t := range objects(res["tools"]) {
			s.member(t, "description", freeText)
			s.member(t, "title", freeText)
			if a := object(t["annotations"]); a != nil {
				s.member(a, "title", freeText)
			}
			s.schema(t["inputSchema"], 0)
			s.schema(t["outputSchema"], 0)
		}
	case "prompts/list":
		for _, p := range objects(res["prompts"]) {
			s.member(p, "description", freeText)
			s.member(p, "title", freeText)
			s.described(p["arguments"])
		}
	case "prompts/get":
		s.member(res, "description", freeText)
		for _, m := range objects(res["messages"]) {
			s.content(m["content"])
		}
	case "resources/list":
		s.described(res["resources"])
	case "resources/templates/list":
		s.described(res["resourceTemplates"])
	case "resources/read":
		for _, c := range objects(res["contents"]) {
			s.member(c, "text", freeDocument)
		}
	case "completion/complete":
		if c := object(res["completion"]); c != nil {
			if vs, ok := c["values"].([]any); ok {
				s.items(vs)
			}
		}
	case "initialize":
		s.member(res, "instructions", freeText)
		if info := object(res["serverInfo"]); info != nil {
			s.member(info, "title", freeText)
			s.member(info, "description", freeText)
		}
	case "server/discover":
		s.member(res, "instructions", freeText)
	case "sampling/createMessage":
		s.content(res["content"])
	case "elicitation/create":
		s.member(res, "content", freeObject)
	case "roots/list":
		for _, r := range objects(res["roots"]) {
			s.member(r, "name", freeText)
		}
	default:
		if !mcpMethods[method] {
			s.data(res)
		}
	}
	return s
}

// paramSlots are the free values of a request or notification of method.
func paramSlots(obj map[string]any, method string) slots {
	var s slots
	params := object(obj["params"])
	if params == nil {
		if _, ok := obj["params"]; ok && !mcpMethods[method] {
			s.member(obj, "params", freeData)
		}
		return s
	}
	switch method {
	case "tools/call":
		s.member(params, "arguments", freeObject)
	case "prompts/get":
		if a := object(params["arguments"]); a != nil {
			s.texts(a)
		}
	case "completion/complete":
		if a := object(params["argument"]); a != nil {
			s.member(a, "value", freeText)
		}
		if c := object(params["context"]); c != nil {
			if a := object(c["arguments"]); a != nil {
				s.texts(a)
			}
		}
	case "sampling/createMessage":
		for _, m := range objects(params["messages"]) {
			s.content(m["content"])
		}
		s.member(params, "systemPrompt", freeText)
	case "elicitation/create":
		s.member(params, "message", freeText)
	case "notifications/message":
		s.member(params, "data", freeData)
	case "notifications/progress":
		s.member(params, "message", freeText)
	default:
		if !mcpMethods[method] {
			s.data(params)
		}
	}
	return s
}

// data adds every member of m but _meta as data.
func (s *slots) data(m map[string]any) {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if k != "_meta" {
			s.member(m, k, freeData)
		}
	}
}
