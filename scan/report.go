// Package scan is mcpdrill's model-free scorecard of a live MCP server:
// output-contract coverage and enforceability, error conformance,
// specification conformance. Every figure it reports is a property of the
// server that another run reproduces.
package scan

import (
	"github.com/mcpdrill/mcpdrill/internal/mcp"
	"github.com/mcpdrill/mcpdrill/internal/target"
	"github.com/mcpdrill/mcpdrill/report"
	"github.com/mcpdrill/mcpdrill/scan/provider"
)

// SchemaVersion is the version of the scan JSON document. It changes when a
// field is removed or its meaning changes; adding fields does not change it.
const SchemaVersion = "2"

// Report is the scan result, the document behind `mcpdrill scan --json`.
// Everything outside Meta is stable for the same server and options.
type Report struct {
	SchemaVersion string           `json:"schema_version"`
	Target        Target           `json:"target"`
	Server        Server           `json:"server"`
	Protocol      Protocol         `json:"protocol"`
	Tools         []ToolReport     `json:"tools"`
	Probes        []Probe          `json:"probes"`
	Conformance   []Check          `json:"conformance"`
	Scores        Scores           `json:"scores"`
	Findings      []report.Finding `json:"findings"`
	// AuthPosture is what the run established about who the server talks
	// to; recorded on every HTTP run, absent on stdio.
	AuthPosture *target.Posture `json:"auth_posture,omitempty"`
	// Providers is, per provider profile (scan/provider), how many of the
	// tools it accepts, with the date its sources were read; absent when
	// no tool was listed.
	Providers []ProviderSummary `json:"providers,omitempty"`
	// Invocation is the opt-in tool invocation: its plan, and its results
	// when executed; absent unless tools were named.
	Invocation *Invocation `json:"invocation,omitempty"`
	// SDK is the MCP SDK the server was seen to answer as, with the
	// evidence; absent when no SDK's wording came back.
	SDK *ObservedSDK `json:"sdk,omitempty"`
	// StartupFailure says what became of a stdio server that did not
	// complete the handshake; absent otherwise.
	StartupFailure *StartupFailure `json:"startup_failure,omitempty"`
	// Requirements is the NOT VERIFIED accounting of the revision graded:
	// how many of its requirements were checked, passed, failed, not
	// applicable or not verified; absent when nothing was negotiated or the
	// requirements table does not cover the revision.
	Requirements *RequirementCounts `json:"requirements,omitempty"`
	// Established is false when the scan could not complete its inventory
	// (no connection, refused revision); the findings say why.
	Established bool `json:"established"`
	Meta        Meta `json:"meta"`
	// Listed is the tools/list the scan read when it completed, for a
	// caller that keeps it as a drift baseline; it is not serialised.
	Listed *mcp.ToolList `json:"-"`
}

// StartupFailure is what a stdio server did instead of completing the
// handshake: whether its process ended by itself, with which status or
// signal, and the line of its stderr that says why (see METHODOLOGY,
// Part I §1). Every line of its stderr tail is in Meta.Stderr.
type StartupFailure struct {
	// Exited is true when the process ended by itself; false when it was
	// still running and mcpdrill stopped it.
	Exited bool `json:"exited"`
	// ExitStatus is its exit status when it exited (not for a signal).
	ExitStatus *int `json:"exit_status,omitempty"`
	// Signal names the signal that ended it (e.g. "SIGSEGV").
	Signal string `json:"signal,omitempty"`
	// Said is the last line of its stderr that explains something (stack
	// frames, runtime banners and blank lines passed over), bounded and
	// with secret-looking values masked; "" when it wrote none.
	Said string `json:"said,omitempty"`
	// StartupTimeoutMS is the start-up allowance, in milliseconds, when the
	// server wrote nothing within it (mcp.Config.StartupTimeout); 0
	// otherwise.
	StartupTimeoutMS int64 `json:"startup_timeout_ms,omitempty"`
}

// Target says what was scanned, without secrets (internal/redact): an HTTP
// URL loses its user info and fragment and its query values are masked; a
// command keeps its name and arguments, with the values of secret-looking
// flags and KEY=value arguments masked and URLs among them redacted.
type Target struct {
	Transport string   `json:"transport"`
	URL       string   `json:"url,omitempty"`
	Command   []string `json:"command,omitempty"`
	// HeaderNames lists the names of headers the user supplied, never values.
	HeaderNames []string `json:"header_names,omitempty"`
}

// Server is the identity the server reported.
type Server struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Title   string `json:"title,omitempty"`
}

// Protocol is what the connection negotiated and how.
type Protocol struct {
	Revision          string   `json:"revision"`
	Era               string   `json:"era"`
	Transport         string   `json:"transport"`
	Forced            bool     `json:"forced,omitempty"`
	SupportedVersions []string `json:"supported_versions,omitempty"`
	Detection         []string `json:"detection,omitempty"`
}

// ToolReport is one tool's output-contract verdict.
type ToolReport struct {
	Name string `json:"name"`
	// OutputContract is none, vacuous, partial, enforceable or invalid
	// (METHODOLOGY.md, "Output contract").
	OutputContract Contract `json:"output_contract"`
	// LeafRate is the share of single-leaf corruptions the schema rejected
	// (null when no schema was assessed).
	LeafRate       *float64 `json:"leaf_rate"`
	Leaves         int      `json:"leaves,omitempty"`
	LeavesRejected int      `json:"leaves_rejected,omitempty"`
	Instances      int      `json:"instances,omitempty"`
	// Shapes is the number of shapes sampled (the branch instances and
	// their variants: minimal instance, nullable values null, arrays
	// empty), ShapesRejected how many had their corrupted payload rejected:
	// enforceable is all of them, partial some, vacuous none.
	Shapes         int `json:"shapes,omitempty"`
	ShapesRejected int `json:"shapes_rejected,omitempty"`
	// LeavesSampled is set when the per-leaf check stopped at its work
	// budget: Leaves counts the corruptions tried, not every leaf.
	LeavesSampled bool `json:"leaves_sampled,omitempty"`
	Wrapped       bool `json:"wrapped,omitempty"`
	// Undetermined marks a vacuous verdict that means "not shown to reject
	// corruption" because enforcement could not be decided (see Reason).
	Undetermined bool   `json:"undetermined,omitempty"`
	Reason       string `json:"reason,omitempty"`
	// StoppedBy says why an undetermined assessment stopped before its
	// verdict: "budget" (the schema needs more than the synthesis budget),
	// "deadline" (the scan's deadline ended it), "canceled".
	StoppedBy string `json:"stopped_by,omitempty"`
	// Providers is every provider profile's verdict on the tool's
	// definition (its name and inputSchema), in profile order.
	Providers []provider.Verdict `json:"providers,omitempty"`
}

// Verdict classifies how a server answered a probe.
type Verdict string

// Probe verdicts.
const (
	VerdictJSONRPCError Verdict = "jsonrpc_error"
	VerdictToolError    Verdict = "tool_error"
	VerdictHTTPError    Verdict = "http_error"
	VerdictAccepted     Verdict = "accepted"
	VerdictTimeout      Verdict = "timeout"
	VerdictCrash        Verdict = "crash"
	VerdictSkipped      Verdict = "skipped"
	// VerdictIgnored: on stdio, the server answered the barrier sent after
	// the probe and not the probe itself (it is alive and dropped the frame).
	VerdictIgnored Verdict = "ignored"
)

// Handled reports whether the verdict is a refusal the client can see.
func (v Verdict) Handled() bool {
	return v == VerdictJSONRPCError || v == VerdictToolError || v == VerdictHTTPError
}

// Probe is one error-conformance probe's outcome.
type Probe struct {
	Name    string  `json:"name"`
	Verdict Verdict `json:"verdict"`
	// Conformant says whether the answer is what the negotiated revision
	// asks for; null for a probe that was not run (skipped).
	Conformant *bool `json:"conformant"`
	// ErrorCode is the JSON-RPC code received, when one was.
	ErrorCode *int `json:"error_code,omitempty"`
	// HTTPStatus is the HTTP status of the reply on HTTP transports (absent
	// on stdio).
	HTTPStatus int `json:"http_status,omitempty"`
	// Expected says what the revision asks for, e.g. "jsonrpc_error -32601".
	Expected string `json:"expected"`
	Tool     string `json:"tool,omitempty"`
	Detail   string `json:"detail,omitempty"`
	// Established is false (and Reason says why: "deadline", "canceled")
	// for a probe the scan itself cut short before the server answered; its
	// Verdict is then skipped and it is not graded. Absent otherwise.
	Established *bool  `json:"established,omitempty"`
	Reason      string `json:"reason,omitempty"`

	// rule is the rule that grades the probe, for the requirement
	// accounting; not in the JSON (the name says which probe it was).
	rule string
}

// Rule is the rule that grades the probe (its findings carry it); "" for a
// probe read back from JSON, which does not carry it.
func (p Probe) Rule() string { return p.rule }

// CheckStatus is the outcome of a conformance check.
type CheckStatus string

// Check outcomes.
const (
	CheckPass           CheckStatus = "pass"
	CheckFail           CheckStatus = "fail"
	CheckNotEstablished CheckStatus = "not_established"
	CheckNotApplicable  CheckStatus = "not_applicable"
)

// Check is one specification-conformance check.
type Check struct {
	ID     string      `json:"id"`
	Status CheckStatus `json:"status"`
	Detail string      `json:"detail,omitempty"`
	// Reason is set on a not_established check the scan itself cut short:
	// "deadline" or "canceled".
	Reason string `json:"reason,omitempty"`
}

// Scores are per-axis figures in [0,1]; nil means the axis had nothing to
// measure. Formulas are in METHODOLOGY.md.
type Scores struct {
	Tools                 int      `json:"tools"`
	Declared              int      `json:"declared"`
	Enforceable           int      `json:"enforceable"`
	Partial               int      `json:"partial"`
	Vacuous               int      `json:"vacuous"`
	Invalid               int      `json:"invalid"`
	OutputCoverage        *float64 `json:"output_coverage"`
	EnforceableRate       *float64 `json:"enforceable_rate"`
	EnforceableOfDeclared *float64 `json:"enforceable_of_declared"`
	LeafRate              *float64 `json:"leaf_rate"`
	ErrorHandling         *float64 `json:"error_handling"`
	ErrorConformance      *float64 `json:"error_conformance"`
	SpecConformance       *float64 `json:"spec_conformance"`

	// RejectsAnyRate is (enforceable + partial) / tools: the schemas that
	// reject the corrupted payload of at least one sampled shape, the
	// figure comparable with a single-payload method.
	RejectsAnyRate *float64 `json:"rejects_any_rate"`
}

// Meta holds everything that varies between identical runs.
type Meta struct {
	ToolVersion string `json:"tool_version"`
	StartedAt   string `json:"started_at,omitempty"`
	DurationMS  int64  `json:"duration_ms"`
	// Stderr holds the last lines the stdio server wrote to stderr, with
	// secret-looking values masked; they vary between runs and may hold
	// paths, so they stay here.
	Stderr []string `json:"stderr,omitempty"`
	// Timing splits DurationMS: the server's start-up, and the scan beyond it.
	Timing *Timing `json:"timing,omitempty"`
}

// Timing is where a scan's time went (METHODOLOGY, Part I §6).
type Timing struct {
	// StartupMS runs from starting the server (stdio) or sending the first
	// request (HTTP) to an open session, era detection included.
	StartupMS int64 `json:"startup_ms"`
	// ScanMS is the rest of the run: inventory, assessment, probes, checks
	// and closing the sessions.
	ScanMS int64 `json:"scan_ms"`
	// ShutdownMS is how long the stdio server took to end once the scan
	// closed its stdin (SIGTERM and SIGKILL waits included; see
	// MCP-CONF-STDIO-SHUTDOWN); absent over HTTP.
	ShutdownMS *int64 `json:"shutdown_ms,omitempty"`
}
