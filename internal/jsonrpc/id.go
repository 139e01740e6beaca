package jsonrpc

import (
	"bytes"
	"encoding/json"
)

// ValidID reports whether raw is an id a request may carry: a JSON string
// or number (JSON-RPC 2.0; MCP forbids null).
func ValidID(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return false
	}
	switch raw[0] {
	case '"':
		var s string
		return json.Unmarshal(raw, &s) == nil
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		var f float64
		return json.Unmarshal(raw, &f) == nil
	}
	return false
}
