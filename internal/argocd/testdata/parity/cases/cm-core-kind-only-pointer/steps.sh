kubectl apply --field-manager=argocd-controller -f desired.yaml
kubectl -n $NS patch configmap cm-core-kind-only-pointer --type=merge -p '{"data":{"key":"changed"}}'
