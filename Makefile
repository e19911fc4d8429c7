# Developer targets. `make demo` and `make test` are the README's two commands.
GO ?= go
SKELGEN := $(GO) run ./cmd/skelgen

.PHONY: build test testdata demo bench lint check fuzz

build:
	$(GO) build ./...

test:
	$(GO) test ./...

# Rebuild every committed object and skeleton (needs clang-19 and bpftool).
testdata:
	$(GO) generate ./...
	$(MAKE) -C btfmin/testdata

# The bundled example: syscall latency from kernel tracepoints.
demo:
	$(GO) generate ./examples/latency
	$(GO) run ./examples/latency -duration 3s

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./runtime/ ./gen/ ./btfmin/

lint:
	$(GO) vet ./...
	test -z "$$(gofmt -l $$(git ls-files '*.go'))"

check:
	$(SKELGEN) check ./...
