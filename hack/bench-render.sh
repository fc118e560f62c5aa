#!/usr/bin/env bash
# Benchmark of rendering from a checkout (internal/flux/render), compared in
# the same run with the real tool on the same inputs:
#
#   flux build kustomization bench --path DIR/app --kustomization-file KS --dry-run
#   helm template bench DIR/charts/bench -n flux-system --set replicas=3
#
# The Go benchmarks (BenchmarkRenderKustomization200: 100 Deployments and
# 100 ConfigMaps in 20 files, no kustomization.yaml, postBuild variables;
# BenchmarkRenderHelmRelease50: a 50-template chart) write their checkout,
# with the Kustomization and the HelmRelease they render (ks.yaml, hr.yaml),
# into RENDER_BENCH_DIR; then `kubectl drift render` of the Kustomization
# and `flux build`, and `kubectl drift render` of the HelmRelease of the
# chart and `helm template` (the helm v4 CLI at go.mod's version, built by
# hack/build-tools.sh helm), each run BENCH_RUNS times (default 5) on it as
# processes, and the script prints the median wall times and the ratios
# render/flux build and render/helm template. No cluster is needed
# (--dry-run, no --from-cluster).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${BENCH_RUNS:-5}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
log() { printf '[bench-render] %s\n' "$*" >&2; }

FLUX=$("$ROOT/hack/build-flux.sh")
HELM=$("$ROOT/hack/build-tools.sh" helm)
log "building kubectl-drift"
(cd "$ROOT" && go build -o "$WORK/kubectl-drift" ./plugins/kubectl-drift)

log "Go benchmarks"
(cd "$ROOT" && RENDER_BENCH_DIR="$WORK/checkout" go test -run '^$' -bench 'BenchmarkRender' -benchtime "${RUNS}x" ./internal/flux/render/) | tee "$WORK/bench.txt" >&2

# The benchmarks wrote the objects they render next to the checkout's
# files: ks.yaml (BenchmarkRenderKustomization200's Kustomization) and
# hr.yaml (BenchmarkRenderHelmRelease50's HelmRelease, the chart's values
# with replicas 3; helm template gets the same as --set).
KS="$WORK/checkout/ks.yaml"
# An empty kubeconfig: neither command may reach a cluster.
: > "$WORK/kubeconfig"
export KUBECONFIG="$WORK/kubeconfig"

# median_ms CMD...: median wall time of RUNS runs, in milliseconds.
median_ms() {
  local i start end times=()
  for i in $(seq 1 "$RUNS"); do
    start=$(date +%s%N)
    "$@" > "$WORK/out.yaml"
    end=$(date +%s%N)
    times+=($(( (end - start) / 1000000 )))
  done
  printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}

ours=$(median_ms "$WORK/kubectl-drift" render --source "$WORK/checkout" --kustomization flux-system/bench)
objs=$(grep -c '^kind:' "$WORK/out.yaml")
theirs=$(median_ms "$FLUX" build kustomization bench -n flux-system --path "$WORK/checkout/app" --kustomization-file "$KS" --dry-run)
fobjs=$(grep -c '^kind:' "$WORK/out.yaml")

hr_ours=$(median_ms "$WORK/kubectl-drift" render --source "$WORK/checkout" --helmrelease flux-system/bench)
hobjs=$(grep -c '^kind:' "$WORK/out.yaml")
hr_theirs=$(median_ms "$HELM" template bench "$WORK/checkout/charts/bench" -n flux-system --set replicas=3)
tobjs=$(grep -c '^kind:' "$WORK/out.yaml")

ks_ns=$(awk '/^BenchmarkRenderKustomization200/ {print $3}' "$WORK/bench.txt")
hr_ns=$(awk '/^BenchmarkRenderHelmRelease50/ {print $3}' "$WORK/bench.txt")
printf 'render library, 200-object Kustomization: %d ms/op\n' $(( ks_ns / 1000000 ))
printf 'render library, 50-template chart:        %d ms/op\n' $(( hr_ns / 1000000 ))
printf 'kubectl drift render (process, %d objects): %d ms median of %d\n' "$objs" "$ours" "$RUNS"
printf 'flux build kustomization (process, %d objects): %d ms median of %d\n' "$fobjs" "$theirs" "$RUNS"
awk -v a="$ours" -v b="$theirs" 'BEGIN {printf "ratio render/flux build: %.2f\n", a/b}'
printf 'kubectl drift render (process, %d objects): %d ms median of %d\n' "$hobjs" "$hr_ours" "$RUNS"
printf 'helm template (process, %d objects): %d ms median of %d\n' "$tobjs" "$hr_theirs" "$RUNS"
awk -v a="$hr_ours" -v b="$hr_theirs" 'BEGIN {printf "ratio render/helm template: %.2f\n", a/b}'
