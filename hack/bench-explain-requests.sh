#!/usr/bin/env bash
# The API requests of one `kubectl drift explain`, counted by the API server
# itself (issue 35): what explain reads besides the object and its owner.
#
# It starts its own control plane (hack/cluster.sh, private directory under
# $TMPDIR, ports BENCH_EXPLAIN_PORTS, default 16573/12501, never the shared
# cluster) with the API server's
# audit log (Metadata level: no bodies), installs the Flux CRDs
# (hack/build-tools.sh flux-crds) and Argo CD's Application CRD (argo-cd
# module zip, as e2e/argocd_test.go does), argocd-cm and
# argocd-cmd-params-cm, the Kustomization flux-system/apps and the
# Application argocd/shop plus BENCH_EXTRA (default 300) more of each, and
# two Deployments in namespace shop: web-flux (Kustomization labels, applied
# as kustomize-controller) and web-argo (tracking id, applied as
# argocd-controller), both scaled by kubectl afterwards (drift), and
# web-argo-mf, tracked by Application argocd/shop-mf whose managedFieldsManagers
# rule makes the verdict need the OpenAPI schema (read per group-version
# from /openapi/v3, never /openapi/v2).
#
# Then, for each object and mode (inferred, -f FILE, --engine argocd,
# -f FILE --server-dry-run), it runs explain once to warm the discovery and
# OpenAPI disk caches (a private KUBECACHEDIR) and once measured, and prints
# the measured run's requests per (verb, resource) from the audit log (one
# per audit ID, user agent kubectl-drift), beside `kubectl get deploy NAME`
# run the same way (user agent kubectl).
#
# Needs jq. Nothing is written inside the checkout; the private control
# plane is stopped and its directory removed at exit. Run it under
# `flock -o /tmp/drift-bench.lock` when others share the machine.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
EXTRA=${BENCH_EXTRA:-300}
PORTS=${BENCH_EXPLAIN_PORTS:-16573/12501}
PORT=${PORTS%/*}
ETCD_PORT=${PORTS#*/}
NSCOUNT=0 # bench-lib's namespaces: none here

log() { printf '[bench-explain] %s\n' "$*" >&2; }

# shellcheck source=hack/bench-lib.sh
. "$ROOT/hack/bench-lib.sh"
for c in jq go; do
  command -v "$c" >/dev/null || { echo "bench-explain-requests: $c is needed" >&2; exit 2; }
done

bench_workdir bench-explain
BIN=$WORK/kubectl-drift
log "building kubectl-drift"
(cd "$ROOT" && go build -o "$BIN" ./plugins/kubectl-drift)
FLUX_CRDS=$("$ROOT/hack/build-tools.sh" flux-crds)
ARGO_MOD=$(cd "$ROOT" && go mod download -json "github.com/argoproj/argo-cd/v3@v3.2.12" | jq -r .Dir)
bench_audit_policy "$POLICY"
bench_private_cluster start "$RUN" "$PORT" "$ETCD_PORT" "$POLICY" "$AUDIT" >&2
eval "$(bench_private_cluster env "$RUN" "$PORT" "$ETCD_PORT")"
KUBECTL="$DRIFT_BIN_DIR/kubectl"
ADMIN=$KUBECONFIG
READER=$DRIFT_READER_KUBECONFIG
# kubectl's and kubectl-drift's discovery and OpenAPI caches, private.
export KUBECACHEDIR=$WORK/kube-cache

log "installing the CRDs and the engines' objects ($EXTRA extra Applications and Kustomizations)"
"$KUBECTL" apply --server-side --force-conflicts --field-manager=bench -f "$FLUX_CRDS" >/dev/null
"$KUBECTL" apply --server-side --force-conflicts --field-manager=bench -f "$ARGO_MOD/manifests/crds/application-crd.yaml" >/dev/null
"$KUBECTL" wait --for=condition=Established --timeout=60s crd/kustomizations.kustomize.toolkit.fluxcd.io crd/applications.argoproj.io >/dev/null

engine_objects() {
  cat <<'YAML'
apiVersion: v1
kind: Namespace
metadata: {name: flux-system}
---
apiVersion: v1
kind: Namespace
metadata: {name: argocd}
---
apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-cm, namespace: argocd, labels: {app.kubernetes.io/part-of: argocd}}
data:
  resource.customizations.ignoreDifferences.apps_Deployment: |
    jsonPointers: [/spec/template/metadata/annotations]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-cmd-params-cm, namespace: argocd, labels: {app.kubernetes.io/part-of: argocd}}
YAML
  local i name
  for i in $(seq 0 "$EXTRA"); do
    name=shop; [ "$i" -gt 0 ] && name=$(printf 'app-%04d' "$i")
    cat <<YAML
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: $name, namespace: argocd}
spec:
  project: default
  source: {repoURL: https://example.com/shop.git, path: deploy/$name}
  destination: {server: https://kubernetes.default.svc, namespace: shop}
  syncPolicy: {automated: {selfHeal: true}}
YAML
    name=apps; [ "$i" -gt 0 ] && name=$(printf 'ks-%04d' "$i")
    cat <<YAML
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: $name, namespace: flux-system}
spec: {interval: 10m, path: ./$name, prune: true, sourceRef: {kind: GitRepository, name: flux-system}}
YAML
  done
}
# shop-mf: a managedFieldsManagers rule applies to its Deployment, so its
# verdict needs the OpenAPI schema.
mf_app() {
  cat <<'YAML'
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: shop-mf, namespace: argocd}
spec:
  project: default
  source: {repoURL: https://example.com/shop.git, path: deploy/shop-mf}
  destination: {server: https://kubernetes.default.svc, namespace: shop}
  syncPolicy: {automated: {selfHeal: true}}
  ignoreDifferences:
  - {group: apps, kind: Deployment, managedFieldsManagers: [istio-webhook]}
YAML
}
{ engine_objects; echo ---; mf_app; } | "$KUBECTL" apply --server-side --field-manager=bench -f - >/dev/null

# deploy NAME LABELS ANNOTATIONS: the Deployment as its engine applies it.
deploy() {
  cat <<YAML
apiVersion: apps/v1
kind: Deployment
metadata:
  name: $1
  namespace: shop
  labels: {app: $1$2}
  annotations: {$3}
spec:
  replicas: 2
  selector: {matchLabels: {app: $1}}
  template:
    metadata: {labels: {app: $1}}
    spec:
      containers:
      - {name: app, image: "nginx:1.27", ports: [{containerPort: 8080}]}
YAML
}
deploy web-flux ", kustomize.toolkit.fluxcd.io/name: apps, kustomize.toolkit.fluxcd.io/namespace: flux-system" "" >"$WORK/web-flux.yaml"
deploy web-argo "" "argocd.argoproj.io/tracking-id: 'shop:apps/Deployment:shop/web-argo'" >"$WORK/web-argo.yaml"
deploy web-argo-mf "" "argocd.argoproj.io/tracking-id: 'shop-mf:apps/Deployment:shop/web-argo-mf'" >"$WORK/web-argo-mf.yaml"
"$KUBECTL" apply --server-side --field-manager=kustomize-controller -f "$WORK/web-flux.yaml" >/dev/null
"$KUBECTL" apply --server-side --field-manager=argocd-controller -f "$WORK/web-argo-mf.yaml" >/dev/null
"$KUBECTL" apply --server-side --field-manager=argocd-controller -f "$WORK/web-argo.yaml" >/dev/null
"$KUBECTL" -n shop scale deployment web-flux web-argo web-argo-mf --replicas=5 >/dev/null

# window AGENT CMD...: runs CMD once to warm the caches, then again between
# two audit timestamps; prints the second run's requests of AGENT as
# "VERB RESOURCE COUNT" lines and a "total N" line.
window() {
  local agent=$1; shift
  "$@" >/dev/null 2>&1 || true
  sleep 0.2
  local from to
  from=$(bench_now)
  "$@" >/dev/null 2>"$WORK/err" || true
  sleep 0.5 # blocking audit mode: the events are written; leave margin
  to=$(bench_now)
  bench_audit_count "$AUDIT" "$from" "$to" | awk -v a="$agent" '$1 == a {printf "      %-8s %-40s %3d\n", $2, $3, $4; s += $4} END {printf "      total %d\n", s}'
}

row() {
  local what=$1; shift
  echo "  $what"
  window "$@"
}

echo "kubectl drift explain requests: $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, $("$KUBECTL" version -o json | jq -r .serverVersion.gitVersion) API server, $EXTRA extra Applications and Kustomizations, git $(cd "$ROOT" && git rev-parse --short HEAD)"
echo "(warm discovery/OpenAPI disk cache; requests of the second run; reader kubeconfig, admin for --server-dry-run)"
for obj in web-flux web-argo web-argo-mf; do
  echo "== deploy/$obj"
  row "kubectl get deploy/$obj -n shop" kubectl "$KUBECTL" --kubeconfig "$READER" get "deploy/$obj" -n shop
  row "explain deploy/$obj -n shop (inferred)" kubectl-drift "$BIN" --kubeconfig "$READER" explain "deploy/$obj" -n shop
  row "explain deploy/$obj -n shop -f $obj.yaml" kubectl-drift "$BIN" --kubeconfig "$READER" explain "deploy/$obj" -n shop -f "$WORK/$obj.yaml"
  row "explain deploy/$obj -n shop --engine argocd" kubectl-drift "$BIN" --kubeconfig "$READER" explain "deploy/$obj" -n shop --engine argocd
  row "explain deploy/$obj -n shop -f $obj.yaml --server-dry-run" kubectl-drift "$BIN" --kubeconfig "$ADMIN" explain "deploy/$obj" -n shop -f "$WORK/$obj.yaml" --server-dry-run
done

# CPU of `explain --engine argocd` of the Argo CD-owned Deployment beside
# `kubectl get` of it (issue 35: <= 1.5x), in BENCH_CPU_RUNS interleaved
# pairs (default 7) under GNU time, warm caches: the median of each, and
# the median of the pairs' ratios (the machine's speed drifts between
# pairs less than within a pair).
CPU_RUNS=${BENCH_CPU_RUNS:-7}
if [ "$CPU_RUNS" -gt 0 ] && [ -x /usr/bin/time ]; then
  cpu() {
    /usr/bin/time -f '%U %S' -o "$WORK/time" "$@" >/dev/null 2>&1 || true
    awk '{printf "%.3f\n", $1 + $2}' "$WORK/time" | tail -1
  }
  : >"$WORK/cpu"
  for _ in $(seq "$CPU_RUNS"); do
    g=$(cpu "$KUBECTL" --kubeconfig "$READER" get deploy/web-argo -n shop)
    e=$(cpu "$BIN" --kubeconfig "$READER" explain deploy/web-argo -n shop --engine argocd)
    echo "$g $e" >>"$WORK/cpu"
  done
  median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
  echo "== CPU (user+sys), $CPU_RUNS interleaved pairs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "  kubectl get deploy/web-argo:              median $(awk '{print $1}' "$WORK/cpu" | median) s"
  echo "  explain deploy/web-argo --engine argocd:  median $(awk '{print $2}' "$WORK/cpu" | median) s"
  echo "  ratio explain/get (median of pairs):      $(awk '$1 > 0 {printf "%.3f\n", $2 / $1}' "$WORK/cpu" | median)"
  echo "  pairs (get explain): $(tr '\n' ';' <"$WORK/cpu")"
fi
