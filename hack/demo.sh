#!/usr/bin/env bash
# make demo: start the local real cluster (hack/cluster.sh), create a
# Deployment the way Flux does (server-side apply as kustomize-controller,
# with Flux's ownership labels), drift it with real kubectl operations, and
# run `kubectl drift explain` on it: inferred from managedFields, then
# against the manifest from "Git". The Kustomization the labels name is
# created too (its CRD comes from the Flux module zips, hack/build-tools.sh
# flux-crds), so the tool reads its real settings; no Flux controller runs
# here, so the verdicts say what kustomize-controller would do on its next
# reconcile (e2e/flux_conformance_test.go proves them against the real one).
#
# Idempotent: the demo's Deployment is recreated on every run.
set -euo pipefail

cd "$(dirname "$0")/.."
NS=${DEMO_NAMESPACE:-demo-drift}

hack/cluster.sh start
eval "$(hack/cluster.sh env)"
make --no-print-directory build PLUGINS=kubectl-drift >/dev/null
export PATH="$PWD/bin:$PATH" # `kubectl drift` finds bin/kubectl-drift

if [ -t 2 ] && [ -z "${NO_COLOR:-}" ]; then bold=$'\033[1m' reset=$'\033[0m'; else bold='' reset=''; fi
step() { printf '\n%s$ %s%s\n' "$bold" "$*" "$reset" >&2; }
run() { step "$*"; "$@"; }

# Reset: delete the demo's object, not its namespace. This cluster runs no
# kube-controller-manager, so a deleted namespace would stay Terminating for
# ever (and a second `make demo` would hang); one left Terminating by an
# older version of this script is finalized through the API.
if [ "$(kubectl get namespace "$NS" -o jsonpath='{.status.phase}' 2>/dev/null)" = Terminating ]; then
  printf '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"%s"},"spec":{"finalizers":[]}}' "$NS" |
    kubectl replace --raw "/api/v1/namespaces/$NS/finalize" -f - >/dev/null
  kubectl wait --for=delete "namespace/$NS" --timeout=30s >/dev/null 2>&1 || true
fi
kubectl create namespace "$NS" --dry-run=client -o yaml | kubectl apply -f - >/dev/null
kubectl -n "$NS" delete deployment web --ignore-not-found --wait=true >/dev/null

# The owner named by the Deployment's ownership labels.
crds=$(hack/build-tools.sh flux-crds)
kubectl apply --server-side -f "$crds/kustomize.toolkit.fluxcd.io_kustomizations.yaml" >/dev/null
kubectl wait --for condition=established --timeout=60s crd/kustomizations.kustomize.toolkit.fluxcd.io >/dev/null
kubectl create namespace flux-system --dry-run=client -o yaml | kubectl apply -f - >/dev/null
kubectl apply -f - >/dev/null <<YAML
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: demo-apps
  namespace: flux-system
spec:
  interval: 10m
  path: ./apps
  prune: true
  sourceRef:
    kind: GitRepository
    name: flux-system
YAML

manifest=$(mktemp -d)/web.yaml
trap 'rm -rf "$(dirname "$manifest")"' EXIT
cat >"$manifest" <<YAML
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: $NS
  labels:
    app: web
    kustomize.toolkit.fluxcd.io/name: demo-apps
    kustomize.toolkit.fluxcd.io/namespace: flux-system
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: app
        image: nginx:1.27
        ports:
        - containerPort: 80
      - name: sidecar
        image: busybox:1.36
        command: ["sleep", "3600"]
YAML

run kubectl apply --server-side --field-manager=kustomize-controller -f "$manifest"
run kubectl -n "$NS" scale deployment/web --replicas=5
run kubectl -n "$NS" set image deployment/web app=nginx:1.28
run kubectl -n "$NS" annotate deployment/web oncall=paged
run kubectl -n "$NS" label deployment/web hotfix=true
step "KUBE_EDITOR='sed -i s/busybox:1.36/busybox:1.37/' kubectl -n $NS edit deployment/web"
KUBE_EDITOR='sed -i s/busybox:1.36/busybox:1.37/' kubectl -n "$NS" edit deployment/web

# DEMO_RECORD=DIR (hack/record-demo.sh): keep what the explains below read,
# as the API server returns it, so that `make demo-offline` explains the
# same objects with no cluster: the drifted Deployment with its real
# managedFields, the Kustomization its labels name, and the manifest.
if [ -n "${DEMO_RECORD:-}" ]; then
  mkdir -p "$DEMO_RECORD"
  kubectl -n "$NS" get deployment web -o yaml --show-managed-fields >"$DEMO_RECORD/live.yaml"
  kubectl -n flux-system get kustomization demo-apps -o yaml >"$DEMO_RECORD/kustomization.yaml"
  cp "$manifest" "$DEMO_RECORD/web.yaml"
  {
    echo "# Recorded by hack/record-demo.sh from make demo's live cluster."
    echo "recorded: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "server: $(kubectl version -o json | sed -n 's/.*"gitVersion": "\(.*\)".*/\1/p' | tail -1)"
  } >"$DEMO_RECORD/recorded.yaml"
fi

# explain exits 1 when it finds drift (like kubectl diff); that is the
# point of the demo, not a failure.
step "kubectl drift explain deploy/web -n $NS"
kubectl drift explain deploy/web -n "$NS" || [ $? -eq 1 ]
step "kubectl drift explain deploy/web -n $NS -f web.yaml"
kubectl drift explain deploy/web -n "$NS" -f "$manifest" || [ $? -eq 1 ]
