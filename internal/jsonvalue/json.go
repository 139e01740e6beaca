package jsonvalue

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/mcpdrill/mcpdrill/internal/safetext"
)

// MaxJSONDepth is the deepest nesting of objects and arrays that DecodeJSON
// accepts. Deeper documents are refused with ErrTooDeep before any decoding
// happens, so a hostile payload cannot make later recursive walks expensive.
const MaxJSONDepth = 1000

// Bounds on a single JSON number accepted by DecodeJSON: at most
// maxNumberDigits digits and a decimal magnitude within 10^±maxNumberExponent
// (zero is always accepted). A number such as 1e999999999 is legal JSON, but turning it into an exact rational (which the
// validator does) would cost gigabytes; it is refused with ErrNumberTooLarge.
const (
	maxNumberDigits   = 1000
	maxNumberExponent = 10000
)

var (
	// ErrTooDeep reports a JSON document or schema nested deeper than allowed.
	ErrTooDeep = errors.New("jsonvalue: JSON nesting too deep")
	// ErrNumberTooLarge reports a JSON number with too many digits or too
	// large an exponent to be handled exactly.
	ErrNumberTooLarge = errors.New("jsonvalue: JSON number too large")
	// ErrTrailingData reports bytes after the first JSON value.
	ErrTrailingData = errors.New("jsonvalue: trailing data after JSON value")
)

// DecodeJSON decodes one JSON value with json.Number numbers (UseNumber), so
// integers keep their exact text. Objects become map[string]any and arrays
// []any. Nesting deeper than MaxJSONDepth, oversized numbers and trailing data
// are errors. Duplicate object keys keep the last value, as encoding/json does.
func DecodeJSON(b []byte) (any, error) {
	return DecodeJSONDepth(b, MaxJSONDepth)
}

// DecodeJSONDepth is DecodeJSON with another nesting limit.
func DecodeJSONDepth(b []byte, maxDepth int) (any, error) {
	if d := jsonDepth(b); d > maxDepth {
		return nil, fmt.Errorf("%w: depth over %d", ErrTooDeep, maxDepth)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("jsonvalue: decode JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, ErrTrailingData
	}
	if err := checkNumbers(v, 0); err != nil {
		return nil, err
	}
	return v, nil
}

// jsonDepth returns the maximum nesting depth of objects and arrays in b,
// scanning bytes only (strings are skipped). It stops counting once the depth
// is known to be excessive. It does not validate the JSON.
func jsonDepth(b []byte) int {
	depth, maxd := 0, 0
	inStr, esc := false, false
	for _, c := range b {
		if inStr {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		switch c {
		case '"':
			inStr = true
		case '{', '[':
			depth++
			if depth > maxd {
				maxd = depth
			}
		case '}', ']':
			depth--
		}
	}
	return maxd
}

func checkNumbers(v any, depth int) error {
	switch t := v.(type) {
	case map[string]any:
		for _, e := range t {
			if err := checkNumbers(e, depth+1); err != nil {
				return err
			}
		}
	case []any:
		for _, e := range t {
			if err := checkNumbers(e, depth+1); err != nil {
				return err
			}
		}
	case json.Number:
		if _, ok := ParseDecimal(string(t)); !ok {
			return ErrNumberTooLarge
		}
	}
	return nil
}

// Decimal is a parsed JSON number: value = (Neg ? -1 : 1) × 0.Digits × 10^Exp,
// with Digits free of leading and trailing zeros. Zero has empty Digits.
type Decimal struct {
	Neg    bool
	Digits string
	Exp    int
}

// ParseDecimal parses JSON number text exactly, without binary rounding. It
// fails on malformed text and on numbers outside the accepted bounds.
func ParseDecimal(s string) (Decimal, bool) {
	var d Decimal
	if s == "" {
		return d, false
	}
	if s[0] == '-' {
		d.Neg = true
		s = s[1:]
	}
	mant, expPart, hasExp := strings.Cut(strings.ToLower(s), "e")
	intPart, frac, _ := strings.Cut(mant, ".")
	if intPart == "" || !allDigits(intPart) || !allDigits(frac) {
		return d, false
	}
	if len(intPart)+len(frac) > maxNumberDigits {
		return d, false
	}
	e := 0
	if hasExp {
		if expPart == "" {
			return d, false
		}
		sign := 1
		switch expPart[0] {
		case '+':
			expPart = expPart[1:]
		case '-':
			sign = -1
			expPart = expPart[1:]
		}
		if expPart == "" || !allDigits(expPart) {
			return d, false
		}
		expPart = strings.TrimLeft(expPart, "0")
		if len(expPart) > 6 {
			return d, false
		}
		n, _ := strconv.Atoi("0" + expPart)
		e = sign * n
	}
	all := intPart + frac
	e += len(intPart)
	trimmed := strings.TrimLeft(all, "0")
	e -= len(all) - len(trimmed)
	trimmed = strings.TrimRight(trimmed, "0")
	if trimmed == "" {
		return Decimal{}, true // zero, sign dropped
	}
	if e > maxNumberExponent || e < -maxNumberExponent {
		return d, false
	}
	d.Digits = trimmed
	d.Exp = e
	return d, true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Integral reports whether the decimal has no fractional part.
func (d Decimal) Integral() bool { return d.Exp >= len(d.Digits) }

// String renders the decimal in the canonical number form documented on
// Canonical (the ECMAScript Number-to-String layout applied to the exact
// decimal digits).
func (d Decimal) String() string {
	if d.Digits == "" {
		return "0"
	}
	var b strings.Builder
	if d.Neg {
		b.WriteByte('-')
	}
	k, n := len(d.Digits), d.Exp
	switch {
	case k <= n && n <= 21:
		b.WriteString(d.Digits)
		b.WriteString(strings.Repeat("0", n-k))
	case 0 < n && n <= 21:
		b.WriteString(d.Digits[:n])
		b.WriteByte('.')
		b.WriteString(d.Digits[n:])
	case -6 < n && n <= 0:
		b.WriteString("0.")
		b.WriteString(strings.Repeat("0", -n))
		b.WriteString(d.Digits)
	default:
		b.WriteByte(d.Digits[0])
		if k > 1 {
			b.WriteByte('.')
			b.WriteString(d.Digits[1:])
		}
		b.WriteByte('e')
		if n-1 >= 0 {
			b.WriteByte('+')
		}
		b.WriteString(strconv.Itoa(n - 1))
	}
	return b.String()
}

// Type returns the JSON type name of a decoded value: "object", "array",
// "string", "integer" (a number with no fractional part, such as 3 or 3.0),
// "number", "boolean" or "null". It returns "" for values outside the JSON
// data model (and for malformed json.Number text).
func Type(v any) string {
	switch t := v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	case json.Number:
		d, ok := ParseDecimal(string(t))
		if !ok {
			return ""
		}
		if d.Integral() {
			return "integer"
		}
		return "number"
	case float64:
		return floatType(t)
	case float32:
		return floatType(float64(t))
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return "integer"
	}
	return ""
}

// Kind returns the JSON type of a decoded value as JSON names its types:
// "object", "array", "string", "number", "boolean" or "null" (Type without
// its split of numbers into integer and number). It returns "" where Type
// does.
func Kind(v any) string {
	if t := Type(v); t != "integer" {
		return t
	}
	return "number"
}

// Number reads a decoded number as a float64: a json.Number (as
// DecodeJSON decodes one), or a float or integer as YAML and other
// decoders give them. ok is false for anything else and for json.Number
// text that is no number.
func Number(v any) (f float64, ok bool) {
	switch x := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		return f, err == nil
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint64:
		return float64(x), true
	}
	return 0, false
}

func floatType(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return ""
	}
	if f == math.Trunc(f) {
		return "integer"
	}
	return "number"
}

// WriteIndented writes v to w as JSON indented by two spaces, with <, > and
// & left as they are (the documents are read by people and tools, not
// embedded in HTML) and a trailing newline: the form of every JSON document
// mcpdrill writes for people and CI to read. Every character that may not
// reach a terminal or a log as itself (safetext.Unsafe: controls, DEL, C1
// controls, bidirectional overrides…) is written as a \u escape, and so is
// the second '#' of "##[" (a workflow command anywhere in a CI log line), so
// that a document printed to a terminal or a CI log carries none of them;
// the value it encodes is the same.
func WriteIndented(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(escapeUnsafe(b.Bytes()))
	return err
}

// escapeUnsafe rewrites the unsafe characters of a JSON document that
// encoding/json leaves as they are (DEL and those above it; it escapes the
// C0 controls itself), and the second '#' of "##[", as \u escapes. Outside
// strings a JSON document holds neither, so each is inside a string, where
// the escape means the same character.
func escapeUnsafe(doc []byte) []byte {
	if !bytes.ContainsFunc(doc, func(r rune) bool { return r >= 0x7f && safetext.Unsafe(r) }) && !bytes.Contains(doc, []byte("##[")) {
		return doc
	}
	out := make([]byte, 0, len(doc)+32)
	for len(doc) > 0 {
		if bytes.HasPrefix(doc, []byte("##[")) {
			out = append(out, `#\u0023[`...)
			doc = doc[3:]
			continue
		}
		r, n := utf8.DecodeRune(doc)
		if r < 0x7f || !safetext.Unsafe(r) {
			out = append(out, doc[:n]...)
			doc = doc[n:]
			continue
		}
		if r1, r2 := utf16.EncodeRune(r); r1 != utf8.RuneError {
			out = fmt.Appendf(out, `\u%04x\u%04x`, r1, r2)
		} else {
			out = fmt.Appendf(out, `\u%04x`, r)
		}
		doc = doc[n:]
	}
	return out
}
