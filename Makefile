# acpd — build and test entry points. `make test` is the README's test command
# and what CI runs (.ci/run); it installs everything the tests need first.
GO ?= go
export PATH := $(CURDIR)/testdata/node_modules/.bin:$(PATH)

.PHONY: build run test test-deps test-windows dist dist-check vet staticcheck cross generate bench bench-all clean

# Release builds are static: no cgo anywhere (faster start, no libc
# dependency, the same code on every platform).
# Every build names its commit in --version: `make build` stamps the
# commit and its date (the version is packaging/version with -dev), `make
# dist` the same with the snapshot version X.Y.Z-dev+COMMIT.
ACPD_COMMIT = $(shell git rev-parse --short HEAD 2>/dev/null)
ACPD_DATE = $(shell TZ=UTC git log -1 --date=format-local:%Y-%m-%dT%H:%M:%SZ --format=%cd 2>/dev/null)
build:
	CGO_ENABLED=0 $(GO) build -ldflags "-X main.commit=$(ACPD_COMMIT) -X main.date=$(ACPD_DATE)" -o bin/acpd ./cmd/acpd

# run starts acpd as an editor would and holds a short exchange on its
# stdin/stdout: initialize, then session/new in this directory; then one
# prompt turn through `acpd run`, so the replay model's answer shows.
run: build
	@printf '%s\n' \
	  '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}' \
	  '{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"$(CURDIR)","mcpServers":[]}}' \
	  | ACPD_STATE_DIR=$(CURDIR)/bin/state ./bin/acpd --model replay/testdata/replay/hello.jsonl
	@echo
	@echo '# and a prompt turn, with acpd run as the client:'
	ACPD_STATE_DIR=$(CURDIR)/bin/state ./bin/acpd run --model replay/testdata/replay/hello.jsonl --cwd $(CURDIR) "hello"

# test-deps installs the npm peers the interop tests drive (the official ACP
# TypeScript SDK, pinned by testdata/package-lock.json).
test-deps:
	cd testdata && npm ci --no-audit --no-fund --loglevel=error

# vet also runs internal/noreach: no code reaches into another package's
# unexported state (unsafe, reflect's writable pointers, go:linkname).
vet:
	$(GO) vet ./...
	$(GO) run ./internal/noreach
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './testdata/node_modules/*')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt would change:"; echo "$$unformatted"; exit 1; fi

# cross proves every supported platform builds and vets (tests included):
# acpd compiled for it, and `go vet ./...` with its GOOS/GOARCH.
PLATFORMS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64
cross:
	@set -e; for p in $(PLATFORMS); do \
	  os=$${p%/*}; arch=$${p#*/}; echo "cross: $$p"; \
	  CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -o /dev/null ./cmd/acpd; \
	  CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) vet ./...; \
	done

# staticcheck runs the pinned staticcheck (built from the Go module proxy
# into bin/tools) over the module with its default checks and no per-package
# exceptions; a finding that must stay is silenced on its line with
# //lint:ignore CHECK reason (mcpclient's uses of the deprecated MCP features).
STATICCHECK_VERSION := v0.8.2
STATICCHECK := bin/tools/staticcheck-$(STATICCHECK_VERSION)/staticcheck

$(STATICCHECK):
	GOBIN=$(CURDIR)/$(dir $(STATICCHECK)) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

staticcheck: $(STATICCHECK)
	$(STATICCHECK) ./...

test: test-deps vet cross staticcheck
	$(GO) test -race -count=1 -timeout 30m ./...
	$(MAKE) --no-print-directory test-windows

# test-windows runs the Windows test binaries of the packages Wine emulates
# well (see .ci/test-windows and the README). Without Wine and MinGW it says
# so and skips, except under CI=true, where .ci/run installs them.
test-windows:
	./.ci/test-windows

# dist builds the release archives of the six targets (darwin, linux,
# windows × amd64, arm64; tar.gz, zip on Windows) and checksums.txt in dist/
# with GoReleaser in snapshot mode: nothing is published. GoReleaser is
# built from the Go module proxy at the pinned version into bin/tools.
GORELEASER_VERSION := v2.17.0
GORELEASER := bin/tools/goreleaser-$(GORELEASER_VERSION)/goreleaser

$(GORELEASER):
	GOBIN=$(CURDIR)/$(dir $(GORELEASER)) $(GO) install github.com/goreleaser/goreleaser/v2@$(GORELEASER_VERSION)

dist: $(GORELEASER)
	ACPD_COMMIT=$(ACPD_COMMIT) ACPD_DATE=$(ACPD_DATE) \
	ACPD_COMMIT_TIMESTAMP=$$(git log -1 --format=%ct) \
	  $(GORELEASER) release --snapshot --clean

# dist-check proves `make dist` works: archives, checksums, the binary in
# each, and the version stamped into --version (.ci/dist-check).
dist-check: dist
	./.ci/dist-check

generate: test-deps
	$(GO) generate ./...

# bench prints the performance table (README, "Performance"): every row
# runs acpd and its floor interleaved in one loop (static build, as
# released). BENCHTIME sets the iterations per row. bench-all runs every
# benchmark of every package.
BENCHTIME ?= 5x
bench:
	@mkdir -p bin; CGO_ENABLED=0 $(GO) test -run '^$$' -bench '^(BenchmarkTable|BenchmarkLoad10k$$)' \
	  -benchtime $(BENCHTIME) -timeout 20m ./cmd/acpd ./agent ./mcpclient > bin/bench.txt; status=$$?; \
	  grep -v '^Benchmark' bin/bench.txt; awk -f cmd/acpd/testdata/benchtable.awk bin/bench.txt; exit $$status

bench-all:
	$(GO) test -run '^$$' -bench . -benchmem ./...

clean:
	rm -rf bin dist
