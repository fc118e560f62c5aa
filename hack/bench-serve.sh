#!/usr/bin/env bash
# Benchmark of a real `kubectl drift serve` process at steady state: API
# requests per minute by serve's user agent (target: zero beyond watches)
# and its peak RSS (target: under 300 MB at 10,000 objects), beside the
# in-process baseline BenchmarkCacheMemory (Go heap of the informer cache)
# of the same run.
#
# For each size N (default 1000 and 10000; BENCH_SIZES="1000 10000") it
#   - starts its own control plane (hack/cluster.sh with a private directory
#     under $TMPDIR and ports BENCH_SERVE_PORTS, default 16503/12441, never
#     the shared cluster's; serve's metrics on 127.0.0.1:API port + 2) with
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
#   - reports serve's start-up requests apart;
#   - reads serve's CPU (utime+stime, /proc/PID/stat) when it synced: the
#     initial sync's CPU, start-up included;
#   - also runs serve over an empty namespace (-n bench-empty) once, the
#     process's floor: bytes per watched object = (RSS at N - RSS empty) / N.
# BENCH_BASE=REF also builds REF (git archive of this repository) and
# measures it on the same loaded cluster right before the checkout's binary:
# before/after figures from one load, one session. BENCH_PPROF=DIR saves a
# heap profile of each serve at the window's end (serve --pprof) as
# DIR/heap-LABEL-N.pb.gz.
# BENCH_KEEP=1 leaves the control plane and its load up (a fixed directory
# per port, $TMPDIR/bench-serve-keep-PORT) and a later run with BENCH_KEEP=1
# reuses a load of the same size; BENCH_LOAD_ONLY=1 (with BENCH_KEEP=1) only
# loads: a 100k load (~15-25 minutes on a loaded machine) is paid once, and
# hack/bench-serve-sync.sh interleaves runs on two kept loads. BENCH_FLOOR=0
# skips the empty-namespace run, BENCH_INPROCESS=0 the in-process baseline.
# Each measured run also prints a line "RESULT LABEL N OBJECTS PEAK_KIB
# RSS_KIB HEAP_B READY_S SYNC_S SYNC_CPU_S REQ_PER_MIN LOADAVG_1M" for scripts.
# Needs jq (hack/install-deps.sh). Nothing is written inside the checkout;
# the private control plane is stopped and its directory removed at exit.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SIZES=${BENCH_SIZES:-1000 10000}
WINDOW=${BENCH_WINDOW:-120}
NSCOUNT=${BENCH_NAMESPACES:-10}
BASE=${BENCH_BASE:-}
PPROF=${BENCH_PPROF:-}
PORTS=${BENCH_SERVE_PORTS:-16503/12441}
PORT=${PORTS%/*}
ETCD_PORT=${PORTS#*/}
METRICS=127.0.0.1:$((PORT + 2))
KEEP=${BENCH_KEEP:-}

log() { printf '[bench-serve] %s\n' "$*" >&2; }

# shellcheck source=hack/bench-lib.sh
. "$ROOT/hack/bench-lib.sh"
command -v jq >/dev/null || { echo "bench-serve: jq is needed (hack/install-deps.sh installs it)" >&2; exit 2; }

if [ -n "$KEEP" ]; then
  # A fixed directory, so a later run finds the cluster and its load.
  WORK=${TMPDIR:-/tmp}/bench-serve-keep-$PORT
  mkdir -p "$WORK"
else
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/bench-serve.XXXXXX")
fi
RUN=$WORK/cluster
POLICY=$WORK/audit-policy.yaml
AUDIT=$WORK/audit.log
SERVE_PID=
stop_serve() {
  if [ -n "$SERVE_PID" ]; then kill "$SERVE_PID" 2>/dev/null || true; wait "$SERVE_PID" 2>/dev/null || true; fi
  SERVE_PID=
}
stop_all() {
  stop_serve
  bench_private_cluster stop "$RUN" "$PORT" "$ETCD_PORT" >/dev/null 2>&1 || true
}
if [ -n "$KEEP" ]; then
  trap 'stop_serve; log "kept: $(bench_private_cluster env "$RUN" "$PORT" "$ETCD_PORT" | grep KUBECONFIG= | head -1)"' EXIT
else
  trap 'stop_all; rm -rf "$WORK"' EXIT
fi

log "building kubectl-drift"
(cd "$ROOT" && go build -o "$WORK/kubectl-drift" ./plugins/kubectl-drift)
# BINS: "LABEL=PATH" of each binary measured, in order.
BINS=("head=$WORK/kubectl-drift")
if [ -n "$BASE" ]; then
  log "building kubectl-drift at $BASE (BENCH_BASE)"
  mkdir -p "$WORK/base-src"
  git -C "$ROOT" archive "$BASE" | tar -x -C "$WORK/base-src"
  (cd "$WORK/base-src" && go build -o "$WORK/kubectl-drift-base" ./plugins/kubectl-drift)
  BINS=("base=$WORK/kubectl-drift-base" "${BINS[@]}")
fi
[ -z "$PPROF" ] || mkdir -p "$PPROF"
CRDS=$("$ROOT/hack/build-tools.sh" flux-crds)
CLK_TCK=$(getconf CLK_TCK)
# serve authenticates as the cluster's read-only user "reader": only its
# requests are audited (the load's applies would drown them).
bench_audit_policy "$POLICY" reader

# scrape: serve's /metrics into $WORK/metrics (empty when not answering).
scrape() { curl -fsS "http://$METRICS/metrics" >"$WORK/metrics" 2>/dev/null || : >"$WORK/metrics"; }
# sum NAME: the sum of NAME's samples (all labels) in the last scrape.
sum() { awk -v m="$1" '$1 == m || index($1, m "{") == 1 {s += $2} END {printf "%.0f\n", s}' "$WORK/metrics"; }
# cpu PID: the process's CPU seconds so far (user + system, /proc/PID/stat).
cpu() { awk -v t="$CLK_TCK" '{printf "%.2f\n", ($14 + $15) / t}' "/proc/$1/stat"; }

# load N: a fresh private control plane with the Flux CRDs, the
# Kustomization flux-system/apps, the empty namespace bench-empty and N
# objects. With BENCH_KEEP, a running control plane that holds N objects
# already is reused.
load() {
  local n=$1
  if [ -n "$KEEP" ] && [ "$(cat "$WORK/loaded" 2>/dev/null)" = "$n" ] &&
    bench_private_cluster status "$RUN" "$PORT" "$ETCD_PORT" >/dev/null 2>&1; then
    eval "$(bench_private_cluster env "$RUN" "$PORT" "$ETCD_PORT")"
    KUBECTL="$DRIFT_BIN_DIR/kubectl"
    log "reusing the kept load of $n objects ($RUN)"
    return 0
  fi
  stop_all
  rm -rf "$RUN" "$AUDIT" "$WORK/loaded"
  bench_private_cluster start "$RUN" "$PORT" "$ETCD_PORT" "$POLICY" "$AUDIT" >&2
  eval "$(bench_private_cluster env "$RUN" "$PORT" "$ETCD_PORT")"
  KUBECTL="$DRIFT_BIN_DIR/kubectl"
  "$KUBECTL" apply --server-side --field-manager=bench -f "$CRDS" >/dev/null
  "$KUBECTL" wait --for=condition=Established --timeout=60s crd/kustomizations.kustomize.toolkit.fluxcd.io >/dev/null
  "$KUBECTL" create namespace flux-system >/dev/null
  "$KUBECTL" create namespace bench-empty >/dev/null
  "$KUBECTL" apply --server-side --field-manager=bench -f - >/dev/null <<'YAML'
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: apps, namespace: flux-system}
spec: {interval: 10m, path: ./apps, prune: true, sourceRef: {kind: GitRepository, name: flux-system}}
YAML
  bench_load "$n"
  echo "$n" >"$WORK/loaded"
}

# measure LABEL BIN N SCOPE...: one serve run of BIN over SCOPE (-A, or
# -n bench-empty), to sync and through the window; appends a RESULT line.
measure() {
  local label=$1 bin=$2 n=$3; shift 3
  local objects=0
  if [ "$1" = -A ]; then objects=$("$KUBECTL" get deployments,configmaps -A --no-headers | wc -l); fi
  local t0 from to s0=$SECONDS t_ready=-1 t_sync sync_cpu loadavg
  local extra=()
  [ -z "$PPROF" ] || extra=(--pprof)
  t0=$(bench_now)
  "$bin" serve "$@" --kinds deployments,configmaps --metrics-bind-address "$METRICS" "${extra[@]}" \
    --kubeconfig "$DRIFT_READER_KUBECONFIG" 2>"$WORK/serve.log" &
  SERVE_PID=$!
  # Synced: /readyz answers and every listed object was explained, then
  # the event count stays put for 5 s (the queue drained).
  local last=-1 cur stable=0
  while :; do
    kill -0 "$SERVE_PID" 2>/dev/null || { log "serve exited:"; cat "$WORK/serve.log" >&2; return 1; }
    if curl -fsS "http://$METRICS/readyz" >/dev/null 2>&1; then
      [ "$t_ready" -ge 0 ] || t_ready=$((SECONDS - s0))
      scrape; cur=$(sum kubectl_drift_serve_events_total)
      if [ "$cur" -ge "$objects" ] && [ "$cur" = "$last" ]; then
        stable=$((stable + 1)); [ "$stable" -ge 5 ] && break
      else
        stable=0
      fi
      last=$cur
    fi
    [ $((SECONDS - s0)) -lt 1800 ] || { log "serve did not sync in 1800 s"; return 1; }
    sleep 1
  done
  sync_cpu=$(cpu "$SERVE_PID")
  t_sync=$((SECONDS - s0 - 5))
  loadavg=$(cut -d' ' -f1 /proc/loadavg)
  from=$(bench_now)
  log "$label N=$n ($*): serve synced ($objects objects explained $last times, ${sync_cpu}s CPU); measuring for ${WINDOW}s"
  sleep "$WINDOW"
  to=$(bench_now)
  local hwm rss heap drifted rest_cpu
  hwm=$(awk '/^VmHWM:/ {print $2}' "/proc/$SERVE_PID/status")
  rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$SERVE_PID/status")
  rest_cpu=$(awk -v a="$(cpu "$SERVE_PID")" -v b="$sync_cpu" 'BEGIN {printf "%.2f\n", a - b}')
  scrape
  heap=$(sum go_memstats_heap_alloc_bytes)
  drifted=$(sum kubectl_drift_objects)
  [ -z "$PPROF" ] || curl -fsS "http://$METRICS/debug/pprof/heap" >"$PPROF/heap-$label-$n.pb.gz" || true
  stop_serve

  local startup window
  startup=$(bench_audit_count "$AUDIT" "$t0" "$from" | awk '$1 == "kubectl-drift"')
  window=$(bench_audit_count "$AUDIT" "$from" "$to" | awk '$1 == "kubectl-drift"')
  echo "== $label N=$n $* (objects: $objects, drifted: $drifted; ready ${t_ready}s, sync ${t_sync}s, sync CPU ${sync_cpu}s; window ${WINDOW}s, CPU in it ${rest_cpu}s; load average at sync $loadavg)"
  echo "  start-up requests (verb resource count):"
  awk '{printf "    %-6s %-24s %d\n", $2, $3, $4}' <<<"$startup"
  echo "  steady-state requests in the window:"
  if [ -z "$window" ]; then echo "    none"; else awk '{printf "    %-6s %-24s %d\n", $2, $3, $4}' <<<"$window"; fi
  awk -v w="$WINDOW" -v hwm="$hwm" -v rss="$rss" -v heap="$heap" -v n="$objects" '
    {all += $4; if ($2 != "watch") other += $4}
    END {
      printf "  requests/min: %.1f in all, %.1f other than WATCH (target 0: %s)\n", all*60/w, other*60/w, other == 0 ? "met" : "MISSED"
      printf "  peak RSS (VmHWM): %.1f MB, RSS at the end %.1f MB, Go heap %.1f MB; target < 300 MB at 100000: %s\n",
        hwm/1024, rss/1024, heap/1048576, (n < 100000 || hwm < 300*1024) ? "met" : "MISSED"
    }' <<<"$window"
  local rpm
  rpm=$(awk -v w="$WINDOW" '$2 != "watch" {o += $4} END {printf "%.1f\n", o*60/w}' <<<"$window")
  RESULT+=("$label $n $objects $hwm $rss $heap $t_ready $t_sync $sync_cpu $rpm")
  echo "RESULT $label $n $objects $hwm $rss $heap $t_ready $t_sync $sync_cpu $rpm $loadavg"
}

echo "kubectl-drift serve benchmark: $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, kube-apiserver v1.37.2 (private, :$PORT), go $(go env GOVERSION)${BASE:+, base $BASE ($(git -C "$ROOT" rev-parse --short "$BASE")) against head $(git -C "$ROOT" rev-parse --short HEAD)$(git -C "$ROOT" diff --quiet HEAD || echo '+changes')}"
RESULT=()
first=1
for n in $SIZES; do
  load "$n"
  if [ -n "${BENCH_LOAD_ONLY:-}" ]; then
    log "loaded $n objects; BENCH_LOAD_ONLY: not measured"
    continue
  fi
  for b in "${BINS[@]}"; do
    label=${b%%=*}
    # The floor (an empty namespace) once per binary, on the first load.
    [ "$first" = 0 ] || [ "${BENCH_FLOOR:-1}" = 0 ] || measure "$label" "${b#*=}" 0 -n bench-empty
    measure "$label" "${b#*=}" "$n" -A
  done
  first=0
done

[ -z "${BENCH_LOAD_ONLY:-}" ] || exit 0
base=""
[ "${BENCH_INPROCESS:-1}" = 0 ] || log "in-process baseline: go test -bench BenchmarkCacheMemory ./internal/serve"
[ "${BENCH_INPROCESS:-1}" = 0 ] || base=$(cd "$ROOT" && go test -run '^$' -bench 'BenchmarkCacheMemory' -benchtime 1x ./internal/serve | awk '/^BenchmarkCacheMemory\// {split($1, a, "[/-]"); for (i = 2; i < NF; i++) if ($(i + 1) == "MB-heap") print a[2], $i}')
echo "== summary (RSS and heap in MB; bytes/object: (RSS at end - RSS of the empty run) / objects; CPU in s; non-WATCH requests/min at rest)"
printf '  %-5s %-7s %-8s %-9s %-9s %-8s %-9s %-6s %-6s %-8s %-8s %s\n' binary N objects "peak RSS" "RSS" "heap" "B/object" ready sync "sync CPU" "req/min" "BenchmarkCacheMemory heap"
for r in "${RESULT[@]}"; do
  read -r label n objects hwm rss heap t_ready t_sync sync_cpu rpm <<<"$r"
  floor=$(printf '%s\n' "${RESULT[@]}" | awk -v l="$label" '$1 == l && $2 == 0 {print $5; exit}')
  b=$(awk -v n="$n" '$1 == n {print $2}' <<<"$base")
  awk -v l="$label" -v n="$n" -v o="$objects" -v hwm="$hwm" -v rss="$rss" -v heap="$heap" -v f="${floor:-0}" \
    -v tr="$t_ready" -v ts="$t_sync" -v c="$sync_cpu" -v rpm="$rpm" -v b="${b:--}" 'BEGIN {
    printf "  %-5s %-7d %-8d %-9.1f %-9.1f %-8.1f %-9s %-6d %-6d %-8.2f %-8.1f %s\n", l, n, o, hwm/1024, rss/1024, heap/1048576,
      (o > 0 ? sprintf("%.0f", (rss - f) * 1024 / o) : "-"), tr, ts, c, rpm, b
  }'
done
