package drift

import (
	"github.com/mcpdrill/mcpdrill/internal/target"
	"github.com/mcpdrill/mcpdrill/report"
)

// SchemaVersion is the version of the drift JSON report and capture files.
const SchemaVersion = "1"

// Report is the machine-readable result of a drift run (mcpdrill drift and
// mcpdrill drift check). It never holds a tool result value or a header value.
type Report struct {
	SchemaVersion string `json:"schema_version"`
	// Command is "drift" (manifest vs live) or "drift check".
	Command string `json:"command"`
	// Baseline names the declared side (a file path) and Live the served side
	// (a file path, or a URL or command line redacted by internal/redact:
	// no user info, query values or values of secret-looking arguments).
	Baseline    string       `json:"baseline"`
	Live        string       `json:"live"`
	Target      *Target      `json:"target,omitempty"`
	Fingerprint Fingerprints `json:"fingerprint"`
	Tools       ToolCounts   `json:"tools"`
	// Compared is false when no tool comparison was made (refused revision).
	Compared bool `json:"compared"`
	// Structural is set when the sides were compared and fingerprinted
	// without their descriptions and titles (Structural).
	Structural bool            `json:"structural,omitempty"`
	Findings   []ReportFinding `json:"findings"`
	// AuthPosture is what the run established about who the live server
	// talks to (HTTP targets); set by the caller.
	AuthPosture *target.Posture `json:"auth_posture,omitempty"`
	// Invocation is the opt-in tool invocation (a *scan.Invocation set by
	// the CLI, which owns that gate), when tools were named.
	Invocation any `json:"invocation,omitempty"`
	// Served are the live tool names in listing order, when the live side
	// was listed; for the caller's placing of findings, not in the JSON.
	Served []string `json:"-"`
}

// Target describes the live session, when there was one.
type Target struct {
	Transport string   `json:"transport"`
	Revision  string   `json:"revision"`
	Era       string   `json:"era"`
	Server    string   `json:"server,omitempty"`
	Version   string   `json:"server_version,omitempty"`
	Detection []string `json:"detection,omitempty"`
	// HeaderNames are the names of headers sent (never their values).
	HeaderNames []string `json:"header_names,omitempty"`
	Pages       int      `json:"pages"`
	Complete    bool     `json:"complete"`
}

// Fingerprints holds the tool-set fingerprint of both sides ("" when a side
// was not obtained).
type Fingerprints struct {
	Baseline string `json:"baseline"`
	Live     string `json:"live"`
}

// ToolCounts counts tools on each side.
type ToolCounts struct {
	Baseline int `json:"baseline"`
	Live     int `json:"live"`
}

// ReportFinding is a finding as written in the drift report: every key is
// always present.
type ReportFinding struct {
	Rule     string          `json:"rule"`
	Severity report.Severity `json:"severity"`
	Tool     string          `json:"tool"`
	Pointer  string          `json:"pointer"`
	Change   string          `json:"change"`
	Breaking bool            `json:"breaking"`
	Message  string          `json:"message"`
	Evidence string          `json:"evidence,omitempty"`
	// TraceID and SpanID name the call that established the finding, when
	// the run was traced (--otlp-endpoint).
	TraceID string `json:"trace_id,omitempty"`
	SpanID  string `json:"span_id,omitempty"`
}

// SetFindings stores findings, sorted, in the report.
func (r *Report) SetFindings(fs []report.Finding) {
	fs = append([]report.Finding(nil), fs...)
	report.Sort(fs)
	r.Findings = make([]ReportFinding, 0, len(fs))
	for _, f := range fs {
		b := f.Breaking != nil && *f.Breaking
		r.Findings = append(r.Findings, ReportFinding{Rule: f.Rule, Severity: f.Severity, Tool: f.Tool,
			Pointer: f.Pointer, Change: f.Change, Breaking: b, Message: f.Message, Evidence: f.Evidence, TraceID: f.TraceID, SpanID: f.SpanID})
	}
}

// Plain returns the findings as report.Findings (for SARIF, JUnit, exit codes).
func (r *Report) Plain() []report.Finding {
	out := make([]report.Finding, len(r.Findings))
	for i, f := range r.Findings {
		b := f.Breaking
		out[i] = report.Finding{Rule: f.Rule, Severity: f.Severity, Tool: f.Tool, Pointer: f.Pointer,
			Change: f.Change, Message: f.Message, Evidence: f.Evidence, TraceID: f.TraceID, SpanID: f.SpanID}
		if f.Change != "" {
			out[i].Breaking = &b
		}
	}
	return out
}

// targetOf describes an observed session.
func targetOf(o *Observation, headerNames []string) *Target {
	if o == nil {
		return nil
	}
	s := o.Session
	return &Target{
		Transport: string(s.Transport), Revision: s.Revision, Era: string(s.Era),
		Server: s.Server.Name, Version: s.Server.Version, Detection: s.Detection,
		HeaderNames: headerNames, Pages: o.Pages, Complete: !o.Capped,
	}
}
