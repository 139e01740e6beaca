// Package testbed is mcpdrill's built-in MCP server. It speaks every
// revision from 2024-11-05 to 2026-07-28 over stdio (NDJSON), Streamable HTTP
// and the 2024-11-05 HTTP+SSE transport, and it comes in named profiles: a
// well-behaved one, and others that misbehave on purpose so that a scan, a
// proxy, a drift check or a guard has something real to find.
//
// The server is written directly on internal/jsonrpc and the standard
// library, never on an SDK, so that every misbehaviour is under its control.
// It is the default target of the demo, the fixture family of the project's
// tests, and a readable example of what each revision asks of a server.
package testbed

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"
)

// Protocol revisions the testbed knows, newest first.
const (
	Rev20260728 = "2026-07-28"
	Rev20251125 = "2025-11-25"
	Rev20250618 = "2025-06-18"
	Rev20250326 = "2025-03-26"
	Rev20241105 = "2024-11-05"
)

// AllRevisions lists every revision the testbed can speak, newest first.
var AllRevisions = []string{Rev20260728, Rev20251125, Rev20250618, Rev20250326, Rev20241105}

// ErrCrashed is returned by ServeStdio when a `crash` profile has written
// half a frame and stopped on purpose. A command serving the profile should
// exit with status 1 when it sees it, like a crashing server would.
var ErrCrashed = errors.New("testbed: crashed on purpose mid-response")

// Profile is one named server behaviour.
type Profile struct {
	// Name is how the profile is selected (`--profile NAME`).
	Name string
	// Summary is one line: what a scan of this profile should find.
	Summary string
	// Revisions are the protocol revisions the profile supports by default,
	// newest first.
	Revisions []string
	// Hostile marks profiles that attack the client (hangs, floods, huge
	// frames, crashes, pathological schemas) rather than merely misbehave.
	Hostile bool

	b behaviour
}

// Modern reports whether the profile speaks 2026-07-28 by default.
func (p Profile) Modern() bool { return slices.Contains(p.Revisions, Rev20260728) }

// Legacy reports whether the profile speaks any initialize-era revision by default.
func (p Profile) Legacy() bool { return slices.ContainsFunc(p.Revisions, isLegacy) }

// Options configures one testbed server. The zero value serves `good`.
type Options struct {
	// Profile names the profile; "" means "good".
	Profile string
	// Seed makes the generated data (search rows, weather, noise) reproducible.
	Seed uint64
	// Revisions overrides the supported revisions (newest first); nil keeps
	// the profile's default.
	Revisions []string
	// Version is serverInfo.version; "" keeps the profile's default. The
	// `drifting` profile serves tool set "1" or "2" according to it.
	Version string
	// DriftAfter is, for `drifting`, the number of tools/list requests
	// served before the server changes a tool description and announces it
	// with notifications/tools/list_changed: 0 means the default (3), a
	// negative value never drifts.
	DriftAfter int
	// PageSize overrides the profile's tools/list page size (0 keeps it).
	PageSize int
	// Reply overrides the HTTP reply style on /mcp: "json" or "sse"; "" keeps
	// the profile's choice.
	Reply string
	// HugeBytes is the size of the `hugeline` tools/list line; 0 means 100 MiB.
	HugeBytes int
	// SchemaDepth is the nesting depth of the `deep-schema` outputSchema; 0
	// means 10,000.
	SchemaDepth int
	// Delay is how long the `flood` profile waits before answering each
	// request; 0 means 2 s.
	Delay time.Duration
	// NoiseBytes is the size of each `flood` noise line; 0 means 64 KiB.
	NoiseBytes int
	// StartDelay is how long the `slow-start` profile reads nothing on
	// stdio; 0 means 3 s.
	StartDelay time.Duration
	// AllowedOrigins are extra Origin values the HTTP handler accepts besides
	// loopback origins and the request's own host.
	AllowedOrigins []string
	// OnCrash, when set, is called by the HTTP handler of the `crash` profile
	// after it has flushed half a frame, before it aborts the connection; a
	// command sets it to exit the process with status 1.
	OnCrash func() `json:"-"`
}

// Defaults for hostile options.
const (
	DefaultDriftAfter  = 3
	DefaultHugeBytes   = 100 << 20
	DefaultSchemaDepth = 10000
	DefaultDelay       = 2 * time.Second
	DefaultNoiseBytes  = 64 << 10
	DefaultStartDelay  = 3 * time.Second
)

// Profiles returns every profile, sorted by name.
func Profiles() []Profile {
	out := make([]Profile, 0, len(profiles))
	for _, p := range profiles {
		p.Revisions = slices.Clone(p.Revisions)
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Lookup returns the named profile.
func Lookup(name string) (Profile, bool) {
	for _, p := range profiles {
		if p.Name == name {
			p.Revisions = slices.Clone(p.Revisions)
			return p, true
		}
	}
	return Profile{}, false
}

// resolve validates o and fills in defaults.
func (o Options) resolve() (Profile, Options, error) {
	if o.Profile == "" {
		o.Profile = "good"
	}
	p, ok := Lookup(o.Profile)
	if !ok {
		return Profile{}, o, fmt.Errorf("testbed: unknown profile %q", o.Profile)
	}
	if o.Revisions == nil {
		o.Revisions = p.Revisions
	}
	if len(o.Revisions) == 0 {
		return Profile{}, o, errors.New("testbed: no protocol revision to serve")
	}
	for _, r := range o.Revisions {
		if !slices.Contains(AllRevisions, r) {
			return Profile{}, o, fmt.Errorf("testbed: unknown protocol revision %q", r)
		}
	}
	o.Revisions = slices.Clone(o.Revisions)
	sort.Sort(sort.Reverse(sort.StringSlice(o.Revisions)))
	if o.Version == "" {
		o.Version = p.b.version
	}
	if o.DriftAfter == 0 {
		o.DriftAfter = DefaultDriftAfter
	}
	if o.PageSize <= 0 {
		o.PageSize = p.b.pageSize
	}
	switch o.Reply {
	case "":
		o.Reply = "json"
		if p.b.sse {
			o.Reply = "sse"
		}
	case "json", "sse":
	default:
		return Profile{}, o, fmt.Errorf("testbed: reply style %q is not json or sse", o.Reply)
	}
	if o.HugeBytes <= 0 {
		o.HugeBytes = DefaultHugeBytes
	}
	if o.SchemaDepth <= 0 {
		o.SchemaDepth = DefaultSchemaDepth
	}
	if o.Delay <= 0 {
		o.Delay = DefaultDelay
	}
	if o.NoiseBytes <= 0 {
		o.NoiseBytes = DefaultNoiseBytes
	}
	if o.StartDelay <= 0 {
		o.StartDelay = DefaultStartDelay
	}
	return p, o, nil
}

func isLegacy(rev string) bool { return rev < Rev20260728 }
func isModern(rev string) bool { return rev >= Rev20260728 }
