package main

import (
	"bufio"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"

	"github.com/mcpdrill/mcpdrill/internal/clientconfig"
	"github.com/mcpdrill/mcpdrill/internal/redact"
	"github.com/mcpdrill/mcpdrill/internal/safetext"
)

// Workspace trust: a configuration the user did not write (any --config
// file that is not one of their own client configurations in the home or
// configuration directory; a repository's .vscode/mcp.json, .cursor/mcp.json
// or .mcp.json above all) starts no command and receives no value of the
// user's environment or inputs until the user says so: --trust-workspace,
// or a yes on a terminal after mcpdrill has shown what would run and where
// the values would go. `--config auto` reads the user's own files only, and
// a workspace's only with --workspace DIR.
//
// The abuse list (each has a case in TestWorkspaceTrust):
//   - a cloned repository's .vscode/mcp.json names a stdio command: read by
//     `--config auto` from the repository or a subdirectory of it, it would
//     run code the moment a scan starts;
//   - the same file names an HTTP server with "Authorization: Bearer
//     ${env:GITHUB_TOKEN}" (or the token in the URL, or ${input:…}): a scan
//     would send the user's token to the file's author;
//   - the same, named explicitly (--config PATH, --workspace DIR) but not
//     trusted: nothing runs and nothing is sent, on a terminal or not;
//   - a prompt answered with anything but yes, or no terminal to ask on;
//   - server names and command lines shown in the prompt carry terminal
//     escapes (they are shown through safetext).

// trustFlag is the flag that trusts a workspace file.
const trustFlag = "trust-workspace"

// untrustedUse is what a server of a file the user did not write would do
// once trusted: start a command, or send values of the user's environment
// or inputs to a URL.
type untrustedUse struct {
	file, server string
	// start is the command line as written (redacted), for a stdio server.
	start []string
	dir   string
	// send are the placeholders whose values would go to url.
	send []string
	url  string
}

// String says what the server would do, made safe to print.
func (u untrustedUse) String() string {
	who := fmt.Sprintf("server %s of %s", safetext.Quote(u.server), safetext.Text(u.file))
	if u.start != nil {
		s := who + " would start: " + safetext.Text(redact.Command(u.start))
		if u.dir != "" {
			s += " (in " + safetext.Text(u.dir) + ")"
		}
		if len(u.send) > 0 {
			s += ", given " + safetext.Text(strings.Join(u.send, ", "))
		}
		return s
	}
	return who + " would send the values of " + safetext.Text(strings.Join(u.send, ", ")) + " to " + safetext.Text(u.url)
}

// untrustedUseOf is what server s of an untrusted file would do, resolved
// to t; ok is false when it would do nothing that needs trust (an HTTP
// server whose file holds everything it sends).
func untrustedUseOf(file string, s clientconfig.Server, t clientconfig.Target) (untrustedUse, bool) {
	u := untrustedUse{file: file, server: s.Name, send: t.Used, dir: t.Dir}
	if s.Command != "" {
		u.start = s.Argv()
		return u, true
	}
	if len(t.Used) == 0 {
		return u, false
	}
	u.url = destination(t.URL)
	return u, true
}

// destination is where a request to raw goes: its scheme and host.
func destination(raw string) string {
	p, err := url.Parse(raw)
	if err != nil || p.Host == "" {
		return redact.URL(raw)
	}
	return p.Scheme + "://" + p.Host
}

// requireTrust asks for the user's word before anything of uses happens:
// --trust-workspace gives it; on a terminal the user is shown each use and
// asked; otherwise (or on anything but yes) it is a usage error that lists
// them.
func requireTrust(c *cmdLine, uses []untrustedUse) error {
	if len(uses) == 0 || c.Bool(trustFlag) {
		return nil
	}
	var list strings.Builder
	for _, u := range uses {
		list.WriteString("\n  " + u.String())
	}
	const head = "a configuration you did not write (not one of your own client configurations) would run code or send your secrets:"
	if terminalIn(c.stdin) {
		fmt.Fprintf(c.stderr, "mcpdrill: %s%s\nTrust it and go on? [y/N] ", head, list.String())
		answer, _ := bufio.NewReader(io.LimitReader(c.stdin, 256)).ReadString('\n')
		switch strings.ToLower(strings.TrimSpace(answer)) {
		case "y", "yes":
			return nil
		}
		return usageErr("not trusted: nothing was started or sent")
	}
	return usageErr("%s%s\nnothing was started or sent: review the file, then pass --%s to trust it", head, list.String(), trustFlag)
}

// terminalIn reports whether r is a terminal a person answers on: one
// with a window (not merely a character device such as /dev/null), or a
// reader that says it is one (a test's).
func terminalIn(r io.Reader) bool {
	if t, ok := r.(interface{ Terminal() bool }); ok {
		return t.Terminal()
	}
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	_, ok = terminalWidth(f)
	return ok
}
