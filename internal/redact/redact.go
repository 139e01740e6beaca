// Package redact removes secrets from what mcpdrill prints and records:
// server URLs (user info, query values, fragments) and server command lines
// (values of secret-looking flags and KEY=value arguments, URLs among the
// arguments). It is pure string work: no I/O, no project imports.
//
// The rules err on the side of masking: a value that might be a secret is
// replaced by Mask, never printed.
package redact

import (
	"net/url"
	"strings"
)

// Mask replaces every value that is withheld.
const Mask = "REDACTED"

// URL returns s without its secrets: the user info (name and password) is
// removed, every query value is replaced by Mask (the keys stay, in their
// order; a piece without '=' is masked whole), and the fragment is dropped.
// A string that does not parse as a URL (a template such as
// "http://127.0.0.1:${PORT}/mcp", say) is cut the same way by hand: what
// lies between "://" and the last '@' removed, the fragment dropped, the
// query masked; one with an '@' but no "://" gives Mask, since which part
// is the secret is unknown. So does a URL whose opaque part
// (scheme:opaque) holds an '@'.
func URL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return byHand(s)
	}
	if strings.Contains(u.Opaque, "@") {
		return Mask
	}
	u.User = nil
	u.Fragment, u.RawFragment = "", ""
	if u.RawQuery != "" {
		u.RawQuery = maskQuery(u.RawQuery)
	}
	out := u.String()
	// A path such as "//u:p@h" reads as user info once printed alone.
	if v, err := url.Parse(out); err != nil || v.User != nil {
		return byHand(out)
	}
	return out
}

// byHand is URL for a string url.Parse refused. User info may hold any
// character, so everything between "://" and the last '@' goes, wherever
// that '@' is; an '@' without "://" before it gives Mask.
func byHand(s string) string {
	if i := strings.LastIndexByte(s, '@'); i >= 0 {
		scheme, _, ok := strings.Cut(s[:i], "://")
		if !ok || !isScheme(scheme) {
			return Mask
		}
		s = scheme + "://" + s[i+1:]
	}
	s, _, _ = strings.Cut(s, "#")
	if s, query, ok := strings.Cut(s, "?"); ok {
		return s + "?" + maskQuery(query)
	}
	return s
}

// isScheme reports whether s is a URL scheme: a letter, then letters,
// digits, '+', '-' and '.'.
func isScheme(s string) bool {
	for i, r := range s {
		letter := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if !letter && (i == 0 || !(r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.')) {
			return false
		}
	}
	return s != ""
}

// maskQuery keeps each key of a raw query and masks its value; a piece
// without '=' may be a bare token and is masked whole.
func maskQuery(raw string) string {
	pieces := strings.Split(raw, "&")
	for i, p := range pieces {
		if p == "" {
			continue
		}
		key, _, ok := strings.Cut(p, "=")
		if !ok {
			pieces[i] = Mask
			continue
		}
		pieces[i] = key + "=" + Mask
	}
	return strings.Join(pieces, "&")
}

// URLError redacts an error as url.Parse returns it: a *url.Error, whose
// text holds the whole URL, comes back with its URL passed through URL
// (Op and Err kept, so errors.Is and errors.As still see the cause). Any
// other error is returned as it is.
func URLError(err error) error {
	ue, ok := err.(*url.Error)
	if !ok {
		return err
	}
	c := *ue
	c.URL = URL(ue.URL)
	return &c
}

// secretWords are the name fragments that make a flag, a KEY=value key or
// a header name secret-looking (matched case-insensitively, anywhere in the
// name).
var secretWords = []string{
	"token", "key", "secret", "password", "passwd", "pass", "auth",
	"credential", "bearer", "cookie", "session", "private",
}

// SecretName reports whether a flag, variable or header name looks like it
// names a secret: it contains token, key, secret, password, passwd, pass,
// auth, credential, bearer, cookie, session or private, in any case
// ("--api-key", "GITHUB_TOKEN", "Authorization", "X-Session-Id").
func SecretName(name string) bool {
	n := strings.ToLower(name)
	for _, w := range secretWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// Argv returns a copy of a command line with its secrets masked. The
// command name (argv[0]) is kept, unless it holds "://" (then URL applies).
// In the arguments:
//   - the value after a secret-looking flag ("--token VALUE", "-api-key
//     VALUE") is masked, unless it starts with '-' (then it is the next flag);
//   - "--flag=VALUE" with a secret-looking flag name becomes "--flag=REDACTED"
//     (the value of any other flag is redacted like an argument, below);
//   - "KEY=VALUE" with a secret-looking KEY becomes "KEY=REDACTED", and
//     "Name: VALUE" (a header given as an argument) with a secret-looking
//     name becomes "Name: REDACTED";
//   - any other argument holding "://" or '@', or starting with "//", may be
//     a URL (or "--flag=URL", "KEY=URL") and goes through URL.
//
// A name is secret-looking as SecretName says.
func Argv(argv []string) []string {
	if argv == nil {
		return nil
	}
	out := make([]string, len(argv))
	maskNext := false
	for i, a := range argv {
		switch {
		case i == 0:
			out[i] = a
			if strings.Contains(a, "://") {
				out[i] = URL(a)
			}
		case maskNext && !strings.HasPrefix(a, "-"):
			out[i] = Mask
			maskNext = false
		default:
			maskNext = false
			out[i], maskNext = arg(a)
		}
	}
	return out
}

// arg redacts one argument that does not follow a secret flag; next is true
// when it is a secret-looking flag whose value is the next argument.
func arg(a string) (redacted string, next bool) {
	name, isFlag := strings.CutPrefix(a, "-")
	if !isFlag {
		return operand(a), false
	}
	flag, v, hasValue := strings.Cut(strings.TrimPrefix(name, "-"), "=")
	switch {
	case !hasValue:
		return a, SecretName(flag)
	case SecretName(flag):
		return a[:len(a)-len(v)] + Mask, false
	}
	return a[:len(a)-len(v)] + operand(v), false
}

// operand redacts an argument, or a flag's value, that is not a flag:
// KEY=VALUE and "Name: VALUE" with a secret-looking name lose the value,
// anything else holding "://" goes through URL.
func operand(a string) string {
	if key, v, ok := strings.Cut(a, "="); ok && isName(key) {
		if SecretName(key) {
			return key + "=" + Mask
		}
		return key + "=" + urlish(v)
	}
	if name, _, ok := strings.Cut(a, ":"); ok && isName(name) && SecretName(name) {
		return name + ": " + Mask
	}
	return urlish(a)
}

// urlish passes s through URL when it may be a URL with secrets: when it
// holds "://" or '@', or starts with "//".
func urlish(s string) string {
	if strings.Contains(s, "://") || strings.HasPrefix(s, "//") || strings.Contains(s, "@") {
		return URL(s)
	}
	return s
}

// isName reports whether s can be a variable, flag or header name: letters,
// digits, '_', '-' and '.', not empty.
func isName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.'
		if !ok {
			return false
		}
	}
	return true
}

// Command returns argv redacted by Argv and joined with spaces, for a
// one-line description of a stdio server.
func Command(argv []string) string {
	return strings.Join(Argv(argv), " ")
}
