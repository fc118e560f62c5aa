kubectl apply --field-manager=argocd-controller -f desired.yaml
kubectl -n $NS set image deployment/jq-container-image sidecar=busybox:1.37
