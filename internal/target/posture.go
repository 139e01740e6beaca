package target

// Posture is what a run established about who an HTTP server will talk to.
// It is recorded on every HTTP run, whether or not anything is wrong: a
// posture that is only reported when something is broken cannot serve as
// evidence that nothing is. It never holds a header value.
type Posture struct {
	// Target is the classification the findings were graded by.
	Target Classification `json:"target"`
	// Scheme is the URL scheme, http or https.
	Scheme string `json:"scheme"`
	// AuthorizationPresented is true when the user supplied headers
	// (--header); HeaderNames lists their names, never their values.
	AuthorizationPresented bool     `json:"authorization_presented"`
	HeaderNames            []string `json:"header_names,omitempty"`
	// Verdict is anonymous, enforced, indeterminate or not_established.
	Verdict string `json:"verdict"`
	// Anonymous is the request that shows what a caller without credentials gets.
	Anonymous AnonymousProbe `json:"anonymous"`
	// Challenge describes the WWW-Authenticate of a refused anonymous request.
	Challenge *Challenge `json:"challenge,omitempty"`
	// ResourceMetadata is the protected-resource-metadata discovery that
	// followed a refusal.
	ResourceMetadata *ResourceMetadata `json:"resource_metadata,omitempty"`
	// Origin is the foreign-Origin check.
	Origin *OriginCheck `json:"origin,omitempty"`
}

// Posture verdicts.
const (
	VerdictAnonymous      = "anonymous"
	VerdictEnforced       = "enforced"
	VerdictIndeterminate  = "indeterminate"
	VerdictNotEstablished = "not_established"
)

// Sources of the anonymous evidence.
const (
	// SourcePrimary: no credentials were configured, so the run's own
	// requests were anonymous and nothing extra was sent.
	SourcePrimary = "primary"
	// SourceProbe: credentials were configured and one tools/list was sent
	// with them stripped.
	SourceProbe = "stripped_probe"
	// SourceSkipped: credentials were configured and --skip-auth-probe
	// turned the stripped request off.
	SourceSkipped = "skipped"
)

// Outcomes of the anonymous request.
const (
	OutcomeListed  = "listed"
	OutcomeRefused = "refused"
	OutcomeFailed  = "failed"
	OutcomeNotRun  = "not_run"
)

// AnonymousProbe is the anonymous request and what came back.
type AnonymousProbe struct {
	Source  string `json:"source"`
	Outcome string `json:"outcome"`
	// HTTPStatus is the status of a refusal or failure, when there was one.
	HTTPStatus int `json:"http_status,omitempty"`
	// Tools is how many tools the anonymous listing returned.
	Tools *int `json:"tools,omitempty"`
	// SameTools, on a stripped probe, says whether the anonymous listing
	// named exactly the tools the authenticated one did.
	SameTools *bool `json:"same_tools,omitempty"`
	// Detail says why a failed request is not evidence (never a value).
	Detail string `json:"detail,omitempty"`
}

// Challenge is what the WWW-Authenticate header of a refusal carried:
// scheme names and which parameters were present, never their values
// (except the error code, a fixed token).
type Challenge struct {
	Status  int      `json:"status"`
	Present bool     `json:"present"`
	Schemes []string `json:"schemes,omitempty"`
	// ResourceMetadata is true when a resource_metadata parameter was given.
	ResourceMetadata bool `json:"resource_metadata"`
	Scope            bool `json:"scope"`
	// Error is the error parameter (e.g. invalid_token, insufficient_scope).
	Error string `json:"error,omitempty"`
}

// ResourceMetadata is the protected-resource-metadata (RFC 9728) discovery:
// the resource_metadata link first, then the path-suffixed and root
// /.well-known/oauth-protected-resource documents.
type ResourceMetadata struct {
	// Found is true when a document answered with a JSON object.
	Found bool `json:"found"`
	// Source is header, well_known_path or well_known_root.
	Source string `json:"source,omitempty"`
	// URL is the document that answered, redacted like every URL shown (no
	// user info or fragment, query values masked); so are Attempts' URLs.
	URL string `json:"url,omitempty"`
	// AuthorizationServers counts the listed authorization servers.
	AuthorizationServers int `json:"authorization_servers"`
	// ResourceMatches says whether the document's resource names the endpoint.
	ResourceMatches *bool `json:"resource_matches,omitempty"`
	// Attempts lists every URL tried and its status (0: no answer; -1: not
	// fetched because it points at another origin).
	Attempts []Attempt `json:"attempts"`
}

// Attempt is one metadata fetch.
type Attempt struct {
	URL    string `json:"url"`
	Status int    `json:"status"`
}

// OriginCheck is one handshake sent with a foreign Origin header: a server
// reachable from a browser should refuse it with 403 (DNS rebinding), which
// the specification requires from 2025-11-25 on.
type OriginCheck struct {
	Origin string `json:"origin"`
	// Outcome is refused (403), accepted, or failed.
	Outcome    string `json:"outcome"`
	HTTPStatus int    `json:"http_status,omitempty"`
	// Required is true when the negotiated revision requires the refusal.
	Required bool   `json:"required"`
	Detail   string `json:"detail,omitempty"`
}
