package scan

import "strings"

// AuthChallenge is one challenge of a WWW-Authenticate header.
type AuthChallenge struct {
	// Scheme is the auth scheme as sent (e.g. Bearer).
	Scheme string
	// Params holds the auth-params, names lowercased.
	Params map[string]string
}

// maxChallenges bounds what ParseChallenges reads from one header.
const maxChallenges = 32

// ParseChallenges reads the challenges of a WWW-Authenticate value (RFC 9110
// §11.6.1): comma-separated "scheme param=value, param="quoted"" lists, with
// token68 credentials skipped. It is lenient: a malformed part is skipped,
// never an error.
func ParseChallenges(h string) []AuthChallenge {
	p := &chParser{s: h}
	var out []AuthChallenge
	for len(out) <= maxChallenges {
		p.skip(" \t,")
		if p.i >= len(p.s) {
			break
		}
		tok := p.token()
		if tok == "" {
			if p.s[p.i] == '"' {
				p.quoted() // a stray quoted string: skip it whole
			} else {
				p.i++ // a character no token starts with: skip it
			}
			continue
		}
		p.skip(" \t")
		if p.i < len(p.s) && p.s[p.i] == '=' && !p.token68End() && len(out) > 0 {
			p.i++
			p.skip(" \t")
			var v string
			if p.i < len(p.s) && p.s[p.i] == '"' {
				v = p.quoted()
			} else {
				v = p.token()
			}
			last := &out[len(out)-1]
			if len(last.Params) < maxChallenges {
				name := strings.ToLower(tok)
				if _, dup := last.Params[name]; !dup {
					last.Params[name] = v
				}
			}
			continue
		}
		if p.i < len(p.s) && p.s[p.i] == '=' {
			for p.i < len(p.s) && p.s[p.i] == '=' { // token68 padding
				p.i++
			}
			continue
		}
		out = append(out, AuthChallenge{Scheme: tok, Params: map[string]string{}})
		// A token68 credential may follow the scheme.
		save := p.i
		if t := p.token(); t != "" {
			p.skip(" \t")
			if p.i < len(p.s) && p.s[p.i] == '=' && !p.token68End() {
				p.i = save // it was a param name
			} else {
				for p.i < len(p.s) && p.s[p.i] == '=' {
					p.i++
				}
			}
		}
	}
	if len(out) > maxChallenges {
		out = out[:maxChallenges]
	}
	return out
}

type chParser struct {
	s string
	i int
}

func (p *chParser) skip(set string) {
	for p.i < len(p.s) && strings.IndexByte(set, p.s[p.i]) >= 0 {
		p.i++
	}
}

func isTchar(c byte) bool {
	return c > 0x20 && c < 0x7f && strings.IndexByte("\"(),/:;<=>?@[\\]{}", c) < 0 || c == '/'
}

// token reads a token (also the token68 characters "/" and "+" and ".").
func (p *chParser) token() string {
	start := p.i
	for p.i < len(p.s) && isTchar(p.s[p.i]) {
		p.i++
	}
	return p.s[start:p.i]
}

// token68End reports whether the "=" at p.i is token68 padding: a run of
// "=" followed by the end, a comma, or whitespace then the end or a comma.
func (p *chParser) token68End() bool {
	j := p.i
	for j < len(p.s) && p.s[j] == '=' {
		j++
	}
	if j-p.i > 1 {
		return true
	}
	for j < len(p.s) && (p.s[j] == ' ' || p.s[j] == '\t') {
		j++
	}
	return j >= len(p.s) || p.s[j] == ','
}

func (p *chParser) quoted() string {
	p.i++ // opening quote
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		p.i++
		switch c {
		case '\\':
			if p.i < len(p.s) {
				b.WriteByte(p.s[p.i])
				p.i++
			}
		case '"':
			return b.String()
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
