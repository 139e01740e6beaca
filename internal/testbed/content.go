package testbed

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"maps"
	"slices"
	"strings"
)

// contentSet is a profile's resources, prompts, logging and completions:
// what it declares, what it serves, and the mistakes it makes on purpose.
// A nil contentSet declares and serves none of them.
type contentSet struct {
	declare []string // capabilities declared beside tools
	serve   []string // capabilities whose methods answer; the others answer -32601

	emptyMissing bool // a read of an absent URI answers empty contents
	textAndBlob  bool // a text resource's contents carry a blob as well
	badRole      bool // prompt messages have role "system"
	acceptLevels bool // logging/setLevel accepts any level
	acceptNoArgs bool // prompts/get serves a prompt without its required argument

	noTemplates bool // resources/templates/list answers -32601 (templates are optional)
	backend     bool // lists one more resource whose read needs a backend that is not there
	noPrompts   bool // prompts/list answers an empty list
}

// conformantContent declares and serves everything, correctly.
var conformantContent = &contentSet{
	declare: []string{"resources", "prompts", "logging", "completions"},
	serve:   []string{"resources", "prompts", "logging", "completions"},
}

// sloppyContent makes one mistake per check: a missing URI reads as empty
// contents, a text resource carries a blob too, prompt messages have a role
// that does not exist, a prompt is served without its required argument,
// logging is declared but not served, completions are served but not
// declared, and any log level is accepted.
var sloppyContent = &contentSet{
	declare:      []string{"resources", "prompts", "logging"},
	serve:        []string{"resources", "prompts", "completions"},
	emptyMissing: true,
	textAndBlob:  true,
	badRole:      true,
	acceptLevels: true,
	acceptNoArgs: true,
}

// typicalContent is what many real servers do, none of it a mistake:
// resources without templates, one of them readable only with a backend
// the client's environment may lack, and an empty prompts/list without
// prompts declared.
var typicalContent = &contentSet{
	declare:     []string{"resources"},
	serve:       []string{"resources", "prompts"},
	noTemplates: true,
	backend:     true,
	noPrompts:   true,
}

// backendResource is the resource of a contentSet with backend: listed,
// but its read fails as a server's does when the service behind it is down.
var backendResource = map[string]any{"uri": "testbed://cluster/health", "name": "cluster-health", "mimeType": "application/json"}

// resources lists the profile's resources.
func (cs *contentSet) resources() []map[string]any {
	if cs.backend {
		return append(slices.Clone(testbedResources), backendResource)
	}
	return testbedResources
}

// The testbed's resources and prompts. The listing pages one resource at a
// time so that clients follow nextCursor.
var (
	testbedResources = []map[string]any{
		{"uri": "testbed://docs/readme", "name": "readme", "mimeType": "text/markdown", "text": "# mcpdrill testbed\n"},
		{"uri": "testbed://data/pixel", "name": "pixel", "mimeType": "image/png", "blob": base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\n"))},
	}
	testbedTemplate = map[string]any{"uriTemplate": "testbed://notes/{id}", "name": "note", "mimeType": "text/plain"}
	noteIDs         = []string{"1", "2", "3"}
	testbedPrompts  = []map[string]any{
		{"name": "greet", "description": "a greeting"},
		{"name": "summarize", "description": "summarize a topic", "arguments": []any{
			map[string]any{"name": "topic", "required": true},
			map[string]any{"name": "style"},
		}},
	}
	topics    = []string{"search", "weather"}
	logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}
)

// contentMethods are the dispatch entries of the content methods.
var contentMethods = map[string]method{
	"resources/list":           {legacy: true, modern: true, run: (*conn).listResources},
	"resources/templates/list": {legacy: true, modern: true, run: (*conn).listTemplates},
	"resources/read":           {legacy: true, modern: true, run: (*conn).readResource},
	"prompts/list":             {legacy: true, modern: true, run: (*conn).listPrompts},
	"prompts/get":              {legacy: true, modern: true, run: (*conn).getPrompt},
	"logging/setLevel":         {legacy: true, run: (*conn).setLevel},
	"completion/complete":      {legacy: true, modern: true, run: (*conn).complete},
}

// capabilityOf names the capability a content method belongs to.
func capabilityOf(method string) string {
	switch {
	case strings.HasPrefix(method, "resources/"):
		return "resources"
	case strings.HasPrefix(method, "prompts/"):
		return "prompts"
	case method == "logging/setLevel":
		return "logging"
	}
	return "completions"
}

// declaredContent adds the profile's declared content capabilities to caps.
func (e *engine) declaredContent(caps map[string]any) map[string]any {
	if cs := e.p.b.content; cs != nil {
		for _, name := range cs.declare {
			caps[name] = map[string]any{}
		}
	}
	return caps
}

// serves reports whether the profile answers r's content method; the
// refusal to send when it does not.
func (c *conn) serves(r *request) (*out, bool) {
	cs := c.e.p.b.content
	if cs == nil || !slices.Contains(cs.serve, capabilityOf(r.method)) {
		return c.fail(r, ekMethodNotFound, "method not found: "+r.method, nil), false
	}
	return nil, true
}

// cacheable adds the 2026-07-28 cache fields to a listing or read result.
func cacheable(r *request, res map[string]any) map[string]any {
	if r.modern {
		res["ttlMs"] = 60000
		res["cacheScope"] = "public"
	}
	return res
}

func (c *conn) listResources(_ context.Context, r *request) *out {
	if o, ok := c.serves(r); !ok {
		return o
	}
	all := c.e.p.b.content.resources()
	off := 0
	var cursor string
	if raw, ok := r.params["cursor"]; ok {
		n, valid := 0, json.Unmarshal(raw, &cursor) == nil
		if valid {
			n, valid = decodeCursor(cursor)
		}
		if !valid || n >= len(all) {
			return c.fail(r, ekInvalidParams, "invalid cursor", nil)
		}
		off = n
	}
	res := all[off]
	item := map[string]any{"uri": res["uri"], "name": res["name"], "mimeType": res["mimeType"]}
	page := map[string]any{"resources": []any{item}}
	if off+1 < len(all) {
		page["nextCursor"] = encodeCursor(off + 1)
	}
	return c.result(r, cacheable(r, page))
}

func (c *conn) listTemplates(_ context.Context, r *request) *out {
	if o, ok := c.serves(r); !ok {
		return o
	}
	if c.e.p.b.content.noTemplates {
		return c.fail(r, ekMethodNotFound, "Method not found", nil)
	}
	return c.result(r, cacheable(r, map[string]any{"resourceTemplates": []any{testbedTemplate}}))
}

func (c *conn) readResource(_ context.Context, r *request) *out {
	if o, ok := c.serves(r); !ok {
		return o
	}
	var uri string
	if raw, ok := r.params["uri"]; !ok || json.Unmarshal(raw, &uri) != nil || uri == "" {
		return c.fail(r, ekInvalidParams, "params.uri must be a string", nil)
	}
	cs := c.e.p.b.content
	if cs.backend && uri == backendResource["uri"] {
		return c.fail(r, ekInternal, "connect ECONNREFUSED 127.0.0.1:9200", nil)
	}
	var item map[string]any
	for _, res := range testbedResources {
		if res["uri"] == uri {
			item = maps.Clone(res)
			delete(item, "name")
		}
	}
	if id, ok := strings.CutPrefix(uri, "testbed://notes/"); ok && slices.Contains(noteIDs, id) {
		item = map[string]any{"uri": uri, "mimeType": "text/plain", "text": "note " + id}
	}
	switch {
	case item == nil && cs.emptyMissing:
		return c.result(r, cacheable(r, map[string]any{"contents": []any{}}))
	case item == nil && r.modern:
		return c.fail(r, ekInvalidParams, "resource not found", map[string]any{"uri": uri})
	case item == nil:
		return c.fail(r, ekResourceNotFound, "resource not found", map[string]any{"uri": uri})
	}
	if _, text := item["text"]; text && cs.textAndBlob {
		item["blob"] = base64.StdEncoding.EncodeToString([]byte("also"))
	}
	return c.result(r, cacheable(r, map[string]any{"contents": []any{item}}))
}

func (c *conn) listPrompts(_ context.Context, r *request) *out {
	if o, ok := c.serves(r); !ok {
		return o
	}
	list := make([]any, 0, len(testbedPrompts))
	for _, p := range testbedPrompts {
		if !c.e.p.b.content.noPrompts {
			list = append(list, p)
		}
	}
	return c.result(r, cacheable(r, map[string]any{"prompts": list}))
}

func (c *conn) getPrompt(_ context.Context, r *request) *out {
	if o, ok := c.serves(r); !ok {
		return o
	}
	var p struct {
		Name      string            `json:"name"`
		Arguments map[string]string `json:"arguments"`
	}
	raw, _ := json.Marshal(r.params)
	if json.Unmarshal(raw, &p) != nil {
		return c.fail(r, ekInvalidParams, "params must carry a name and string arguments", nil)
	}
	var text string
	cs := c.e.p.b.content
	switch {
	case cs.noPrompts:
		return c.fail(r, ekInvalidParams, "unknown prompt", nil)
	case p.Name == "greet":
		text = "Say hello."
	case p.Name == "summarize":
		if p.Arguments["topic"] == "" && !cs.acceptNoArgs {
			return c.fail(r, ekInvalidParams, "argument topic is required", nil)
		}
		text = "Summarize the topic in a few lines."
	default:
		return c.fail(r, ekInvalidParams, "unknown prompt", nil)
	}
	role := "user"
	if cs.badRole {
		role = "system"
	}
	msg := map[string]any{"role": role, "content": map[string]any{"type": "text", "text": text}}
	return c.result(r, map[string]any{"messages": []any{msg}})
}

func (c *conn) setLevel(_ context.Context, r *request) *out {
	if o, ok := c.serves(r); !ok {
		return o
	}
	var level string
	if raw, ok := r.params["level"]; !ok || json.Unmarshal(raw, &level) != nil {
		return c.fail(r, ekInvalidParams, "params.level must be a string", nil)
	}
	if !slices.Contains(logLevels, level) && !c.e.p.b.content.acceptLevels {
		return c.fail(r, ekInvalidParams, "unknown log level", nil)
	}
	return c.result(r, map[string]any{})
}

func (c *conn) complete(_ context.Context, r *request) *out {
	if o, ok := c.serves(r); !ok {
		return o
	}
	var p struct {
		Ref struct {
			Type string `json:"type"`
			Name string `json:"name"`
			URI  string `json:"uri"`
		} `json:"ref"`
		Argument struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		} `json:"argument"`
	}
	raw, _ := json.Marshal(r.params)
	if json.Unmarshal(raw, &p) != nil {
		return c.fail(r, ekInvalidParams, "params must carry ref and argument", nil)
	}
	var values []string
	switch {
	case p.Ref.Type == "ref/prompt" && p.Ref.Name == "summarize" && p.Argument.Name == "topic":
		values = topics
	case p.Ref.Type == "ref/prompt" && p.Ref.Name == "summarize":
	case p.Ref.Type == "ref/resource" && p.Ref.URI == testbedTemplate["uriTemplate"]:
		values = noteIDs
	default:
		return c.fail(r, ekInvalidParams, "nothing to complete for this ref", nil)
	}
	matched := []string{}
	for _, v := range values {
		if strings.HasPrefix(v, p.Argument.Value) {
			matched = append(matched, v)
		}
	}
	return c.result(r, map[string]any{"completion": map[string]any{"values": matched, "total": len(matched), "hasMore": false}})
}
