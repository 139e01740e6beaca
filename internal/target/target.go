// Package target classifies the server a run is pointed at (local, dev,
// staging, production or unknown) and describes what a run established about
// who that server will talk to (its authentication posture). It is data and
// pure functions: no I/O.
package target

import (
	"fmt"
	"net/netip"
	"net/url"
	"strings"
)

// Class is how consequential a target is judged to be.
type Class string

// Classes, from least to most consequential (Unknown sits between staging
// and production).
const (
	Local      Class = "local"
	Dev        Class = "dev"
	Staging    Class = "staging"
	Production Class = "production"
	Unknown    Class = "unknown"
)

// Classes lists every class in the order --help shows them.
var Classes = []Class{Local, Dev, Staging, Production, Unknown}

// ParseClass reads a --target-class value.
func ParseClass(s string) (Class, error) {
	c := Class(strings.ToLower(strings.TrimSpace(s)))
	for _, k := range Classes {
		if c == k {
			return c, nil
		}
	}
	return "", fmt.Errorf("unknown target class %q (want local, dev, staging, production or unknown)", s)
}

// Preproduction reports whether the class is local, dev or staging: the
// classes on which tools may be invoked without an explicit production
// acknowledgement.
func (c Class) Preproduction() bool { return c == Local || c == Dev || c == Staging }

// Classification is a class with the reason it was chosen, so that a reader
// can disagree with it.
type Classification struct {
	Class Class `json:"class"`
	// Host is the host name or address that was classified ("" for stdio).
	Host string `json:"host,omitempty"`
	// Reason says which rule chose the class.
	Reason string `json:"reason"`
	// Overridden is true when --target-class set the class.
	Overridden bool `json:"overridden,omitempty"`
}

// String renders the classification for a finding's evidence.
func (c Classification) String() string {
	if c.Overridden {
		return fmt.Sprintf("target class %s (set by --target-class)", c.Class)
	}
	return fmt.Sprintf("target class %s (%s)", c.Class, c.Reason)
}

// Override returns the classification with its class replaced by the user's.
func (c Classification) Override(k Class) Classification {
	if k == "" {
		return c
	}
	return Classification{Class: k, Host: c.Host, Reason: "set by --target-class; derived: " + string(c.Class) + " (" + c.Reason + ")", Overridden: true}
}

// Stdio is the classification of a server run as a child process.
func Stdio() Classification {
	return Classification{Class: Local, Reason: "stdio child process on this machine"}
}

// ClassifyURL classifies the host of an http(s) URL. A URL that does not
// parse or has no host is Unknown.
func ClassifyURL(raw string) Classification {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return Classification{Class: Unknown, Reason: "no host could be read from the URL"}
	}
	return Classify(u.Hostname())
}

// Environment markers looked for in the labels of a host name (split on "."
// and "-"). They are whole tokens: "backstage" is not "stage", "devops" is
// not "dev".
var (
	devTokens     = tokenSet("dev", "devel", "develop", "development", "test", "testing", "qa", "sandbox", "sbx", "local", "ci")
	stagingTokens = tokenSet("staging", "stage", "stg", "preprod", "pre-prod", "preproduction", "uat", "nonprod", "non-prod")
	prodTokens    = tokenSet("prod", "production", "prd", "live")
)

func tokenSet(ts ...string) map[string]bool {
	m := map[string]bool{}
	for _, t := range ts {
		m[t] = true
	}
	return m
}

// Classify classifies a host name or IP address literal (IPv6 with or without
// brackets, with or without a zone).
//
// Addresses: loopback, unspecified, RFC 1918, link-local, unique-local and
// IPv4-mapped forms of these are local; any other address is unknown (an
// address says nothing about its environment).
//
// Names: localhost, *.localhost and *.local (mDNS) are local, except
// *.cluster.local (Kubernetes cluster DNS), which is unknown; names under
// the reserved .test, .example and .invalid are dev; names under private-use
// suffixes (.internal, .lan, .corp, .intranet, .home.arpa) and single-label
// names are unknown unless a marker says otherwise. Environment markers
// (dev, test, qa, staging, stg, uat, prod …) count only as whole tokens of
// the labels left of the registrable domain, so foo.dev, dev.to and
// backstage.io are production, not dev or staging. Any other public name is
// production.
func Classify(host string) Classification {
	h := strings.ToLower(strings.TrimSpace(host))
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	h = strings.TrimSuffix(h, ".")
	c := Classification{Host: h}
	if h == "" {
		c.Class, c.Reason = Unknown, "empty host"
		return c
	}
	if a, err := netip.ParseAddr(h); err == nil {
		return classifyAddr(c, a)
	}
	labels := strings.Split(h, ".")
	if allNumeric(labels) {
		c.Class, c.Reason = Unknown, "numeric host that is not a canonical IP address"
		return c
	}
	last := labels[len(labels)-1]
	switch {
	case h == "localhost" || last == "localhost":
		c.Class, c.Reason = Local, "localhost name"
		return c
	case strings.HasSuffix(h, ".cluster.local"):
		c.Class, c.Reason = Unknown, "Kubernetes cluster DNS name (not mDNS)"
		return c
	case last == "local":
		c.Class, c.Reason = Local, "mDNS .local name"
		return c
	case last == "test" || last == "example" || last == "invalid":
		c.Class, c.Reason = Dev, "name under the reserved ."+last+" domain"
		return c
	}
	// Labels that may carry an environment marker: all of a single-label
	// name, otherwise those left of the last two labels (the registrable
	// domain, approximated without a public-suffix list).
	private := false
	for _, suf := range []string{".internal", ".lan", ".corp", ".intranet", ".home.arpa", ".private"} {
		if strings.HasSuffix("."+h, suf) {
			private = true
		}
	}
	var scan []string
	switch {
	case len(labels) == 1:
		scan = labels
	case private:
		scan = labels[:len(labels)-1]
	default:
		scan = labels[:len(labels)-2]
	}
	if k, tok := markers(scan); k != "" {
		c.Class, c.Reason = k, fmt.Sprintf("environment marker %q in the host name", tok)
		return c
	}
	switch {
	case len(labels) == 1:
		c.Class, c.Reason = Unknown, "single-label host name without an environment marker"
	case private:
		c.Class, c.Reason = Unknown, "private-use domain without an environment marker"
	default:
		c.Class, c.Reason = Production, "public host name without an environment marker"
	}
	return c
}

func classifyAddr(c Classification, a netip.Addr) Classification {
	a = a.Unmap().WithZone("")
	c.Host = a.String()
	switch {
	case a.IsLoopback():
		c.Class, c.Reason = Local, "loopback address"
	case a.IsUnspecified():
		c.Class, c.Reason = Local, "unspecified address (this machine)"
	case a.IsPrivate():
		c.Class, c.Reason = Local, "private-network address"
	case a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast():
		c.Class, c.Reason = Local, "link-local address"
	default:
		c.Class, c.Reason = Unknown, "public IP address (an address names no environment)"
	}
	return c
}

// markers finds the most consequential environment marker among labels:
// production beats staging beats dev, so "dev-proxy.prod" is production.
func markers(labels []string) (Class, string) {
	var found Class
	var tok string
	rank := map[Class]int{Dev: 1, Staging: 2, Production: 3}
	consider := func(k Class, t string) {
		if rank[k] > rank[found] {
			found, tok = k, t
		}
	}
	match := func(p string) (Class, bool) {
		switch {
		case prodTokens[p]:
			return Production, true
		case stagingTokens[p]:
			return Staging, true
		case devTokens[p]:
			return Dev, true
		}
		return "", false
	}
	for _, l := range labels {
		if k, ok := match(strings.TrimRight(l, "0123456789")); ok {
			consider(k, l)
			continue
		}
		for _, p := range strings.FieldsFunc(l, func(r rune) bool { return r == '-' || r == '_' }) {
			if k, ok := match(strings.TrimRight(p, "0123456789")); ok {
				consider(k, p)
			}
		}
	}
	return found, tok
}

func allNumeric(labels []string) bool {
	for _, l := range labels {
		digits := "0123456789"
		if h, ok := strings.CutPrefix(l, "0x"); ok {
			l, digits = h, "0123456789abcdef"
		}
		if l == "" || strings.Trim(l, digits) != "" {
			return false
		}
	}
	return true
}
