package studies

import (
	"fmt"
	"regexp"
	"strings"
)

// Row outcomes: what became of a server of the population, a refinement of
// the status (scanned, failed, skipped) read from what was observed. The
// taxonomy never blames a package for the study's own limits: what the
// study did not give a server (an argument, a credential, a service, a
// newer runtime, an install script, PyPI) has an outcome of its own, and
// failed-start is kept for a server that broke by itself. METHODOLOGY
// ("Row outcomes") states the rules; classify applies them in order.
const (
	// OutcomeScanned: the scan established the tool inventory.
	OutcomeScanned = "scanned"
	// OutcomeExcluded: servers.json excludes or disables the entry.
	OutcomeExcluded = "excluded"
	// OutcomeFailedInstall: study install could not install the package.
	OutcomeFailedInstall = "failed-install"
	// OutcomePyPINotRun: a PyPI package the study could not install
	// because the package index was out of its reach.
	OutcomePyPINotRun = "pypi-not-run"
	// OutcomeInstallIncomplete: the server failed on something its install
	// leaves out when install scripts are off: a native module not built,
	// a browser or binary not downloaded.
	OutcomeInstallIncomplete = "install-incomplete"
	// OutcomeNeedsRuntime: the server needs a newer runtime (Node.js) than
	// the study's.
	OutcomeNeedsRuntime = "needs-newer-runtime"
	// OutcomeNeedsCredentials: the server said it needs a key, a token or
	// another credential.
	OutcomeNeedsCredentials = "needs-credentials"
	// OutcomeNeedsArgument: the server asked for an argument, an option, a
	// subcommand or a setting (a configuration file, a variable that is no
	// credential) that the study's entry does not give.
	OutcomeNeedsArgument = "needs-argument"
	// OutcomeNeedsService: the server could not reach a service it depends
	// on (a database, a daemon, a host).
	OutcomeNeedsService = "needs-service"
	// OutcomeNotAServer: the command ran to completion (exit status 0)
	// before any handshake without asking for anything: a command-line
	// tool, not a stdio MCP server as run.
	OutcomeNotAServer = "not-a-server"
	// OutcomeFailedStart: the server did not open an MCP session for a
	// reason of its own (it crashed, hung, or refused every revision); the
	// row's reason holds a redacted excerpt of what it said.
	OutcomeFailedStart = "failed-start"
)

// Outcomes lists every outcome, in the order of the taxonomy.
var Outcomes = []string{OutcomeScanned, OutcomeExcluded, OutcomeFailedInstall, OutcomePyPINotRun, OutcomeInstallIncomplete,
	OutcomeNeedsRuntime, OutcomeNeedsCredentials, OutcomeNeedsArgument, OutcomeNeedsService, OutcomeNotAServer, OutcomeFailedStart}

// FailInstall: study install failed to install the entry's package (a
// failed row with this kind has outcome failed-install or pypi-not-run).
const FailInstall = "install"

// The evidence patterns, one set per rule. Each is matched against a line
// of what the server said (stderr, and the reason's excerpt) with
// terminal escapes removed.
var (
	// install-incomplete: a native addon that was never built, or a
	// download an install script makes.
	nativeMissing = regexp.MustCompile(`(?i)(cannot find module '[^']*\.node'|cannot find module '[^']*/build/(release|debug)/|could not locate the bindings file|no native build was found|was compiled against a different node\.js version|node_module_version|executable doesn't exist at|(npx|pnpm|yarn) playwright install|could not find (chrome|chromium|expected browser)|browser was not found|puppeteer browsers install)`)
	// needs-newer-runtime: a Node.js too old for the package.
	runtimeTooOld = regexp.MustCompile(`(?i)(the requested module 'node:[^']+' does not provide an export named|node(\.js)? v?\d+ detected without|requires node(\.js)? (v?\d+|version)|node(\.js)? (v?\d+(\.\d+)*|version) (or (later|higher|newer)|\+ is required|is required)|err_unknown_builtin_module|unsupported engine|please (update|upgrade) node)`)
	// needs-credentials: a credential word and a lack, on one line.
	credentialWord = regexp.MustCompile(`(?i)(api[ _-]?key|[a-z]_key\b|access[ _-]?key|token|secret|credential|password|client[ _-]?id|\bauth\b|oauth|authenticat|unauthori[sz]ed|login)`)
	credentialNeed = regexp.MustCompile(`(?i)(required|requires|missing|not (set|found|provided|configured|defined)|must (be )?(set|provide|specify)|please (set|provide)|is needed|no .*(found|provided|configured)|invalid|unauthori[sz]ed|environment variable|\benv\b|to configure|401|403)`)
	// A parser's "Unexpected token" is no credential.
	unexpectedToken = regexp.MustCompile(`(?i)(unexpected|invalid or unexpected) token`)
	// needs-argument: usage text, a parser's complaint about a missing
	// argument, option or subcommand, or a setting asked for.
	usageLine     = regexp.MustCompile(`(?i)^\s*(\[[^\]]*\]\s*)?(usage:|commands:|options:|examples:|unknown (command|option|argument)|(error: )?(missing required argument|required option|unknown option|too many arguments)|run .* --help|see .*--help|-h, --help\b|-v, --version\b|help \[command\]|required command was not provided|not enough non-option arguments|you need to specify a command|missing required argument)`)
	argumentNeed  = regexp.MustCompile(`(?i)(required (arguments?|options?) (is|are) missing|incomplete [a-z -]*configuration|required option|missing required|not enough non-option arguments|required command|must specify|you must (specify|provide|pass)|please (provide|specify|pass)|you need to specify|unknown command|expected '[^']+' or '[^']+'|no command (given|specified)|is required|are required|must be provided|must be (set|given)|not specified|cannot find config|config(uration)? file (not found|is required|missing|does not exist)|no (config|configuration|\.env) file|fill in the values|requires (an|a) (argument|value|path))`)
	argumentNoun  = regexp.MustCompile(`(?i)(--?[a-z][a-z0-9-]*|argument|option|command|config|configuration|\.env|path|url|directory|file|environment variable|[A-Z][A-Z0-9]*_[A-Z0-9_]+)`)
	serviceDown   = regexp.MustCompile(`(?i)(fetch failed|endpoint unreachable|could not resolve host|unable to access 'https?://|econnrefused|connection refused|enotfound|getaddrinfo|ehostunreach|enetunreach|could not connect to|failed to connect to|unable to connect to|cannot connect to the docker daemon|is the docker daemon running|no such host|dial tcp|connect etimedout)`)
	ansiEscape    = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)`)
	moduleMissing = regexp.MustCompile(`(?i)cannot find (module|package) '([^']+)'`)
)

// classify sets a row's outcome from its status, its failure, what the
// server said (the reason's excerpt and stderr) and what its install left
// out, and says why: the rule that decided and the line that showed it.
func classify(e Entry, row Row, stderr []string, rec *InstallRecord) (outcome, why string) {
	switch row.Status {
	case StatusScanned:
		return OutcomeScanned, ""
	case StatusSkipped:
		return OutcomeExcluded, row.Reason
	}
	switch row.Failure {
	case FailInstall:
		if e.PackageRegistry() == RegistryPyPI && strings.Contains(row.Reason, "could not be reached") {
			return OutcomePyPINotRun, "the package index could not be reached from this machine: " + row.Reason
		}
		return OutcomeFailedInstall, row.Reason
	case FailConfig:
		return OutcomeNeedsArgument, "servers.json leaves a value unset: " + row.Reason
	case FailInternal:
		return OutcomeFailedStart, "mcpdrill could not scan it: " + row.Reason
	}
	lines := make([]string, 0, len(stderr)+1)
	for _, l := range append([]string{row.Reason}, stderr...) {
		if l = strings.TrimSpace(ansiEscape.ReplaceAllString(l, "")); l != "" {
			lines = append(lines, l)
		}
	}
	said := func(rule string, l string) string {
		if len(l) > 200 {
			l = l[:200] + "…"
		}
		return fmt.Sprintf("%s: %q", rule, l)
	}
	for _, l := range lines {
		if nativeMissing.MatchString(l) {
			return OutcomeInstallIncomplete, said("it failed on a native module or a download that install scripts (off in the study) would have provided", l)
		}
	}
	if rec != nil && len(rec.ScriptsSkipped) > 0 {
		for _, l := range lines {
			if m := moduleMissing.FindStringSubmatch(l); m != nil && namesPackage(m[2], rec.ScriptsSkipped) {
				return OutcomeInstallIncomplete, said("it failed on a package whose install script the study did not run", l)
			}
		}
	}
	for _, l := range lines {
		if runtimeTooOld.MatchString(l) {
			return OutcomeNeedsRuntime, said("it needs a newer Node.js than the study's", l)
		}
	}
	for _, l := range lines {
		if unexpectedToken.MatchString(l) {
			continue
		}
		if credentialNeed.MatchString(l) && (credentialWord.MatchString(l) || namesAny(l, e.Credentials)) {
			return OutcomeNeedsCredentials, said("it asked for a credential", l)
		}
	}
	for _, l := range lines {
		if usageLine.MatchString(l) || (argumentNeed.MatchString(l) && argumentNoun.MatchString(l)) {
			return OutcomeNeedsArgument, said("it asked for an argument or a setting", l)
		}
	}
	for _, l := range lines {
		if serviceDown.MatchString(l) {
			return OutcomeNeedsService, said("it could not reach a service it depends on", l)
		}
	}
	if s := row.startup; s != nil && s.Exited && s.Signal == "" && s.ExitStatus != nil && *s.ExitStatus == 0 {
		return OutcomeNotAServer, "it exited with status 0 before any handshake, asking for nothing: it ran as a command, not as a stdio server"
	}
	return OutcomeFailedStart, "no rule for the study's limits matched: the server failed by itself (" + row.Reason + ")"
}

// namesPackage: module (a specifier: a package name and maybe a path, or
// a file path through node_modules) is in one of pkgs.
func namesPackage(module string, pkgs []string) bool {
	if i := strings.LastIndex(module, "node_modules/"); i >= 0 {
		module = module[i+len("node_modules/"):]
	}
	for _, p := range pkgs {
		if module == p || strings.HasPrefix(module, p+"/") {
			return true
		}
	}
	return false
}

func namesAny(line string, names []string) bool {
	for _, n := range names {
		if n != "" && strings.Contains(line, n) {
			return true
		}
	}
	return false
}

// OutcomeMeanings says in one line what each outcome means, for the
// reports; the order is the table's.
var OutcomeMeanings = []struct{ Outcome, Meaning string }{
	{OutcomeScanned, "the scan listed the server's tools"},
	{OutcomeExcluded, "servers.json leaves the entry out, and says why (a library, a platform binary, a duplicate)"},
	{OutcomeFailedInstall, "the study could not install the package"},
	{OutcomePyPINotRun, "a PyPI package the study could not reach the package index for"},
	{OutcomeInstallIncomplete, "the server needs what the study's install leaves out with scripts off (a native module, a download)"},
	{OutcomeNeedsRuntime, "the server needs a newer Node.js than the study's"},
	{OutcomeNeedsCredentials, "the server asked for a key, a token or another credential"},
	{OutcomeNeedsArgument, "the server asked for an argument, an option or a setting the entry does not give"},
	{OutcomeNeedsService, "the server could not reach a service it depends on (a database, a daemon, a host)"},
	{OutcomeNotAServer, "the command ended (exit 0) before any handshake without asking for anything"},
	{OutcomeFailedStart, "the server broke by itself (crashed, hung, refused every revision)"},
}
