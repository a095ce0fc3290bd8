# The README's test command is `make test`; .ci/run calls it.
GO ?= go

.PHONY: test test-race build build-duckdb test-duckdb fmt-check vet bench scenario-setup fuzz-smoke browser-setup tokens

test: scenario-setup browser-setup fmt-check vet
	$(GO) test ./...
	$(MAKE) test-duckdb
	$(MAKE) test-race

# The tests of shared and pooled state (kernels, trackers, decoders,
# encoders, the terms' memo, concurrent puts, the detector's pooled
# tables, records lent across a scan's goroutines) under the race detector:
# they assert the same results from goroutines at once, which only the
# detector turns into a failure when the sharing is unsynchronised.
test-race:
	$(GO) test -race -count=1 -run 'Concurrent|PoolKeepsNothing|SearcherReuse|SearcherReset|FilterRowsLent|LentRowsSame' ./normalform/... ./index ./index/ingest ./planner

# DuckDB (the lake's SQL engine, linked with cgo) builds only with the
# duckdb tag, so that `go run ./cmd/flowq` stays quick on a fresh machine;
# this builds, vets and tests what the tag adds (the first build, with
# 144 MB of modules to fetch, takes about a minute and a half on two cores).
test-duckdb:
	$(GO) vet -tags duckdb ./index/lake/... ./cmd/flowq ./internal/workload/cmd/lakebench
	$(GO) test -tags duckdb ./index/lake/... ./internal/workload/cmd/lakebench
	$(GO) test -tags duckdb ./cmd/flowq -run 'SQL|Lake'

# The scenario tests' contracts: the npm packages pinned by
# internal/scenario/npm/package-lock.json (Uniswap V2, V3 and V4, WETH9,
# OpenZeppelin, solc) and the project's bots compiled with solc-js into
# internal/scenario/npm/build. Neither is committed.
scenario-setup:
	cd internal/scenario/npm && npm ci --no-audit --no-fund --loglevel=error && node compile.js

# Every fuzz target, 50,000 executions each, as CI runs them (about four
# minutes on two cores, builds included; the log gives each target's
# executions, time and rate); go test ./... runs their seed corpora and
# regressions already. Each target has its own bound (4 minutes); the
# whole run's is wider than 15 minutes, which a loaded machine passed
# (fifteen targets took 13 minutes at load 5 to 6).
fuzz-smoke:
	FLOWQ_FUZZ_SMOKE=50000x $(GO) test ./internal/fuzzsmoke -run TestFuzzSmoke -count=1 -v -timeout 60m

# The web page's browser tests (repl/serve/browser_test.go) drive Debian's
# headless Chromium and need Graphviz's dot for the pictures: installed
# here when missing (as root, as CI runs; else with sudo).
browser-setup:
	@if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1 || ! command -v dot >/dev/null 2>&1; then \
		SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends chromium graphviz fonts-dejavu-core; \
	fi

build:
	$(GO) build -o flowq ./cmd/flowq

# flowq with `flowq sql` on embedded DuckDB (about 100 MB against 34 MB).
build-duckdb:
	$(GO) build -tags duckdb -o flowq ./cmd/flowq

fmt-check:
	@out="$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))"; \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

# Benchmarks as BENCHMARKS.md reports them.
bench:
	$(GO) test ./normalform/trace -run '^$$' -bench Corpus -benchmem -count 5

# normalform/tokens_list.go: the symbols and decimals of the Uniswap
# default token list, from its npm package at TOKENLIST_VERSION (the
# version the committed file names in its first line); `go generate
# ./normalform` runs this too.
TOKENLIST_VERSION ?= 22.21.0
tokens:
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	(cd "$$tmp" && npm pack --silent @uniswap/default-token-list@$(TOKENLIST_VERSION) >/dev/null && tar xzf uniswap-default-token-list-*.tgz) && \
	$(GO) run ./internal/gentokens "$$tmp/package" > normalform/tokens_list.go.new && \
	mv normalform/tokens_list.go.new normalform/tokens_list.go
