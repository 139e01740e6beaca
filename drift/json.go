package drift

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// decodeJSON parses exactly one JSON value, keeping numbers as json.Number so
// that bounds compare exactly and canonical encoding sees the original text.
func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("trailing data after the JSON value")
	}
	return v, nil
}

// canonical returns the canonical JSON encoding of a decoded value: object
// keys sorted by the bytes of their UTF-8 encoding, no insignificant
// whitespace, strings escaped as encoding/json escapes them with HTML
// escaping off, and numbers rewritten through float64 in the shortest form
// encoding/json gives a float64 (so 1, 1.0 and 1e0 are all "1"; -0 is "0").
// Array order is kept.
func canonical(v any) []byte {
	var b bytes.Buffer
	writeCanonical(&b, v)
	return b.Bytes()
}

func writeCanonical(b *bytes.Buffer, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case string:
		writeString(b, x)
	case json.Number:
		b.WriteString(canonicalNumber(string(x)))
	case float64:
		b.WriteString(formatFloat(x))
	case int:
		b.WriteString(strconv.Itoa(x))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeCanonical(b, e)
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, k)
			b.WriteByte(':')
			writeCanonical(b, x[k])
		}
		b.WriteByte('}')
	default:
		// Values of other Go types never come out of decodeJSON; encode them
		// through a JSON round trip so the output stays canonical.
		raw, err := json.Marshal(x)
		if err != nil {
			b.WriteString("null")
			return
		}
		v2, err := decodeJSON(raw)
		if err != nil {
			b.WriteString("null")
			return
		}
		writeCanonical(b, v2)
	}
}

func writeString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)       // a string always encodes
	b.Truncate(b.Len() - 1) // drop the encoder's newline
}

// canonicalNumber rewrites a JSON number literal through float64. A literal
// out of float64 range keeps its original text.
func canonicalNumber(s string) string {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) {
		return s
	}
	return formatFloat(f)
}

func formatFloat(f float64) string {
	if f == 0 {
		return "0"
	}
	raw, err := json.Marshal(f)
	if err != nil {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return string(raw)
}

// equalJSON reports whether two decoded values have the same canonical form.
func equalJSON(a, b any) bool { return bytes.Equal(canonical(a), canonical(b)) }

// number reads a decoded JSON number as float64.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		return f, err == nil
	case float64:
		return x, true
	case int:
		return float64(x), true
	}
	return 0, false
}

// short renders a schema value for a message, truncated. It is only ever
// called on values declared in a schema, never on a tool result.
func short(v any) string {
	s := string(canonical(v))
	if len(s) > 48 {
		s = s[:45] + "..."
	}
	return s
}

// escapePointerToken escapes one JSON pointer reference token (RFC 6901).
func escapePointerToken(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

// joinPointer appends reference tokens to a JSON pointer.
func joinPointer(ptr string, tokens ...string) string {
	var b strings.Builder
	b.WriteString(ptr)
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(escapePointerToken(t))
	}
	return b.String()
}

// resolvePointer resolves a JSON pointer (RFC 6901, optionally in its URI
// fragment form without the leading "#") inside root.
func resolvePointer(root any, ptr string) (any, bool) {
	if ptr == "" {
		return root, true
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil, false
	}
	cur := root
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		switch x := cur.(type) {
		case map[string]any:
			v, ok := x[tok]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			cur = x[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// describeType names the JSON type of a decoded value.
func describeType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number, float64, int, int64:
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}
