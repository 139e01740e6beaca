package jsonschema

import (
	"fmt"
	"regexp/syntax"
	"slices"
	"unicode/utf8"
)

// regexp returns the compiled pattern, its matches charged to the budget,
// or nil when Go's engine cannot run it (ECMA-only syntax: such patterns
// are not asserted by Compile either).
func (g *gen) regexp(pat string) *matcher {
	if re, ok := g.cache[pat]; ok {
		return re
	}
	re, err := newMatcher(pat, g.m)
	if err != nil {
		re = nil
	}
	g.cache[pat] = re
	return re
}

func (g *gen) genString(c *conj, idx int) (any, bool) {
	minL, maxL := 0, -1
	var pats []string
	format := ""
	for _, p := range c.parts {
		if n, ok := intKeyword(p.m, "minLength"); ok && n > minL {
			minL = n
		}
		if n, ok := intKeyword(p.m, "maxLength"); ok && (maxL < 0 || n < maxL) {
			maxL = n
		}
		if s, ok := p.m["pattern"].(string); ok && g.regexp(s) != nil {
			pats = append(pats, s)
		}
		if f, ok := p.m["format"].(string); ok && format == "" {
			format = f
		}
	}
	if maxL >= 0 && minL > maxL {
		g.failf("minLength above maxLength at %q", c.parts[0].loc)
		return nil, false
	}
	if minL > maxSynthString {
		g.failf("minLength above %d at %q", maxSynthString, c.parts[0].loc)
		return nil, false
	}
	s, ok := formatExample(format, idx)
	if !ok || !g.stringFits(s, pats, minL, maxL) {
		if s, ok = g.stringFor(pats, minL, maxL, idx); !ok {
			g.failf("no string found for the pattern at %q", c.parts[0].loc)
			return nil, false
		}
	}
	if !g.m.take(int64(len(s))) {
		g.failf("synthesis budget exceeded")
		return nil, false
	}
	return s, true
}

func (g *gen) stringFits(s string, pats []string, minL, maxL int) bool {
	n := utf8.RuneCountInString(s)
	if n < minL || (maxL >= 0 && n > maxL) {
		return false
	}
	for _, p := range pats {
		if re := g.regexp(p); re != nil && !re.MatchString(s) {
			return false
		}
	}
	return true
}

// stringFor finds a string matching every pattern within the length
// bounds. The attempt number picks the preferred length (typical, long,
// short), which lets oneOf branches that differ by length be told apart.
func (g *gen) stringFor(pats []string, minL, maxL, idx int) (string, bool) {
	modes := [][]int{{0, 1, 2}, {1, 2, 0}, {2, 0, 1}}[g.attempt%3]
	if len(pats) == 0 {
		for _, m := range modes {
			if s := defaultString(minL, maxL, idx, m); g.stringFits(s, nil, minL, maxL) {
				return s, true
			}
		}
		return "", false
	}
	var trees []*syntax.Regexp
	for _, p := range pats {
		re, err := syntax.Parse(translateECMA(p), syntax.Perl)
		if err != nil {
			continue
		}
		trees = append(trees, re)
	}
	targets := []int{minL, max(minL, 1), minL + 1, 3, 8, 16}
	if maxL >= 0 {
		targets = append(targets, maxL)
	}
	targets = slices.DeleteFunc(targets, func(t int) bool { return t < minL || (maxL >= 0 && t > maxL) })
	if modes[0] == 1 {
		slices.Reverse(targets)
	}
	for _, tree := range trees {
		for _, t := range targets {
			for v := range 3 {
				rg := &rxGen{target: t, variant: v + int(g.seed%7), offset: idx}
				built := rg.gen(tree, 0)
				if !g.m.step(int64(len(rg.out) + 1)) {
					return "", false
				}
				if !built {
					continue
				}
				s := string(rg.out)
				if g.stringFits(s, pats, minL, maxL) {
					return s, true
				}
			}
		}
	}
	return "", false
}

// defaultString builds an unconstrained string: "sample" (with the element
// index for distinct array items) cut or repeated to the length the mode
// asks for: 0 typical, 1 long (maxLength or 40), 2 short (minLength or 1).
func defaultString(minL, maxL, idx, mode int) string {
	base := "sample"
	if idx > 0 {
		base = string(rune('a'+idx%26)) + "sample" + itoa(idx)
	}
	L := len(base)
	switch mode {
	case 1:
		L = 40
		if maxL >= 0 {
			L = maxL
		}
	case 2:
		L = max(minL, 1)
	}
	L = max(L, minL)
	if maxL >= 0 {
		L = min(L, maxL)
	}
	out := make([]byte, 0, L)
	for len(out) < L {
		out = append(out, base...)
	}
	return string(out[:L])
}

// rxGen writes one string matched by a regular expression's syntax tree.
// Repetitions take their minimum count, grown toward the target length;
// alternations take branch variant mod n; character classes prefer
// letters and digits, shifted by offset so that array items differ.
type rxGen struct {
	target, variant, offset int
	out                     []rune
}

const preferredRunes = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ-_.@ "

func (r *rxGen) gen(re *syntax.Regexp, depth int) bool {
	if depth > 200 || len(r.out) > maxSynthString {
		return false
	}
	switch re.Op {
	case syntax.OpNoMatch:
		return false
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return true
	case syntax.OpLiteral:
		r.out = append(r.out, re.Rune...)
	case syntax.OpCharClass:
		c, ok := pickRune(re.Rune, r.offset+r.variant)
		if !ok {
			return false
		}
		r.out = append(r.out, c)
	case syntax.OpAnyCharNotNL, syntax.OpAnyChar:
		r.out = append(r.out, rune(preferredRunes[(r.offset+r.variant)%26]))
	case syntax.OpCapture:
		return r.gen(re.Sub[0], depth+1)
	case syntax.OpConcat:
		for _, s := range re.Sub {
			if !r.gen(s, depth+1) {
				return false
			}
		}
	case syntax.OpAlternate:
		return r.gen(re.Sub[r.variant%len(re.Sub)], depth+1)
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		lo, hi := 0, -1
		switch re.Op {
		case syntax.OpPlus:
			lo = 1
		case syntax.OpQuest:
			hi = 1
		case syntax.OpRepeat:
			lo, hi = re.Min, re.Max
		}
		k := lo
		if need := r.target - len(r.out); need > 0 && (hi < 0 || hi > lo) {
			k = lo + need
			if hi >= 0 && k > hi {
				k = hi
			}
		}
		if k > maxSynthString {
			return false
		}
		for range k {
			if !r.gen(re.Sub[0], depth+1) {
				return false
			}
		}
	default:
		return false
	}
	return len(r.out) <= maxSynthString
}

// pickRune chooses a rune from a class given as [lo, hi] pairs.
func pickRune(ranges []rune, offset int) (rune, bool) {
	in := func(c rune) bool {
		for i := 0; i+1 < len(ranges); i += 2 {
			if ranges[i] <= c && c <= ranges[i+1] {
				return true
			}
		}
		return false
	}
	n := len(preferredRunes)
	for i := range n {
		c := rune(preferredRunes[(offset+i)%n])
		if in(c) {
			return c, true
		}
	}
	for i := 0; i+1 < len(ranges); i += 2 {
		lo, hi := ranges[i], ranges[i+1]
		if hi >= 0x21 {
			return max(lo, 0x21), true
		}
	}
	if len(ranges) >= 2 {
		return ranges[0], true
	}
	return 0, false
}

// formatExample returns a value valid for a format the validator asserts;
// idx makes array items distinct.
func formatExample(format string, idx int) (string, bool) {
	switch format {
	case "date-time":
		return fmt.Sprintf("2024-01-%02dT03:04:05Z", 1+idx%28), true
	case "date":
		return fmt.Sprintf("2024-01-%02d", 1+idx%28), true
	case "time":
		return fmt.Sprintf("03:04:%02dZ", idx%60), true
	case "duration":
		return fmt.Sprintf("P%dD", idx+1), true
	case "period":
		return fmt.Sprintf("2024-01-01T00:00:00Z/P%dD", idx+1), true
	case "email", "idn-email":
		if idx == 0 {
			return "user@example.com", true
		}
		return fmt.Sprintf("user%d@example.com", idx), true
	case "hostname", "idn-hostname":
		if idx == 0 {
			return "example.com", true
		}
		return fmt.Sprintf("host%d.example.com", idx), true
	case "ipv4":
		return fmt.Sprintf("192.0.2.%d", 1+idx%254), true
	case "ipv6":
		return fmt.Sprintf("2001:db8::%x", idx+1), true
	case "uri", "iri", "uri-reference", "iri-reference":
		if idx == 0 {
			return "https://example.com/", true
		}
		return fmt.Sprintf("https://example.com/%d", idx), true
	case "uri-template":
		return fmt.Sprintf("https://example.com/{id%d}", idx), true
	case "uuid":
		return fmt.Sprintf("123e4567-e89b-12d3-a456-%012d", 426614174000+idx), true
	case "json-pointer":
		return fmt.Sprintf("/a%d", idx), true
	case "relative-json-pointer":
		return fmt.Sprintf("%d/a", idx), true
	case "regex":
		return fmt.Sprintf("^a%d$", idx), true
	case "semver":
		return fmt.Sprintf("1.0.%d", idx), true
	}
	return "", false
}
