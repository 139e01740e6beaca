package mcp

import (
	"bytes"
	"encoding/json"
)

// keepEdge is how many bytes of an oversize line's head and tail are kept to
// find the id of the reply that had to be dropped.
const keepEdge = 512

// oversizeID guesses the JSON-RPC id of a frame from its first and last
// bytes: a top-level "id" member before the first nested value, or a final
// `"id":<scalar>` member closing the object (optionally followed by simple
// string members such as "jsonrpc"). It returns nil when unsure.
func oversizeID(head, tail []byte) json.RawMessage {
	if id := headID(head); id != nil {
		return id
	}
	return tailID(bytes.TrimRight(tail, " \t\r\n"))
}

// headID scans top-level members from the start while their values are
// scalars; it stops at the first object/array value (it could be truncated).
func headID(b []byte) json.RawMessage {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil
	}
	i++
	for {
		i = skipWS(b, i)
		if i < len(b) && b[i] == ',' {
			i = skipWS(b, i+1)
		}
		key, j, ok := scanString(b, i)
		if !ok {
			return nil
		}
		i = skipWS(b, j)
		if i >= len(b) || b[i] != ':' {
			return nil
		}
		i = skipWS(b, i+1)
		v, j, ok := scanScalar(b, i)
		if !ok {
			return nil
		}
		if string(key) == `"id"` {
			return v
		}
		i = j
	}
}

// tailID looks for `"id":<scalar>` followed only by simple string members and
// the closing brace at the end of the frame.
func tailID(b []byte) json.RawMessage {
	if len(b) == 0 || b[len(b)-1] != '}' {
		return nil
	}
	for from := len(b); ; {
		k := bytes.LastIndex(b[:from], []byte(`"id"`))
		if k < 0 {
			return nil
		}
		from = k
		i := skipWS(b, k+4)
		if i >= len(b) || b[i] != ':' {
			continue
		}
		i = skipWS(b, i+1)
		v, j, ok := scanScalar(b, i)
		if !ok || len(v) == 0 || v[0] == '{' {
			continue
		}
		if restIsSimpleClose(b, j) {
			return v
		}
	}
}

func restIsSimpleClose(b []byte, i int) bool {
	for {
		i = skipWS(b, i)
		if i >= len(b) {
			return false
		}
		if b[i] == '}' {
			return skipWS(b, i+1) == len(b)
		}
		if b[i] != ',' {
			return false
		}
		_, j, ok := scanString(b, skipWS(b, i+1))
		if !ok {
			return false
		}
		i = skipWS(b, j)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		_, j, ok = scanScalar(b, skipWS(b, i+1))
		if !ok {
			return false
		}
		i = j
	}
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// scanString returns the quoted string at b[i:] including quotes.
func scanString(b []byte, i int) ([]byte, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return nil, i, false
	}
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return b[i : j+1], j + 1, true
		}
	}
	return nil, i, false
}

// scanScalar returns a complete string, number, true, false or null at b[i:]
// (only when followed by a delimiter, so a truncated number is rejected).
func scanScalar(b []byte, i int) ([]byte, int, bool) {
	if i >= len(b) {
		return nil, i, false
	}
	if b[i] == '"' {
		return scanString(b, i)
	}
	j := i
	for j < len(b) && bytes.IndexByte([]byte("-+.0123456789eEtruefalsn"), b[j]) >= 0 {
		j++
	}
	if j == i || j >= len(b) {
		return nil, i, false
	}
	v := b[i:j]
	if !json.Valid(v) {
		return nil, i, false
	}
	return v, j, true
}
