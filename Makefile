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
	$(MAKE) -C testdata/corpus
	$(MAKE) -C gen/testdata/types
	$(MAKE) -C gen/testdata/large
	$(MAKE) -C gen/testdata/hostile

# The bundled example: syscall latency from kernel tracepoints.
demo:
	@if command -v clang-19 >/dev/null 2>&1 || command -v clang >/dev/null 2>&1; then \
		$(GO) generate ./examples/latency; \
	else \
		echo "no clang: running the committed skeleton"; \
	fi
	$(GO) run ./examples/latency -duration 3s

# Every benchmark, then one table of the runtime's figures and of the
# generated code's weight against bpf2go's, each against its target
# (internal/benchtable). The translations' aot-vs-kernel benchmarks run
# again in three builds that place the translated functions 32, 64 and 96
# bytes further (the skelgen_align tags), and the table gives the mean of
# the four placements. internal/weightbench runs once: each of its
# iterations is a go build.
bench:
	{ $(GO) test -run '^$$' -bench . -benchmem ./internal/aotbench/ ./internal/clangbench/ ./internal/ringbench/ ./runtime/bridge/ ./internal/skeltest/bytebuf/ ./runtime/ ./gen/ ./btfmin/ ./cmd/skelgen/; \
	  for a in 1 2 3; do $(GO) test -tags skelgen_align$$a -run '^$$' -bench '^Benchmark(AOT|Clang)$$/./(aot|varied)-vs-kernel' ./internal/aotbench/ ./internal/clangbench/; done; \
	  $(GO) test -run '^$$' -bench . -benchtime 1x ./internal/weightbench/; } 2>&1 | $(GO) run ./internal/benchtable

lint:
	$(GO) vet ./...
	test -z "$$(gofmt -l $$(git ls-files '*.go'))"

check:
	$(SKELGEN) check ./...

# Each fuzz target for a bounded time (FUZZTIME=10m for a long run).
FUZZTIME ?= 30s
FUZZ := runtime:FuzzRun runtime:FuzzWellFormed gen:FuzzReadObject gen:FuzzStripDWARF gen:FuzzHostileName runtime/bridge:FuzzLoadObject \
	btfmin:FuzzParseCORERelocations btfmin:FuzzParseObject btfmin:FuzzKernelNames asm:FuzzAssemble internal/conformance:FuzzParse \
	gen/aot:FuzzAOTRandom
fuzz:
	FUZZTIME=$(FUZZTIME) GO=$(GO) .ci/fuzz $(FUZZ)
