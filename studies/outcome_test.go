package studies

import (
	"testing"

	"github.com/mcpdrill/mcpdrill/scan"
)

// TestClassify: a row's outcome from its status, failure and what the
// server said.
func TestClassify(t *testing.T) {
	zero, one := 0, 1
	exited := func(code *int, said string) *scan.StartupFailure {
		return &scan.StartupFailure{Exited: true, ExitStatus: code, Said: said}
	}
	unreachable := func(reason string, s *scan.StartupFailure) Row {
		return Row{Status: StatusFailed, Failure: FailUnreachable, Reason: reason, startup: s}
	}
	tests := []struct {
		name   string
		e      Entry
		row    Row
		stderr []string
		want   string
	}{
		{"scanned", Entry{}, Row{Status: StatusScanned}, nil, OutcomeScanned},
		{"excluded", Entry{}, Row{Status: StatusSkipped}, nil, OutcomeExcluded},
		{"install", Entry{}, Row{Status: StatusFailed, Failure: FailInstall}, nil, OutcomeFailedInstall},
		{"key on stderr", Entry{}, unreachable(`the server exited with status 1 during the handshake; its stderr ends "Error: BRAVE_API_KEY environment variable is required"`, exited(&one, "")), nil, OutcomeNeedsCredentials},
		{"a listed credential", Entry{Credentials: []string{"ACME_SECRET"}}, unreachable("exited", exited(&one, "")), []string{"ACME_SECRET is not set"}, OutcomeNeedsCredentials},
		{"token missing", Entry{}, unreachable("exited", exited(&one, "")), []string{"Error: Missing Notion token"}, OutcomeNeedsCredentials},
		{"parser's token is no credential", Entry{}, unreachable("exited", exited(&one, "")), []string{"SyntaxError: Invalid or unexpected token"}, OutcomeFailedStart},
		{"usage", Entry{}, unreachable("exited", exited(&one, "")), []string{"Usage: tool [options] <dir>"}, OutcomeNotAServer},
		{"a subcommand wanted", Entry{}, unreachable("exited", exited(&one, "")), []string{"  -v, --version  Print the version", "  help [command]  display help for command"}, OutcomeNotAServer},
		{"oauth file", Entry{}, unreachable("exited", exited(&one, "")), []string{"Error: OAuth keys file not found. Please place gcp-oauth.keys.json"}, OutcomeNeedsCredentials},
		{"exit 0 before a handshake", Entry{}, unreachable("exited", exited(&zero, "")), nil, OutcomeNotAServer},
		{"crash", Entry{}, unreachable("exited", exited(&one, "")), []string{"Error: Cannot find module 'x'"}, OutcomeFailedStart},
		{"hung", Entry{}, unreachable("did not complete the handshake", &scan.StartupFailure{}), nil, OutcomeFailedStart},
		{"config", Entry{}, Row{Status: StatusFailed, Failure: FailConfig, Reason: "API_KEY is not set"}, nil, OutcomeFailedStart},
	}
	for _, tt := range tests {
		if got := classify(tt.e, tt.row, tt.stderr); got != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
		}
	}
}
