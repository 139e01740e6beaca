package testbed

import "github.com/mcpdrill/mcpdrill/internal/jsonrpc"

// errKind names a situation in which a conformant server answers with a
// JSON-RPC error. A profile's errorStyle may answer it differently.
type errKind int

const (
	ekParse              errKind = iota // the line is not JSON
	ekInvalidRequest                    // JSON, but not a JSON-RPC request
	ekMethodNotFound                    // unknown or unavailable method
	ekUnknownTool                       // tools/call names no tool
	ekInvalidArgs                       // arguments violate inputSchema (JSON-RPC form, before 2025-11-25)
	ekInvalidParams                     // params malformed (not an object, no name, bad cursor...)
	ekMissingMeta                       // 2026-07-28 request without its required _meta fields
	ekUnsupportedVersion                // protocol revision not served
	ekHeaderMismatch                    // HTTP headers disagree with the body
	ekResourceNotFound                  // resources/read of a URI the server does not have (before 2026-07-28)
	ekInternal                          // the server failed (a backend it needs is down)
)

// conformantCodes are the codes the specification asks for.
var conformantCodes = map[errKind]int{
	ekParse:              jsonrpc.CodeParseError,
	ekInvalidRequest:     jsonrpc.CodeInvalidRequest,
	ekMethodNotFound:     jsonrpc.CodeMethodNotFound,
	ekUnknownTool:        jsonrpc.CodeInvalidParams,
	ekInvalidArgs:        jsonrpc.CodeInvalidParams,
	ekInvalidParams:      jsonrpc.CodeInvalidParams,
	ekMissingMeta:        jsonrpc.CodeInvalidParams,
	ekUnsupportedVersion: jsonrpc.CodeUnsupportedProtocolVersion,
	ekHeaderMismatch:     jsonrpc.CodeHeaderMismatch,
	ekResourceNotFound:   jsonrpc.CodeResourceNotFound,
	ekInternal:           jsonrpc.CodeInternalError,
}

// modernStatus is the HTTP status 2026-07-28 attaches to an error kind.
var modernStatus = map[errKind]int{
	ekMethodNotFound:     404,
	ekMissingMeta:        400,
	ekUnsupportedVersion: 400,
	ekHeaderMismatch:     400,
}

// errAnswer is how a non-conformant profile answers an error situation.
type errAnswer struct {
	drop   bool           // send nothing at all
	code   int            // answer with this code instead (when result is nil)
	result map[string]any // answer with this successful result instead
}

// errorStyle overrides conformant answers; a nil style is conformant.
type errorStyle map[errKind]errAnswer

// sloppyErrors is the `sloppy-errors` profile's style: the mistakes real
// servers make most.
var sloppyErrors = errorStyle{
	ekParse:          {drop: true},
	ekInvalidRequest: {code: -32000},
	ekMethodNotFound: {result: map[string]any{}},
	ekUnknownTool: {result: map[string]any{"content": []any{
		map[string]any{"type": "text", "text": "no such tool; nothing was done"}}}},
	ekInvalidArgs:        {code: jsonrpc.CodeInternalError},
	ekInvalidParams:      {code: jsonrpc.CodeInternalError},
	ekMissingMeta:        {code: jsonrpc.CodeInternalError},
	ekUnsupportedVersion: {code: jsonrpc.CodeInternalError},
	ekHeaderMismatch:     {code: jsonrpc.CodeInvalidRequest},
}
