package scan

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
	"github.com/mcpdrill/mcpdrill/internal/jsonschema"
	"github.com/mcpdrill/mcpdrill/internal/mcp"
	"github.com/mcpdrill/mcpdrill/internal/redact"
	"github.com/mcpdrill/mcpdrill/internal/target"
	"github.com/mcpdrill/mcpdrill/internal/telemetry"
	"github.com/mcpdrill/mcpdrill/report"
	"github.com/mcpdrill/mcpdrill/scan/provider"
)

// Options tune a scan. The zero value is a full scan.
type Options struct {
	// Deadline bounds the whole scan (default 2 minutes).
	Deadline time.Duration
	// Budget bounds each schema's assessment, and each argument synthesis
	// of an invocation (zero: the jsonschema.Budget defaults).
	Budget jsonschema.Budget
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
	// ProbeAnyTool lets the argument probes pick a tool that is annotated
	// destructive or has a destructive-looking name (see pickTool); by
	// default such tools are never called.
	ProbeAnyTool bool
	// Invoke configures the opt-in tool invocation (see InvokeOptions).
	Invoke InvokeOptions
	// Providers names the provider profiles (scan/provider ids, or "all")
	// whose verdicts become findings (MCP-PROV-*); every profile's verdicts
	// are in the report whatever it names.
	Providers []string
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
		cfg = cfg.Traced(o.Tracer)
		var end func()
		ctx, end = o.Tracer.Start(ctx, "mcpdrill scan")
		defer end()
	}

	s := &scanner{cfg: cfg, opts: o, ends: &ends{}, rep: &Report{
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
	profiles, err := provider.Lookup(o.Providers)
	if err != nil {
		return nil, err
	}
	s.selectedProfiles = profiles
	s.run(ctx)
	s.finish()
	total := o.Now().Sub(start)
	s.rep.Meta.DurationMS = total.Milliseconds()
	s.rep.Meta.Timing = &Timing{StartupMS: s.startup.Milliseconds(), ScanMS: (total - s.startup).Milliseconds(), ShutdownMS: s.shutdownMS}
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
	// selectedProfiles are the provider profiles Options.Providers names.
	selectedProfiles []*provider.Profile
	// startup is how long the first session took to open; shutdownMS how
	// long its stdio server took to end (nil over HTTP).
	startup    time.Duration
	shutdownMS *int64
	// requests counts the kinds of request the server sent that the
	// client did not allow (serverRequestSeverity above info).
	requests int
	// sdk gathers the marks of the SDK the server answers with;
	// sdkCandidates are the findings that are that SDK's behaviour if it
	// is the one (attributeSDK).
	sdk           sdkSeen
	sdkCandidates []sdkCandidate
	// ends closes the scan's other sessions beside the rest of the scan
	// and its first session's close; shared with the second connection's
	// scanner.
	ends *ends
}

// ends closes sessions in the background. A stdio server that ignores its
// stdin closing keeps a session's Close for the close grace (and SIGTERM's):
// closing every session of the scan at once costs the scan one grace, not
// one per session.
type ends struct{ wg sync.WaitGroup }

// close starts closing c; a nil ends closes it at once.
func (e *ends) close(c *mcp.Client) {
	if e == nil {
		_ = c.Close()
		return
	}
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		_ = c.Close()
	}()
}

// wait waits for every close started.
func (e *ends) wait() {
	if e != nil {
		e.wg.Wait()
	}
}

func (s *scanner) find(rule, tool, pointer, msg string) {
	s.findSev(rule, severityOf(rule), tool, pointer, msg)
}

func (s *scanner) findSev(rule string, sev report.Severity, tool, pointer, msg string) {
	f := report.Finding{Rule: rule, Severity: sev, Tool: tool, Pointer: pointer, Message: msg}
	f.SetTrace(s.callFor(tool).IDs())
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
	t0 := s.opts.Now()
	c, err := mcp.Connect(ctx, s.cfg)
	s.startup = s.opts.Now().Sub(t0)
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
		s.rep.Meta.Stderr = s.stderrLines(s.c.StderrTail())
		_ = s.c.Close()
		s.ends.wait() // the other sessions closed beside this one
		s.shutdown(s.c)
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
	if s.listed {
		s.rep.Listed = &s.list
	}

	second := s.startSecondConnection(ctx)
	s.contracts(ctx)
	s.providers(ctx)
	s.conformance(ctx)
	s.probes(ctx)
	second()
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
	s.toolPage = s.list.ToolPages()
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

// startSecondConnection starts the tool-set stability check, which opens a
// session of its own; the function it returns waits for the check and
// records it. The check runs beside the rest of the scan (it shares
// nothing with the first session but the listing, read only), except with
// a tracer: its calls would then be taken for the ones the first session's
// findings were established by, so it runs alone, when the function is
// called.
func (s *scanner) startSecondConnection(ctx context.Context) (wait func()) {
	switch {
	case s.opts.SkipSecondConnection || !s.listed:
		return func() { s.check(RuleToolSetStable, CheckNotEstablished, "not run") }
	case s.opts.Tracer != nil:
		return func() { s.secondConnection(ctx) }
	}
	// sub records what the check finds; it is merged once the check is done.
	sub := &scanner{cfg: s.cfg, opts: s.opts, sess: s.sess, list: s.list, rep: &Report{}, ends: s.ends}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sub.secondConnection(ctx)
	}()
	return func() {
		<-done
		s.rep.Findings = append(s.rep.Findings, sub.rep.Findings...)
		s.rep.Conformance = append(s.rep.Conformance, sub.rep.Conformance...)
	}
}

// shutdown records how the stdio server of c ended when it was closed.
func (s *scanner) shutdown(c *mcp.Client) {
	sd, ok := c.Shutdown()
	if !ok {
		s.check(RuleStdioShutdown, CheckNotApplicable, "not stdio")
		return
	}
	ms := sd.Elapsed.Milliseconds()
	s.shutdownMS = &ms
	// Only 2026-07-28 asks a server to exit when its stdin closes; before
	// it the finding is advice and the check does not apply.
	failed := CheckFail
	if !mcp.IsModern(s.sess.Revision) {
		failed = CheckNotApplicable
	}
	switch sd.How {
	case mcp.ShutdownStdinClosed:
		s.findSev(RuleStdioShutdown, report.SeverityInfo, "", "", "the server exited when its stdin closed")
		s.check(RuleStdioShutdown, CheckPass, "exited when its stdin closed")
	case mcp.ShutdownTerminated:
		s.find(RuleStdioShutdown, "", "", "the server did not exit when its stdin closed; SIGTERM ended it")
		s.check(RuleStdioShutdown, failed, "SIGTERM ended it")
	case mcp.ShutdownKilled:
		s.find(RuleStdioShutdown, "", "", "the server did not exit when its stdin closed, nor on SIGTERM; SIGKILL ended it")
		s.check(RuleStdioShutdown, failed, "SIGKILL ended it")
	default:
		s.check(RuleStdioShutdown, CheckNotEstablished, "the server had exited before the scan closed it")
	}
}

func (s *scanner) connectFailed(err error) {
	var se *mcp.StartError
	if errors.As(err, &se) {
		s.rep.Meta.Stderr = s.stderrLines(se.Stderr)
	}
	switch {
	case errors.Is(err, mcp.ErrProtocolRefused):
		s.find(RuleRefused, "", "", "no protocol revision could be agreed: "+errText(err))
	case se != nil:
		f := &StartupFailure{Exited: se.Exited, Signal: se.Signal, Said: said(se.Stderr, s.secretValues())}
		var st *mcp.StartupTimeoutError
		if errors.As(err, &st) && !se.Exited {
			f.StartupTimeoutMS = st.Allowance.Milliseconds()
		}
		if se.Exited && se.Signal == "" {
			code := se.ExitCode
			f.ExitStatus = &code
		}
		s.rep.StartupFailure = f
		s.find(RuleUnreachable, "", "", "no MCP session could be opened: "+startupText(f, se.Err))
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
	noise, notRPC := 0, 0
	stdio := c.Session().Transport == mcp.TransportStdio
	for _, ob := range c.Observations() {
		switch ob.Kind {
		case "stdout-noise":
			noise += max(ob.Count, 1)
		case "invalid-message":
			// On stdio every message comes off stdout.
			if stdio {
				notRPC += max(ob.Count, 1)
			}
		case "oversize-frame":
			s.find(RuleOversizeFrame, "", "", fmt.Sprintf("%d message(s) over the %d-byte cap were discarded", max(ob.Count, 1), s.frameCap()))
		case "server-request":
			sev := s.serverRequestSeverity(ob.Detail)
			if sev != report.SeverityInfo {
				s.requests++
			}
			s.findSev(RuleServerRequest, sev, "", "", "the server sent a request during the scan: "+ob.Detail)
		case mcp.ObsRedirectFollowed, mcp.ObsRedirectCrossOrigin, mcp.ObsRedirectLimit:
			s.redirect(ob.Kind, ob.Detail, ob.Count)
		}
	}
	if noise+notRPC > 0 {
		s.noise += noise + notRPC
		s.find(RuleStdoutPurity, "", "", impurity(noise, notRPC))
	}
	if final {
		s.httpContentTypeCheck(c.Observations())
	}
	if final {
		if s.requests > 0 {
			s.check(RuleServerRequest, CheckFail, fmt.Sprintf("%d kind(s) of request the client did not allow", s.requests))
		} else {
			s.check(RuleServerRequest, CheckPass, "")
		}
	}
	switch {
	case !final:
	case s.sess.Transport != mcp.TransportStdio:
		s.check(RuleStdoutPurity, CheckNotApplicable, "not stdio")
	case s.noise > 0:
		s.check(RuleStdoutPurity, CheckFail, fmt.Sprintf("%d line(s) that are not JSON-RPC messages", s.noise))
	default:
		s.check(RuleStdoutPurity, CheckPass, "")
	}
}

// serverRequestSeverity grades a request the server sent the client (the
// scan declares no client capability): from 2026-07-28 a server sends no
// request at all (MUST); before it, a ping is allowed at any time, and any
// other request uses a capability the client did not declare (MUST from
// 2025-06-18, SHOULD before).
func (s *scanner) serverRequestSeverity(method string) report.Severity {
	switch {
	case mcp.IsModern(s.sess.Revision):
		return report.SeverityError
	case method == "ping":
		return report.SeverityInfo
	case s.sess.Revision < mcp.Rev20250618:
		return report.SeverityWarn
	}
	return report.SeverityError
}

// impurity words what a connection's stdout carried besides JSON-RPC
// messages: lines that are not JSON (blank ones included), and JSON that
// is no JSON-RPC 2.0 message (a log record, a message without "jsonrpc":
// "2.0").
func impurity(noise, notRPC int) string {
	var parts []string
	if noise > 0 {
		parts = append(parts, fmt.Sprintf("%d not JSON", noise))
	}
	if notRPC > 0 {
		parts = append(parts, fmt.Sprintf("%d JSON but no JSON-RPC message", notRPC))
	}
	return fmt.Sprintf("%d line(s) on stdout that are not JSON-RPC messages (%s)", noise+notRPC, strings.Join(parts, ", "))
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
	s.attributeSDK()
	citeRequirements(r)
	adviceOnly(r)
	report.Sort(r.Findings)
	r.Scores = ScoresOf(r)
	r.Requirements = AccountRequirements(r, s.sess.Capabilities)
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

// startupText says in one line what a stdio server did instead of
// completing the handshake (which ended with err) and what it said.
func startupText(f *StartupFailure, err error) string {
	var b strings.Builder
	switch {
	case f.Signal != "":
		fmt.Fprintf(&b, "the server was killed by %s during the handshake", f.Signal)
	case f.ExitStatus != nil:
		fmt.Fprintf(&b, "the server exited with status %d during the handshake", *f.ExitStatus)
	case f.StartupTimeoutMS > 0:
		fmt.Fprintf(&b, "the server wrote nothing within its start-up allowance of %s and was stopped", time.Duration(f.StartupTimeoutMS)*time.Millisecond)
	default:
		fmt.Fprintf(&b, "the server did not complete the handshake (%s) and was stopped", errText(err))
	}
	if f.Said != "" {
		fmt.Fprintf(&b, "; its stderr ends %q", f.Said)
	} else {
		b.WriteString("; it wrote nothing on stderr")
	}
	return b.String()
}

// Bounds of what a scan keeps of a server's stderr.
const (
	maxStderrLines = 20
	maxSaidBytes   = 200
)

// stderrLines keeps the last lines of a stdio server's stderr for Meta,
// with secret-looking values masked (internal/redact).
func (s *scanner) stderrLines(tail []string) []string {
	if len(tail) > maxStderrLines {
		tail = tail[len(tail)-maxStderrLines:]
	}
	mask := redact.Values(s.secretValues())
	out := make([]string, len(tail))
	for i, l := range tail {
		out[i] = redact.Line(mask(l))
	}
	return out
}

// secretValues are the secrets (redact.Secrets) of the environment and the
// command line the scan gave the server: a server may echo them.
func (s *scanner) secretValues() []string {
	var sec redact.Secrets
	for _, kv := range s.cfg.Env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			sec.Env(k, v)
		}
	}
	sec.Argv(s.cfg.Command)
	return sec.Values()
}

// said picks the line of a stderr tail that explains a failure: the last
// line labelled as an error ("Error: …", "Fatal error: …", "TypeError: …",
// "error: …"), else the last one that is not blank, a stack frame ("at …",
// "File …"), punctuation alone (a caret marker, the "}" closing a dumped
// object) or a runtime banner ("Node.js v22.1.0", "Traceback (…)"). It is
// masked as stderrLines does, and cut to maxSaidBytes.
func said(tail []string, secrets []string) string {
	mask := redact.Values(secrets)
	pick := func(l string) string { return cutText(redact.Line(mask(l)), maxSaidBytes) }
	for i := len(tail) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(tail[i]); errorLabelled(l) {
			return pick(l)
		}
	}
	for i := len(tail) - 1; i >= 0; i-- {
		l := strings.TrimSpace(tail[i])
		switch {
		case strings.TrimFunc(l, func(r rune) bool { return unicode.IsPunct(r) || unicode.IsSymbol(r) || unicode.IsSpace(r) }) == "",
			strings.HasPrefix(l, "at "), strings.HasPrefix(l, "File \""),
			strings.HasPrefix(l, "Node.js v"), strings.HasPrefix(l, "Traceback ("):
			continue
		}
		return pick(l)
	}
	return ""
}

// errorLabelled reports whether a line starts with an error label: a few
// words before a colon, the last of which names an error.
func errorLabelled(l string) bool {
	label, _, ok := strings.Cut(l, ":")
	if !ok || len(label) > 40 {
		return false
	}
	words := strings.Fields(strings.ToLower(label))
	if len(words) == 0 || len(words) > 3 {
		return false
	}
	last := words[len(words)-1]
	return strings.HasSuffix(last, "error") || strings.HasSuffix(last, "exception") || last == "fatal"
}

// cutText cuts s to at most n bytes on a rune boundary, marking the cut.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
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
