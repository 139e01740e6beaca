# mcpdrill — build, test and demo targets. `make demo` and `make test` are the
# two commands a fresh machine needs (see README.md).

GO        ?= go
BIN       := bin/mcpdrill
NPM_DIR   := testdata/npm
NPM_BIN   := $(CURDIR)/$(NPM_DIR)/node_modules/.bin
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT    ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null)$(shell git diff --quiet HEAD -- 2>/dev/null || echo -dirty)
LDFLAGS   := -X main.version=$(VERSION) -X main.commit=$(COMMIT)
DEMO_PROFILE ?= vacuous
STUDY_DIR := studies/pilot
ECOSYSTEM_DIR := studies/ecosystem
ECOSYSTEM_POPULATION := npm: the 300 most downloaded packages of 2026-12-03 whose name holds mcp or whose summary names MCP; PyPI: the 30 best-ranked with mcp in the name (they need a run that reaches PyPI); Go: the example servers of the official Go SDK and of mcp-go, and gopls; previous releases of the most downloaded npm servers and of the Go ones (METHODOLOGY, The ecosystem study)
FUZZTIME  ?= 20s
# GoReleaser, pinned: it runs from the Go module proxy (go run), never from a downloaded binary.
GORELEASER_VERSION := v2.17.0

# Real npm MCP servers (pinned in testdata/npm/package-lock.json) for integration tests.
export MCPDRILL_NPM_EVERYTHING  := $(NPM_BIN)/mcp-server-everything
export MCPDRILL_NPM_FILESYSTEM  := $(NPM_BIN)/mcp-server-filesystem
export MCPDRILL_NPM_MEMORY      := $(NPM_BIN)/mcp-server-memory

CLIENTS_DIR := studies/clients

.PHONY: all build test test-short bench fuzz lint docs demo npm conformance study study-ecosystem study-smoke study-recheck study-clients clients-install client-smoke screenshot release-snapshot clean

all: build

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/mcpdrill

# Installs the pinned npm servers, and the README's example client, when npm
# is present and they are missing.
npm: $(NPM_DIR)/node_modules/.package-lock.json examples/client/node_modules/.package-lock.json

$(NPM_DIR)/node_modules/.package-lock.json: $(NPM_DIR)/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
		cd $(NPM_DIR) && npm ci --no-audit --no-fund --loglevel=error; \
	else echo "npm not found: integration tests with npm servers will be skipped"; fi

examples/client/node_modules/.package-lock.json: examples/client/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
		cd examples/client && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error; \
	else echo "npm not found: the example client's test will be skipped"; fi

test: npm
	$(GO) test -race -timeout 20m ./...

test-short:
	$(GO) test -short ./...

bench: npm
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 2s ./proxy/...

fuzz:
	@for pkg in $$($(GO) list ./...); do \
		for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
			echo "== $$pkg $$f"; \
			$(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
		done; \
	done

# The fault and rule tables of METHODOLOGY.md and docs/ are generated from
# the catalogues; `make test` fails when they differ (TestDocsGenerated), and
# this rewrites them.
docs:
	$(GO) test ./cmd/mcpdrill -run TestDocsGenerated -count=1 -update

# staticcheck, pinned with its dependencies in tools/go.mod and tools/go.sum:
# a module of its own, so the main go.mod requires nothing for it. Built into
# bin/ from the Go module proxy (checked against go.sum) on first use.
STATICCHECK := bin/staticcheck

$(STATICCHECK): tools/go.mod tools/go.sum
	cd tools && $(GO) build -o ../$(STATICCHECK) honnef.co/go/tools/cmd/staticcheck

lint: $(STATICCHECK)
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(STATICCHECK) ./...

# The official MCP conformance suite (Node 22 from npm) against the Go SDK's
# everything-server, direct and through `mcpdrill wrap`: the scores must match.
conformance:
	scripts/conformance.sh

# Reproduces studies/pilot/results.json (identical outside meta) from pinned servers.
study: build
	$(STUDY_DIR)/install.sh
	./$(BIN) study run $(STUDY_DIR)/servers.json -o $(STUDY_DIR)/results.json -j 4 --timeout 90s --request-timeout 5s
	./$(BIN) study report $(STUDY_DIR)/results.json -o $(STUDY_DIR)

# The ecosystem study (studies/ecosystem, METHODOLOGY "The ecosystem study"): installs
# every pinned package of its population alone under the study directory (npm projects
# already installed from the same lockfile are kept; files shared through the store),
# scans them, and reports. The lockfiles come from go run ./studies/population lock.
study-ecosystem: build
	./$(BIN) study install $(ECOSYSTEM_DIR)/servers.json -j 4 --timeout 15m
	./$(BIN) study run $(ECOSYSTEM_DIR)/servers.json -o $(ECOSYSTEM_DIR)/results.json -j 4 --timeout 30s --request-timeout 5s \
		--population "$(ECOSYSTEM_POPULATION)"
	./$(BIN) study report $(ECOSYSTEM_DIR)/results.json --previous $(ECOSYSTEM_DIR)/previous-results.json -o $(ECOSYSTEM_DIR)

# Re-runs a few rows of the published ecosystem study at HEAD and compares
# them with studies/ecosystem/results.json outside meta (CI runs it): the
# rows install from the study's own lockfiles (npm ci, go install) and run
# on loopback. A few minutes at most.
RECHECK_ROWS := @modelcontextprotocol/server-everything @modelcontextprotocol/server-everything@2026.7.4 \
	@modelcontextprotocol/server-memory go:go-sdk/everything go:mcp-go/everything
RECHECK_DIR  := $(CURDIR)/out/recheck
study-recheck: build
	mkdir -p $(RECHECK_DIR)
	./$(BIN) study install $(ECOSYSTEM_DIR)/servers.json -q -j 2 --timeout 10m --log $(RECHECK_DIR)/install-log.json \
		$(foreach r,$(RECHECK_ROWS),--only $(r))
	./$(BIN) study run $(ECOSYSTEM_DIR)/servers.json -q -j 2 --timeout 30s --request-timeout 5s \
		--install-log $(RECHECK_DIR)/install-log.json $(foreach r,$(RECHECK_ROWS),--only $(r)) -o $(RECHECK_DIR)/results.json
	MCPDRILL_RECHECK=$(RECHECK_DIR)/results.json $(GO) test -count=1 -run TestRecheckPublished ./studies/

# The study pipeline's smoke (CI runs it): a few pinned servers of each registry
# installed, scanned and reported, every row's outcome checked.
study-smoke: build
	studies/smoke/run.sh

# The client study (studies/clients, METHODOLOGY "The client study"): the
# pinned client libraries (npm ci from the lockfile, install scripts off; the
# Go adapters built from their module), then every adapter drilled.
clients-install:
	cd $(CLIENTS_DIR) && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
	cd $(CLIENTS_DIR) && $(GO) build -o bin/ ./go/gosdk ./go/mcpgo

study-clients: build clients-install
	./$(BIN) study clients -o $(CLIENTS_DIR) -j 2 $(CLIENTS_DIR)/clients.json

# The client drill's smoke (CI runs it): two clients of the study, the
# official TypeScript SDK and the official Go SDK, through every scenario
# over both transports; every cell must be observed (scripts/client-smoke.sh).
client-smoke: build clients-install
	scripts/client-smoke.sh

# Renders the pilot scoreboard in headless Chromium to out/study/scoreboard.png (not committed).
screenshot: build
	@mkdir -p out/study
	./$(BIN) study report $(STUDY_DIR)/results.json -o out/study
	chromium --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update \
		--disable-sync --no-first-run --user-data-dir=$$(mktemp -d) --window-size=1400,2400 \
		--screenshot=$(CURDIR)/out/study/scoreboard.png file://$(CURDIR)/out/study/index.html

# The release archives of every platform (.goreleaser.yaml) in dist/, published nowhere, then
# checked (scripts/release-check.sh). GoReleaser's first build takes minutes; later runs use the
# Go build cache. CI runs this.
release-snapshot:
	$(GO) run github.com/goreleaser/goreleaser/v2@$(GORELEASER_VERSION) check
	$(GO) run github.com/goreleaser/goreleaser/v2@$(GORELEASER_VERSION) release --snapshot --clean
	scripts/release-check.sh

demo: build
	@echo "mcpdrill scan of the built-in testbed (profile $(DEMO_PROFILE)), over stdio:"
	@./$(BIN) scan --fail-on never -- ./$(BIN) testbed --profile $(DEMO_PROFILE)

clean:
	rm -rf bin out dist
