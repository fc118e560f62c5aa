kubectl apply --field-manager=argocd-controller -f desired.yaml
kubectl -n $NS patch widget status-off-unquoted --subresource=status --type=merge -p '{"status":{"phase":"Broken"}}'
