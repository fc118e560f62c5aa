#!/usr/bin/env bash
# Regenerates the managedFields fixtures in this directory (and the diff
# goldens' live inputs in internal/diff/testdata) from a REAL kube-apiserver:
# every managedFields entry below is one the API server wrote in answer to a
# real kubectl operation. Run from anywhere:
#
#   internal/managedfields/testdata/make-fixtures.sh
#
# It starts the shared local cluster if needed (hack/cluster.sh start is
# idempotent), works only in the namespace core-fixtures (recreated) and uses
# the kubectl v1.37.2 that hack/cluster.sh builds.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
diffdata=$root/internal/diff/testdata
ns=core-fixtures

"$root/hack/cluster.sh" start >/dev/null
eval "$("$root/hack/cluster.sh" env)"
kubectl version --client | grep -q v1.37 || { echo "wrong kubectl: $(command -v kubectl)" >&2; exit 1; }

k() { kubectl -n "$ns" "$@"; }
# save NAME FILE: the live object with managedFields, as `kubectl get -o yaml
# --show-managed-fields` prints it.
save() { k get "$1" -o yaml --show-managed-fields >"$2"; }
# pair NAME FIXTURE DESIRED CASE: saves NAME as FIXTURE and gives the diff
# goldens the same object as CASE-live.yaml, DESIRED as CASE-desired.yaml.
pair() {
  save "$1" "$2"
  cp "$2" "$diffdata/$4-live.yaml"
  cp "$3" "$diffdata/$4-desired.yaml"
}

# No kube-controller-manager runs, so a deleted namespace would stay
# Terminating for ever: keep the namespace, delete our objects instead.
kubectl get namespace "$ns" >/dev/null 2>&1 || kubectl create namespace "$ns" >/dev/null
k delete deployment/web deployment/api deployment/mesh deployment/legacy deployment/handmade service/web configmap/settings secret/db --ignore-not-found --wait=false >/dev/null

# --- Deployment: applied by Flux's manager, then changed by hand -----------
desired=$here/deployment-desired.yaml
k apply --server-side --field-manager=kustomize-controller -f "$desired" >/dev/null
save deployment/web "$here/deployment-ssa-clean.yaml"
# The same object as `kubectl get -o yaml` shows it by default: no ownership.
k get deployment/web -o yaml >"$here/deployment-without-managed-fields.yaml"

# Each step is a different manager, spaced so their timestamps differ
# (managedFields times have one-second resolution).
k scale deployment/web --replicas=5 >/dev/null
sleep 1.1
# The SECOND container's image: an index-based attribution would blame the
# wrong container.
k set image deployment/web sidecar=registry.example/log-shipper:2.0 >/dev/null
sleep 1.1
k patch deployment/web -p '{"metadata":{"annotations":{"incident":"INC-4711"}},"spec":{"template":{"spec":{"containers":[{"name":"app","resources":{"limits":{"memory":"512Mi"}}}]}}}}' >/dev/null
sleep 1.1
k label deployment/web hotfix=true >/dev/null
sleep 1.1
k annotate deployment/web oncall=alice >/dev/null
sleep 1.1
KUBE_EDITOR="sed -i -e s/LOG_LEVEL_INFO/LOG_LEVEL_DEBUG/" k edit deployment/web >/dev/null
pair deployment/web "$here/deployment-ssa-then-kubectl-drifted.yaml" "$desired" deployment-kubectl-drifted

# --- Deployment scaled by an autoscaler through the scale subresource ------
# The HPA controller writes spec.replicas through /scale as
# kube-controller-manager; no controller runs here, so the same request is
# made with that manager name.
k apply --server-side --field-manager=kustomize-controller -f "$here/deployment-hpa-desired.yaml" >/dev/null
sleep 1.1
k patch deployment/api --subresource=scale --type=merge -p '{"spec":{"replicas":7}}' --field-manager=kube-controller-manager >/dev/null
pair deployment/api "$here/deployment-ssa-then-hpa-scaled.yaml" "$here/deployment-hpa-desired.yaml" deployment-hpa-scaled

# --- Deployment changed by an injector, status written by a controller ---
# A mutating tool adds a whole container and an annotation under its own
# manager; the Deployment controller's status update goes through the status
# subresource. (The manager names are the real tools' names; no such tool
# runs on the test cluster, so kubectl sends their requests.)
k apply --server-side --field-manager=argocd-controller -f "$here/deployment-mesh-desired.yaml" >/dev/null
sleep 1.1
k patch deployment/mesh --field-manager=istio-sidecar-injector -p '{"spec":{"template":{"metadata":{"annotations":{"sidecar.istio.io/status":"injected"}},"spec":{"containers":[{"name":"istio-proxy","image":"registry.example/proxyv2:1.2","args":["proxy","sidecar"]}]}}}}' >/dev/null
sleep 1.1
k patch deployment/mesh --subresource=status --type=merge --field-manager=kube-controller-manager -p '{"status":{"observedGeneration":2,"replicas":1,"updatedReplicas":1}}' >/dev/null
pair deployment/mesh "$here/deployment-ssa-then-injected.yaml" "$here/deployment-mesh-desired.yaml" deployment-sidecar-injected

# --- Deployment created by Argo CD's client-side apply ---------------------
# An Update that creates an object is charged with every default the API
# server fills in (revisionHistoryLimit, strategy, dnsPolicy, the
# containers' imagePullPolicy...): the engine "owns" fields it never wrote.
k apply --field-manager=argocd-controller -f "$here/deployment-csa-desired.yaml" >/dev/null
sleep 1.1
k set image deployment/legacy app=registry.example/legacy:1.1 >/dev/null
pair deployment/legacy "$here/deployment-csa-then-image-set.yaml" "$here/deployment-csa-desired.yaml" deployment-csa-image-set

# --- Deployment created by a person's kubectl apply, then scaled --------
# The defaults are charged to kubectl-client-side-apply, the writer of the
# last-applied annotation. (A later `kubectl apply --server-side` would
# migrate that entry into its own Apply entry: kubectl's csaupgrade.)
sed 's/legacy/handmade/g' "$here/deployment-csa-desired.yaml" >"$here/deployment-handmade-desired.yaml"
k apply -f "$here/deployment-handmade-desired.yaml" >/dev/null
sleep 1.1
k scale deployment/handmade --replicas=4 >/dev/null
pair deployment/handmade "$here/deployment-kubectl-apply-then-scaled.yaml" "$here/deployment-handmade-desired.yaml" deployment-handmade-scaled

# --- Service: ports keyed by port+protocol --------------------------------
k apply --server-side --field-manager=argocd-controller -f "$here/service-desired.yaml" >/dev/null
sleep 1.1
k patch service/web --type=json -p '[{"op":"replace","path":"/spec/ports/1/targetPort","value":9443}]' >/dev/null
pair service/web "$here/service-ssa-then-port-patched.yaml" "$here/service-desired.yaml" service-port-patched

# --- ConfigMap: client-side apply as Argo CD does without ServerSideApply --
k apply --field-manager=argocd-controller -f "$here/configmap-desired.yaml" >/dev/null
sleep 1.1
k patch configmap/settings --type=merge -p '{"data":{"mode":"maintenance"}}' >/dev/null
pair configmap/settings "$here/configmap-csa-then-patched.yaml" "$here/configmap-desired.yaml" configmap-csa-patched

# --- Secret: values must never leak into a diff ---------------------------
k apply --server-side --field-manager=kustomize-controller -f "$here/secret-desired.yaml" >/dev/null
sleep 1.1
k patch secret/db --type=merge -p '{"stringData":{"password":"changed-by-hand"}}' >/dev/null
save secret/db "$diffdata/secret-patched-live.yaml"
cp "$here/secret-desired.yaml" "$diffdata/secret-patched-desired.yaml"

echo "fixtures written to $here and $diffdata" >&2
