package scan

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/mcp"
	"github.com/mcpdrill/mcpdrill/internal/redact"
	"github.com/mcpdrill/mcpdrill/internal/target"
	"github.com/mcpdrill/mcpdrill/internal/telemetry"
	"github.com/mcpdrill/mcpdrill/report"
)

// Authentication-posture rule ids.
const (
	RuleAuthAnonymousList   = "MCP-AUTH-ANONYMOUS-LIST"
	RuleAuthEnforced        = "MCP-AUTH-ENFORCED"
	RuleAuthNoChallenge     = "MCP-AUTH-NO-CHALLENGE"
	RuleAuthIndeterminate   = "MCP-AUTH-INDETERMINATE"
	RuleAuthPlaintext       = "MCP-AUTH-PLAINTEXT-TRANSPORT"
	RuleAuthMetadataMissing = "MCP-AUTH-METADATA-MISSING"
	RuleAuthMetadataInvalid = "MCP-AUTH-METADATA-INVALID"
	RuleAuthOriginAccepted  = "MCP-AUTH-ORIGIN-ACCEPTED"
	RuleAuthRedirect        = "MCP-AUTH-REDIRECT"
)

// ForeignOrigin is the Origin the origin check sends: a name under the
// reserved .invalid domain, which no browser page can have.
const ForeignOrigin = "https://mcpdrill-origin-check.invalid"

// maxMetadataBody bounds a protected-resource-metadata document.
const maxMetadataBody = 256 << 10

func authRules() report.Catalogue {
	return report.Catalogue{
		rule(RuleAuthAnonymousList, report.SeverityWarn, "The tool inventory came back to a request carrying no credential",
			"tools/list answered a request without any of the configured headers (or, with none configured, the run's own request). Graded by target class: info on a local host, warn on dev, staging and unknown, error on production. The finding names the class it applied; --target-class overrides the classification."),
		rule(RuleAuthEnforced, report.SeverityInfo, "An anonymous request was refused",
			"The anonymous tools/list (or the handshake before it) was refused with HTTP 401 or 403. Recorded as info because it is the evidence that authentication is enforced."),
		rule(RuleAuthNoChallenge, report.SeverityWarn, "A refusal carried no WWW-Authenticate",
			"A 401 or 403 without a WWW-Authenticate header leaves a client no way to discover where to obtain a credential."),
		rule(RuleAuthIndeterminate, report.SeverityWarn, "The anonymous request did not complete",
			"The anonymous request failed (no connection, a timeout, a 5xx or another non-auth status). A failed request is not evidence of enforcement, so nothing is claimed about anonymous access."),
		rule(RuleAuthPlaintext, report.SeverityWarn, "Plain HTTP to a host that is not local",
			"The endpoint is http:// and the host does not classify as local: requests, and any credential on them, cross the network unencrypted. Error when credentials are configured. Established from the URL alone, so no span is named."),
		rule(RuleAuthMetadataMissing, report.SeverityWarn, "No protected-resource metadata after a refusal",
			"After a refusal neither the resource_metadata link of the challenge nor /.well-known/oauth-protected-resource (path-suffixed, then root) answered with a JSON document, so a client cannot find the authorization server (RFC 9728)."),
		rule(RuleAuthMetadataInvalid, report.SeverityWarn, "Protected-resource metadata is unusable",
			"The metadata document answered but lists no authorization_servers, or its resource does not name this endpoint."),
		rule(RuleAuthOriginAccepted, report.SeverityWarn, "A foreign Origin was accepted",
			"A handshake carrying Origin: "+ForeignOrigin+" was served. From 2025-11-25 a Streamable HTTP server must refuse an invalid Origin with 403 (DNS-rebinding defence); checked only on those revisions."),
		rule(RuleAuthRedirect, report.SeverityWarn, "The endpoint answered with a redirect",
			"mcpdrill follows a redirect only within the endpoint's origin (scheme, host and port), at most 3 in a row, and records it (info). A redirect to another origin is not followed and nothing is sent there: the finding names the status and the target's host class (same host on another port or scheme, loopback, private network, public address, another host name), never the URL. Error when headers are configured, because a client that follows it (a 307 or 308 re-sends the body too) hands the credential to a host it was not issued for: the MCP authorization specification binds tokens to the MCP server (RFC 8707 audience), and browsers drop Authorization on a cross-origin redirect (WHATWG Fetch). More than 3 redirects within the origin is a warn. No MCP clause forbids a server to redirect; the finding records what was observed."),
	}
}

// AuthOptions configure ProbeAuth.
type AuthOptions struct {
	// Class overrides the target classification ("" derives it from the URL).
	Class target.Class
	// SkipAnonymousProbe turns off the tools/list sent with the configured
	// headers stripped (the CLI's --skip-auth-probe).
	SkipAnonymousProbe bool
	// CheckOrigin sends one handshake with a foreign Origin.
	CheckOrigin bool
	// Revision is the revision the run negotiated ("" when none was).
	Revision string
	// Tracer names the spans of the probe's calls (nil: no ids).
	Tracer *telemetry.Tracer
}

// Primary is what the run's own connection and listing observed, with the
// configured headers.
type Primary struct {
	// Listed is true when tools/list completed; Tools are the names listed.
	Listed bool
	Tools  []string
	// Err is the connect or list error otherwise.
	Err error
	// Call is the request that established the outcome (the first tools/list
	// page, or the request that failed); zero when untraced.
	Call telemetry.Call
}

// AuthResult is the posture and its findings.
type AuthResult struct {
	Posture  *target.Posture
	Findings []report.Finding
}

// ProbeAuth establishes the authentication posture of the HTTP server cfg
// points at. Without configured headers nothing extra is sent for the
// anonymous question: the run's own listing was anonymous. With headers, one
// more connection lists tools with every configured header stripped (unless
// SkipAnonymousProbe). A refusal is followed by protected-resource-metadata
// discovery (sent without any configured header). It never reports a header
// value.
func ProbeAuth(ctx context.Context, cfg mcp.Config, o AuthOptions, p Primary) AuthResult {
	cls := target.ClassifyURL(cfg.URL).Override(o.Class)
	u, _ := url.Parse(cfg.URL)
	pos := &target.Posture{Target: cls, AuthorizationPresented: len(cfg.Headers) > 0, HeaderNames: headerNames(cfg.Headers)}
	if u != nil {
		pos.Scheme = strings.ToLower(u.Scheme)
	}
	a := &authRun{cfg: cfg, o: o, pos: pos, evidence: cls.String()}

	if pos.Scheme == "http" && cls.Class != target.Local {
		sev := report.SeverityWarn
		msg := "the endpoint is plain http:// to a host that is not local"
		if pos.AuthorizationPresented {
			sev = report.SeverityError
			msg += "; the configured headers cross the network unencrypted"
		}
		a.add(RuleAuthPlaintext, sev, msg, telemetry.Call{})
	}

	switch {
	case !pos.AuthorizationPresented:
		pos.Anonymous.Source = target.SourcePrimary
		a.anonymous(ctx, p.Listed, len(p.Tools), p.Err, p.Call, nil)
	case o.SkipAnonymousProbe:
		pos.Anonymous = target.AnonymousProbe{Source: target.SourceSkipped, Outcome: target.OutcomeNotRun, Detail: "skipped at the caller's request"}
		pos.Verdict = target.VerdictNotEstablished
	default:
		pos.Anonymous.Source = target.SourceProbe
		anon := cfg
		anon.Headers = nil
		mark := o.Tracer.Mark()
		names, err := listNames(ctx, anon)
		var primary []string
		if p.Listed {
			primary = p.Tools
		}
		a.anonymous(ctx, err == nil, len(names), err, lastCall(o.Tracer.Since(mark), "tools/list", err == nil), sameNames(primary, names, p.Listed && err == nil))
	}
	if o.CheckOrigin {
		a.origin(ctx)
	}
	report.Sort(a.fs)
	return AuthResult{Posture: pos, Findings: a.fs}
}

type authRun struct {
	cfg      mcp.Config
	o        AuthOptions
	pos      *target.Posture
	evidence string
	fs       []report.Finding
}

func (a *authRun) add(rule string, sev report.Severity, msg string, c telemetry.Call) {
	f := report.Finding{Rule: rule, Severity: sev, Message: msg, Evidence: a.evidence}
	f.SetTrace(c.IDs())
	a.fs = append(a.fs, f)
}

// anonymous grades what the anonymous request got.
func (a *authRun) anonymous(ctx context.Context, listed bool, n int, err error, c telemetry.Call, same *bool) {
	an := &a.pos.Anonymous
	var he *mcp.HTTPError
	switch {
	case listed:
		an.Outcome, an.Tools, an.SameTools = target.OutcomeListed, &n, same
		a.pos.Verdict = target.VerdictAnonymous
		msg := fmt.Sprintf("tools/list returned %d tool(s) to a request carrying no credential", n)
		if a.pos.Anonymous.Source == target.SourceProbe {
			msg = fmt.Sprintf("with the configured headers stripped, tools/list still returned %d tool(s)", n)
			if same != nil && *same {
				msg += ", the same tools as with them"
			}
		}
		a.add(RuleAuthAnonymousList, anonymousSeverity(a.pos.Target.Class), msg, c)
	case errors.As(err, &he) && (he.Status == http.StatusUnauthorized || he.Status == http.StatusForbidden):
		an.Outcome, an.HTTPStatus = target.OutcomeRefused, he.Status
		a.pos.Verdict = target.VerdictEnforced
		a.add(RuleAuthEnforced, report.SeverityInfo, fmt.Sprintf("the anonymous request was refused with HTTP %d", he.Status), c)
		a.challenge(ctx, he, c)
	default:
		an.Outcome = target.OutcomeFailed
		a.pos.Verdict = target.VerdictIndeterminate
		what := "did not complete"
		if err != nil {
			what = "failed: " + errText(err)
		}
		if errors.As(err, &he) {
			an.HTTPStatus = he.Status
		}
		an.Detail = "a failed request is not evidence of enforcement"
		a.add(RuleAuthIndeterminate, report.SeverityWarn, "the anonymous request "+what+"; nothing is claimed about anonymous access", c)
	}
}

func anonymousSeverity(c target.Class) report.Severity {
	switch c {
	case target.Local:
		return report.SeverityInfo
	case target.Production:
		return report.SeverityError
	}
	return report.SeverityWarn
}

// challenge records the WWW-Authenticate of a refusal and discovers the
// protected-resource metadata.
func (a *authRun) challenge(ctx context.Context, he *mcp.HTTPError, c telemetry.Call) {
	ch := &target.Challenge{Status: he.Status}
	a.pos.Challenge = ch
	var link string
	if vals := he.Header.Values("WWW-Authenticate"); len(vals) > 0 {
		ch.Present = true
		for _, cl := range ParseChallenges(strings.Join(vals, ", ")) {
			ch.Schemes = append(ch.Schemes, cl.Scheme)
			if v, ok := cl.Params["resource_metadata"]; ok {
				ch.ResourceMetadata = true
				if link == "" {
					link = v
				}
			}
			if _, ok := cl.Params["scope"]; ok {
				ch.Scope = true
			}
			if v, ok := cl.Params["error"]; ok && ch.Error == "" && isToken(v) {
				ch.Error = v
			}
		}
	} else {
		a.add(RuleAuthNoChallenge, report.SeverityWarn, fmt.Sprintf("HTTP %d came back without WWW-Authenticate: a client cannot discover where to authenticate", he.Status), c)
	}
	a.metadata(ctx, link, c)
}

// metadata runs protected-resource-metadata discovery: the challenge's
// resource_metadata link (same origin only), then the path-suffixed and the
// root well-known documents. Its findings name the refused request that
// started the discovery (the metadata GETs are not MCP calls).
func (a *authRun) metadata(ctx context.Context, link string, refused telemetry.Call) {
	md := &target.ResourceMetadata{Attempts: []target.Attempt{}}
	a.pos.ResourceMetadata = md
	base, err := url.Parse(a.cfg.URL)
	if err != nil {
		return
	}
	type cand struct{ src, u string }
	var cands []cand
	if link != "" {
		cands = append(cands, cand{"header", link})
	}
	root := &url.URL{Scheme: base.Scheme, Host: base.Host, Path: "/.well-known/oauth-protected-resource"}
	if p := strings.TrimSuffix(base.EscapedPath(), "/"); p != "" {
		suffixed := *root
		suffixed.Path += p
		cands = append(cands, cand{"well_known_path", suffixed.String()})
	}
	cands = append(cands, cand{"well_known_root", root.String()})
	// A metadata document served from another origin after a redirect is
	// not this endpoint's: such a redirect fails the fetch.
	client := mcp.GuardRedirects(a.cfg.HTTPClient, nil)
	var invalid string
	for _, c := range cands {
		u, err := url.Parse(c.u)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
			md.Attempts = append(md.Attempts, target.Attempt{URL: "(not an http URL)", Status: -1})
			continue
		}
		shown := redact.URL(c.u)
		if !strings.EqualFold(u.Scheme, base.Scheme) || !strings.EqualFold(u.Host, base.Host) {
			md.Attempts = append(md.Attempts, target.Attempt{URL: shown, Status: -1})
			continue
		}
		status, doc := fetchMetadata(ctx, client, c.u, a.cfg.RequestTimeout)
		md.Attempts = append(md.Attempts, target.Attempt{URL: shown, Status: status})
		if doc == nil {
			continue
		}
		md.Found, md.Source, md.URL = true, c.src, shown
		md.AuthorizationServers = len(doc.AuthorizationServers)
		if doc.Resource != "" {
			m := sameResource(doc.Resource, base)
			md.ResourceMatches = &m
		}
		switch {
		case md.AuthorizationServers == 0:
			invalid = "the metadata document at " + shown + " lists no authorization_servers"
		case md.ResourceMatches != nil && !*md.ResourceMatches:
			invalid = "the metadata document at " + shown + " names a resource other than this endpoint"
		}
		break
	}
	switch {
	case !md.Found:
		a.add(RuleAuthMetadataMissing, report.SeverityWarn, "no protected-resource metadata was found (resource_metadata link, then /.well-known/oauth-protected-resource)", refused)
	case invalid != "":
		a.add(RuleAuthMetadataInvalid, report.SeverityWarn, invalid, refused)
	}
}

type prmDoc struct {
	Resource             string   `json:"resource"`
	AuthorizationServers []string `json:"authorization_servers"`
}

// fetchMetadata GETs a metadata document without any configured header.
// It returns the status (0 when there was no answer) and the document when
// the answer was 200 with a JSON object.
func fetchMetadata(ctx context.Context, client *http.Client, u string, timeout time.Duration) (int, *prmDoc) {
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, nil
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, nil
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadataBody))
	if err != nil {
		return resp.StatusCode, nil
	}
	var raw map[string]json.RawMessage
	if json.Unmarshal(b, &raw) != nil {
		return resp.StatusCode, nil
	}
	var d prmDoc
	_ = json.Unmarshal(raw["resource"], &d.Resource)
	var servers []any
	_ = json.Unmarshal(raw["authorization_servers"], &servers)
	for _, s := range servers {
		if str, ok := s.(string); ok && str != "" {
			d.AuthorizationServers = append(d.AuthorizationServers, str)
		}
	}
	return resp.StatusCode, &d
}

// sameResource compares a metadata resource identifier with the endpoint:
// same scheme and host, and the endpoint's path at or under the resource's.
func sameResource(resource string, endpoint *url.URL) bool {
	r, err := url.Parse(resource)
	if err != nil || !strings.EqualFold(r.Scheme, endpoint.Scheme) || !strings.EqualFold(r.Host, endpoint.Host) {
		return false
	}
	rp := strings.TrimSuffix(r.Path, "/")
	ep := strings.TrimSuffix(endpoint.Path, "/")
	return rp == "" || rp == ep || strings.HasPrefix(ep, rp+"/")
}

// origin sends one handshake with a foreign Origin (and the configured headers).
func (a *authRun) origin(ctx context.Context) {
	oc := &target.OriginCheck{Origin: ForeignOrigin, Required: a.o.Revision >= mcp.Rev20251125}
	a.pos.Origin = oc
	if a.o.Revision == "" {
		oc.Outcome, oc.Detail = target.OutcomeNotRun, "no session was negotiated"
		return
	}
	cfg := a.cfg
	cfg.Headers = cfg.Headers.Clone()
	if cfg.Headers == nil {
		cfg.Headers = http.Header{}
	}
	cfg.Headers.Set("Origin", ForeignOrigin)
	mark := a.o.Tracer.Mark()
	c, err := mcp.Connect(ctx, cfg)
	call := lastCall(a.o.Tracer.Since(mark), "", false)
	var he *mcp.HTTPError
	switch {
	case err == nil:
		_ = c.Close()
		oc.Outcome = "accepted"
		if oc.Required {
			a.add(RuleAuthOriginAccepted, report.SeverityWarn, fmt.Sprintf("a handshake with Origin %s was served; %s requires 403", ForeignOrigin, a.o.Revision), call)
		} else {
			oc.Detail = "not required before " + mcp.Rev20251125
		}
	case errors.As(err, &he) && he.Status == http.StatusForbidden:
		oc.Outcome, oc.HTTPStatus = target.OutcomeRefused, he.Status
	case errors.As(err, &he):
		oc.Outcome, oc.HTTPStatus, oc.Detail = target.OutcomeFailed, he.Status, "HTTP "+fmt.Sprint(he.Status)+" is not an origin refusal"
	default:
		oc.Outcome, oc.Detail = target.OutcomeFailed, errText(err)
	}
}

// listNames connects and lists tool names.
func listNames(ctx context.Context, cfg mcp.Config) ([]string, error) {
	c, err := mcp.Connect(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	list, err := c.ListTools(ctx)
	if err != nil {
		return nil, err
	}
	return toolNames(list.Tools), nil
}

// lastCall picks the call that established an outcome: the first call of
// method when ok (the first page of a listing), otherwise the last call made
// (the one that failed).
func lastCall(calls []telemetry.Call, method string, ok bool) telemetry.Call {
	if ok {
		for _, c := range calls {
			if c.Method == method {
				return c
			}
		}
	}
	if len(calls) == 0 {
		return telemetry.Call{}
	}
	return calls[len(calls)-1]
}

func sameNames(a, b []string, known bool) *bool {
	if !known {
		return nil
	}
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	same := slices.Equal(x, y)
	return &same
}

func headerNames(h http.Header) []string {
	var out []string
	for k := range h {
		out = append(out, http.CanonicalHeaderKey(k))
	}
	slices.Sort(out)
	return out
}

func isToken(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r == '-' || r == '.' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')) {
			return false
		}
	}
	return true
}
