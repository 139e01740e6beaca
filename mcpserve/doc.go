// Package mcpserve is mcpdrill as a stdio MCP server (`mcpdrill mcp`): an
// agent can scan, fingerprint and drift-check the MCP servers its user has
// configured, and look up what a rule id means. It is written on
// internal/jsonrpc, like the testbed, and serves both eras: 2026-07-28
// (stateless, server/discover) and the initialize revisions from
// 2024-11-05 to 2025-11-25 (outputSchema and structuredContent from
// 2025-06-18 on).
//
// The model controls every argument of every call. What that could be
// turned into, and what stops it (each has a test in abuse_test.go):
//
//   - a command line: no argument takes one. A stdio server is started only
//     as a configuration the user keeps for their own client says, by its
//     name (Targets);
//   - a file of its choosing: the config argument only selects among the
//     configurations this server may read (the user's own client
//     configurations, or the files `mcpdrill mcp --config` named at start);
//     any other path is refused without being opened. A workspace's
//     configuration (a cloned repository's .vscode/mcp.json) is read only
//     when the user started the server with --trust-workspace;
//   - a server name that runs a command: only names in those files resolve,
//     and an entry that needs a value the user would type (${input:ID}) or
//     is disabled is refused;
//   - a URL to an internal host, or with credentials: a URL with user info
//     is refused; headers are never sent to a URL; every connection's
//     address is checked when dialled (after DNS, on every redirect and
//     reconnection): link-local (cloud metadata), multicast and unspecified
//     addresses never, loopback and private ones only for an origin the
//     user allowed at start (--allow-url); no proxy is used;
//   - huge outputs: results list at most 100 findings and 200 tools (500
//     fingerprints), say how many they left out, cut every string a server
//     controls, and are checked against the tool's own outputSchema before
//     they are sent; a message over 8 MiB is refused; each call has a
//     deadline and at most two run at once;
//   - prompt injection from a scanned server: its text reaches the model
//     only as string values of a structured result, escaped by
//     internal/safetext (no control, bidirectional, zero-width or tag
//     characters), cut, with the target's secrets masked; every tool's
//     description and the outputSchema say those strings are untrusted
//     data, never instructions (tested with an injecting server and with
//     the project's hostile corpus);
//   - secrets: values that placeholders resolved, an entry's environment
//     and header values, and URL query values are masked in every result.
package mcpserve
