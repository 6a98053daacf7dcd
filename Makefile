# netloadgen: `make demo` runs a real scenario end to end, `make test` the whole suite.
GO ?= go
BIN := bin
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X github.com/netloadgen/netloadgen/pkg/version.Version=$(VERSION)
GOBIN_DIR := $(shell $(GO) env GOPATH)/bin

.PHONY: all build test test-alloc staticcheck test-short proto demo fuzz vet fmt clean dockerfile-check deploy-check dashboards-check console-vendor

all: build

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/ ./cmd/loadgend ./cmd/sutproxy

# Packages run one at a time (-p 1): several of them drive real load over
# loopback and judge latencies, compliance ratios and Prometheus rates, which
# two packages' tests fighting over two cores would make flaky.
#
# The tests run through internal/testreport, which prints what plain `go test`
# would and ends with the list of skipped tests and why (both modules'): a test
# skipped for a missing program (prometheus, grpcurl, curl) leaves its package
# `ok`. With CI=true (.ci/run sets it) such a skip is a failure instead.
test: staticcheck
	$(GO) vet ./...
	$(GO) build ./... && $(GO) test -race -count=1 -run '^$$' ./... >/dev/null
	$(GO) build -o $(BIN)/testreport ./internal/testreport
	rm -f $(BIN)/skips.txt
	rm -rf $(BIN)/test-artifacts && mkdir -p $(BIN)/test-artifacts
	$(BIN)/testreport -skips $(BIN)/skips.txt -- $(GO) test -json -race -count=1 -p 1 -timeout 20m -artifacts -outputdir $(CURDIR)/$(BIN)/test-artifacts ./...
	cd deploy && $(GO) vet ./... && ../$(BIN)/testreport -skips ../$(BIN)/skips.txt -list -- $(GO) test -json -race -count=1 -timeout 5m ./...
	$(MAKE) test-alloc

# The allocation tests again without -race: under the race detector
# sync.Pool drops items at random, so those that count a pool's allocations
# skip there, and must run here.
test-alloc:
	$(GO) test -count=1 -run 'Alloc|NoAllocs|DoesNotAllocate' ./...

# staticcheck over both modules; .ci/run installs the pinned version. A
# missing staticcheck fails the target: CI must not pass by skipping the linter.
staticcheck:
	@command -v staticcheck >/dev/null || { echo 'staticcheck is not installed: .ci/run installs the pinned version (go install honnef.co/go/tools/cmd/staticcheck@VERSION, with $$(go env GOPATH)/bin on PATH)' >&2; exit 1; }
	staticcheck ./...
	cd deploy && staticcheck ./...

test-short:
	$(GO) test -short -count=1 ./...

# Regenerates the committed gRPC code. Needs protoc (Debian: protobuf-compiler).
proto:
	$(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
	$(GO) install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2
	PATH="$(GOBIN_DIR):$$PATH" protoc -I kserve/inferencepb \
		--go_out=kserve/inferencepb --go_opt=paths=source_relative \
		--go-grpc_out=kserve/inferencepb --go-grpc_opt=paths=source_relative \
		kserve/inferencepb/inference.proto

# Builds, starts sutproxy, runs a real Server scenario through the network
# path, prints the result, and stops what it started.
demo: build
	BIN=$(BIN) ./scripts/demo.sh

# Every fuzz target in the tree for a short while each (FUZZTIME=30s by
# default). The list is found, not written: each `func FuzzX` in a *_test.go
# file as DIR:FuzzX (internal/houserules checks `make -n fuzz` names them all).
FUZZTIME ?= 30s
FUZZ_TARGETS = $(shell git grep --untracked '^func Fuzz' -- '*_test.go' | \
	sed -E 's|^|./|; s|^(.*)/[^/]*:func (Fuzz[A-Za-z0-9_]*).*|\1:\2|')
define newline


endef
fuzz:
	$(if $(FUZZ_TARGETS),,$(error make fuzz found no fuzz target))
	$(foreach t,$(FUZZ_TARGETS),$(GO) test $(word 1,$(subst :, ,$(t))) -run '^$$' -fuzz '^$(word 2,$(subst :, ,$(t)))$$' -fuzztime $(FUZZTIME)$(newline))

vet:
	$(GO) vet ./...

fmt:
	gofmt -l -w $$(git ls-files '*.go')

clean:
	rm -rf $(BIN)

# The Dockerfile's rules (pinned bases, non-root, EXPOSE, ENTRYPOINT) and its
# build stage run without Docker: deploy/dockerfile_test.go.
dockerfile-check:
	cd deploy && $(GO) test -count=1 -run 'Dockerfile' ./...

# Every manifest under deploy/ decoded strictly into the Kubernetes types,
# every kustomization resolved (and compared with `kubectl kustomize` when a
# kubectl with kustomize v4+ is installed), the run specs against the daemon.
deploy-check:
	cd deploy && $(GO) test -count=1 ./...

# The Grafana dashboard: well formed, and every query returns data from a
# real Prometheus (Debian package prometheus) scraping a live run.
dashboards-check:
	$(GO) test -count=1 ./dashboards

# Builds, then runs sutproxy (simulated models, 127.0.0.1:8000 HTTP and :8001
# gRPC) and loadgend (API on 127.0.0.1:8080) in the foreground for the
# README's curl session; Ctrl-C stops both. SERVE_API_ADDR, SERVE_SUT_HTTP,
# SERVE_SUT_GRPC choose other addresses.
.PHONY: serve
serve: build
	BIN=$(BIN) ./scripts/serve.sh

# The console's vendored chart library (pkg/console/static/vendor): uPlot
# from the npm registry, pinned by version and checksum.
UPLOT_VERSION = 1.6.32
UPLOT_SHA256 = 4b8a8191e425658e3ea8c8c1314b0fc679c861ee3a1af2b20c7b16ba50b5133d
console-vendor:
	tmp=$$(mktemp -d) && trap 'rm -rf $$tmp' EXIT && \
	curl -fsS -o $$tmp/uplot.tgz https://registry.npmjs.org/uplot/-/uplot-$(UPLOT_VERSION).tgz && \
	echo "$(UPLOT_SHA256)  $$tmp/uplot.tgz" | sha256sum -c - && \
	tar -xzf $$tmp/uplot.tgz -C $$tmp && \
	cp $$tmp/package/dist/uPlot.iife.min.js $$tmp/package/dist/uPlot.min.css pkg/console/static/vendor/ && \
	cp $$tmp/package/LICENSE pkg/console/static/vendor/uPlot.LICENSE
