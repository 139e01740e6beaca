package jsonvalue

import (
	"net/url"
	"strconv"
	"strings"
)

// EscapeToken escapes one JSON pointer reference token (RFC 6901): "~"
// becomes "~0" and "/" becomes "~1".
func EscapeToken(tok string) string {
	if !strings.ContainsAny(tok, "~/") {
		return tok
	}
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(tok)
}

// PointerAppend returns the JSON pointer ptr extended by one reference token.
func PointerAppend(ptr, tok string) string {
	return ptr + "/" + EscapeToken(tok)
}

// SplitPointer splits a JSON pointer ("" or "/a/b") into unescaped tokens.
// It reports false for text that is not a pointer.
func SplitPointer(ptr string) ([]string, bool) {
	if ptr == "" {
		return nil, true
	}
	if ptr[0] != '/' {
		return nil, false
	}
	parts := strings.Split(ptr[1:], "/")
	for i, p := range parts {
		if !strings.Contains(p, "~") {
			continue
		}
		var b strings.Builder
		for j := 0; j < len(p); j++ {
			if p[j] != '~' {
				b.WriteByte(p[j])
				continue
			}
			if j+1 >= len(p) {
				return nil, false
			}
			switch p[j+1] {
			case '0':
				b.WriteByte('~')
			case '1':
				b.WriteByte('/')
			default:
				return nil, false
			}
			j++
		}
		parts[i] = b.String()
	}
	return parts, true
}

// Resolve follows a local reference inside a decoded document. ref is either
// a URI fragment reference ("#", "#/$defs/Item", percent-encoded as in a
// "$ref", e.g. "#/properties/a%20b") or a bare JSON pointer ("", "/a/b").
// Tokens use the RFC 6901 escapes ~0 and ~1; array elements are addressed by
// decimal index without leading zeros. A plain-name fragment ("#node") is
// not a pointer (JSON Schema's anchors are resolved by internal/jsonschema);
// anything with text before '#' is not local. Neither is resolved.
func Resolve(root any, ref string) (any, bool) {
	ptr := ref
	if strings.HasPrefix(ref, "#") {
		frag, err := url.PathUnescape(ref[1:])
		if err != nil {
			return nil, false
		}
		if frag != "" && frag[0] != '/' {
			return nil, false
		}
		ptr = frag
	} else if ref != "" && ref[0] != '/' {
		return nil, false
	}
	toks, ok := SplitPointer(ptr)
	if !ok {
		return nil, false
	}
	cur := root
	for _, tok := range toks {
		switch t := cur.(type) {
		case map[string]any:
			v, ok := t[tok]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, ok := ArrayIndex(tok)
			if !ok || i >= len(t) {
				return nil, false
			}
			cur = t[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// ArrayIndex parses a JSON pointer token as an array index: digits, no
// leading zero, at most 9 digits.
func ArrayIndex(tok string) (int, bool) {
	if tok == "" || (len(tok) > 1 && tok[0] == '0') || !allDigits(tok) || len(tok) > 9 {
		return 0, false
	}
	i, err := strconv.Atoi(tok)
	return i, err == nil
}

// Replace returns a copy of v in which the value at the JSON pointer ptr
// is replaced by what f makes of it; the containers along the way are
// copied, everything else is shared with v. It reports false, returning v,
// when ptr addresses nothing in v or f declines (its ok is false).
func Replace(v any, ptr string, f func(old any) (any, bool)) (any, bool) {
	toks, ok := SplitPointer(ptr)
	if !ok {
		return v, false
	}
	return replaceAt(v, toks, f)
}

func replaceAt(v any, toks []string, f func(any) (any, bool)) (any, bool) {
	if len(toks) == 0 {
		nv, ok := f(v)
		if !ok {
			return v, false
		}
		return nv, true
	}
	switch t := v.(type) {
	case map[string]any:
		e, ok := t[toks[0]]
		if !ok {
			return v, false
		}
		ne, ok := replaceAt(e, toks[1:], f)
		if !ok {
			return v, false
		}
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = x
		}
		out[toks[0]] = ne
		return out, true
	case []any:
		i, ok := ArrayIndex(toks[0])
		if !ok || i >= len(t) {
			return v, false
		}
		ne, ok := replaceAt(t[i], toks[1:], f)
		if !ok {
			return v, false
		}
		out := make([]any, len(t))
		copy(out, t)
		out[i] = ne
		return out, true
	}
	return v, false
}
