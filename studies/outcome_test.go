package studies

import (
	"strings"
	"testing"

	"github.com/mcpdrill/mcpdrill/scan"
)

// TestClassify: a row's outcome from its status, failure, what the server
// said and what its install left out, rule by rule. The stderr lines are
// real: each is what a package of the ecosystem study printed (paths as
// the study's cleaner writes them).
func TestClassify(t *testing.T) {
	zero, one := 0, 1
	exited := func(code *int) *scan.StartupFailure {
		return &scan.StartupFailure{Exited: true, ExitStatus: code}
	}
	failed := func(code *int) Row {
		return Row{Status: StatusFailed, Failure: FailUnreachable, Reason: "no MCP session could be opened", startup: exited(code)}
	}
	npm, pypi := Entry{Package: "x@1.0.0"}, Entry{Package: "x@1.0", Registry: RegistryPyPI}
	keytar := &InstallRecord{ScriptsSkipped: []string{"keytar"}}
	tests := []struct {
		name   string
		e      Entry
		row    Row
		stderr []string
		rec    *InstallRecord
		want   string
	}{
		{"scanned", npm, Row{Status: StatusScanned}, nil, nil, OutcomeScanned},
		{"excluded", npm, Row{Status: StatusSkipped, Reason: "excluded: library"}, nil, nil, OutcomeExcluded},
		{"install failed", npm, Row{Status: StatusFailed, Failure: FailInstall, Reason: "npm ci: exit status 1: npm error code E404"}, nil, nil, OutcomeFailedInstall},
		{"PyPI out of reach", pypi, Row{Status: StatusFailed, Failure: FailInstall, Reason: "python3 -m pip: exit status 1: ERROR: No matching distribution (the package index or a host it names could not be reached from this machine: the row needs a run where it can be)"}, nil, nil, OutcomePyPINotRun},
		{"PyPI package absent", pypi, Row{Status: StatusFailed, Failure: FailInstall, Reason: "python3 -m pip: exit status 1: ERROR: No matching distribution found for x==1.0"}, nil, nil, OutcomeFailedInstall},
		{"an input not given", npm, Row{Status: StatusFailed, Failure: FailConfig, Reason: "${input:token} has no value"}, nil, nil, OutcomeNeedsArgument},

		// the study's limits, as this run's failed-start rows showed them
		{"network out of reach (@21st-dev/magic)", npm, failed(&one), []string{"initialize: jsonrpc error -32000: 21st MCP endpoint unreachable (https://21st.dev/api/mcp): fetch failed"}, nil, OutcomeNeedsService},
		{"fetch failed at start (@chakra-ui/react-mcp)", npm, failed(&one), []string{"Fatal error in main(): Error: Failed to initialize component example tool: fetch failed"}, nil, OutcomeNeedsService},
		{"git clone out of reach", npm, failed(&one), []string{"fatal: unable to access 'https://github.com/x/y.git/': Could not resolve host: github.com"}, nil, OutcomeNeedsService},
		{"a Node built-in export (@kubb/cli)", npm, failed(&one), []string{"SyntaxError: The requested module 'node:fs/promises' does not provide an export named 'glob'"}, nil, OutcomeNeedsRuntime},
		{"Node 20 without WebSocket (flow-nexus)", npm, failed(&one), []string{"Error: Node.js 20 detected without native WebSocket support."}, nil, OutcomeNeedsRuntime},
		{"required arguments missing (monday-api-mcp)", npm, failed(&one), []string{"Error: The following required arguments are missing:"}, nil, OutcomeNeedsArgument},
		{"configuration incomplete (backlog-mcp-server)", npm, failed(&one), []string{`{"level":50,"err":{"message":"Incomplete multi-organization configuration. COMPANY_A missing"}}`}, nil, OutcomeNeedsArgument},
		{"a package module of its own is the package's (mcp)", npm, failed(&one), []string{"SyntaxError: The requested module '@mintlify/mcp' does not provide an export named 'mcp'"}, nil, OutcomeFailedStart},

		// install-incomplete
		{"keytar not built (@azure-devops/mcp 2.10.0)", npm, failed(&one), []string{"Error: Cannot find module '../build/Release/keytar.node'", "Require stack:", "Node.js v20.20.2"}, keytar, OutcomeInstallIncomplete},
		{"bindings", npm, failed(&one), []string{"Error: Could not locate the bindings file. Tried:"}, nil, OutcomeInstallIncomplete},
		{"browser not downloaded", npm, failed(&one), []string{"browserType.launch: Executable doesn't exist at /root/.cache/ms-playwright/chromium-1200/chrome-linux/chrome"}, nil, OutcomeInstallIncomplete},
		{"a package whose script was skipped", npm, failed(&one), []string{"Error: Cannot find module 'keytar'"}, keytar, OutcomeInstallIncomplete},
		{"a missing JavaScript module is the package's", npm, failed(&one), []string{"Error: Cannot find module 'ajv/dist/core'"}, keytar, OutcomeFailedStart},

		// needs-newer-runtime
		{"Node 22 (@apify/actors-mcp-server)", npm, failed(&one), []string{"Error: Apify MCP server requires Node.js 22 or later (you have v20.20.2).", "Please update Node.js: https://nodejs.org"}, nil, OutcomeNeedsRuntime},
		{"node:sqlite (@mizchi/lsmcp)", npm, failed(&one), []string{"code: 'ERR_UNKNOWN_BUILTIN_MODULE'", "}", "Node.js v20.20.2"}, nil, OutcomeNeedsRuntime},

		// needs-credentials
		{"key on stderr", npm, failed(&one), []string{"Error: BRAVE_API_KEY environment variable is required"}, nil, OutcomeNeedsCredentials},
		{"a listed credential", Entry{Credentials: []string{"ACME_SECRET"}}, failed(&one), []string{"ACME_SECRET is not set"}, nil, OutcomeNeedsCredentials},
		{"token missing", npm, failed(&one), []string{"Error: Missing Notion token"}, nil, OutcomeNeedsCredentials},
		{"OAuth file", npm, failed(&one), []string{"Error: OAuth keys file not found. Please place gcp-oauth.keys.json in current directory or REDACTED/.gmail-mcp"}, nil, OutcomeNeedsCredentials},
		{"bitbucket", npm, failed(&one), []string{"Error: BITBUCKET_USERNAME and either BITBUCKET_APP_PASSWORD (Cloud) or BITBUCKET_TOKEN (Server/DC) are required."}, nil, OutcomeNeedsCredentials},
		{"parser's token is no credential", npm, failed(&one), []string{"SyntaxError: Invalid or unexpected token"}, nil, OutcomeFailedStart},

		// needs-argument
		{"yargs (@azure-devops/mcp 2.9.0)", npm, failed(&one), []string{"--help  Show help  [boolean]", "Not enough non-option arguments: got 0, need at least 1"}, nil, OutcomeNeedsArgument},
		{"commander (openapi-mcp-generator)", npm, failed(&one), []string{"error: required option '-i, --input <file_or_url>' not specified"}, nil, OutcomeNeedsArgument},
		{"colored, exit 0 (@stripe/mcp 0.2.5)", npm, failed(&zero), []string{"\x1b[31m\x1b[39m", "\x1b[31m🚨  Error initializing Stripe MCP server:\x1b[39m", "\x1b[31m\x1b[39m", "\x1b[33m   The --tools arguments must be provided.\x1b[39m", "\x1b[33m\x1b[39m"}, nil, OutcomeNeedsArgument},
		{"usage", npm, failed(&one), []string{"Usage: mcp-server-filesystem --allowed-directories <allowed-directories>"}, nil, OutcomeNeedsArgument},
		{"a tagged usage line (mcp-remote)", npm, failed(&one), []string{"[pid] Usage: mcp-remote <https://server-url> [callback-port] [--debug]"}, nil, OutcomeNeedsArgument},
		{"a subcommand", npm, failed(&one), []string{"Required command was not provided."}, nil, OutcomeNeedsArgument},
		{"a subcommand, help listing", npm, failed(&zero), []string{"  -v, --version  Print the version", "  help [command]  display help for command"}, nil, OutcomeNeedsArgument},
		{"one of three modes (supergateway)", npm, failed(&one), []string{"[supergateway] Error: You must specify one of --stdio, --sse, or --streamableHttp"}, nil, OutcomeNeedsArgument},
		{"a config file (@pandacss/mcp)", npm, failed(&one), []string{"Cannot find config file `panda.config.{ts,js,mjs,mts}`. Did you forget to run `panda init`?"}, nil, OutcomeNeedsArgument},
		{"a setting variable (notion-mcp-server)", npm, failed(&one), []string{"Error: NOTION_PAGE_ID environment variable is required"}, nil, OutcomeNeedsArgument},
		{"init or run (@cloudflare/mcp-server-cloudflare)", npm, failed(&zero), []string{"[DEBUG <time>] Uncaught exception: Error: Unknown command: undefined. Expected 'init' or 'run'."}, nil, OutcomeNeedsArgument},

		// needs-service
		{"redis", npm, failed(&one), []string{"[Redis Error] Connection: redis://localhost:6379", "[Redis Error] Stack: Error: connect ECONNREFUSED 127.0.0.1:6379", "at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1611:16)"}, nil, OutcomeNeedsService},

		// not-a-server, failed-start
		{"exit 0, nothing asked", npm, failed(&zero), nil, nil, OutcomeNotAServer},
		{"exit 0, a demo (go-sdk completion)", npm, failed(&zero), []string{"<time> MCP Server instance created with a CompletionHandler assigned (but not running).", "<time> This example demonstrates configuration, not live interaction."}, nil, OutcomeNotAServer},
		{"crash", npm, failed(&one), []string{"TypeError: Cannot read properties of undefined (reading 'bind')"}, nil, OutcomeFailedStart},
		{"hung", npm, Row{Status: StatusFailed, Failure: FailUnreachable, Reason: "did not complete the handshake", startup: &scan.StartupFailure{}}, nil, nil, OutcomeFailedStart},
	}
	for _, tt := range tests {
		got, why := classify(tt.e, tt.row, tt.stderr, tt.rec)
		if got != tt.want {
			t.Errorf("%s: %s (%s), want %s", tt.name, got, why, tt.want)
		}
		if got != OutcomeScanned && why == "" {
			t.Errorf("%s: no reason given for %s", tt.name, got)
		}
		if strings.ContainsRune(why, '\x1b') {
			t.Errorf("%s: the reason carries a terminal escape: %q", tt.name, why)
		}
	}
}
