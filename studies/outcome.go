package studies

import (
	"regexp"
	"strings"
)

// Row outcomes: what became of a server of the population, a refinement of
// the status (scanned, failed, skipped) and the failure kind that reads the
// server's own words.
const (
	// OutcomeScanned: the scan established the tool inventory.
	OutcomeScanned = "scanned"
	// OutcomeNeedsCredentials: the server exited or failed saying it needs
	// a key, a token or another credential (on stderr or in its error).
	OutcomeNeedsCredentials = "needs-credentials"
	// OutcomeFailedStart: the server did not open an MCP session (it
	// exited, hung, or refused every revision), for another reason; the
	// row's reason holds a redacted excerpt of what it said.
	OutcomeFailedStart = "failed-start"
	// OutcomeFailedInstall: study install could not install the package.
	OutcomeFailedInstall = "failed-install"
	// OutcomeNotAServer: the command ran, but as a command-line tool (it
	// printed usage, or exited with status 0 before any handshake), not as
	// an MCP server over stdio.
	OutcomeNotAServer = "not-a-server"
	// OutcomeExcluded: servers.json excludes or disables the entry.
	OutcomeExcluded = "excluded"
)

// FailInstall: study install failed to install the entry's package (a
// failed row with this kind has outcome failed-install).
const FailInstall = "install"

// credentialWord names a credential; credentialNeed says one is lacking.
// A line of the server's must match both (or name a variable the entry
// lists in credentials, beside credentialNeed).
var (
	credentialWord = regexp.MustCompile(`(?i)(api[ _-]?key|[a-z]_key\b|access[ _-]?key|token|secret|credential|password|client[ _-]?id|\bauth\b|oauth|authenticat|unauthori[sz]ed|login)`)
	credentialNeed = regexp.MustCompile(`(?i)(required|requires|missing|not (set|found|provided|configured|defined)|must (be )?(set|provide|specify)|please (set|provide)|is needed|no .*(found|provided|configured)|invalid|unauthori[sz]ed|environment variable|\benv\b|to configure|401|403)`)
	// A parser's "Unexpected token" is no credential.
	unexpectedToken = regexp.MustCompile(`(?i)(unexpected|invalid or unexpected) token`)
	usageLine       = regexp.MustCompile(`(?i)^\s*(usage:|commands:|options:|unknown (command|option|argument)|error: (missing required argument|unknown option|too many arguments)|run .* --help|see .*--help|-h, --help\b|-v, --version\b|help \[command\]|required command was not provided|not enough non-option arguments)`)
)

// classify sets a row's outcome from its status, its failure and what the
// server said (stderr, the reason's excerpt).
func classify(e Entry, row Row, stderr []string) string {
	switch row.Status {
	case StatusScanned:
		return OutcomeScanned
	case StatusSkipped:
		return OutcomeExcluded
	}
	switch row.Failure {
	case FailInstall:
		return OutcomeFailedInstall
	case FailConfig, FailInternal:
		return OutcomeFailedStart
	}
	lines := append([]string{row.Reason}, stderr...)
	for _, l := range lines {
		if unexpectedToken.MatchString(l) {
			continue
		}
		if credentialNeed.MatchString(l) && (credentialWord.MatchString(l) || namesAny(l, e.Credentials)) {
			return OutcomeNeedsCredentials
		}
	}
	if s := row.startup; s != nil && s.Exited && s.Signal == "" && s.ExitStatus != nil && *s.ExitStatus == 0 {
		return OutcomeNotAServer
	}
	for _, l := range stderr {
		if usageLine.MatchString(l) {
			return OutcomeNotAServer
		}
	}
	return OutcomeFailedStart
}

func namesAny(line string, names []string) bool {
	for _, n := range names {
		if n != "" && strings.Contains(line, n) {
			return true
		}
	}
	return false
}
