package drift

import (
	"context"
	"fmt"

	"github.com/mcpdrill/mcpdrill/internal/mcp"
	"github.com/mcpdrill/mcpdrill/internal/target"
	"github.com/mcpdrill/mcpdrill/internal/telemetry"
	"github.com/mcpdrill/mcpdrill/report"
)

// RunOptions are the choices of a manifest-against-live run beyond its two
// sides.
type RunOptions struct {
	// Baseline and Live name the two sides in the report: the manifest's
	// path, and the live target as already redacted for display.
	Baseline, Live string
	// HeaderNames are the names of the configured headers (their values
	// never enter the report).
	HeaderNames []string
	// Tracer records one span per MCP call and names, on each comparison
	// finding, the tools/list page it was read out of (nil: no ids).
	Tracer *telemetry.Tracer
	// Posture, when set, establishes who an HTTP target talks to, from how
	// the live listing went. drift does not grade authentication itself;
	// the caller supplies the grader (the CLI uses scan's).
	Posture func(ctx context.Context, l Listing) (*target.Posture, []report.Finding)
	// Structural compares the two sides' Structural tools, and
	// fingerprints those: an edit of a description or a title is no drift.
	Structural bool
	// Invoke, when set, runs the opt-in tool invocation against the
	// declared tools, knowing which the server serves, and may record it on
	// the report.
	Invoke func(ctx context.Context, declared []mcp.Tool, served []string, rep *Report) ([]report.Finding, error)
}

// Listing is how the live tools/list went, for RunOptions.Posture.
type Listing struct {
	// Listed is true when the listing completed; Tools are the served names.
	Listed bool
	Tools  []string
	// Err is the connect or list error otherwise.
	Err error
	// Revision is the negotiated protocol revision ("" when none was).
	Revision string
	// Call is the request that established the outcome (the first
	// tools/list page, or the request that failed); zero when untraced.
	Call telemetry.Call
}

// Run compares the manifest with what the live server serves now: the
// "mcpdrill drift" run. When the live side cannot be observed, Run returns
// the error, and a report too when the run still established something
// worth writing (a refused protocol revision, or an HTTP target's posture);
// a nil report means nothing was established.
func Run(ctx context.Context, cfg mcp.Config, m *Manifest, o RunOptions) (*Report, error) {
	if o.Tracer != nil {
		cfg = cfg.Traced(o.Tracer)
		var end func()
		ctx, end = o.Tracer.Start(ctx, "mcpdrill drift")
		defer end()
	}
	declared := m.Tools
	if o.Structural {
		declared = Structural(m.Tools)
	}
	rep := &Report{SchemaVersion: SchemaVersion, Command: "drift", Baseline: o.Baseline, Live: o.Live, Structural: o.Structural,
		Fingerprint: Fingerprints{Baseline: Fingerprint(declared)}, Tools: ToolCounts{Baseline: len(m.Tools)}}
	mark := o.Tracer.Mark()
	obs, err := Observe(ctx, cfg)
	calls := o.Tracer.Since(mark)
	if err != nil {
		var fs []report.Finding
		refused := IsRefused(err)
		if refused {
			fs = append(fs, refusedFinding(err))
		}
		posture := o.Posture != nil && cfg.URL != ""
		if posture {
			// Who the server talks to is established even when it refuses us.
			var last telemetry.Call
			if len(calls) > 0 {
				last = calls[len(calls)-1]
			}
			var pfs []report.Finding
			rep.AuthPosture, pfs = o.Posture(ctx, Listing{Err: err, Call: last})
			fs = append(fs, pfs...)
		}
		if !refused && !posture {
			return nil, err
		}
		rep.SetFindings(fs)
		return rep, err
	}
	rep.Target = targetOf(obs, o.HeaderNames)
	live := obs.Tools
	if o.Structural {
		live = Structural(obs.Tools)
	}
	rep.Fingerprint.Live = Fingerprint(live)
	rep.Tools.Live = len(obs.Tools)
	rep.Compared = true
	fs, err := compareContext(ctx, Side{Tools: declared, Incomplete: m.Truncated()}, Side{Tools: live, Incomplete: obs.Capped, Unreadable: obs.Unreadable})
	if err != nil {
		return nil, fmt.Errorf("compare %d declared with %d served tool(s): %w", len(m.Tools), len(obs.Tools), err)
	}
	fs = append(fs, obs.SessionFindings()...)
	stampListing(fs, calls, obs)
	served := make([]string, 0, len(obs.Tools))
	for _, t := range obs.Tools {
		served = append(served, t.Name)
	}
	if o.Posture != nil && cfg.URL != "" {
		var first telemetry.Call
		for _, c := range calls {
			if c.Method == "tools/list" {
				first = c
				break
			}
		}
		var pfs []report.Finding
		rep.AuthPosture, pfs = o.Posture(ctx, Listing{Listed: true, Tools: served, Revision: obs.Session.Revision, Call: first})
		fs = append(fs, pfs...)
	}
	if o.Invoke != nil {
		ifs, err := o.Invoke(ctx, m.Tools, served, rep)
		if err != nil {
			return nil, err
		}
		fs = append(fs, ifs...)
	}
	rep.Served = served
	rep.SetFindings(fs)
	return rep, nil
}

// stampListing names, on each comparison finding, the tools/list request it
// was read out of: the page that served the tool, or for a tool that is not
// served (and for session findings) the last page, which established the
// end of the list.
func stampListing(fs []report.Finding, calls []telemetry.Call, obs *Observation) {
	var pages []telemetry.Call
	for _, c := range calls {
		if c.Method == "tools/list" {
			pages = append(pages, c)
		}
	}
	if len(pages) == 0 {
		return
	}
	for i := range fs {
		c := pages[len(pages)-1]
		if p, ok := obs.ToolPages[fs[i].Tool]; ok && p < len(pages) {
			c = pages[p]
		}
		fs[i].SetTrace(c.IDs())
	}
}
