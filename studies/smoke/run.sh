#!/bin/sh
# The study pipeline's smoke (make study-smoke; CI runs it after make test):
# study install of a few pinned servers of each registry (npm from the
# lockfile here, a Go SDK example with go install, our own Python server
# through the venv path from a wheel built here, offline), study run, study
# report, and a check of every row's outcome against expected.tsv: a broken
# pipeline fails here even when each command exits 0.
set -eu
cd "$(dirname "$0")"
bin=${MCPDRILL:-../../bin/mcpdrill}
out=${SMOKE_OUT:-out}
rm -rf "$out" && mkdir -p "$out/wheels"
python3 ../testdata/pypi/build_wheel.py "$out/wheels" > "$out/requirement.txt"
if ! cmp -s "$out/requirement.txt" pypi/probe/requirements.txt; then
  echo "study-smoke: the wheel's hash moved: $(cat "$out/requirement.txt"), pypi/probe/requirements.txt has $(cat pypi/probe/requirements.txt)" >&2
  exit 1
fi
start=$(date +%s)
"$bin" study install servers.json --find-links "$out/wheels" -j 4 -q
mid=$(date +%s)
"$bin" study run servers.json -o "$out/results.json" -j 4 --timeout 30s --request-timeout 5s -q
"$bin" study report "$out/results.json" -o "$out"
end=$(date +%s)
echo "study-smoke: install $((mid - start))s, run and report $((end - mid))s"
python3 - "$out/results.json" expected.tsv <<'PY'
import json, sys
rows = {r["name"]: r for r in json.load(open(sys.argv[1]))["servers"]}
want = dict(l.rstrip("\n").split("\t") for l in open(sys.argv[2]) if l.strip() and not l.startswith("#"))
bad = []
for name, outcome in sorted(want.items()):
    r = rows.get(name)
    got = r.get("outcome") if r else "(no row)"
    if got != outcome:
        bad.append("%s: %s, want %s (%s)" % (name, got, outcome, (r or {}).get("reason", "")))
if set(rows) != set(want):
    bad.append("rows %s, want %s" % (sorted(rows), sorted(want)))
for name in ("pypi:mcpdrill-pypi-probe", "go:go-sdk/hello", "mcp-hello-world"):
    if rows.get(name, {}).get("outcome") == "scanned" and not rows[name]["tools"]:
        bad.append(name + ": scanned, but no tools")
if bad:
    print("study-smoke: FAILED\n  " + "\n  ".join(bad), file=sys.stderr)
    sys.exit(1)
print("study-smoke: %d rows as expected" % len(rows))
PY
