kubectl apply --field-manager=argocd-controller -f desired.yaml
kubectl -n $NS set image deployment/jq-wrong-container sidecar=busybox:1.37
