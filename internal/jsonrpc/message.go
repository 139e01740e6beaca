// Package jsonrpc is mcpdrill's JSON-RPC 2.0 codec. It keeps the original
// bytes of every frame, offers a cheap peek (kind, id, method, tool name)
// that does not decode the whole message, and frames messages as
// newline-delimited JSON (stdio) or Server-Sent Events (HTTP).
package jsonrpc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// Version is the only JSON-RPC version MCP speaks.
const Version = "2.0"

// Standard and MCP-specific error codes.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
	// CodeResourceNotFound is the legacy (2024-11-05 … 2025-11-25) resource error.
	CodeResourceNotFound = -32002
	// CodeHeaderMismatch is 2026-07-28's HTTP header / body disagreement.
	CodeHeaderMismatch = -32020
	// CodeMissingClientCapability is 2026-07-28's missing required client capability.
	CodeMissingClientCapability = -32021
	// CodeUnsupportedProtocolVersion is 2026-07-28's refusal of a revision.
	CodeUnsupportedProtocolVersion = -32022
)

// Error is a JSON-RPC error object. It implements error so a peer's error can
// travel through Go error chains; use errors.As to recover it.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *Error) Error() string {
	return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message)
}

// Message is a fully decoded JSON-RPC message. Raw holds the exact bytes it
// was decoded from, when it came off the wire.
type Message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`

	Raw []byte `json:"-"`
}

// Kind returns the message kind by the JSON-RPC rules.
func (m *Message) Kind() Kind {
	switch {
	case m.Method != "" && len(m.ID) > 0:
		return KindRequest
	case m.Method != "":
		return KindNotification
	case m.Error != nil:
		return KindError
	case m.Result != nil:
		return KindResponse
	}
	return KindInvalid
}

// Decode parses one JSON-RPC message (not a batch) and keeps its bytes. A
// message whose params or result is nested deeper than encoding/json takes is
// still decoded, those members kept raw (see [Unmarshal]).
func Decode(b []byte) (*Message, error) {
	var m Message
	if err := Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("jsonrpc: decode: %w", err)
	}
	m.Raw = b
	return &m, nil
}

// NewRequest encodes a request. id may be an int, int64, string or json.RawMessage.
func NewRequest(id any, method string, params any) ([]byte, error) {
	return encode(id, method, params, nil, nil)
}

// NewNotification encodes a notification (no id).
func NewNotification(method string, params any) ([]byte, error) {
	return encode(nil, method, params, nil, nil)
}

// NewResult encodes a successful response.
func NewResult(id json.RawMessage, result any) ([]byte, error) {
	if result == nil {
		result = struct{}{}
	}
	return encode(id, "", nil, result, nil)
}

// NewErrorResponse encodes an error response. id may be nil when the request
// id could not be read.
func NewErrorResponse(id json.RawMessage, e *Error) ([]byte, error) {
	return encode(id, "", nil, nil, e)
}

func encode(id any, method string, params, result any, e *Error) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(`{"jsonrpc":"2.0"`)
	if id != nil {
		raw, err := encodeID(id)
		if err != nil {
			return nil, err
		}
		if raw != nil {
			buf.WriteString(`,"id":`)
			buf.Write(raw)
		}
	}
	if method != "" {
		buf.WriteString(`,"method":`)
		mb, _ := json.Marshal(method)
		buf.Write(mb)
	}
	for _, f := range []struct {
		key string
		v   any
	}{{"params", params}, {"result", result}} {
		if f.v == nil {
			continue
		}
		b, err := json.Marshal(f.v)
		if err != nil {
			return nil, fmt.Errorf("jsonrpc: encode %s: %w", f.key, err)
		}
		buf.WriteString(`,"` + f.key + `":`)
		buf.Write(b)
	}
	if e != nil {
		b, err := json.Marshal(e)
		if err != nil {
			return nil, fmt.Errorf("jsonrpc: encode error: %w", err)
		}
		buf.WriteString(`,"error":`)
		buf.Write(b)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

func encodeID(id any) ([]byte, error) {
	switch v := id.(type) {
	case json.RawMessage:
		if len(v) == 0 {
			return nil, nil
		}
		return v, nil
	case int:
		return strconv.AppendInt(nil, int64(v), 10), nil
	case int64:
		return strconv.AppendInt(nil, v, 10), nil
	case string:
		return json.Marshal(v)
	}
	return nil, fmt.Errorf("jsonrpc: unsupported id type %T", id)
}

// IDKey returns a canonical string key for a raw id, so that 1 and 1.0 or
// "a" written with different escapes correlate. It returns "" for no id.
func IDKey(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return "s:" + s
		}
		return "r:" + string(raw)
	}
	if f, err := strconv.ParseFloat(string(raw), 64); err == nil {
		return "n:" + strconv.FormatFloat(f, 'g', -1, 64)
	}
	return "r:" + string(raw)
}
