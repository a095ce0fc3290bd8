# The README's test command is `make test`; .ci/run calls it.
GO ?= go

.PHONY: test build fmt-check vet bench

test: fmt-check vet
	$(GO) test ./...

build:
	$(GO) build -o flowq ./cmd/flowq

fmt-check:
	@out="$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))"; \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

# Benchmarks as BENCHMARKS.md reports them.
bench:
	$(GO) test ./normalform/trace -run '^$$' -bench Corpus -benchmem -count 5
