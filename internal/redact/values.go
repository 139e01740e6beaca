package redact

import (
	"encoding/json"
	"slices"
	"strings"
)

// MinValueLen is the shortest value Values masks: masking a shorter one
// ("1", "on") would garble ordinary text while protecting little.
const MinValueLen = 4

// EchoRun is how much of a secret is enough to mask an echo of it: any run
// of EchoRun bytes of a secret longer than EchoRun is masked wherever it
// appears, so a server that echoes a secret cut short (the value less its
// last character, a prefix, a suffix) still shows none of it beyond
// EchoRun-1 bytes at either end. Only runs of token characters (letters,
// digits and - _ . + / = ~) that mix classes count: a run holding a quote,
// a colon or a space could match the structure of a JSON document or a
// sentence, and a run of lowercase letters, capitals or digits alone may
// be an ordinary word or number (the mixed runs around it still match).
const EchoRun = 8

// Values returns a function that masks each of values (secrets, as
// Secrets collects them) wherever it appears, as it is and as it is written
// inside a JSON string: the whole value, and any run of EchoRun bytes of a
// longer one (see EchoRun), each masked stretch replaced by one Mask.
// Values shorter than MinValueLen are left alone.
func Values(values []string) func(string) string {
	var whole []string
	runs := map[string]bool{}
	for _, v := range values {
		if len(v) < MinValueLen {
			continue
		}
		forms := []string{v}
		if b, err := json.Marshal(v); err == nil {
			if q := string(b[1 : len(b)-1]); q != v {
				forms = append(forms, q)
			}
		}
		for _, f := range forms {
			whole = append(whole, f)
			if len(f) <= EchoRun {
				continue
			}
			for i := 0; i+EchoRun <= len(f); i++ {
				if r := f[i : i+EchoRun]; tokenRun(r) {
					runs[r] = true
				}
			}
		}
	}
	if len(whole) == 0 {
		return func(s string) string { return s }
	}
	slices.Sort(whole)
	whole = slices.Compact(whole)
	return func(s string) string { return maskRuns(s, whole, runs) }
}

// tokenRun reports whether a run of a secret is matched on its own (see
// EchoRun): token characters only, of more than one class (lowercase
// letters, capitals, digits, punctuation).
func tokenRun(s string) bool {
	classes := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z':
			classes |= 1
		case c >= 'A' && c <= 'Z':
			classes |= 2
		case c >= '0' && c <= '9':
			classes |= 4
		case strings.IndexByte(tokenPunct, c) >= 0:
			classes |= 8
		default:
			return false
		}
	}
	return classes&(classes-1) != 0
}

// tokenPunct are the punctuation characters of tokens (base64, JWTs,
// prefixed API keys).
const tokenPunct = "-_.+/=~"

// maskRuns marks every byte of s covered by a whole value or a run, and
// replaces each marked stretch with Mask. Both are whole UTF-8 characters:
// a value is valid UTF-8 as the text is, a run is ASCII.
func maskRuns(s string, whole []string, runs map[string]bool) string {
	var marked []bool
	mark := func(i, n int) {
		if marked == nil {
			marked = make([]bool, len(s))
		}
		for j := i; j < i+n; j++ {
			marked[j] = true
		}
	}
	for _, v := range whole {
		for i := 0; ; {
			k := strings.Index(s[i:], v)
			if k < 0 {
				break
			}
			mark(i+k, len(v))
			i += k + 1
		}
	}
	if len(runs) > 0 {
		for i := 0; i+EchoRun <= len(s); i++ {
			if runs[s[i:i+EchoRun]] {
				mark(i, EchoRun)
			}
		}
	}
	if marked == nil {
		return s
	}
	// A stretch that covers part of a backslash escape ("\u0000", "\n" in a
	// JSON string) covers all of it, so what is left stays well formed.
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			continue
		}
		n := 2
		if s[i+1] == 'u' && i+6 <= len(s) {
			n = 6
		}
		if slices.Contains(marked[i:i+n], true) {
			for j := i; j < i+n; j++ {
				marked[j] = true
			}
		}
		i += n - 1
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && marked[j] == marked[i] {
			j++
		}
		if marked[i] {
			b.WriteString(Mask)
		} else {
			b.WriteString(s[i:j])
		}
		i = j
	}
	return b.String()
}
