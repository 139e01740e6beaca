package clientconfig

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcpdrill/mcpdrill/internal/redact"
)

// Syntax is the placeholder syntax of a client's configuration files.
type Syntax int

// Placeholder syntaxes.
const (
	// SyntaxDefault is what a Resolver's doc lists: VS Code's and Cursor's
	// ${…} variables and Claude Code's ${NAME} and ${NAME:-DEFAULT}, which
	// Windsurf (${env:NAME}) and Kiro (${NAME}) files use too.
	SyntaxDefault Syntax = iota
	// SyntaxGemini is Gemini CLI's: ${NAME} and a bare $NAME, from the
	// environment (geminicli.com/docs/get-started/configuration,
	// "Environment variables in settings files"); nothing else.
	SyntaxGemini
	// SyntaxOpencode is opencode's: {env:NAME} (opencode.ai/docs/config,
	// "Variables"). Its {file:PATH}, which would read a file the
	// configuration names, is never resolved.
	SyntaxOpencode
	// SyntaxLiteral substitutes nothing (Codex, Zed).
	SyntaxLiteral
)

// Resolver resolves the placeholders MCP clients define, wherever a
// server entry may hold them (command, args, env, cwd, url, headers):
//
//	${env:NAME}            the environment variable NAME (VS Code, Cursor)
//	${NAME}                Vars[NAME], else the environment variable (Claude Code)
//	${NAME:-DEFAULT}       the same, or DEFAULT when unset or empty (Claude Code)
//	${workspaceFolder}     Workspace (VS Code, Cursor)
//	${workspaceFolderBasename}  its last element
//	${userHome}            UserHome (VS Code, Cursor)
//	${pathSeparator}, ${/} the OS path separator (VS Code, Cursor)
//	${input:ID}            Inputs[ID] (VS Code's inputs)
//
// A placeholder that cannot be resolved is an error (UnresolvedError),
// never left in the text: a ${input:api-key} is not sent as written. Text
// that is not a placeholder (a bare $, "${1}", "${not one}") is kept.
type Resolver struct {
	// LookupEnv reads the environment (os.LookupEnv when nil).
	LookupEnv func(string) (string, bool)
	// Vars are the caller's own ${NAME}s, looked up before the
	// environment (a study's ${SPEC_DIR}); they are not secret.
	Vars map[string]string
	// Workspace is ${workspaceFolder} (see the Workspace function); "" leaves
	// it unresolved.
	Workspace string
	// UserHome is ${userHome}; "" leaves it unresolved.
	UserHome string
	// Inputs are the values of ${input:ID}.
	Inputs map[string]string
	// Declared are the inputs the configuration declares, to describe a
	// missing one.
	Declared []Input
	// Syntax is the placeholder syntax (Config.Syntax); SyntaxDefault is
	// the one listed above.
	Syntax Syntax
}

// ErrUnresolved is matched (errors.Is) by an *UnresolvedError.
var ErrUnresolved = errors.New("unresolved placeholder")

// UnresolvedError lists the placeholders of an entry that had no value.
type UnresolvedError struct {
	// Env are environment variables that are not set.
	Env []string
	// Inputs are the ${input:ID}s that were given no value.
	Inputs []Input
	// Other are placeholders that cannot be resolved here, as written
	// (${command:x}, or ${workspaceFolder} with no workspace).
	Other []string
}

// Error implements error; it names what is missing, never a value.
func (e *UnresolvedError) Error() string {
	var parts []string
	for _, in := range e.Inputs {
		s := fmt.Sprintf("input %q", in.ID)
		if in.Description != "" {
			s += fmt.Sprintf(" (%s)", in.Description)
		}
		parts = append(parts, s+" has no value")
	}
	if len(e.Env) > 0 {
		parts = append(parts, "environment variable(s) not set: "+strings.Join(e.Env, ", "))
	}
	if len(e.Other) > 0 {
		parts = append(parts, "placeholder(s) that cannot be resolved: "+strings.Join(e.Other, ", "))
	}
	return strings.Join(parts, "; ")
}

// Is makes an *UnresolvedError match ErrUnresolved.
func (e *UnresolvedError) Is(target error) bool { return target == ErrUnresolved }

// Expander expands strings with a Resolver and keeps what an entry's
// expansion left unresolved, which values it took from the user's
// environment and inputs, and which of them are secrets.
type Expander struct {
	r       Resolver
	missing UnresolvedError
	secrets redact.Secrets
	// used are the placeholders that took a value from the environment or
	// from an input, as written ("${env:GITHUB_TOKEN}", "${input:key}").
	used []string
}

// NewExpander returns an expander over r.
func NewExpander(r Resolver) *Expander {
	if r.LookupEnv == nil {
		r.LookupEnv = os.LookupEnv
	}
	return &Expander{r: r}
}

// Err is nil when every placeholder expanded so far had a value, and an
// *UnresolvedError otherwise.
func (x *Expander) Err() error {
	m := x.missing
	if len(m.Env) == 0 && len(m.Inputs) == 0 && len(m.Other) == 0 {
		return nil
	}
	return &m
}

// Secrets are the values placeholders took that are secret under the
// masking rule (redact.Secrets): every input's, and those read from the
// environment under a secret-looking name or with a token's shape, in the
// order first met. No output may show them.
func (x *Expander) Secrets() []string { return x.secrets.Values() }

// Used lists the placeholders, as written, that took a value from the
// user's environment (${userHome} included) or from an input, in the order
// first met: what expanding a file the user did not write would hand on.
func (x *Expander) Used() []string { return slices.Clone(x.used) }

// Expand returns s with its placeholders replaced. An unresolved
// placeholder becomes "" and is recorded for Err.
func (x *Expander) Expand(s string) string {
	switch x.r.Syntax {
	case SyntaxLiteral:
		return s
	case SyntaxGemini:
		return x.expandGemini(s)
	case SyntaxOpencode:
		return x.expandOpencode(s)
	}
	if !strings.Contains(s, "${") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := strings.IndexByte(s[i+2:], '}')
		if j < 0 {
			b.WriteString(s)
			return b.String()
		}
		body := s[i+2 : i+2+j]
		v, ok := x.placeholder(body)
		if !ok {
			// Not a placeholder: keep "${" and look on after it.
			b.WriteString(s[:i+2])
			s = s[i+2:]
			continue
		}
		b.WriteString(s[:i])
		b.WriteString(v)
		s = s[i+3+j:]
	}
}

// expandGemini expands ${NAME} and $NAME from the environment; any other
// text, other ${…} included, is kept.
func (x *Expander) expandGemini(s string) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '$' {
			b.WriteByte(s[i])
			i++
			continue
		}
		name, end := "", i+1
		if strings.HasPrefix(s[i+1:], "{") {
			if j := strings.IndexByte(s[i+2:], '}'); j >= 0 && isIdent(s[i+2:i+2+j]) {
				name, end = s[i+2:i+2+j], i+3+j
			}
		} else {
			for end < len(s) && (s[end] == '_' || s[end] >= 'A' && s[end] <= 'Z' || s[end] >= 'a' && s[end] <= 'z' || end > i+1 && s[end] >= '0' && s[end] <= '9') {
				end++
			}
			name = s[i+1 : end]
		}
		if name == "" {
			b.WriteByte('$')
			i++
			continue
		}
		v, found := x.env(name, s[i:end])
		if !found {
			x.missing.Env = appendNew(x.missing.Env, name)
		}
		b.WriteString(v)
		i = end
	}
	return b.String()
}

// expandOpencode expands {env:NAME}; a {file:PATH} is recorded as one that
// cannot be resolved, and any other text is kept.
func (x *Expander) expandOpencode(s string) string {
	if !strings.Contains(s, "{") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '{')
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			b.WriteString(s)
			return b.String()
		}
		body := s[i+1 : i+j]
		kind, rest, _ := strings.Cut(body, ":")
		switch {
		case kind == "env" && isIdent(rest):
			v, found := x.env(rest, s[i:i+j+1])
			if !found {
				x.missing.Env = appendNew(x.missing.Env, rest)
			}
			b.WriteString(s[:i])
			b.WriteString(v)
		case kind == "file" && rest != "":
			x.missing.Other = appendNew(x.missing.Other, s[i:i+j+1])
			b.WriteString(s[:i])
		default:
			b.WriteString(s[:i+1])
			s = s[i+1:]
			continue
		}
		s = s[i+j+1:]
	}
}

// All expands each string of ss.
func (x *Expander) All(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = x.Expand(s)
	}
	return out
}

// placeholder resolves the text between "${" and "}"; ok is false when it
// is not a placeholder at all.
func (x *Expander) placeholder(body string) (string, bool) {
	switch body {
	case "workspaceFolder", "workspaceFolderBasename":
		if x.r.Workspace == "" {
			x.other(body)
			return "", true
		}
		if body == "workspaceFolderBasename" {
			return filepath.Base(x.r.Workspace), true
		}
		return x.r.Workspace, true
	case "userHome":
		if x.r.UserHome == "" {
			x.other(body)
		} else {
			x.use("${userHome}") // it names the user
		}
		return x.r.UserHome, true
	case "pathSeparator", "/":
		return string(filepath.Separator), true
	}
	if isIdent(body) {
		v, found := x.lookup(body, "${"+body+"}")
		if !found {
			x.missing.Env = appendNew(x.missing.Env, body)
		}
		return v, true
	}
	prefix, rest, ok := strings.Cut(body, ":")
	if !ok || !isIdent(prefix) {
		return "", false
	}
	// ${env:…} and ${input:…} first: ${input:-x} is the input "-x".
	if name, def, ok := strings.Cut(body, ":-"); ok && isIdent(name) && prefix != "env" && prefix != "input" {
		if v, found := x.lookup(name, "${"+body+"}"); found && v != "" {
			return v, true
		}
		return def, true
	}
	switch {
	case prefix == "env" && isIdent(rest):
		v, found := x.env(rest, "${"+body+"}")
		if !found {
			x.missing.Env = appendNew(x.missing.Env, rest)
		}
		return v, true
	case prefix == "input" && rest != "":
		if v, found := x.r.Inputs[rest]; found {
			x.secrets.Input(v)
			x.use("${" + body + "}")
			return v, true
		}
		if !slices.ContainsFunc(x.missing.Inputs, func(in Input) bool { return in.ID == rest }) {
			in := Input{ID: rest}
			if i := slices.IndexFunc(x.r.Declared, func(d Input) bool { return d.ID == rest }); i >= 0 {
				in = x.r.Declared[i]
			}
			x.missing.Inputs = append(x.missing.Inputs, in)
		}
		return "", true
	}
	x.other(body)
	return "", true
}

// lookup resolves a plain ${NAME} (written as placeholder): the caller's
// variables, then the environment.
func (x *Expander) lookup(name, placeholder string) (string, bool) {
	if v, ok := x.r.Vars[name]; ok {
		return v, true
	}
	return x.env(name, placeholder)
}

// env reads the environment variable name for placeholder.
func (x *Expander) env(name, placeholder string) (string, bool) {
	v, ok := x.r.LookupEnv(name)
	if ok {
		x.secrets.Placeholder(name, v)
		x.use(placeholder)
	}
	return v, ok
}

func (x *Expander) use(placeholder string) { x.used = appendNew(x.used, placeholder) }

func (x *Expander) other(body string) {
	x.missing.Other = appendNew(x.missing.Other, "${"+body+"}")
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// isIdent reports whether s is a shell-style variable name.
func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_', r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z':
		case i > 0 && r >= '0' && r <= '9':
		default:
			return false
		}
	}
	return true
}
