package mcpserve

import (
	"unicode/utf8"

	"github.com/mcpdrill/mcpdrill/internal/safetext"
)

// Text a scanned server controls (its name and version, tool names, what
// findings quote of it, the line its stderr said) reaches the model only
// as a string value of a structured result, never in prose mcpdrill
// writes, and only after serverText:
//
//   - the secrets the target was resolved with are masked;
//   - it is cut to limit runes, the cut marked with "…";
//   - it is made safe as internal/safetext makes text for a terminal: every
//     rune that is not graphic (controls, line breaks, bidirectional
//     overrides, zero-width and other format characters, the invisible tag
//     characters U+E0000–U+E007F that can carry hidden instructions,
//     private-use and unassigned code points) becomes a visible escape, and
//     a byte that is not UTF-8 "\xNN".
//
// Each tool's description and the outputSchema tell the model that these
// strings are untrusted data. What a server says can still read as an
// instruction; the rule is that mcpdrill never presents it as its own words.

// Limits, in runes, of server text by kind.
const (
	nameLimit    = 128
	messageLimit = 400
)

// serverText makes s, which a server controls, safe to hand to a model: at
// most limit runes of it, each escaped (at most ten runes for one: "\U000e0068").
func serverText(s string, limit int, mask func(string) string) string {
	if mask != nil {
		s = mask(s)
	}
	cut := false
	for i, n := 0, 0; i < len(s); n++ {
		if n == limit {
			s, cut = s[:i], true
			break
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	s = safetext.Text(s)
	if cut {
		s += "…"
	}
	return s
}
