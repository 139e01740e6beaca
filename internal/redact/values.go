package redact

import (
	"cmp"
	"encoding/json"
	"slices"
	"strings"
)

// MinValueLen is the shortest value Values masks: masking a shorter one
// ("1", "on") would garble ordinary text while protecting little.
const MinValueLen = 4

// Values returns a function that replaces every occurrence of each of
// values, as it is and as it is written inside a JSON string, with Mask.
// It is for values known to be secret (an environment or header value a
// configuration resolved), wherever they might turn up: a message, a
// server's stderr, a command line. Values shorter than MinValueLen are
// left alone. A value that contains another is masked whole.
func Values(values []string) func(string) string {
	var forms []string
	for _, v := range values {
		if len(v) < MinValueLen {
			continue
		}
		forms = append(forms, v)
		if b, err := json.Marshal(v); err == nil {
			if q := string(b[1 : len(b)-1]); q != v {
				forms = append(forms, q)
			}
		}
	}
	if len(forms) == 0 {
		return func(s string) string { return s }
	}
	// At one position the replacer takes the first form that matches: the
	// longest first.
	slices.SortStableFunc(forms, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	forms = slices.Compact(forms)
	pairs := make([]string, 0, 2*len(forms))
	for _, f := range forms {
		pairs = append(pairs, f, Mask)
	}
	return strings.NewReplacer(pairs...).Replace
}
