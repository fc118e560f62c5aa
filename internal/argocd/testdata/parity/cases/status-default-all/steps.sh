kubectl apply --field-manager=argocd-controller -f desired.yaml
kubectl -n $NS patch widget status-default-all --subresource=status --type=merge -p '{"status":{"phase":"Ready"}}'
kubectl -n $NS patch widget status-default-all --subresource=status --type=merge -p '{"status":{"phase":"Broken"}}'
