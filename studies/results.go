package studies

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/mcpdrill/mcpdrill/internal/jsonvalue"

	"github.com/mcpdrill/mcpdrill/internal/redact"
	"github.com/mcpdrill/mcpdrill/internal/strwalk"
	"github.com/mcpdrill/mcpdrill/report"
	"github.com/mcpdrill/mcpdrill/scan"
)

// SchemaVersion is the version of results.json. It changes when a field is
// removed or renamed or its meaning changes; adding a field does not change
// it. results.schema.json describes this version.
const SchemaVersion = "3"

// Row statuses.
const (
	StatusScanned = "scanned"
	StatusFailed  = "failed"
	StatusSkipped = "skipped"
)

// Failure kinds, for rows with StatusFailed.
const (
	// FailConfig: the entry could not be turned into a target (a missing
	// environment variable, for instance).
	FailConfig = "config"
	// FailLaunch: the launch process of an HTTP entry exited or never
	// listened on its port.
	FailLaunch = "launch"
	// FailUnreachable: no MCP session could be opened.
	FailUnreachable = "unreachable"
	// FailRefused: no protocol revision could be agreed.
	FailRefused = "refused"
	// FailIncomplete: a session opened but the tool inventory did not
	// complete.
	FailIncomplete = "incomplete"
	// FailInternal: mcpdrill itself failed on this server.
	FailInternal = "internal"
)

// Results is the results.json document. Everything outside Meta is a
// function of servers.json, the settings and the servers themselves.
type Results struct {
	SchemaVersion     string `json:"schema_version"`
	ScanSchemaVersion string `json:"scan_schema_version"`
	// SpecHash identifies servers.json ("sha256:…" of its bytes).
	SpecHash string `json:"spec_hash"`
	// SpecServers is how many entries servers.json holds (all shards).
	SpecServers int      `json:"spec_servers"`
	Settings    Settings `json:"settings"`
	// Shard is set on the output of one shard; merged and unsharded runs
	// have none.
	Shard *Shard `json:"shard,omitempty"`
	// Only lists, sorted, the entries a run was limited to (study run
	// --only, to check some rows against a published run): the document
	// holds their rows alone, and cannot be merged.
	Only       []string   `json:"only,omitempty"`
	Servers    []Row      `json:"servers"`
	Aggregates Aggregates `json:"aggregates"`
	Meta       Meta       `json:"meta"`
}

// Settings are the run options that can change a result.
type Settings struct {
	DeadlineMS       int64 `json:"deadline_ms"`
	RequestTimeoutMS int64 `json:"request_timeout_ms"`
	SecondConnection bool  `json:"second_connection"`
}

// Row is one server's outcome. Failed and skipped rows keep the identity
// fields and a reason.
type Row struct {
	Name    string `json:"name"`
	Package string `json:"package,omitempty"`
	SDK     string `json:"sdk,omitempty"`
	// VariantOf is copied from servers.json.
	VariantOf string `json:"variant_of,omitempty"`
	// PreviousOf is copied from servers.json: this row is the previous
	// release of the row it names.
	PreviousOf string `json:"previous_of,omitempty"`
	// Transport is what servers.json declares: stdio or http.
	Transport string `json:"transport"`
	// Command (stdio) or Launch (http) is the argv as written in
	// servers.json, before expansion, and URL likewise, both redacted
	// (internal/redact): no user info, query values or values of
	// secret-looking arguments.
	Command     []string `json:"command,omitempty"`
	Launch      []string `json:"launch,omitempty"`
	URL         string   `json:"url,omitempty"`
	EnvNames    []string `json:"env_names,omitempty"`
	HeaderNames []string `json:"header_names,omitempty"`

	Status  string `json:"status"`
	Failure string `json:"failure,omitempty"`
	Reason  string `json:"reason,omitempty"`
	// Outcome refines the status for a population (outcome.go, one of
	// Outcomes); absent in a document written before the field was added.
	// OutcomeWhy says which rule decided it and on what evidence.
	Outcome    string `json:"outcome,omitempty"`
	OutcomeWhy string `json:"outcome_why,omitempty"`
	// Registry is the package's registry (servers.json's, or inferred from
	// the package) and Downloads its monthly downloads when the population
	// was drawn (0: unknown), both copied from servers.json.
	Registry  string `json:"registry,omitempty"`
	Downloads int64  `json:"downloads,omitempty"`
	// startup is how the server failed to open a session, for classify.
	startup *scan.StartupFailure

	// Server, Protocol, Scores, Tools, Probes and Conformance are the
	// scan's own (scan.Report's types), cleaned as the reason is: the
	// protocol keeps its revision, era and transport; each tool's provider
	// verdicts keep one violation of each constraint broken.
	Server      *scan.Server      `json:"server,omitempty"`
	Protocol    *scan.Protocol    `json:"protocol,omitempty"`
	Scores      *scan.Scores      `json:"scores,omitempty"`
	Tools       []scan.ToolReport `json:"tools"`
	Probes      []scan.Probe      `json:"probes"`
	Conformance []scan.Check      `json:"conformance"`
	Findings    map[string]int    `json:"findings"`
	// FindingDetails are the scan's findings themselves, sorted, their
	// messages cleaned as the reason is and without their evidence and
	// trace ids (which vary between runs), for the scoreboard's
	// drill-down; none on a row that never reached the scanner.
	FindingDetails []report.Finding `json:"finding_details,omitempty"`

	// SDKObserved is the SDK and framework the installed package and the
	// scan showed, with the evidence (SDK is the declared label); absent
	// when nothing named one.
	SDKObserved *SDKObserved `json:"sdk_observed,omitempty"`
	// Configurations are the tool listings under the entry's known
	// configurations (servers.json "configurations"), in its order.
	Configurations []ConfigScan `json:"configurations,omitempty"`
	// VersionDrift grades this release against its previous one (the row
	// whose previous_of names this one), when both were in the run.
	VersionDrift *VersionDrift `json:"version_drift,omitempty"`
	// base is the scan's listing, kept for the version comparison.
	base *baseline
	// mask masks the secrets of the row's server (redact.Values) in what
	// is derived from its scan later (the version comparison); nil for a
	// row read from results.json.
	mask func(string) string

	// found holds the scan's findings themselves (messages cleaned as the
	// reason is), or MCP-STUDY-NOT-SCANNED for a row that never reached the
	// scanner, for the CI formats of study run; results.json keeps only
	// the counts, so a row read back from a file has none.
	found []report.Finding
}

// Found returns the findings of the row's scan, sorted, or the
// MCP-STUDY-NOT-SCANNED finding of a row that was not scanned (none for a
// row read from results.json).
func (r Row) Found() []report.Finding { return r.found }

// Meta is everything that varies between identical runs.
type Meta struct {
	ToolVersion string `json:"tool_version"`
	// Commit is the commit of mcpdrill that ran the study, from its build
	// information ("-dirty" when its work tree had changes); absent when
	// the build recorded none.
	Commit string `json:"commit,omitempty"`

	GoVersion  string `json:"go_version,omitempty"`
	OS         string `json:"os,omitempty"`
	Arch       string `json:"arch,omitempty"`
	CPUs       int    `json:"cpus,omitempty"`
	Jobs       int    `json:"jobs,omitempty"`
	StartedAt  string `json:"started_at,omitempty"`
	FinishedAt string `json:"finished_at,omitempty"`
	DurationMS int64  `json:"duration_ms"`
	// Shards records each shard's run when this document is a merge.
	Shards []ShardMeta `json:"shards,omitempty"`
	// Servers holds per-server timings and stderr tails by server name.
	Servers map[string]ServerMeta `json:"servers,omitempty"`
	// Population is the rule the servers were chosen by, as the run was
	// told it (Options.Population); the scoreboard shows it.
	Population string `json:"population,omitempty"`
}

// ShardMeta is one merged shard's run.
type ShardMeta struct {
	Index       int    `json:"index"`
	ToolVersion string `json:"tool_version"`
	Jobs        int    `json:"jobs,omitempty"`
	StartedAt   string `json:"started_at,omitempty"`
	DurationMS  int64  `json:"duration_ms"`
}

// ServerMeta is one server's run-dependent detail.
type ServerMeta struct {
	// ScanMS is the wall time of the scan (connect to close); StartupMS
	// the part of it the server took to open its session (the scan's
	// meta.timing.startup_ms).
	ScanMS    int64 `json:"scan_ms"`
	StartupMS int64 `json:"startup_ms,omitempty"`
	// LaunchMS is the time a launched HTTP server took to listen.
	LaunchMS int64 `json:"launch_ms,omitempty"`
	// InstallMS is the wall time of the study install unit that installed
	// the server's package (from the install log; shared by the servers of
	// one unit), apart from the scan's.
	InstallMS int64 `json:"install_ms,omitempty"`
	// Stderr is the server's last stderr lines (paths replaced).
	Stderr []string `json:"stderr,omitempty"`
}

// rowFromReport turns a scan report into a row (identity fields already set).
func rowFromReport(row Row, r *scan.Report, clean func(string) string) Row {
	row.Findings = map[string]int{}
	for _, f := range r.Findings {
		row.Findings[f.Rule]++
		f.Message, f.Evidence = clean(f.Message), clean(f.Evidence)
		row.found = append(row.found, f)
	}
	report.Sort(row.found)
	for _, f := range row.found {
		f.Evidence, f.TraceID, f.SpanID = "", "", ""
		row.FindingDetails = append(row.FindingDetails, f)
	}
	if r.Server != (scan.Server{}) {
		s := r.Server
		row.Server = &s
	}
	if r.Protocol.Revision != "" {
		row.Protocol = &scan.Protocol{Revision: r.Protocol.Revision, Era: r.Protocol.Era, Transport: r.Protocol.Transport}
	}
	row.Tools = []scan.ToolReport{}
	for _, t := range r.Tools {
		t.Reason = clean(t.Reason)
		t.Providers = rowVerdicts(t.Providers)
		row.Tools = append(row.Tools, t)
	}
	slices.SortFunc(row.Tools, func(a, b scan.ToolReport) int { return cmp.Compare(a.Name, b.Name) })
	row.startup = r.StartupFailure
	row.Probes = []scan.Probe{}
	for _, p := range r.Probes {
		p.Detail = clean(p.Detail)
		row.Probes = append(row.Probes, p)
	}
	slices.SortStableFunc(row.Probes, func(a, b scan.Probe) int { return cmp.Compare(a.Name, b.Name) })
	row.Conformance = []scan.Check{}
	for _, c := range r.Conformance {
		c.Detail = clean(c.Detail)
		row.Conformance = append(row.Conformance, c)
	}
	slices.SortStableFunc(row.Conformance, func(a, b scan.Check) int { return cmp.Compare(a.ID, b.ID) })

	row.base = baselineOf(r)
	if r.Established {
		row.Status = StatusScanned
		sc := r.Scores
		row.Scores = &sc
		return row
	}
	row.Status = StatusFailed
	row.Failure = FailIncomplete
	for _, f := range r.Findings {
		switch f.Rule {
		case scan.RuleUnreachable:
			row.Failure, row.Reason = FailUnreachable, clean(f.Message)
		case scan.RuleRefused:
			row.Failure, row.Reason = FailRefused, clean(f.Message)
		case scan.RuleIncomplete:
			if row.Reason == "" {
				row.Reason = clean(f.Message)
			}
		}
	}
	if row.Reason == "" {
		row.Reason = "the scan did not establish the tool inventory"
	}
	return row
}

// maskRow masks the secrets of the row's server in every string the row
// holds (server info, tool names, probe and check texts, findings,
// reasons), so that a server that echoes one (in its name, a tool name, a
// message) records none of it, and keeps mask for the version comparison.
func maskRow(row Row, mask func(string) string) Row {
	strwalk.Map(&row, mask)
	strwalk.Map(&row.found, mask)
	if row.startup != nil {
		strwalk.Map(row.startup, mask)
	}
	row.mask = mask
	return row
}

// failedRow is a row for a server that never reached the scanner.
func failedRow(row Row, kind, reason string) Row {
	row.Status, row.Failure, row.Reason = StatusFailed, kind, reason
	row.Tools, row.Probes, row.Conformance, row.Findings = []scan.ToolReport{}, []scan.Probe{}, []scan.Check{}, map[string]int{}
	row.found = []report.Finding{{Rule: RuleNotScanned, Severity: report.SeverityError, Message: "not scanned (" + kind + "): " + reason}}
	return row
}

// identity fills the fields of a row that come from servers.json alone.
func identity(e Entry) Row {
	row := Row{Name: e.Name, Package: e.Package, SDK: e.SDK, VariantOf: e.VariantOf, Transport: e.Transport(), URL: redact.URL(e.URL)}
	row.PreviousOf = e.PreviousOf
	if e.Command != "" {
		row.Command = redact.Argv(append([]string{e.Command}, e.Args...))
	}
	if e.Launch != nil {
		row.Launch = redact.Argv(append([]string{e.Launch.Command}, e.Launch.Args...))
	}
	for k := range e.Env {
		row.EnvNames = append(row.EnvNames, k)
	}
	if e.Launch != nil {
		for k := range e.Launch.Env {
			if !slices.Contains(row.EnvNames, k) {
				row.EnvNames = append(row.EnvNames, k)
			}
		}
	}
	slices.Sort(row.EnvNames)
	for k := range e.Headers {
		row.HeaderNames = append(row.HeaderNames, k)
	}
	slices.Sort(row.HeaderNames)
	row.Registry, row.Downloads = e.PackageRegistry(), e.Downloads
	return row
}

// Finalize sorts the rows by name and recomputes the aggregates; Run and
// Merge call it, and so may a caller that edits rows.
func (r *Results) Finalize() {
	if r.Servers == nil {
		r.Servers = []Row{}
	}
	slices.SortFunc(r.Servers, func(a, b Row) int { return cmp.Compare(a.Name, b.Name) })
	r.Aggregates = Aggregate(r.Servers)
}

// Read decodes a results.json document, rejecting unknown fields and other
// schema versions. A document of schema_version 2 (before the rows carried
// scan's own types and the aggregates pooled tallies) reads too: its rows
// are a subset of version 3's, and its aggregates are recomputed from them.
func Read(rd io.Reader) (*Results, error) {
	dec := json.NewDecoder(rd)
	dec.DisallowUnknownFields()
	var r Results
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("results.json: %w", err)
	}
	switch r.SchemaVersion {
	case SchemaVersion:
	case "2":
		r.SchemaVersion = SchemaVersion
		status := map[string]string{}
		for _, row := range r.Servers {
			status[row.Name] = row.Status
		}
		for i := range r.Servers {
			vd := r.Servers[i].VersionDrift
			if vd == nil {
				continue
			}
			if vd.ToolsUnlisted == nil {
				// Written before tool sets of known configurations were
				// consulted: no tool was told apart as unlisted.
				vd.ToolsUnlisted = []string{}
			}
			// Written before the pair said which releases were scanned:
			// the rows' statuses say it.
			vd.PreviousScanned = status[vd.Previous] == StatusScanned
			vd.CurrentScanned = r.Servers[i].Status == StatusScanned
		}
		r.Finalize()
	default:
		return nil, fmt.Errorf("results.json: schema_version %q, this mcpdrill reads %q", r.SchemaVersion, SchemaVersion)
	}
	return &r, nil
}

// Write encodes r as indented JSON with a trailing newline.
func Write(w io.Writer, r *Results) error {
	if err := jsonvalue.WriteIndented(w, r); err != nil {
		return fmt.Errorf("writing results: %w", err)
	}
	return nil
}

// Merge joins shard outputs into the document an unsharded run would have
// produced (Meta aside). The shards must come from the same servers.json and
// settings and cover every shard index exactly once.
func Merge(parts []*Results) (*Results, error) {
	if len(parts) == 0 {
		return nil, errors.New("merge: no results given")
	}
	first := parts[0]
	out := &Results{
		SchemaVersion:     SchemaVersion,
		ScanSchemaVersion: first.ScanSchemaVersion,
		SpecHash:          first.SpecHash,
		SpecServers:       first.SpecServers,
		Settings:          first.Settings,
		Meta:              Meta{ToolVersion: first.Meta.ToolVersion, GoVersion: first.Meta.GoVersion, OS: first.Meta.OS, Arch: first.Meta.Arch, CPUs: first.Meta.CPUs, Servers: map[string]ServerMeta{}},
	}
	count := 1
	if first.Shard != nil {
		count = first.Shard.Count
	}
	seen := map[int]bool{}
	names := map[string]bool{}
	for i, p := range parts {
		switch {
		case p.SchemaVersion != SchemaVersion:
			return nil, fmt.Errorf("merge: part %d has schema_version %q", i+1, p.SchemaVersion)
		case p.SpecHash != first.SpecHash:
			return nil, fmt.Errorf("merge: part %d comes from another servers.json (%s, not %s)", i+1, p.SpecHash, first.SpecHash)
		case p.Settings != first.Settings:
			return nil, fmt.Errorf("merge: part %d ran with other settings", i+1)
		case len(p.Only) > 0:
			return nil, fmt.Errorf("merge: part %d is a run limited to some rows (only %s)", i+1, strings.Join(p.Only, ", "))
		case p.ScanSchemaVersion != first.ScanSchemaVersion:
			return nil, fmt.Errorf("merge: part %d has scan_schema_version %q", i+1, p.ScanSchemaVersion)
		}
		idx, n := 1, 1
		if p.Shard != nil {
			idx, n = p.Shard.Index, p.Shard.Count
		}
		if n != count {
			return nil, fmt.Errorf("merge: part %d is shard %d/%d, others are of %d", i+1, idx, n, count)
		}
		if seen[idx] {
			return nil, fmt.Errorf("merge: shard %d/%d given twice", idx, n)
		}
		seen[idx] = true
		for _, row := range p.Servers {
			if names[row.Name] {
				return nil, fmt.Errorf("merge: server %q appears in two parts", row.Name)
			}
			names[row.Name] = true
			out.Servers = append(out.Servers, row)
		}
		for k, v := range p.Meta.Servers {
			out.Meta.Servers[k] = v
		}
		out.Meta.Shards = append(out.Meta.Shards, ShardMeta{Index: idx, ToolVersion: p.Meta.ToolVersion, Jobs: p.Meta.Jobs, StartedAt: p.Meta.StartedAt, DurationMS: p.Meta.DurationMS})
		if out.Meta.StartedAt == "" || (p.Meta.StartedAt != "" && p.Meta.StartedAt < out.Meta.StartedAt) {
			out.Meta.StartedAt = p.Meta.StartedAt
		}
		if p.Meta.FinishedAt > out.Meta.FinishedAt {
			out.Meta.FinishedAt = p.Meta.FinishedAt
		}
		out.Meta.DurationMS = max(out.Meta.DurationMS, p.Meta.DurationMS)
	}
	if len(seen) != count {
		var missing []string
		for k := 1; k <= count; k++ {
			if !seen[k] {
				missing = append(missing, fmt.Sprintf("%d/%d", k, count))
			}
		}
		return nil, fmt.Errorf("merge: missing shard(s) %s", strings.Join(missing, ", "))
	}
	if len(out.Servers) != out.SpecServers {
		return nil, fmt.Errorf("merge: %d rows for a servers.json of %d entries", len(out.Servers), out.SpecServers)
	}
	slices.SortFunc(out.Meta.Shards, func(a, b ShardMeta) int { return cmp.Compare(a.Index, b.Index) })
	if count == 1 {
		out.Meta.Shards = nil
	}
	out.Finalize()
	return out, nil
}
