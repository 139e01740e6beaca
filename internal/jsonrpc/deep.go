package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
)

// encoding/json refuses any document nested deeper than 10,000 objects and
// arrays, as a syntax error, before it decodes a byte of it. A server that
// sends one deep value (a tool's schema, a result) would then lose the whole
// frame: its id, its other members, every other tool of its list. Unmarshal
// walks JSON iteratively, with no nesting limit, so that the shallow part of
// such a document can still be read while the deep value is kept as raw
// bytes for whoever decides what to do with it.

// Unmarshal is json.Unmarshal, with one difference: an object that
// encoding/json refuses only for its nesting limit is read member by member
// when v points to a struct or to a map[string]json.RawMessage. Members are
// matched to struct fields by their json names as encoding/json matches them
// (an exact match first, then under Unicode case folding); a json.RawMessage
// field takes its member's bytes at any depth, a []json.RawMessage field its
// array's elements at any depth, and any other field goes through
// json.Unmarshal (so a deep value there is still refused). A document that
// is not valid JSON at any depth gets encoding/json's own error.
func Unmarshal(b []byte, v any) error {
	err := json.Unmarshal(b, v)
	var se *json.SyntaxError
	if err == nil || !errors.As(err, &se) {
		return err
	}
	// encoding/json validates before it writes, so v is untouched here.
	ms, serr := splitObject(b)
	if serr != nil {
		return err
	}
	if merr := decodeMembers(ms, v); merr != errUnsupported {
		return merr
	}
	return err
}

// errUnsupported: decodeMembers has no member-by-member reading for v.
var errUnsupported = errors.New("jsonrpc: no member-by-member decoding for this type")

var (
	rawType      = reflect.TypeFor[json.RawMessage]()
	rawSliceType = reflect.TypeFor[[]json.RawMessage]()
)

// decodeMembers decodes an object's members into v (see Unmarshal). Like
// encoding/json, it goes on past a member of the wrong type and returns the
// first such error at the end; a repeated member's last value wins.
func decodeMembers(ms []member, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return errUnsupported
	}
	e := rv.Elem()
	switch {
	case e.Kind() == reflect.Map && e.Type().Key().Kind() == reflect.String && e.Type().Elem() == rawType:
		if e.IsNil() {
			e.Set(reflect.MakeMap(e.Type()))
		}
		for _, m := range ms {
			e.SetMapIndex(reflect.ValueOf(m.key).Convert(e.Type().Key()), reflect.ValueOf(json.RawMessage(bytes.Clone(m.value))))
		}
		return nil
	case e.Kind() != reflect.Struct:
		return errUnsupported
	}
	names := jsonNames(e.Type())
	if names == nil {
		return errUnsupported
	}
	var typeErr error
	for _, m := range ms {
		i := fieldFor(names, m.key)
		if i < 0 {
			continue
		}
		f := e.Field(i)
		switch f.Type() {
		case rawType:
			f.SetBytes(bytes.Clone(m.value))
			continue
		case rawSliceType:
			if err := json.Unmarshal(m.value, f.Addr().Interface()); err != nil {
				var se *json.SyntaxError
				if !errors.As(err, &se) {
					return err
				}
				els, serr := SplitArray(bytes.Clone(m.value))
				if serr != nil {
					return err
				}
				f.Set(reflect.ValueOf(els))
			}
			continue
		}
		err := json.Unmarshal(m.value, f.Addr().Interface())
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &te):
			if typeErr == nil {
				typeErr = err
			}
		case err != nil:
			return err
		}
	}
	return typeErr
}

// jsonNames returns the json name of each field of struct type t ("" for a
// field encoding/json skips), or nil if t embeds a struct (its promoted
// fields are not resolved here).
func jsonNames(t reflect.Type) []string {
	names := make([]string, t.NumField())
	for i := range names {
		f := t.Field(i)
		if f.Anonymous {
			return nil
		}
		tag := f.Tag.Get("json")
		if !f.IsExported() || tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		names[i] = name
	}
	return names
}

// fieldFor returns the field a member named key goes to: the exact name
// first, then one equal under Unicode case folding (-1: none).
func fieldFor(names []string, key string) int {
	fold := -1
	for i, n := range names {
		switch {
		case n == "":
		case n == key:
			return i
		case fold < 0 && strings.EqualFold(n, key):
			fold = i
		}
	}
	return fold
}

// member is one member of a JSON object, with its value's raw bytes.
type member struct {
	key   string
	value []byte
}

// splitObject returns the members of the JSON object b in document order
// (a repeated key appears as often as it is written). b is validated whole,
// at any depth; the values are sub-slices of b.
func splitObject(b []byte) ([]member, error) {
	var out []member
	err := eachItem(b, '{', func(key string, v []byte) { out = append(out, member{key: key, value: v}) })
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

var errNotArray = errors.New("jsonrpc: not a JSON array")

func trailing(b []byte, i int) error {
	if skipWS(b, i) != len(b) {
		return errSyntax
	}
	return nil
}

// Valid reports whether b is exactly one JSON value, with only whitespace
// around it: json.Valid, with no nesting limit, in a fraction of its time
// (the package's own walk, which neither builds nor recurses).
func Valid(b []byte) bool {
	end, err := skipValue(b, skipWS(b, 0))
	return err == nil && skipWS(b, end) == len(b)
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
		default:
			i, err = skipScalar(b, i)
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

// skipScalar validates the string, number, true, false or null starting
// at b[i] and returns the index just past it.
func skipScalar(b []byte, i int) (int, error) {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case 't':
		return literal(b, i, "true")
	case 'f':
		return literal(b, i, "false")
	case 'n':
		return literal(b, i, "null")
	}
	return skipNumber(b, i)
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
