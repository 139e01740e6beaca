package drift

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
	"github.com/mcpdrill/mcpdrill/internal/jsonvalue"
	"github.com/mcpdrill/mcpdrill/report"
)

// Canary outcomes.
const (
	outcomeOK        = "ok"
	outcomeToolError = "tool-error" // a result with isError: true
	outcomeRPCError  = "rpc-error"  // a JSON-RPC error response
	outcomeTimeout   = "timeout"
)

// Size buckets of a canary response.
const (
	sizeEmpty  = "empty"
	sizeSmall  = "small"  // under 1 KiB
	sizeMedium = "medium" // under 64 KiB
	sizeLarge  = "large"
)

// CanaryPrint is the value-tolerant fingerprint of one canary call: it keeps
// the shape of the response and drops every value.
type CanaryPrint struct {
	Outcome string `json:"outcome"`
	// Content is how the result carried data: structured (structuredContent),
	// json-text (one JSON text block), text, binary (image/audio/resource
	// blocks), mixed, or none.
	Content string `json:"content,omitempty"`
	// Structure is "sha256:" + hex of the canonical skeleton (keys, JSON
	// types, nesting; array elements merged into a set; values dropped).
	Structure string `json:"structure_hash,omitempty"`
	Size      string `json:"size"`
	Empty     bool   `json:"empty"`
	// Error is the normalised error signature for a failed call.
	Error *ErrorSignature `json:"error_signature,omitempty"`
}

// ErrorSignature is a value-free summary of an error message.
type ErrorSignature struct {
	// Category is validation, not_found, permission, rate_limit, timeout,
	// internal or unknown, by keywords in the message.
	Category string `json:"category"`
	// Code is the JSON-RPC error code (0 for a tool error).
	Code int `json:"code,omitempty"`
	// Hash is the first 12 hex digits of sha256 of the normalised message
	// (lowercased; UUIDs, long hex runs, numbers, quoted strings, paths and
	// URLs masked; whitespace collapsed).
	Hash string `json:"hash"`
}

// callResult is the part of a tools/call result a canary reads.
type callResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	Structured json.RawMessage `json:"structuredContent"`
	IsError    bool            `json:"isError"`
}

// printResponse fingerprints a tools/call response (a result or an error).
func printResponse(msg *jsonrpc.Message) CanaryPrint {
	if msg == nil {
		return CanaryPrint{Outcome: outcomeRPCError, Size: sizeEmpty, Empty: true,
			Error: &ErrorSignature{Category: "unknown", Hash: hashText("")}}
	}
	if msg.Error != nil {
		return CanaryPrint{Outcome: outcomeRPCError, Size: sizeBucket(len(msg.Error.Message)), Error: signature(msg.Error.Code, msg.Error.Message)}
	}
	return printResult(msg.Result)
}

// printTimeout is the fingerprint of a canary that got no reply in time.
func printTimeout() CanaryPrint {
	return CanaryPrint{Outcome: outcomeTimeout, Size: sizeEmpty, Empty: true,
		Error: &ErrorSignature{Category: "timeout", Hash: hashText("timeout")}}
}

// printResult fingerprints a tools/call result object.
func printResult(raw json.RawMessage) CanaryPrint {
	var r callResult
	if err := json.Unmarshal(raw, &r); err != nil {
		return CanaryPrint{Outcome: outcomeOK, Content: "invalid", Size: sizeBucket(len(raw)), Structure: hashText("invalid")}
	}
	if r.IsError {
		var texts []string
		for _, c := range r.Content {
			texts = append(texts, c.Text)
		}
		msg := strings.Join(texts, "\n")
		return CanaryPrint{Outcome: outcomeToolError, Size: sizeBucket(len(msg)), Error: signature(0, msg)}
	}
	p := CanaryPrint{Outcome: outcomeOK}
	var value any
	size := 0
	switch {
	case len(r.Structured) > 0 && string(r.Structured) != "null":
		v, err := decodeJSON(r.Structured)
		if err != nil {
			v = nil
		}
		p.Content, value, size = "structured", v, len(r.Structured)
	default:
		var types []string
		var text strings.Builder
		for _, c := range r.Content {
			types = append(types, c.Type)
			if c.Type == "text" {
				text.WriteString(c.Text)
			}
			size += len(c.Text)
		}
		switch {
		case len(r.Content) == 0:
			p.Content, value = "none", nil
		case len(r.Content) == 1 && types[0] == "text":
			t := strings.TrimSpace(r.Content[0].Text)
			if v, err := decodeJSON([]byte(t)); err == nil && (strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[")) {
				p.Content, value = "json-text", v
			} else {
				p.Content, value = "text", t
			}
		case !slices.ContainsFunc(types, func(s string) bool { return s != "text" }):
			p.Content, value = "text", text.String()
		default:
			p.Content = "mixed"
			if !slices.Contains(types, "text") {
				p.Content = "binary"
			}
			set := map[string]bool{}
			for _, t := range types {
				set[t] = true
			}
			value = sortedKeys(set) // the block types, a shape not a value
			size = len(raw)
		}
	}
	p.Empty = isEmptyValue(value)
	p.Structure = "sha256:" + hashBytes(canonical(skeleton(value, 0)))
	if p.Empty {
		p.Size = sizeEmpty
	} else {
		p.Size = sizeBucket(size)
	}
	return p
}

func isEmptyValue(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return strings.TrimSpace(x) == ""
	case []any:
		return len(x) == 0
	case []string:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

func sizeBucket(n int) string {
	switch {
	case n == 0:
		return sizeEmpty
	case n < 1<<10:
		return sizeSmall
	case n < 64<<10:
		return sizeMedium
	}
	return sizeLarge
}

// skeleton replaces every value by its JSON type. Objects keep their keys;
// an array becomes {"array": [element skeletons as a sorted set]} so that
// the number of rows does not matter but an empty array does.
func skeleton(v any, depth int) any {
	if depth > 32 {
		return "deep"
	}
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = skeleton(e, depth+1)
		}
		return map[string]any{"object": out}
	case []any:
		set := map[string]any{}
		for i, e := range x {
			if i >= 100 {
				break
			}
			s := skeleton(e, depth+1)
			set[string(canonical(s))] = s
		}
		elems := make([]any, 0, len(set))
		for _, k := range sortedKeys(set) {
			elems = append(elems, set[k])
		}
		return map[string]any{"array": elems}
	case []string: // content block types
		elems := make([]any, len(x))
		for i, s := range x {
			elems[i] = s
		}
		return map[string]any{"blocks": elems}
	case nil:
		return "null"
	}
	return jsonvalue.Kind(v)
}

var (
	reUUID   = regexp.MustCompile(`(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`)
	reURL    = regexp.MustCompile(`\b[a-z][a-z0-9+.-]*://\S+`)
	rePath   = regexp.MustCompile(`(?:[A-Za-z]:)?(?:[/\\][\w.@~-]+){2,}[/\\]?`)
	reQuoted = regexp.MustCompile(`"[^"]*"|'[^']*'|` + "`[^`]*`")
	reHex    = regexp.MustCompile(`(?i)\b(?:0x)?[0-9a-f]{8,}\b`)
	reNum    = regexp.MustCompile(`-?\d+(?:\.\d+)?`)
	reSpace  = regexp.MustCompile(`\s+`)
)

// normaliseError masks the variable parts of an error message.
func normaliseError(msg string) string {
	s := strings.ToLower(msg)
	s = reUUID.ReplaceAllString(s, "<uuid>")
	s = reURL.ReplaceAllString(s, "<url>")
	s = reQuoted.ReplaceAllString(s, "<str>")
	s = rePath.ReplaceAllString(s, "<path>")
	s = reHex.ReplaceAllString(s, "<hex>")
	s = reNum.ReplaceAllString(s, "<n>")
	s = reSpace.ReplaceAllString(s, " ")
	return strings.TrimSpace(s)
}

var errorCategories = []struct {
	name  string
	words []string
}{
	{"timeout", []string{"timeout", "timed out", "deadline"}},
	{"rate_limit", []string{"rate limit", "too many requests", "quota"}},
	{"permission", []string{"permission", "forbidden", "unauthori", "denied", "not allowed"}},
	{"not_found", []string{"not found", "no such", "unknown tool", "does not exist", "missing"}},
	{"validation", []string{"invalid", "validation", "required", "must be", "expected", "schema"}},
	{"internal", []string{"internal", "panic", "exception", "crash", "unexpected"}},
}

func signature(code int, msg string) *ErrorSignature {
	norm := normaliseError(msg)
	cat := "unknown"
	for _, c := range errorCategories {
		if slices.ContainsFunc(c.words, func(w string) bool { return strings.Contains(norm, w) }) {
			cat = c.name
			break
		}
	}
	return &ErrorSignature{Category: cat, Code: code, Hash: hashText(norm)[:12]}
}

func hashBytes(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func hashText(s string) string { return hashBytes([]byte(s)) }

// compareCanary grades the behaviour of one canary between a baseline and a
// current print. name identifies the canary in messages; no value is ever
// quoted.
func compareCanary(name, tool string, base, cur CanaryPrint) []report.Finding {
	f := func(rule string, sev report.Severity, format string, a ...any) []report.Finding {
		return []report.Finding{{Rule: rule, Severity: sev, Tool: tool, Message: fmt.Sprintf("canary %s: ", name) + fmt.Sprintf(format, a...)}}
	}
	bErr, cErr := base.Outcome != outcomeOK, cur.Outcome != outcomeOK
	switch {
	case !bErr && cErr:
		return f(ruleCanaryError, report.SeverityError, "succeeded in the baseline, now fails (%s, %s)", cur.Outcome, errCategory(cur))
	case bErr && !cErr:
		return f(ruleCanaryRecovered, report.SeverityInfo, "failed in the baseline (%s), now succeeds", base.Outcome)
	case bErr && cErr:
		if base.Outcome != cur.Outcome || !sameSignature(base.Error, cur.Error) {
			return f(ruleCanaryError, report.SeverityError, "error changed: %s %s -> %s %s", base.Outcome, errCategory(base), cur.Outcome, errCategory(cur))
		}
		return nil
	}
	switch {
	case !base.Empty && cur.Empty:
		return f(ruleCanaryEmpty, report.SeverityError, "returned data in the baseline, now returns an empty result")
	case base.Empty && !cur.Empty:
		return f(ruleCanarySize, report.SeverityWarn, "was empty in the baseline, now returns data (%s)", cur.Size)
	case base.Empty && cur.Empty:
		return nil
	case base.Content != cur.Content:
		return f(ruleCanaryShape, report.SeverityError, "result kind changed: %s -> %s", base.Content, cur.Content)
	case base.Structure != cur.Structure:
		return f(ruleCanaryShape, report.SeverityError, "response shape changed (keys, types or nesting)")
	case base.Size != cur.Size:
		return f(ruleCanarySize, report.SeverityWarn, "size bucket %s -> %s, shape unchanged", base.Size, cur.Size)
	}
	return nil
}

func sameSignature(a, b *ErrorSignature) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func errCategory(p CanaryPrint) string {
	if p.Error == nil {
		return "unknown"
	}
	return p.Error.Category
}
