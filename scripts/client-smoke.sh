#!/bin/sh
# The client drill's smoke (make client-smoke; CI runs it): `study clients`
# on two clients of studies/clients (the official TypeScript and Go SDKs),
# then a check that every cell was observed: both clients drilled, every
# scenario over both transports, no cell without an outcome or a call.
# Cells that differ from the committed studies/clients/results.json are
# listed, not failed: a loaded machine may move a timing cell.
set -eu
cd "$(dirname "$0")/.."
bin=${MCPDRILL:-bin/mcpdrill}
out=${SMOKE_OUT:-out/client-smoke}
mkdir -p "$out"
"$bin" study clients --only ts-sdk --only go-sdk -j 2 -q -o "$out" studies/clients/clients.json
python3 - "$out/results.json" studies/clients/results.json <<'PY'
import json, sys
got = json.load(open(sys.argv[1]))
ref = {(c["name"], r["scenario"], r["transport"]): r["outcome"] for c in json.load(open(sys.argv[2]))["clients"] for r in c["results"]}
bad, moved = [], []
names = sorted(c["name"] for c in got["clients"])
if names != ["go-sdk", "ts-sdk"]:
    bad.append("clients %s, want go-sdk and ts-sdk" % names)
for c in got["clients"]:
    if c.get("error"):
        bad.append("%s: not drilled: %s" % (c["name"], c["error"]))
    cells = {(r["scenario"], r["transport"]): r for r in c["results"]}
    for s in got["scenarios"]:
        for t in ("stdio", "http"):
            r = cells.get((s, t))
            if r is None or r["outcome"] in ("", "no-call"):
                bad.append("%s %s %s: %s" % (c["name"], s, t, r and r["outcome"] or "no cell"))
            elif ref.get((c["name"], s, t)) not in (None, r["outcome"]):
                moved.append("%s %s %s: %s, committed %s" % (c["name"], s, t, r["outcome"], ref[(c["name"], s, t)]))
for m in moved:
    print("client-smoke: differs from the committed study: " + m, file=sys.stderr)
if bad:
    print("client-smoke: FAILED\n  " + "\n  ".join(bad), file=sys.stderr)
    sys.exit(1)
print("client-smoke: 2 clients x %d scenarios x 2 transports observed" % len(got["scenarios"]))
PY
