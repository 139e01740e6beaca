package jsonrpc

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// encoding/json refuses any document nested deeper than 10,000 objects and
// arrays, as a syntax error, before it decodes a byte of it. A server that
// sends one deep value (a tool's schema, a result) would then lose the whole
// frame: its id, its other members, every other tool of its list. The
// functions here walk JSON iteratively, with no nesting limit, so that the
// shallow part of such a document can still be read while the deep value is
// kept as raw bytes for whoever decides what to do with it.

// Valid reports whether b is exactly one JSON value, with only whitespace
// around it, at any depth. It accepts what json.Valid accepts, and also
// documents nested deeper than encoding/json takes.
func Valid(b []byte) bool {
	end, err := skipValue(b, skipWS(b, 0))
	return err == nil && skipWS(b, end) == len(b)
}

// TooDeep reports whether err, returned by encoding/json for b, can only be
// its nesting limit: a syntax error on a document that Valid accepts.
func TooDeep(err error, b []byte) bool {
	var se *json.SyntaxError
	return errors.As(err, &se) && Valid(b)
}

// Member is one member of a JSON object, with its value's raw bytes.
type Member struct {
	Key   string
	Value json.RawMessage
}

// SplitObject returns the members of the JSON object b in document order
// (a repeated key appears as often as it is written). b is validated whole,
// at any depth; the values are sub-slices of b.
func SplitObject(b []byte) ([]Member, error) {
	var out []Member
	err := eachItem(b, '{', func(key string, v []byte) { out = append(out, Member{Key: key, Value: v}) })
	return out, err
}

// SplitArray returns the elements of the JSON array b, validated whole at any
// depth; the elements are sub-slices of b.
func SplitArray(b []byte) ([]json.RawMessage, error) {
	out := []json.RawMessage{}
	err := eachItem(b, '[', func(_ string, v []byte) { out = append(out, v) })
	if err != nil {
		return nil, err
	}
	return out, nil
}

// eachItem walks the object or array b (open is '{' or '['), validated whole
// at any depth, and calls item with each member's unquoted key and value,
// or each element (key "").
func eachItem(b []byte, open byte, item func(key string, v []byte)) error {
	closer := byte(']')
	if open == '{' {
		closer = '}'
	}
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != open {
		if open == '{' {
			return ErrNotObject
		}
		return errNotArray
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == closer {
		return trailing(b, i+1)
	}
	for {
		var key string
		if open == '{' {
			keyEnd, next, err := skipKey(b, i)
			if err != nil {
				return err
			}
			key, i = unquote(b[i:keyEnd]), skipWS(b, next)
		}
		end, err := skipValue(b, i)
		if err != nil {
			return err
		}
		item(key, b[i:end])
		i = skipWS(b, end)
		switch {
		case i >= len(b):
			return errTrunc
		case b[i] == ',':
			i = skipWS(b, i+1)
		case b[i] == closer:
			return trailing(b, i+1)
		default:
			return errSyntax
		}
	}
}

// DecodeFields decodes the members of the JSON object b into targets, keyed
// by member name and matched under Unicode case folding, as encoding/json
// matches struct fields (no two target names may fold alike). Each member is
// decoded on its own with json.Unmarshal, except that a *json.RawMessage
// target takes the member's bytes as they are, at any depth. Members without
// a target are skipped; of a repeated key the last value wins.
func DecodeFields(b []byte, targets map[string]any) error {
	ms, err := SplitObject(b)
	if err != nil {
		return err
	}
	for _, m := range ms {
		for name, t := range targets {
			if !strings.EqualFold(name, m.Key) {
				continue
			}
			if raw, ok := t.(*json.RawMessage); ok {
				*raw = append((*raw)[:0:0], m.Value...)
			} else if err := json.Unmarshal(m.Value, t); err != nil {
				return fmt.Errorf("jsonrpc: member %q: %w", m.Key, err)
			}
			break
		}
	}
	return nil
}

var errNotArray = errors.New("jsonrpc: not a JSON array")

func trailing(b []byte, i int) error {
	if skipWS(b, i) != len(b) {
		return errSyntax
	}
	return nil
}

func syntaxAt(b []byte, i int) error {
	if i >= len(b) {
		return errTrunc
	}
	return errSyntax
}

func skipWS(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipValue validates the JSON value starting at b[i] and returns the index
// just past it. Containers are walked with an explicit stack, never by
// recursion, so depth costs one byte of stack per level.
func skipValue(b []byte, i int) (int, error) {
	var open []byte // the enclosing containers, '{' or '['
	for {
		// A value is expected at i.
		i = skipWS(b, i)
		if i >= len(b) {
			return i, errTrunc
		}
		var err error
		switch c := b[i]; c {
		case '{', '[':
			i = skipWS(b, i+1)
			if i < len(b) && (c == '{' && b[i] == '}' || c == '[' && b[i] == ']') {
				i++
				break
			}
			open = append(open, c)
			if c == '{' {
				if _, i, err = skipKey(b, i); err != nil {
					return i, err
				}
			}
			continue
		case '"':
			i, err = skipString(b, i)
		case 't':
			i, err = literal(b, i, "true")
		case 'f':
			i, err = literal(b, i, "false")
		case 'n':
			i, err = literal(b, i, "null")
		default:
			i, err = skipNumber(b, i)
		}
		if err != nil {
			return i, err
		}
		// A value ended at i: close containers until one goes on.
		for {
			if len(open) == 0 {
				return i, nil
			}
			i = skipWS(b, i)
			if i >= len(b) {
				return i, errTrunc
			}
			top := open[len(open)-1]
			if b[i] == ',' {
				i++
				if top == '{' {
					if _, i, err = skipKey(b, skipWS(b, i)); err != nil {
						return i, err
					}
				}
				break
			}
			if top == '{' && b[i] == '}' || top == '[' && b[i] == ']' {
				open = open[:len(open)-1]
				i++
				continue
			}
			return i, errSyntax
		}
	}
}

// skipKey validates `"key" :` at b[i] and returns the index past the key's
// closing quote and the index past the colon.
func skipKey(b []byte, i int) (keyEnd, next int, err error) {
	if keyEnd, err = skipString(b, i); err != nil {
		return keyEnd, keyEnd, err
	}
	i = skipWS(b, keyEnd)
	if i >= len(b) || b[i] != ':' {
		return keyEnd, i, syntaxAt(b, i)
	}
	return keyEnd, i + 1, nil
}

// skipString validates the string starting at b[i] (escapes, no control
// characters; bytes that are not UTF-8 are accepted, as encoding/json does).
func skipString(b []byte, i int) (int, error) {
	if i >= len(b) {
		return i, errTrunc
	}
	if b[i] != '"' {
		return i, errSyntax
	}
	for i++; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return i + 1, nil
		case c < 0x20:
			return i, errSyntax
		case c == '\\':
			i++
			if i >= len(b) {
				return i, errTrunc
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				for range 4 {
					i++
					if i >= len(b) {
						return i, errTrunc
					}
					if !isHex(b[i]) {
						return i, errSyntax
					}
				}
			default:
				return i, errSyntax
			}
		}
	}
	return i, errTrunc
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func literal(b []byte, i int, lit string) (int, error) {
	for k := range len(lit) {
		if i+k >= len(b) {
			return i + k, errTrunc
		}
		if b[i+k] != lit[k] {
			return i + k, errSyntax
		}
	}
	return i + len(lit), nil
}

// skipNumber validates -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func skipNumber(b []byte, i int) (int, error) {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return i, errTrunc
	case b[i] == '0':
		i++
	case '1' <= b[i] && b[i] <= '9':
		i = digits(b, i)
	default:
		return i, errSyntax
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return j, syntaxAt(b, j)
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return j, syntaxAt(b, j)
		}
		i = j
	}
	return i, nil
}

func digits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}
