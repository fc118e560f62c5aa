#!/usr/bin/env bash
# Benchmark of `kubectl drift scan` against a real API server, side by side
# in the same run with the plain read every operator knows:
#
#   kubectl get deployments,configmaps -A -o json > /dev/null
#
# It starts its own control plane (hack/cluster.sh, private directory under
# $TMPDIR, ports BENCH_SCAN_PORTS, default 16683/12621, never the shared
# cluster nor the CI slice's 16583/12521) with the API server's
# audit log for the read-only user "reader" both commands run as, installs
# the Flux CRDs with the Kustomization flux-system/apps and Argo CD's
# Application CRD with the Application argocd/bench (the owners the objects
# name). For each size N (BENCH_SIZES, default "10000 30000 100000") it loads
# N/2 Deployments and N/2 ConfigMaps into namespaces bench-1..bench-10 with
# real server-side applies as kustomize-controller (every 20th as
# argocd-controller with a tracking id, every 25th by no engine), drifts
# about 10% with real kubectl commands (hack/bench-lib.sh), warms both, then
# runs BENCH_RUNS (default 3) interleaved rounds of
#   kubectl get ... -o json   |  kubectl drift scan -A --kinds ... -o json
#   [| the scan of BENCH_BASE, a git revision built beside it, when set]
# each under GNU time: CPU (user+sys), peak RSS, and the requests the API
# server received from it (audit log, one per audit ID). It prints medians
# (max RSS) and the ratios scan/kubectl, against issue 35's targets
# (CPU <= 0.15x at 10k and <= 0.1x at 100k, RSS <= 150 MB at 100k).
#
# BENCH_KEEP=1 leaves the control plane and its last load up (its kubeconfig
# is printed) and a later run with BENCH_KEEP=1 reuses a load of the same
# size; BENCH_LOAD_ONLY=1 (with BENCH_KEEP=1) only loads, so a 100k load
# (~17 minutes on a loaded machine) is paid once for every measured run
# after it. Needs jq and GNU time. Run it under `flock -o /tmp/drift-bench.lock`
# when others share the machine. Nothing is written inside the checkout.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SIZES=${BENCH_SIZES:-10000 30000 100000}
RUNS=${BENCH_RUNS:-3}
NSCOUNT=${BENCH_NAMESPACES:-10}
BASE=${BENCH_BASE:-}
PORTS=${BENCH_SCAN_PORTS:-16683/12621}
PORT=${PORTS%/*}
ETCD_PORT=${PORTS#*/}
KINDS=deployments,configmaps

log() { printf '[bench-scan] %s\n' "$*" >&2; }

# shellcheck source=hack/bench-lib.sh
. "$ROOT/hack/bench-lib.sh"
for c in jq go; do
  command -v "$c" >/dev/null || { echo "bench-scan: $c is needed (hack/install-deps.sh)" >&2; exit 2; }
done
[ -x /usr/bin/time ] || { echo "bench-scan: GNU time (/usr/bin/time) is needed" >&2; exit 2; }

if [ -n "${BENCH_KEEP:-}" ]; then
  # A fixed directory, so a later run finds the cluster and its load.
  WORK=${TMPDIR:-/tmp}/bench-scan-keep
  mkdir -p "$WORK"
  RUN=$WORK/cluster POLICY=$WORK/audit-policy.yaml AUDIT=$WORK/audit.log
  trap 'log "kept: $(bench_private_cluster env "$RUN" "$PORT" "$ETCD_PORT" | grep KUBECONFIG= | head -1)"' EXIT
else
  bench_workdir bench-scan
fi
BIN=$WORK/kubectl-drift
log "building kubectl-drift ($(cd "$ROOT" && git rev-parse --short HEAD))"
(cd "$ROOT" && go build -o "$BIN" ./plugins/kubectl-drift)
if [ -n "$BASE" ]; then
  log "building kubectl-drift at $BASE"
  rm -rf "$WORK/base-src"
  git -C "$ROOT" worktree add --detach "$WORK/base-src" "$BASE" >/dev/null 2>&1
  (cd "$WORK/base-src" && go build -o "$WORK/kubectl-drift-base" ./plugins/kubectl-drift)
  git -C "$ROOT" worktree remove --force "$WORK/base-src"
fi

if ! bench_private_cluster status "$RUN" "$PORT" "$ETCD_PORT" >/dev/null 2>&1; then
  bench_audit_policy "$POLICY" reader
  bench_private_cluster start "$RUN" "$PORT" "$ETCD_PORT" "$POLICY" "$AUDIT" >&2
  rm -f "$WORK/loaded"
fi
eval "$(bench_private_cluster env "$RUN" "$PORT" "$ETCD_PORT")"
KUBECTL="$DRIFT_BIN_DIR/kubectl"
READER=$DRIFT_READER_KUBECONFIG
export KUBECACHEDIR=$WORK/kube-cache

# The owners the objects name: Kustomization flux-system/apps and
# Application argocd/bench, so both engines judge as on a real cluster.
owners() {
  local crds argo
  crds=$("$ROOT/hack/build-tools.sh" flux-crds)
  argo=$(cd "$ROOT" && go mod download -json "github.com/argoproj/argo-cd/v3@v3.2.12" | jq -r .Dir)
  "$KUBECTL" apply --server-side --force-conflicts --field-manager=bench -f "$crds" >/dev/null
  "$KUBECTL" apply --server-side --force-conflicts --field-manager=bench -f "$argo/manifests/crds/application-crd.yaml" >/dev/null
  # A CRD read before the API server wrote its status makes kubectl wait
  # fail at once (".status.conditions accessor error"): try again.
  local i
  for i in 1 2 3 4 5; do
    "$KUBECTL" wait --for=condition=Established --timeout=60s crd/kustomizations.kustomize.toolkit.fluxcd.io crd/applications.argoproj.io >/dev/null 2>&1 && break
    [ "$i" -lt 5 ] || { echo "bench-scan: the CRDs were not Established" >&2; exit 1; }
    sleep 2
  done
  "$KUBECTL" apply --server-side --field-manager=bench -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Namespace
metadata: {name: flux-system}
---
apiVersion: v1
kind: Namespace
metadata: {name: argocd}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: apps, namespace: flux-system}
spec: {interval: 10m, path: ./apps, prune: true, sourceRef: {kind: GitRepository, name: flux-system}}
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: bench, namespace: argocd}
spec:
  project: default
  source: {repoURL: https://example.com/bench.git, path: deploy}
  destination: {server: https://kubernetes.default.svc}
YAML
}
owners

# Objects go away with one DELETE per collection; the namespace then needs
# its finalizer removed (no namespace controller runs here).
cleanup() {
  local ns
  rm -f "$WORK/loaded"
  for ns in $(bench_namespaces); do
    "$KUBECTL" get namespace "$ns" >/dev/null 2>&1 || continue
    "$KUBECTL" delete --raw "/apis/apps/v1/namespaces/$ns/deployments" >/dev/null 2>&1 || true
    "$KUBECTL" delete --raw "/api/v1/namespaces/$ns/configmaps" >/dev/null 2>&1 || true
    "$KUBECTL" delete namespace "$ns" --wait=false >/dev/null 2>&1 || true
    printf '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"%s"},"spec":{"finalizers":[]}}' "$ns" |
      "$KUBECTL" replace --raw "/api/v1/namespaces/$ns/finalize" -f - >/dev/null 2>&1 || true
  done
  local i
  for i in $(seq 1 60); do
    [ -z "$("$KUBECTL" get namespaces -o name | grep '/bench-' || true)" ] && return 0
    sleep 1
  done
}

# measure AGENT CMD...: runs CMD under GNU time between two audit
# timestamps; prints "CPU_SECONDS RSS_KB REQUESTS".
measure() {
  local agent=$1; shift
  local from to cpu rss reqs
  from=$(bench_now)
  /usr/bin/time -f '%U %S %M' -o "$WORK/time" "$@" >/dev/null 2>"$WORK/err" || {
    # scan exits 1 when it finds drift; anything else is a failure.
    [ $? -eq 1 ] || { cat "$WORK/err" >&2; exit 1; }
  }
  sleep 0.3 # blocking audit mode writes each event at once; leave margin
  to=$(bench_now)
  read -r u s rss < <(tail -1 "$WORK/time")
  cpu=$(awk -v u="$u" -v s="$s" 'BEGIN {printf "%.2f", u + s}')
  reqs=$(bench_audit_sum "$AUDIT" "$from" "$to" "^$agent\$")
  echo "$cpu $rss $reqs"
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
col() { awk -v c="$1" '{print $c}' "$2"; }

bench() {
  local n=$1 i
  if [ "$(cat "$WORK/loaded" 2>/dev/null)" != "$n" ]; then
    cleanup
    bench_load "$n"
    echo "$n" >"$WORK/loaded"
  fi
  if [ -n "${BENCH_LOAD_ONLY:-}" ]; then
    log "loaded $n objects; BENCH_LOAD_ONLY: not measured"
    return 0
  fi
  local listed
  listed=$("$KUBECTL" get "$KINDS" -A --no-headers 2>/dev/null | wc -l)
  local kubectl=("$KUBECTL" --kubeconfig "$READER" get "$KINDS" -A -o json)
  # --request-timeout=0 as kubectl's default: at 100k objects on a loaded
  # machine the one watch-cache response can outlast scan's 30 s bound.
  local scan=("$BIN" --kubeconfig "$READER" --request-timeout=0 scan -A --kinds "$KINDS" -o json)
  local base=()
  [ -n "$BASE" ] && base=("$WORK/kubectl-drift-base" --kubeconfig "$READER" --request-timeout=0 scan -A --kinds "$KINDS" -o json)
  # One warm-up of each: neither pays for a cold discovery cache.
  "${kubectl[@]}" >/dev/null
  "${scan[@]}" >"$WORK/scan.json" || true
  [ -n "$BASE" ] && { "${base[@]}" >"$WORK/base.json" || true; }
  : >"$WORK/k" ; : >"$WORK/s"; : >"$WORK/b"
  for i in $(seq 1 "$RUNS"); do
    measure kubectl "${kubectl[@]}" >>"$WORK/k"
    measure kubectl-drift "${scan[@]}" >>"$WORK/s"
    [ -n "$BASE" ] && measure kubectl-drift "${base[@]}" >>"$WORK/b"
  done
  local drifted
  drifted=$(jq '.stats.drifted' "$WORK/scan.json")
  echo "== N=$n (objects listed: $listed, drifted by scan: $drifted; $RUNS interleaved runs: median CPU, max RSS, median requests)"
  row() {
    local what=$1 f=$2 cpu rss reqs
    cpu=$(col 1 "$f" | median); rss=$(col 2 "$f" | sort -n | tail -1); reqs=$(col 3 "$f" | median)
    printf '  %-46s CPU %7.2fs  RSS %5d MiB  requests %4s' "$what" "$cpu" $((rss / 1024)) "$reqs"
    if [ "$f" != "$WORK/k" ]; then
      awk -v c="$cpu" -v k="$(col 1 "$WORK/k" | median)" 'BEGIN {printf "  CPU ratio %.3f", c / k}'
    fi
    echo
    printf '    runs (CPU s, RSS KiB, requests): %s\n' "$(tr '\n' ';' <"$f")"
  }
  row "kubectl get $KINDS -A -o json" "$WORK/k"
  row "kubectl drift scan -A -o json" "$WORK/s"
  [ -n "$BASE" ] && row "kubectl drift scan -A -o json ($BASE)" "$WORK/b"
  if [ -n "$BASE" ]; then
    if cmp -s <(jq -S 'del(.stats)' "$WORK/scan.json") <(jq -S 'del(.stats)' "$WORK/base.json"); then
      echo "  scan output identical to $BASE's (items, summary, warnings)"
    else
      echo "  scan output DIFFERS from $BASE's"
    fi
  fi
  local target=""
  case $n in
    10000) target="0.15" ;;
    100000) target="0.10" ;;
  esac
  if [ -n "$target" ]; then
    awk -v c="$(col 1 "$WORK/s" | median)" -v k="$(col 1 "$WORK/k" | median)" -v r="$(col 2 "$WORK/s" | sort -n | tail -1)" -v t="$target" -v n="$n" 'BEGIN {
      printf "  target CPU <= %sx kubectl: %s", t, (c / k <= t) ? "met" : "MISSED"
      if (n == 100000) printf "; RSS <= 150 MB: %s", (r * 1024 <= 150 * 1000 * 1000) ? "met" : "MISSED"
      printf "\n"
    }'
  fi
}

echo "kubectl drift scan benchmark: $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs ($(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)), $("$KUBECTL" version -o json | jq -r .serverVersion.gitVersion) API server, $(go env GOVERSION), kubectl-drift $(cd "$ROOT" && git rev-parse --short HEAD)"
for n in $SIZES; do
  bench "$n"
done
