#!/usr/bin/env bash
# Benchmark of `kubectl drift scan` against the real local API server
# (hack/cluster.sh), compared with the plain read every operator knows:
#
#   kubectl get deployments,configmaps -A -o json > /dev/null
#
# For each size N (default 1000 and 10000; BENCH_SIZES="1000 10000") it
# loads N/2 Deployments and N/2 ConfigMaps into namespaces bench-1..bench-10
# with real server-side applies as Flux's kustomize-controller (plus a few
# Argo CD-tracked ones applied as argocd-controller, and some not owned by
# any engine), drifts about 10% of them with real kubectl commands (scale,
# set image, label, annotate, patch), then reports in one run:
#   - scan wall time and peak RSS (median wall / max RSS of BENCH_RUNS runs)
#   - API requests the scan made, by verb (its counting transport)
#   - the same for kubectl get (wall, RSS), and the ratio scan/baseline
#   - the targets: ratio <= 1.5 at N=10000, requests <= kinds*ceil(N/limit),
#     peak RSS <= 300 MB
# The bench-* namespaces are emptied and removed afterwards (also on error).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SIZES=${BENCH_SIZES:-1000 10000}
RUNS=${BENCH_RUNS:-3}
NSCOUNT=${BENCH_NAMESPACES:-10}
LIMIT=500
KINDS=2

log() { printf '[bench] %s\n' "$*" >&2; }

"$ROOT/hack/cluster.sh" start >&2
eval "$("$ROOT/hack/cluster.sh" env)"
KUBECTL="$DRIFT_BIN_DIR/kubectl"
WORK=$(mktemp -d)
# shellcheck source=hack/bench-lib.sh
. "$ROOT/hack/bench-lib.sh"
BIN="$WORK/kubectl-drift"
log "building kubectl-drift"
(cd "$ROOT" && go build -o "$BIN" ./plugins/kubectl-drift)

# Objects go away with one DELETE per collection; the namespace itself then
# needs its finalizer removed: this control plane runs no namespace
# controller (no kube-controller-manager), so it would stay Terminating.
cleanup() {
  local ns
  for ns in $(bench_namespaces); do
    "$KUBECTL" get namespace "$ns" >/dev/null 2>&1 || continue
    "$KUBECTL" delete --raw "/apis/apps/v1/namespaces/$ns/deployments" >/dev/null 2>&1 || true
    "$KUBECTL" delete --raw "/api/v1/namespaces/$ns/configmaps" >/dev/null 2>&1 || true
    "$KUBECTL" delete namespace "$ns" --wait=false >/dev/null 2>&1 || true
    printf '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"%s"},"spec":{"finalizers":[]}}' "$ns" |
      "$KUBECTL" replace --raw "/api/v1/namespaces/$ns/finalize" -f - >/dev/null 2>&1 || true
  done
}
trap 'cleanup; rm -rf "$WORK"' EXIT

# measure OUT CMD...: runs CMD under /usr/bin/time -v (or a python3
# getrusage wrapper when GNU time is not installed); prints "WALL RSS_KB".
measure() {
  local out=$1; shift
  local tf="$WORK/time.txt"
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -v -o "$tf" "$@" >/dev/null 2>"$out" || true
    local wall rss
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; print s}' "$tf")
    rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$tf")
    echo "$wall $rss"
  else
    python3 - "$out" "$@" <<'EOF'
import resource, subprocess, sys, time
out = open(sys.argv[1], "w")
t = time.monotonic()
subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=out)
print("%.2f %d" % (time.monotonic() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
EOF
  fi
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
max() { sort -n | tail -1; }

bench() {
  local n=$1 i
  cleanup
  bench_load "$n"
  local listed
  listed=$("$KUBECTL" get deployments,configmaps -A --no-headers 2>/dev/null | wc -l)
  # One warm-up of each, so neither pays for a cold discovery cache.
  "$KUBECTL" get deployments,configmaps -A -o json >/dev/null
  "$BIN" scan -A --kinds deployments,configmaps -o json >/dev/null || true

  local bw=() br=() sw=() sr=() cw=() cr=() stats="" cstats=""
  for i in $(seq 1 "$RUNS"); do
    read -r w r < <(measure "$WORK/kubectl.err" "$KUBECTL" get deployments,configmaps -A -o json)
    bw+=("$w"); br+=("$r")
    read -r w r < <(measure "$WORK/scan.err" "$BIN" scan -A --kinds deployments,configmaps -o json --stats)
    sw+=("$w"); sr+=("$r")
    stats=$(grep '^scan stats:' "$WORK/scan.err" || true)
    read -r w r < <(measure "$WORK/scan-c.err" "$BIN" scan -A --kinds deployments,configmaps -o json --stats --consistent)
    cw+=("$w"); cr+=("$r")
    cstats=$(grep '^scan stats:' "$WORK/scan-c.err" || true)
  done
  local bwm brm swm srm cwm crm
  bwm=$(printf '%s\n' "${bw[@]}" | median); brm=$(printf '%s\n' "${br[@]}" | max)
  swm=$(printf '%s\n' "${sw[@]}" | median); srm=$(printf '%s\n' "${sr[@]}" | max)
  cwm=$(printf '%s\n' "${cw[@]}" | median); crm=$(printf '%s\n' "${cr[@]}" | max)
  local lists clists reqs creqs budget
  lists=$(sed -n 's/.*kind_lists=\([0-9]*\).*/\1/p' <<<"$stats")
  clists=$(sed -n 's/.*kind_lists=\([0-9]*\).*/\1/p' <<<"$cstats")
  reqs=$(sed -n 's/.*total_requests=\([0-9]*\).*/\1/p' <<<"$stats")
  creqs=$(sed -n 's/.*total_requests=\([0-9]*\).*/\1/p' <<<"$cstats")
  budget=$(( KINDS * ( (listed + LIMIT - 1) / LIMIT ) ))
  echo "== N=$n (objects listed cluster-wide: $listed; $RUNS runs, median wall, max RSS)"
  printf '  %-44s wall %6.2fs  peak RSS %5d MB\n' "kubectl get deployments,configmaps -A -o json" "$bwm" $(( brm / 1024 ))
  printf '  %-44s wall %6.2fs  peak RSS %5d MB  LISTs of the kinds %s, requests in all %s\n' "kubectl drift scan -A -o json (watch cache)" "$swm" $(( srm / 1024 )) "$lists" "$reqs"
  printf '  %-44s wall %6.2fs  peak RSS %5d MB  LISTs of the kinds %s, requests in all %s\n' "kubectl drift scan -A -o json --consistent" "$cwm" $(( crm / 1024 )) "$clists" "$creqs"
  echo "  scan:        ${stats#scan stats: }"
  echo "  consistent:  ${cstats#scan stats: }"
  awk -v s="$swm" -v c="$cwm" -v b="$bwm" -v l="$lists" -v cl="$clists" -v bud="$budget" -v rss="$srm" -v crss="$crm" -v n="$n" 'BEGIN {
    printf "  ratio scan/baseline: %.2f (watch cache), %.2f (consistent)   target <= 1.5 at N=10000: %s\n", s/b, c/b, (n < 10000 || (s/b <= 1.5 && c/b <= 1.5)) ? "met" : "MISSED"
    printf "  LISTs of the scanned kinds: %d (watch cache), %d (consistent); budget kinds x ceil(N/limit) = %d: %s\n", l, cl, bud, (l <= bud && cl <= bud) ? "met" : "MISSED"
    printf "  peak RSS: %d MB, %d MB; target <= 300 MB: %s\n", rss/1024, crss/1024, (rss <= 300*1024 && crss <= 300*1024) ? "met" : "MISSED"
  }'
  echo "  (requests in all = the LISTs above + the engines' own objects, read once per kind: argocd-cm,"
  echo "   argocd-cmd-params-cm, Applications, Kustomizations, HelmReleases; constant in N)"
}

echo "kubectl-drift scan benchmark: $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, $("$KUBECTL" version -o json | sed -n 's/.*"gitVersion": "\(v[^"]*\)".*/\1/p' | tail -1) API server, go $(go env GOVERSION)"
for n in $SIZES; do
  bench "$n"
done
