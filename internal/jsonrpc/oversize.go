package jsonrpc

import (
	"bytes"
	"encoding/json"
)

// OversizeEdge is how many bytes of a refused line's start and end a reader
// keeps ([LineReader.KeepEdges]) to find, with [OversizeID], the id of a
// reply too large to read.
const OversizeEdge = 512

// OversizeID guesses the JSON-RPC id of a frame from its first and last
// bytes (see [LineReader.Oversize]): a top-level "id" member before the
// first nested value, or a final `"id":<scalar>` member closing the object
// (optionally followed by other members with scalar values, such as
// "jsonrpc"). It returns nil when unsure.
func OversizeID(head, tail []byte) json.RawMessage {
	if id := headID(head); id != nil {
		return id
	}
	return tailID(bytes.TrimRight(tail, " \t\r\n"))
}

// headID scans top-level members from the start while their values are
// scalars; it stops at the first object or array value (it could be cut).
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
		keyEnd, next, err := skipKey(b, i)
		if err != nil {
			return nil
		}
		key := b[i:keyEnd]
		v, j, ok := scalarAt(b, skipWS(b, next))
		if !ok {
			return nil
		}
		if string(key) == `"id"` {
			return v
		}
		i = j
	}
}

// tailID looks for `"id":<scalar>` followed only by members with scalar
// values and the closing brace at the end of the frame.
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
		v, j, ok := scalarAt(b, skipWS(b, i+1))
		if ok && closesSimply(b, j) {
			return v
		}
	}
}

// closesSimply reports whether b[i:] is `(, "key": scalar)* }` and nothing
// more.
func closesSimply(b []byte, i int) bool {
	for {
		i = skipWS(b, i)
		switch {
		case i >= len(b):
			return false
		case b[i] == '}':
			return skipWS(b, i+1) == len(b)
		case b[i] != ',':
			return false
		}
		_, next, err := skipKey(b, skipWS(b, i+1))
		if err != nil {
			return false
		}
		_, j, ok := scalarAt(b, skipWS(b, next))
		if !ok {
			return false
		}
		i = j
	}
}

// scalarAt returns the string, number, true, false or null at b[i:]. A
// number must be followed by another byte, so that one cut short by the
// edge is not taken for a whole one.
func scalarAt(b []byte, i int) (json.RawMessage, int, bool) {
	if i >= len(b) || b[i] == '{' || b[i] == '[' {
		return nil, i, false
	}
	j, err := skipScalar(b, i)
	number := b[i] != '"' && b[i] != 't' && b[i] != 'f' && b[i] != 'n'
	if err != nil || number && j >= len(b) {
		return nil, i, false
	}
	return b[i:j], j, true
}
