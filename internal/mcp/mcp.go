// Package mcp is mcpdrill's MCP client. It speaks every protocol revision
// (2024-11-05 through the modern stateless 2026-07-28) over stdio, Streamable
// HTTP (JSON and SSE replies, sessions) and the 2024-11-05 HTTP+SSE transport,
// detects the server's era, and records what it observed about the peer
// (stdout noise, oversize frames, server requests) without ever failing the
// session over a server's misbehaviour.
package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/mcpdrill/mcpdrill/internal/jsonrpc"
)

// Protocol revisions known to this client.
const (
	Rev20241105 = "2024-11-05"
	Rev20250326 = "2025-03-26"
	Rev20250618 = "2025-06-18"
	Rev20251125 = "2025-11-25"
	Rev20260728 = "2026-07-28"
	// LatestLegacy is the newest revision that uses the initialize handshake.
	LatestLegacy = Rev20251125
	// Latest is the newest revision this client speaks.
	Latest = Rev20260728
)

// Revisions lists every known revision, oldest first.
var Revisions = []string{Rev20241105, Rev20250326, Rev20250618, Rev20251125, Rev20260728}

// IsKnown reports whether rev is one of Revisions.
func IsKnown(rev string) bool {
	for _, r := range Revisions {
		if r == rev {
			return true
		}
	}
	return false
}

// IsModern reports whether rev belongs to the modern (stateless, per-request
// _meta) era, i.e. is 2026-07-28 or later. Revisions are dates, so any
// well-formed YYYY-MM-DD string compares lexically.
func IsModern(rev string) bool {
	if len(rev) != 10 || rev[4] != '-' || rev[7] != '-' {
		return false
	}
	return rev >= Rev20260728
}

// Era is the protocol era negotiated with a server.
type Era string

// Eras.
const (
	// EraLegacy is the initialize-handshake era (2025-11-25 and older).
	EraLegacy Era = "legacy"
	// EraModern is the stateless era (2026-07-28 and newer).
	EraModern Era = "modern"
)

// TransportKind names the transport a session runs over.
type TransportKind string

// Transport kinds.
const (
	// TransportStdio is a child process speaking NDJSON on stdin/stdout.
	TransportStdio TransportKind = "stdio"
	// TransportStreamableHTTP is the single-endpoint HTTP transport (2025-03-26+).
	TransportStreamableHTTP TransportKind = "streamable-http"
	// TransportSSE is the 2024-11-05 HTTP+SSE two-endpoint transport.
	TransportSSE TransportKind = "http+sse"
)

// Config describes a target server and the client's limits.
type Config struct {
	// Command is the stdio server's argv; Env holds extra KEY=VALUE entries
	// appended to os.Environ(), or with CleanEnv the whole environment;
	// Dir is its working directory.
	Command  []string
	Env      []string
	CleanEnv bool
	Dir      string

	// URL is the HTTP endpoint; Headers are sent on every request (values are
	// never reported); HTTPClient defaults to a plain client. Whatever the
	// client, its redirect policy is replaced by GuardRedirects': nothing is
	// sent to another origin.
	URL        string
	Headers    http.Header
	HTTPClient *http.Client

	// Protocol forces one revision (no detection, no fallback); "" auto-detects.
	Protocol string

	// RequestTimeout bounds each request (default 10s).
	RequestTimeout time.Duration
	// StartupTimeout is a stdio server's start-up allowance (default
	// DefaultStartupTimeout): until it has written its first line, the
	// handshake waits for it up to this long after it was started, when
	// that is longer than RequestTimeout. A first `npx -y` or `uvx` run
	// downloads the package before the server reads a byte. HTTP targets
	// are already running and have none.
	StartupTimeout time.Duration
	// DiscoverTimeout bounds the stdio server/discover probe (default 2s).
	DiscoverTimeout time.Duration
	// MaxFrame caps one response / line (default jsonrpc.DefaultMaxFrame).
	MaxFrame int
	// MaxListPages caps tools/list pagination (default 50).
	MaxListPages int
	// MaxPageTools caps the tools read from one tools/list page, and
	// MaxTools those read in all (defaults DefaultMaxPageTools and
	// DefaultMaxTools): a listing past either stops there (ToolList).
	MaxPageTools, MaxTools int
	// ClientName and ClientVersion go into clientInfo (defaults "mcpdrill", "dev").
	ClientName, ClientVersion string
	// IDPrefix, when set, makes request ids strings: IDPrefix and a number.
	IDPrefix string
	// StderrTail is how many lines of child stderr are kept (default 50).
	StderrTail int

	// Observer, when set, is told of every frame the client sends to a
	// stdio server (see Observer); nil observes nothing. HTTP targets are
	// observed by wrapping HTTPClient instead, which also sees statuses.
	Observer Observer
}

func (c Config) withDefaults() Config {
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = 10 * time.Second
	}
	if c.StartupTimeout <= 0 {
		c.StartupTimeout = DefaultStartupTimeout
	}
	if c.DiscoverTimeout <= 0 {
		c.DiscoverTimeout = 2 * time.Second
	}
	if c.MaxFrame <= 0 {
		c.MaxFrame = jsonrpc.DefaultMaxFrame
	}
	if c.MaxListPages <= 0 {
		c.MaxListPages = 50
	}
	if c.MaxPageTools <= 0 {
		c.MaxPageTools = DefaultMaxPageTools
	}
	if c.MaxTools <= 0 {
		c.MaxTools = DefaultMaxTools
	}
	if c.ClientName == "" {
		c.ClientName = "mcpdrill"
	}
	if c.ClientVersion == "" {
		c.ClientVersion = "dev"
	}
	if c.StderrTail <= 0 {
		c.StderrTail = 50
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{}
	}
	return c
}

// ServerInfo is the server's self-description (serverInfo).
type ServerInfo struct{ Name, Version, Title string }

// Session describes the negotiated connection.
type Session struct {
	// Revision is the negotiated protocol revision.
	Revision string
	// Era is legacy or modern.
	Era Era
	// Transport is the transport in use.
	Transport TransportKind
	// Server is the server's identity (initialize serverInfo or discover _meta).
	Server ServerInfo
	// Capabilities is the server's raw capabilities object.
	Capabilities json.RawMessage
	// Instructions is the server's optional instructions text.
	Instructions string
	// SessionID reports whether the server issued an Mcp-Session-Id.
	SessionID bool
	// Detection lists, in order, how the era and revision were chosen.
	Detection []string
	// Discover is the raw DiscoverResult when modern.
	Discover json.RawMessage
	// SupportedVersions are the versions the server said it supports, if any.
	SupportedVersions []string
}

// ToolList is the outcome of paging through tools/list.
type ToolList struct {
	Tools []Tool
	// Pages is how many pages were fetched.
	Pages int
	// Capped is true when MaxListPages, or a tool cap, stopped the
	// listing early.
	Capped bool
	// ToolsCapped is true when MaxPageTools or MaxTools stopped it;
	// ToolsDropped counts the tools of the last page that were not read
	// (later pages were not fetched).
	ToolsCapped  bool
	ToolsDropped int
	// CursorLoop is true when a nextCursor repeated and the listing stopped.
	CursorLoop bool
	// Duplicate is the first tool name listed twice in the listing ("":
	// none).
	Duplicate string
	// Ambiguity names the first member of a page that parsers could read
	// differently (see ListAmbiguity; "": none).
	Ambiguity string
	// TTLMs and CacheScope are the first page's caching hints, if present.
	TTLMs      *int64
	CacheScope string
	// HasTTL / HasCacheScope are true when the hint was present on every page.
	HasTTL, HasCacheScope bool
	// Raw holds the raw result object of each page.
	Raw []json.RawMessage
}

// Default tool caps of a listing (Config.MaxPageTools, Config.MaxTools).
const (
	DefaultMaxPageTools = 10_000
	DefaultMaxTools     = 100_000
)

// Complete reports whether the listing reached the end (not capped, no loop).
func (l ToolList) Complete() bool { return !l.Capped && !l.CursorLoop }

// ToolPages maps each listed tool name to the (0-based) page it was first
// listed on, so that what is said about a tool can name that page's request.
func (l ToolList) ToolPages() map[string]int {
	pages := make(map[string]int, len(l.Tools))
	for _, t := range l.Tools {
		if _, seen := pages[t.Name]; !seen {
			pages[t.Name] = t.Page
		}
	}
	return pages
}

// Observation is something the client noticed about the peer that is not an
// error of mcpdrill's own (the scanner turns these into findings).
type Observation struct {
	// Kind is e.g. "stdout-noise", "oversize-frame", "stderr", "unsolicited",
	// "late-response", "notification", "http-status", "server-request",
	// or one of the ObsRedirect* kinds.
	Kind string
	// Detail never contains a header value.
	Detail string
	// Count is how often it happened.
	Count int
}

// DefaultStartupTimeout is a stdio server's start-up allowance when
// Config.StartupTimeout sets none: long enough for a cold `npx -y` of a
// typical server (a first download measured 22-25 s), with room.
const DefaultStartupTimeout = 60 * time.Second

// StartupTimeoutError is the handshake's error for a stdio server that
// wrote nothing within its start-up allowance. It matches ErrTimeout.
type StartupTimeoutError struct {
	// Allowance is the start-up allowance it was given.
	Allowance time.Duration
}

// Error implements error.
func (e *StartupTimeoutError) Error() string {
	return fmt.Sprintf("mcp: the server wrote nothing within its start-up allowance of %s", e.Allowance)
}

// Unwrap makes a StartupTimeoutError match ErrTimeout.
func (e *StartupTimeoutError) Unwrap() error { return ErrTimeout }

// Sentinel errors (use errors.Is).
var (
	// ErrTimeout: no reply within RequestTimeout (or the ctx deadline).
	ErrTimeout = errors.New("mcp: request timed out")
	// ErrServerExited: the stdio child exited or closed stdout.
	ErrServerExited = errors.New("mcp: server exited")
	// ErrClosed: the client was closed.
	ErrClosed = errors.New("mcp: client closed")
	// ErrProtocolRefused: no mutually supported protocol revision.
	ErrProtocolRefused = errors.New("mcp: protocol revision refused")
	// ErrUnreachable: the server could not be started or connected to.
	ErrUnreachable = errors.New("mcp: server unreachable")
	// ErrNoResponse: the transport ended the exchange without a response
	// (e.g. an SSE stream closed early, or 202 to a request).
	ErrNoResponse = errors.New("mcp: no response")
	// ErrFrameTooLarge: a reply exceeded MaxFrame and was discarded.
	ErrFrameTooLarge = jsonrpc.ErrFrameTooLarge
	// ErrUndecodable: a reply carried the request's id but could not be
	// decoded (for example nesting deeper than the JSON decoder accepts).
	ErrUndecodable = errors.New("mcp: reply could not be decoded")
)

// HTTPError is an HTTP status the client could not treat as a JSON-RPC reply.
type HTTPError struct {
	Status int
	// Header is the response header (callers read WWW-Authenticate).
	Header http.Header
	// Body is the parsed JSON-RPC body, if it was one.
	Body *jsonrpc.Message
}

// Error implements error. It never includes header values.
func (e *HTTPError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "mcp: HTTP %d %s", e.Status, http.StatusText(e.Status))
	if e.Body != nil && e.Body.Error != nil {
		fmt.Fprintf(&b, " (JSON-RPC error %d)", e.Body.Error.Code)
	}
	return b.String()
}

// Meta keys of the modern per-request protocol fields.
const (
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	MetaClientInfo         = "io.modelcontextprotocol/clientInfo"
	MetaServerInfo         = "io.modelcontextprotocol/serverInfo"
)

// HTTP header names used by the client.
const (
	HeaderProtocolVersion = "MCP-Protocol-Version"
	HeaderSessionID       = "Mcp-Session-Id"
	HeaderMethod          = "Mcp-Method"
	HeaderName            = "Mcp-Name"
)

// ResultType returns a result's resultType ("complete" when absent, as the
// modern spec requires of clients), or "" when msg carries no result.
func ResultType(msg *jsonrpc.Message) string {
	if msg == nil || msg.Result == nil {
		return ""
	}
	var r struct {
		ResultType *string `json:"resultType"`
	}
	if json.Unmarshal(msg.Result, &r) != nil || r.ResultType == nil {
		return "complete"
	}
	return *r.ResultType
}
