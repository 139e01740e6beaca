package mcpserve

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Text a scanned server controls (its name and version, tool names, what
// findings quote of it, the line its stderr said) reaches the model only
// as a string value of a structured result, never in prose mcpdrill
// writes, and only after serverText:
//
//   - every rune that is not graphic (controls, line breaks, bidirectional
//     overrides, zero-width and other format characters, the invisible tag
//     characters U+E0000–U+E007F that can carry hidden instructions,
//     private-use and unassigned code points) becomes a visible escape in
//     Go's notation ("\u202e"), and a byte that is not UTF-8 "\xNN";
//   - it is cut to limit runes, the cut marked with "…";
//   - the secrets the target was resolved with are masked.
//
// Each tool's description tells the model that these strings are untrusted
// data. What a server says can still read as an instruction; the rule is
// that mcpdrill never presents it as its own words.
//
// The escaping rule is the one internal/safetext applies to terminals
// (strconv.IsGraphic); this file keeps a copy until that package is on the
// main line, and then uses it.

// Limits, in runes, of server text by kind.
const (
	nameLimit    = 128
	messageLimit = 400
)

// serverText makes s, which a server controls, safe to hand to a model.
func serverText(s string, limit int, mask func(string) string) string {
	if mask != nil {
		s = mask(s)
	}
	var b strings.Builder
	n := 0
	for i := 0; i < len(s); {
		if n >= limit {
			b.WriteString("…")
			break
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			b.WriteString(`\x`)
			b.WriteString(strconv.FormatUint(uint64(s[i])|0x100, 16)[1:])
		case !strconv.IsGraphic(r):
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
		n++
	}
	return b.String()
}
