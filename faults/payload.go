package faults

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/mcpdrill/mcpdrill/internal/jsonschema"
	"github.com/mcpdrill/mcpdrill/internal/jsonvalue"
)

// mutatePayload applies corrupt (type-preserving sentinels) or schema-break
// (type-changing) to the values of a frame that the MCP schema leaves free
// (free.go says which):
//
//   - corrupt replaces every leaf of a data value (jsonschema.Corrupt), and
//     a free string by its sentinel (jsonschema.CorruptString); a document
//     string holding a JSON object or array has its JSON corrupted as data;
//   - schema-break changes the types of nodes inside data values
//     (jsonschema.BreakTypes) and leaves strings alone: a string that
//     became a number would break the message, not its data. A data value
//     whose root must stay an object is left alone when it has no member.
//
// The fault is applied only when a value changed: a frame whose free values
// are all null or empty is forwarded untouched, not re-encoded.
func mutatePayload(f *Frame, fault string, rng *stream) Action {
	obj, err := decodeObject(f.Raw)
	if errors.Is(err, errTooManyValues) {
		return notApplied("too many objects and arrays to rewrite")
	}
	if err != nil {
		return notApplied("not a JSON object")
	}
	var free slots
	switch f.Kind {
	case KindResponse:
		free = resultSlots(obj, f.Method)
	case KindRequest, KindNotification:
		method, _ := obj["method"].(string)
		free = paramSlots(obj, method)
	}
	if len(free) == 0 {
		return notApplied("no value the MCP schema leaves free")
	}
	changed := 0
	for _, s := range free {
		if v, ok := mutateSlot(s.kind, s.get(), fault, rng); ok {
			s.set(v)
			changed++
		}
	}
	if changed == 0 {
		return notApplied("no free value to change (only null and empty values)")
	}
	return Action{Kind: Replace, Bytes: encode(obj), Note: fmt.Sprintf("fields=%d", changed)}
}

// mutateSlot returns the faulted form of v, a free value of kind, and
// whether it differs from v as JSON data.
func mutateSlot(kind freeKind, v any, fault string, rng *stream) (any, bool) {
	data := func(v any) any {
		if fault == FaultCorrupt {
			return jsonschema.Corrupt(v)
		}
		return jsonschema.BreakTypes(v, rng.next())
	}
	switch kind {
	case freeText, freeDocument:
		text := v.(string)
		if kind == freeDocument {
			if inner, err := jsonvalue.DecodeJSON([]byte(text)); err == nil && isContainer(inner) {
				out := data(inner)
				if sameJSON(inner, out) {
					return v, false
				}
				return string(encode(out)), true
			}
		}
		if fault != FaultCorrupt {
			return v, false
		}
		return jsonschema.CorruptString(text), true
	case freeObject:
		if m := v.(map[string]any); len(m) == 0 {
			return v, false
		}
	}
	out := data(v)
	return out, !sameJSON(v, out)
}

// sameJSON reports whether a and b are equal as JSON data.
func sameJSON(a, b any) bool {
	return bytes.Equal(jsonvalue.Canonical(a), jsonvalue.Canonical(b))
}

func isContainer(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return true
	}
	return false
}
