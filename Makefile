# kubectl-drift. The two commands that work on a fresh machine:
#
#   make demo    start a local real cluster, drift a Deployment with real
#                kubectl operations, run `kubectl drift explain` on it
#   make test    unit tests, then the e2e suite against that cluster
#
# The cluster (etcd, kube-apiserver, kubectl v1.37.2) is built once from the
# Go module proxy into ~/.cache/kubectl-drift by hack/cluster.sh (~8 min on a
# fresh machine, reused afterwards).

SHELL := /usr/bin/env bash
GO ?= go

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo v0.0.0-dev)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
DATE    ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
VERSION_PKG := github.com/kubectl-drift/kubectl-drift/internal/version
LDFLAGS := -s -w -X $(VERSION_PKG).gitVersion=$(VERSION) -X $(VERSION_PKG).gitCommit=$(COMMIT) -X $(VERSION_PKG).buildDate=$(DATE)

PLUGINS := kubectl-drift argocd-drift flux-drift
# How long each fuzz target runs under `make fuzz`.
FUZZTIME ?= 10s
# The e2e suite builds its own binaries and starts the cluster if needed.
E2E_TIMEOUT ?= 60m

.PHONY: help build test unit e2e deps cluster cluster-stop demo fuzz verify verify-fmt vet tidy lint verify-imports verify-architecture verify-funclen clean dist demo-offline argo-parity argo-parity-capture bench bench-serve bench-serve-sync differential differential-save differential-regressions differential-ci differential-ci-baseline

help:
	@echo "make build         bin/kubectl-drift, bin/argocd-drift, bin/flux-drift (version-stamped), bin/kubectl_complete-drift"
	@echo "make test          unit tests, then e2e against the local real cluster"
	@echo "make unit          go test -race ./... (the unit tier; needs gcc for -race)"
	@echo "make e2e           start the cluster, go test -tags e2e ./e2e/..."
	@echo "make demo          start the cluster, drift a Deployment, explain it"
	@echo "make demo-offline  explain the demo's objects recorded from a real run (no cluster; hack/record-demo.sh records them)"
	@echo "make cluster       build (once) and start etcd + kube-apiserver"
	@echo "make cluster-stop  stop them"
	@echo "make fuzz          run every fuzz target for FUZZTIME ($(FUZZTIME))"
	@echo "make verify        verify-fmt, vet, tidy, lint, verify-imports, verify-architecture and verify-funclen (what .ci/run checks)"
	@echo "make lint          golangci-lint (.golangci.yml), built once by hack/build-tools.sh"
	@echo "make verify-imports  the package rules of hack/verify-imports.sh (and its self-test)"
	@echo "make verify-architecture  docs/architecture.md's package map against the code (hack/verify-architecture.sh)"
	@echo "make verify-funclen  no production function over 100 lines outside hack/verify-funclen.allow"
	@echo "make dist          release archives for 6 platforms, sha256 files, krew + Flux manifests (dist/)"
	@echo "make argo-parity   regenerate the Argo CD parity goldens with Argo CD's own code (hack/argoparity)"
	@echo "make argo-parity-capture  re-capture the parity corpus' live objects from the cluster, then regenerate"
	@echo "make bench         issue 35: scan CPU/RSS/requests at 10k/30k/100k vs kubectl, explain requests, serve RSS (private API servers), hot-path Go benchmarks"
	@echo "make bench-serve   serve's steady-state API requests/min and peak RSS at 1,000 and 10,000 objects (hack/bench-serve.sh)"
	@echo "make bench-serve-sync  serve's initial sync CPU at 100k over 10k objects, interleaved rounds on two kept loads (hack/bench-serve-sync.sh)"

# CGO_ENABLED=0 as the release archives (hack/release.sh): the binaries
# need no C library, and a first build (make demo-offline on a fresh
# clone) then compiles no cgo parts of net, os/user and runtime/cgo.
build:
	@mkdir -p bin
	@for p in $(PLUGINS); do \
	  echo "go build -o bin/$$p ./plugins/$$p"; \
	  CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o bin/$$p ./plugins/$$p || exit 1; \
	done
	@# kubectl's completion shim, as the release archives hold it (hack/release.sh).
	install -m 0755 plugins/kubectl-drift/kubectl_complete-drift bin/kubectl_complete-drift

# Release: cross-compiled, reproducible archives, their sha256 files and the
# krew and Flux plugin manifests rendered from krew-manifests/ with the real
# checksums. VERSION comes from git (exact tag, else a pseudo-version); set
# DIST_VERSION=vX.Y.Z to override. See hack/release.sh.
dist:
	DIST_DIR=dist $(if $(DIST_VERSION),VERSION=$(DIST_VERSION)) hack/release.sh

# Unit tests first: they need no cluster and fail fast. deps first: -race
# needs gcc, the e2e suite redis-server.
test: deps
	$(MAKE) unit
	$(MAKE) e2e

# -race: the unit tests run goroutines (scan's workers, watch, the caching
# reader); the race detector makes a data race a test failure.
unit:
	$(GO) test -race -count=1 ./...

# redis-server (for the real Argo CD) comes from Debian when missing.
e2e: deps cluster
	$(GO) test -count=1 -tags e2e -timeout $(E2E_TIMEOUT) ./e2e/...
	$(GO) test -count=1 -tags e2e -run TestEntriesKeepVerdicts ./internal/serve/

deps:
	hack/install-deps.sh

cluster:
	hack/cluster.sh start

cluster-stop:
	hack/cluster.sh stop

demo:
	hack/demo.sh

# The demo's answer without a cluster: explains objects hack/record-demo.sh
# recorded from make demo's real API server (internal/cli/testdata/demo).
demo-offline:
	hack/demo-offline.sh

# Every `func FuzzXxx` in a _test.go file, each run briefly in its package.
fuzz:
	@set -e; \
	for f in $$(grep -rl --include='*_test.go' '^func Fuzz' internal plugins 2>/dev/null | sort); do \
	  pkg=./$$(dirname $$f); \
	  for t in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' $$f); do \
	    echo "== $$pkg $$t ($(FUZZTIME))"; \
	    $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; \
	done

# Everything .ci/run checks before the tests; each part is a target of its own.
verify: verify-fmt vet tidy lint verify-imports verify-architecture verify-funclen

verify-fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt -w needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...
	$(GO) vet -tags e2e ./e2e/...

# go.mod and go.sum must be what `go mod tidy` makes of them.
tidy:
	@before=$$(cat go.mod go.sum | sha256sum); \
	$(GO) mod tidy; \
	if [ "$$(cat go.mod go.sum | sha256sum)" != "$$before" ]; then \
	  echo "go mod tidy changed go.mod/go.sum:"; git --no-pager diff -- go.mod go.sum; exit 1; fi

# The pinned golangci-lint (hack/build-tools.sh: built from the module proxy
# once into ~/.cache/kubectl-drift/bin; its analysis cache lives in
# ~/.cache/golangci-lint). Runs on one machine queue behind each other
# (--allow-serial-runners) instead of failing on golangci-lint's lock.
lint:
	@lint=$$(hack/build-tools.sh golangci-lint) && echo "$$lint run ./..." && "$$lint" run --allow-serial-runners ./...

verify-imports:
	hack/verify-imports.sh --self-test
	hack/verify-imports.sh

# Every package has a row in docs/architecture.md's package map, with its
# imports exactly (the script runs its own self-test first).
verify-architecture:
	hack/verify-architecture.sh

# No production function over 100 lines but those being split elsewhere
# (hack/verify-funclen.allow, which only shrinks).
verify-funclen:
	hack/verify-funclen.sh

clean:
	rm -rf bin dist

# Argo CD parity goldens (internal/argocd/testdata/parity), written by Argo
# CD v3.2.12's own diff code in the nested module hack/argoparity.
argo-parity:
	hack/argoparity/run.sh

argo-parity-capture: cluster
	hack/argoparity/run.sh --capture

# Issue 35's benchmarks (docs/performance.md), each script on its own
# private API server, one at a time (/tmp/drift-bench.lock), side by side
# with kubectl in the same run: scan CPU, peak RSS and audit-log requests at
# BENCH_SCAN_SIZES objects (BENCH_RUNS interleaved rounds, BENCH_BASE=REV
# adds that revision's scan); explain requests per mode; serve RSS at
# BENCH_SERVE_SIZES; then the hot paths' Go benchmarks (allocations per
# op; TestHotPathAllocations guards them in plain `go test`). Ports:
# BENCH_SCAN_PORTS, BENCH_EXPLAIN_PORTS, BENCH_SERVE_PORTS (API/ETCD).
# bench-serve-sync: serve's sync CPU at 100k over 10k, interleaved on two
# kept loads (hack/bench-serve-sync.sh; BENCH_SMALL, BENCH_LARGE, BENCH_ROUNDS).
BENCH_SCAN_SIZES ?= 10000 30000 100000
BENCH_SERVE_SIZES ?= 10000 100000
BENCH_LOCK ?= flock -o /tmp/drift-bench.lock
bench: deps
	BENCH_SIZES="$(BENCH_SCAN_SIZES)" $(BENCH_LOCK) hack/bench-scan.sh
	$(BENCH_LOCK) hack/bench-explain-requests.sh
	BENCH_SIZES="$(BENCH_SERVE_SIZES)" $(BENCH_LOCK) hack/bench-serve.sh
	$(GO) test -run '^$$' -bench . -benchmem ./internal/scan/ ./internal/managedfields/
	$(GO) test -run '^$$' -bench 'Judge' -benchmem ./internal/argocd/ ./internal/flux/

# serve at steady state on a private API server (ports BENCH_SERVE_PORTS,
# default 16503/12441, audit log on): API requests per minute by serve's user agent and peak RSS, beside
# BenchmarkCacheMemory (docs/serve.md). BENCH_SIZES / BENCH_WINDOW tune it.
bench-serve: deps
	hack/bench-serve.sh

bench-serve-sync: deps
	$(BENCH_LOCK) hack/bench-serve-sync.sh

# Differential conformance (issue 30, docs/verdicts.md): generated scenarios
# judged by the real controllers; ends with one summary line, exit 1 on any
# wrong/missed/noise. ENGINE=flux|flux-helm|argocd SEED=N COUNT=M; ENGINE=untouched:
# every corpus kind applied by both Flux controllers, written by nobody
# (hack/differential.sh).
differential: deps
	@ENGINE=$(ENGINE) SEED=$(SEED) COUNT=$(COUNT) hack/differential.sh

# Minimize seed SEED and save it as a regression case marked with ISSUE
# (e2e/testdata/differential/ENGINE-seed-SEED.yaml). A failing case exits 1,
# which is why it is saved; only a harness failure (2) fails the target.
differential-save: deps
	@ENGINE=$(ENGINE) SEED=$(SEED) COUNT=1 MINIMIZE=1 SAVE_ISSUE=$(or $(ISSUE),30) hack/differential.sh || [ $$? -eq 1 ]

# The saved cases (TestDifferentialFluxRegressions, the Kustomization and
# the HelmRelease ones, ENGINE=flux or flux-helm; ENGINE=argocd:
# TestDifferentialArgoRegressions): a case marked with an open issue must
# still fail, an unmarked one must pass.
# PORTS=API/ETCD and LOCK=path run them on another lab, as for differential.
# -timeout 40m: go test's default 10 min killed 28 Argo CD cases on a loaded
# machine (2026-12-06, load average 15).
differential-regressions: deps
ifeq ($(ENGINE),argocd)
	DRIFT_E2E_ARGOCD_PORTS=$(or $(PORTS),16543/12481) DRIFT_DIFFERENTIAL_REGRESSIONS=1 flock -o $(or $(LOCK),/tmp/drift-differential-argo.lock) \
	  $(GO) test -count=1 -timeout 40m -tags e2e -run '^TestDifferentialArgoRegressions$$' ./e2e/
else
	DRIFT_E2E_FLUX_LAB_PORTS=$(or $(PORTS),16493/12431) DRIFT_DIFFERENTIAL_REGRESSIONS=1 flock -o $(or $(LOCK),/tmp/drift-differential.lock) \
	  $(GO) test -count=1 -timeout 40m -tags e2e -run '^TestDifferentialFluxRegressions$$' ./e2e/
endif

# The CI slice (.ci/run): seeds 20000-20119 per engine, Flux and Argo CD in
# parallel on ports of their own, compared with the reviewed baselines
# e2e/testdata/differential/ci-known-ENGINE.txt (hack/differential-ci.sh):
# fails on a finding they do not list and on a listed one that no longer
# occurs. ENGINES="flux" runs one engine.
differential-ci: deps
	@hack/differential-ci.sh --self-test
	@ENGINES="$(or $(ENGINES),flux argocd)" hack/differential-ci.sh check

# Regenerates the baselines from this tree's behaviour (RUNS=2 runs of the
# slice; a finding of some runs only is marked flaky), keeping the class
# names of lines already listed. Review the diff before committing.
differential-ci-baseline: deps
	@ENGINES="$(or $(ENGINES),flux argocd)" hack/differential-ci.sh baseline
