#!/usr/bin/env bash
# Benchmark of a real `kubectl drift serve` process at steady state: API
# requests per minute by serve's user agent (target: zero beyond watches)
# and its peak RSS (target: under 300 MB at 10,000 objects), beside the
# in-process baseline BenchmarkCacheMemory (Go heap of the informer cache)
# of the same run.
#
# For each size N (default 1000 and 10000; BENCH_SIZES="1000 10000") it
#   - starts its own control plane (hack/cluster.sh with a private directory
#     under $TMPDIR and ports 16503/12441, never the shared cluster's) with
#     the API server's audit log on for the read-only user serve runs as;
#   - installs the Flux CRDs and the Kustomization flux-system/apps the
#     objects are labelled with (so owners come from serve's owner cache);
#   - loads N/2 Deployments and N/2 ConfigMaps with real server-side applies
#     as kustomize-controller (a few as argocd-controller, some by no engine)
#     and drifts ~10% with real kubectl commands (hack/bench-lib.sh, the
#     loader hack/bench-scan.sh uses);
#   - runs `kubectl drift serve -A --kinds deployments,configmaps`, waits for
#     /readyz and for every object to be explained, then measures over
#     BENCH_WINDOW seconds (default 120): requests received from serve's
#     user agent, by verb and resource, from the audit log (one per audit
#     ID), and VmHWM / VmRSS from /proc/PID/status at the window's end;
#   - reports serve's start-up requests apart.
# Needs jq (hack/install-deps.sh). Nothing is written inside the checkout;
# the private control plane is stopped and its directory removed at exit.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SIZES=${BENCH_SIZES:-1000 10000}
WINDOW=${BENCH_WINDOW:-120}
NSCOUNT=${BENCH_NAMESPACES:-10}
PORT=16503
ETCD_PORT=12441
METRICS=127.0.0.1:16505

log() { printf '[bench-serve] %s\n' "$*" >&2; }

# shellcheck source=hack/bench-lib.sh
. "$ROOT/hack/bench-lib.sh"
command -v jq >/dev/null || { echo "bench-serve: jq is needed (hack/install-deps.sh installs it)" >&2; exit 2; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/bench-serve.XXXXXX")
RUN=$WORK/cluster
POLICY=$WORK/audit-policy.yaml
AUDIT=$WORK/audit.log
SERVE_PID=
stop_all() {
  if [ -n "$SERVE_PID" ]; then kill "$SERVE_PID" 2>/dev/null || true; wait "$SERVE_PID" 2>/dev/null || true; fi
  bench_private_cluster stop "$RUN" "$PORT" "$ETCD_PORT" >/dev/null 2>&1 || true
}
trap 'stop_all; rm -rf "$WORK"' EXIT

log "building kubectl-drift"
(cd "$ROOT" && go build -o "$WORK/kubectl-drift" ./plugins/kubectl-drift)
CRDS=$("$ROOT/hack/build-tools.sh" flux-crds)
# serve authenticates as the cluster's read-only user "reader": only its
# requests are audited (the load's applies would drown them).
bench_audit_policy "$POLICY" reader

# scrape: serve's /metrics into $WORK/metrics (empty when not answering).
scrape() { curl -fsS "http://$METRICS/metrics" >"$WORK/metrics" 2>/dev/null || : >"$WORK/metrics"; }
# sum NAME: the sum of NAME's samples (all labels) in the last scrape.
sum() { awk -v m="$1" '$1 == m || index($1, m "{") == 1 {s += $2} END {printf "%.0f\n", s}' "$WORK/metrics"; }

bench() {
  local n=$1
  stop_all; SERVE_PID=
  rm -rf "$RUN" "$AUDIT"
  bench_private_cluster start "$RUN" "$PORT" "$ETCD_PORT" "$POLICY" "$AUDIT" >&2
  eval "$(bench_private_cluster env "$RUN" "$PORT" "$ETCD_PORT")"
  KUBECTL="$DRIFT_BIN_DIR/kubectl"
  "$KUBECTL" apply --server-side --field-manager=bench -f "$CRDS" >/dev/null
  "$KUBECTL" wait --for=condition=Established --timeout=60s crd/kustomizations.kustomize.toolkit.fluxcd.io >/dev/null
  "$KUBECTL" create namespace flux-system >/dev/null
  "$KUBECTL" apply --server-side --field-manager=bench -f - >/dev/null <<'YAML'
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: apps, namespace: flux-system}
spec: {interval: 10m, path: ./apps, prune: true, sourceRef: {kind: GitRepository, name: flux-system}}
YAML
  bench_load "$n"
  local objects
  objects=$("$KUBECTL" get deployments,configmaps -A --no-headers | wc -l)

  local t0 t_sync from to
  t0=$(bench_now)
  local s0=$SECONDS
  "$WORK/kubectl-drift" serve -A --kinds deployments,configmaps --metrics-bind-address "$METRICS" \
    --kubeconfig "$DRIFT_READER_KUBECONFIG" 2>"$WORK/serve.log" &
  SERVE_PID=$!
  # Synced: /readyz answers and every listed object was explained, then
  # the event count stays put for 5 s (the queue drained).
  local last=-1 cur stable=0
  while :; do
    kill -0 "$SERVE_PID" 2>/dev/null || { log "serve exited:"; cat "$WORK/serve.log" >&2; return 1; }
    if curl -fsS "http://$METRICS/readyz" >/dev/null 2>&1; then
      scrape; cur=$(sum kubectl_drift_serve_events_total)
      if [ "$cur" -ge "$objects" ] && [ "$cur" = "$last" ]; then
        stable=$((stable + 1)); [ "$stable" -ge 5 ] && break
      else
        stable=0
      fi
      last=$cur
    fi
    [ $((SECONDS - s0)) -lt 900 ] || { log "serve did not sync in 900 s"; return 1; }
    sleep 1
  done
  t_sync=$((SECONDS - s0 - 5))
  from=$(bench_now)
  log "N=$n: serve synced ($objects objects explained $last times); measuring for ${WINDOW}s"
  sleep "$WINDOW"
  to=$(bench_now)
  local hwm rss heap drifted
  hwm=$(awk '/^VmHWM:/ {print $2}' "/proc/$SERVE_PID/status")
  rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$SERVE_PID/status")
  scrape
  heap=$(sum go_memstats_heap_alloc_bytes)
  drifted=$(sum kubectl_drift_objects)
  kill "$SERVE_PID"; wait "$SERVE_PID" || true; SERVE_PID=

  local startup window
  startup=$(bench_audit_count "$AUDIT" "$t0" "$from" | awk '$1 == "kubectl-drift"')
  window=$(bench_audit_count "$AUDIT" "$from" "$to" | awk '$1 == "kubectl-drift"')
  echo "== N=$n (objects: $objects, drifted: $drifted; sync ${t_sync}s; window ${WINDOW}s)"
  echo "  start-up requests (verb resource count):"
  awk '{printf "    %-6s %-24s %d\n", $2, $3, $4}' <<<"$startup"
  echo "  steady-state requests in the window:"
  if [ -z "$window" ]; then echo "    none"; else awk '{printf "    %-6s %-24s %d\n", $2, $3, $4}' <<<"$window"; fi
  awk -v w="$WINDOW" -v hwm="$hwm" -v rss="$rss" -v heap="$heap" -v n="$n" '
    {all += $4; if ($2 != "watch") other += $4}
    END {
      printf "  requests/min: %.1f in all, %.1f other than WATCH (target 0: %s)\n", all*60/w, other*60/w, other == 0 ? "met" : "MISSED"
      printf "  peak RSS (VmHWM): %.1f MB, RSS at the end %.1f MB, Go heap %.1f MB; target < 300 MB at 10000: %s\n",
        hwm/1024, rss/1024, heap/1048576, (n < 10000 || hwm < 300*1024) ? "met" : "MISSED"
    }' <<<"$window"
  RESULT+=("$n $objects $hwm $heap")
}

echo "kubectl-drift serve benchmark: $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, kube-apiserver v1.37.2 (private, :$PORT), go $(go env GOVERSION)"
RESULT=()
for n in $SIZES; do
  bench "$n"
done

log "in-process baseline: go test -bench BenchmarkCacheMemory ./internal/serve"
base=$(cd "$ROOT" && go test -run '^$' -bench 'BenchmarkCacheMemory' -benchtime 1x ./internal/serve | awk '/^BenchmarkCacheMemory\// {split($1, a, "[/-]"); for (i = 2; i < NF; i++) if ($(i + 1) == "MB-heap") print a[2], $i}')
echo "== against BenchmarkCacheMemory (in-process Go heap of the informer cache and serve's state; N owned + N unowned ConfigMaps)"
printf '  %-8s %-8s %-14s %-14s %-16s %s\n' N objects "peak RSS MB" "Go heap MB" "baseline MB" "RSS/baseline heap/baseline"
for r in "${RESULT[@]}"; do
  read -r n objects hwm heap <<<"$r"
  b=$(awk -v n="$n" '$1 == n {print $2}' <<<"$base")
  awk -v n="$n" -v o="$objects" -v hwm="$hwm" -v heap="$heap" -v b="${b:-0}" 'BEGIN {
    printf "  %-8d %-8d %-14.1f %-14.1f %-16.1f %s\n", n, o, hwm/1024, heap/1048576, b, (b > 0) ? sprintf("%.1f %.1f", hwm/1024/b, heap/1048576/b) : "-"
  }'
done
