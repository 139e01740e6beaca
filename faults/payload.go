package faults

import (
	"errors"
	"fmt"

	"github.com/mcpdrill/mcpdrill/internal/jsonschema"
	"github.com/mcpdrill/mcpdrill/internal/jsonvalue"
)

// mutatePayload applies corrupt (type-preserving sentinels) or schema-break
// (type-changing) to a frame's payload:
//
//   - a tool result (result with content or structuredContent): the whole of
//     structuredContent, and each text content block — as JSON when its text
//     parses as a JSON object or array, else the string itself (corrupt only;
//     schema-break leaves plain text alone, since a non-string text field
//     would break the content block rather than its data);
//   - any other result: every leaf of result;
//   - a request or notification: params.arguments if present, else params.
func mutatePayload(f *Frame, fault string, rng *stream) Action {
	obj, err := decodeObject(f.Raw)
	if errors.Is(err, errTooManyValues) {
		return notApplied("too many objects and arrays to rewrite")
	}
	if err != nil {
		return notApplied("not a JSON object")
	}
	mutate := func(v any) any {
		if fault == FaultCorrupt {
			return jsonschema.Corrupt(v)
		}
		return jsonschema.BreakTypes(v, rng.next())
	}
	changed := 0
	switch {
	case obj["result"] != nil:
		res, isObj := obj["result"].(map[string]any)
		_, hasContent := res["content"]
		_, hasSC := res["structuredContent"]
		if !isObj || (!hasContent && !hasSC) {
			obj["result"] = mutate(obj["result"])
			changed++
			break
		}
		if hasSC && res["structuredContent"] != nil {
			res["structuredContent"] = mutate(res["structuredContent"])
			changed++
		}
		blocks, _ := res["content"].([]any)
		for _, b := range blocks {
			blk, ok := b.(map[string]any)
			if !ok || blk["type"] != "text" {
				continue
			}
			text, ok := blk["text"].(string)
			if !ok {
				continue
			}
			if inner, err := jsonvalue.DecodeJSON([]byte(text)); err == nil && isContainer(inner) {
				blk["text"] = string(encode(mutate(inner)))
				changed++
			} else if fault == FaultCorrupt {
				blk["text"] = jsonschema.Corrupt(text)
				changed++
			}
		}
	case obj["params"] != nil:
		params, isObj := obj["params"].(map[string]any)
		if isObj && params["arguments"] != nil {
			params["arguments"] = mutate(params["arguments"])
		} else {
			obj["params"] = mutate(obj["params"])
		}
		changed++
	}
	if changed == 0 {
		return notApplied("no payload to change")
	}
	return Action{Kind: Replace, Bytes: encode(obj), Note: fmt.Sprintf("fields=%d", changed)}
}

func isContainer(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return true
	}
	return false
}
