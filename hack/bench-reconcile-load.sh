#!/usr/bin/env bash
# Reconcile load profile: what the real kustomize-controller (v1.9.6, the
# Flux conformance harness's, built by hack/build-tools.sh) asks of the API
# server per reconcile, against the number of objects it applies, and what
# that means per reconcile interval; `kubectl drift serve` beside it.
# Answers "what does tightening the interval below one minute cost".
#
# It starts its own control plane (hack/cluster.sh, private directory under
# $TMPDIR, ports 16513/12451, never the shared cluster) with the API
# server's audit log (Metadata level: no bodies), plays source-controller as
# the Flux lab does (a tar.gz artifact served from loopback, its url,
# revision and digest written into a GitRepository's status), runs
# kustomize-controller and `kubectl drift serve -A`, and for each size N
# (default 50 and 500 objects: BENCH_SIZES; half ConfigMaps, half
# Deployments) in a namespace of its own:
#   1. creates GitRepository + Kustomization (interval 1h, prune) and waits
#      for the first apply;
#   2. idle window (BENCH_IDLE seconds, default 60): no reconcile, only
#      watches: requests by user agent;
#   3. forced reconciles (BENCH_RECONCILES, default 5; the
#      reconcile.fluxcd.io/requestedAt annotation, as `flux reconcile` does,
#      to compress time), each waited for: requests per reconcile by user
#      agent and verb, from the audit log (one per audit ID);
#   4. requests/s at intervals 10m, 1m, 30s, 10s = per reconcile / interval
#      (plus the idle rate).
# Needs jq, curl, python3 (hack/install-deps.sh: jq). Nothing is written
# inside the checkout; everything is stopped and removed at exit.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SIZES=${BENCH_SIZES:-50 500}
IDLE=${BENCH_IDLE:-60}
RECONCILES=${BENCH_RECONCILES:-5}
PORT=16513
ETCD_PORT=12451
HTTP_PORT=16515
METRICS=127.0.0.1:16516

log() { printf '[bench-reconcile-load] %s\n' "$*" >&2; }

# shellcheck source=hack/bench-lib.sh
. "$ROOT/hack/bench-lib.sh"
for c in jq curl python3; do
  command -v "$c" >/dev/null || { echo "bench-reconcile-load: $c is needed" >&2; exit 2; }
done

bench_workdir bench-reconcile

log "building kubectl-drift; kustomize-controller and the Flux CRDs from hack/build-tools.sh"
(cd "$ROOT" && go build -o "$WORK/kubectl-drift" ./plugins/kubectl-drift)
KC=$("$ROOT/hack/build-tools.sh" kustomize-controller)
CRDS=$("$ROOT/hack/build-tools.sh" flux-crds)
bench_audit_policy "$POLICY"
bench_private_cluster start "$RUN" "$PORT" "$ETCD_PORT" "$POLICY" "$AUDIT" >&2
eval "$(bench_private_cluster env "$RUN" "$PORT" "$ETCD_PORT")"
KUBECTL="$DRIFT_BIN_DIR/kubectl"
"$KUBECTL" apply --server-side --field-manager=bench -f "$CRDS" >/dev/null
"$KUBECTL" wait --for=condition=Established --timeout=60s crd/kustomizations.kustomize.toolkit.fluxcd.io crd/gitrepositories.source.toolkit.fluxcd.io >/dev/null

# source-controller's part: artifacts over loopback HTTP.
mkdir -p "$WORK/artifacts"
python3 -m http.server "$HTTP_PORT" --bind 127.0.0.1 --directory "$WORK/artifacts" >/dev/null 2>&1 &
PIDS+=($!)
# Flags as the Flux lab's (e2e/flux_lab_test.go): no leader election, no
# metrics port; KUBECONFIG from the environment (admin).
"$KC" --metrics-addr=0 --health-addr=127.0.0.1:0 --enable-leader-election=false --no-remote-bases=true --concurrent=4 \
  >"$WORK/kustomize-controller.log" 2>&1 &
PIDS+=($!)
"$WORK/kubectl-drift" serve -A --metrics-bind-address "$METRICS" --kubeconfig "$DRIFT_READER_KUBECONFIG" 2>"$WORK/serve.log" &
PIDS+=($!)

# artifact NS N: a kustomize dir of N objects as tar.gz, published in the
# GitRepository's status; prints the revision.
artifact() {
  local ns=$1 n=$2 d="$WORK/src-$1"
  rm -rf "$d"; mkdir -p "$d"
  bench_objects "$ns" "$n" >"$d/objects.yaml"
  tar -C "$d" -czf "$WORK/artifacts/$ns.tar.gz" objects.yaml
  local sha256 sha1 size now
  sha256=$(sha256sum "$WORK/artifacts/$ns.tar.gz" | cut -d' ' -f1)
  sha1=$(sha1sum "$WORK/artifacts/$ns.tar.gz" | cut -d' ' -f1)
  size=$(stat -c %s "$WORK/artifacts/$ns.tar.gz")
  now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  "$KUBECTL" -n "$ns" patch gitrepository repo --subresource=status --type=merge --field-manager=source-controller -p "$(cat <<JSON
{"status": {"observedGeneration": 1,
  "artifact": {"path": "gitrepository/$ns/repo/$sha256.tar.gz", "url": "http://127.0.0.1:$HTTP_PORT/$ns.tar.gz",
    "revision": "main@sha1:$sha1", "digest": "sha256:$sha256", "lastUpdateTime": "$now", "size": $size},
  "conditions": [{"type": "Ready", "status": "True", "reason": "Succeeded", "message": "stored artifact", "lastTransitionTime": "$now", "observedGeneration": 1}]}}
JSON
)" >/dev/null
  echo "main@sha1:$sha1"
}

# wait_ks NS JQ-CONDITION: until the Kustomization's JSON satisfies it.
wait_ks() {
  local t0=$SECONDS
  until "$KUBECTL" -n "$1" get kustomization apps -o json | jq -e "$2" >/dev/null; do
    [ $((SECONDS - t0)) -lt 300 ] || { log "Kustomization $1/apps: timed out waiting for $2"; tail -20 "$WORK/kustomize-controller.log" >&2; return 1; }
    sleep 0.5
  done
}

# table FROM TO SECONDS RECONCILES: requests by agent and verb in the span.
table() { bench_audit_table "$AUDIT" "$1" "$2" "$3" "$4" reconcile '^(kustomize-controller|kubectl-drift)$'; }

# per AGENT FROM TO: the agent's requests in the span.
per() { bench_audit_sum "$AUDIT" "$2" "$3" "^$1\$"; }

echo "kubectl-drift reconcile load profile: $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, kube-apiserver v1.37.2 (private, :$PORT), kustomize-controller $(basename "$(dirname "$KC")"), go $(go env GOVERSION)"
SUMMARY=()
for n in $SIZES; do
  ns=load-$n
  "$KUBECTL" create namespace "$ns" >/dev/null
  "$KUBECTL" apply --server-side --field-manager=bench -f - >/dev/null <<YAML
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: repo, namespace: $ns}
spec: {interval: 1h, url: "https://example.invalid/repo.git", ref: {branch: main}}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: apps, namespace: $ns}
spec: {interval: 1h, path: ./, prune: true, timeout: 2m, sourceRef: {kind: GitRepository, name: repo}}
YAML
  rev=$(artifact "$ns" "$n")
  wait_ks "$ns" ".status.lastAppliedRevision == \"$rev\""
  log "N=$n: first apply done; idle window ${IDLE}s"
  sleep 5
  from=$(bench_now); sleep "$IDLE"; to=$(bench_now)
  echo "== N=$n objects, idle (interval 1h, no reconcile) for ${IDLE}s: requests by agent and verb"
  idle_t=$(table "$from" "$to" "$IDLE" 0); echo "${idle_t:-    none}"
  idle_kc=$(per kustomize-controller "$from" "$to")
  idle_kd=$(per kubectl-drift "$from" "$to")

  log "N=$n: $RECONCILES forced reconciles"
  from=$(bench_now); s0=$(date +%s.%N)
  for i in $(seq 1 "$RECONCILES"); do
    token=$(date -u +%Y-%m-%dT%H:%M:%S.%NZ)
    "$KUBECTL" -n "$ns" annotate kustomization apps --overwrite "reconcile.fluxcd.io/requestedAt=$token" >/dev/null
    wait_ks "$ns" ".status.lastHandledReconcileAt == \"$token\""
  done
  sleep 3 # serve's re-explains of the last reconcile's events
  to=$(bench_now); s1=$(date +%s.%N)
  secs=$(awk -v a="$s0" -v b="$s1" 'BEGIN {printf "%.1f", b - a}')
  echo "== N=$n objects, $RECONCILES forced reconciles in ${secs}s: requests by agent and verb"
  table "$from" "$to" "$secs" "$RECONCILES"
  kc=$(per kustomize-controller "$from" "$to")
  kd=$(per kubectl-drift "$from" "$to")
  SUMMARY+=("$n $kc $kd $RECONCILES $idle_kc $idle_kd $secs")
done

echo "== requests/s at steady state by reconcile interval (per reconcile / interval + idle rate; idle window ${IDLE}s)"
printf '  %-6s %-22s %-12s %8s %8s %8s %8s\n' N agent "per recon." 10m 1m 30s 10s
for r in "${SUMMARY[@]}"; do
  read -r n kc kd rc ikc ikd secs <<<"$r"
  awk -v n="$n" -v kc="$kc" -v kd="$kd" -v rc="$rc" -v ikc="$ikc" -v ikd="$ikd" -v idle="$IDLE" 'BEGIN {
    split("600 60 30 10", iv, " ")
    line("kustomize-controller", kc / rc, ikc / idle)
    line("kubectl-drift serve", kd / rc, ikd / idle)
  }
  function line(who, per, base,   i, s) {
    s = sprintf("  %-6d %-22s %-12.1f", n, who, per)
    for (i = 1; i <= 4; i++) s = s sprintf(" %8.2f", per / iv[i] + base)
    print s
  }'
done
