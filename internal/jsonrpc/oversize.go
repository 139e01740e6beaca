package jsonrpc

import (
	"bytes"
	"encoding/json"
)

// OversizeEdge is how many bytes of a refused line's start and end a reader
// keeps ([LineReader.KeepEdges]) to find, with [OversizeID], the id of a
// reply too large to read.
const OversizeEdge = 512

// OversizeID reads what a frame too large to keep was from its first and
// last bytes (see [LineReader.Oversize]). reply is false when they show a
// request or a notification (a top-level "method" or "params" member):
// the frame answers nothing. Otherwise id is the frame's id when they show
// it, else nil: a top-level "id" member among the scalar members that open
// the object, or a final `"id":<scalar>` member closing it (optionally
// followed by other members with scalar values, such as "jsonrpc").
func OversizeID(head, tail []byte) (id json.RawMessage, reply bool) {
	id, method, next := headMembers(head)
	tail = bytes.TrimRight(tail, " \t\r\n")
	if method || next == "params" || tailMember(tail, "method") != nil {
		return nil, false
	}
	if id == nil {
		id = tailMember(tail, "id")
	}
	return id, true
}

// headMembers reads the members that open an object while their values
// are scalars: the last "id" among them, whether one was "method", and the
// name of the member where it stopped (its value nested, or cut).
func headMembers(b []byte) (id json.RawMessage, method bool, next string) {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, false, ""
	}
	i++
	for {
		i = skipWS(b, i)
		if i < len(b) && b[i] == ',' {
			i = skipWS(b, i+1)
		}
		keyEnd, after, err := skipKey(b, i)
		if err != nil {
			return id, method, ""
		}
		key := string(b[i+1 : keyEnd-1])
		v, j, ok := scalarAt(b, skipWS(b, after))
		if !ok {
			return id, method, key
		}
		switch key {
		case "id":
			id = v
		case "method":
			method = true
		}
		i = j
	}
}

// tailMember looks for `"key":<scalar>` followed only by members with
// scalar values and the closing brace at the end of the frame: a member
// of the top-level object. It returns the value, nil when there is none.
func tailMember(b []byte, key string) json.RawMessage {
	if len(b) == 0 || b[len(b)-1] != '}' {
		return nil
	}
	quoted := []byte(`"` + key + `"`)
	for from := len(b); ; {
		k := bytes.LastIndex(b[:from], quoted)
		if k < 0 {
			return nil
		}
		from = k
		i := skipWS(b, k+len(quoted))
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
