package mcp

import (
	"encoding/base64"
	"errors"
	"strings"
)

const (
	b64Prefix = "=?base64?"
	b64Suffix = "?="
)

// ErrBadHeaderValue reports a malformed =?base64?…?= header value.
var ErrBadHeaderValue = errors.New("mcp: malformed base64 header value")

// headerSafe reports whether s can travel as a plain 2026-07-28 header value:
// visible ASCII, space or tab, without leading or trailing whitespace, and
// not itself shaped like the base64 sentinel.
func headerSafe(s string) bool {
	if s == "" {
		return true
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 0x21 || c > 0x7e) && c != ' ' && c != '\t' {
			return false
		}
	}
	if s[0] == ' ' || s[0] == '\t' || s[len(s)-1] == ' ' || s[len(s)-1] == '\t' {
		return false
	}
	return !looksEncoded(s)
}

func looksEncoded(s string) bool {
	return len(s) >= len(b64Prefix)+len(b64Suffix) && strings.HasPrefix(s, b64Prefix) && strings.HasSuffix(s, b64Suffix)
}

// EncodeHeaderValue returns s as an Mcp-Name / Mcp-Param-* header value:
// unchanged when header-safe, otherwise =?base64?<base64 of the bytes>?=.
func EncodeHeaderValue(s string) string {
	if headerSafe(s) {
		return s
	}
	return b64Prefix + base64.StdEncoding.EncodeToString([]byte(s)) + b64Suffix
}

// DecodeHeaderValue reverses EncodeHeaderValue: a =?base64?…?= value is
// decoded, any other value is returned unchanged.
func DecodeHeaderValue(v string) (string, error) {
	if !looksEncoded(v) {
		return v, nil
	}
	inner := v[len(b64Prefix) : len(v)-len(b64Suffix)]
	b, err := base64.StdEncoding.Strict().DecodeString(inner)
	if err != nil {
		return "", ErrBadHeaderValue
	}
	return string(b), nil
}
