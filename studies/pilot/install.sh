#!/bin/sh
# Installs the pilot study's servers at pinned versions: the npm ones from
# package-lock.json (install scripts off: no server here needs one, and some
# dependencies would download browsers), the Go ones with `go install
# MODULE/PKG@VERSION` (checked against the Go checksum database) into bin/.
set -eu
cd "$(dirname "$0")"
npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
gobin() { mkdir -p "bin/$1" && GOBIN="$PWD/bin/$1" GOFLAGS=-mod=mod go install "$2"; }
# Official Go SDK: its published example servers, and gopls (built on the Go SDK).
gobin go-sdk github.com/modelcontextprotocol/go-sdk/examples/server/everything@v1.8.0
gobin go-sdk github.com/modelcontextprotocol/go-sdk/examples/server/memory@v1.8.0
gobin go-sdk github.com/modelcontextprotocol/go-sdk/examples/server/sequentialthinking@v1.8.0
gobin go-sdk github.com/modelcontextprotocol/go-sdk/examples/server/toolschemas@v1.8.0
gobin gopls golang.org/x/tools/gopls@v0.23.0
# mark3labs/mcp-go: its published example servers.
gobin mcp-go github.com/mark3labs/mcp-go/examples/everything@v1.2.1
gobin mcp-go github.com/mark3labs/mcp-go/examples/structured_input_and_output@v1.2.1
