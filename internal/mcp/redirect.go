package mcp

import (
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
)

// MaxRedirects is how many redirects within the origin one request follows.
const MaxRedirects = 3

// HostClass says where a redirect pointed without naming the URL (which may
// carry a token in its query).
type HostClass string

// Host classes of a redirect target, as read from its URL (names are never
// resolved).
const (
	// HostSameOrigin: the target has the request's own origin.
	HostSameOrigin HostClass = "same origin"
	// HostSameHost: the same host on another port or scheme.
	HostSameHost HostClass = "same host, other port or scheme"
	// HostLoopback: a loopback address or a localhost name.
	HostLoopback HostClass = "loopback host"
	// HostPrivate: a private-network, unique-local or link-local address.
	HostPrivate HostClass = "private-network host"
	// HostPublic: any other IP address.
	HostPublic HostClass = "public address"
	// HostNamed: another host name (not resolved, so not classed further).
	HostNamed HostClass = "another host name"
	// HostNotHTTP: a URL that is not http or https.
	HostNotHTTP HostClass = "non-HTTP URL"
)

// Redirect is one redirect answer the client saw.
type Redirect struct {
	// Status is the HTTP status (301, 302, 303, 307 or 308).
	Status int
	// Target is the class of the Location's host relative to the request.
	Target HostClass
	// Followed is true when the client followed it (same origin, within
	// MaxRedirects).
	Followed bool
}

// Observation kinds a redirect is recorded under.
const (
	ObsRedirectFollowed    = "redirect-followed"     // within the origin, followed
	ObsRedirectCrossOrigin = "redirect-cross-origin" // to another origin, refused
	ObsRedirectLimit       = "redirect-limit"        // within the origin, past MaxRedirects
)

// Kind is the Observation kind the redirect is recorded under.
func (r Redirect) Kind() string {
	switch {
	case r.Followed:
		return ObsRedirectFollowed
	case r.Target == HostSameOrigin:
		return ObsRedirectLimit
	}
	return ObsRedirectCrossOrigin
}

// String describes the redirect for an observation or a finding; it never
// contains the URL.
func (r Redirect) String() string {
	switch {
	case r.Followed:
		return fmt.Sprintf("HTTP %d redirect within the origin followed", r.Status)
	case r.Target == HostSameOrigin:
		return fmt.Sprintf("HTTP %d redirect within the origin not followed: more than %d in a row", r.Status, MaxRedirects)
	}
	return fmt.Sprintf("HTTP %d redirect to another origin (%s) not followed; nothing was sent there", r.Status, r.Target)
}

// RedirectError is a redirect the client refused to follow: one to another
// origin, or one past MaxRedirects within the origin. Nothing was sent to
// its target.
type RedirectError struct{ Redirect }

// Error implements error. It never contains the URL.
func (e *RedirectError) Error() string { return "mcp: " + e.Redirect.String() }

// GuardRedirects returns a copy of base (nil: a plain client) whose
// redirect policy follows a redirect only when its target has the origin
// (scheme, host and port) of the request's first URL, at most MaxRedirects
// times; any other redirect makes Do fail with a *RedirectError, and its
// target is sent nothing, so configured headers and the body stay with the
// origin. seen, when not nil, is told of every redirect, followed or not.
// base's own CheckRedirect is replaced.
func GuardRedirects(base *http.Client, seen func(Redirect)) *http.Client {
	c := &http.Client{}
	if base != nil {
		*c = *base
	}
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		r := Redirect{Target: classifyRedirect(via[0].URL, req.URL)}
		if req.Response != nil {
			r.Status = req.Response.StatusCode
		}
		r.Followed = r.Target == HostSameOrigin && len(via) <= MaxRedirects
		if seen != nil {
			seen(r)
		}
		if !r.Followed {
			return &RedirectError{r}
		}
		return nil
	}
	return c
}

// classifyRedirect places to relative to from.
func classifyRedirect(from, to *url.URL) HostClass {
	if to.Scheme != "http" && to.Scheme != "https" {
		return HostNotHTTP
	}
	if sameOrigin(from, to) {
		return HostSameOrigin
	}
	h := strings.ToLower(strings.TrimSuffix(to.Hostname(), "."))
	if strings.EqualFold(h, strings.TrimSuffix(from.Hostname(), ".")) {
		return HostSameHost
	}
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return HostLoopback
	}
	a, err := netip.ParseAddr(h)
	if err != nil {
		return HostNamed
	}
	a = a.Unmap().WithZone("")
	switch {
	case a.IsLoopback() || a.IsUnspecified():
		return HostLoopback
	case a.IsPrivate() || a.IsLinkLocalUnicast():
		return HostPrivate
	}
	return HostPublic
}

// sameOrigin reports whether two URLs share scheme, host and port (an
// absent port is the scheme's default).
func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) &&
		strings.EqualFold(a.Hostname(), b.Hostname()) &&
		portOf(a) == portOf(b)
}

func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch strings.ToLower(u.Scheme) {
	case "http":
		return "80"
	case "https":
		return "443"
	}
	return ""
}
