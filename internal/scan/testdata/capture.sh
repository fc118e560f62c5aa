#!/usr/bin/env bash
# Regenerates the LIST fixtures of the scan unit tests from the real local
# API server (hack/cluster.sh): every managedFields entry in them comes from
# a real server-side apply or kubectl command below. Run from the repo root:
#   internal/scan/testdata/capture.sh
# then review the diff: the tests' expectations are written by hand.
set -euo pipefail
eval "$(hack/cluster.sh env)"
NS=scan-fixture-shop
OUT=internal/scan/testdata
kubectl delete --raw "/apis/apps/v1/namespaces/$NS/deployments" >/dev/null 2>&1 || true
kubectl delete --raw "/api/v1/namespaces/$NS/configmaps" >/dev/null 2>&1 || true
kubectl delete --raw "/api/v1/namespaces/$NS/secrets" >/dev/null 2>&1 || true
kubectl create namespace "$NS" >/dev/null 2>&1 || true

FLUX='kustomize.toolkit.fluxcd.io/name: apps, kustomize.toolkit.fluxcd.io/namespace: flux-system'
deploy() { # name labels
cat <<YAML
apiVersion: apps/v1
kind: Deployment
metadata: {name: $1, namespace: $NS, labels: {$2}}
spec:
  replicas: 2
  selector: {matchLabels: {app: $1}}
  template:
    metadata: {labels: {app: $1}}
    spec:
      containers:
      - {name: app, image: "registry.example.com/shop/$1:1.0.0", env: [{name: LOG_LEVEL, value: info}]}
      - {name: proxy, image: "registry.example.com/infra/proxy:2.3.1"}
YAML
}
# Flux-owned: one clean, one scaled by hand, one with a hand-set image, one
# whose replicas an HPA (kube-controller-manager on /scale) drives.
for d in web-clean web-scaled web-image web-hpa; do deploy $d "$FLUX"; echo ---; done |
  kubectl apply --server-side --field-manager=kustomize-controller -f - >/dev/null
kubectl -n $NS scale deployment web-scaled --replicas=5 >/dev/null
kubectl -n $NS set image deployment/web-image app=registry.example.com/shop/web-image:hotfix >/dev/null
kubectl -n $NS patch deployment web-hpa --subresource=scale --type=merge -p '{"spec":{"replicas":7}}' --field-manager=kube-controller-manager >/dev/null
# Built-in controller bookkeeping (not drift) and a status writer.
kubectl -n $NS annotate deployment web-clean deployment.kubernetes.io/revision=1 --field-manager=kube-controller-manager >/dev/null
kubectl -n $NS patch deployment web-clean --subresource=status --type=merge -p '{"status":{"observedGeneration":1}}' --field-manager=kube-controller-manager >/dev/null
# Not GitOps-owned, edited by hand: never reported.
deploy loose "app.kubernetes.io/name: loose" | kubectl apply --server-side -f - >/dev/null
kubectl -n $NS scale deployment loose --replicas=3 >/dev/null

# Argo CD-tracked ConfigMaps: one clean, one labelled, one patched.
for c in cfg-clean cfg-labelled cfg-patched; do cat <<YAML
apiVersion: v1
kind: ConfigMap
metadata:
  name: $c
  namespace: $NS
  annotations: {argocd.argoproj.io/tracking-id: "shop:/ConfigMap:$NS/$c"}
data: {LOG_LEVEL: info, REGION: eu-west-1}
---
YAML
done | kubectl apply --server-side --field-manager=argocd-controller -f - >/dev/null
kubectl -n $NS label configmap cfg-labelled team=oncall >/dev/null
kubectl -n $NS patch configmap cfg-patched --type=merge -p '{"data":{"LOG_LEVEL":"debug"}}' >/dev/null

# Argo CD syncing client-side (kubectl apply, manager argocd-controller):
# its last-applied-configuration holds the desired values.
cat <<YAML | kubectl apply --field-manager=argocd-controller -f - >/dev/null
apiVersion: v1
kind: ConfigMap
metadata:
  name: cfg-csa
  namespace: $NS
  annotations: {argocd.argoproj.io/tracking-id: "shop:/ConfigMap:$NS/cfg-csa"}
data: {LOG_LEVEL: info, REGION: eu-west-1}
YAML
kubectl -n $NS patch configmap cfg-csa --type=merge -p '{"data":{"LOG_LEVEL":"debug"}}' >/dev/null
# Flux's labels copied onto an object Flux never applied: no desired state.
cat <<YAML | kubectl apply --server-side -f - >/dev/null
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg-copied, namespace: $NS, labels: {$FLUX}}
data: {LOG_LEVEL: info}
YAML
kubectl -n $NS label configmap cfg-copied team=x >/dev/null

# A Flux-owned Secret edited by hand: its value must never be printed.
cat <<YAML | kubectl apply --server-side --field-manager=kustomize-controller -f - >/dev/null
apiVersion: v1
kind: Secret
metadata: {name: db, namespace: $NS, labels: {$FLUX}}
stringData: {password: from-git}
YAML
kubectl -n $NS patch secret db --type=merge -p '{"stringData":{"password":"hunter2"}}' >/dev/null

pretty() { python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin), indent=1, sort_keys=False))'; }
kubectl get --raw "/apis/apps/v1/namespaces/$NS/deployments" | pretty >$OUT/list-deployments.json
kubectl get --raw "/api/v1/namespaces/$NS/configmaps" | pretty >$OUT/list-configmaps.json
kubectl get --raw "/api/v1/namespaces/$NS/secrets" | pretty >$OUT/list-secrets.json

# The watch test's second act: the engine takes replicas back (a forced
# server-side apply, as kustomize-controller does with --force-conflicts).
deploy web-scaled "$FLUX" | kubectl apply --server-side --field-manager=kustomize-controller --force-conflicts -f - >/dev/null
kubectl get --raw "/apis/apps/v1/namespaces/$NS/deployments/web-scaled" | pretty >$OUT/web-scaled-reverted.json
