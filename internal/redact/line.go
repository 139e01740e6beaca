package redact

import "strings"

// Line returns a line of free text (what a server wrote on its stderr, say)
// with what looks secret in it masked, word by word as Argv treats the
// arguments of a command line: the value after a secret-looking flag,
// KEY=VALUE with a secret-looking KEY, and URLs lose their secrets. A word
// "Name:" whose name looks secret ("Authorization:", "api_key:") masks the
// rest of the line, which is the value a header or a log field carries.
// Runs of white space become one space.
func Line(s string) string {
	words := strings.Fields(s)
	for i, w := range words {
		if name, ok := strings.CutSuffix(w, ":"); ok && isName(name) && SecretName(name) {
			// Argv gives this word as "Name: REDACTED".
			words = words[:i+1]
			break
		}
	}
	// The leading "" stands for the command name, which Argv keeps.
	out := Argv(append([]string{""}, words...))[1:]
	return strings.Join(out, " ")
}
