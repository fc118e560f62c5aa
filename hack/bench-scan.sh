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
BIN="$WORK/kubectl-drift"
log "building kubectl-drift"
(cd "$ROOT" && go build -o "$BIN" ./plugins/kubectl-drift)

namespaces() { seq 1 "$NSCOUNT" | sed 's/^/bench-/'; }

# Objects go away with one DELETE per collection; the namespace itself then
# needs its finalizer removed: this control plane runs no namespace
# controller (no kube-controller-manager), so it would stay Terminating.
cleanup() {
  local ns
  for ns in $(namespaces); do
    "$KUBECTL" get namespace "$ns" >/dev/null 2>&1 || continue
    "$KUBECTL" delete --raw "/apis/apps/v1/namespaces/$ns/deployments" >/dev/null 2>&1 || true
    "$KUBECTL" delete --raw "/api/v1/namespaces/$ns/configmaps" >/dev/null 2>&1 || true
    "$KUBECTL" delete namespace "$ns" --wait=false >/dev/null 2>&1 || true
    printf '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"%s"},"spec":{"finalizers":[]}}' "$ns" |
      "$KUBECTL" replace --raw "/api/v1/namespaces/$ns/finalize" -f - >/dev/null 2>&1 || true
  done
}
trap 'cleanup; rm -rf "$WORK"' EXIT

# gen NS COUNT: COUNT/2 Deployments and COUNT/2 ConfigMaps of realistic size.
# Object i is owned by Flux, except every 20th (Argo CD) and every 25th (no
# engine). Drift marks (label bench/drift) pick ~10% for the kubectl steps.
gen() {
  awk -v ns="$1" -v n="$2" -v which="$3" '
  function owner(i) {
    if (i % 25 == 0) return "none"
    if (i % 20 == 0) return "argocd"
    return "flux"
  }
  function meta(kind, name, i, group,   o, d) {
    o = owner(i)
    printf "---\napiVersion: %s\nkind: %s\nmetadata:\n  name: %s\n  namespace: %s\n  labels:\n    app.kubernetes.io/name: %s\n    app.kubernetes.io/part-of: bench\n", group, kind, name, ns, name
    if (o == "flux") printf "    kustomize.toolkit.fluxcd.io/name: apps\n    kustomize.toolkit.fluxcd.io/namespace: flux-system\n"
    d = ""
    if (i % 10 == 1) d = (kind == "Deployment") ? "scale" : "label"
    if (i % 10 == 3 && i % 30 == 3) d = (kind == "Deployment") ? "image" : "annotate"
    if (d != "") printf "    bench/drift: %s\n", d
    if (o == "argocd") printf "  annotations:\n    argocd.argoproj.io/tracking-id: \"bench:%s/%s:%s/%s\"\n", (group == "v1" ? "" : "apps"), kind, ns, name
  }
  BEGIN {
    half = int(n / 2)
    for (i = 1; i <= half; i++) {
      if (which != "none" && owner(i) != which) continue
      if (which == "none" && owner(i) != "none") continue
      meta("Deployment", sprintf("web-%05d", i), i, "apps/v1")
      printf "spec:\n  replicas: 2\n  selector:\n    matchLabels: {app.kubernetes.io/name: web-%05d}\n", i
      printf "  template:\n    metadata:\n      labels: {app.kubernetes.io/name: web-%05d}\n    spec:\n      containers:\n", i
      printf "      - name: app\n        image: registry.example.com/shop/web:1.%d.0\n        ports: [{containerPort: 8080, name: http}]\n", i % 7
      printf "        env: [{name: LOG_LEVEL, value: info}, {name: REGION, value: eu-west-1}, {name: FEATURE_FLAGS, value: \"checkout,search\"}]\n"
      printf "        resources: {requests: {cpu: 100m, memory: 128Mi}, limits: {cpu: 500m, memory: 256Mi}}\n"
      printf "        readinessProbe: {httpGet: {path: /healthz, port: http}, periodSeconds: 10}\n"
      printf "      - name: sidecar\n        image: registry.example.com/infra/proxy:2.3.1\n        args: [--listen=:9000, --upstream=127.0.0.1:8080]\n"
      meta("ConfigMap", sprintf("cfg-%05d", i), i, "v1")
      printf "data:\n  app.properties: |\n    server.port=8080\n    cache.ttl=300\n    feature.checkout=true\n    feature.search=true\n  LOG_LEVEL: info\n  REGION: eu-west-1\n"
    }
  }'
}

load() {
  local n=$1 per=$(( $1 / NSCOUNT )) ns pids=()
  log "loading $n objects into $NSCOUNT namespaces (server-side apply as kustomize-controller / argocd-controller / kubectl)"
  local t0=$SECONDS
  for ns in $(namespaces); do
    (
      "$KUBECTL" create namespace "$ns" >/dev/null
      gen "$ns" "$per" flux | "$KUBECTL" apply --server-side --field-manager=kustomize-controller -f - >/dev/null
      gen "$ns" "$per" argocd | "$KUBECTL" apply --server-side --field-manager=argocd-controller -f - >/dev/null
      gen "$ns" "$per" none | "$KUBECTL" apply --server-side -f - >/dev/null
    ) &
    pids+=($!)
  done
  local p; for p in "${pids[@]}"; do wait "$p"; done
  log "drifting ~10% with kubectl scale / set image / label / annotate / patch"
  pids=()
  for ns in $(namespaces); do
    (
      "$KUBECTL" -n "$ns" scale deployment -l bench/drift=scale --replicas=5 >/dev/null
      "$KUBECTL" -n "$ns" set image deployment -l bench/drift=image app=registry.example.com/shop/web:hotfix >/dev/null
      "$KUBECTL" -n "$ns" label configmap -l bench/drift=label team=oncall >/dev/null
      "$KUBECTL" -n "$ns" annotate configmap -l bench/drift=annotate incident=INC-4711 >/dev/null
      "$KUBECTL" -n "$ns" patch configmap cfg-00002 --type=merge -p '{"data":{"LOG_LEVEL":"debug"}}' >/dev/null
    ) &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
  log "loaded in $(( SECONDS - t0 ))s"
}

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
  load "$n"
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
