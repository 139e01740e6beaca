package redact

import (
	"maps"
	"net/url"
	"slices"
	"strings"
)

// Secrets collects the values that are secret under mcpdrill's one masking
// rule, for Values to mask wherever they turn up (what a server echoes, an
// error, a study's results and pages). A value is a secret when:
//
//   - it is a header value, or the credential after an authentication
//     scheme in one ("Bearer X": X too);
//   - it is the value of a ${input:ID} (Input);
//   - it is the value of an environment entry, or of a placeholder that
//     read the environment, whose name looks secret (SecretName: "GH_TOKEN",
//     "API_KEY"…), or whose shape does (TokenShaped) (Env, Placeholder);
//   - it sits where a secret goes (Argv, URL): the value of a secret-looking
//     flag or KEY=VALUE argument, a URL's user name and password, the value
//     of a URL query parameter whose name looks secret.
//
// A value is never a secret when it is shorter than MinValueLen or is a
// filesystem path (Path): "/tmp", a home directory, "./data" name places,
// not credentials, and masking them would garble every path printed.
type Secrets struct {
	values []string
}

// Values are the secrets collected, in the order first met, each once.
func (s *Secrets) Values() []string { return slices.Clone(s.values) }

// Add records v as a secret, unless it is never one (short, or a path).
func (s *Secrets) Add(v string) {
	if len(v) < MinValueLen || Path(v) || slices.Contains(s.values, v) {
		return
	}
	s.values = append(s.values, v)
}

// Header records a header's value, and the credential after an
// authentication scheme in it ("Bearer X", "Basic X").
func (s *Secrets) Header(name, value string) {
	s.Add(value)
	if scheme, cred, ok := strings.Cut(strings.TrimSpace(value), " "); ok && isName(scheme) {
		s.Add(strings.TrimSpace(cred))
	}
}

// Input records the value of a ${input:ID}: always a secret.
func (s *Secrets) Input(value string) { s.Add(value) }

// Env records an environment entry KEY=VALUE given to a server: the value
// when the key looks secret or the value is token-shaped, else the secrets
// of a URL in it.
func (s *Secrets) Env(key, value string) {
	if SecretName(key) || TokenShaped(value) {
		s.Add(value)
		return
	}
	s.URL(value)
}

// Placeholder records what a placeholder that read the environment
// (${env:NAME}, ${NAME}) resolved to: a secret when NAME looks secret or
// the value is token-shaped. Where it landed may make it one too; the
// caller records that position (Header, Env, Argv, URL).
func (s *Secrets) Placeholder(name, value string) {
	if SecretName(name) || TokenShaped(value) {
		s.Add(value)
	}
}

// URL records the secrets of a URL: its user name and password, and the
// values of query parameters whose names look secret. A string that is
// not a URL with a scheme holds none.
func (s *Secrets) URL(raw string) {
	if !strings.Contains(raw, "://") {
		return
	}
	u, err := url.Parse(raw)
	if err != nil {
		// Unparsable (a template, say): what lies between "://" and the
		// last '@' is user info.
		if _, rest, ok := strings.Cut(raw, "://"); ok {
			if i := strings.LastIndexByte(rest, '@'); i >= 0 {
				user, pass, _ := strings.Cut(rest[:i], ":")
				s.Add(user)
				s.Add(pass)
			}
		}
		return
	}
	if u.User != nil {
		s.Add(u.User.Username())
		if p, ok := u.User.Password(); ok {
			s.Add(p)
		}
	}
	q := u.Query()
	for _, k := range slices.Sorted(maps.Keys(q)) {
		if SecretName(k) {
			for _, v := range q[k] {
				s.Add(v)
			}
		}
	}
}

// Argv records the secrets of a command line: the values Argv masks (after
// a secret-looking flag, of --flag=VALUE and KEY=VALUE with a secret-looking
// name, of "Name: VALUE") and the secrets of URLs among the arguments.
func (s *Secrets) Argv(argv []string) {
	next := false
	for i, a := range argv {
		switch {
		case i == 0:
			s.URL(a)
		case next && !strings.HasPrefix(a, "-"):
			s.Add(a)
			next = false
		default:
			next = s.arg(a)
		}
	}
}

// arg records the secrets of one argument that does not follow a secret
// flag, and reports whether it is a secret-looking flag whose value is the
// next argument.
func (s *Secrets) arg(a string) bool {
	if name, isFlag := strings.CutPrefix(a, "-"); isFlag {
		flag, v, hasValue := strings.Cut(strings.TrimPrefix(name, "-"), "=")
		switch {
		case !hasValue:
			return SecretName(flag)
		case SecretName(flag):
			s.Add(v)
			return false
		}
		a = v
	}
	if key, v, ok := strings.Cut(a, "="); ok && isName(key) {
		if SecretName(key) {
			s.Add(v)
		} else {
			s.URL(v)
		}
		return false
	}
	if name, v, ok := strings.Cut(a, ":"); ok && isName(name) && SecretName(name) {
		s.Header(name, strings.TrimSpace(v))
		return false
	}
	s.URL(a)
	return false
}

// Path reports whether v names a place in a file system: it starts with
// '/', "~/", "./" or "../", or a drive letter and ":\" or ":/". A path is
// never a secret.
func Path(v string) bool {
	switch {
	case strings.HasPrefix(v, "/"), strings.HasPrefix(v, "~/"), strings.HasPrefix(v, "./"), strings.HasPrefix(v, "../"):
		return true
	case len(v) >= 3 && (v[0]|0x20) >= 'a' && (v[0]|0x20) <= 'z' && v[1] == ':' && (v[2] == '\\' || v[2] == '/'):
		return true
	}
	return false
}

// TokenShaped reports whether v looks like a credential by its shape
// alone, whatever it is called: at least 20 bytes of token characters
// (letters, digits and - _ . + / = ~), letters and digits both, not
// starting with '-' (a flag) and not a path ("ghp_…", "sk-live-…", a JWT, a
// long hex or base64 key).
func TokenShaped(v string) bool {
	if len(v) < 20 || strings.HasPrefix(v, "-") || Path(v) {
		return false
	}
	letter, digit := false, false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
			letter = true
		case c >= '0' && c <= '9':
			digit = true
		case strings.IndexByte(tokenPunct, c) >= 0:
		default:
			return false
		}
	}
	return letter && digit
}
