package jsonvalue

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Canonical returns the canonical JSON encoding of a decoded value, used for
// fingerprints. Two values that are equal as JSON data produce identical bytes.
// The form follows RFC 8785 (JCS) in layout, with exact numbers:
//
//   - Object members are sorted by their keys compared as UTF-16 code units
//     (the JCS order; it differs from byte order only for keys with
//     characters above U+FFFF versus U+E000..U+FFFF).
//   - No insignificant whitespace.
//   - Strings: '"' and '\' are escaped, control characters below U+0020 use
//     \b \t \n \f \r or \u00xx (lower-case hex); everything else, including
//     '<', '>', '&', U+2028 and U+2029, is written as literal UTF-8. Invalid
//     UTF-8 is replaced by U+FFFD.
//   - Numbers are normalised from their exact decimal value (json.Number text
//     is never rounded through float64): 1, 1.0, 1e0 and 10e-1 all become 1;
//     -0 becomes 0; 1.50 becomes 1.5. The layout is ECMAScript's
//     Number-to-String: plain digits while the decimal exponent is in
//     (-7, 21], otherwise d.ddde+N / d.ddde-N. So 1e21 → 1e+21, 1e-7 → 1e-7,
//     0.000001 → 0.000001. float64 inputs go through strconv's shortest
//     representation first; NaN and ±Inf become null.
//
// Values outside the DecodeJSON data model are first converted with
// json.Marshal; Canonical returns nil if that fails or nesting is deeper than
// MaxJSONDepth.
func Canonical(v any) []byte {
	out, err := appendCanonical(nil, v, 0)
	if err != nil {
		b, merr := json.Marshal(v)
		if merr != nil {
			return nil
		}
		dv, derr := DecodeJSON(b)
		if derr != nil {
			return nil
		}
		out, err = appendCanonical(nil, dv, 0)
		if err != nil {
			return nil
		}
	}
	return out
}

// CanonicalJSON decodes raw with DecodeJSON and returns its Canonical form.
func CanonicalJSON(raw json.RawMessage) ([]byte, error) {
	v, err := DecodeJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("jsonvalue: canonical: %w", err)
	}
	out, err := appendCanonical(nil, v, 0)
	if err != nil {
		return nil, fmt.Errorf("jsonvalue: canonical: %w", err)
	}
	return out, nil
}

var errNotJSON = fmt.Errorf("jsonvalue: value outside the JSON data model")

func appendCanonical(b []byte, v any, depth int) ([]byte, error) {
	if depth > MaxJSONDepth {
		return nil, ErrTooDeep
	}
	switch t := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		if t {
			return append(b, "true"...), nil
		}
		return append(b, "false"...), nil
	case string:
		return appendString(b, t), nil
	case json.Number:
		d, ok := ParseDecimal(string(t))
		if !ok {
			return nil, fmt.Errorf("%w: malformed number", errNotJSON)
		}
		return append(b, d.String()...), nil
	case float64:
		return appendFloat(b, t), nil
	case float32:
		return appendFloat(b, float64(t)), nil
	case int:
		return appendIntText(b, strconv.FormatInt(int64(t), 10)), nil
	case int64:
		return appendIntText(b, strconv.FormatInt(t, 10)), nil
	case int32:
		return appendIntText(b, strconv.FormatInt(int64(t), 10)), nil
	case uint64:
		return appendIntText(b, strconv.FormatUint(t, 10)), nil
	case uint:
		return appendIntText(b, strconv.FormatUint(uint64(t), 10)), nil
	case []any:
		b = append(b, '[')
		for i, e := range t {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendCanonical(b, e, depth+1); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case map[string]any:
		keys := sortedKeysUTF16(t)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			var err error
			if b, err = appendCanonical(b, t[k], depth+1); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	}
	return nil, errNotJSON
}

func appendIntText(b []byte, s string) []byte {
	d, _ := ParseDecimal(s)
	return append(b, d.String()...)
}

func appendFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	d, ok := ParseDecimal(strconv.FormatFloat(f, 'g', -1, 64))
	if !ok {
		return append(b, "null"...)
	}
	return append(b, d.String()...)
}

// sortedKeysUTF16 returns the keys of m ordered by UTF-16 code units.
func sortedKeysUTF16(m map[string]any) []string {
	return slices.SortedFunc(maps.Keys(m), compareUTF16)
}

// compareUTF16 compares two strings as sequences of UTF-16 code units
// without allocating. Invalid UTF-8 compares as U+FFFD, the form in which
// Canonical writes it.
func compareUTF16(a, b string) int {
	for len(a) > 0 && len(b) > 0 {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		a, b = a[na:], b[nb:]
		if ra == rb {
			continue
		}
		ha, la := utf16Units(ra)
		hb, lb := utf16Units(rb)
		if ha != hb {
			return cmpRune(ha, hb)
		}
		return cmpRune(la, lb)
	}
	return cmpRune(rune(len(a)), rune(len(b)))
}

// utf16Units returns the first and second UTF-16 code units of r (the
// second is 0 for runes in the basic plane).
func utf16Units(r rune) (rune, rune) {
	if r < 0x10000 {
		return r, 0
	}
	h, l := utf16.EncodeRune(r)
	return h, l
}

func cmpRune(a, b rune) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

const hexDigits = "0123456789abcdef"

// shortEscapes maps each ASCII byte that JSON writes as a two-character
// escape to the letter after the backslash (0: none).
var shortEscapes = [utf8.RuneSelf]byte{'"': '"', '\\': '\\', '\b': 'b', '\t': 't', '\n': 'n', '\f': 'f', '\r': 'r'}

func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch e := shortEscapes[c]; {
			case e != 0:
				b = append(b, '\\', e)
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = utf8.AppendRune(b, utf8.RuneError)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}
