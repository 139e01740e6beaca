package report

import (
	"cmp"
	"slices"
	"strings"
	"time"
)

// RepositoryURL is mcpdrill's home; rule help links point into its
// METHODOLOGY.md.
const RepositoryURL = "https://github.com/mcpdrill/mcpdrill"

// Location places a finding in a file of the user's repository, so that code
// scanning and CI annotations can show it: the manifest or baseline a drift
// run read, a study's servers.json, or the file a scan is attached to.
type Location struct {
	// Path is slash-separated and relative to the repository root, or
	// absolute when the file lies outside any repository.
	Path string
	// Line is the 1-based line of the entry the finding is about (a tool's
	// object, a server's member); 1 when the finding has no entry of its own.
	Line int
}

// Result is a finding with where it is reported.
type Result struct {
	Finding
	Location Location
	// Subject names the part of a multi-server run the finding is about (a
	// study's server); "" for a run of one server.
	Subject string
	// Expected is set on a finding an expected-findings file acknowledges
	// (Expectations.Evaluate): it does not fail the run, and the machine
	// formats say so.
	Expected bool
}

// Text is the finding's one-line text with its subject and tool, for
// formats that show a message without its other fields.
func (r Result) Text() string {
	return strings.Join(append(nonEmpty(r.Subject, r.Tool), r.Finding.Text()), ": ")
}

// Text is the finding's message, led by its JSON pointer when the message
// does not already name it.
func (f Finding) Text() string {
	if f.Pointer != "" && !strings.Contains(f.Message, f.Pointer) {
		return f.Pointer + ": " + f.Message
	}
	return f.Message
}

// Locate places findings in one file: each at the line of its tool's entry
// when lines has one, else at line 1.
func Locate(fs []Finding, path string, lines map[string]int) []Result {
	out := make([]Result, len(fs))
	for i, f := range fs {
		line := lines[f.Tool]
		if f.Tool == "" || line < 1 {
			line = 1
		}
		out[i] = Result{Finding: f, Location: Location{Path: path, Line: line}}
	}
	return out
}

// Check is one check a command ran, written as one JUnit test case: a
// conformance check, an error probe, a tool, a server of a study. Findings
// the check claims decide its outcome; a finding no check claims becomes a
// test case of its own.
type Check struct {
	// Class groups checks ("conformance", "probes", "tools", "servers"); it
	// becomes the last part of the JUnit classname and holds no spaces.
	Class string
	Name  string
	// Claims reports whether a finding belongs to this check. A finding
	// belongs to the first check that claims it.
	Claims func(Result) bool
	// Skipped, when set, says why the check did not run or does not apply.
	Skipped string
	// Failed, when set, says why the check failed without a finding (a
	// study's server that could not be scanned).
	Failed string
	// Time is the check's measured wall time; 0 when it was not timed on
	// its own.
	Time time.Duration
}

// Output is what one command run found, ready for a machine format.
type Output struct {
	// Command is the command that ran: "scan", "drift", "drift check",
	// "study run".
	Command string
	// Version is mcpdrill's version.
	Version   string
	Catalogue Catalogue
	// Threshold is the --fail-on level ("" for never).
	Threshold Severity
	Results   []Result
	Checks    []Check
	// Duration is the run's wall time.
	Duration time.Duration
	// Category, when set, is the SARIF run's automationDetails.id (with a
	// "/" appended, as GitHub's upload does to a category): the code
	// scanning category that keeps this run's alerts apart from another's.
	// Empty, the SARIF has no automationDetails and the uploader names the
	// run (GitHub: by workflow, job and matrix values, or its category
	// input).
	Category string
}

// sortedResults returns the results in a stable order: severity (most
// serious first), subject, then as Sort orders findings.
func (o Output) sortedResults() []Result {
	rs := slices.Clone(o.Results)
	slices.SortStableFunc(rs, func(a, b Result) int {
		return cmp.Or(cmp.Compare(b.Severity.Rank(), a.Severity.Rank()), cmp.Compare(a.Subject, b.Subject), compareFindings(a.Finding, b.Finding))
	})
	return rs
}

// fails reports whether a result fails the run: its severity is at or
// above the threshold and no expected-findings file acknowledges it.
func (o Output) fails(r Result) bool {
	return !r.Expected && o.Threshold != "" && r.Severity.Rank() >= o.Threshold.Rank()
}

// methodologyAnchors maps rule id prefixes (longest first) to the section of
// METHODOLOGY.md that defines them.
var methodologyAnchors = []struct{ prefix, anchor string }{
	{"MCP-DRIFT-CALL-", "gated-tool-invocation"},
	{"MCP-DRIFT-CANARY-", "behavioural-canaries-drift-capture-drift-check"},
	{"MCP-DRIFT-", "manifest-vs-live-mcpdrill-drift-manifest---url-url-----cmd"},
	{"MCP-CONF-", "4-specification-conformance"},
	{"MCP-OUT-", "2-output-contract"},
	{"MCP-ERR-", "3-error-conformance"},
	{"MCP-SCAN-", "1-connection-and-era-detection"},
	{"MCP-CONFIG-", "part-viii--text-a-server-controls-and-files-you-did-not-write"},
	{"MCP-PROV-", "7-provider-acceptance"},
	{"MCP-AUTH-", "authentication-posture-auth_posture-http-only"},
	{"MCP-GUARD-", "part-iv--guard-mode-pinning-a-servers-tool-set"},
	{"MCP-STUDY-", "ci-formats-of-study-run"},
	{"MCP-CLIENT-", "part-ix--the-client-drill-mcpdrill-client"},
	{"CHG-", "schema-diff-classifier"},
	{"BRK-", "schema-diff-classifier"},
}

// HelpURI links a rule id to the section of METHODOLOGY.md that defines it
// ("" for an id of no known family).
func HelpURI(id string) string {
	if a := MethodologyAnchor(id); a != "" {
		return RepositoryURL + "/blob/main/METHODOLOGY.md#" + a
	}
	return ""
}

// MethodologyAnchor is the heading anchor of METHODOLOGY.md that defines
// the rule id ("" for an id of no known family).
func MethodologyAnchor(id string) string {
	for _, m := range methodologyAnchors {
		if strings.HasPrefix(id, m.prefix) {
			return m.anchor
		}
	}
	return ""
}
