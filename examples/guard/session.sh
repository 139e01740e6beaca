#!/usr/bin/env bash
# One client session through the guard, as docs/guard.md records it:
#
#   ./session.sh [TESTBED FLAGS...]
#
# sends initialize, two tools/list and a tools/call of echo through
#
#   mcpdrill wrap --guard ./pins --server-id weather -- mcpdrill testbed --profile drifting FLAGS...
#
# and prints a line for each reply (but initialize's) and each notification,
# with the proxy's and the server's stderr where it comes. It exits with
# wrap's status. Run it in an empty directory with mcpdrill on PATH: the
# guard's store is left in ./pins.
set -o pipefail

requests() {
	printf '%s\n' \
		'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"session.sh","version":"1"}}}' \
		'{"jsonrpc":"2.0","method":"notifications/initialized"}' \
		'{"jsonrpc":"2.0","id":2,"method":"tools/list"}' \
		'{"jsonrpc":"2.0","id":3,"method":"tools/list"}' \
		'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}'
}

# replies prints each JSON-RPC line as one line of text; any other line
# (stderr) passes as it is.
replies() {
	awk '
	# str returns the first string member named key, unescaped.
	function str(key,  s) {
		if (!match($0, "\"" key "\":\"([^\"\\\\]|\\\\.)*\"")) return ""
		s = substr($0, RSTART + length(key) + 4, RLENGTH - length(key) - 5)
		gsub(/\\"/, "\"", s)
		gsub(/\\\\/, "\\", s)
		return s
	}
	!/^\{/ { print; next }
	!match($0, /"id":[0-9]+/) { print "<- " str("method"); next }
	{ id = substr($0, RSTART + 5, RLENGTH - 5) }
	id == 1 { next }
	match($0, /"code":-?[0-9]+/) { print "<- id " id " error " substr($0, RSTART + 7, RLENGTH - 7) ": " str("message"); next }
	id == 4 { print "<- id 4 tools/call: " (/"isError":true/ ? "tool error" : "ok"); next }
	{
		# Every tool has one inputSchema; a list the guard withholds
		# carries its status in _meta.
		n = gsub(/"inputSchema":/, "&")
		st = str("status")
		print "<- id " id " tools/list: " n " tools" (st == "" ? "" : " " st)
	}'
}

requests | mcpdrill wrap --guard ./pins --server-id weather -- mcpdrill testbed --profile drifting "$@" 2>&1 | replies
