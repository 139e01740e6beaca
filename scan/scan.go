package scan

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
	"github.com/mcpdrill/mcpdrill/internal/mcp"
	"github.com/mcpdrill/mcpdrill/internal/redact"
	"github.com/mcpdrill/mcpdrill/internal/target"
	"github.com/mcpdrill/mcpdrill/internal/telemetry"
	"github.com/mcpdrill/mcpdrill/report"
)

// Options tune a scan. The zero value is a full scan.
type Options struct {
	// Deadline bounds the whole scan (default 2 minutes).
	Deadline time.Duration
	// SkipSecondConnection turns off the tool-set stability check, which
	// opens a second session (a second process on stdio).
	SkipSecondConnection bool
	// ToolVersion is recorded in Meta.
	ToolVersion string
	// Now is the clock for Meta (default time.Now); tests pin it.
	Now func() time.Time
	// TargetClass overrides the target classification ("" derives it
	// from the URL; a stdio server is local).
	TargetClass target.Class
	// SkipAuthProbe turns off the anonymous tools/list sent with the
	// configured headers stripped (HTTP targets with --header only).
	SkipAuthProbe bool
	// SkipOriginCheck turns off the foreign-Origin handshake (HTTP only).
	SkipOriginCheck bool
	// Invoke configures the opt-in tool invocation (see InvokeOptions).
	Invoke InvokeOptions
	// Tracer records one span per MCP call (HTTP or stdio) and stamps findings
	// with the ids of the call that established them; nil records nothing.
	// The caller flushes it after Run.
	Tracer *telemetry.Tracer
}

// Run scans the server cfg points at. It returns an error only for
// mcpdrill's own failures: an unreachable or refusing server is a Report with
// Established false and a finding that says so.
func Run(ctx context.Context, cfg mcp.Config, o Options) (*Report, error) {
	if o.Deadline <= 0 {
		o.Deadline = 2 * time.Minute
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	start := o.Now()
	ctx, cancel := context.WithTimeout(ctx, o.Deadline)
	defer cancel()
	if o.Tracer != nil {
		if cfg.URL != "" {
			cfg.HTTPClient = o.Tracer.Client(cfg.HTTPClient)
		} else {
			cfg.Observer = o.Tracer.Observer()
		}
		var end func()
		ctx, end = o.Tracer.Start(ctx, "mcpdrill scan")
		defer end()
	}

	s := &scanner{cfg: cfg, opts: o, rep: &Report{
		SchemaVersion: SchemaVersion,
		Target:        targetOf(cfg),
		Tools:         []ToolReport{},
		Probes:        []Probe{},
		Conformance:   []Check{},
		Findings:      []report.Finding{},
		Meta:          Meta{ToolVersion: o.ToolVersion, StartedAt: start.UTC().Format(time.RFC3339)},
	}}
	if err := s.planInvocation(); err != nil {
		return nil, err
	}
	s.run(ctx)
	s.finish()
	s.rep.Meta.DurationMS = o.Now().Sub(start).Milliseconds()
	return s.rep, nil
}

type scanner struct {
	cfg  mcp.Config
	opts Options
	rep  *Report
	c    *mcp.Client
	sess mcp.Session
	list mcp.ToolList
	// listed is true when the inventory completed.
	listed bool
	// noise counts non-JSON stdout lines over every connection of the scan.
	noise int
	// mark is the call-log position after which the latest call is the
	// one a new finding is about; listCalls are the tools/list pages'
	// calls and toolPage the page each tool was read out of.
	mark      int
	listCalls []telemetry.Call
	toolPage  map[string]int
	// primary is the call that established the listing outcome.
	primary telemetry.Call
}

func (s *scanner) find(rule, tool, pointer, msg string) {
	s.findSev(rule, severityOf(rule), tool, pointer, msg)
}

func (s *scanner) findSev(rule string, sev report.Severity, tool, pointer, msg string) {
	f := report.Finding{Rule: rule, Severity: sev, Tool: tool, Pointer: pointer, Message: msg}
	s.callFor(tool).Stamp(&f)
	s.rep.Findings = append(s.rep.Findings, f)
}

// callFor names the call a finding about tool was established by: the
// latest call made since the listing, else the tools/list page the tool was
// read out of, else the listing's first page (or the call that failed).
func (s *scanner) callFor(tool string) telemetry.Call {
	if s.opts.Tracer == nil {
		return telemetry.Call{}
	}
	if calls := s.opts.Tracer.Since(s.mark); len(calls) > 0 {
		return calls[len(calls)-1]
	}
	if i, ok := s.toolPage[tool]; ok && i < len(s.listCalls) {
		return s.listCalls[i]
	}
	if len(s.listCalls) > 0 {
		return s.listCalls[0]
	}
	return s.primary
}

func (s *scanner) check(id string, st CheckStatus, detail string) {
	s.rep.Conformance = append(s.rep.Conformance, Check{ID: id, Status: st, Detail: detail})
}

func (s *scanner) run(ctx context.Context) {
	s.mark = s.opts.Tracer.Mark()
	c, err := mcp.Connect(ctx, s.cfg)
	if err != nil {
		s.primary = lastCall(s.opts.Tracer.Since(s.mark), "", false)
		s.connectFailed(err)
		s.authPosture(ctx, Primary{Err: err, Call: s.primary})
		return
	}
	s.c = c
	defer func() {
		// s.c may have been replaced by a reconnect.
		s.observe(s.c, true)
		tail := s.c.StderrTail()
		if len(tail) > 20 {
			tail = tail[len(tail)-20:]
		}
		s.rep.Meta.Stderr = tail
		_ = s.c.Close()
	}()
	s.sess = c.Session()
	s.rep.Server = Server{Name: s.sess.Server.Name, Version: s.sess.Server.Version, Title: s.sess.Server.Title}
	s.rep.Protocol = Protocol{
		Revision:          s.sess.Revision,
		Era:               string(s.sess.Era),
		Transport:         string(s.sess.Transport),
		Forced:            s.cfg.Protocol != "",
		SupportedVersions: s.sess.SupportedVersions,
		Detection:         s.sess.Detection,
	}
	s.rep.Target.Transport = string(s.sess.Transport)

	listMark := s.opts.Tracer.Mark()
	list, err := c.ListTools(ctx)
	s.list = list
	s.traceListing(listMark, err)
	switch {
	case err != nil:
		s.find(RuleIncomplete, "", "", "tools/list did not complete ("+errText(err)+"): no tool figures were established")
	case list.ToolsCapped:
		s.find(RuleIncomplete, "", "", fmt.Sprintf("tools/list stopped at the tool cap (%d tools read; %d more on page %d and any later pages not read): nothing is claimed about the tools not read", len(list.Tools), list.ToolsDropped, list.Pages))
		s.listed = true
	case list.Capped:
		s.find(RuleIncomplete, "", "", fmt.Sprintf("tools/list stopped at the page cap (%d pages): tools on later pages were not seen", list.Pages))
		s.listed = true
	default:
		s.listed = true
	}
	s.rep.Established = s.listed

	s.contracts(ctx)
	s.conformance(ctx)
	s.probes(ctx)
	if !s.opts.SkipSecondConnection && s.listed {
		s.secondConnection(ctx)
	} else {
		s.check(RuleToolSetStable, CheckNotEstablished, "not run")
	}
	s.invoke(ctx)
	p := Primary{Listed: err == nil, Tools: toolNames(s.list.Tools), Err: err, Call: s.primary}
	s.authPosture(ctx, p)
}

// traceListing records which calls carried the tools/list pages, and which
// page each tool was read out of.
func (s *scanner) traceListing(mark int, err error) {
	if s.opts.Tracer == nil {
		return
	}
	calls := s.opts.Tracer.Since(mark)
	for _, c := range calls {
		if c.Method == "tools/list" {
			s.listCalls = append(s.listCalls, c)
		}
	}
	s.toolPage = map[string]int{}
	for i, raw := range s.list.Raw {
		_, tools, perr := mcp.ParseToolsPage(raw)
		if perr != nil {
			continue
		}
		for _, t := range tools {
			if _, seen := s.toolPage[t.Name]; !seen {
				s.toolPage[t.Name] = i
			}
		}
	}
	s.primary = lastCall(calls, "tools/list", err == nil)
	s.mark = s.opts.Tracer.Mark()
}

// authPosture records the authentication posture of an HTTP target.
func (s *scanner) authPosture(ctx context.Context, p Primary) {
	if s.cfg.URL == "" {
		return
	}
	res := ProbeAuth(ctx, s.cfg, AuthOptions{
		Class:              s.opts.TargetClass,
		SkipAnonymousProbe: s.opts.SkipAuthProbe,
		CheckOrigin:        !s.opts.SkipOriginCheck,
		Revision:           s.sess.Revision,
		Tracer:             s.opts.Tracer,
	}, p)
	s.rep.AuthPosture = res.Posture
	s.rep.Findings = append(s.rep.Findings, res.Findings...)
	s.mark = s.opts.Tracer.Mark()
}

func (s *scanner) connectFailed(err error) {
	switch {
	case errors.Is(err, mcp.ErrProtocolRefused):
		s.find(RuleRefused, "", "", "no protocol revision could be agreed: "+errText(err))
	default:
		s.find(RuleUnreachable, "", "", "no MCP session could be opened: "+errText(err))
	}
	var re *mcp.RedirectError
	if errors.As(err, &re) {
		s.redirect(re.Kind(), re.String(), 1)
	}
}

// redirect records a redirect the client saw (kind is its observation
// kind, detail its description, count how often it was seen).
func (s *scanner) redirect(kind, detail string, count int) {
	sev := report.SeverityWarn
	switch {
	case kind == mcp.ObsRedirectFollowed:
		sev = report.SeverityInfo
	case kind == mcp.ObsRedirectCrossOrigin && len(s.cfg.Headers) > 0:
		sev = report.SeverityError
		detail += "; a client that follows it sends the configured headers there"
	}
	if count > 1 {
		detail += fmt.Sprintf(" (%d times)", count)
	}
	s.findSev(RuleAuthRedirect, sev, "", "", detail)
}

// observe turns what a connection saw on the side into findings; final is
// set for the last connection of the scan, which also records the check.
func (s *scanner) observe(c *mcp.Client, final bool) {
	noise := 0
	for _, ob := range c.Observations() {
		switch ob.Kind {
		case "stdout-noise":
			noise += max(ob.Count, 1)
		case "oversize-frame":
			s.find(RuleOversizeFrame, "", "", fmt.Sprintf("%d message(s) over the %d-byte cap were discarded", max(ob.Count, 1), s.frameCap()))
		case "server-request":
			s.find(RuleServerRequest, "", "", "the server sent a request during the scan: "+ob.Detail)
		case mcp.ObsRedirectFollowed, mcp.ObsRedirectCrossOrigin, mcp.ObsRedirectLimit:
			s.redirect(ob.Kind, ob.Detail, ob.Count)
		}
	}
	if noise > 0 {
		s.noise += noise
		s.find(RuleStdoutPurity, "", "", fmt.Sprintf("%d non-JSON line(s) on stdout", noise))
	}
	switch {
	case !final:
	case s.sess.Transport != mcp.TransportStdio:
		s.check(RuleStdoutPurity, CheckNotApplicable, "not stdio")
	case s.noise > 0:
		s.check(RuleStdoutPurity, CheckFail, fmt.Sprintf("%d non-JSON line(s)", s.noise))
	default:
		s.check(RuleStdoutPurity, CheckPass, "")
	}
}

func (s *scanner) frameCap() int {
	if s.cfg.MaxFrame > 0 {
		return s.cfg.MaxFrame
	}
	return jsonrpc.DefaultMaxFrame
}

// finish names what the deadline cut short, sorts everything and computes
// the scores.
func (s *scanner) finish() {
	s.cutSummary()
	r := s.rep
	slices.SortFunc(r.Tools, func(a, b ToolReport) int { return cmp.Compare(a.Name, b.Name) })
	slices.SortStableFunc(r.Conformance, func(a, b Check) int { return cmp.Compare(a.ID, b.ID) })
	report.Sort(r.Findings)
	r.Scores = ScoresOf(r)
}

// targetOf describes the target without secrets (see internal/redact).
func targetOf(cfg mcp.Config) Target {
	t := Target{Command: redact.Argv(cfg.Command)}
	if cfg.URL != "" {
		t.Transport = "http"
		t.URL = redact.URL(cfg.URL)
	} else {
		t.Transport = string(mcp.TransportStdio)
	}
	for name := range cfg.Headers {
		t.HeaderNames = append(t.HeaderNames, name)
	}
	slices.Sort(t.HeaderNames)
	return t
}

// errText renders an error for a finding. Errors from internal/mcp never
// carry header values or tool results.
func errText(err error) string {
	var he *mcp.HTTPError
	if errors.As(err, &he) {
		return fmt.Sprintf("HTTP %d", he.Status)
	}
	switch {
	case errors.Is(err, mcp.ErrTimeout):
		return "timed out"
	case errors.Is(err, context.DeadlineExceeded):
		return "scan deadline reached"
	}
	return err.Error()
}
