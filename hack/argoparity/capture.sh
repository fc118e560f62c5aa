#!/usr/bin/env bash
# Capture the live side of the Argo CD parity corpus from the local real API
# server: for each case, run its steps.sh (kubectl applies with Argo's field
# manager, then drift made by real kubectl commands) in namespace argo-parity
# and save the object WITH managedFields as live.json. Also saves the
# server's OpenAPI v2 document, from which both Argo's code (hack/argoparity)
# and our tests build the GVK parser, as the application controller does.
#
#   hack/argoparity/capture.sh [CASE...]     (default: every case)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CORPUS=$ROOT/internal/argocd/testdata/parity
"$ROOT/hack/cluster.sh" start >/dev/null
eval "$("$ROOT/hack/cluster.sh" env)"
export NS=argo-parity

kubectl create namespace "$NS" --dry-run=client -o yaml | kubectl apply -f - >/dev/null
kubectl apply --server-side --field-manager=argo-parity-setup -f "$CORPUS/widgets-crd.yaml" >/dev/null
kubectl apply --server-side --field-manager=argo-parity-setup -f "$CORPUS/rollouts-crd.yaml" >/dev/null
kubectl wait --for condition=established --timeout=60s crd/widgets.parity.drift.dev crd/rollouts.argoproj.io >/dev/null

cases=("$@")
if [ ${#cases[@]} -eq 0 ]; then
  for d in "$CORPUS"/cases/*/; do cases+=("$(basename "$d")"); done
fi
for c in "${cases[@]}"; do
  dir=$CORPUS/cases/$c
  obj=$dir/desired.yaml
  [ -f "$dir/object.yaml" ] && obj=$dir/object.yaml
  kubectl delete -f "$obj" --ignore-not-found --wait=true >/dev/null 2>&1 || true
  (cd "$dir" && bash -euo pipefail steps.sh) >/dev/null
  if [ -f "$dir/server-side-diff" ]; then
    # What Argo CD's server-side diff asks the API server (gitops-engine
    # K8sServerSideDryRunner): apply --server-side --dry-run=server
    # --force-conflicts as argocd-controller.
    kubectl apply --server-side --dry-run=server --force-conflicts --field-manager=argocd-controller \
      -f "$dir/desired.yaml" -o json --show-managed-fields >"$dir/dryrun.json"
  fi
  if [ -f "$dir/live-absent" ]; then
    echo null >"$dir/live.json"
  else
    kubectl get -f "$obj" -o json --show-managed-fields >"$dir/live.json"
  fi
  echo "captured $c"
done
kubectl get --raw /openapi/v2 | gzip -n -9 >"$CORPUS/openapi-v2.json.gz"
