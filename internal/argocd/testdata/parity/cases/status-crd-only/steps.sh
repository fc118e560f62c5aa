kubectl apply --field-manager=argocd-controller -f desired.yaml
kubectl -n $NS patch widget status-crd-only --subresource=status --type=merge -p '{"status":{"phase":"Broken"}}'
